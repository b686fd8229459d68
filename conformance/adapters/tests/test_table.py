"""table.py's one column from per-chapter reports (LABEL=A.json,B.json): the scenarios of
both, the summaries added, and a report of another implementation refused in one line.
And the agents' columns from kept reports (--kept DIR): a column per label, its reports
merged per scenario with the newest giving each result, so that a narrowed run never
removes a scenario; a report dropped into the directory under its name is picked up."""

from __future__ import annotations

import json
import os
import tempfile
import unittest
from typing import Any

from conformance.adapters import table


def report(name: str, ids: list[str], outcome: str, version: str = "1",
           impl: str = "python3 conformance/adapters/agents/x/adapter.py") -> dict[str, Any]:
    return {"environment": {"name": name, "version": version, "capabilities": [],
                            "environment": {"kernel": "k"}},
            "runner": {"implementation": impl, "duration_ms": 61000},
            "summary": {outcome: len(ids)},
            "scenarios": [{"id": i, "outcome": outcome, "safety": outcome, "exactness": outcome,
                           "requirements": [], "steps": []} for i in ids]}


class MergeTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="gh-table-")

    def write(self, name: str, r: dict[str, Any]) -> str:
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            json.dump(r, f)
        return path

    def test_chapters_merge_into_one_column(self) -> None:
        a = self.write("a.json", report("agent", ["hooks/x", "hooks/y"], "failed"))
        b = self.write("b.json", report("agent", ["permissions/z"], "passed"))
        label, merged = table.load("agent=%s,%s" % (a, b))
        self.assertEqual(label, "agent")
        self.assertEqual([s["id"] for s in merged["scenarios"]], ["hooks/x", "hooks/y", "permissions/z"])
        self.assertEqual(merged["summary"], {"failed": 2, "passed": 1})

    def test_another_implementation_is_refused(self) -> None:
        a = self.write("a.json", report("agent", ["hooks/x"], "failed"))
        b = self.write("b.json", report("other", ["hooks/y"], "failed"))
        with self.assertRaises(SystemExit) as e:
            table.load("agent=%s,%s" % (a, b))
        self.assertIn("another implementation", str(e.exception))


README = """# Kept

| column | report | revision | date | what runs | made by |
|---|---|---|---|---|---|
| `agent` | [it](agent-gate-abc1234-2026-12-07.json) | `abc1234` | 2026-12-07 | | `run.sh \\| x` |
| `agent` | `agent-gate-0123abc-2026-12-06.json` | `0123abc` | 2026-12-06 | | older |
| `peer` | `peer-bwrap-abc1234-2026-12-06.json` | `abc1234` | 2026-12-06 | | peers.sh |

After the table.
"""


class KeptTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="gh-kept-")

    def write(self, name: str, r: Any) -> str:
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(r if isinstance(r, str) else json.dumps(r))
        return path

    def test_a_narrowed_report_never_removes_a_scenario(self) -> None:
        whole = report("agent", ["fence/a", "gate/b", "hooks/c"], "failed")
        narrowed = report("agent", ["gate/b", "gate/new"], "passed", version="2")
        runs = [(table.Kept("agent", "new.json", "r2", "2026-12-07", ""), narrowed),
                (table.Kept("agent", "old.json", "r1", "2026-12-06", ""), whole)]
        merged = table.merge(runs)
        got = {s["id"]: s["outcome"] for s in merged["scenarios"]}
        # Every scenario of the older, whole run is still there; the newer run's (by day,
        # though listed first) gives gate/b's result and adds gate/new.
        self.assertEqual(got, {"fence/a": "failed", "gate/b": "passed", "hooks/c": "failed",
                               "gate/new": "passed"})
        self.assertEqual(merged["summary"], {"failed": 2, "passed": 2})
        self.assertEqual(merged["environment"]["version"], "2")
        # The same day: the one given later is the newer.
        same = [(table.Kept("agent", "a.json", "r1", "2026-12-07", ""), whole),
                (table.Kept("agent", "b.json", "r2", "2026-12-07", ""), narrowed)]
        self.assertEqual({s["id"]: s["outcome"] for s in table.merge(same)["scenarios"]}["gate/b"],
                         "passed")

    def test_kept_columns_from_the_readme_and_a_dropped_file(self) -> None:
        self.write("README.md", README)
        self.write("agent-gate-abc1234-2026-12-07.json",
                   report("agent", ["gate/b"], "passed", version="2"))
        self.write("agent-gate-0123abc-2026-12-06.json",
                   report("agent", ["fence/a", "gate/b"], "failed"))
        self.write("peer-bwrap-abc1234-2026-12-06.json",
                   report("peer", ["fence/a"], "passed", impl="python3 conformance/adapters/bwrap/adapter.py"))
        # A new agent's report, dropped in with no row: a column of its own, by its name.
        self.write("qwen-code-fedcba9-2026-12-07.json", report("qwen", ["hooks/c"], "failed"))
        self.write("qwen-code-fedcba9-2026-12-07.2.json", report("qwen", ["hooks/c"], "passed"))
        # Not a kept report's name: a single-chapter run the README only cites.
        self.write("guard-agent-2026-12-06.json", report("agent", ["guard/g"], "failed"))
        kept = table.kept_reports(self.dir)
        self.assertEqual([(k.label, os.path.basename(k.path)) for k in kept], [
            ("agent", "agent-gate-abc1234-2026-12-07.json"),
            ("agent", "agent-gate-0123abc-2026-12-06.json"),
            ("peer", "peer-bwrap-abc1234-2026-12-06.json"),
            ("qwen-code", "qwen-code-fedcba9-2026-12-07.json"),
            ("qwen-code", "qwen-code-fedcba9-2026-12-07.2.json")])
        self.assertEqual(kept[0].made_by, "`run.sh | x`")
        cols = {label: (merged, runs) for label, merged, runs in table.agent_columns(self.dir)}
        self.assertEqual(sorted(cols), ["agent", "qwen-code"])
        merged, runs = cols["agent"]
        self.assertEqual([k.date for k, _ in runs], ["2026-12-06", "2026-12-07"])
        self.assertEqual({s["id"]: s["outcome"] for s in merged["scenarios"]},
                         {"fence/a": "failed", "gate/b": "passed"})
        # The day's second run (.2) is the newer.
        self.assertEqual(cols["qwen-code"][0]["scenarios"][0]["outcome"], "passed")

    def test_a_run_kept_twice_in_a_day_adds_and_removes_nothing(self) -> None:
        self.write("README.md", README.replace("| `agent` |", "| `other` |"))
        for name in ("agent-gate-abc1234-2026-12-07.json", "agent-gate-0123abc-2026-12-06.json",
                     "peer-bwrap-abc1234-2026-12-06.json"):
            self.write(name, report("other", ["fence/a"], "passed", impl="bwrap"))
        whole = self.write("run1.json", report("agent", ["fence/a", "gate/b"], "failed"))
        narrowed = self.write("run2.json", report("agent", ["gate/b"], "passed"))
        first = table.keep(self.dir, "agent", whole, "fedcba9", "2026-12-07", "run.sh, 9 s")
        second = table.keep(self.dir, "agent", narrowed, "fedcba9", "2026-12-07", "run.sh | x")
        self.assertEqual((first, second), ("agent-gate-fedcba9-2026-12-07.json",
                                           "agent-gate-fedcba9-2026-12-07.2.json"))
        with open(os.path.join(self.dir, first)) as a, open(whole) as b:
            self.assertEqual(a.read(), b.read())
        kept = [k for k in table.kept_reports(self.dir) if k.label == "agent"]
        self.assertEqual([os.path.basename(k.path) for k in kept], [first, second])
        self.assertEqual(kept[1].made_by, "run.sh | x")
        (label, merged, runs), = table.agent_columns(self.dir)
        self.assertEqual((label, len(runs)), ("agent", 2))
        self.assertEqual({s["id"]: s["outcome"] for s in merged["scenarios"]},
                         {"fence/a": "failed", "gate/b": "passed"})

    def test_a_listed_file_that_is_missing_is_refused(self) -> None:
        self.write("README.md", README)
        with self.assertRaises(SystemExit) as e:
            table.kept_reports(self.dir)
        self.assertIn("missing", str(e.exception))


if __name__ == "__main__":
    unittest.main()
