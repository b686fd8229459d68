"""The Qwen Code adapter with no Qwen Code: its driver against a fake agent that speaks
Qwen's stream-json channel (a `can_use_tool` control request answered as the step says),
the reading of its stream-json events (the shapes recorded from Qwen Code 0.24.4: a run
with its exit code, a call asked and declined, a rule's deny, a hook's block, the headless
refusal), the translation of patterns into its rules, and of the setup into its settings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from typing import Any, Optional

from conformance.adapters.agents import agent_adapter as core
from conformance.adapters.agents.agent_adapter import Call, RunResult, Unsupported
from conformance.adapters.agents.qwen_code import adapter as qwen
from conformance.adapters.agents.tests import helpers

SHELL_OK = ("Command: echo out; exit 3\nDirectory: (root)\nOutput: out\nError: (none)\n"
            "Exit Code: 3\nSignal: (none)\nProcess Group PGID: 7")

# A fake Qwen: reads the initialize request and the user message, asks about its one call
# on the channel, and runs nothing: it reports the answer it was given as the call's result.
FAKE_QWEN = textwrap.dedent("""\
    import json, sys
    assert "--input-format" in sys.argv and "stream-json" in sys.argv
    init = json.loads(sys.stdin.readline())
    user = json.loads(sys.stdin.readline())
    assert init["request"]["subtype"] == "initialize" and user["type"] == "user"
    def emit(o):
        sys.stdout.write(json.dumps(o) + "\\n"); sys.stdout.flush()
    emit({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "c1", "name": "run_shell_command", "input": {"command": "rm x"}}]}})
    emit({"type": "control_request", "request_id": "r1", "request": {
        "subtype": "can_use_tool", "tool_name": "run_shell_command", "tool_use_id": "c1",
        "input": {"command": "rm x"}}})
    resp = json.loads(sys.stdin.readline())["response"]
    assert resp["request_id"] == "r1"
    emit({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "c1",
          "is_error": True, "content": "behavior=" + resp["response"]["behavior"]}]}})
    emit({"type": "result", "subtype": "success"})
    assert sys.stdin.readline() == ""   # the driver closed Qwen's input at the result
""")


def stream(result: dict[str, Any], asked: bool = False) -> str:
    """One run's stdout through the driver: the call, perhaps asked about, then its result."""
    lines: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init"},
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "call_0_1", "name": "run_shell_command",
             "input": {"command": "rm x"}}]}}]
    if asked:
        lines += [{"type": "control_request", "request_id": "r1", "request": {
            "subtype": "can_use_tool", "tool_use_id": "call_0_1"}},
                  {"answered": "r1", "behavior": "deny"}]
    lines += [{"type": "user", "message": {"content": [
        dict(result, type="tool_result", tool_use_id="call_0_1")]}},
              {"type": "result", "subtype": "success"}]
    return "\n".join(json.dumps(x) for x in lines) + "\n"


class DriverTest(unittest.TestCase):
    def run_driver(self, answer: str) -> list[dict[str, Any]]:
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "fake_qwen.py")
            with open(fake, "w") as f:
                f.write(FAKE_QWEN)
            p = subprocess.run([sys.executable, qwen.DRIVER, answer, "--", sys.executable, fake],
                               capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [json.loads(line) for line in p.stdout.splitlines()]

    def test_answers_the_ask_as_the_step_says(self) -> None:
        for answer, behavior in (("yes", "allow"), ("no", "deny")):
            out = self.run_driver(answer)
            self.assertIn({"answered": "r1", "behavior": behavior}, out)
            results = [x for x in out if x.get("type") == "user"]
            self.assertEqual(results[0]["message"]["content"][0]["content"], "behavior=" + behavior)

    def test_bad_usage_is_one_line(self) -> None:
        p = subprocess.run([sys.executable, qwen.DRIVER, "maybe", "--", "true"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual((p.returncode, len(p.stderr.splitlines())), (2, 1))


class ObserveTest(unittest.TestCase):
    def observe(self, result: dict[str, Any], asked: bool = False, hooks: bool = False,
                tool: str = "shell", if_asked: str = "no") -> core.Observed:
        agent = helpers.bare(qwen.QwenCode)
        session = helpers.session(agent)
        session.state["pre_hooks"] = hooks
        inp: Any = "rm x" if tool == "shell" else {"path": "f"}
        return agent.observe(session, Call(tool, inp, if_asked=if_asked),
                             RunResult(0, stream(result, asked), ""), [])

    def test_ran_with_its_exit_code_and_output(self) -> None:
        obs = self.observe({"is_error": False, "content": SHELL_OK})
        self.assertEqual((obs.ran, obs.exit, obs.output, obs.decision()), (True, 3, "out", "allow"))
        empty = self.observe({"is_error": False, "content": SHELL_OK.replace("Output: out", "Output: (empty)")
                              .replace("Exit Code: 3", "Exit Code: 0")})
        self.assertEqual((empty.exit, empty.output), (0, ""))

    def test_refusals_by_what_refused(self) -> None:
        declined = self.observe({"is_error": True, "content": "[Operation Cancelled] Reason: The person declined."},
                                asked=True)
        self.assertEqual((declined.decision(), declined.by), ("ask", "user"))
        rule = self.observe({"is_error": True, "content": 'This "run_shell_command" invocation was denied by '
                             'permission rules. Matching deny rule: "Bash(rm*)".'})
        self.assertEqual((rule.decision(), rule.by), ("deny", "rule"))
        headless = self.observe({"is_error": True, "content": 'Qwen Code requires permission to use '
                                 '"run_shell_command", but that permission was declined.'}, hooks=True)
        self.assertEqual((headless.decision(), headless.by), ("deny", "mode"))
        hook = self.observe({"is_error": True, "content": "nope"}, hooks=True)
        self.assertEqual((hook.decision(), hook.by), ("deny", "hook"))

    def test_asked_then_approved_ran_and_was_asked(self) -> None:
        obs = self.observe({"is_error": False, "content": SHELL_OK}, asked=True, if_asked="yes")
        self.assertEqual((obs.ran, obs.asked), (True, True))

    def test_a_file_tool_that_failed_ran(self) -> None:
        obs = self.observe({"is_error": True, "content": "File not found: f"}, tool="read")
        self.assertEqual((obs.ran, obs.exit), (True, 1))

    def test_no_tool_call_is_an_error_with_stderr(self) -> None:
        helpers.assert_no_call_is_an_error(self, helpers.bare(qwen.QwenCode))


class PatternTest(unittest.TestCase):
    def test_rules(self) -> None:
        t = qwen.translate_pattern
        self.assertEqual(t("shell:cmd=git push*"), "Bash(git push*)")
        self.assertEqual(t("shell"), "Bash")
        self.assertEqual(t("read:path=.env"), "Read(.env)")
        for bad in ("fetch:url=*", "shell:cmd=r?m", "shell:path=x", "sh*"):
            with self.assertRaises(Unsupported, msg=bad):
                t(bad)

    def test_matchers(self) -> None:
        self.assertIsNone(qwen.translate_matcher("*"))
        self.assertEqual(qwen.translate_matcher("shell|write"), "run_shell_command|write_file")
        with self.assertRaises(Unsupported):
            qwen.translate_matcher("fetch")


class PrepareTest(unittest.TestCase):
    def settings(self, setup: dict[str, Any], agent_file: Optional[str] = None) -> dict[str, Any]:
        files = helpers.prepare(helpers.bare(qwen.QwenCode), setup, agent_file)
        out: dict[str, Any] = json.loads(files["settings.json"])
        out["_state"] = files["_state"]
        return out

    def test_patterns_hooks_and_mode(self) -> None:
        out = self.settings({"safety": "autonomous", "allow_list": ["make test"]}, textwrap.dedent("""\
            agents:
              root:
                hooks:
                  pre_tool_use:
                    - matcher: shell
                      hooks: [{type: command, command: "exit 2", timeout: 5}]
            permissions:
              deny: ["shell:cmd=rm*"]
            """))
        self.assertEqual(out["permissions"], {"allow": ["Bash(make test)"], "deny": ["Bash(rm*)"]})
        hook = out["hooks"]["PreToolUse"][0]
        self.assertEqual((hook["matcher"], hook["hooks"][0]["timeout"]), ("run_shell_command", 5000))
        self.assertIn("hook_shim.py", hook["hooks"][0]["command"])
        self.assertEqual((out["_state"]["mode"], out["_state"]["channel"]), ("yolo", True))

    def test_restricted_has_nobody_to_ask(self) -> None:
        state = self.settings({"safety": "restricted"})["_state"]
        self.assertEqual((state["mode"], state["channel"]), ("default", False))

    def test_no_asker_has_nobody_to_ask(self) -> None:
        state = self.settings({"safety": "balanced", "asker": "none"})["_state"]
        self.assertEqual((state["mode"], state["channel"]), ("default", False))
        self.assertTrue(self.settings({"safety": "balanced"})["_state"]["channel"])


class ScriptTest(unittest.TestCase):
    def test_edit_with_no_old_text_is_unsupported(self) -> None:
        agent = helpers.bare(qwen.QwenCode)
        session = helpers.session(agent)
        with self.assertRaises(Unsupported):
            agent.script(session, Call("edit", {"path": "f"}))
        turns = agent.script(session, Call("edit", {"path": "/nonexistent/f", "old": "a", "new": "b"}))
        self.assertEqual(turns[0], ("edit", {"file_path": "/nonexistent/f", "old_string": "a", "new_string": "b"}))


if __name__ == "__main__":
    unittest.main()
