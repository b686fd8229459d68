"""The adapter protocol (spec/adapter-protocol.md) as every Python implementation here
speaks it: the fence peers (`fence_adapter.py`), the agents (`agents/agent_adapter.py`),
the gate peer (`codex_execpolicy/`) and the fake implementations of conformance/tests/fakes.

- `serve(handle)`: the one loop. One JSON object a line in, one answer a line out, each
  carrying the request's `id`. `handle(request)` returns the answer's own fields (the loop
  adds `id` and `ok`), or None when it wrote its line itself (a fake that misbehaves on
  purpose). `bye` is answered and ends the loop. An `Unsupported` raised by `handle` is
  answered `unsupported` with its message (the runner skips the scenario with that reason,
  PROTO-SESSION-2); a `Failure` is answered `error` with its message as written; any other
  exception is answered `error` with its repr, and the loop goes on with the next line.
- `check_setup(setup, honoured, who)`: the `open` rule every implementation here applies:
  a setup field it does not honour is `unsupported`, named. The fields are the schema's
  (spec/protocol.schema.json, `$defs.setup`): `REQUIRED` (sent in every `open`) is read
  from it, and an adapter that names a field the schema does not have fails loudly rather
  than accepting a field that no longer exists.
- `guard_choices()`: the keys of the setup's `choices` that the guard's configuration
  carries (its `[exec]` table), read from the schema (`$defs.choices`, `x-guard`), so that
  a new choice of `gatehouse exec` needs no line here.
- `environment(...)`: `hello`'s environment of this host.

Standard library only: the adapters run where only `python3` is (a kernel-matrix guest).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Optional

Request = dict[str, Any]
Answer = dict[str, Any]
Handler = Callable[[Request], Optional[Answer]]

#: The specification's schema of the protocol, read for the setup's fields.
SCHEMA = Path(__file__).resolve().parents[2] / "spec" / "protocol.schema.json"


class Unsupported(Exception):
    """The implementation has nothing that expresses this setup field or step."""


class Failure(Exception):
    """The implementation failed; its message is a sentence for the report, sent as is."""


def error(rid: Any, kind: str, message: str) -> Answer:
    """An error answer (`kind`: `unsupported` or `error`)."""
    return {"id": rid, "ok": False, "error": {"kind": kind, "message": message}}


def _write(out: IO[str], answer: Answer) -> None:
    out.write(json.dumps(answer) + "\n")
    out.flush()


def serve(handle: Handler, stdin: IO[str] | None = None, stdout: IO[str] | None = None,
          on_end: Callable[[], None] | None = None) -> None:
    """Answers requests from `stdin` (default: the process's) until `bye` or its end;
    `on_end` runs last, however the loop ends (a session's clean-up)."""
    src = sys.stdin if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    try:
        for line in src:
            rid = None
            try:
                req = json.loads(line)
                if not isinstance(req, dict):
                    raise Failure("not a JSON object: %.80r" % line)
                rid = req.get("id")
                if req.get("op") == "bye":
                    try:
                        _write(out, {"id": rid, "ok": True})
                    except OSError:
                        pass  # the runner did not wait for the answer
                    return
                fields = handle(req)
                if fields is None:
                    continue
                answer = {"id": rid, "ok": True, **fields}
            except Unsupported as e:
                answer = error(rid, "unsupported", str(e))
            except Failure as e:
                answer = error(rid, "error", str(e))
            except Exception as e:  # every other failure is the implementation's error
                answer = error(rid, "error", repr(e))
            _write(out, answer)
    finally:
        if on_end is not None:
            on_end()


@lru_cache(maxsize=None)
def _schema_def(name: str) -> dict[str, Any]:
    try:
        with open(SCHEMA, encoding="utf-8") as f:
            found = json.load(f)["$defs"][name]
    except (OSError, ValueError, KeyError) as e:
        raise Failure("cannot read the %s's fields from %s: %s (a kernel-matrix guest "
                      "needs it copied: --guest-copy spec/protocol.schema.json)"
                      % (name, SCHEMA, e)) from e
    if not isinstance(found, dict):
        raise Failure("%s: `$defs.%s` is not an object" % (SCHEMA, name))
    return found


@lru_cache(maxsize=None)
def _setup_schema() -> tuple[frozenset[str], frozenset[str]]:
    setup = _schema_def("setup")
    return frozenset(setup["properties"]), frozenset(setup["required"])


@lru_cache(maxsize=None)
def guard_choices() -> tuple[str, ...]:
    """The keys of the setup's `choices` the guard's configuration carries (guard.toml's
    [exec] table, each under its name with `-` for `_`), in the schema's order."""
    props = _schema_def("choices")["properties"]
    return tuple(k for k, v in props.items() if v.get("x-guard") is True)


def setup_fields() -> frozenset[str]:
    """Every field of the setup the schema defines."""
    return _setup_schema()[0]


def required_fields() -> frozenset[str]:
    """The setup's fields sent in every `open` (the schema's `required`)."""
    return _setup_schema()[1]


def check_setup(setup: Request, honoured: Iterable[str], who: str) -> None:
    """Raises Unsupported naming each field of `setup` that is neither required nor in
    `honoured` (fields the implementation expresses, or reads and then judges value by
    value); raises Failure when `honoured` names a field the schema does not have."""
    honoured = frozenset(honoured)
    stale = sorted(honoured - setup_fields())
    if stale:
        raise Failure("%s names setup field(s) %s, which the protocol's schema does not have"
                      % (who, ", ".join(stale)))
    extra = sorted(set(setup) - honoured - required_fields())
    if extra:
        foreign = [k for k in extra if k not in setup_fields()]
        why = "not in the protocol's schema" if foreign else "%s has no counterpart" % who
        raise Unsupported("setup field(s) %s: %s" % (", ".join(extra), why))


def environment(fence_backend: str | None = None, landlock_abi: int | None = None) -> Answer:
    """`hello`'s `environment` of this host (Linux; no posture)."""
    u = os.uname()
    return {"os": "linux", "arch": u.machine, "kernel": u.release,
            "landlock_abi": landlock_abi, "fence_backend": fence_backend}


def cache_dir() -> str:
    """Where conformance/adapters/install.sh put the third-party tools and agents."""
    default = Path(__file__).resolve().parents[2] / "target" / "peers"
    return os.environ.get("GATEHOUSE_PEERS_CACHE", str(default))


__all__ = ["Answer", "Failure", "Handler", "Request", "SCHEMA", "Unsupported", "cache_dir",
           "check_setup", "environment", "error", "required_fields", "serve", "setup_fields"]
