#!/usr/bin/env python3
"""Kilo CLI (npm `@kilocode/cli`, pinned by install.sh) as an implementation under test:
opencode's lineage, driven as `../opencode/adapter.py` drives opencode (`kilo run --format
json --dir WORKSPACE "Do the task."`, the scripted model on the OpenAI-compatible chat
completions wire as an `@ai-sdk/openai-compatible` provider, the setup as its `permission`
configuration, `--auto` as the person's "yes"), with Kilo's own names: the configuration in
`KILO_CONFIG_CONTENT` (and `OPENCODE_CONFIG_CONTENT`, which it also reads), its update,
model-list, share, LSP-download, default-plugin and Claude Code switches under `KILO_`, and
no daemon (`KILO_NO_DAEMON`). Everything opencode's adapter maps or calls `unsupported` is
the same here (README.md). A run takes 15-50 s on this machine (mostly before the session's
first model request), so its deadline is 120 s.
"""

from __future__ import annotations

import os
import pathlib
import sys

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[4])

from conformance.adapters.agents import agent_adapter as core  # noqa: E402
from conformance.adapters.agents.agent_adapter import Session  # noqa: E402
from conformance.adapters.agents.opencode import adapter as opencode  # noqa: E402

VERSION = "7.7.7"
SWITCHES = ("KILO_DISABLE_AUTOUPDATE", "KILO_DISABLE_MODELS_FETCH", "KILO_DISABLE_SHARE",
            "KILO_DISABLE_LSP_DOWNLOAD", "KILO_DISABLE_DEFAULT_PLUGINS", "KILO_DISABLE_CLAUDE_CODE",
            "KILO_DISABLE_SESSION_INGEST", "KILO_DISABLE_PRESENCE", "KILO_NO_DAEMON")


def binary() -> str:
    override = os.environ.get("GATEHOUSE_KILO")
    if override:
        return override
    return core.npm_bin("kilo-cli", "@kilocode", "cli-linux-x64", "bin", "kilo")


class KiloCli(opencode.OpenCode):
    name = "kilo-cli"
    deadline_s = 120.0

    def __init__(self) -> None:
        self.version = core.version_of([binary(), "--version"], VERSION).strip()

    def env(self, s: Session) -> dict[str, str]:
        e = super().env(s)
        e["KILO_CONFIG_CONTENT"] = e["OPENCODE_CONFIG_CONTENT"]
        for k in ("KILO_API_KEY", "KILO_ORG_ID"):
            e.pop(k, None)
        e.update({k: "1" for k in SWITCHES})
        return e

    def command(self, s: Session, call: core.Call) -> list[str]:
        argv = super().command(s, call)
        i = argv.index("run") - 1
        return argv[:i] + [binary()] + argv[i + 1:]


if __name__ == "__main__":
    core.serve(KiloCli())
