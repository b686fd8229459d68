"""The `--guard` mode of the agent adapters (Claude Code, Codex CLI, Gemini CLI with
`gatehouse guard` as their pre-tool hook), with no agent: the argument, the guard's
configuration written from a setup, and an approved line refused for want of a person
reported as unsupported, never as a run. Run: cargo xtask test (with the
package's other tests), or python3 -m unittest discover -s conformance/adapters -t .
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import unittest
from types import ModuleType
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
AGENTS = os.path.dirname(HERE)

from conformance.adapters.agents import agent_adapter as core  # noqa: E402


def load_adapter(folder: str) -> ModuleType:
    """An agent's adapter module by its folder."""
    return importlib.import_module("conformance.adapters.agents.%s.adapter" % folder)


class GuardArgumentTest(unittest.TestCase):
    def test_absent_given_and_default(self) -> None:
        self.assertIsNone(core.guard_argument([]))
        self.assertIsNone(core.guard_argument(["--other"]))
        self.assertEqual(core.guard_argument(["--guard", "rel/gatehouse"]),
                         os.path.abspath("rel/gatehouse"))
        default = core.guard_argument(["--guard"])
        assert default is not None
        self.assertTrue(default.endswith(os.path.join("release", "gatehouse")), default)
        # A flag after --guard is not taken for the program.
        self.assertEqual(core.guard_argument(["--guard", "--x"]), default)

    def test_each_guarded_adapter_reads_it(self) -> None:
        for folder in ("claude_code", "codex_cli", "gemini_cli", "copilot_cli"):
            mod = load_adapter(folder)
            self.assertIs(mod.core.guard_argument, core.guard_argument, folder)
            with open(os.path.join(AGENTS, folder, "adapter.py")) as f:
                src = f.read()
            self.assertIn("guard_argument(sys.argv[1:])", src, folder)


class GuardConfigTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="guard-test-")
        ws = os.path.join(self.dir, "workspace")
        os.makedirs(ws)
        self.s = core.Session.__new__(core.Session)
        self.s.root = os.path.join(self.dir, ".agent-s1")
        os.makedirs(self.s.root)
        self.s.setup = {"workspace": ws, "allow_list": ["make test"],
                        "settings_file": os.path.join(self.dir, "settings.yaml")}

    def tearDown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def read(self, path: str) -> dict[str, Any]:
        try:
            import tomllib
        except ImportError:
            self.skipTest("tomllib needs python 3.11")
        with open(path, "rb") as f:
            return tomllib.load(f)

    def test_written_from_the_setup_outside_the_workspace(self) -> None:
        path = core.write_guard_config(self.s, "/bin/gatehouse", "strict")
        self.assertFalse(path.startswith(self.s.setup["workspace"] + os.sep))
        c = self.read(path)
        self.assertEqual(c["workspaces"], [self.s.setup["workspace"]])
        self.assertEqual(c["gatehouse"], "/bin/gatehouse")
        self.assertEqual(c["safety"], "strict")
        self.assertEqual(c["settings-file"], self.s.setup["settings_file"])
        self.assertEqual(c["allow"], ["make test"])
        self.assertEqual(c["state-dir"], os.path.join(self.s.root, "guard-state"))

    def test_an_approved_line_is_allowed_for_that_run_only(self) -> None:
        line = "printf '%s' \"$x\"\nrm -f 'it'"
        c = self.read(core.write_guard_config(self.s, "/bin/gatehouse", approved=[line]))
        self.assertEqual(c["allow"], ["make test", line])
        self.assertNotIn("safety", c)
        c = self.read(core.write_guard_config(self.s, "/bin/gatehouse"))
        self.assertEqual(c["allow"], ["make test"])


class Unapprovable(unittest.TestCase):
    class Guarded(core.Agent):
        name = "x+gatehouse"
        guard: Optional[str] = "/bin/gatehouse"

    def test_a_dangerous_approved_line_is_unsupported(self) -> None:
        call = core.Call("shell", "rm -rf sub", approved=True)
        obs = core.Observed(denied=True, by="hook", message=(
            "gatehouse guard: denied (dangerous, stage always_ask): it needs a person's "
            "approval, and Codex CLI cannot ask one from a hook; ..."))
        with self.assertRaises(core.Unsupported):
            core.guard_unapprovable(self.Guarded(), call, obs)

    def test_a_redirection_the_trust_map_asks_about_is_unsupported(self) -> None:
        call = core.Call("shell", "echo hi > made.txt", approved=True)
        obs = core.Observed(denied=True, by="hook", message=(
            "gatehouse guard: denied (redirect_prompt, stage redirect): it needs a person's "
            "approval, and Gemini CLI cannot ask one from a hook; ..."))
        with self.assertRaises(core.Unsupported) as e:
            core.guard_unapprovable(self.Guarded(), call, obs)
        self.assertIn("trust map", str(e.exception))

    def test_a_refused_workspace_is_the_fence_refusing_the_choice(self) -> None:
        call = core.Call("shell", "echo ran > ran.txt", approved=True)
        obs = core.Observed(denied=True, by="hook", message=(
            "Command blocked by PreToolUse hook: gatehouse guard: cannot open the workspace "
            "/x/parentlink: \"/x\" holds the working directory. Command: echo ran"))
        refused = core.guard_unapprovable(self.Guarded(), call, obs)
        self.assertEqual(refused.refused, "choice_refused")
        assert refused.refusal is not None
        self.assertTrue(refused.refusal.startswith("gatehouse guard: cannot open the workspace /x/"),
                        refused.refusal)

    def test_other_refusals_and_unguarded_agents_pass_through(self) -> None:
        call = core.Call("shell", "rm -rf sub", approved=True)
        deny = core.Observed(denied=True, by="hook", message="gatehouse guard: denied (deny_pattern, ...)")
        self.assertIs(core.guard_unapprovable(self.Guarded(), call, deny), deny)
        asked = core.Observed(denied=True, by="hook", message=(
            "denied (dangerous, stage always_ask): ... cannot ask one from a hook"))
        unguarded = self.Guarded()
        unguarded.guard = None
        self.assertIs(core.guard_unapprovable(unguarded, call, asked), asked)
        self.assertIs(core.guard_unapprovable(self.Guarded(), core.Call("shell", "x"), asked), asked)


if __name__ == "__main__":
    unittest.main()
