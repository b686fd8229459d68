"""A fake that shakes hands properly, then never answers a decide. The runner must time
the scenario out, kill it, restart it and go on."""

from __future__ import annotations

import pathlib
import sys
import time

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters.protocol import Answer  # noqa: E402
from conformance.tests.fakes._gate import Fake, Session  # noqa: E402


class Hang(Fake):
    name = "hang"

    def decide(self, session: Session, tool: str, line: str) -> Answer:
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    Hang().serve()
