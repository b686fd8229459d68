"""The Kilo CLI adapter with no Kilo: opencode's adapter with Kilo's program, its
configuration under Kilo's name as well as opencode's, Kilo's switches set, its account
credentials removed, and the longer deadline its slow start needs; and what its runs are
read as (a tool the mode withheld is a deny, not a failed run; an edit the tool refuses
before asking is not made).
"""

from __future__ import annotations

import json
import os
import tempfile
import unittest
from unittest import mock

from conformance.adapters.agents import agent_adapter as core
from conformance.adapters.agents.agent_adapter import Call, RunResult, Unsupported
from conformance.adapters.agents.kilo_cli import adapter as kilo


def session(d: str) -> core.Session:
    agent = kilo.KiloCli.__new__(kilo.KiloCli)
    ws = os.path.join(d, "work")
    os.makedirs(ws)
    s = core.Session(agent, "s", {"workspace": ws, "home": d, "safety": "balanced"})
    agent.prepare(s)
    return s


class KiloTest(unittest.TestCase):
    def test_env_names_kilo_and_drops_its_account(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            s = session(d)
            s.model = mock.Mock(url="http://127.0.0.1:9")
            with mock.patch.dict(os.environ, {"KILO_API_KEY": "secret", "KILO_ORG_ID": "org"}):
                e = s.agent.env(s)
        config = json.loads(e["KILO_CONFIG_CONTENT"])
        self.assertEqual(e["KILO_CONFIG_CONTENT"], e["OPENCODE_CONFIG_CONTENT"])
        self.assertEqual(config["provider"]["scripted"]["options"]["baseURL"], "http://127.0.0.1:9/v1")
        self.assertEqual(config["permission"]["bash"], {"*": "ask"})
        self.assertNotIn("KILO_API_KEY", e)
        self.assertNotIn("KILO_ORG_ID", e)
        self.assertEqual({e[k] for k in kilo.SWITCHES}, {"1"})

    def test_command_runs_kilo(self) -> None:
        with tempfile.TemporaryDirectory() as d, mock.patch.dict(os.environ, {"GATEHOUSE_AGENT_CONFINE": "0",
                                                                              "GATEHOUSE_KILO": "/x/kilo"}):
            s = session(d)
            argv = s.agent.command(s, Call("shell", "ls", if_asked="yes"))
        self.assertEqual(argv[:2], ["/x/kilo", "run"])
        self.assertIn("--auto", argv)
        self.assertEqual(kilo.KiloCli.deadline_s, 120.0)

    def test_restricted_writes_an_ask_pattern_as_a_deny(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            settings = os.path.join(d, "settings.yaml")
            with open(settings, "w") as f:
                f.write("settings:\n  permissions:\n    ask: ['shell:cmd=git push*']\n")
            perms = []
            for mode in ("restricted", "balanced"):
                agent = kilo.KiloCli.__new__(kilo.KiloCli)
                ws = os.path.join(d, mode)
                os.makedirs(ws)
                s = core.Session(agent, "s", {"workspace": ws, "home": d, "safety": mode,
                                              "settings_file": settings})
                agent.prepare(s)
                perms.append(s.state["config"]["permission"]["bash"])
        self.assertEqual(perms[0], {"*": "deny", "git push*": "deny"})
        self.assertEqual(perms[1], {"*": "ask", "git push*": "ask"})


def tool_use(tool: str, state: dict[str, object]) -> str:
    return json.dumps({"type": "tool_use", "part": {"tool": tool, "state": state}}) + "\n"


class ObserveTest(unittest.TestCase):
    def observe(self, stdout: str) -> core.Observed:
        agent = kilo.KiloCli.__new__(kilo.KiloCli)
        session = core.Session(agent, "s", {"workspace": "/w/work"})
        return agent.observe(session, Call("shell", "npm test"), RunResult(0, stdout, ""), [])

    def test_a_withheld_tool_is_the_modes_deny(self) -> None:
        # `restricted` writes `bash: {"*": "deny"}`: Kilo does not offer bash, and the
        # model's call of it fails as a tool error; nothing ran.
        said = "Model tried to call unavailable tool 'bash'. Available tools: read, glob."
        for obs in (self.observe(tool_use("bash", {"status": "error", "error": said})),
                    self.observe(tool_use("invalid", {"status": "completed", "output": said}))):
            self.assertEqual((obs.ran, obs.denied, obs.by, obs.decision()), (False, True, "mode", "deny"))

    def test_a_tool_that_ran_and_failed_is_still_a_run(self) -> None:
        obs = self.observe(tool_use("read", {"status": "error", "error": "File /w/work/x not found"}))
        self.assertEqual((obs.ran, obs.exit, obs.decision()), (True, 1, "allow"))

    def test_another_invalid_call_is_an_error_not_a_deny(self) -> None:
        with self.assertRaises(core.AgentError):
            self.observe(tool_use("invalid", {"status": "completed",
                                              "output": "The arguments provided to the tool are invalid: x"}))

    def test_an_edit_with_no_old_text_is_not_made(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            s = session(d)
            with self.assertRaises(Unsupported):
                s.agent.script(s, Call("edit", {"path": "notes.txt"}))
            script = s.agent.script(s, Call("edit", {"path": "notes.txt", "old": "a", "new": "b"}))
        self.assertEqual(script[0][0], "edit")


if __name__ == "__main__":
    unittest.main()
