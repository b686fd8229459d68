"""Gemini's generateContent wire (Gemini CLI with `GOOGLE_GEMINI_BASE_URL` and an API key).

`POST <base>/v1beta/models/<model>:streamGenerateContent?alt=sse` (streamed: server-sent
events, each `data:` one `GenerateContentResponse`) or `...:generateContent` (one JSON
object). The answer is one candidate whose `content.parts` holds a `functionCall`
(`name`, `args`, `id`) or a `text`, with `finishReason: STOP` and `usageMetadata`. Tool
results are the `functionResponse` parts of the `contents`, their `response` an object
(`{"output": ...}` or `{"error": ...}`), read back as JSON text. A request that offers no
tools is a side call (Gemini CLI's next-speaker check, its router's classifier, a
summary). `:countTokens` answers a count; `GET .../models` lists one model. Errors are
Google's `{"error": {"code", "message", "status"}}`.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Optional

from conformance.adapters.agents.scripted_model import Body, Reply, Wire

STATUS = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 405: "INVALID_ARGUMENT",
          429: "RESOURCE_EXHAUSTED", 500: "INTERNAL"}


def _response_text(resp: Any) -> str:
    if isinstance(resp, dict):
        for key in ("output", "error", "llmContent", "result"):
            if isinstance(resp.get(key), str):
                return resp[key]
    return json.dumps(resp)


class GeminiWire(Wire):
    name = "gemini-generate-content"
    model = "gemini-2.5-flash"

    def serves(self, method: str, path: str) -> bool:
        return method == "POST" and (path.endswith(":streamGenerateContent")
                                     or path.endswith(":generateContent"))

    def other(self, method: str, path: str) -> Optional[tuple[int, Any]]:
        if method == "POST" and path.endswith(":countTokens"):
            return 200, {"totalTokens": 1}
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return 200, {"models": [{"name": "models/" + self.model,
                                     "supportedGenerationMethods": ["generateContent"]}]}
        return None

    def __init__(self) -> None:
        # The core hands `respond_*` the body, not the path; the path says streamed or
        # not. Each request is served on a thread of its own, which `is_side_call` (the
        # first wire method the core calls for a served request) marks with it.
        self._local = threading.local()

    @property
    def _path(self) -> str:
        return getattr(self._local, "path", ":streamGenerateContent")

    def is_side_call(self, path: str, body: Body) -> bool:
        self._local.path = path
        return not any(t.get("functionDeclarations") for t in body.get("tools") or []
                       if isinstance(t, dict))

    def tool_results(self, body: Body) -> list[str]:
        out: list[str] = []
        for content in body["contents"]:
            for part in content.get("parts") or []:
                if isinstance(part, dict) and "functionResponse" in part:
                    out.append(_response_text(part["functionResponse"].get("response")))
        return out

    def _answer(self, reply: Reply, path: str, parts: list[dict[str, Any]]) -> None:
        obj = {"candidates": [{"content": {"role": "model", "parts": parts},
                               "finishReason": "STOP", "index": 0}],
               "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                                 "totalTokenCount": 2},
               "modelVersion": self.model}
        if path.endswith(":streamGenerateContent"):
            reply.sse([(None, obj)])
        else:
            reply.json(200, obj)

    def respond_tool_call(self, reply: Reply, body: Body, call_id: str, tool: str, args: Any) -> None:
        self._answer(reply, self._path, [{"functionCall": {"name": tool, "args": args, "id": call_id}}])

    def respond_text(self, reply: Reply, body: Body, text: str) -> None:
        self._answer(reply, self._path, [{"text": text}])

    def error(self, reply: Reply, status: int, message: str) -> None:
        reply.json(status, {"error": {"code": status, "message": message,
                                      "status": STATUS.get(status, "UNKNOWN")}})
