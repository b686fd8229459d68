#!/usr/bin/env python3
"""Merges the runner's canonical JSON reports into the implementations table.

    python3 conformance/adapters/table.py --command 'just peers-table' \
        reference=reports/peers/reference.json bwrap=reports/peers/bwrap.json ... \
        > docs/implementations.md

Each argument is LABEL=REPORT.json, a report written by
`gatehouse-conform run --format json`. The output is Markdown: one row per implementation
with passed / failed / skipped counts per scenario folder, then, per implementation, every
failed scenario with the requirements it pins and the first mismatch the runner saw, and
the reasons scenarios were skipped. It reads the reports only; it judges nothing itself.
For a gate, a failed scenario is marked `decision` when some step got a different
decision, and `report` when only the route, reason, offers or card differed.
"""

import argparse
import collections
import datetime
import json
import sys

OUTCOMES = ("passed", "failed", "skipped", "errored")


def load(arg):
    label, _, path = arg.partition("=")
    if not path:
        sys.exit("table.py: %r is not LABEL=REPORT.json" % arg)
    try:
        with open(path) as f:
            return label, json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("table.py: %s: %s" % (path, e))


def folder(scenario_id):
    return scenario_id.split("/", 1)[0]


def first_mismatch(s):
    for step in s.get("steps", []):
        for m in step.get("mismatches", []):
            name = step.get("name")
            return ("%s: %s" % (name, m)) if name else m
    return s.get("reason") or ""


def kind_of_failure(s):
    if folder(s["id"]) != "gate":
        return None
    for step in s.get("steps", []):
        for m in step.get("mismatches", []):
            if ": decision: " in m:
                return "decision"
    return "report"


def cell(counts):
    parts = ["%d passed" % counts["passed"], "%d failed" % counts["failed"],
             "%d skipped" % counts["skipped"]]
    if counts["errored"]:
        parts.append("%d errored" % counts["errored"])
    return " / ".join(parts)


def md_escape(text):
    return text.replace("|", "\\|").replace("\n", "\\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--command", default=None, help="the command that made the reports")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("reports", nargs="+", metavar="LABEL=REPORT.json")
    args = ap.parse_args()
    reports = [load(a) for a in args.reports]
    folders = sorted({folder(s["id"]) for _, r in reports for s in r["scenarios"]})

    out = []
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
        counts = {f: collections.Counter() for f in folders}
        for s in r["scenarios"]:
            counts[folder(s["id"])][s["outcome"]] += 1
        w("| %s (`%s`) | %s | %s |" % (md_escape(env["name"]), label, md_escape(env["version"]),
                                       " | ".join(cell(counts[f]) for f in folders)))
    w("")
    for label, r in reports:
        env = r["environment"]
        failed = [s for s in r["scenarios"] if s["outcome"] in ("failed", "errored")]
        w("### %s (`%s`)" % (env["name"], label))
        w("")
        w("Declared: capabilities %s, fence backend %s, Landlock ABI %s; summary %s." % (
            ", ".join("`%s`" % c for c in env["capabilities"]),
            "`%s`" % env["environment"].get("fence_backend"),
            json.dumps(env["environment"].get("landlock_abi")),
            ", ".join("%d %s" % (r["summary"][o], o) for o in OUTCOMES)))
        w("")
        if failed:
            w("| failed scenario | requirements | first mismatch |")
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
                w("Of the failed gate scenarios, %d got a different decision on some line and "
                  "%d differed only in the route, reason, offers or card." % (
                      kinds["decision"], kinds["report"]))
        else:
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
