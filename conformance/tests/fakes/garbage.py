"""A fake that shakes hands properly, then prints a line that is not JSON on the first
decide. The runner must report the scenario as errored (garbage) and restart it."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gate import Fake  # noqa: E402


class Garbage(Fake):
    name = "garbage"

    def decide(self, session, tool, line):
        raise AssertionError("unreachable")

    def on_request(self, req):
        if req.get("op") == "decide":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            return None
        return Fake.on_request(self, req)


if __name__ == "__main__":
    Garbage().serve()
