#!/usr/bin/env python3
"""A worked `paths` adapter: file tools confined by a component walk (docs/implementing.md).

    gatehouse-conform run --impl 'python3 conformance/examples/paths_walk.py' --filter paths/

`Jail` stands for **your** file tools: each path is checked for its spelling, then walked
one name at a time from the root's handle with O_NOFOLLOW (path-confinement chapter,
PATH-RESOLVE-6): `..` goes back to the handle held before, a link's target is walked the
same way (an absolute one is `escape`), more than 40 links is `loop`, and the operation
acts on the handle the walk opened, never on a second lookup of the name. A write makes
its missing parents, refuses a final name that is a link (`final_symlink`) and anything at
or beneath `.git`, `.gatehouse` or `HEAD` of a root (`protected`), and replaces the file
by a rename. It declares `paths` alone (no trust map: `effect` is always null, nothing is
ever prompted). Standalone on purpose: standard library, no import from the repository.

It has one resolver, the walk: a session that asks for `openat2` is answered
`unsupported`, and the runner judges it on its own resolver (PROTO-OBSERVE-6 (b)).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from typing import Any, Optional

PROTECTED_DIRS = {".git", ".gatehouse"}
PROTECTED_FILES = {"HEAD"}
MAX_LINKS = 40
HONOURED = {"workspace", "home", "host", "asker", "allow_list", "grants", "card_window_ms",
            "roots", "resolver"}


class Refused(Exception):
    """A refusal with its code (path-confinement chapter, section 11)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class Unsupported(Exception):
    pass


class Found:
    """Where a walk ended: the parent directory's handle, the final name (None for the
    root itself), its handle (None when nothing is there) and the names from the root."""

    def __init__(self, parent: int, name: Optional[str], fd: Optional[int], names: list[str]):
        self.parent, self.name, self.fd, self.names = parent, name, fd, names


class Jail:
    """Your file tools, confined to a workspace and the roots opened beside it."""

    def __init__(self, workspace: str, roots: list[str]) -> None:
        # A root is opened following the links in the name given, then held by its
        # canonical path: its other spellings are not a second route (PATH-ROOT-2).
        self.roots = [os.path.realpath(r) for r in [workspace] + roots]
        self.workspace = self.roots[0]
        self.fds: list[int] = []

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def _open(self, name: str, flags: int, dir_fd: int) -> int:
        fd = os.open(name, flags, dir_fd=dir_fd)
        self.fds.append(fd)
        return fd

    def walk(self, path: str, follow_final: bool, make_parents: bool = False) -> Found:
        if path == "":
            raise Refused("empty_path")
        if "\0" in path:
            raise Refused("nul_byte")
        if len(path.encode()) > 4095:
            raise Refused("path_too_long")
        if any(len(c.encode()) > 255 for c in path.split("/")):
            raise Refused("name_too_long")
        root, rest = self.workspace, path
        if path.startswith("/"):
            for r in self.roots:
                if path == r or path.startswith(r.rstrip("/") + "/"):
                    root, rest = r, path[len(r):]
                    break
            else:
                raise Refused("escape")
        depth = 0  # `..` above the root by the spelling alone is `escape` before any lookup
        for c in rest.split("/"):
            depth += -1 if c == ".." else 0 if c in ("", ".") else 1
            if depth < 0:
                raise Refused("escape")
        stack = [self._open(root, os.O_PATH | os.O_DIRECTORY, dir_fd=-100)]
        names: list[str] = []
        # Each name with whether a link's target brought it (a walk makes no directory there).
        comps = [(c, False) for c in rest.split("/") if c not in ("", ".")]
        trailing = rest.endswith("/") or rest.endswith("/.")
        links = 0
        if not comps:
            return Found(stack[-1], None, stack[-1], [])
        while comps:
            c, linked = comps.pop(0)
            last = not comps
            if c == "..":
                if len(stack) == 1:
                    raise Refused("escape")
                stack.pop()
                names.pop()
                if last:
                    return Found(stack[-1], None, stack[-1], list(names))
                continue
            if make_parents and not names and (c in PROTECTED_DIRS or (last and c in PROTECTED_FILES)):
                raise Refused("protected")
            try:
                fd = self._open(c, os.O_PATH | os.O_NOFOLLOW, dir_fd=stack[-1])
            except FileNotFoundError:
                if last:
                    return Found(stack[-1], c, None, names + [c])
                if not make_parents or linked:
                    raise Refused("not_found") from None
                os.mkdir(c, 0o755, dir_fd=stack[-1])
                fd = self._open(c, os.O_PATH | os.O_NOFOLLOW, dir_fd=stack[-1])
            st = os.fstat(fd)
            if stat.S_ISLNK(st.st_mode) and (not last or follow_final or trailing):
                links += 1
                if links > MAX_LINKS:
                    raise Refused("loop")
                target = os.readlink(c, dir_fd=stack[-1])
                if target.startswith("/"):
                    raise Refused("escape")
                if not comps and (target.endswith("/") or target.endswith("/.")):
                    trailing = True
                comps = [(t, True) for t in target.split("/") if t not in ("", ".")] + comps
                continue
            if last and not (trailing and not stat.S_ISDIR(st.st_mode)):
                return Found(stack[-1], c, fd, names + [c])
            if not stat.S_ISDIR(st.st_mode):
                raise Refused("not_directory")
            stack.append(fd)
            names.append(c)
            if last:
                return Found(stack[-2], c, fd, list(names))
        raise Refused("not_found")

    def reopen(self, fd: int, flags: int) -> int:
        return self._open("/proc/self/fd/%d" % fd, flags, dir_fd=-100)

    def read_text(self, f: Found) -> bytes:
        if f.fd is None:
            raise Refused("not_found")
        st = os.fstat(f.fd)
        if stat.S_ISDIR(st.st_mode):
            raise Refused("is_directory")
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not_regular")
        with os.fdopen(os.dup(self.reopen(f.fd, os.O_RDONLY)), "rb") as fh:
            return fh.read()

    def for_write(self, path: str, write: bool) -> Found:
        bare = path
        while bare.endswith("/") or bare.endswith("/."):
            bare = bare[:-1]
        if write and bare != path:  # a name spelled as a directory: refused once the rest is walked
            self.walk(bare, follow_final=False)
            raise Refused("is_directory")
        f = self.walk(path, follow_final=False, make_parents=True)
        if f.name is None:
            raise Refused("is_directory")
        if f.names and f.names[0] in PROTECTED_DIRS or f.names == ["HEAD"]:
            raise Refused("protected")
        if f.fd is not None:
            st = os.fstat(f.fd)
            if stat.S_ISLNK(st.st_mode):
                try:  # a link out is `escape`, a loop `loop`; one inside, dangling or not, not
                    self.walk(path, follow_final=True)
                except Refused as r:
                    if r.code in ("escape", "loop"):
                        raise
                raise Refused("final_symlink")
            if stat.S_ISDIR(st.st_mode) or f.name is None:
                raise Refused("is_directory")
            if not stat.S_ISREG(st.st_mode):
                raise Refused("not_regular")
        return f

    def replace(self, f: Found, data: bytes) -> None:
        assert f.name is not None
        tmp = ".gatehouse-tmp-%d" % os.getpid()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                     dir_fd=f.parent)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, f.name, src_dir_fd=f.parent, dst_dir_fd=f.parent)


def kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def step(jail: Jail, req: dict[str, Any]) -> dict[str, Any]:
    op, path = req["op"], req.get("path", "")
    if op == "read":
        data = jail.read_text(jail.walk(path, follow_final=True))
        return {"result": "read", "content": data.decode("utf-8", "replace"), "prompted": False,
                "preview": None, "size": len(data)}
    if op in ("write", "edit"):
        f = jail.for_write(path, op == "write")
        if op == "write":
            jail.replace(f, req["content"].encode())
        else:
            text = jail.read_text(f).decode("utf-8", "replace")
            n = text.count(req["old"])
            if n != 1:
                return {"result": "no_match" if n == 0 else "ambiguous", "prompted": False,
                        "effect": None}
            jail.replace(f, text.replace(req["old"], req["new"]).encode())
        return {"result": "written", "prompted": False, "effect": None}
    if op == "list":
        f = jail.walk(path, follow_final=True)
        if f.fd is None:
            raise Refused("not_found")
        if not stat.S_ISDIR(os.fstat(f.fd).st_mode):
            raise Refused("not_directory")
        d = jail._open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=f.fd)
        entries = [{"name": n, "kind": kind(os.stat(n, dir_fd=d, follow_symlinks=False).st_mode)}
                   for n in sorted(os.listdir(d))]
        return {"result": "listed", "entries": entries}
    if op == "search":
        f = jail.walk(path, follow_final=True)
        if f.fd is None:
            raise Refused("not_found")
        matches: list[dict[str, Any]] = []
        if stat.S_ISDIR(os.fstat(f.fd).st_mode):
            d = jail._open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=f.fd)
            for top, dirs, files, dfd in os.fwalk(".", dir_fd=d, follow_symlinks=False):
                dirs.sort()
                for name in sorted(files):
                    rel = os.path.normpath(os.path.join(top, name))
                    search_file(jail, name, dfd, rel, req["pattern"], matches)
        elif f.name is not None:
            search_file(jail, f.name, f.parent, f.name, req["pattern"], matches)
        return {"result": "searched", "matches": matches, "withheld": []}
    raise Unsupported("no step %r: this adapter declares `paths` only" % op)


def search_file(jail: Jail, name: str, dfd: int, rel: str, pattern: str, out: list) -> None:
    try:
        fd = jail._open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
    except OSError:
        return
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        return
    with os.fdopen(os.dup(fd), "rb") as fh:
        for n, line in enumerate(fh.read().decode("utf-8", "replace").splitlines(), 1):
            if pattern in line:
                out.append({"file": rel, "line": n, "text": line})


def open_session(setup: dict[str, Any]) -> Jail:
    unknown = sorted(set(setup) - HONOURED)
    if unknown:
        raise Unsupported("setup field %s: not honoured by this adapter" % ", ".join(unknown))
    if setup.get("host", "posix") != "posix":
        raise Unsupported("host %r: POSIX only" % setup["host"])
    if setup.get("resolver") not in (None, "walk"):
        raise Unsupported("resolver %r: this adapter has the component walk only" % setup["resolver"])
    return Jail(setup["workspace"], list(setup.get("roots") or []))


def main() -> None:
    sessions: dict[str, Jail] = {}
    for line in sys.stdin:
        req = json.loads(line)
        answer: dict[str, Any] = {"id": req.get("id"), "ok": True}
        op = req.get("op")
        jail = sessions.get(req.get("session", ""))
        try:
            if op == "hello":
                answer.update(protocol="1.1", name="paths-walk-example", version="0.1.0",
                              capabilities=["paths"],
                              environment={"os": "linux", "arch": os.uname().machine,
                                           "kernel": os.uname().release, "landlock_abi": None,
                                           "fence_backend": None})
            elif op == "open":
                sessions[req["session"]] = open_session(req["setup"])
            elif op == "close":
                if jail:
                    jail.close()
                sessions.pop(req["session"], None)
            elif op == "bye":
                print(json.dumps(answer), flush=True)
                return
            elif jail is None:
                raise Unsupported("no session %r" % req.get("session"))
            else:
                try:
                    answer.update(step(jail, req))
                except Refused as r:
                    answer.update(result=r.code, content=None, prompted=False, preview=None,
                                  size=None, effect=None)
                except PermissionError:
                    answer.update(result="io", content=None, prompted=False, preview=None,
                                  size=None, effect=None)
                finally:
                    jail.close()
        except Unsupported as e:
            answer = {"id": req.get("id"), "ok": False,
                      "error": {"kind": "unsupported", "message": str(e)}}
        except Exception as e:  # the adapter's own failure: the scenario is `errored`
            answer = {"id": req.get("id"), "ok": False,
                      "error": {"kind": "error", "message": "%s: %s" % (type(e).__name__, e)}}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
