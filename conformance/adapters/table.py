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

    python3 conformance/adapters/table.py --kept docs/reports --agents

renders the agents' table from the reports kept in docs/reports/ instead (`--agents`:
those of an agent adapter, conformance/adapters/agents/): a column per label, each label's
reports merged per scenario, the newest report that ran a scenario giving its result
([`merge`]), so that a narrowed run adds to the table and never removes from it. A kept
report is a row of docs/reports/README.md's table (label, file, revision, date), or a file
there named LABEL-[BACKEND-]REVISION-DATE[.N].json that no row lists: a new agent's report is
picked up by dropping it there. Each column lists the reports it is made of: version,
date, command and time.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import re
import shutil
import sys
from typing import Any, NamedTuple, Optional

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


class Kept(NamedTuple):
    """One kept report: its column, its file, the revision and day it ran, and how it was
    made (the README's `made by` cell; empty for a file no row lists)."""

    label: str
    path: str
    revision: str
    date: str
    made_by: str


#: A kept report's name: LABEL-[BACKEND-]REVISION-DATE.json (docs/reports/README.md).
KEPT_NAME = re.compile(r"^(?P<label>[A-Za-z0-9][A-Za-z0-9._+-]*?)-(?:(?:gate|bwrap|native|landlock)-)?"
                       r"(?P<revision>[0-9a-f]{7,40})-(?P<date>\d{4}-\d{2}-\d{2})"
                       r"(?:\.(?P<n>\d+))?\.json$")

#: Where the agents' adapters live: a report whose implementation runs one is an agent's.
AGENT_ADAPTERS = "conformance/adapters/agents/"


def cells(line: str) -> list[str]:
    """A Markdown table row's cells, `\\|` kept as a `|` inside its cell."""
    parts = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [p.replace("\\|", "|").strip() for p in parts]


def kept_reports(directory: str) -> list[Kept]:
    """The reports kept in `directory`: the rows of its README.md's table (header `| column
    | report | revision | date | ...`), in order, then the JSON files there that no row lists
    and whose name is LABEL-[BACKEND-]REVISION-DATE[.N].json, by day and N. A listed file that is
    missing is an error; a file of another name that no row lists is not a column's (the
    single-chapter runs the README cites)."""
    rows: list[Kept] = []
    try:
        with open(os.path.join(directory, "README.md")) as f:
            readme = f.read().splitlines()
    except OSError:
        readme = []
    inside = False
    for line in readme:
        if line.startswith("| column | report |"):
            inside = True
            continue
        if not inside or line.startswith("|---"):
            continue
        if not line.startswith("|"):
            break
        c = cells(line)
        if len(c) < 4 or not (c[0].startswith("`") and c[0].endswith("`")):
            continue
        name = c[1].rsplit("](", 1)[-1].rstrip(")").strip("`")
        if not name or "/" in name or name.startswith("."):
            continue
        rows.append(Kept(c[0].strip("`"), os.path.join(directory, name), c[2].strip("`"),
                         c[3].strip("`"), c[5] if len(c) > 5 else ""))
    listed = {os.path.basename(k.path) for k in rows}
    # A second run of one day and revision is NAME.2.json, the third NAME.3.json.
    unlisted = sorted((m["date"], int(m["n"] or 1), name, m) for name in os.listdir(directory)
                      if name not in listed for m in [KEPT_NAME.match(name)] if m)
    for _, _, name, m in unlisted:
        rows.append(Kept(m["label"], os.path.join(directory, name), m["revision"], m["date"], ""))
    for k in rows:
        if not os.path.isfile(k.path):
            sys.exit("table.py: %s: listed in %s/README.md for `%s`, but missing"
                     % (k.path, directory, k.label))
    return rows


def read(path: str) -> Report:
    try:
        with open(path) as f:
            r: Report = json.load(f)
        return r
    except (OSError, ValueError) as e:
        sys.exit("table.py: %s: %s" % (path, e))


def is_agent(r: Report) -> bool:
    return AGENT_ADAPTERS in r.get("runner", {}).get("implementation", "")


def merge(runs: list[tuple[Kept, Report]]) -> Report:
    """One column from its kept reports, per scenario: the newest report (by day, then in
    the order given) that ran a scenario gives its result, and a scenario no newer report
    ran keeps its older result, so a narrowed run never removes one. The environment is
    the newest report's; the summary is counted again from the merged scenarios."""
    ordered = sorted(enumerate(runs), key=lambda ir: (ir[1][0].date, ir[0]))
    by_id: dict[str, Report] = {}
    for _, (_, r) in ordered:
        for s in r["scenarios"]:
            by_id[s["id"]] = s
    newest = ordered[-1][1][1]
    scenarios = [by_id[i] for i in sorted(by_id)]
    summary: collections.Counter[str] = collections.Counter(s["outcome"] for s in scenarios)
    return {"environment": newest["environment"], "runner": newest.get("runner", {}),
            "scenarios": scenarios, "summary": dict(summary)}


def run_command(k: Kept, r: Report) -> str:
    """The command that made a kept report: the runner's, from its implementation and
    its mode's filters (reports before run modes: the README's `made by` cell)."""
    runner = r.get("runner", {})
    mode = r.get("mode")
    if mode is None and k.made_by:
        return k.made_by
    cmd = 'gatehouse-conform run --impl "%s"' % runner.get("implementation", "?")
    for f in (mode or {}).get("filter", []):
        cmd += " --filter %s" % f
    for f in (mode or {}).get("exclude", []):
        cmd += " --exclude %s" % f
    return "`%s`" % cmd


def agent_columns(directory: str) -> list[tuple[str, Report, list[tuple[Kept, Report]]]]:
    """The agents' columns from the reports kept in `directory`, in the order each label
    first appears: the label, its merged report, and its reports oldest first."""
    by_label: dict[str, list[tuple[Kept, Report]]] = {}
    for k in kept_reports(directory):
        r = read(k.path)
        if is_agent(r):
            by_label.setdefault(k.label, []).append((k, r))
    out = []
    for label, runs in by_label.items():
        ordered = [runs[i] for i, _ in sorted(enumerate(runs), key=lambda ir: (ir[1][0].date, ir[0]))]
        out.append((label, merge(runs), ordered))
    return out


def keep(directory: str, label: str, report: str, revision: str, day: str, made_by: str) -> str:
    """Keeps `report` in `directory` beside the column's earlier reports, byte for byte,
    as LABEL-BACKEND-REVISION-DATE.json (a second of the same revision and day .2.json,
    then .3), with a row at the end of its README.md's table; returns the name."""
    r = read(report)
    backend = (r["environment"].get("environment") or {}).get("fence_backend") or "gate"
    stem, n = "%s-%s-%s-%s" % (label, backend, revision, day), 1
    while os.path.exists(os.path.join(directory, "%s%s.json" % (stem, "" if n == 1 else ".%d" % n))):
        n += 1
    name = "%s%s.json" % (stem, "" if n == 1 else ".%d" % n)
    readme = os.path.join(directory, "README.md")
    with open(readme) as f:
        lines = f.read().split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("| column | report |")), None)
    if start is None:
        sys.exit("table.py: %s has no `| column | report |` table to list %s in" % (readme, name))
    end = start + 2
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    lines.insert(end, "| `%s` | [`%s`](%s) | `%s` | %s | | %s |"
                 % (label, name, name, revision, day, md_escape(made_by)))
    shutil.copyfile(report, os.path.join(directory, name))
    with open(readme, "w") as f:
        f.write("\n".join(lines))
    return name


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--command", default=None, help="the command that made the reports")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--kept", default=None, metavar="DIR",
                    help="add a column per label of the reports kept in DIR, merged per scenario")
    ap.add_argument("--agents", action="store_true",
                    help="with --kept: only the agents' reports (conformance/adapters/agents/)")
    ap.add_argument("--keep", nargs=4, default=None, metavar=("LABEL=REPORT.json", "REVISION", "DATE", "MADE_BY"),
                    help="with --kept DIR: keep the report in DIR (and list it in its README) and stop")
    ap.add_argument("reports", nargs="*", metavar="LABEL=REPORT.json[,REPORT.json...]")
    args = ap.parse_args()
    if args.keep:
        if not args.kept:
            sys.exit("table.py: --keep needs --kept DIR, the directory to keep the report in")
        label, _, path = args.keep[0].partition("=")
        name = keep(args.kept, label, path, args.keep[1], args.keep[2], args.keep[3])
        print("agents: kept %s/%s (a row in its README.md)" % (args.kept.rstrip("/"), name))
        return
    reports = [load(a) for a in args.reports]
    runs_of: dict[str, list[tuple[Kept, Report]]] = {}
    if args.kept:
        for label, merged, runs in agent_columns(args.kept):
            if not args.agents or all(is_agent(r) for _, r in runs):
                reports.append((label, merged))
                runs_of[label] = runs
    if not reports:
        sys.exit("table.py: no report to render (give LABEL=REPORT.json or --kept DIR)")
    folders = sorted({folder(s["id"]) for _, r in reports for s in r["scenarios"]})

    out: list[str] = []
    w = out.append
    w("## The table (%s)" % args.date)
    w("")
    if args.command and runs_of:
        w("Made by `%s` from the reports kept in `%s/`." % (args.command, args.kept.rstrip("/")))
        w("")
    elif args.command:
        w("Made by `%s` on this machine (kernel %s)." % (
            args.command, reports[0][1]["environment"]["environment"].get("kernel", "?")))
        w("")
    if runs_of:
        w("Each column is its reports kept in `%s` (listed under the column), merged per "
          "scenario: the newest report that ran a scenario gives its result, so a narrowed "
          "run adds to its column and never removes from it." % args.kept.rstrip("/"))
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
        version = env["version"]
        if label in runs_of:
            # Every version and day the column's reports ran, oldest first.
            seen = []
            for k, rr in runs_of[label]:
                v = "%s (%s)" % (rr["environment"].get("version", "?"), k.date)
                if v not in seen:
                    seen.append(v)
            version = ", ".join(seen)
        w("| %s (`%s`) | %s | %s |" % (md_escape(env["name"]), label, md_escape(version),
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
        if label in runs_of:
            w("| report (oldest first) | version | date | command | time | scenarios |")
            w("|---|---|---|---|---|---|")
            for k, rr in runs_of[label]:
                secs = rr.get("runner", {}).get("duration_ms")
                w("| `%s` | %s | %s | %s | %s | %d |" % (
                    os.path.basename(k.path), md_escape(rr["environment"].get("version", "?")),
                    k.date, md_escape(run_command(k, rr)),
                    "%d s" % round(secs / 1000) if secs is not None else "?",
                    len(rr["scenarios"])))
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
