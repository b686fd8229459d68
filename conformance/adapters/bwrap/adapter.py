#!/usr/bin/env python3
"""Bubblewrap as coding agents commonly invoke it, as a Gatehouse fence adapter.

    gatehouse-conform run --impl 'python3 conformance/adapters/bwrap/adapter.py'
    gatehouse-conform run --impl 'python3 conformance/adapters/bwrap/adapter.py --hardened'

The argument list (README.md beside this file says why each part is there):

    bwrap --ro-bind / / --dev /dev --proc /proc
          --bind W W                      (for every workspace root W)
          --unshare-pid --unshare-ipc --unshare-uts
          --die-with-parent --new-session --chdir CWD
          [--cap-drop ALL]                (--hardened only)
          -- sh -c INPUT | python3 -c INPUT

Bubblewrap is taken from $BWRAP, else /usr/bin/bwrap (Debian's package).
"""

from __future__ import annotations

import os
import pathlib
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters import fence_adapter  # noqa: E402
from conformance.adapters.fence_adapter import Session  # noqa: E402

BWRAP = os.environ.get("BWRAP", "/usr/bin/bwrap")


class Bwrap(fence_adapter.Tool):
    backend = "bwrap"
    held_by = "bwrap"

    def __init__(self, hardened: bool) -> None:
        # Without the tool the adapter cannot answer for it: it stops at once, so the run
        # is errored with this cause instead of every scenario failing on a missing program.
        if not os.access(BWRAP, os.X_OK):
            sys.exit("bwrap adapter: no bubblewrap at %s (apt-get install bubblewrap; in a "
                     "kernel-matrix guest: vm --guest-package bubblewrap)" % BWRAP)
        self.hardened = hardened
        self.name = "bubblewrap" + (" --cap-drop ALL" if hardened else " (as agents call it)")
        self.version = fence_adapter.tool_version([BWRAP, "--version"]).replace("bubblewrap ", "")

    def argv(self, session: Session, command: list[str], cwd: str) -> list[str]:
        argv = [BWRAP, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for root in session["workspaces"]:
            argv += ["--bind", root, root]
        argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts",
                 "--die-with-parent", "--new-session", "--chdir", cwd]
        if self.hardened:
            argv += ["--cap-drop", "ALL"]
        return argv + ["--"] + command


if __name__ == "__main__":
    fence_adapter.serve(Bwrap(hardened="--hardened" in sys.argv[1:]))
