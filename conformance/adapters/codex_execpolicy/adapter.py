#!/usr/bin/env python3
"""Codex's command rules (`codex execpolicy check`, npm @openai/codex) as a Gatehouse
GATE adapter, decision tier only.

    gatehouse-conform run --filter gate/ --impl 'python3 conformance/adapters/codex_execpolicy/adapter.py'

Every `decide` of a shell line is put to

    codex execpolicy check --rules gatehouse-read-list.rules TOKEN...

once per command of the line, and the JSON Codex prints is translated:

- every command's decision `allow`        -> decision allow, route auto_safe, reason auto_safe
- a `prompt`, or a command no rule matches -> decision ask, route card; the reason is read
  off the rule Codex matched: a rule of the dangerous list -> `dangerous`, an escape-flag
  rule -> `escape_flag`, no rule at all -> `not_read_list`
- a `forbidden` (this rules file writes none)  -> `unsupported`: the protocol's only
  route to a refusal without a card is `no_asker`

The line is cut into commands the way Codex cuts a `bash -lc` script before it checks its
rules: only a line of plain words joined by `&&`, `||`, `;` and `|` is split; any other
shell syntax (`$`, backticks, redirections, parentheses, braces, a lone `&`, a newline) or
a line that cannot be tokenized is checked whole, as `bash -lc LINE`, which no rule
matches. Codex's own splitter is tree-sitter-bash, this one is Python's shlex: they can
differ on exotic quoting (README.md).

What Codex's rules cannot express is answered `unsupported`, never invented: cards and
answers to them, saved grants, the allow-list, `execute_code`, Windows hosts, and a
session with no way to ask (Codex's `never` approval policy runs the command in its
sandbox instead of refusing it). An `ask` carries neither `offers` nor `card`: the rules
CLI does not say what Codex's prompt would offer, and the prompt waits without a window,
which the protocol's integer `window_ms` cannot say.
"""

from __future__ import annotations

import json
import os
import pathlib
import shlex
import subprocess
import sys
from typing import Any

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters import fence_adapter, protocol  # noqa: E402
from conformance.adapters.protocol import Answer, Failure, Request, Unsupported  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = os.path.join(HERE, "gatehouse-read-list.rules")
CODEX = os.environ.get("CODEX") or os.path.join(
    fence_adapter.cache_dir(), "npm", "node_modules", ".bin", "codex")
CODEX_HOME = os.path.join(fence_adapter.cache_dir(), "codex-home")
OPERATORS = {"&&", "||", ";", "|"}
UNSPLITTABLE = set("$`<>(){}\n\r")


def commands(line: str) -> list[list[str]]:
    """The token lists Codex checks for this line."""
    whole = [["bash", "-lc", line]]
    if any(c in UNSPLITTABLE for c in line):
        return whole
    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lex.whitespace_split = True
        tokens = list(lex)
    except ValueError:
        return whole
    out: list[list[str]] = []
    cur: list[str] = []
    for t in tokens:
        if t in OPERATORS:
            if not cur:
                return whole
            out.append(cur)
            cur = []
        elif set(t) <= set(";&|"):
            return whole  # a lone `&` or another run of operator characters
        else:
            cur.append(t)
    if not cur:
        return whole
    return out + [cur]


def check(tokens: list[str]) -> dict[str, Any]:
    done = subprocess.run([CODEX, "execpolicy", "check", "--rules", RULES, "--"] + tokens,
                          capture_output=True, text=True,
                          env=dict(os.environ, CODEX_HOME=CODEX_HOME))
    if done.returncode != 0:
        raise Failure("codex execpolicy check failed: " + done.stderr.strip()[:300])
    seen: dict[str, Any] = json.loads(done.stdout)
    return seen


def reason_of(seen: dict[str, Any]) -> str | None:
    """The Gatehouse reason code for what Codex matched (see the module doc)."""
    prompts = [m["prefixRuleMatch"]["matchedPrefix"] for m in seen.get("matchedRules", [])
               if m.get("prefixRuleMatch", {}).get("decision") == "prompt"]
    if not seen.get("matchedRules"):
        return "not_read_list"
    for prefix in prompts:
        if prefix[0] == "rm" or prefix == ["find", "-delete"]:
            return "dangerous"
    return "escape_flag" if prompts else None


def decide(session: dict[str, Any], tool: str, line: str) -> Answer:
    if tool != "shell":
        raise Unsupported("Codex's rules judge command lines only: no %r tool" % tool)
    verdicts = [check(t) for t in commands(line)]
    for seen in verdicts:
        if seen.get("decision") == "forbidden":
            raise Unsupported("Codex forbade the line by a rule; the protocol refuses without "
                              "a card only on the no_asker route")
    for seen in verdicts:
        if seen.get("decision") != "allow":
            return {"decision": "ask", "route": "card", "reason": reason_of(seen)}
    return {"decision": "allow", "route": "auto_safe", "reason": "auto_safe"}


def handle(sessions: dict[str, dict[str, Any]], req: Request) -> Answer:
    op = req.get("op")
    if op == "hello":
        version = fence_adapter.tool_version([CODEX, "--version"]).replace("codex-cli ", "")
        return {"protocol": "1.0", "name": "codex execpolicy (Gatehouse read list)",
                "version": version, "capabilities": ["gate"],
                "environment": protocol.environment()}
    if op == "open":
        setup = req["setup"]
        protocol.check_setup(setup, (), "codex execpolicy")
        if setup.get("host", "posix") != "posix":
            raise Unsupported("host %r: Codex's rules have no Windows reading" % setup["host"])
        if setup.get("asker") == "none":
            raise Unsupported("asker none: Codex's `never` approval runs the command sandboxed, it does not deny")
        if setup.get("allow_list"):
            raise Unsupported("allow_list: Codex's rules have no literal allow-list")
        if setup.get("grants"):
            raise Unsupported("grants: `codex execpolicy check` keeps no saved grants")
        sessions[req["session"]] = {"asker": setup.get("asker", "terminal")}
        return {}
    session = sessions.get(req.get("session", ""))
    if session is None:
        raise Failure("no session %r" % req.get("session"))
    if op == "decide":
        return decide(session, req["tool"], req["input"])
    if op == "close":
        del sessions[req["session"]]
        return {}
    raise Unsupported("`codex execpolicy check` has no cards, grants or audit trail: no %r" % op)


def main() -> None:
    if not os.access(CODEX, os.X_OK):
        sys.exit("codex-execpolicy adapter: no codex at %s (run conformance/adapters/install.sh)" % CODEX)
    sessions: dict[str, dict[str, Any]] = {}
    protocol.serve(lambda req: handle(sessions, req))


if __name__ == "__main__":
    main()
