"""A fake that shakes hands properly, then prints a line that is not JSON on the first
decide. The runner must report the scenario as errored (garbage) and restart it."""

import pathlib
import sys

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.tests.fakes._gate import Fake  # noqa: E402


class Garbage(Fake):
    name = "garbage"

    def decide(self, session, tool, line):
        raise AssertionError("unreachable")

    def handle(self, req):
        if req.get("op") == "decide":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            return None
        return Fake.handle(self, req)


if __name__ == "__main__":
    Garbage().serve()
