"""A fake gate that refuses everything: every decide is deny/no_asker. The runner must
fail it on every file, because every file carries the allowed twin of each refusal."""

from __future__ import annotations

import pathlib
import sys

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters.protocol import Answer  # noqa: E402
from conformance.tests.fakes._gate import Fake, offers, Session  # noqa: E402


class DenyAll(Fake):
    name = "deny-all"

    def decide(self, session: Session, tool: str, line: str) -> Answer:
        return {"decision": "deny", "route": "no_asker", "reason": "no_asker", "offers": offers()}

    def answer(self, session: Session, choice: str) -> Answer:
        return {"outcome": "not_offered", "saved": None}


if __name__ == "__main__":
    DenyAll().serve()
