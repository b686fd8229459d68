#!/usr/bin/env python3
"""A naive `paths` implementation, the way peers confine file tools: `os.path.realpath`
and a string-prefix check, following every link, opening with plain `open()`.

It exists to be caught. CI runs the paths suite against it and requires it to fail the
look-alike prefix (`proj` vs `proj_evil`) and the link-out scenarios; a FIFO hangs it,
which the runner reports as a timeout and survives. Standard library only. Every path it
touches lies inside the runner-made fixture, so it is safe to run.

With `--honest-resolver` it answers a session that names a `resolver` `unsupported`, as
the protocol asks of an implementation without one (PROTO-SETUP-1): the runner then
judges it on its own resolver rather than skipping what it shows (PROTO-OBSERVE-6).
"""

from __future__ import annotations
import sys, json, os
from typing import Any, Optional
S: dict[str, dict[str, Any]] = {}
def ok(i: Any, **kw: Any) -> None: d = {"id": i, "ok": True}; d.update(kw); print(json.dumps(d), flush=True)
def resolve(s: str, p: str) -> tuple[str, Optional[str]]:
    ws = S[s]["ws"]; roots = [ws] + S[s]["roots"]
    full = p if p.startswith("/") else os.path.join(ws, p)
    real = os.path.realpath(full)
    if not any(real.startswith(r) for r in roots): return "", "escape"
    return real, None
for line in sys.stdin:
    r = json.loads(line); i = r["id"]; op = r["op"]
    if op == "hello": ok(i, protocol="1.1", name="naive", version="0", capabilities=["gate","paths"], environment={"os":"linux","arch":"x86_64","kernel":"","landlock_abi":None,"fence_backend":None})
    elif op == "open" and "--honest-resolver" in sys.argv and r["setup"].get("resolver") is not None:
        print(json.dumps({"id": i, "ok": False, "error": {"kind": "unsupported", "message": "setup field `resolver`: this implementation has one resolver of its own"}}), flush=True)
    elif op == "open":
        st = r["setup"]; S[r["session"]] = {"ws": st["workspace"], "roots": st.get("roots") or []}; ok(i)
    elif op in ("close",): ok(i)
    elif op == "bye": ok(i); break
    else:
        s = r["session"]; p = r.get("path", "")
        try:
            real, err = resolve(s, p)
            if err:
                ok(i, result=err, content=None, prompted=False, preview=None, size=None, effect=None, entries=[], matches=[], withheld=[]); continue
            if op == "read":
                b = open(real, "rb").read(); ok(i, result="read", content=b.decode("utf-8","replace"), prompted=False, preview=None, size=len(b))
            elif op == "write":
                os.makedirs(os.path.dirname(real), exist_ok=True); open(real, "w").write(r["content"]); ok(i, result="written", prompted=False, effect=None)
            elif op == "edit":
                t = open(real).read(); n = t.count(r["old"])
                if n == 0: ok(i, result="no_match", prompted=False, effect=None)
                elif n > 1: ok(i, result="ambiguous", prompted=False, effect=None)
                else: open(real, "w").write(t.replace(r["old"], r["new"])); ok(i, result="written", prompted=False, effect=None)
            elif op == "list":
                es = []
                for e in os.scandir(real):
                    k = "symlink" if e.is_symlink() else "dir" if e.is_dir() else "file" if e.is_file() else "other"
                    es.append({"name": e.name, "kind": k})
                ok(i, result="listed", entries=es)
            elif op == "search":
                ms = []
                for d, _, fs in os.walk(real, followlinks=True):
                    for f in fs:
                        fp = os.path.join(d, f)
                        try:
                            for n, l in enumerate(open(fp, errors="replace"), 1):
                                if r["pattern"] in l: ms.append({"file": os.path.relpath(fp, real), "line": n, "text": l})
                        except Exception: pass
                ok(i, result="searched", matches=ms, withheld=[])
            else:
                print(json.dumps({"id": i, "ok": False, "error": {"kind": "unsupported", "message": op}}), flush=True)
        except IsADirectoryError: ok(i, result="is_directory", content=None, prompted=False, preview=None, size=None, effect=None)
        except NotADirectoryError: ok(i, result="not_directory", content=None, prompted=False, preview=None, size=None, effect=None, entries=[])
        except FileNotFoundError: ok(i, result="not_found", content=None, prompted=False, preview=None, size=None, effect=None, entries=[])
        except OSError as e: ok(i, result="io", content=None, prompted=False, preview=None, size=None, effect=None, entries=[])
        except ValueError: ok(i, result="nul_byte", content=None, prompted=False, preview=None, size=None, effect=None)
