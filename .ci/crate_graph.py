#!/usr/bin/env python3
"""The crate graph of the workspace, from its manifests: one line per crate, its floor and
the workspace crates it depends on. CONTRIBUTING.md shows it between two marker lines;
`--check` fails when that copy differs from the manifests, `--write` rewrites it.

A crate's floor is `[package.metadata.gatehouse] floor` in its manifest (the layers of
CONTRIBUTING.md, bottom up); a crate may depend only on crates of a lower floor, or of its
own floor when the floor says so (`tools`), which `--check` also fails on. The runtime
(tokio) and the HTTP stack (hyper and its helpers) are the execution floor's alone: no
other crate may list them among its `[dependencies]` (tests and benches may, as
dev-dependencies, to drive the plane's async broker), which `--check` fails on too; the
table's last column names the ones a crate holds.

Usage: python3 .ci/crate_graph.py [--check | --write]
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "CONTRIBUTING.md"
BEGIN = "<!-- crate graph: begin (written by .ci/crate_graph.py --write) -->"
END = "<!-- crate graph: end -->"
# The floors, bottom up; a crate depends only on crates of a lower floor (or, for the
# floors named in SAME_FLOOR, of its own). The approval gate needs nothing, so it is the
# lowest decision, a floor of its own that the others build on. Execution sits below the
# other decisions: the decision order runs the approved command in the plane and hooks run
# with the plane's scrubbed environment, while nothing of the fence, the plane or the proxy
# asks a decision module; it builds on confinement for the protected paths.
FLOORS = ["kernel", "approval", "confinement", "execution", "decisions", "reference", "runner",
          "runner tools", "runner binary", "tools"]
SAME_FLOOR = {"tools"}
# The crates only one workspace crate may hold as a normal dependency, and that crate.
OWNED = {name: "gatehouse-fence" for name in ("tokio", "hyper", "hyper-util", "http-body-util")}


def normal_deps(doc: dict) -> set[str]:
    """The names a manifest lists as normal dependencies, on every target."""
    tables = [doc.get("dependencies", {})]
    tables += [t.get("dependencies", {}) for t in doc.get("target", {}).values()]
    return {name for table in tables for name in table}


def members() -> list[Path]:
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]
    return [ROOT / m / "Cargo.toml" for m in workspace["members"]]


Crate = tuple[str, str, str, list[str], list[str]]


def graph() -> tuple[list[Crate], list[str]]:
    """(name, path, floor, internal dependencies, owned crates it holds) per crate, and the
    problems found."""
    crates = []
    for manifest in members():
        doc = tomllib.loads(manifest.read_text())
        pkg = doc["package"]
        floor = pkg.get("metadata", {}).get("gatehouse", {}).get("floor", "?")
        deps = sorted(
            name
            for table in ("dependencies", "dev-dependencies")
            for name, spec in doc.get(table, {}).items()
            if isinstance(spec, dict) and "path" in spec and name != pkg["name"]
        )
        path = str(manifest.parent.relative_to(ROOT))
        held = sorted(normal_deps(doc) & OWNED.keys())
        crates.append((pkg["name"], path, floor, deps, held))
    floor_of = {name: floor for name, _, floor, _, _ in crates}
    problems = []
    for name, _, _, _, held in crates:
        for dep in held:
            if OWNED[dep] != name:
                problems.append("%s depends on %s, which only %s may hold (a dev-dependency "
                                "may drive it in tests)" % (name, dep, OWNED[dep]))
    for name, _, floor, deps, _ in crates:
        if floor not in FLOORS:
            problems.append("%s: no floor in [package.metadata.gatehouse] (one of %s)"
                            % (name, ", ".join(FLOORS)))
            continue
        for dep in deps:
            other = floor_of.get(dep, "?")
            if other not in FLOORS:
                continue
            below = FLOORS.index(other) < FLOORS.index(floor)
            same = other == floor and floor in SAME_FLOOR
            if not (below or same):
                problems.append("%s (floor %s) depends on %s (floor %s)" % (name, floor, dep, other))
    return crates, problems


def render(crates: list[Crate]) -> str:
    rows = sorted(crates, key=lambda c: (FLOORS.index(c[2]) if c[2] in FLOORS else 99, c[0]))
    lines = ["| crate | folder | floor | workspace crates it uses | runtime and HTTP it holds |",
             "|---|---|---|---|---|"]
    for name, path, floor, deps, held in rows:
        used = ", ".join("`%s`" % d for d in deps) or "none"
        owned = ", ".join("`%s`" % d for d in held) or "none"
        lines.append("| `%s` | `%s` | %s | %s | %s |" % (name, path, floor, used, owned))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    crates, problems = graph()
    table = render(crates)
    text = DOC.read_text()
    head, sep, rest = text.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        print("crate_graph: %s lacks its marker lines" % DOC.name, file=sys.stderr)
        return 1
    wanted = head + BEGIN + "\n\n" + table + "\n\n" + END + tail
    for p in problems:
        print("crate_graph: " + p, file=sys.stderr)
    if "--write" in argv:
        DOC.write_text(wanted)
        return 1 if problems else 0
    if "--check" in argv and wanted != text:
        print("crate_graph: CONTRIBUTING.md's crate graph differs from the manifests; "
              "run python3 .ci/crate_graph.py --write", file=sys.stderr)
        return 1
    if "--check" not in argv:
        print(table)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
