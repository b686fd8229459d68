#!/usr/bin/env python3
"""Fails when two parts of a crate import each other.

For every crate root under reference/src, reference/{sys,confine,fence,gate,policy}/src,
conformance/src, conformance/{core,vm,docs}/src and benches/src (lib.rs, main.rs,
bin/*.rs), the module tree is read from its `mod NAME;` and `mod NAME { ... }`
declarations. Each file (and each inline module) is
a module. Its references are the paths `crate::a::b`, `super::x`, `self::x`, a child
module's name (`child::x`), and every leaf of its `use` trees. A path is resolved to the
deepest module it names; a name a module imports (`use child::Name`, `pub use ...`) is
followed to where it comes from, so a re-export does not hide a dependency.

At every level of the tree the sibling subtrees form a graph: an edge ci -> cj when any
module inside ci references anything inside cj. A strongly connected component of more
than one sibling is a cycle; each is printed on one line with one reference per edge as
evidence, and the script exits 1. Comments and string literals are ignored; paths into
other crates (`gatehouse::...`, `std::...`) are not part of any crate's graph.

Usage: python3 .ci/module_cycles.py [DIR ...]   (default: the three source folders)
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIRS = ["reference/src", "reference/sys/src", "reference/confine/src", "reference/fence/src",
                "reference/gate/src", "reference/policy/src", "conformance/src",
                "conformance/core/src", "conformance/vm/src", "conformance/docs/src", "benches/src"]

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"

#: A module's path: its names from the crate's root.
ModPath = tuple[str, ...]
#: An edge: from module, to module, the file and line that make it.
Edge = tuple[ModPath, ModPath, str, int]


def strip(text: str) -> str:
    """Replaces comments, string and char literals by spaces (keeping offsets)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif re.match(r'(b|c)?r#*"', text[i:i + 80]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(b|c)?r(#*)"', text[i:])
            assert m is not None  # the branch's own test matched it
            close = '"' + m.group(2)
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c in "bc" and text.startswith('"', i + 1)
                          and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))):
            j = i + (1 if c == '"' else 2)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}', b'x' handled by the b prefix below)
            # or a lifetime ('a): only the former is blanked.
            m = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'", text[i:])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(text: str, open_pos: int) -> int:
    depth = 0
    for j in range(open_pos, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text)


def split_top(s: str, sep: str = ",") -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def expand_use(tree: str) -> list[tuple[list[str], str]]:
    """`a::{b, c::{d, self}}` -> [(["a","b"], "b"), (["a","c","d"], "d"), (["a","c"], "c")]."""
    tree = re.sub(r"\s+", " ", tree).strip()
    if tree.startswith("::"):
        tree = tree[2:]
    brace = tree.find("{")
    if brace < 0:
        alias = None
        m = re.match(r"(.*?)\s+as\s+(" + IDENT + r")$", tree)
        if m:
            tree, alias = m.group(1), m.group(2)
        segs = [s.strip() for s in tree.split("::") if s.strip()]
        if not segs:
            return []
        if segs[-1] == "self":
            segs = segs[:-1]
            if not segs:
                return []
        name = alias or segs[-1]
        return [(segs, name)]
    prefix = [s.strip() for s in tree[:brace].split("::") if s.strip()]
    inner = tree[brace + 1:tree.rfind("}")]
    out: list[tuple[list[str], str]] = []
    for part in split_top(inner):
        if part == "self":
            if prefix:
                out.append((prefix, prefix[-1]))
            continue
        for segs, name in expand_use(part):
            out.append((prefix + segs, name))
    return out


class Module:
    def __init__(self, path: ModPath, file: str, parent: Optional[Module]) -> None:
        self.path = path  # tuple of names from the crate root
        self.file = file
        self.parent = parent
        self.children: dict[str, Module] = {}
        self.uses: list[tuple[list[str], str, int]] = []  # (segs, name, line)
        self.refs: list[tuple[list[str], int]] = []  # (segs, line)
        self.imports: dict[str, list[str]] = {}  # name -> segs (relative to this module)


class Crate:
    def __init__(self, root_file: str) -> None:
        self.root_file = root_file
        self.modules: dict[ModPath, Module] = {}
        self.errors: list[str] = []
        self.texts: dict[str, str] = {}  # file -> its text before `strip` (a `#[path]`'s string)
        self.root = self.load_file(root_file, (), None, os.path.dirname(root_file), True)

    def load_file(self, file: str, path: ModPath, parent: Optional[Module], child_dir: str,
                  is_root: bool) -> Optional[Module]:
        try:
            text = open(file, encoding="utf-8").read()
        except OSError as e:
            self.errors.append(f"{file}: {e}")
            return None
        stripped = strip(text)
        self.texts[file] = text
        mod = Module(path, file, parent)
        self.modules[path] = mod
        self.scan(mod, stripped, 0, len(stripped), child_dir, file)
        return mod

    def scan(self, mod: Module, text: str, start: int, end: int, child_dir: str, file: str) -> None:
        """Reads module declarations, `use` trees and paths in text[start:end]."""
        def line_of(pos: int) -> int:
            return text.count("\n", 0, pos) + 1

        skip: list[tuple[int, int]] = []  # spans of inline modules, scanned as their own modules
        decl = re.compile(r"\bmod\s+(" + IDENT + r")\s*(;|\{)")
        for m in decl.finditer(text, start, end):
            if any(a <= m.start() < b for a, b in skip):
                continue
            name = m.group(1)
            # A `#[path = "..."]` attribute right before the declaration.
            # `strip` blanked its string: the path is read at the same offsets in the original.
            lo = max(start, m.start() - 200)
            before = text[lo:m.start()]
            pm = re.search(r'#\[path\s*=[^\]]*\]\s*(pub(\([^)]*\))?\s*)?$', before)
            path_attr = None
            if pm:
                lit = re.search(r'"([^"]*)"', self.texts[file][lo + pm.start():lo + pm.end()])
                path_attr = lit.group(1) if lit else None
            if m.group(2) == ";":
                candidates = [os.path.join(child_dir, name + ".rs"), os.path.join(child_dir, name, "mod.rs")]
                if path_attr is not None:
                    candidates = [os.path.join(os.path.dirname(file), path_attr)]
                target = next((c for c in candidates if os.path.exists(c)), None)
                if target is None:
                    self.errors.append(f"{file}:{line_of(m.start())}: no file for `mod {name};`")
                    continue
                if target.endswith("mod.rs"):
                    grand = os.path.dirname(target)
                else:
                    grand = os.path.join(os.path.dirname(target), name)
                child = self.load_file(target, mod.path + (name,), mod, grand, False)
                if child:
                    mod.children[name] = child
            else:
                open_pos = m.end() - 1
                close = matching_brace(text, open_pos)
                skip.append((open_pos, close))
                child = Module(mod.path + (name,), file, mod)
                self.modules[child.path] = child
                mod.children[name] = child
                self.scan(child, text, open_pos + 1, close, os.path.join(child_dir, name), file)
        # Remove inline modules' bodies from this module's text.
        chars = list(text[start:end])
        for a, b in skip:
            for k in range(a - start, min(b + 1, end) - start):
                if chars[k] != "\n":
                    chars[k] = " "
        body = "".join(chars)
        # Offsets in body are relative to start; line numbers need the absolute offset.
        used_spans = []
        for um in re.finditer(r"\buse\s+([^;]*);", body):
            used_spans.append((um.start(), um.end()))
            for segs, name in expand_use(um.group(1)):
                mod.uses.append((segs, name, line_of(start + um.start())))
        for pm in re.finditer(r"(?<![A-Za-z0-9_:$])(" + IDENT + r")((?:\s*::\s*" + IDENT + r")+)", body):
            if any(a <= pm.start() < b for a, b in used_spans):
                continue
            segs = [pm.group(1)] + [s.strip() for s in pm.group(2).split("::") if s.strip()]
            mod.refs.append((segs, line_of(start + pm.start())))

    def resolve(self, mod: Module, segs: list[str], depth: int = 0) -> Optional[ModPath]:
        """The absolute module path (tuple) `segs` names from `mod`, or None if outside."""
        if depth > 20 or not segs:
            return None
        head = segs[0]
        base: ModPath
        if head == "crate":
            base, rest = (), segs[1:]
        elif head == "self":
            base, rest = mod.path, segs[1:]
        elif head == "super":
            base, rest = mod.path, segs
            while rest and rest[0] == "super":
                if not base:
                    return None
                base, rest = base[:-1], rest[1:]
        elif head in mod.children:
            base, rest = mod.path, segs
        elif head in mod.imports:
            return self.resolve(mod, list(mod.imports[head]) + segs[1:], depth + 1)
        else:
            return None
        cur = base
        for i, s in enumerate(rest):
            node = self.modules.get(cur)
            if node is None:
                break
            if s in node.children:
                cur = cur + (s,)
                continue
            if s in node.imports and s != "*":
                target = self.resolve(node, list(node.imports[s]) + list(rest[i + 1:]), depth + 1)
                return target if target is not None else cur
            break
        return cur

    def link(self) -> list[Edge]:
        for mod in self.modules.values():
            for segs, name, _ in mod.uses:
                if name != "*":
                    mod.imports[name] = segs
        edges: list[Edge] = []  # (from module path, to module path, file, line)
        for mod in self.modules.values():
            for segs, _, line in mod.uses:
                t = self.resolve(mod, segs)
                if t is not None:
                    edges.append((mod.path, t, mod.file, line))
            for segs, line in mod.refs:
                t = self.resolve(mod, segs)
                if t is not None:
                    edges.append((mod.path, t, mod.file, line))
        return edges


def sccs(nodes: Iterable[str], graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def cycles_of(crate: Crate, edges: list[Edge]) -> list[str]:
    found: list[str] = []
    for parent in sorted(crate.modules):
        node = crate.modules[parent]
        if len(node.children) < 2:
            continue
        depth = len(parent)
        graph: dict[str, set[str]] = {}
        evidence: dict[tuple[str, str], str] = {}
        for src, dst, file, line in edges:
            if len(src) <= depth or len(dst) <= depth:
                continue
            if src[:depth] != parent or dst[:depth] != parent:
                continue
            a, b = src[depth], dst[depth]
            if a == b:
                continue
            graph.setdefault(a, set()).add(b)
            evidence.setdefault((a, b), f"{os.path.relpath(file, ROOT)}:{line}")
        for comp in sccs(node.children.keys(), graph):
            if len(comp) < 2:
                continue
            members = set(comp)
            ev = [f"{a}->{b} ({evidence[(a, b)]})" for (a, b) in sorted(evidence) if a in members and b in members]
            where = "crate" + "".join("::" + p for p in parent)
            found.append(f"{os.path.relpath(crate.root_file, ROOT)}: cycle under {where} "
                         f"between {{{', '.join(comp)}}}: " + "; ".join(ev))
    return found


def crate_roots(src_dir: str) -> list[str]:
    roots = []
    for name in ("lib.rs", "main.rs"):
        p = os.path.join(src_dir, name)
        if os.path.exists(p):
            roots.append(p)
    bin_dir = os.path.join(src_dir, "bin")
    if os.path.isdir(bin_dir):
        for name in sorted(os.listdir(bin_dir)):
            p = os.path.join(bin_dir, name)
            if name.endswith(".rs"):
                roots.append(p)
            elif os.path.exists(os.path.join(p, "main.rs")):
                roots.append(os.path.join(p, "main.rs"))
    return roots


def main(argv: list[str]) -> int:
    dirs = argv[1:] or [os.path.join(ROOT, d) for d in DEFAULT_DIRS]
    problems: list[str] = []
    checked = 0
    for d in dirs:
        if not os.path.isdir(d):
            print(f"module_cycles: {d}: no such directory", file=sys.stderr)
            return 2
        for root in crate_roots(d):
            crate = Crate(root)
            problems.extend(crate.errors)
            problems.extend(cycles_of(crate, crate.link()))
            checked += len(crate.modules)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"module_cycles: no import cycle among {checked} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
