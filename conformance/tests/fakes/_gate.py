"""Shared plumbing of the fake implementations: the hello handshake and sessions, answered
through the adapters' one protocol loop (conformance/adapters/protocol.py). Each fake
supplies its own `decide` (and may override other ops)."""

from __future__ import annotations

import os
import sys
from typing import Any, Optional

from conformance.adapters import protocol
from conformance.adapters.confinement import bwrap_for, own_user_namespace
from conformance.adapters.protocol import Answer, Request, Unsupported

#: A fake's session: its setup, its grants and its audit records.
Session = dict[str, Any]


def held(argv: list[str], workspace: str, cwd: Optional[str] = None) -> list[str]:
    """`argv`, which a fake runs "unfenced" to show its flaw, inside the harness's own
    confinement: the host read-only, the scenario's directory (the workspace's parent,
    where the fixture puts every path a scenario names) writable, and a user namespace of
    its own, root there with that namespace's capabilities only. The command still does
    to the fixture all that a missing fence lets it (the runner's checks see it), still
    signals the processes of its user, and reads what the host lets it; but a line with
    an empty `$TMPDIR` no longer writes `/t` on the machine running the suite, and
    `mount -o remount,rw /`, the clock and the host's keyrings are out of its reach (CI
    runs the fakes as root, and had found `/planted` and `/t` written by them).
    `GATEHOUSE_FAKES_CONFINE=0` runs it bare (a host without bubblewrap); without
    bubblewrap and without that switch the fake fails rather than run it bare."""
    bwrap = bwrap_for("GATEHOUSE_FAKES_CONFINE", "hold the fakes' unfenced commands",
                      RuntimeError)
    if bwrap is None:
        return argv
    root = os.path.dirname(os.path.normpath(workspace))
    return ([bwrap, "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--bind", root, root]
            + own_user_namespace()
            + ["--unshare-ipc", "--unshare-uts", "--die-with-parent", "--chdir", cwd or workspace,
               "--"] + argv)


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
