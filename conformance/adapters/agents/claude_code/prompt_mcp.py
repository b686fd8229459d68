"""The person at Claude Code's prompt, headless: a stdio MCP server with one tool, `prompt`,
named by `--permission-prompt-tool mcp__gatehouse__prompt`.

Claude Code calls it whenever it would ask the person: with `{"tool_name", "input",
"tool_use_id"}`. It appends that request as one JSON line to the file named by its first
argument (so the adapter knows the agent asked, and about what), and answers as the second
argument says: `yes` gives `{"behavior": "allow", "updatedInput": input}`, `no` gives
`{"behavior": "deny", "message": ...}`. MCP over stdio is JSON-RPC 2.0, one message a line.
Standard library only.
"""

from __future__ import annotations

import json
import sys
from typing import Any

LOG, ANSWER = sys.argv[1], sys.argv[2]


def reply(mid: Any, result: Any) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue  # a notification
    if method == "initialize":
        reply(mid, {"protocolVersion": msg.get("params", {}).get("protocolVersion", "2024-11-05"),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "gatehouse", "version": "1"}})
    elif method == "tools/list":
        reply(mid, {"tools": [{"name": "prompt", "description": "Asks the person.",
                               "inputSchema": {"type": "object", "properties": {
                                   "tool_name": {"type": "string"}, "input": {"type": "object"},
                                   "tool_use_id": {"type": "string"}}}}]})
    elif method == "tools/call":
        args = msg.get("params", {}).get("arguments", {})
        with open(LOG, "a") as f:
            f.write(json.dumps(args) + "\n")
        if ANSWER == "yes":
            out = {"behavior": "allow", "updatedInput": args.get("input", {})}
        else:
            out = {"behavior": "deny", "message": "The person refused this call."}
        reply(mid, {"content": [{"type": "text", "text": json.dumps(out)}]})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {
            "code": -32601, "message": "no method %s" % method}}) + "\n")
        sys.stdout.flush()
