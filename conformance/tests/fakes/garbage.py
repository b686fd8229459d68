"""A fake that shakes hands properly, then prints a line that is not JSON on the first
decide. The runner must report the scenario as errored (garbage) and restart it."""

from __future__ import annotations

import pathlib
from typing import Optional
import sys

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters.protocol import Answer, Request  # noqa: E402
from conformance.tests.fakes._gate import Fake, Session  # noqa: E402


class Garbage(Fake):
    name = "garbage"

    def decide(self, session: Session, tool: str, line: str) -> Answer:
        raise AssertionError("unreachable")

    def handle(self, req: Request) -> Optional[Answer]:
        if req.get("op") == "decide":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            return None
        return Fake.handle(self, req)


if __name__ == "__main__":
    Garbage().serve()
