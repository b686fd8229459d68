"""A fake gate that lets everything run: every decide is allow/auto_safe, every card
answer approved. The runner must fail it on any scenario that expects a refusal."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gate import Fake  # noqa: E402


class AllowAll(Fake):
    name = "allow-all"

    def decide(self, session, tool, line):
        return {"decision": "allow", "route": "auto_safe", "reason": "read_only", "offers": None}


if __name__ == "__main__":
    AllowAll().serve()
