"""Shared plumbing of the fake implementations: the hello handshake and sessions, answered
through the adapters' one protocol loop (conformance/adapters/protocol.py). Each fake
supplies its own `decide` (and may override other ops)."""

from __future__ import annotations

import sys
from typing import Any, Optional

from conformance.adapters import protocol
from conformance.adapters.protocol import Answer, Request, Unsupported

#: A fake's session: its setup, its grants and its audit records.
Session = dict[str, Any]


class Fake:
    name = "fake"

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}

    def decide(self, session: Session, tool: str, line: str) -> Answer:
        raise NotImplementedError

    def answer(self, session: Session, choice: str) -> Answer:
        return {"outcome": "approved", "saved": None}

    def handle(self, req: Request) -> Optional[Answer]:
        """The answer's fields (the loop adds `id` and `ok`); None: the fake wrote its own."""
        op = req.get("op")
        if op == "hello":
            return {"protocol": "1.0", "name": self.name, "version": "0.0.1",
                    "capabilities": ["gate"],
                    "environment": {"os": sys.platform, "arch": "fake", "kernel": None,
                                    "landlock_abi": None, "fence_backend": None}}
        if op == "open":
            setup = req["setup"]
            self.sessions[req["session"]] = {"setup": setup, "grants": list(setup.get("grants", [])),
                                             "records": []}
            return {}
        session = self.sessions.get(req.get("session", ""))
        if op == "close":
            self.sessions.pop(req.get("session", ""), None)
            return {}
        if session is None:
            raise Unsupported("unknown op %r" % op)
        if op == "decide":
            ans = self.decide(session, req["tool"], req["input"])
            session["records"].append({"tool": req["tool"], "input": req["input"],
                                       "outcome": "allowed" if ans["decision"] == "allow" else "denied"})
            return ans
        if op == "answer":
            return self.answer(session, req["choice"])
        if op == "grants":
            return {"grants": session["grants"]}
        if op == "revoke":
            return {"revoked": []}
        if op == "audit":
            return {"records": session["records"]}
        raise Unsupported("unknown op %r" % op)

    def serve(self) -> None:
        protocol.serve(self.handle)


def offers(family: Optional[str] = None) -> Answer:
    return {"exact": True, "exact_withheld": None, "family": family,
            "family_withheld": None, "text": None}
