"""A fake gate that lets everything run: every decide is allow/auto_safe, every card
answer approved. The runner must fail it on any scenario that expects a refusal."""

from __future__ import annotations

import pathlib
import sys

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters.protocol import Answer  # noqa: E402
from conformance.tests.fakes._gate import Fake, Session  # noqa: E402


class AllowAll(Fake):
    name = "allow-all"

    def decide(self, session: Session, tool: str, line: str) -> Answer:
        return {"decision": "allow", "route": "auto_safe", "reason": "read_only", "offers": None}


if __name__ == "__main__":
    AllowAll().serve()
