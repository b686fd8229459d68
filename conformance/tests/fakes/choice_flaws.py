"""The reference implementation with one flaw of the fence's choices (execution-plane
chapter, section 15) put back, to prove the `fence/choices-*` scenarios catch it. A proxy:
it runs the real adapter (`gatehouse adapter`, next to the runner) and changes only the
`choices` of the `open` setup, as an implementation that gets the choice wrong would.

  --flaw ignore-hide           `--hide` is accepted and ignored
  --flaw secret-by-pass-env    `--pass-env` passes a secret-looking name as if it were
                               `--pass-secret-env` (no explicit flag needed)
  --flaw ro-writable           `--ro` mounts the path writable
  --flaw ro-around-rw          a writable root inside a read-only path makes the whole
                               read-only tree writable
  --flaw trust-every-project   the project's file is honoured whether trusted or not
  --flaw home-settable         `--set-env HOME=...` / `TMPDIR=...` replace the session's own
  --flaw no-proxy-passes       in `allow-list` mode `NO_PROXY=*` reaches the command (a
                               proxy every client is told to go around)
  --flaw allow-list-as-host    `allow-list` runs with the host's network and no proxy (the
                               list is accepted and not enforced)
  --flaw posture-omits-paths   the posture leaves out the extra paths (`ro`, `rw`, `hide`)
  --flaw tty-ignored           a run asked for a terminal gets none (`tty` dropped)
  --flaw caller-terminal       a run asked for a terminal gets the caller's own: this
                               proxy's pseudo-terminal (the host's devpts) handed straight
                               into a bubblewrap jail as the command's streams
  --flaw dependency-notice     the posture's nested-repositories line is said for a
                               `node_modules` deeper than the search, as the reference
                               did before issue 46 (FENCE-PROTECT-19)
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # run as a file, without the package on its path
    from conformance.adapters.protocol import Answer, Request


def reference() -> str:
    # The binary .ci/run certifies (GATEHOUSE), else the workspace's static release build,
    # else its dynamic release or debug build.
    if os.environ.get("GATEHOUSE"):
        return os.environ["GATEHOUSE"]
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", "..", ".."))
    target = os.path.join(root, os.environ.get("CARGO_TARGET_DIR") or "target")
    for build in ("x86_64-unknown-linux-gnu/release", "release", "debug"):
        exe = os.path.join(target, build, "gatehouse")
        if os.path.exists(exe):
            return exe
    sys.exit("%s: build the reference first (cargo build --release -p gatehouse)"
             % os.path.basename(sys.argv[0]))


OWNED = ("HOME", "TMPDIR")


def flawed(flaw: str, request: Request) -> tuple[Request, dict[str, str]]:
    """The request as the flawed implementation would act on it."""
    if flaw == "tty-ignored" and request.get("op") == "run":
        request.pop("tty", None)
        return request, {}
    if request.get("op") != "open":
        return request, {}
    choices = (request.get("setup") or {}).get("choices")
    if not isinstance(choices, dict):
        return request, {}
    extra: dict[str, str] = {}
    if flaw == "ignore-hide":
        choices["hide"] = []
    elif flaw == "secret-by-pass-env":
        choices["pass_secret_env"] = list(choices.get("pass_secret_env", [])) + \
            list(choices.get("pass_env", []))
        choices["pass_env"] = []
    elif flaw == "ro-writable":
        # Each read-only path bound writable, whole: a writable root inside one is then
        # part of it.
        ro = [str(p) for p in choices.get("ro", [])]
        rw = [str(p) for p in choices.get("rw", [])]
        choices["rw"] = ro + [w for w in rw
                              if not any(w.startswith(r.rstrip("/") + "/") for r in ro)]
        choices["ro"] = []
    elif flaw == "ro-around-rw":
        ro = [str(p) for p in choices.get("ro", [])]
        rw = [str(p) for p in choices.get("rw", [])]
        around = [r for r in ro if any(w.startswith(r.rstrip("/") + "/") for w in rw)]
        choices["ro"] = [r for r in ro if r not in around]
        choices["rw"] = around + [w for w in rw
                                  if not any(w.startswith(r.rstrip("/") + "/") for r in around)]
    elif flaw == "trust-every-project":
        if choices.get("config_files"):
            choices["trust_project"] = True
    elif flaw == "allow-list-as-host":
        if choices.get("network") == "allow-list":
            choices["network"] = "host"
            choices["allow_domains"] = []
    elif flaw == "no-proxy-passes":
        if choices.get("network") == "allow-list":
            extra = {"NO_PROXY": "*", "no_proxy": "*"}
    elif flaw == "home-settable":
        # Set after the fence's own values: the reference never sees the name.
        sets = choices.get("set_env", {})
        extra = {k: sets.pop(k) for k in OWNED if k in sets}
    return request, extra


def omit_paths(answer: Answer) -> Answer:
    """The answer with the posture's extra paths left out."""
    for posture in (answer.get("posture"), (answer.get("opened") or {}).get("posture")):
        if isinstance(posture, dict) and isinstance(posture.get("choices"), dict):
            for key in ("ro", "rw", "hide"):
                posture["choices"][key] = []
    return answer


def dependency_notice(answer: Answer, workspace: Optional[str]) -> Answer:
    """The answer with the nested-repositories line of a workspace holding `node_modules`."""
    if not workspace or not os.path.isdir(os.path.join(workspace, "node_modules")):
        return answer
    line = (f"nested repositories: the search below {workspace} stopped at 3 levels or "
            "2000 directories (a repository deeper down keeps a .git the jail can write)")
    for posture in (answer.get("posture"), (answer.get("opened") or {}).get("posture")):
        if isinstance(posture, dict):
            reason = posture.get("reason")
            posture["reason"] = f"{reason}; {line}" if reason else line
    return answer


def on_caller_terminal(request: Request, workspace: Optional[str], posture: Any) -> Answer:
    """Run a `tty` request as an implementation that hands its own terminal in would:
    a pseudo-terminal of this process (the host's devpts) as the command's streams, in a
    bubblewrap jail that is otherwise reasonable."""
    argv = ["sh", "-c", request["input"]] if request.get("tool", "shell") == "shell" \
        else ["python3", "-c", request["input"]]
    assert workspace is not None, "a run before its session's open"
    cwd = request.get("cwd") or workspace
    master, slave = os.openpty()
    jail = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
            "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--bind", workspace, workspace, "--chdir", cwd, "--"]
    child = subprocess.Popen(jail + argv, stdin=slave, stdout=slave, stderr=slave,
                             close_fds=True)
    os.close(slave)
    shown = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            child.kill()
            break
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        shown += data
    code = child.wait()
    os.close(master)
    return {"id": request["id"], "ok": True, "exit": code if code >= 0 else None,
            "signal": -code if code < 0 else None,
            "stdout": shown.decode(errors="replace"), "stderr": "", "held_by": "bwrap",
            "refused": None, "posture": posture}


def main() -> None:
    flaw = sys.argv[sys.argv.index("--flaw") + 1] if "--flaw" in sys.argv else None
    impl = subprocess.Popen([reference(), "adapter"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    assert impl.stdin is not None and impl.stdout is not None
    overrides: dict[Any, dict[str, str]] = {}
    workspaces: dict[Any, Any] = {}
    for line in sys.stdin:
        request = json.loads(line) if line.strip() else {}
        extra: dict[str, str] = {}
        if request.get("op") == "open":
            workspaces[request.get("session")] = (request.get("setup") or {}).get("workspace")
        if flaw == "caller-terminal" and request.get("op") == "run" and request.get("tty"):
            session = request.get("session")
            impl.stdin.write(json.dumps({"id": request["id"], "op": "posture",
                                         "session": session}) + "\n")
            impl.stdin.flush()
            posture = json.loads(impl.stdout.readline()).get("posture")
            answer = on_caller_terminal(request, workspaces.get(session), posture)
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
            continue
        if flaw and request:
            request, extra = flawed(flaw, request)
            if request.get("op") == "open":
                overrides[request.get("session")] = extra
            if request.get("op") == "run" and overrides.get(request.get("session")):
                # The flawed implementation runs the command with HOME/TMPDIR replaced.
                pairs = overrides[request["session"]].items()
                sets = " ".join(f"{k}='{v}'" for k, v in pairs)
                if request.get("tool") == "shell":
                    request["input"] = f"export {sets}; {request['input']}"
                elif request.get("tool") == "execute_code" and flaw == "no-proxy-passes":
                    assigns = "".join(f"os.environ[{k!r}] = {v!r}\n" for k, v in pairs)
                    request["input"] = f"import os\n{assigns}{request['input']}"
            line = json.dumps(request) + "\n"
        impl.stdin.write(line)
        impl.stdin.flush()
        out = impl.stdout.readline()
        if not out:
            break
        if flaw == "posture-omits-paths":
            out = json.dumps(omit_paths(json.loads(out))) + "\n"
        if flaw == "dependency-notice":
            workspace = workspaces.get(request.get("session"))
            out = json.dumps(dependency_notice(json.loads(out), workspace)) + "\n"
        sys.stdout.write(out)
        sys.stdout.flush()
        if request.get("op") == "bye":
            break


if __name__ == "__main__":
    main()
