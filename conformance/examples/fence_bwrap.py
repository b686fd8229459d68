#!/usr/bin/env python3
"""A worked `fence` adapter: a simple bubblewrap backend with an honest posture
(docs/implementing.md, section 2c). Read the warning there before you run it.

    gatehouse-conform run --impl 'python3 conformance/examples/fence_bwrap.py' --filter fence/

`Plane` stands for **your** execution plane. It runs each approved call as

    bwrap --ro-bind / / --dev /dev --proc /proc --bind W W (each workspace root)
          --tmpfs HOME --tmpfs LOG_DIR --unshare-all --cap-drop ALL --die-with-parent
          --new-session --clearenv --setenv PATH ... --chdir CWD -- sh -c INPUT

The namespaces and the read-only binds cover what the execution-plane chapter's table
(section 6) says they cover; a pathname socket, the kernel's keyrings and a protected path
that does not exist yet are not covered (no system-call filter, no bind over nothing). So
the posture is degraded, and under `fence_policy = "required"` (the default) every `run`
is refused with `degraded_refused` and nothing runs: safe, and inexact wherever a scenario
expects a command to run. Under `degraded` (the person's opt-in) it runs, and the attacks
on what it does not cover succeed: that is what `not_covered` warns of. Under `off` the
command runs with no fence, `held_by = "off"`, after a confirmed `toggle`.

Standalone on purpose: standard library only, no import from the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any, Optional

BWRAP = os.environ.get("BWRAP") or shutil.which("bwrap") or "/usr/bin/bwrap"
# Setup fields this plane honours; the gate's fields come in every `open` and mean nothing
# to a fence. `limits` (act as on a poorer kernel) and `choices` (--pass-env, --ro, network
# modes, ...) are answered `unsupported`: docs/implementing.md says what that costs.
HONOURED = {"workspace", "home", "host", "fence_policy", "workspaces", "log_dir",
            "asker", "allow_list", "grants", "card_window_ms"}
COVERED = ["write", "rename_link", "truncate", "metadata", "hidden", "signal",
           "unix_abstract", "capabilities", "process_view", "ipc", "uts"]
NOT_COVERED = ["unix_socket", "keyring", "protected_paths"]
# What jailed code keeps of the environment: no secret can pass by accident.
KEPT_ENV = ["PATH", "LANG", "LC_ALL", "TERM"]
TIMEOUT_S = 9.0  # under the runner's default step timeout of 10 s


class Unsupported(Exception):
    pass


def posture(off: bool) -> dict[str, Any]:
    """The posture this plane states: the fence, or `off` (the environment scrubbed all the
    same)."""
    if off:
        return {"state": "off", "backend": None, "layers": [], "landlock_abi": None,
                "not_covered": COVERED + NOT_COVERED, "degraded": False,
                "reason": "the fence is off (the person's choice)", "env": "scrubbed",
                "session_log": "unprotected"}
    return {"state": "fence", "backend": "bwrap",
            "layers": [{"name": "namespaces", "covers": COVERED}],
            "landlock_abi": None, "not_covered": NOT_COVERED, "degraded": True,
            "reason": "bwrap alone: no system-call filter, no bind over missing paths",
            "env": "scrubbed", "session_log": "protected"}


class Plane:
    """Your execution plane, for one session."""

    def __init__(self, setup: dict[str, Any]) -> None:
        unknown = sorted(k for k in set(setup) - HONOURED
                         if not (k == "limits" and setup[k] is None))
        if unknown:
            raise Unsupported("setup field %s: not honoured by this adapter" % ", ".join(unknown))
        if setup.get("host", "posix") != "posix":
            raise Unsupported("host %r: POSIX only" % setup["host"])
        self.policy = setup.get("fence_policy", "required")
        if self.policy not in ("required", "degraded", "off"):
            raise Unsupported("fence_policy %r" % self.policy)
        self.workspace = setup["workspace"]
        self.roots = list(setup.get("workspaces") or [self.workspace])
        self.home = setup["home"]
        self.log_dir: Optional[str] = setup.get("log_dir")
        self.off = self.policy == "off"

    def posture(self) -> dict[str, Any]:
        return posture(self.off)

    def argv(self, command: list[str], cwd: str) -> list[str]:
        argv = [BWRAP, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for root in self.roots:
            argv += ["--bind", root, root]
        for hidden in [self.home] + ([self.log_dir] if self.log_dir else []):
            if os.path.isdir(hidden):
                argv += ["--tmpfs", hidden]
        argv += ["--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
                 "--clearenv", "--setenv", "HOME", self.home]
        for name in KEPT_ENV:
            if name in os.environ:
                argv += ["--setenv", name, os.environ[name]]
        return argv + ["--chdir", cwd, "--"] + command

    def run(self, req: dict[str, Any]) -> dict[str, Any]:
        tool = req.get("tool", "shell")
        if tool == "shell":
            command = ["sh", "-c", req["input"]]
        elif tool == "execute_code":
            command = ["python3", "-c", req["input"]]
        else:
            raise Unsupported("no tool %r" % tool)
        if req.get("tty"):
            raise Unsupported("tty: this plane has no terminal of its own")
        cwd = req.get("cwd") or self.workspace
        if not os.path.isabs(cwd):
            cwd = os.path.join(self.workspace, cwd)
        if not self.off and self.policy == "required":
            # A required protection is missing and the person did not opt in: refuse,
            # run nothing (FENCE-RUN-2). The posture says what is missing.
            return {"exit": None, "signal": None, "stdout": "", "stderr": "",
                    "held_by": "none", "refused": "degraded_refused", "posture": self.posture()}
        if self.off:
            # No fence, but the environment is still scrubbed (FENCE-ENV-1): `off` is
            # about the jail, not about handing the agent's secrets to the command.
            env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
            argv, env = command, dict(env, HOME=self.home)
        else:
            argv, env = self.argv(command, cwd), {}
        try:
            done = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=TIMEOUT_S)
            code, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as e:
            code, out, err = -9, e.stdout or b"", (e.stderr or b"") + b"\n(killed at the timeout)\n"
        return {"exit": code if code >= 0 else None, "signal": -code if code < 0 else None,
                "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
                "held_by": "off" if self.off else "bwrap", "refused": None,
                "posture": self.posture()}

    def toggle(self, req: dict[str, Any]) -> dict[str, Any]:
        to = req.get("to")
        if to == "off" and not req.get("confirmed"):
            return {"refused": "confirmation_required", "posture": self.posture()}
        if to not in ("on", "off"):
            raise Unsupported("toggle to %r" % to)
        self.off = to == "off"
        return {"refused": None, "posture": self.posture()}


def environment() -> dict[str, Any]:
    u = os.uname()
    return {"os": "linux", "arch": u.machine, "kernel": u.release, "landlock_abi": None,
            "fence_backend": "bwrap"}


def main() -> None:
    if not os.access(BWRAP, os.X_OK):
        sys.exit("fence_bwrap: no bubblewrap at %s (apt-get install bubblewrap)" % BWRAP)
    sessions: dict[str, Plane] = {}
    for line in sys.stdin:
        req = json.loads(line)
        answer: dict[str, Any] = {"id": req.get("id"), "ok": True}
        op = req.get("op")
        plane = sessions.get(req.get("session", ""))
        try:
            if op == "hello":
                env = environment()
                env["posture"] = posture(off=False)
                answer.update(protocol="1.1", name="fence-bwrap-example", version="0.1.0",
                              capabilities=["fence"], environment=env)
            elif op == "open":
                sessions[req["session"]] = Plane(req["setup"])
            elif op == "close":
                sessions.pop(req.get("session", ""), None)
            elif op == "bye":
                print(json.dumps(answer), flush=True)
                return
            elif plane is None:
                raise Unsupported("no session %r" % req.get("session"))
            elif op == "run":
                answer.update(plane.run(req))
            elif op == "posture":
                answer.update(posture=plane.posture())
            elif op == "toggle":
                answer.update(plane.toggle(req))
            else:
                raise Unsupported("no step %r: this adapter declares `fence` only" % op)
        except Unsupported as e:
            answer = {"id": req.get("id"), "ok": False,
                      "error": {"kind": "unsupported", "message": str(e)}}
        except Exception as e:  # the adapter's own failure: the scenario is `errored`
            answer = {"id": req.get("id"), "ok": False,
                      "error": {"kind": "error", "message": "%s: %s" % (type(e).__name__, e)}}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
