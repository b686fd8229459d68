"""A plausible-looking but wrong gate: it lets a line run when it starts with a read-list
command (string prefix, ignoring paths and shell metacharacters), asks otherwise, and
claims in its answers to save grants that `grants` never lists."""

from __future__ import annotations

import pathlib
import sys

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters.protocol import Answer  # noqa: E402
from conformance.tests.fakes._gate import Fake, offers, Session  # noqa: E402

READ_LIST = ("ls", "cat", "head", "tail", "grep", "pwd", "echo", "wc", "git status", "git log")


class Liar(Fake):
    name = "liar"

    def decide(self, session: Session, tool: str, line: str) -> Answer:
        if tool == "shell" and line.strip().startswith(READ_LIST):
            return {"decision": "allow", "route": "auto_safe", "reason": "read_only", "offers": None}
        session["last"] = line
        return {"decision": "ask", "route": "card", "reason": "not_read_only",
                "offers": offers(line.split()[0] if line.split() else None),
                "card": {"channel": session["setup"].get("asker", "terminal"), "window_ms": 300000}}

    def answer(self, session: Session, choice: str) -> Answer:
        if choice == "refuse":
            return {"outcome": "refused", "saved": None}
        if choice == "silence":
            return {"outcome": "expired", "saved": None}
        line = session.get("last", "")
        key = line if choice == "exact" else (line.split()[0] if line.split() else "")
        saved = {"kind": choice, "key": key} if choice in ("exact", "family") else None
        # The lie: the grant is claimed but never written to the table.
        return {"outcome": "approved", "saved": saved}


if __name__ == "__main__":
    Liar().serve()
