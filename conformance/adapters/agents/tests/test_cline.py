"""The Cline CLI adapter with no Cline: the reading of its `--json` lines (the shapes
recorded from Cline CLI 3.0.65: a command that ran with its exit code, an ask refused
headless, a tool its settings disabled, a PreToolUse hook's cancel, an editor call that
failed), the configuration it writes (the provider with its base URL, the disabled tools,
the hook files named by event in the order Cline runs them), what it cannot say
(`unsupported`), and the hook shim's `cline` format.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import textwrap
import unittest
from typing import Any, Optional

from conformance.adapters.agents import agent_adapter as core
from conformance.adapters.agents.agent_adapter import Call, RunResult, Unsupported
from conformance.adapters.agents.cline import adapter as cline
from conformance.adapters.agents.tests import helpers


def line(kind: str, **fields: Any) -> dict[str, Any]:
    return {"ts": "2026-12-07T09:48:33.067Z", "type": kind, **fields}


def tool_event(kind: str, **fields: Any) -> dict[str, Any]:
    return line("agent_event", event={"type": kind, "contentType": "tool", "toolName": "run_commands",
                                      "toolCallId": "call_0_1", **fields})


def run(output: Any, finish: str = "completed") -> str:
    lines = [line("hook_event", hookEventName="agent_start"),
             line("hook_event", hookEventName="tool_call"),
             tool_event("content_start", input={"commands": ["ls"]}),
             tool_event("content_end", output=output, durationMs=3),
             line("run_result", finishReason=finish)]
    return "\n".join(json.dumps(x) for x in lines) + "\n"


class ObserveTest(unittest.TestCase):
    def observe(self, stdout: str, asker: str = "terminal", data: str = "/nonexistent") -> core.Observed:
        agent = helpers.bare(cline.Cline)
        session = helpers.session(agent, asker=asker)
        session.state["data"] = data
        return agent.observe(session, Call("shell", "ls"), RunResult(0, stdout, ""), [])

    def test_ran_with_its_exit_code_and_output(self) -> None:
        obs = self.observe(run([{"query": "ls; exit 3", "result": "[Command exited with code 3]\nout\n",
                                 "error": "Command exited with code 3", "success": False}]))
        self.assertEqual((obs.ran, obs.exit, obs.output, obs.decision()), (True, 3, "out\n", "allow"))
        ok = self.observe(run([{"query": "ls", "result": "a\n", "success": True}]))
        self.assertEqual((ok.exit, ok.output), (0, "a\n"))

    def test_refusals_by_what_refused(self) -> None:
        asked = self.observe(run({"error": 'Tool "run_commands" requires approval in a TTY session '
                                           "-- NOT a tool or system failure."}))
        self.assertEqual((asked.decision(), asked.by), ("ask", "user"))
        nobody = self.observe(run({"error": 'Tool "run_commands" requires approval in a TTY session'}),
                              asker="none")
        self.assertEqual(nobody.decision(), "deny")
        agent = helpers.bare(cline.Cline)
        session = helpers.session(agent, asker="terminal")
        session.state.update(data="/nonexistent", restricted=True)
        restricted = agent.observe(session, Call("shell", "ls"), RunResult(0, run(
            {"error": 'Tool "run_commands" requires approval in a TTY session'}), ""), [])
        self.assertEqual((restricted.decision(), restricted.by), ("deny", "mode"))
        rule = self.observe(run({"error": "Tool call run_commands was rejected before execution: "
                                          "AI_NoSuchToolError: Model tried to call unavailable tool "
                                          "'run_commands'. Available tools: read_files"}))
        self.assertEqual((rule.decision(), rule.by), ("deny", "rule"))

    def test_a_hook_cancel_ends_the_run_before_the_call(self) -> None:
        lines = [line("hook_event", hookEventName="tool_call"),
                 line("hook_event", hookEventName="agent_error"),
                 line("run_result", finishReason="aborted")]
        obs = self.observe("\n".join(json.dumps(x) for x in lines))
        self.assertEqual((obs.decision(), obs.by, obs.ran), ("deny", "hook", False))
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "logs"))
            with open(os.path.join(d, "logs", "cline.log"), "w") as f:
                f.write('{"level":40,"errorName":"ControlledStopError","errorMessage":"not today",'
                        '"msg":"Agent loop caught error"}\nnot json\n')
            obs = self.observe("\n".join(json.dumps(x) for x in lines), data=d)
        self.assertEqual(obs.message, "not today")

    def test_an_editor_call_that_failed_ran(self) -> None:
        obs = self.observe(run({"query": "edit:f", "result": "", "error": "Editor operation failed: no match",
                                "success": False}))
        self.assertEqual((obs.ran, obs.exit, obs.output), (True, 1, "Editor operation failed: no match"))

    def test_no_tool_call_is_an_error_with_stderr(self) -> None:
        helpers.assert_no_call_is_an_error(self, helpers.bare(cline.Cline))


class RuleTest(unittest.TestCase):
    def test_only_a_whole_tool_can_be_denied(self) -> None:
        self.assertEqual(cline.disabled_tool("shell"), "run_commands")
        self.assertEqual(cline.disabled_tool("write"), "editor")
        for bad in ("shell:cmd=rm*", "write:path=.env", "fetch"):
            with self.assertRaises(Unsupported, msg=bad):
                cline.disabled_tool(bad)

    def test_matchers(self) -> None:
        self.assertIsNone(cline.matcher_tools("*"))
        self.assertEqual(cline.matcher_tools("shell|write"), "run_commands|editor")
        with self.assertRaises(Unsupported):
            cline.matcher_tools("fetch")


class PrepareTest(unittest.TestCase):
    def prepare(self, setup: dict[str, Any], agent_file: Optional[str] = None) -> dict[str, Any]:
        """The files prepare wrote, by path relative to the configuration directory."""
        return helpers.prepare(helpers.bare(cline.Cline), setup, agent_file)

    def test_provider_mode_rules_and_hooks(self) -> None:
        out = self.prepare({"safety": "balanced"}, textwrap.dedent("""\
            agents:
              root:
                hooks:
                  pre_tool_use:
                    - matcher: shell
                      hooks: [{type: command, command: "exit 2"}, {type: command, command: "true"}]
            permissions:
              deny: ["write"]
            """))
        provider = json.loads(out["data/settings/providers.json"])["providers"]["openai-compatible"]
        self.assertEqual(provider["settings"]["baseUrl"], "http://127.0.0.1:9/v1")
        self.assertIn("updatedAt", provider)
        self.assertEqual(json.loads(out["global-settings.json"])["disabledTools"], ["editor"])
        self.assertFalse(out["_state"]["auto"])
        first, second = out["hooks/PreToolUse"], out["hooks/PreToolUse.bash"]
        self.assertTrue(first.startswith("#!/bin/sh\n"))
        self.assertIn("GATEHOUSE_HOOK_TOOLS=run_commands", first)
        self.assertIn("hook_shim.py' cline pre_tool_use", first)
        self.assertIn("'exit 2'", first)
        self.assertIn("'true'", second)

    def test_modes(self) -> None:
        self.assertTrue(self.prepare({})["_state"]["auto"])
        self.assertTrue(self.prepare({"safety": "yolo"})["_state"]["auto"])
        restricted = self.prepare({"safety": "restricted"})["_state"]
        self.assertEqual((restricted["auto"], restricted["restricted"]), (False, True))

    def test_what_cline_cannot_say_is_unsupported(self) -> None:
        for perms in ('allow: ["shell:cmd=git *"]', 'ask: ["shell"]', 'deny: ["shell:cmd=rm*"]'):
            with self.assertRaises(Unsupported, msg=perms):
                self.prepare({}, "agents: {root: {}}\npermissions: {%s}\n" % perms)
        with self.assertRaises(Unsupported):
            self.prepare({"allow_list": ["make test"]})
        with self.assertRaises(Unsupported):
            self.prepare({}, "agents:\n  root:\n    hooks:\n      pre_tool_use:\n"
                             "        - hooks: [{type: command, command: x, timeout: 5}]\n")


class ScriptTest(unittest.TestCase):
    def test_file_calls_the_editor_cannot_make_are_unsupported(self) -> None:
        agent = helpers.bare(cline.Cline)
        session, new = helpers.assert_file_calls_refused(self, agent)
        turns = agent.script(session, Call("write", {"path": "new-file", "content": "x"}))
        self.assertEqual(turns[0], ("editor", {"path": new, "new_text": "x"}))
        self.assertEqual(agent.script(session, Call("shell", "ls"))[0], ("run_commands", {"commands": ["ls"]}))


class ShimTest(unittest.TestCase):
    AGENT_IN = {"hookName": "tool_call", "tool_call": {"id": "call_0_1", "name": "run_commands",
                                                       "input": {"commands": ["rm x"]}},
                "preToolUse": {"toolName": "run_commands", "parameters": {"commands": '["rm x"]'}}}

    def shim(self, hook: str, env: Optional[dict[str, str]] = None,
             agent_in: Optional[dict[str, Any]] = None) -> subprocess.CompletedProcess[str]:
        return helpers.run_shim("cline", hook, agent_in or self.AGENT_IN, env)

    def test_cline_input_and_answer(self) -> None:
        p = self.shim("cat >&2; echo '{\"permission_decision\":\"deny\",\"permission_decision_reason\":\"r\","
                      "\"updated_input\":{\"cmd\":\"echo safe\"}}'")
        seen = json.loads(p.stderr)
        self.assertEqual((seen["tool_name"], seen["tool_input"], seen["hook_event_name"]),
                         ("shell", {"cmd": "rm x"}, "pre_tool_use"))
        self.assertEqual((p.returncode, json.loads(p.stdout)),
                         (0, {"cancel": True, "errorMessage": "r",
                              "overrideInput": {"commands": ["echo safe"]}}))
        ask = self.shim("echo '{\"permission_decision\":\"ask\"}'")
        self.assertEqual(json.loads(ask.stdout), {"review": True})

    def test_exit_2_is_a_cancel_with_the_hooks_stderr(self) -> None:
        p = self.shim("echo not today >&2; exit 2")
        self.assertEqual(json.loads(p.stdout), {"cancel": True, "errorMessage": "not today"})

    def test_a_matcher_that_does_not_name_the_tool_skips_the_hook(self) -> None:
        p = self.shim("echo ran; exit 2", env={"GATEHOUSE_HOOK_TOOLS": "editor"})
        self.assertEqual((p.returncode, p.stdout), (0, ""))
        q = self.shim("echo ran >&2; exit 2", env={"GATEHOUSE_HOOK_TOOLS": "editor|run_commands"})
        self.assertEqual(json.loads(q.stdout)["cancel"], True)


if __name__ == "__main__":
    unittest.main()
