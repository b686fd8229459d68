"""A fake whose fence gives the jail a private writable `/tmp`, as the reference did before
issue 46: each command runs in bubblewrap with the host's root read-only, a tmpfs on
`/tmp` and the workspace bound on it, so a write beside a workspace under `/tmp`, or to
`/tmp` itself, lands in that tmpfs, exits 0 and is gone. Nothing reaches the host; only
the exit status the person sees is wrong, which `fence/write-outside-loud` pins
(FENCE-JAIL-21)."""

from __future__ import annotations

import pathlib
import subprocess
import sys
from typing import Any

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters.protocol import Answer, Request  # noqa: E402
from conformance.tests.fakes._gate import Session  # noqa: E402
from conformance.tests.fakes.unfenced import Unfenced  # noqa: E402

POSTURE_BWRAP: dict[str, Any] = {
    "state": "fence", "backend": "bwrap",
    "layers": [{"name": "bwrap", "covers": ["write", "truncate", "metadata"]}],
    "landlock_abi": None, "not_covered": [], "degraded": False, "reason": None,
    "env": "scrubbed", "session_log": "protected"}


class TmpSwallow(Unfenced):
    name = "tmp-swallow"
    posture = POSTURE_BWRAP

    def run(self, session: Session, req: Request) -> Answer:
        setup = session["setup"]
        ws = setup["workspace"]
        cwd = req.get("cwd") or ws
        argv = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
                "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                "--bind", ws, ws, "--dir", "/tmp/scratch", "--setenv", "TMPDIR",
                "/tmp/scratch", "--chdir", cwd, "sh", "-c", req["input"]]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20)
        out = self.report(proc)
        out["held_by"] = "bwrap"
        return out


if __name__ == "__main__":
    TmpSwallow().serve()
