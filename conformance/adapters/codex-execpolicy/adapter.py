#!/usr/bin/env python3
"""Codex's command rules (`codex execpolicy check`, npm @openai/codex) as a Gatehouse
GATE adapter, decision tier only.

    gatehouse-conform run --filter gate/ --impl 'python3 conformance/adapters/codex-execpolicy/adapter.py'

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

import json
import os
import shlex
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the adapters
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fence_adapter  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = os.path.join(HERE, "gatehouse-read-list.rules")
CODEX = os.environ.get("CODEX") or os.path.join(
    fence_adapter.cache_dir(), "npm", "node_modules", ".bin", "codex")
CODEX_HOME = os.path.join(fence_adapter.cache_dir(), "codex-home")
OPERATORS = {"&&", "||", ";", "|"}
UNSPLITTABLE = set("$`<>(){}\n\r")
Unsupported = fence_adapter.Unsupported


def commands(line):
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
    out, cur = [], []
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


def check(tokens):
    done = subprocess.run([CODEX, "execpolicy", "check", "--rules", RULES, "--"] + tokens,
                          capture_output=True, text=True,
                          env=dict(os.environ, CODEX_HOME=CODEX_HOME))
    if done.returncode != 0:
        raise RuntimeError("codex execpolicy check failed: " + done.stderr.strip()[:300])
    return json.loads(done.stdout)


def reason_of(seen):
    """The Gatehouse reason code for what Codex matched (see the module doc)."""
    prompts = [m["prefixRuleMatch"]["matchedPrefix"] for m in seen.get("matchedRules", [])
               if m.get("prefixRuleMatch", {}).get("decision") == "prompt"]
    if not seen.get("matchedRules"):
        return "not_read_list"
    for prefix in prompts:
        if prefix[0] == "rm" or prefix == ["find", "-delete"]:
            return "dangerous"
    return "escape_flag" if prompts else None


def decide(session, tool, line):
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


def handle(sessions, req):
    op = req.get("op")
    if op == "hello":
        u = os.uname()
        version = fence_adapter.tool_version([CODEX, "--version"]).replace("codex-cli ", "")
        return {"protocol": "1.0", "name": "codex execpolicy (Gatehouse read list)",
                "version": version, "capabilities": ["gate"],
                "environment": {"os": "linux", "arch": u.machine, "kernel": u.release,
                                "landlock_abi": None, "fence_backend": None}}
    if op == "open":
        setup = req["setup"]
        known = {"workspace", "home", "host", "asker", "allow_list", "grants", "card_window_ms"}
        unknown = sorted(set(setup) - known)
        if unknown:
            raise Unsupported("unknown setup field(s): " + ", ".join(unknown))
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
    session = sessions.get(req.get("session"))
    if session is None:
        raise RuntimeError("no session %r" % req.get("session"))
    if op == "decide":
        return decide(session, req["tool"], req["input"])
    if op == "close":
        del sessions[req["session"]]
        return {}
    raise Unsupported("`codex execpolicy check` has no cards, grants or audit trail: no %r" % op)


def main():
    if not os.access(CODEX, os.X_OK):
        sys.exit("codex-execpolicy adapter: no codex at %s (run conformance/adapters/install.sh)" % CODEX)
    sessions = {}
    for line in sys.stdin:
        rid = None
        try:
            req = json.loads(line)
            rid = req.get("id")
            if req.get("op") == "bye":
                return
            answer = dict({"id": rid, "ok": True}, **handle(sessions, req))
        except Unsupported as e:
            answer = {"id": rid, "ok": False, "error": {"kind": "unsupported", "message": str(e)}}
        except Exception as e:  # every other failure is the implementation's error
            answer = {"id": rid, "ok": False, "error": {"kind": "error", "message": repr(e)}}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
