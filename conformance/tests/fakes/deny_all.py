"""A fake gate that refuses everything: every decide is deny/no_asker. The runner must
fail it on every file, because every file carries the allowed twin of each refusal."""

import pathlib
import sys

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.tests.fakes._gate import Fake, offers  # noqa: E402


class DenyAll(Fake):
    name = "deny-all"

    def decide(self, session, tool, line):
        return {"decision": "deny", "route": "no_asker", "reason": "no_asker", "offers": offers()}

    def answer(self, session, choice):
        return {"outcome": "not_offered", "saved": None}


if __name__ == "__main__":
    DenyAll().serve()
