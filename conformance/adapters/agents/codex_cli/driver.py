#!/usr/bin/env python3
"""One headless turn of `codex app-server`, for the Codex CLI adapter: the person's side of
Codex's JSON-RPC protocol on stdio.

    driver.py CODEX CWD APPROVAL SANDBOX ANSWER        one turn, "do the task"
    driver.py CODEX CWD --list-hooks                   the hooks Codex found, with their trust

It starts `CODEX app-server`, initializes, starts an ephemeral thread in CWD with the
approval policy and sandbox mode given, starts one turn, and answers every approval Codex
requests (`item/commandExecution/requestApproval`, `item/fileChange/requestApproval`, and
the legacy `execCommandApproval`/`applyPatchApproval`) with ANSWER (`accept` or
`decline`), as a person at Codex's prompt would. It prints every message Codex sent, one
JSON object per line, with each answer it gave as `{"answered": id, "decision": ...}`,
and stops at `turn/completed` (or when Codex exits). The adapter reads what happened from
these lines; the driver decides nothing. Standard library only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

APPROVALS = {"item/commandExecution/requestApproval": "v2", "item/fileChange/requestApproval": "v2",
             "execCommandApproval": "v1", "applyPatchApproval": "v1"}
V1 = {"accept": "approved", "decline": "denied"}


def main() -> int:
    codex, cwd = sys.argv[1], sys.argv[2]
    p = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         cwd=cwd, text=True)
    assert p.stdin is not None and p.stdout is not None
    stdin, stdout = p.stdin, p.stdout
    ids = iter(range(1, 1000))

    def send(obj: dict[str, Any]) -> None:
        stdin.write(json.dumps(dict(obj, jsonrpc="2.0")) + "\n")
        stdin.flush()

    def request(method: str, params: dict[str, Any]) -> int:
        rid = next(ids)
        send({"id": rid, "method": method, "params": params})
        return rid

    def show(obj: Any) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    def until(rid: int) -> Any:
        for line in stdout:
            m = json.loads(line)
            show(m)
            if m.get("id") == rid and "method" not in m:
                if "error" in m:
                    raise SystemExit("codex app-server refused request %d: %s" % (rid, m["error"]))
                return m["result"]
        raise SystemExit("codex app-server exited before answering request %d" % rid)

    until(request("initialize", {"clientInfo": {"name": "gatehouse-conformance", "version": "0"}}))
    send({"method": "initialized"})
    if sys.argv[3] == "--list-hooks":
        until(request("hooks/list", {"cwds": [cwd]}))
        return finish(p)
    approval, sandbox, answer = sys.argv[3], sys.argv[4], sys.argv[5]
    approval = json.loads(approval) if approval.startswith("{") else approval
    thread = until(request("thread/start", {"cwd": cwd, "approvalPolicy": approval,
                                            "sandbox": sandbox, "ephemeral": True}))
    request("turn/start", {"threadId": thread["thread"]["id"],
                           "input": [{"type": "text", "text": "Do the task."}]})
    for line in stdout:
        m = json.loads(line)
        show(m)
        method = m.get("method")
        if method in APPROVALS and "id" in m:
            decision = answer if APPROVALS[method] == "v2" else V1[answer]
            send({"id": m["id"], "result": {"decision": decision}})
            show({"answered": m["id"], "method": method, "decision": decision})
        elif "id" in m and method:
            # A request the person has no answer for (user input, elicitation): refuse it.
            send({"id": m["id"], "error": {"code": -32601, "message": "not answered headless"}})
            show({"answered": m["id"], "method": method, "decision": None})
        elif method == "turn/completed":
            break
    return finish(p)


def finish(p: subprocess.Popen[str]) -> int:
    try:
        if p.stdin is not None:
            p.stdin.close()
    except BrokenPipeError:
        pass
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
