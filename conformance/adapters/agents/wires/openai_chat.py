"""The OpenAI-compatible chat completions wire (opencode's `@ai-sdk/openai-compatible`).

`POST <base>/chat/completions` (the base is whatever the adapter configured, `/v1` by
convention, so any path ending in `/chat/completions` is served). A streamed request
(`"stream": true`) gets `chat.completion.chunk` events: the role, the tool call (id, name,
the whole arguments string) or the text, a last chunk with `finish_reason` and usage, then
`data: [DONE]`; otherwise one `chat.completion` object. Tool results are the messages with
`role: tool`. A side call offers no tools (opencode's title generation). `GET
<base>/models` lists one model. Errors are `{"error": {"message", "type", "code"}}`.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from conformance.adapters.agents.scripted_model import Body, Reply
from conformance.adapters.agents.wires.openai_common import OpenAIWire, parts_text


def _text_of(content: Any) -> str:
    return content if isinstance(content, str) else parts_text(content)


class OpenAIChatWire(OpenAIWire):
    name = "openai-chat-completions"
    endpoint = "/chat/completions"

    def tool_results(self, body: Body) -> list[str]:
        return [_text_of(m.get("content")) for m in body["messages"] if m.get("role") == "tool"]

    def _chunk(self, body: Body, delta: dict[str, Any], finish: Optional[str] = None) -> dict[str, Any]:
        c = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0,
             "model": body.get("model", self.model),
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if finish:
            c["usage"] = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        return c

    def _answer(self, reply: Reply, body: Body, message: dict[str, Any], finish: str) -> None:
        if body.get("stream"):
            delta = dict(message)
            if "tool_calls" in delta:
                delta["tool_calls"] = [dict(tc, index=i) for i, tc in enumerate(delta["tool_calls"])]
            reply.sse([(None, self._chunk(body, delta)), (None, self._chunk(body, {}, finish)),
                       (None, "[DONE]")])
        else:
            reply.json(200, {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
                             "model": body.get("model", self.model),
                             "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                             "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                       "total_tokens": 2}})

    def respond_tool_call(self, reply: Reply, body: Body, call_id: str, tool: str, args: Any) -> None:
        self._answer(reply, body, {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": tool, "arguments": json.dumps(args)}}]}, "tool_calls")

    def respond_text(self, reply: Reply, body: Body, text: str) -> None:
        self._answer(reply, body, {"role": "assistant", "content": text}, "stop")
