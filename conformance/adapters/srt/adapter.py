#!/usr/bin/env python3
"""Anthropic's sandbox-runtime (npm @anthropic-ai/sandbox-runtime, the `srt` CLI) as a
Gatehouse fence adapter.

    gatehouse-conform run --impl 'python3 conformance/adapters/srt/adapter.py'

Every run is

    srt --settings SESSION.json -c 'sh -c INPUT'        (or 'python3 -c INPUT')

with the session's settings file (in a directory of the adapter's own, outside every
workspace) holding the documented minimum for "the workspace writable, nothing else":

    {"network": {"allowedDomains": [], "deniedDomains": []},
     "filesystem": {"denyRead": [], "allowWrite": [W1, W2, ...], "denyWrite": []}}

Reads are allowed everywhere (srt's default), writes only under the workspace roots (and
srt's own always-writable paths), no network. `srt` is $SRT, else the one install.sh put
in the cache directory.
"""

from __future__ import annotations

import json
import os
import pathlib
import shlex
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters import fence_adapter  # noqa: E402
from conformance.adapters.fence_adapter import Session  # noqa: E402

SRT = os.environ.get("SRT") or os.path.join(
    fence_adapter.cache_dir(), "npm", "node_modules", ".bin", "srt")


class Srt(fence_adapter.Tool):
    name = "sandbox-runtime (srt)"
    backend = "bwrap"
    held_by = "bwrap"

    def __init__(self) -> None:
        if not os.access(SRT, os.X_OK):
            sys.exit("srt adapter: no srt at %s (run conformance/adapters/install.sh)" % SRT)
        self.version = fence_adapter.tool_version([SRT, "--version"])

    def start(self, session: Session) -> None:
        session["dir"] = tempfile.mkdtemp(prefix="gh-srt-")
        session["settings"] = os.path.join(session["dir"], "srt-settings.json")
        with open(session["settings"], "w") as f:
            json.dump({"network": {"allowedDomains": [], "deniedDomains": []},
                       "filesystem": {"denyRead": [], "allowWrite": session["workspaces"],
                                      "denyWrite": []}}, f)

    def argv(self, session: Session, command: list[str], cwd: str) -> list[str]:
        return [SRT, "--settings", session["settings"], "-c", shlex.join(command)]

    def stop(self, session: Session) -> None:
        shutil.rmtree(session["dir"], ignore_errors=True)


if __name__ == "__main__":
    fence_adapter.serve(Srt())
