"""table.py's one column from per-chapter reports (LABEL=A.json,B.json): the scenarios of
both, the summaries added, and a report of another implementation refused in one line."""

from __future__ import annotations

import json
import os
import tempfile
import unittest
from typing import Any

from conformance.adapters import table


def report(name: str, ids: list[str], outcome: str) -> dict[str, Any]:
    return {"environment": {"name": name, "version": "1", "capabilities": [],
                            "environment": {"kernel": "k"}},
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


if __name__ == "__main__":
    unittest.main()
