#!/usr/bin/env python3
"""Merges the runner's canonical JSON reports into the implementations table.

    python3 conformance/adapters/table.py --command 'just peers-table' \
        reference=reports/peers/reference.json bwrap=reports/peers/bwrap.json ... \
        > docs/implementations.md

Each argument is LABEL=REPORT.json, a report written by
`gatehouse-conform run --format json`. The output is Markdown: one row per implementation
with, per scenario folder, the two verdicts of spec/verdicts.md (safety: what a person
relies on; exactness: every field) counted passed / failed, and the skips; then, per
implementation, the scenarios that failed safety with their first safety difference, then
those that failed only on exactness with their first mismatch, and the reasons scenarios
were skipped. It reads the reports only; it judges nothing itself. A report written
before the verdicts (no `safety` field) counts its `outcome` at both levels.
For a gate, a failed scenario is marked `decision` when some step got a different
decision, and `report` when only the route, reason, offers or card differed.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import sys
from typing import Any, Optional

#: A report, or one scenario of it, as the runner wrote it (JSON).
Report = dict[str, Any]

OUTCOMES = ("passed", "failed", "skipped", "errored", "not_shown")


def load(arg: str) -> tuple[str, Report]:
    """LABEL=REPORT.json, or LABEL=A.json,B.json,...: one column from per-chapter reports
    of the same implementation (their scenarios together, the first one's environment)."""
    label, _, paths = arg.partition("=")
    if not paths:
        sys.exit("table.py: %r is not LABEL=REPORT.json" % arg)
    merged: Optional[Report] = None
    for path in paths.split(","):
        try:
            with open(path) as f:
                r = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit("table.py: %s: %s" % (path, e))
        if merged is None:
            merged = r
            continue
        if r["environment"]["name"] != merged["environment"]["name"]:
            sys.exit("table.py: %s: another implementation (%s) than %s's first report"
                     % (path, r["environment"]["name"], label))
        merged["scenarios"] = merged["scenarios"] + r["scenarios"]
        for o in OUTCOMES:
            if o in r["summary"]:
                merged["summary"][o] = merged["summary"].get(o, 0) + r["summary"][o]
    assert merged is not None  # paths.split always yields one
    return label, merged


def folder(scenario_id: str) -> str:
    return scenario_id.split("/", 1)[0]


def verdict(s: Report, level: str) -> str:
    return s[level] if level in s else s["outcome"]


def first_safety(s: Report) -> str:
    for step in s.get("steps", []):
        for d in step.get("differences", []):
            if d.get("level") == "safety":
                name = step.get("name")
                return ("%s: %s" % (name, d["message"])) if name else d["message"]
    return s.get("reason") or ""


def first_mismatch(s: Report) -> str:
    for step in s.get("steps", []):
        for m in step.get("mismatches", []):
            name = step.get("name")
            return ("%s: %s" % (name, m)) if name else m
    return s.get("reason") or ""


def kind_of_failure(s: Report) -> Optional[str]:
    if folder(s["id"]) != "gate":
        return None
    for step in s.get("steps", []):
        for m in step.get("mismatches", []):
            if ": decision: " in m:
                return "decision"
    return "report"


def cell(safety: collections.Counter[str], exactness: collections.Counter[str]) -> str:
    if not sum(safety.values()):
        return "-"
    def one(c: collections.Counter[str]) -> str:
        text = "%d passed / %d failed" % (c["passed"], c["failed"])
        text += " / %d errored" % c["errored"] if c["errored"] else ""
        # A skip on an unsupported answer: not shown safe (spec/verdicts.md, PROTO-OBSERVE-6).
        return text + (" / %d not shown safe" % c["not_shown"] if c.get("not_shown") else "")
    return "safety %s; exactness %s; %d skipped" % (one(safety), one(exactness),
                                                   safety["skipped"])


def md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "\\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--command", default=None, help="the command that made the reports")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("reports", nargs="+", metavar="LABEL=REPORT.json[,REPORT.json...]")
    args = ap.parse_args()
    reports = [load(a) for a in args.reports]
    folders = sorted({folder(s["id"]) for _, r in reports for s in r["scenarios"]})

    out: list[str] = []
    w = out.append
    w("## The table (%s)" % args.date)
    w("")
    if args.command:
        w("Made by `%s` on this machine (kernel %s)." % (
            args.command, reports[0][1]["environment"]["environment"].get("kernel", "?")))
        w("")
    w("| implementation | version | " + " | ".join("`%s/`" % f for f in folders) + " |")
    w("|---|---|" + "---|" * len(folders))
    for label, r in reports:
        env = r["environment"]
        safety: dict[str, collections.Counter[str]] = {f: collections.Counter() for f in folders}
        exactness: dict[str, collections.Counter[str]] = {f: collections.Counter() for f in folders}
        for s in r["scenarios"]:
            safety[folder(s["id"])][verdict(s, "safety")] += 1
            exactness[folder(s["id"])][verdict(s, "exactness")] += 1
        w("| %s (`%s`) | %s | %s |" % (md_escape(env["name"]), label, md_escape(env["version"]),
                                       " | ".join(cell(safety[f], exactness[f])
                                                  for f in folders)))
    w("")
    for label, r in reports:
        env = r["environment"]
        unsafe = [s for s in r["scenarios"]
                  if verdict(s, "safety") in ("failed", "errored", "not_shown")]
        failed = [s for s in r["scenarios"] if s["outcome"] in ("failed", "errored")
                  and s not in unsafe]
        w("### %s (`%s`)" % (env["name"], label))
        w("")
        w("Declared: capabilities %s, fence backend %s, Landlock ABI %s; summary %s." % (
            ", ".join("`%s`" % c for c in env["capabilities"]),
            "`%s`" % env["environment"].get("fence_backend"),
            json.dumps(env["environment"].get("landlock_abi")),
            ", ".join("%d %s" % (r["summary"].get(o, 0), o) for o in OUTCOMES)))
        w("")
        if unsafe:
            w("| failed safety | requirements | first safety difference |")
            w("|---|---|---|")
            for s in unsafe:
                w("| `%s`%s | %s | %s |" % (
                    s["id"], " (errored)" if verdict(s, "safety") == "errored" else "",
                    ", ".join(s["requirements"]), md_escape(first_safety(s))))
            w("")
        else:
            w("No scenario failed safety.")
            w("")
        if failed:
            w("| failed only exactness | requirements | first mismatch |")
            w("|---|---|---|")
            for s in failed:
                kind = kind_of_failure(s)
                w("| `%s`%s%s | %s | %s |" % (
                    s["id"], " (errored)" if s["outcome"] == "errored" else "",
                    " (%s)" % kind if kind else "",
                    ", ".join(s["requirements"]), md_escape(first_mismatch(s))))
            kinds = collections.Counter(kind_of_failure(s) for s in failed if kind_of_failure(s))
            if kinds:
                w("")
                w("Of the gate scenarios that failed only exactness, %d got a different "
                  "(stricter) decision on some line and %d differed only in the route, reason, "
                  "offers or card." % (
                      kinds["decision"], kinds["report"]))
        elif not unsafe:
            w("No scenario failed.")
        w("")
        skipped = collections.Counter(s.get("reason") or "" for s in r["scenarios"]
                                      if s["outcome"] == "skipped")
        if skipped:
            w("Skipped, by reason: " + "; ".join(
                "%s (%d)" % (md_escape(reason), n) for reason, n in skipped.most_common()) + ".")
            w("")
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
