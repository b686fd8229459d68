"""A scripted model on 127.0.0.1: the agents' model, with every answer written in advance.

An agent adapter (`agent_adapter.py` and each agent's `adapter.py`) drives a real agent
with no real model: the agent is pointed at this server, which answers each of its model
requests from a *script* the adapter sets for the step: a list of turns, each either a
tool call in the agent's own vocabulary (`("Bash", {"command": "ls"})`) or a final text
(`"done"`). Everything the agent then does with the scripted call (its rules, its modes,
its hooks, its sandbox, its prompt) is the agent's own.

What the core owns, for every wire:

- binding 127.0.0.1 on a port the kernel picks (`ScriptedModel.url`), served by a
  `ThreadingHTTPServer`, so an agent's parallel requests never wait on each other;
- choosing the turn: a request carrying N tool results (the wire counts them in the
  conversation) gets turn N of the script, the last turn once the script runs out; the
  choice is stateless, so an agent that retries a request gets the same answer again;
- side calls (title generation, a classifier, a quota probe, which the wire recognises)
  get the wire's canned answer, a short text with no tool call, and consume nothing;
- recording every request, one JSON line per request to the log file
  (`{"method", "path", "body", "turn", "side", "status"}`, `body` the parsed JSON or
  `null`), read back by the adapter with `requests()`;
- a clear error for a bad request, in the agent's own wire format (`Wire.error`): a body
  that is not JSON (400), a path no wire serves (404), a method other than GET/POST (405).

The Wire interface (one subclass per agent wire, in `wires/`; part B adds
`wires/openai_responses.py` and `wires/gemini.py`):

    class MyWire(Wire):
        name = "my-wire"
        def serves(self, method, path) -> bool
            # the model endpoint: a POST whose body is the model request
        def other(self, method, path) -> (status, dict) | None
            # any other endpoint the agent calls (a model list, a HEAD probe): the JSON
            # answer, or None when the wire does not serve it (the core answers 404)
        def is_side_call(self, path, body) -> bool
            # a request that is not the conversation's turn (no tools offered, ...)
        def tool_results(self, body) -> list[str]
            # the tool results the conversation carries, oldest first, as text; their
            # number picks the turn, and the adapter reads the last one as the output
            # the model was given
        def respond_tool_call(self, reply, body, call_id, tool, args)
        def respond_text(self, reply, body, text)
            # write one answer through `reply` (a Reply: `.json(status, obj)` or
            # `.sse(events)` with events as (event-name-or-None, obj-or-str) pairs);
            # `body["stream"]` (or the path) tells the wire which one the agent asked for
        def error(self, reply, status, message)
            # the wire's own error object, with this status

`call_id` is unique per request (`call_<turn>_<n>`), as the agents expect tool call ids to
be. Standard library only.
"""

from __future__ import annotations

import http.server
import itertools
import json
import threading
from collections.abc import Iterable
from typing import Any, Optional, Union

#: A model request's body, parsed (JSON).
Body = dict[str, Any]
#: One turn of a script: a final text, or a tool call (the agent's tool name, its arguments).
Turn = Union[str, tuple[str, Any]]


class Reply:
    """What a wire writes one answer through: a JSON body or a server-sent event stream."""

    def __init__(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        self._h = handler
        self.status: Optional[int] = None

    def json(self, status: int, obj: Any, headers: Optional[dict[str, str]] = None) -> None:
        data = json.dumps(obj).encode()
        self.status = status
        self._h.send_response(status)
        self._h.send_header("Content-Type", "application/json")
        self._h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self._h.send_header(k, v)
        self._h.end_headers()
        if self._h.command != "HEAD":
            self._h.wfile.write(data)

    def sse(self, events: Iterable[tuple[Optional[str], Any]], status: int = 200) -> None:
        """events: (name or None, obj or str); a str is sent as the data line verbatim."""
        self.status = status
        self._h.send_response(status)
        self._h.send_header("Content-Type", "text/event-stream")
        self._h.send_header("Cache-Control", "no-cache")
        self._h.send_header("Connection", "close")
        self._h.end_headers()
        self._h.close_connection = True
        out: list[str] = []
        for name, obj in events:
            if name:
                out.append("event: %s\n" % name)
            out.append("data: %s\n\n" % (obj if isinstance(obj, str) else json.dumps(obj)))
        self._h.wfile.write("".join(out).encode())
        self._h.wfile.flush()


class Wire:
    """One agent's model wire. See the module doc for what each method must do."""

    name = "?"
    side_text = "OK"

    def serves(self, method: str, path: str) -> bool:
        raise NotImplementedError

    def other(self, method: str, path: str) -> Optional[tuple[int, Any]]:
        return None

    def is_side_call(self, path: str, body: Body) -> bool:
        return False

    def tool_results(self, body: Body) -> list[str]:
        raise NotImplementedError

    def respond_tool_call(self, reply: Reply, body: Body, call_id: str, tool: str, args: Any) -> None:
        raise NotImplementedError

    def respond_text(self, reply: Reply, body: Body, text: str) -> None:
        raise NotImplementedError

    def error(self, reply: Reply, status: int, message: str) -> None:
        reply.json(status, {"error": {"message": message, "code": status}})


def plain_path(path: str) -> str:
    """The path without its query string."""
    return path.split("?", 1)[0]


class ScriptedModel:
    """The server. `script(turns)` before each agent run; `requests()` after it."""

    def __init__(self, wire: Wire, log_path: str) -> None:
        self.wire = wire
        self.log_path = log_path
        self._turns: list[Turn] = ["done"]
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        model = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                model._handle(self)

            do_POST = do_GET
            do_HEAD = do_GET

            def do_PUT(self) -> None:
                model._refuse_method(self)

            do_DELETE = do_PUT
            do_PATCH = do_PUT

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return "http://127.0.0.1:%d" % self.port

    def start(self) -> ScriptedModel:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, turns: Iterable[Turn]) -> None:
        """Sets the turns of the next run and starts a fresh log. A turn is a str (final
        text) or a pair (tool name, argument dict) in the agent's own vocabulary."""
        with self._lock:
            self._turns = list(turns) or ["done"]
            open(self.log_path, "w").close()

    def requests(self) -> list[dict[str, Any]]:
        """Every request recorded since the last `script`, oldest first."""
        try:
            with open(self.log_path) as f:
                return [json.loads(line) for line in f if line.strip()]
        except OSError:
            return []

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            with open(self.log_path, "a") as f:
                f.write(json.dumps(entry) + "\n")

    def _refuse_method(self, h: http.server.BaseHTTPRequestHandler) -> None:
        self._drain(h)
        reply = Reply(h)
        self.wire.error(reply, 405, "method %s is not served by this scripted model" % h.command)
        self._record({"method": h.command, "path": h.path, "body": None, "turn": None,
                      "side": False, "status": 405})

    @staticmethod
    def _drain(h: http.server.BaseHTTPRequestHandler) -> bytes:
        n = int(h.headers.get("Content-Length") or 0)
        return h.rfile.read(n) if n > 0 else b""

    def _handle(self, h: http.server.BaseHTTPRequestHandler) -> None:
        raw = self._drain(h)
        reply = Reply(h)
        entry: dict[str, Any] = {"method": h.command, "path": h.path, "body": None, "turn": None,
                 "side": False, "status": None}
        try:
            self._answer(h, raw, reply, entry)
        except (BrokenPipeError, ConnectionResetError):
            entry["status"] = "disconnected"
        finally:
            if entry["status"] is None:
                entry["status"] = reply.status
            self._record(entry)

    def _answer(self, h: http.server.BaseHTTPRequestHandler, raw: bytes, reply: Reply,
                entry: dict[str, Any]) -> None:
        path = plain_path(h.path)
        if not self.wire.serves(h.command, path):
            found = self.wire.other(h.command, path)
            if found is None:
                self.wire.error(reply, 404, "no endpoint %s %s on this scripted model (%s wire)"
                                % (h.command, path, self.wire.name))
            else:
                reply.json(*found)
            return
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, ValueError) as e:
            self.wire.error(reply, 400, "request body is not JSON: %s" % e)
            return
        if not isinstance(body, dict):
            self.wire.error(reply, 400, "request body is not a JSON object")
            return
        entry["body"] = body
        if self.wire.is_side_call(path, body):
            entry["side"] = True
            self.wire.respond_text(reply, body, self.wire.side_text)
            return
        try:
            n = len(self.wire.tool_results(body))
        except (KeyError, TypeError, AttributeError) as e:
            self.wire.error(reply, 400, "request does not have the %s shape: %r" % (self.wire.name, e))
            return
        with self._lock:
            turns = self._turns
        turn = turns[min(n, len(turns) - 1)]
        entry["turn"] = n
        if isinstance(turn, str):
            self.wire.respond_text(reply, body, turn)
        else:
            tool, args = turn
            self.wire.respond_tool_call(reply, body, "call_%d_%d" % (n, next(self._ids)), tool, args)
