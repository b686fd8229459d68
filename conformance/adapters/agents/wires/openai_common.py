"""What the two OpenAI wires (chat completions, `openai_chat.py`, and Responses,
`openai_responses.py`) frame alike: the one scripted model `GET <base>/models` lists, a
`POST` served by the path's ending whatever base the adapter configured, a request that
offers no tools as a side call, a text joined from a list of content parts, and errors as
`{"error": {"message", "type", "code"}}` (the code a number on the chat wire, a string on
the Responses wire). Each wire keeps its own bodies and stream.
"""

from __future__ import annotations

from typing import Any, Optional

from conformance.adapters.agents.scripted_model import Body, Reply, Wire


def parts_text(parts: Any) -> str:
    """The text of a list of content parts (`[{"type": ..., "text": ...}]`); "" for
    anything else."""
    if isinstance(parts, list):
        return "".join(p.get("text", "") for p in parts if isinstance(p, dict))
    return ""


class OpenAIWire(Wire):
    """An OpenAI-compatible endpoint: subclasses name the path ending they serve
    (`endpoint`) and answer its bodies."""

    model = "scripted"
    endpoint = "/"
    code_as_text = False   # the error's `code`: str(status) where true, else the number

    def serves(self, method: str, path: str) -> bool:
        return method == "POST" and path.rstrip("/").endswith(self.endpoint)

    def other(self, method: str, path: str) -> Optional[tuple[int, Any]]:
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return 200, {"object": "list", "data": [{"id": self.model, "object": "model",
                                                     "owned_by": "gatehouse"}]}
        return None

    def is_side_call(self, path: str, body: Body) -> bool:
        return not body.get("tools")

    def error(self, reply: Reply, status: int, message: str) -> None:
        kind = "invalid_request_error" if status < 500 else "server_error"
        code: Any = str(status) if self.code_as_text else status
        reply.json(status, {"error": {"message": message, "type": kind, "code": code}})
