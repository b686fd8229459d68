#!/usr/bin/env python3
"""One headless turn of Qwen Code on its stream-json protocol, for the Qwen Code adapter:
the person's side of the SDK channel (`--input-format stream-json`).

    driver.py ANSWER -- QWEN ARGS...

It starts `QWEN ARGS... --input-format stream-json --output-format stream-json`, sends the
`initialize` control request and one user message ("Do the task."), and answers every
`can_use_tool` control request Qwen sends (a call its approval mode, rules or hooks would
ask a person about) with ANSWER (`yes`: `{"behavior": "allow"}`; `no`: `{"behavior":
"deny"}`), as a person at Qwen's prompt would. It prints every message Qwen sent, one JSON
object per line, with each answer it gave as `{"answered": request_id, "behavior": ...}`,
and closes Qwen's input at the turn's `result` (or stops when Qwen exits). The adapter
reads what happened from these lines; the driver decides nothing. Standard library only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--" or sys.argv[1] not in ("yes", "no"):
        sys.stderr.write("usage: driver.py yes|no -- QWEN ARGS...\n")
        return 2
    answer = sys.argv[1]
    argv = sys.argv[3:] + ["--input-format", "stream-json", "--output-format", "stream-json"]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdin is not None and p.stdout is not None
    stdin, stdout = p.stdin, p.stdout

    def send(obj: dict[str, Any]) -> None:
        try:
            stdin.write(json.dumps(obj) + "\n")
            stdin.flush()
        except BrokenPipeError:
            pass

    def show(obj: Any) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    send({"type": "control_request", "request_id": "init",
          "request": {"subtype": "initialize", "hooks": None}})
    send({"type": "user", "session_id": "", "parent_tool_use_id": None,
          "message": {"role": "user", "content": "Do the task."}})
    for line in stdout:
        line = line.strip()
        if not line:
            continue
        try:
            m = json.loads(line)
        except ValueError:
            show({"unreadable": line})
            continue
        show(m)
        if m.get("type") == "control_request":
            req = m.get("request") or {}
            rid = m.get("request_id")
            if req.get("subtype") == "can_use_tool":
                behavior = "allow" if answer == "yes" else "deny"
                body: dict[str, Any] = {"behavior": behavior}
                if behavior == "allow":
                    body["updatedInput"] = req.get("input")
                else:
                    body["message"] = "The person declined."
                send({"type": "control_response",
                      "response": {"subtype": "success", "request_id": rid, "response": body}})
                show({"answered": rid, "behavior": behavior})
            else:
                send({"type": "control_response",
                      "response": {"subtype": "error", "request_id": rid,
                                   "error": "not offered by the driver"}})
        elif m.get("type") == "result":
            try:
                stdin.close()
            except BrokenPipeError:
                pass
    return p.wait()


if __name__ == "__main__":
    sys.exit(main())
