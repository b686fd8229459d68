#!/usr/bin/env python3
"""An example adapter for the Gatehouse conformance runner, in standard-library Python.

It stands for an agent written in Python whose approval gate is the reference CLI: every
`decide` goes to `gatehouse gate check ... -- LINE`, which prints the gate's decision as
JSON, and the adapter reports that decision as it is. What the CLI does not keep between
calls is the agent's own session state, held here in memory: the grant table, the card
waiting for an answer and the audit trail. The adapter judges nothing; the runner does.
It declares the `gate` capability only (spec/adapter-protocol.md).

    cargo build --release -p gatehouse
    cargo run --release -p gatehouse-conformance -- run \\
        --impl 'python3 conformance/examples/python_adapter.py'

The binary is $GATEHOUSE if set, else the one built in this repository (under
$CARGO_TARGET_DIR or target/, release before debug), else `gatehouse` on PATH.
"""

import json
import os
import shutil
import subprocess
import sys
import time

SETUP = {"workspace", "home", "host", "asker", "allow_list", "grants", "card_window_ms"}
OUTCOME = {"allow": "allowed", "deny": "denied", "ask": "pending"}  # audit, per decision


class Unsupported(Exception):
    """The agent has nothing to honour this request with."""


def find_gatehouse():
    """The binary's path (or None) and the one line that says what to do without one."""
    if os.environ.get("GATEHOUSE"):
        given = os.environ["GATEHOUSE"]
        return shutil.which(given), "python_adapter.py: GATEHOUSE=%s is not an executable" % given
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    target = os.path.join(repo, os.environ.get("CARGO_TARGET_DIR") or "target")
    built = [os.path.join(target, p, "gatehouse") for p in ("release", "debug")]
    found = [p for p in built if os.access(p, os.X_OK)] + [shutil.which("gatehouse")]
    return found[0], ("python_adapter.py: no gatehouse binary in %s/{release,debug} or on "
                      "PATH: run `cargo build --release -p gatehouse`, or set "
                      "GATEHOUSE=/path/to/gatehouse" % target)


def grant(kind, key, tool):
    """A grant as the wire spells it: `tool` only when it is not the shell."""
    return {"kind": kind, "key": key, **({"tool": tool} if tool != "shell" else {})}


def save(session, g):
    if g not in session["grants"]:  # saving a grant twice keeps one entry
        session["grants"].append(g)


def check(session, tool, line):
    """Asks the gate about one call. The CLI's --grant-exact is a grant of the tool being
    checked, so it gets the exact grants saved for that tool (no `tool`: the shell)."""
    s = session["setup"]
    cmd = [GATEHOUSE, "gate", "check", "--workspace", s["workspace"], "--tool", tool,
           "--host", s.get("host") or "posix", "--asker", s.get("asker") or "terminal"]
    if s.get("card_window_ms") is not None:
        cmd += ["--card-window-ms", str(s["card_window_ms"])]
    for allowed in s.get("allow_list") or []:
        cmd += ["--allow", allowed]
    for g in session["grants"]:
        if g["kind"] == "family":
            cmd += ["--grant-family", g["key"]]
        elif g.get("tool", "shell") == tool:
            cmd += ["--grant-exact", g["key"]]
    done = subprocess.run(cmd + ["--", line], capture_output=True, text=True)
    why = (done.stderr.strip().splitlines() or ["no message"])[0]
    if done.returncode == 2:  # a usage error: a tool, value or line the CLI cannot take
        raise Unsupported("gatehouse gate check: " + why)
    if done.returncode != 0:
        raise RuntimeError("gatehouse gate check failed: " + why)
    return json.loads(done.stdout)


def decide(session, tool, line):
    seen = check(session, tool, line)
    session["records"].append({"tool": tool, "input": line, "outcome": OUTCOME[seen["decision"]]})
    # A new call's card replaces the open one; an unanswered card stays `pending`.
    session["card"] = dict(seen, tool=tool, line=line) if seen.get("card") else None
    return {k: seen[k] for k in ("decision", "route", "reason", "offers", "card") if k in seen}


def answer(session, choice):
    card = session["card"]
    if card is None:
        raise RuntimeError("no card is waiting for an answer")
    offers, saved, outcome = card["offers"], None, {"once": "approved", "refuse": "refused"}.get(choice)
    if choice == "silence":
        time.sleep(card["card"]["window_ms"] / 1000.0)
        outcome = "expired"
    elif choice == "exact" and offers["exact"]:
        saved, outcome = grant("exact", card["line"], card["tool"]), "approved"
    elif choice == "family" and offers["family"]:
        saved, outcome = grant("family", offers["family"], "shell"), "approved"
    elif outcome is None:  # a key the card did not show: nothing happens, it stays open
        return {"outcome": "not_offered", "saved": None}
    if saved:
        save(session, saved)
    session["card"] = None
    session["records"][-1]["outcome"] = outcome  # the card is always the last call's
    return {"outcome": outcome, "saved": saved}


def revoke(session, target):
    """By 1-based number when the target is all ASCII digits, else by key."""
    grants = session["grants"]
    if target.isascii() and target.isdigit():
        n = int(target)
        gone = [grants[n - 1]] if 1 <= n <= len(grants) else []
    else:
        gone = [g for g in grants if g["key"] == target]
    session["grants"] = [g for g in grants if g not in gone]
    return {"revoked": gone}


def handle(sessions, req):
    op, name = req.get("op"), req.get("session")
    if op == "hello":
        u = os.uname()
        return {"protocol": "1.0", "name": "gatehouse (python adapter)", "version": "0.1.0",
                "capabilities": ["gate"],
                "environment": {"os": sys.platform.replace("darwin", "macos"), "arch": u.machine,
                                "kernel": u.release, "landlock_abi": None, "fence_backend": None}}
    if op == "open":
        unknown = sorted(set(req["setup"]) - SETUP)
        if unknown:
            raise Unsupported("unknown setup field(s): " + ", ".join(unknown))
        # Nothing carries over: the session starts from exactly this setup. `home` needs
        # nothing: the gate treats a leading `~` as outside the workspace, wherever it is.
        sessions[name] = {"setup": req["setup"], "grants": [], "records": [], "card": None}
        for g in req["setup"].get("grants") or []:
            save(sessions[name], grant(g["kind"], g["key"], g.get("tool", "shell")))
        return {}
    session = sessions.get(name)
    if session is None:
        raise RuntimeError("no open session %r" % name)
    if op == "decide":
        return decide(session, req["tool"], req["input"])
    if op == "answer":
        return answer(session, req["choice"])
    if op == "grants":
        return {"grants": session["grants"]}
    if op == "revoke":
        return revoke(session, req["target"])
    if op == "audit":
        return {"records": session["records"]}
    if op == "close":
        del sessions[name]
        return {}
    raise Unsupported("no op %r: this adapter speaks only the gate's steps" % op)


def main():
    sessions = {}
    for line in sys.stdin:
        rid = None
        try:
            req = json.loads(line)
            rid = req.get("id")
            if req.get("op") == "bye":
                return
            if GATEHOUSE is None:  # the runner shows how `hello` was answered, not stderr
                print(json.dumps({"id": rid, "ok": False, "error": {"kind": "error", "message": MISSING}}))
                sys.exit(MISSING)
            reply = dict({"id": rid, "ok": True}, **handle(sessions, req))
        except Unsupported as e:
            reply = {"id": rid, "ok": False, "error": {"kind": "unsupported", "message": str(e)}}
        except Exception as e:  # every other failure is the implementation's error
            reply = {"id": rid, "ok": False, "error": {"kind": "error", "message": repr(e)}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    GATEHOUSE, MISSING = find_gatehouse()
    main()
