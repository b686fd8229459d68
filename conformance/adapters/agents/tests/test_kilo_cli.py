"""The Kilo CLI adapter with no Kilo: opencode's adapter with Kilo's program, its
configuration under Kilo's name as well as opencode's, Kilo's switches set, its account
credentials removed, and the longer deadline its slow start needs.
"""

from __future__ import annotations

import json
import os
import tempfile
import unittest
from unittest import mock

from conformance.adapters.agents import agent_adapter as core
from conformance.adapters.agents.agent_adapter import Call
from conformance.adapters.agents.kilo_cli import adapter as kilo


class KiloTest(unittest.TestCase):
    def session(self, d: str) -> core.Session:
        agent = kilo.KiloCli.__new__(kilo.KiloCli)
        ws = os.path.join(d, "work")
        os.makedirs(ws)
        s = core.Session(agent, "s", {"workspace": ws, "home": d, "safety": "balanced"})
        agent.prepare(s)
        return s

    def test_env_names_kilo_and_drops_its_account(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            s = self.session(d)
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
            s = self.session(d)
            argv = s.agent.command(s, Call("shell", "ls", if_asked="yes"))
        self.assertEqual(argv[:2], ["/x/kilo", "run"])
        self.assertIn("--auto", argv)
        self.assertEqual(kilo.KiloCli.deadline_s, 120.0)


if __name__ == "__main__":
    unittest.main()
