"""Runs the `run:` steps of the composite action (action.yml) here, as a hosted runner
would, since no hosted runner is reachable from this machine: each step's `env:` is
evaluated with the inputs given (their defaults otherwise), `github.action_path` is this
repository and `runner.temp` a temporary directory; `GITHUB_OUTPUT` and
`GITHUB_STEP_SUMMARY` are files. A `uses:` step (the artifact upload) cannot run without
GitHub and is named as skipped. Prints what each step left and exits non-zero when a step
fails unexpectedly.

Usage: python action.py EXPECT_EXIT key=value ...   (EXPECT_EXIT: 0, or "nonzero")
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from typing import Any

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    expect, given = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
    action = yaml.safe_load(open(os.path.join(ROOT, "action.yml")))
    unknown = set(given) - set(action["inputs"])
    if unknown:
        sys.exit(f"action.py: unknown input(s) {sorted(unknown)}")
    missing = [k for k, v in action["inputs"].items() if v.get("required") and k not in given]
    if missing:
        sys.exit(f"action.py: required input(s) missing: {missing}")
    inputs = {k: given.get(k, v.get("default", "")) for k, v in action["inputs"].items()}
    temp = tempfile.mkdtemp(prefix="gatehouse-action-")
    output, summary = os.path.join(temp, "output"), os.path.join(temp, "summary.md")
    context = {"github.action_path": ROOT, "runner.temp": temp,
               **{f"inputs.{k}": v for k, v in inputs.items()}}

    def expand(value: Any) -> str:
        def one(m: re.Match[str]) -> str:
            key = m.group(1).strip()
            if key not in context:
                sys.exit(f"action.py: action.yml uses ${{{{ {key} }}}}, which this script cannot give")
            return context[key]
        return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", one, str(value))

    last = 0
    for step in action["runs"]["steps"]:
        name = step.get("name", step.get("id", "?"))
        if "uses" in step:
            print(f"action.py: skipped `{name}` ({step['uses']} needs GitHub)")
            continue
        if "${{" in step["run"]:
            sys.exit(f"action.py: `{name}` puts an expression inside its script; use env:")
        env = dict(os.environ, GITHUB_OUTPUT=output, GITHUB_STEP_SUMMARY=summary,
                   **{k: expand(v) for k, v in (step.get("env") or {}).items()})
        print(f"action.py: running `{name}`", flush=True)
        last = subprocess.run(["bash", "-c", step["run"]], env=env, cwd=ROOT).returncode
        if last != 0:
            print(f"action.py: `{name}` exited {last}")
            break
    reports = os.path.join(ROOT, inputs["reports"])
    made = sorted(os.listdir(reports)) if os.path.isdir(reports) else []
    print(f"action.py: reports in {inputs['reports']}: {made}; summary "
          f"{os.path.getsize(summary) if os.path.exists(summary) else 0} bytes")
    wanted = {"report.md", "report.json", "junit.xml"}
    if not wanted <= set(made):
        sys.exit(f"action.py: FAIL: the reports {sorted(wanted - set(made))} are missing")
    if not os.path.exists(summary) or os.path.getsize(summary) == 0:
        sys.exit("action.py: FAIL: nothing was written to the job summary")
    if (expect == "0") != (last == 0):
        sys.exit(f"action.py: FAIL: the run exited {last}, expected {expect}")
    print("action.py: as expected")


if __name__ == "__main__":
    main()
