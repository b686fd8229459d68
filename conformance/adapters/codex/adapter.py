#!/usr/bin/env python3
"""Codex CLI's Linux sandbox (npm @openai/codex), workspace-write profile, as a Gatehouse
fence adapter.

    gatehouse-conform run --impl 'python3 conformance/adapters/codex/adapter.py'

Every run is

    CODEX_HOME=$CACHE/codex-home codex sandbox -P gatehouse -C CWD -- sh -c INPUT

with $CACHE/codex-home/config.toml (written by this adapter) holding

    [permissions.gatehouse]
    extends = ":workspace"
    [permissions.gatehouse.filesystem]
    ":tmpdir" = "read"
    ":slash_tmp" = "read"

that is Codex's built-in workspace-write profile (`:workspace`: the working directory
writable, the rest read-only, `.git`, `.codex` and `.agents` read-only inside it, network
off, bubblewrap plus seccomp) less its writable /tmp and $TMPDIR, which Codex's own
`sandbox_workspace_write.exclude_slash_tmp` / `exclude_tmpdir_env_var` settings also drop:
the runner's fixture lives under /tmp and would otherwise count as the workspace's.
`codex` is $CODEX, else the one install.sh put in the cache directory.
"""

from __future__ import annotations

import os
import pathlib
import sys
from typing import Optional

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters import fence_adapter  # noqa: E402
from conformance.adapters.fence_adapter import Session  # noqa: E402
from conformance.adapters.protocol import Request  # noqa: E402

CACHE = fence_adapter.cache_dir()
CODEX = os.environ.get("CODEX") or os.path.join(CACHE, "npm", "node_modules", ".bin", "codex")
CODEX_HOME = os.path.join(CACHE, "codex-home")
PROFILE = "gatehouse"
CONFIG = """\
# Written by conformance/adapters/codex/adapter.py: Codex's workspace-write profile
# without its writable /tmp and $TMPDIR (the runner's fixture lives under /tmp).
[permissions.%s]
extends = ":workspace"
[permissions.%s.filesystem]
":tmpdir" = "read"
":slash_tmp" = "read"
""" % (PROFILE, PROFILE)


class Codex(fence_adapter.Tool):
    name = "codex sandbox (workspace-write)"
    backend = "bwrap"
    held_by = "bwrap"

    def __init__(self) -> None:
        if not os.access(CODEX, os.X_OK):
            sys.exit("codex adapter: no codex at %s (run conformance/adapters/install.sh)" % CODEX)
        self.version = fence_adapter.tool_version([CODEX, "--version"]).replace("codex-cli ", "")
        os.makedirs(CODEX_HOME, exist_ok=True)
        with open(os.path.join(CODEX_HOME, "config.toml"), "w") as f:
            f.write(CONFIG)

    def check_setup(self, setup: Request) -> None:
        super().check_setup(setup)
        if len(setup.get("workspaces") or [setup["workspace"]]) > 1:
            raise fence_adapter.Unsupported(
                "workspaces: this adapter maps only the working directory to Codex's project root")

    def argv(self, session: Session, command: list[str], cwd: str) -> list[str]:
        return [CODEX, "sandbox", "-P", PROFILE, "-C", cwd, "--"] + command

    def env(self, session: Session) -> dict[str, str]:
        return dict(super().env(session), CODEX_HOME=CODEX_HOME)

    def launch_failure(self, code: int, err: bytes) -> Optional[str]:
        # Codex's launcher panics (exit 101) before any jail exists when it cannot find
        # bubblewrap (neither on PATH nor its bundled codex-resources/bwrap): seen in a
        # kernel-matrix guest given only the codex binary.
        text = err.decode("utf-8", "replace")
        if code == 101 and "linux-sandbox/src/launcher.rs" in text and "panicked at" in text:
            lines = text.splitlines()
            at = next(i for i, ln in enumerate(lines) if "panicked at" in ln)
            return " ".join(ln.strip() for ln in lines[at:at + 2])
        return None


if __name__ == "__main__":
    fence_adapter.serve(Codex())
