#!/usr/bin/env python3
"""Merges kernel-matrix runs of third-party adapters into the kernel x implementation table.

    python3 conformance/adapters/kernel_table.py --command 'just peers-kernels' \
        bwrap=reports/peers-vm/bwrap landlock-sandboxer=reports/peers-vm/landlock-sandboxer ...

Each argument is LABEL=DIR, the --out-dir of one `gatehouse-conform vm` run (its
matrix.json and each guest's canonical JSON report, KERNEL-VARIANT-USER.json). The output
is Markdown: one row per implementation and user, one column per guest (kernel and
variant), each cell the two verdicts of spec/verdicts.md (safety: what a person relies on;
exactness: every field) counted passed / failed, and the skips; a guest that errored says
so with its cause. Then, per implementation, every scenario whose verdict is not the same
on every guest and user, with each one's verdict: what the fence does differently on
another kernel. It reads the reports only; it judges nothing itself.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import sys
from typing import Any, Optional

#: A report, one scenario of it, or a matrix.json, as the runner wrote it (JSON).
Report = dict[str, Any]
#: One argument's runs: label, matrix, guests in order, report per (guest, user) (None:
#: none written), cause per guest that errored.
Loaded = tuple[str, Report, list[str], dict[tuple[str, str], Optional[Report]], dict[str, str]]


def verdict(s: Report, level: str) -> str:
    return s[level] if level in s else s["outcome"]


def short(s: Report) -> str:
    """One scenario's verdicts as a cell: safety/exactness, or the outcome when equal."""
    safety, exact = verdict(s, "safety"), verdict(s, "exactness")
    if s["outcome"] == "skipped":
        return "skipped"
    if safety == exact:
        return safety
    return "safety %s, exactness %s" % (safety, exact)


def md(text: Optional[str]) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def load(arg: str) -> Loaded:
    label, _, path = arg.partition("=")
    if not path:
        sys.exit("kernel_table.py: %r is not LABEL=DIR" % arg)
    try:
        with open(os.path.join(path, "matrix.json")) as f:
            matrix = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("kernel_table.py: %s: %s" % (path, e))
    runs: dict[tuple[str, str], Optional[Report]] = {}  # (guest, user) -> report or None
    errors: dict[str, str] = {}  # guest -> cause
    order: list[str] = []
    for g in matrix["guests"]:
        guest = "%s %s" % (g["kernel"], g["variant"])
        order.append(guest)
        if g.get("error"):
            errors[guest] = g["error"]
        for u in g.get("users", []):
            name = "%s-%s-%s.json" % (g["kernel"], g["variant"], u["user"])
            try:
                with open(os.path.join(path, name)) as f:
                    runs[(guest, u["user"])] = json.load(f)
            except (OSError, ValueError):
                runs[(guest, u["user"])] = None
                if u.get("problem"):
                    errors.setdefault(guest, u["problem"])
    return label, matrix, order, runs, errors


def cell(report: Report) -> str:
    c: dict[str, collections.Counter[str]] = {"safety": collections.Counter(), "exactness": collections.Counter()}
    for s in report["scenarios"]:
        for level in c:
            c[level][verdict(s, level)] += 1
    def one(x: collections.Counter[str]) -> str:
        text = "%d/%d" % (x["passed"], x["failed"])
        return text + (" (%d errored)" % x["errored"] if x["errored"] else "")
    return "safety %s; exactness %s; %d skipped" % (
        one(c["safety"]), one(c["exactness"]), c["safety"]["skipped"])


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--command", default=None, help="the command that made the runs")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("runs", nargs="+", metavar="LABEL=DIR")
    args = ap.parse_args()
    loaded = [load(a) for a in args.runs]
    guests: list[str] = []
    for _, _, order, _, _ in loaded:
        for g in order:
            if g not in guests:
                guests.append(g)
    out: list[str] = []
    w = out.append
    w("## Kernel x implementation (%s)" % args.date)
    w("")
    if args.command:
        w("Made by `%s`: each adapter inside the kernel matrix's QEMU guests (TCG), its tool "
          "installed in the guest with `--guest-package` / `--guest-copy`. Cells count the "
          "scenarios' verdicts (spec/verdicts.md) as passed/failed, safety first." % args.command)
        w("")
    w("| implementation | user | " + " | ".join(guests) + " |")
    w("|---|---|" + "---|" * len(guests))
    for label, _matrix, _order, runs, errors in loaded:
        users = sorted({u for (_, u) in runs}, key=lambda u: (u != "root", u))
        for user in users:
            cells: list[str] = []
            for g in guests:
                r = runs.get((g, user))
                if r is not None:
                    cells.append(cell(r))
                elif g in errors:
                    cells.append("errored: " + md(errors[g])[:160])
                else:
                    cells.append("-")
            name = next((r["environment"]["name"] for r in runs.values() if r), label)
            w("| %s (`%s`) | %s | %s |" % (md(name), label, user, " | ".join(cells)))
    w("")
    for label, matrix, order, runs, errors in loaded:
        w("### `%s`: what changes with the kernel or the user" % label)
        w("")
        w("`%s`, %.0f s wall." % (md(matrix.get("command", "")), matrix.get("wall_secs", 0)))
        w("")
        keys = [k for k in runs if runs[k] is not None]
        keys.sort(key=lambda k: (order.index(k[0]), k[1] != "root"))
        per: collections.defaultdict[str, dict[tuple[str, str], str]] = collections.defaultdict(dict)
        for k in keys:
            report = runs[k]
            assert report is not None  # keys are the runs with a report
            for s in report["scenarios"]:
                per[s["id"]][k] = short(s)
        varying = {sid: v for sid, v in per.items() if len(set(v.values())) > 1}
        if not keys:
            w("No guest produced a report.")
        elif not varying:
            w("Every scenario had the same verdict on every guest and user.")
        else:
            w("| scenario | " + " | ".join("%s %s" % k for k in keys) + " |")
            w("|---|" + "---|" * len(keys))
            for sid in sorted(varying):
                w("| `%s` | %s |" % (sid, " | ".join(varying[sid].get(k, "-") for k in keys)))
        for g, cause in errors.items():
            w("")
            w("- %s errored: %s" % (g, md(cause)))
        w("")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
