"""The part every third-party fence adapter shares: the protocol, and nothing of any tool.

A tool's adapter (`bwrap/adapter.py`, ...) describes one third-party sandbox: its name and
version, the backend it is, and the argument list and environment it is invoked with.
This module answers the adapter protocol (spec/adapter-protocol.md, version 1.1) for it,
through the shared loop of `protocol.py`:

- `hello` declares the capability `fence` only, with the environment the tool reports;
  `environment.posture` is left out, because none of these tools reports a posture;
- `open` accepts only the setup the tool can honour (posix host, `fence_policy =
  required`, no `limits`, no gate grants or allow-list); anything else is `unsupported`,
  naming the field, so the runner skips the scenario with that reason;
- `run` runs `sh -c INPUT` (`shell`) or `python3 -c INPUT` (`execute_code`) through the
  tool, with the environment the agent itself has (the runner's, with `HOME` set to the
  session's home, which is how an agent hands its environment to these tools), and reports
  the exit status, signal and output exactly as observed; its answer carries no `posture`
  because the tool states none;
- `posture` and `toggle` are `unsupported`: the tool has no posture to report and no
  runtime switch. Nothing is invented in their place.

The adapter judges nothing: the runner checks every effect on the files itself.
Standard library only.
"""

from __future__ import annotations

import os
import subprocess
from typing import Any, Optional

from conformance.adapters.protocol import (Answer, Failure, Request, Unsupported, cache_dir,
                                           check_setup, environment)
from conformance.adapters import protocol

# Setup fields a fence adapter reads beyond the required ones; every other field is
# `unsupported` (PROTO-SESSION-2).
HONOURED = {"fence_policy", "workspaces", "log_dir", "limits"}
# The runner's step timeout is 10 s by default; a command that hangs is killed a little
# before it so the answer still reports what was observed.
RUN_TIMEOUT_S = float(os.environ.get("GATEHOUSE_PEER_RUN_TIMEOUT", "9"))

Session = dict[str, Any]


def landlock_abi() -> Optional[int]:
    """The kernel's Landlock ABI, asked of the kernel itself (landlock_create_ruleset with
    LANDLOCK_CREATE_RULESET_VERSION), or None where it has none or cannot be asked."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        nr = {"x86_64": 444, "aarch64": 444}.get(os.uname().machine)
        if nr is None:
            return None
        abi = int(libc.syscall(nr, None, ctypes.c_size_t(0), ctypes.c_uint32(1)))
        return abi if abi > 0 else None
    except (OSError, AttributeError):
        return None


class Tool:
    """One third-party sandbox. Subclasses fill in the class fields and `argv`."""

    name = "?"
    version = "?"
    backend: Optional[str] = None   # environment.fence_backend
    held_by: Optional[str] = None   # what `run` reports held the command
    uses_landlock = False   # whether environment.landlock_abi is the kernel's (the tool asks for it)

    def check_setup(self, setup: Request) -> None:
        """Raises Unsupported for what this tool cannot express. The shared rules first."""
        check_setup(setup, HONOURED, self.name)
        if setup.get("host", "posix") != "posix":
            raise Unsupported("host %r: the tool runs POSIX commands only" % setup["host"])
        policy = setup.get("fence_policy", "required")
        if policy != "required":
            raise Unsupported("fence_policy %r: %s has no degraded mode and no off switch"
                              % (policy, self.name))
        if setup.get("limits") is not None:
            raise Unsupported("limits: %s cannot be made to act as on a poorer kernel" % self.name)
        if setup.get("allow_list") or setup.get("grants"):
            raise Unsupported("allow_list/grants: a sandbox has no gate")

    def start(self, session: Session) -> None:
        """Prepares per-session state (a settings file, ...). Default: nothing."""

    def argv(self, session: Session, command: list[str], cwd: str) -> list[str]:
        """The whole argument list that runs `command` (a list) through the tool in `cwd`."""
        raise NotImplementedError

    def env(self, session: Session) -> dict[str, str]:
        """The environment the tool is started with: the agent's own, HOME = the person's."""
        return dict(os.environ, HOME=session["setup"]["home"])

    def stop(self, session: Session) -> None:
        """Removes per-session state. Default: nothing."""

    def launch_failure(self, code: int, err: bytes) -> Optional[str]:
        """The tool's own failure to start the command, as a sentence, or None. A sandbox
        that cannot start (a program or package missing where it runs) has not failed a
        scenario: the run is answered `error` with this cause, and the runner reports it
        errored. Default: None (every exit is the command's)."""
        return None


def run(tool: Tool, session: Session, req: Request) -> Answer:
    tool_name = req.get("tool", "shell")
    if tool_name == "shell":
        command = ["sh", "-c", req["input"]]
    elif tool_name == "execute_code":
        command = ["python3", "-c", req["input"]]
    else:
        raise Unsupported("no tool named %r" % tool_name)
    workspace = session["setup"]["workspace"]
    cwd = req.get("cwd") or workspace
    if not os.path.isabs(cwd):
        cwd = os.path.join(workspace, cwd)
    argv = tool.argv(session, command, cwd)
    try:
        done = subprocess.run(argv, cwd=cwd, env=tool.env(session), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=RUN_TIMEOUT_S)
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as e:
        code, out = -9, e.stdout or b""
        err = (e.stderr or b"") + b"\n(killed by the adapter at its timeout)\n"
    failure = tool.launch_failure(code, err)
    if failure:
        raise Failure("%s could not start the command: %s" % (tool.name, failure))
    return {"exit": code if code >= 0 else None, "signal": -code if code < 0 else None,
            "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
            "held_by": tool.held_by, "refused": None}


def handle(tool: Tool, sessions: dict[str, Session], req: Request) -> Answer:
    op = req.get("op")
    if op == "hello":
        return {"protocol": "1.1", "name": tool.name, "version": tool.version,
                "capabilities": ["fence"],
                "environment": environment(tool.backend,
                                           landlock_abi() if tool.uses_landlock else None)}
    if op == "open":
        setup = req["setup"]
        tool.check_setup(setup)
        opened = {"setup": setup, "workspaces": setup.get("workspaces") or [setup["workspace"]]}
        tool.start(opened)
        sessions[req["session"]] = opened
        return {}
    session = sessions.get(req.get("session", ""))
    if session is None:
        raise Failure("no session %r" % req.get("session"))
    if op == "run":
        return run(tool, session, req)
    if op == "posture":
        raise Unsupported("%s reports no posture" % tool.name)
    if op == "toggle":
        raise Unsupported("%s has no runtime switch" % tool.name)
    if op == "close":
        tool.stop(sessions.pop(req["session"]))
        return {}
    raise Unsupported("%s is a sandbox only: no %r" % (tool.name, op))


def serve(tool: Tool) -> None:
    """Answers the runner for `tool` until `bye`; every open session is stopped at the end."""
    sessions: dict[str, Session] = {}

    def stop_all() -> None:
        for session in sessions.values():
            tool.stop(session)

    protocol.serve(lambda req: handle(tool, sessions, req), on_end=stop_all)


def tool_version(argv: list[str], default: str = "unknown") -> str:
    """The first line a tool prints for its version, or `default`."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
        line = (done.stdout or done.stderr).strip().splitlines()
        return line[0] if line else default
    except (OSError, subprocess.TimeoutExpired):
        return default


__all__ = ["Tool", "Unsupported", "cache_dir", "landlock_abi", "serve", "tool_version"]
