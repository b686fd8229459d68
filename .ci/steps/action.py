"""Runs the `run:` steps of the composite action (action.yml) here, as a hosted runner
would, since no hosted runner is reachable from this machine: each step's `env:` is
evaluated with the inputs given (their defaults otherwise), `github.action_path` is this
repository, `runner.temp` a temporary directory, `github.job` `local`; `GITHUB_OUTPUT`
(one file per step, read back as `steps.ID.outputs`) and `GITHUB_STEP_SUMMARY` are files.
`actions/cache/restore` and `actions/cache/save` are played here: the path is restored
from and saved to $ACTION_CACHE/KEY (`cache-hit` as GitHub sets it), so two runs show the
miss and the hit.
Another `uses:` step (the artifact upload) cannot run without GitHub and is named as
skipped. A step's `if:` may be `steps.ID.outputs.NAME != 'true'` (or `==`) or
`always()`. Prints what each step left and exits non-zero when a step fails unexpectedly.

Usage: python action.py EXPECT_EXIT [--cache hit|miss] key=value ...
       (EXPECT_EXIT: 0, or "nonzero"; --cache: the cache outcome the run must see)
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    expect, rest = sys.argv[1], sys.argv[2:]
    want_cache = None
    if rest[:1] == ["--cache"]:
        want_cache, rest = rest[1], rest[2:]
    given = dict(a.split("=", 1) for a in rest)
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
    context = {"github.action_path": ROOT, "runner.temp": temp, "github.job": "local",
               "github.run_attempt": "1", "runner.os": platform.system(),
               "runner.arch": platform.machine(),
               **{f"inputs.{k}": v for k, v in inputs.items()}}
    cache_store = os.environ.get("ACTION_CACHE", os.path.join(temp, "cache-store"))
    cache_seen = None

    def condition(step: dict[str, Any]) -> bool:
        cond = str(step.get("if", "")).strip()
        if cond in ("", "always()"):
            return True
        m = re.fullmatch(r"(steps\.[\w-]+\.outputs\.[\w-]+)\s*(!=|==)\s*'([^']*)'", cond)
        if not m:
            sys.exit(f"action.py: cannot evaluate `if: {cond}`")
        value = context.get(m.group(1), "")
        return (value == m.group(3)) == (m.group(2) == "==")

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
        if not condition(step):
            print(f"action.py: skipped `{name}` (if: {step['if']})")
            continue
        if "uses" in step and step["uses"].startswith(("actions/cache/restore@", "actions/cache/save@")):
            path = expand(step["with"]["path"])
            store = os.path.join(cache_store, expand(step["with"]["key"]))
            if step["uses"].startswith("actions/cache/save@"):
                if os.path.isdir(path) and not os.path.isdir(store):
                    shutil.copytree(path, store, symlinks=True)
                print(f"action.py: `{name}`: saved ({os.path.basename(store)})")
                continue
            hit = os.path.isdir(store)
            if hit:
                shutil.copytree(store, path, symlinks=True, dirs_exist_ok=True)
            cache_seen = "hit" if hit else "miss"
            context[f"steps.{step['id']}.outputs.cache-hit"] = "true" if hit else "false"
            print(f"action.py: `{name}`: cache {cache_seen} ({os.path.basename(store)})")
            continue
        if "uses" in step:
            print(f"action.py: skipped `{name}` ({step['uses']} needs GitHub)")
            continue
        if "${{" in step["run"]:
            sys.exit(f"action.py: `{name}` puts an expression inside its script; use env:")
        output = os.path.join(temp, f"output-{step.get('id', 'step')}")
        open(output, "w").close()
        env = dict(os.environ, GITHUB_OUTPUT=output, GITHUB_STEP_SUMMARY=summary,
                   **{k: expand(v) for k, v in (step.get("env") or {}).items()})
        print(f"action.py: running `{name}`", flush=True)
        last = subprocess.run(["bash", "-c", step["run"]], env=env, cwd=ROOT).returncode
        for line in open(output).read().splitlines():
            if "=" in line and "id" in step:
                k, v = line.split("=", 1)
                context[f"steps.{step['id']}.outputs.{k}"] = v
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
    if os.environ.get("ACTION_SUMMARY_COPY") and os.path.exists(summary):
        shutil.copyfile(summary, os.environ["ACTION_SUMMARY_COPY"])
    if want_cache and cache_seen != want_cache:
        sys.exit(f"action.py: FAIL: the cache was a {cache_seen}, expected a {want_cache}")
    if (expect == "0") != (last == 0):
        sys.exit(f"action.py: FAIL: the run exited {last}, expected {expect}")
    print("action.py: as expected")


if __name__ == "__main__":
    main()
