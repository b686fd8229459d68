#!/usr/bin/env python3
"""A worked adapter for a gate that is not Gatehouse: docs/implementing.md walks through it.

`ToyGate` stands for your agent's own approval gate: it allows a few read-only commands
written plainly, denies `rm -rf`, and asks for everything else. It knows nothing of this
suite. The adapter below it (`Adapter`) is all that an implementer writes: it opens a
session per `open`, puts each `decide` to the gate, maps the gate's own answer onto the
protocol's words, and reports only what the gate did. It never looks at what the suite
expects (nothing of that crosses the wire).

Run it:

    cargo run --release -p gatehouse-conformance -- run \\
        --impl 'python3 conformance/examples/independent_gate.py' --filter gate/

The gate has real holes (it allows `cat` of any path, so `cat ~/.ssh/id_ed25519` runs
without asking) and real strictness (it denies `rm -rf` where the spec asks); the report
shows each for what it is. Standard library only.
"""

import json
import shlex
import sys

# ---------------------------------------------------------------------------------------
# The agent's own gate (yours would be in your agent's code base).


class ToyGate:
    READ_ONLY = {"ls", "cat", "grep", "head", "tail", "wc", "pwd", "echo"}
    METACHARACTERS = set(";&|<>`$()\n")

    def __init__(self, allow_list):
        self.allow_list = set(allow_list)
        self.approved = set()  # lines the person approved for good

    def verdict(self, line):
        """('allow' | 'ask' | 'deny', why) in the gate's own words."""
        if line in self.allow_list or line in self.approved:
            return "allow", "listed"
        try:
            words = shlex.split(line)
        except ValueError:
            return "ask", "unparsable"
        if words[:1] == ["rm"] and any(w.startswith("-") and "r" in w for w in words[1:]):
            return "deny", "destructive"
        if any(c in self.METACHARACTERS for c in line):
            return "ask", "shell syntax"
        if words and words[0] in self.READ_ONLY:
            return "allow", "read-only"
        return "ask", "not known to be safe"


# ---------------------------------------------------------------------------------------
# The adapter: the protocol on one side, the gate on the other. It decides nothing.

# The gate's reasons mapped onto the spec's reason codes (spec/approval-gate.md, *Reason
# codes*). Where nothing matches, the adapter says the nearest true thing; the report
# counts a different reason as an exactness difference, never as a safety failure.
ROUTES = {"listed": "allow_list", "read-only": "auto_safe"}
REASONS = {
    "listed": "allow_list",
    "read-only": "auto_safe",
    "destructive": "dangerous",
    "shell syntax": "metacharacter",
    "unparsable": "unreadable",
    "not known to be safe": "not_read_list",
}
NO_OFFERS = {"exact": False, "exact_withheld": None, "family": None,
             "family_withheld": None, "text": None}
WINDOW_MS = 300000


class Unsupported(Exception):
    """The agent has nothing to honour this request with: the scenario is skipped."""


class Adapter:
    def __init__(self):
        self.sessions = {}

    def hello(self, req):
        # A gate-only implementation declares `gate` alone: every scenario that needs
        # paths, trust, fence, permissions or hooks is skipped with that reason.
        return {"protocol": "1.5", "name": "toy-gate", "version": "0.1.0",
                "capabilities": ["gate"],
                "environment": {"os": sys.platform, "arch": None, "kernel": None,
                                "landlock_abi": None, "fence_backend": None}}

    def open(self, req):
        setup = req["setup"]
        if setup.get("host", "posix") != "posix":
            raise Unsupported("the toy gate knows POSIX shells only")
        if setup.get("grants"):
            raise Unsupported("the toy gate keeps no standing grants")
        self.sessions[req["session"]] = {
            "gate": ToyGate(setup.get("allow_list") or []),
            "asker": setup.get("asker", "terminal"),
            "card": None,   # the line of the card waiting for an answer
            "records": [],
        }
        return {}

    def decide(self, req):
        s = self.sessions[req["session"]]
        if req["tool"] != "shell":
            raise Unsupported("the toy gate has no execute_code tool")
        decision, why = s["gate"].verdict(req["input"])
        answer = {"decision": decision, "route": ROUTES.get(why, "card"),
                  "reason": REASONS[why], "offers": dict(NO_OFFERS)}
        if decision == "ask" and s["asker"] == "none":
            # Nobody can be asked: the gate refuses instead of hanging.
            answer.update(decision="deny", route="no_asker")
        if answer["decision"] == "ask":
            answer["offers"]["exact"] = True
            answer["card"] = {"channel": s["asker"], "window_ms": WINDOW_MS}
            s["card"] = req["input"]
        else:
            answer["route"] = "no_asker" if decision == "deny" else answer["route"]
            s["card"] = None
        outcome = {"allow": "allowed", "ask": "pending", "deny": "denied"}
        s["records"].append({"tool": "shell", "input": req["input"],
                             "outcome": outcome[answer["decision"]]})
        return answer

    def answer(self, req):
        s = self.sessions[req["session"]]
        if s["card"] is None:
            # No card is open (this gate allowed or denied the last call): the key the
            # person pressed was not offered, so nothing is approved and nothing saved.
            return {"outcome": "not_offered", "saved": None}
        choice, line = req["choice"], s["card"]
        if choice == "family":
            return {"outcome": "not_offered", "saved": None}  # no families here
        if choice == "silence":
            raise Unsupported("the toy gate's cards never expire")
        outcome = "refused" if choice == "refuse" else "approved"
        saved = None
        if choice == "exact":
            s["gate"].approved.add(line)
            saved = {"kind": "exact", "key": line}
        s["card"] = None
        s["records"][-1]["outcome"] = outcome
        return {"outcome": outcome, "saved": saved}

    def grants(self, req):
        gate = self.sessions[req["session"]]["gate"]
        return {"grants": [{"kind": "exact", "key": k} for k in sorted(gate.approved)]}

    def audit(self, req):
        return {"records": self.sessions[req["session"]]["records"]}

    def close(self, req):
        self.sessions.pop(req["session"], None)
        return {}


def main():
    adapter = Adapter()
    for line in sys.stdin:
        rid = None
        try:
            req = json.loads(line)
            rid = req.get("id")
            op = req.get("op")
            if op == "bye":
                return
            handler = getattr(adapter, op, None) if op and not op.startswith("_") else None
            if handler is None:
                raise Unsupported("no op %r: a gate-only adapter" % op)
            reply = dict({"id": rid, "ok": True}, **handler(req))
        except Unsupported as e:
            reply = {"id": rid, "ok": False, "error": {"kind": "unsupported", "message": str(e)}}
        except Exception as e:  # anything else is this adapter's own failure
            reply = {"id": rid, "ok": False, "error": {"kind": "error", "message": repr(e)}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
