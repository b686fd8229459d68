"""The reference implementation with one peer flaw of the decision order put back, to
prove the permissions and hooks scenarios catch it. A proxy: it runs the real adapter
(`gatehouse adapter`, next to the runner) and changes only what the flaw changes.

  --flaw hooks-fail-open   a hook that times out, crashes or prints garbage lets the call
                           through (Claude Code, Codex, Gemini CLI)
  --flaw anchored-deny     deny patterns are matched against the raw line from its start
                           only: no chains, wrappers, respellings or subshells (the
                           bypasses users filed)
"""

import fnmatch
import json
import os
import subprocess
import sys

FAILURES = {"hook_timeout", "hook_exit_status", "hook_signal", "hook_empty_output",
            "hook_malformed_output", "hook_unknown_field", "hook_spawn_failed"}


def reference():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", "..", ".."))
    for build in ("release", "debug"):
        exe = os.path.join(root, "target", build, "gatehouse")
        if os.path.exists(exe):
            return exe
    sys.exit("order_flaws: build the reference first (cargo build --release -p gatehouse)")


def glob_match(pattern, text):
    return fnmatch.fnmatchcase(text.lower(), pattern.lower())


def flawed(flaw, request, answer):
    if not answer.get("ok") or request.get("op") not in ("call", "decide"):
        return answer
    if flaw == "hooks-fail-open" and answer.get("reason") in FAILURES:
        answer.update(decision="allow", route="mode", stage="mode", reason="hook_failed_open")
    if flaw == "anchored-deny" and answer.get("stage") == "deny_pattern":
        pattern = (answer.get("source") or {}).get("pattern", "")
        value = pattern.split("=", 1)[1] if "=" in pattern else "*"
        line = request.get("input")
        line = line if isinstance(line, str) else json.dumps(line)
        if not glob_match(value, line):
            # The naive matcher never saw a match: the call goes on as if no deny existed.
            answer.update(decision="allow", route="allow_pattern", stage="allow",
                          reason="allow_pattern")
    return answer


def main():
    flaw = sys.argv[sys.argv.index("--flaw") + 1] if "--flaw" in sys.argv else None
    impl = subprocess.Popen([reference(), "adapter"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    for line in sys.stdin:
        request = json.loads(line) if line.strip() else {}
        impl.stdin.write(line)
        impl.stdin.flush()
        out = impl.stdout.readline()
        if not out:
            break
        answer = json.loads(out)
        if flaw:
            answer = flawed(flaw, request, answer)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
        if request.get("op") == "bye":
            break


if __name__ == "__main__":
    main()
