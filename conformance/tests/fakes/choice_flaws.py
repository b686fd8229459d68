"""The reference implementation with one flaw of the fence's choices (execution-plane
chapter, section 15) put back, to prove the `fence/choices-*` scenarios catch it. A proxy:
it runs the real adapter (`gatehouse adapter`, next to the runner) and changes only the
`choices` of the `open` setup, as an implementation that gets the choice wrong would.

  --flaw ignore-hide           `--hide` is accepted and ignored
  --flaw secret-by-pass-env    `--pass-env` passes a secret-looking name as if it were
                               `--pass-secret-env` (no explicit flag needed)
  --flaw ro-writable           `--ro` mounts the path writable
  --flaw trust-every-project   the project's file is honoured whether trusted or not
  --flaw home-settable         `--set-env HOME=...` / `TMPDIR=...` replace the session's own
  --flaw no-proxy-passes       in `allow-list` mode `NO_PROXY=*` reaches the command (a
                               proxy every client is told to go around)
  --flaw allow-list-as-host    `allow-list` runs with the host's network and no proxy (the
                               list is accepted and not enforced)
"""

import json
import os
import subprocess
import sys


def reference():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", "..", ".."))
    for build in ("release", "debug"):
        exe = os.path.join(root, "target", build, "gatehouse")
        if os.path.exists(exe):
            return exe
    sys.exit("choice_flaws: build the reference first (cargo build --release -p gatehouse)")


OWNED = ("HOME", "TMPDIR")


def flawed(flaw, request):
    """The request as the flawed implementation would act on it."""
    if request.get("op") != "open":
        return request, {}
    choices = (request.get("setup") or {}).get("choices")
    if not isinstance(choices, dict):
        return request, {}
    extra = {}
    if flaw == "ignore-hide":
        choices["hide"] = []
    elif flaw == "secret-by-pass-env":
        choices["pass_secret_env"] = list(choices.get("pass_secret_env", [])) + \
            list(choices.get("pass_env", []))
        choices["pass_env"] = []
    elif flaw == "ro-writable":
        choices["rw"] = list(choices.get("rw", [])) + list(choices.get("ro", []))
        choices["ro"] = []
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


def main():
    flaw = sys.argv[sys.argv.index("--flaw") + 1] if "--flaw" in sys.argv else None
    impl = subprocess.Popen([reference(), "adapter"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    overrides = {}
    for line in sys.stdin:
        request = json.loads(line) if line.strip() else {}
        extra = {}
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
        sys.stdout.write(out)
        sys.stdout.flush()
        if request.get("op") == "bye":
            break


if __name__ == "__main__":
    main()
