"""The shared protocol loop and setup rule (conformance/adapters/protocol.py), with no
runner: the answers it writes for each kind of request and failure, and the setup fields
every adapter names against the schema. Run: cargo xtask test (or python3 -m unittest
discover -s conformance/adapters -t . from the repository's root)."""

from __future__ import annotations

import io
import json
import unittest
from collections.abc import Callable
from typing import Any, Optional

from conformance.adapters import fence_adapter, protocol
from conformance.adapters.agents import agent_adapter
from conformance.adapters.protocol import Answer, Failure, Handler, Request, Unsupported


def converse(handle: Handler, *lines: str,
             on_end: Optional[Callable[[], None]] = None) -> list[Any]:
    out = io.StringIO()
    protocol.serve(handle, io.StringIO("".join(line + "\n" for line in lines)), out, on_end)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def handler(req: Request) -> Optional[Answer]:
    op = req["op"]
    if op == "fine":
        return {"value": 1}
    if op == "unsupported":
        raise Unsupported("no such thing")
    if op == "failure":
        raise Failure("the tool broke")
    if op == "silent":
        return None
    raise KeyError(op)


class ServeTest(unittest.TestCase):
    def test_each_answer_carries_the_id_and_its_kind(self) -> None:
        ended = []
        answers = converse(handler, '{"id": 1, "op": "fine"}', '{"id": 2, "op": "unsupported"}',
                           '{"id": 3, "op": "failure"}', '{"id": 4, "op": "other"}',
                           '{"id": 5, "op": "silent"}', "not json", "[1]",
                           '{"id": 6, "op": "bye"}', '{"id": 7, "op": "fine"}',
                           on_end=lambda: ended.append(True))
        self.assertEqual(answers[0], {"id": 1, "ok": True, "value": 1})
        self.assertEqual(answers[1], {"id": 2, "ok": False, "error": {
            "kind": "unsupported", "message": "no such thing"}})
        self.assertEqual(answers[2]["error"], {"kind": "error", "message": "the tool broke"})
        self.assertEqual(answers[3]["error"], {"kind": "error", "message": "KeyError('other')"})
        # `silent` wrote nothing; a line that is not an object is an error without an id.
        self.assertEqual([a["id"] for a in answers[4:6]], [None, None])
        self.assertEqual([a["error"]["kind"] for a in answers[4:6]], ["error", "error"])
        # `bye` is answered and ends the loop: request 7 is never read.
        self.assertEqual(answers[6:], [{"id": 6, "ok": True}])
        self.assertEqual(ended, [True])


class SetupTest(unittest.TestCase):
    REQUIRED: dict = {"workspace": "/w", "home": "/h", "host": "posix", "asker": "terminal",
                "allow_list": [], "grants": [], "card_window_ms": None}

    def test_required_fields_are_the_schemas(self) -> None:
        self.assertEqual(protocol.required_fields(), frozenset(self.REQUIRED))
        protocol.check_setup(dict(self.REQUIRED), (), "t")

    def test_a_field_not_honoured_is_unsupported_by_name(self) -> None:
        with self.assertRaisesRegex(Unsupported, r"setup field\(s\) choices, roots: t has no counterpart"):
            protocol.check_setup(dict(self.REQUIRED, roots=[], choices={}), {"limits"}, "t")
        with self.assertRaisesRegex(Unsupported, r"made_up: not in the protocol's schema"):
            protocol.check_setup(dict(self.REQUIRED, made_up=1), (), "t")

    def test_an_adapter_naming_a_field_the_schema_lacks_fails(self) -> None:
        with self.assertRaisesRegex(Failure, "made_up"):
            protocol.check_setup(dict(self.REQUIRED), {"made_up"}, "t")

    def test_every_adapter_names_fields_of_the_schema(self) -> None:
        from conformance.adapters.agents.claude_code.adapter import ClaudeCode
        from conformance.adapters.agents.codex_cli.adapter import CodexCli
        from conformance.adapters.agents.gemini_cli.adapter import GeminiCli
        from conformance.adapters.agents.opencode.adapter import OpenCode
        named = {"fence": fence_adapter.HONOURED, "agent": agent_adapter.Agent.known_setup}
        for cls in (ClaudeCode, CodexCli, GeminiCli, OpenCode):
            named[cls.__name__] = cls.known_setup
        for who, fields in named.items():
            self.assertLessEqual(set(fields), protocol.setup_fields(), who)


class ChoicesTest(unittest.TestCase):
    def test_the_guard_carries_the_choices_the_schema_marks(self) -> None:
        carried = protocol.guard_choices()
        self.assertIn("pass_secret_env", carried)
        self.assertNotIn("config_files", carried)
        self.assertEqual(agent_adapter.unmapped_choices(
            {"pass_env": ["A"], "config_files": True, "trust_project": False}), ["config_files"])


if __name__ == "__main__":
    unittest.main()
