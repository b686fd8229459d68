"""The guarded adapter reads a refusal of the fence or of the guard from what Claude Code
shows, and nothing else as one: `gatehouse exec`'s one line at exit 125 (not its fence
notice), the guard's block answer as a hook error (not a deny of the call)."""

from __future__ import annotations
import unittest

from conformance.adapters.agents import agent_adapter as core
from conformance.adapters.agents.claude_code import adapter as claude

NOTICE = "gatehouse exec: fence: native (namespaces: write) — network: off"
REFUSAL = ("gatehouse exec: --workspace /h: /h is the home directory /h, where jailed code "
           "could change ~/.bashrc")


class Refusals(unittest.TestCase):
    def test_exec_refusal_is_its_line_at_125_only(self) -> None:
        self.assertEqual(core.exec_refusal(REFUSAL, 125), REFUSAL)
        self.assertIsNone(core.exec_refusal(REFUSAL, 1))
        self.assertIsNone(core.exec_refusal(NOTICE + "\nhello", 125))
        self.assertIsNone(core.exec_refusal("gatehouse exec: made up by the command", 0))

    def test_guard_refusal_is_a_hook_error_of_the_guard(self) -> None:
        text = ("PreToolUse:Bash hook error: [/g guard claude-code]: gatehouse guard: "
                "/l: the state directory lies inside the workspace root /l\n")
        self.assertEqual(claude.guard_refusal(text),
                         "gatehouse guard: /l: the state directory lies inside the workspace root /l")
        self.assertIsNone(claude.guard_refusal("gatehouse guard: denied: dangerous line"))
        self.assertIsNone(claude.guard_refusal("PreToolUse:Bash hook error: something else"))


if __name__ == "__main__":
    unittest.main()
