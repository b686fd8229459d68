#!/usr/bin/env python3
"""The rust-landlock crate's example sandboxer (examples/sandboxer.rs of the `landlock`
crate, built by conformance/adapters/install.sh), as a Gatehouse fence adapter.

    gatehouse-conform run --impl 'python3 conformance/adapters/landlock_sandboxer/adapter.py'

It is invoked with its two mandatory settings and nothing else:

    LL_FS_RO=/  LL_FS_RW=W1:W2:...:/dev/null  sandboxer sh -c INPUT | python3 -c INPUT

(every workspace root read-write, everything else read-only). The optional LL_SCOPED
(signal and abstract-socket scoping) and the network port lists are left unset, as the
sandboxer's usage text says a plain run does. The binary is $LANDLOCK_SANDBOXER, else the
one install.sh built in the cache directory.
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

SANDBOXER = os.environ.get("LANDLOCK_SANDBOXER") or os.path.join(
    fence_adapter.cache_dir(), "landlock-sandboxer", "target", "release", "sandboxer")


class Sandboxer(fence_adapter.Tool):
    name = "rust-landlock example sandboxer"
    version = "landlock 0.4.8"
    # Not the reference's `native` backend (namespaces + Landlock + seccomp): Landlock alone.
    backend = "landlock"
    held_by = "native"
    uses_landlock = True

    def __init__(self) -> None:
        if not os.access(SANDBOXER, os.X_OK):
            sys.exit("landlock-sandboxer adapter: no sandboxer at %s "
                     "(run conformance/adapters/install.sh --ci)" % SANDBOXER)

    def argv(self, session: Session, command: list[str], cwd: str) -> list[str]:
        return [SANDBOXER] + command

    def env(self, session: Session) -> dict[str, str]:
        env = super().env(session)
        env["LL_FS_RO"] = "/"
        env["LL_FS_RW"] = ":".join(session["workspaces"] + ["/dev/null"])
        return env


if __name__ == "__main__":
    fence_adapter.serve(Sandboxer())
