#!/usr/bin/env python3
"""An example adapter for the Gatehouse conformance runner, in Python (standard library).

It shows how thin an adapter can be: it reads the runner's JSON-lines requests on stdin,
puts every `decide` to the agent's real gate (here the reference CLI,
`gatehouse gate check ... -- LINE`, which prints the decision as JSON), and reports what
the gate said. It never judges anything; the runner does. Grants, answers to cards and the
audit trail live in memory, one table per session.

    gatehouse-conform run --impl 'python3 conformance/examples/python_adapter.py'

The gatehouse binary is taken from $GATEHOUSE, else `gatehouse` on PATH.
"""

import json
import os
import subprocess
import sys
import time

GATEHOUSE = os.environ.get("GATEHOUSE", "gatehouse")
DEFAULT_WINDOW_MS = 300000
RISK = {"shell": "exec", "execute_code": "code"}


class Unsupported(Exception):
    """The gate has nothing to honour this request with."""


def check(session, tool, line):
    """Asks the gate about one call, with the session's grants for that tool."""
    setup = session["setup"]
    cmd = [GATEHOUSE, "gate", "check",
           "--workspace", setup["workspace"],
           "--host", setup["host"],
           "--risk", RISK[tool],
           "--asker", "none" if setup["asker"] == "none" else "terminal"]
    for grant in session["grants"]:
        if grant.get("tool", tool) != tool:
            continue
        cmd += ["--grant-exact" if grant["kind"] == "exact" else "--grant-family", grant["key"]]
    cmd += ["--", line]
    done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, HOME=setup["home"]))
    if done.returncode != 0 and not done.stdout.strip():
        raise RuntimeError("gatehouse gate check failed: " + done.stderr.strip())
    return json.loads(done.stdout)


def open_session(sessions, name, setup):
    if setup.get("allow_list"):
        raise Unsupported("the gate CLI takes no allow-list")
    known = {"workspace", "home", "host", "asker", "allow_list", "grants", "card_window_ms"}
    unknown = sorted(set(setup) - known)
    if unknown:
        raise Unsupported("unknown setup field(s): " + ", ".join(unknown))
    sessions[name] = {"setup": setup, "grants": [dict(g) for g in setup.get("grants", [])],
                      "records": [], "card": None}
    return {}


def decide(session, tool, line):
    if tool not in RISK:
        raise Unsupported("no tool named %r" % tool)
    seen = check(session, tool, line)
    answer = {k: seen.get(k) for k in ("decision", "route", "reason", "offers")}
    record = {"tool": tool, "input": line, "outcome": None}
    session["records"].append(record)
    session["card"] = None
    if seen["decision"] == "ask":
        window = session["setup"].get("card_window_ms") or DEFAULT_WINDOW_MS
        answer["card"] = {"channel": session["setup"]["asker"], "window_ms": window}
        session["card"] = {"tool": tool, "line": line, "offers": seen.get("offers") or {},
                           "window_ms": window, "record": record}
    else:
        record["outcome"] = "allowed" if seen["decision"] == "allow" else "denied"
    return answer


def answer_card(session, choice):
    card, session["card"] = session["card"], None
    if card is None:
        return {"outcome": "not_offered", "saved": None}
    offers, saved, outcome = card["offers"], None, "approved"
    if choice == "refuse":
        outcome = "refused"
    elif choice == "silence":
        time.sleep(card["window_ms"] / 1000.0)
        outcome = "expired"
    elif choice == "exact":
        if offers.get("exact"):
            saved = {"kind": "exact", "key": card["line"], "tool": card["tool"]}
        else:
            outcome = "not_offered"
    elif choice == "family":
        if offers.get("family"):
            saved = {"kind": "family", "key": offers["family"], "tool": card["tool"]}
        else:
            outcome = "not_offered"
    if saved:
        session["grants"].append(saved)
    if outcome != "not_offered":
        card["record"]["outcome"] = outcome
    return {"outcome": outcome, "saved": saved}


def revoke(session, target):
    grants = session["grants"]
    if target.isdigit() and 1 <= int(target) <= len(grants):
        gone = [grants[int(target) - 1]]
    else:
        gone = [g for g in grants if g["key"] == target]
    session["grants"] = [g for g in grants if g not in gone]
    return {"revoked": gone}


def handle(sessions, req):
    op = req.get("op")
    if op == "hello":
        uname = os.uname()
        return {"protocol": "1.0", "name": "gatehouse (python adapter)", "version": "0.1.0",
                "capabilities": ["gate"],
                "environment": {"os": sys.platform.replace("darwin", "macos"), "arch": uname.machine,
                                "kernel": uname.release, "landlock_abi": None, "fence_backend": None}}
    if op == "open":
        return open_session(sessions, req["session"], req["setup"])
    session = sessions.get(req.get("session"))
    if session is None:
        raise RuntimeError("no session %r" % req.get("session"))
    if op == "decide":
        return decide(session, req["tool"], req["input"])
    if op == "answer":
        return answer_card(session, req["choice"])
    if op == "grants":
        return {"grants": session["grants"]}
    if op == "revoke":
        return revoke(session, req["target"])
    if op == "audit":
        return {"records": [dict(r, outcome=r["outcome"] or "expired") for r in session["records"]]}
    if op == "close":
        del sessions[req["session"]]
        return {}
    raise Unsupported("unknown op %r" % op)


def main():
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
