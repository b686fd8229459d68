"""A fake that shakes hands properly, then exits with status 3 on the first decide. The
runner must report the scenario as crashed with that status, restart it and go on."""

from __future__ import annotations

import pathlib
import sys

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters.protocol import Answer  # noqa: E402
from conformance.tests.fakes._gate import Fake, Session  # noqa: E402


class Crash(Fake):
    name = "crash"

    def decide(self, session: Session, tool: str, line: str) -> Answer:
        sys.stderr.write("crash.py: giving up on %r\n" % line)
        sys.stderr.flush()
        sys.exit(3)


if __name__ == "__main__":
    Crash().serve()
