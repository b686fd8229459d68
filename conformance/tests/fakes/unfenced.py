"""A fake that declares `fence` and runs every `run` step UNFENCED: the command goes to
`sh -c` in the workspace with the fake's own environment. It says so honestly (posture
`none`, held_by `none`); the suite must fail it on what the runner checks itself."""

from __future__ import annotations

import subprocess
from typing import Any
import pathlib
from typing import Optional
import sys

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[3])

from conformance.adapters.protocol import Answer, Request  # noqa: E402
from conformance.tests.fakes._gate import Fake, Session, held  # noqa: E402

POSTURE_NONE = {"state": "none", "backend": None, "layers": [], "landlock_abi": None,
                "not_covered": ["write"], "degraded": False, "reason": "fake: no fence",
                "env": "full", "session_log": "unprotected"}


class Unfenced(Fake):
    name = "unfenced"
    capabilities = ["gate", "fence"]
    posture: dict[str, Any] = POSTURE_NONE

    def decide(self, session: Session, tool: str, line: str) -> Answer:
        return {"decision": "allow", "route": "auto_safe", "reason": "read_only", "offers": None}

    def report(self, proc: subprocess.CompletedProcess[str]) -> Answer:
        """What the fake says about a command it ran: the truth."""
        return {"exit": proc.returncode, "signal": None, "stdout": proc.stdout,
                "stderr": proc.stderr, "held_by": "none", "refused": None,
                "posture": self.posture}

    def run(self, session: Session, req: Request) -> Answer:
        setup = session["setup"]
        cwd = req.get("cwd") or setup["workspace"]
        proc = subprocess.run(held(["sh", "-c", req["input"]], setup["workspace"], cwd),
                              cwd=cwd, capture_output=True, text=True, timeout=20)
        return self.report(proc)

    def handle(self, req: Request) -> Optional[Answer]:
        if req.get("op") == "hello":
            out = super().handle(req)
            assert out is not None
            out["capabilities"] = self.capabilities
            out["environment"]["posture"] = self.posture
            out["environment"]["landlock_abi"] = self.posture["landlock_abi"]
            out["environment"]["fence_backend"] = self.posture["backend"]
            return out
        if req.get("op") == "run":
            return self.run(self.sessions[req["session"]], req)
        if req.get("op") == "posture":
            return {"posture": self.posture}
        return super().handle(req)


if __name__ == "__main__":
    Unfenced().serve()
