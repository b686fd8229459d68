"""The Anthropic Messages wire (Claude Code): `POST /v1/messages`, streamed.

Claude Code always asks for a stream (`"stream": true`); a request without it gets the
same message as one JSON object. A tool call is streamed as message_start,
content_block_start (tool_use, empty input), one content_block_delta with the whole
input as `input_json_delta`, content_block_stop, message_delta (stop_reason tool_use),
message_stop; a text the same way with a `text_delta`. Tool results are the `tool_result`
blocks of the conversation's user messages (their `content` a string or text blocks).
A side call is a request that offers no tools (title and topic generation); `count_tokens`
is answered with a small count. Errors are `{"type": "error", "error": {"type", "message"}}`.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from conformance.adapters.agents.scripted_model import Body, Reply, Wire


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


class AnthropicWire(Wire):
    name = "anthropic-messages"

    def serves(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/") == "/v1/messages"

    def other(self, method: str, path: str) -> Optional[tuple[int, Any]]:
        if method == "POST" and path.rstrip("/") == "/v1/messages/count_tokens":
            return 200, {"input_tokens": 100}
        if method in ("GET", "HEAD") and path.rstrip("/") in ("", "/", "/v1"):
            return 200, {"ok": True}
        return None

    def is_side_call(self, path: str, body: Body) -> bool:
        return not body.get("tools")

    def tool_results(self, body: Body) -> list[str]:
        out: list[str] = []
        for m in body["messages"]:
            if m.get("role") != "user" or not isinstance(m.get("content"), list):
                continue
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    out.append(_text_of(b.get("content")))
        return out

    def _message(self, body: Body, block: Optional[dict[str, Any]], stop: Optional[str]) -> dict[str, Any]:
        return {"id": "msg_scripted", "type": "message", "role": "assistant",
                "model": body.get("model", "scripted"), "content": [block],
                "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1}}

    def _stream(self, reply: Reply, body: Body, block: dict[str, Any], delta: dict[str, Any],
                stop: str) -> None:
        start = self._message(body, None, None)
        start["content"] = []
        fill: dict[str, Any] = {"input": {}} if block["type"] == "tool_use" else {"text": ""}
        empty = dict(block, **fill)
        reply.sse([
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": empty}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 1}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    def respond_tool_call(self, reply: Reply, body: Body, call_id: str, tool: str, args: Any) -> None:
        block = {"type": "tool_use", "id": "toolu_" + call_id, "name": tool, "input": args}
        if body.get("stream"):
            self._stream(reply, body, {"type": "tool_use", "id": block["id"], "name": tool},
                         {"type": "input_json_delta", "partial_json": json.dumps(args)}, "tool_use")
        else:
            reply.json(200, self._message(body, block, "tool_use"))

    def respond_text(self, reply: Reply, body: Body, text: str) -> None:
        if body.get("stream"):
            self._stream(reply, body, {"type": "text"}, {"type": "text_delta", "text": text},
                         "end_turn")
        else:
            reply.json(200, self._message(body, {"type": "text", "text": text}, "end_turn"))

    def error(self, reply: Reply, status: int, message: str) -> None:
        kind = {400: "invalid_request_error", 404: "not_found_error",
                405: "invalid_request_error"}.get(status, "api_error")
        reply.json(status, {"type": "error", "error": {"type": kind, "message": message}})
