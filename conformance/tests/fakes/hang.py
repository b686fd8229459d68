"""A fake that shakes hands properly, then never answers a decide. The runner must time
the scenario out, kill it, restart it and go on."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gate import Fake  # noqa: E402


class Hang(Fake):
    name = "hang"

    def decide(self, session, tool, line):
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    Hang().serve()
