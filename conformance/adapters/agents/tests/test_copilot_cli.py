"""The Copilot CLI adapter with no Copilot: the hook shim's `copilot` format (Copilot's
preToolUse input, `{"sessionId", "timestamp", "cwd", "toolName", "toolArgs"}`, given to the
scenario's hook in the spec's shape, and a decision answered in Copilot's
`permissionDecision`/`modifiedArgs`), the reading of its `--output-format json` events
(the shapes recorded from Copilot CLI 1.0.102: a run, an ask refused headless, a rule's
deny, a hook's deny and ask), and the translation of patterns into its rules.
"""

from __future__ import annotations

import json
import unittest
from typing import Any

from conformance.adapters.agents import agent_adapter as core
from conformance.adapters.agents.agent_adapter import Call, RunResult, Unsupported
from conformance.adapters.agents.copilot_cli import adapter as copilot
from conformance.adapters.agents.tests import helpers


def events(complete: dict[str, Any]) -> str:
    """One run's stdout: the call started, then completed as `complete` says."""
    lines = [{"type": "session.tools_updated", "data": {"model": "scripted"}},
             {"type": "tool.execution_start", "data": {"toolCallId": "call_0_1", "toolName": "bash"}},
             {"type": "tool.execution_complete", "data": dict(complete, toolCallId="call_0_1")},
             {"type": "result", "exitCode": 0}]
    return "\n".join(json.dumps(x) for x in lines) + "\n"


class ObserveTest(unittest.TestCase):
    def observe(self, complete: dict[str, Any], asker: str = "terminal") -> core.Observed:
        agent = helpers.bare(copilot.CopilotCli)
        session = helpers.session(agent, asker=asker)
        return agent.observe(session, Call("shell", "ls"), RunResult(0, events(complete), ""), [])

    def test_ran_with_its_exit_code_and_output(self) -> None:
        obs = self.observe({"success": True, "result": {
            "content": "out\n<shellId: 0 completed with exit code 3>"}})
        self.assertEqual((obs.ran, obs.exit, obs.output, obs.decision()), (True, 3, "out", "allow"))

    def test_refusals_by_what_refused(self) -> None:
        def refused(message: str) -> core.Observed:
            return self.observe({"success": False, "error": {"message": message, "code": "denied"}})
        asked = refused("Permission denied because no interactive user response was available. Retry ...")
        self.assertEqual((asked.decision(), asked.by), ("ask", "user"))
        nobody = self.observe({"success": False, "error": {"code": "denied", "message":
                               "Permission denied because no interactive user response was available."}},
                              asker="none")
        self.assertEqual(nobody.decision(), "deny")
        rule = refused("Permission to run this tool was denied due to the following rules: `shell(rm)`")
        self.assertEqual((rule.decision(), rule.by), ("deny", "rule"))
        hook = refused("Denied by preToolUse hook: nope")
        self.assertEqual((hook.decision(), hook.by), ("deny", "hook"))
        hook_ask = refused("Denied by preToolUse hook (unable to ask user for confirmation): No reason provided")
        self.assertEqual((hook_ask.decision(), hook_ask.by), ("ask", "hook"))

    def test_no_tool_call_is_an_error_with_stderr(self) -> None:
        helpers.assert_no_call_is_an_error(self, helpers.bare(copilot.CopilotCli))


class PatternTest(unittest.TestCase):
    def test_rules(self) -> None:
        t = copilot.translate_pattern
        self.assertEqual(t("shell:cmd=git push*"), "shell(git push:*)")
        self.assertEqual(t("shell:cmd=rm"), "shell(rm)")
        self.assertEqual(t("shell"), "shell")
        self.assertEqual(t("write:path=.env"), "write(.env)")
        for bad in ("read:path=*", "shell:cmd=r?m", "shell:cmd=*rm*", "fetch:url=*"):
            with self.assertRaises(Unsupported, msg=bad):
                t(bad)


class ScriptTest(unittest.TestCase):
    def test_file_calls_copilot_refuses_before_asking_are_unsupported(self) -> None:
        agent = helpers.bare(copilot.CopilotCli)
        session, new = helpers.assert_file_calls_refused(self, agent)
        turns = agent.script(session, Call("write", {"path": "new-file", "content": "x"}))
        self.assertEqual(turns[0], ("create", {"path": new, "file_text": "x"}))


class GuardedTest(unittest.TestCase):
    """--guard: the guard's refusals as Copilot shows them (its deny reason), told apart from
    its decisions; `gatehouse exec`'s refusal of a choice from the fenced line's output."""

    def observe(self, complete: dict[str, Any], approved: bool = False) -> core.Observed:
        agent = helpers.bare(copilot.CopilotCli)
        agent.guard = "/g/gatehouse"
        session = helpers.session(agent)
        call = Call("shell", "ls")
        call.approved = approved
        return agent.observe(session, call, RunResult(0, events(complete), ""), [])

    def test_a_decision_is_the_hooks_deny(self) -> None:
        obs = self.observe({"success": False, "error": {"code": "denied", "message":
                            "Denied by preToolUse hook: gatehouse guard: denied (deny_pattern, "
                            "stage deny_pattern): a deny pattern matches: shell:cmd=rm*"}})
        self.assertEqual((obs.decision(), obs.by, obs.refused), ("deny", "hook", None))

    def test_a_session_the_guard_cannot_open_is_a_refused_choice(self) -> None:
        obs = self.observe({"success": False, "error": {"code": "denied", "message":
                            "Denied by preToolUse hook: gatehouse guard: cannot open the "
                            "workspace /w: it holds the home"}})
        self.assertEqual((obs.refused, obs.refusal),
                         ("choice_refused", "gatehouse guard: cannot open the workspace /w: it holds the home"))

    def test_exec_refusing_a_choice(self) -> None:
        text = ("gatehouse exec: fence: native (namespaces)\ngatehouse exec: --rw /: the root\n"
                "<shellId: 0 completed with exit code 125>")
        obs = self.observe({"success": True, "result": {"content": text}})
        self.assertEqual((obs.ran, obs.refused, obs.refusal),
                         (False, "choice_refused", "gatehouse exec: --rw /: the root"))
        ran = self.observe({"success": True, "result": {
            "content": "gatehouse exec: fence: native\nout\n<shellId: 0 completed with exit code 0>"}})
        self.assertEqual((ran.ran, ran.exit, ran.refused), (True, 0, None))


class ShimTest(unittest.TestCase):
    def test_copilot_input_and_answer(self) -> None:
        agent_in = {"sessionId": "s", "timestamp": 1, "cwd": "/w", "toolName": "bash",
                    "toolArgs": {"command": "rm x", "description": "d"}}
        hook = ("cat >&2; echo '{\"permission_decision\":\"deny\",\"permission_decision_reason\":\"r\","
                "\"updated_input\":{\"cmd\":\"echo safe\"}}'")
        p = helpers.run_shim("copilot", hook, agent_in)
        seen = json.loads(p.stderr)
        self.assertEqual((seen["tool_name"], seen["tool_input"], seen["hook_event_name"]),
                         ("shell", {"cmd": "rm x"}, "pre_tool_use"))
        self.assertEqual((p.returncode, json.loads(p.stdout)),
                         (0, {"permissionDecision": "deny", "permissionDecisionReason": "r",
                              "modifiedArgs": {"command": "echo safe"}}))


if __name__ == "__main__":
    unittest.main()
