"""The reference implementation with one peer flaw of the decision order put back, to
prove the permissions and hooks scenarios catch it. A proxy: it runs the real adapter
(`gatehouse adapter`, next to the runner) and changes only what the flaw changes.

  --flaw hooks-fail-open   a hook that times out, crashes or prints garbage lets the call
                           through (Claude Code, Codex, Gemini CLI), at `call` and at `act`
                           (where the call then runs in the fence)
  --flaw transform-undecided  `act` decides the input it was given and runs the one a
                           transform hook rewrote it into, undecided
  --flaw anchored-deny     deny patterns are matched against the raw line from its start
                           only: no chains, wrappers, respellings or subshells (the
                           bypasses users filed)
  --flaw expansion-allowed  an allow pattern approves a line holding `${`, `$((` or `$[`
                           that the mode would have asked about (PERM-SHELL-9 undone)
  --flaw policy-reloaded   after a call that names a file of the runner's config folder,
                           the deny patterns are gone (a client that reloads the policy
                           the agent rewrote; the proxy cannot make the write land)
  --flaw policy-writable   a `--rw` over the policy files is honoured: the refused call runs
                           (here on the host, as the proxy has no fence that would let it)
  --flaw act-unfenced      a call `act` runs also runs outside the fence, in the workspace
                           (a name the deny list does not know, approved, reaches the host)
  --flaw act-unordered     `act` hands every call straight to the fence, whatever the
                           order decided (protocol 1.2's `run`, as an implementation)
  --flaw post-fail-open    a post_tool_use hook or response transform that fails or
                           blocks lets the response through
  --flaw raw-output        the output goes back as the command printed it: no redaction
  --flaw redirect-unmarked a redirect that ran leaves the trust map as it was
  --flaw trust-forgotten   a resumed session starts a fresh trust map (grants, mode and
                           patterns still restored)
  --flaw hooks-shell-only  the pre_tool_use hooks' answer counts for `shell` only: a call
                           of any other tool (code, write, edit, a patch tool, an MCP
                           server's tool, a subagent) goes on as if no hook had answered
                           (Codex, OpenCode, Gemini CLI)

The last four ask the real adapter for what the flaw would have shown (the command run
again through `run`, a path vouched for again, the map cleared) with requests of their own.
"""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
from typing import Any

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))

from conformance.tests.fakes._gate import held  # noqa: E402
from conformance.tests.fakes.choice_flaws import reference  # noqa: E402

#: A request or an answer of the protocol: a JSON object.
Message = dict[str, Any]

FAILURES = {"hook_timeout", "hook_exit_status", "hook_signal", "hook_empty_output",
            "hook_malformed_output", "hook_unknown_field", "hook_spawn_failed"}


def glob_match(pattern: str, text: str) -> bool:
    return fnmatch.fnmatchcase(text.lower(), pattern.lower())


class Impl:
    """The real adapter, and requests of the proxy's own."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([reference(), "adapter"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.own = 10 ** 9
        #: Sessions in which an allowed call named the runner's config folder (flaw
        #: policy-reloaded).
        self.config_written: set[Any] = set()
        #: Each session's workspace, from its `open` (flaw act-unfenced).
        self.workspaces: dict[Any, str] = {}

    def send(self, line: str) -> str:
        self.stdin.write(line)
        self.stdin.flush()
        return self.stdout.readline()

    def ask(self, request: Message) -> Message:
        self.own += 1
        out = self.send(json.dumps(dict(request, id=self.own)) + "\n")
        return json.loads(out) if out else {}


def text_of(request: Message) -> Any:
    i = request.get("input")
    if isinstance(i, dict):
        return i.get("cmd") or i.get("code") or ""
    return i or ""


def rerun(impl: Impl, request: Message) -> Message:
    """What the fence gives for the call when nothing but the fence stands in the way."""
    return impl.ask({"op": "run", "session": request["session"], "tool": request["tool"],
                     "input": text_of(request), "cwd": None})


def run_anyway(impl: Impl, request: Message, answer: Message, text: str) -> None:
    run = impl.ask({"op": "run", "session": request["session"], "tool": request["tool"],
                    "input": text, "cwd": None})
    answer.update(decision="allow", ran=True, not_run=None, exit=run.get("exit"),
                  signal=run.get("signal"), stdout=run.get("stdout", ""),
                  stderr=run.get("stderr", ""))


def acted(flaw: str, impl: Impl, request: Message, answer: Message) -> Message:
    workspace = impl.workspaces.get(request.get("session"))
    if flaw == "act-unfenced" and answer.get("ran") and workspace:
        subprocess.run(held(["/bin/sh", "-c", str(text_of(request))], workspace), cwd=workspace,
                       capture_output=True, check=False)
    if (flaw == "policy-writable" and answer.get("not_run") == "refused"
            and "/config/" in str(text_of(request))):
        line = ["/bin/sh", "-c", str(text_of(request))]
        done = subprocess.run(held(line, workspace) if workspace else line, capture_output=True,
                              text=True, check=False)
        answer.update(ran=True, not_run=None, exit=done.returncode, signal=None,
                      stdout=done.stdout, stderr=done.stderr, refused=None)
    if (flaw == "policy-reloaded" and answer.get("decision") == "allow"
            and "/config/" in str(request.get("input"))):
        impl.config_written.add(request.get("session"))
    if (flaw == "hooks-fail-open" and not answer.get("ran")
            and (answer.get("reason") in FAILURES
                 or FAILURES & {h.get("code") if isinstance(h, dict) else h
                                for h in answer.get("hooks") or []})):
        run_anyway(impl, request, answer, text_of(request))
        answer.update(route="mode", stage="mode", reason="hook_failed_open")
    rewritten = answer.get("input")
    if (flaw == "transform-undecided" and not answer.get("ran")
            and isinstance(rewritten, dict) and rewritten.get("cmd") is not None
            and rewritten.get("cmd") != text_of(request)):
        run_anyway(impl, request, answer, rewritten["cmd"])
        answer.update(route="mode", stage="mode", reason="transform_undecided")
    if flaw == "act-unordered" and not answer.get("ran"):
        run = rerun(impl, request)
        answer.update(ran=True, not_run=None, exit=run.get("exit"), signal=run.get("signal"),
                      stdout=run.get("stdout", ""), stderr=run.get("stderr", ""))
    if flaw == "post-fail-open" and answer.get("withheld"):
        run = rerun(impl, request)
        answer.update(withheld=None, stdout=run.get("stdout", ""), stderr=run.get("stderr", ""))
    if flaw == "raw-output" and answer.get("ran"):
        run = rerun(impl, request)
        answer.update(stdout=run.get("stdout", ""), stderr=run.get("stderr", ""))
    if flaw == "redirect-unmarked":
        for m in answer.get("marked") or []:
            if m.get("effect") == "marked_untrusted":
                impl.ask({"op": "gesture", "session": request["session"], "name": "at_path",
                          "path": m["path"], "answer": "yes"})
        answer["marked"] = []
    return answer


def flawed(flaw: str, impl: Impl, request: Message, answer: Message) -> Message:
    if not answer.get("ok"):
        return answer
    if request.get("op") == "open":
        impl.workspaces[request.get("session")] = request.get("setup", {}).get("workspace")
    if request.get("op") == "act":
        return acted(flaw, impl, request, answer)
    if (flaw == "trust-forgotten" and request.get("op") == "open"
            and request.get("setup", {}).get("resume")):
        impl.ask({"op": "clear", "session": request["session"],
                  "startup": request["setup"].get("startup") or "yes"})
        return answer
    if request.get("op") not in ("call", "decide"):
        return answer
    if (flaw == "hooks-shell-only" and request.get("tool") != "shell"
            and answer.get("stage") in ("preempt_hook", "default_hook")):
        answer.update(decision="allow", route="mode", stage="mode", reason="hooks_skipped")
    if flaw == "hooks-fail-open" and answer.get("reason") in FAILURES:
        answer.update(decision="allow", route="mode", stage="mode", reason="hook_failed_open")
    line_in = request.get("input")
    if (flaw == "expansion-allowed" and isinstance(line_in, str)
            and any(t in line_in for t in ("${", "$((", "$["))
            and answer.get("decision") == "ask" and answer.get("stage") == "mode"):
        answer.update(decision="allow", route="allow_pattern", stage="allow",
                      reason="allow_pattern")
    if (flaw == "policy-reloaded" and request.get("session") in impl.config_written
            and answer.get("stage") == "deny_pattern"):
        answer.update(decision="allow", route="allow_pattern", stage="allow",
                      reason="allow_pattern")
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


def main() -> None:
    flaw = sys.argv[sys.argv.index("--flaw") + 1] if "--flaw" in sys.argv else None
    impl = Impl()
    for line in sys.stdin:
        request = json.loads(line) if line.strip() else {}
        out = impl.send(line)
        if not out:
            break
        answer = json.loads(out)
        if flaw:
            answer = flawed(flaw, impl, request, answer)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
        if request.get("op") == "bye":
            break


if __name__ == "__main__":
    main()
