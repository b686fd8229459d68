"""Shared plumbing of the fake implementations: the JSON-lines loop, the hello handshake
and sessions. Each fake supplies its own `decide` (and may override other ops)."""

import json
import sys


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class Fake:
    name = "fake"

    def __init__(self):
        self.sessions = {}

    def decide(self, session, tool, line):
        raise NotImplementedError

    def answer(self, session, choice):
        return {"outcome": "approved", "saved": None}

    def on_request(self, req):
        op = req.get("op")
        rid = req.get("id")
        if op == "hello":
            return {"id": rid, "ok": True, "protocol": "1.0", "name": self.name,
                    "version": "0.0.1", "capabilities": ["gate"],
                    "environment": {"os": sys.platform, "arch": "fake", "kernel": None,
                                    "landlock_abi": None, "fence_backend": None}}
        if op == "open":
            setup = req["setup"]
            self.sessions[req["session"]] = {"setup": setup, "grants": list(setup.get("grants", [])),
                                             "records": []}
            return {"id": rid, "ok": True}
        session = self.sessions.get(req.get("session"))
        if op == "decide":
            ans = self.decide(session, req["tool"], req["input"])
            session["records"].append({"tool": req["tool"], "input": req["input"],
                                       "outcome": "allowed" if ans["decision"] == "allow" else "denied"})
            return dict({"id": rid, "ok": True}, **ans)
        if op == "answer":
            return dict({"id": rid, "ok": True}, **self.answer(session, req["choice"]))
        if op == "grants":
            return {"id": rid, "ok": True, "grants": session["grants"]}
        if op == "revoke":
            return {"id": rid, "ok": True, "revoked": []}
        if op == "audit":
            return {"id": rid, "ok": True, "records": session["records"]}
        if op == "close":
            self.sessions.pop(req.get("session"), None)
            return {"id": rid, "ok": True}
        return {"id": rid, "ok": False, "error": {"kind": "unsupported", "message": "unknown op %r" % op}}

    def serve(self):
        for line in sys.stdin:
            try:
                req = json.loads(line)
            except ValueError:
                reply({"id": None, "ok": False, "error": {"kind": "error", "message": "bad json"}})
                continue
            if req.get("op") == "bye":
                return
            out = self.on_request(req)
            if out is not None:
                reply(out)


def offers(family=None):
    return {"exact": True, "exact_withheld": None, "family": family,
            "family_withheld": None, "text": None}
