"""The OpenAI Responses wire, streamed (Codex CLI's custom model provider, `wire_api = "responses"`).

`POST <base>/responses` (any path ending in `/responses`). Codex always asks for a stream
(`"stream": true`): the answer is server-sent events, `response.created`, then for a tool
call `response.output_item.added` and `response.output_item.done` with a `function_call`
item (`name`, `arguments` as a JSON string, `call_id`), or for text a `message` item with
its `output_text` delta, then `response.completed` with the usage Codex requires. A
request without `stream` gets the whole `response` object. Tool results are the `input`
items of type `function_call_output` (or `custom_tool_call_output`), whose `output` is a
string or a list of content parts. A request that offers no tools is a side call. `GET
<base>/models` lists one model. Errors are `{"error": {"message", "type", "code"}}`.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from conformance.adapters.agents.scripted_model import Body, Reply
from conformance.adapters.agents.wires.openai_common import OpenAIWire, parts_text

RESULT_TYPES = ("function_call_output", "custom_tool_call_output")


def _text_of(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return _text_of(output.get("content") or output.get("output") or "")
    return parts_text(output)


class OpenAIResponsesWire(OpenAIWire):
    name = "openai-responses"
    endpoint = "/responses"
    code_as_text = True

    def tool_results(self, body: Body) -> list[str]:
        items = body["input"]
        if isinstance(items, str):
            return []
        return [_text_of(i.get("output")) for i in items
                if isinstance(i, dict) and i.get("type") in RESULT_TYPES]

    def _response(self, body: Body, rid: str, output: list[dict[str, Any]],
                  status: str = "completed") -> dict[str, Any]:
        return {"id": rid, "object": "response", "created_at": 0, "status": status,
                "model": body.get("model", self.model), "output": output,
                "usage": {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0},
                          "total_tokens": 2}}

    def _answer(self, reply: Reply, body: Body, item: dict[str, Any]) -> None:
        rid = "resp_" + item["id"]
        if not body.get("stream"):
            reply.json(200, self._response(body, rid, [item]))
            return
        events: list[tuple[Optional[str], Any]] = [("response.created", {"type": "response.created",
                                         "response": self._response(body, rid, [], "in_progress")})]
        added = dict(item, status="in_progress")
        if item["type"] == "message":
            added["content"] = []
        else:
            added["arguments"] = ""
        events.append(("response.output_item.added", {"type": "response.output_item.added",
                                                      "output_index": 0, "item": added}))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(("response.output_text.delta", {"type": "response.output_text.delta",
                                                          "item_id": item["id"], "output_index": 0,
                                                          "content_index": 0, "delta": text}))
        else:
            events.append(("response.function_call_arguments.delta",
                           {"type": "response.function_call_arguments.delta", "item_id": item["id"],
                            "output_index": 0, "delta": item["arguments"]}))
        events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                     "output_index": 0, "item": item}))
        events.append(("response.completed", {"type": "response.completed",
                                               "response": self._response(body, rid, [item])}))
        reply.sse(events)

    def respond_tool_call(self, reply: Reply, body: Body, call_id: str, tool: str, args: Any) -> None:
        self._answer(reply, body, {"type": "function_call", "id": "fc_" + call_id, "status": "completed",
                                   "name": tool, "arguments": json.dumps(args), "call_id": call_id})

    def respond_text(self, reply: Reply, body: Body, text: str) -> None:
        self._answer(reply, body, {"type": "message", "id": "msg_%d" % (abs(hash(text)) % 10**8),
                                   "status": "completed", "role": "assistant",
                                   "content": [{"type": "output_text", "text": text,
                                                "annotations": []}]})
