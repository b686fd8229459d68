#!/usr/bin/env bash
# The reusable workflow for implementers (.github/workflows/kernel-matrix.yml, called with
# `workflow_call`) checked without GitHub: actionlint reads it with the other workflows
# (lint-workflows.sh); here its file is checked against SchemaStore's workflow schema
# (check-jsonschema's copy, in the venv under target/ that action.sh uses) and its listing
# step runs as the job would, for each form of its `kernels` input, and must print the
# matrix the `vm` command boots. Nothing is installed system-wide.
set -euo pipefail
cd "$(dirname "$0")/../.."
wf=.github/workflows/kernel-matrix.yml
venv="${CARGO_TARGET_DIR:-target}/ci-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q 'check-jsonschema==0.33.0' 'PyYAML==6.0.2'
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows "$wf"
"$venv/bin/python" - "$wf" <<'PY'
import json, os, subprocess, sys, yaml
wf = yaml.safe_load(open(sys.argv[1]))
on = wf.get("on", wf.get(True))
inputs = on["workflow_call"]["inputs"]
for name in ("impl", "packages", "copies", "filter", "kernels", "users", "gatehouse-ref"):
    assert name in inputs, f"input {name} is missing"
assert inputs["impl"]["required"] is True
step = next(s for s in wf["jobs"]["list"]["steps"] if s.get("id") == "list")
guest = wf["jobs"]["guest"]
assert "${{ matrix.kernel }}" in guest["name"] and "${{ matrix.variant }}" in guest["name"], \
    "one job per kernel and variant"
# Every script reads its inputs from env: never ${{ }} inside `run:`.
for job in wf["jobs"].values():
    for s in job["steps"]:
        assert "${{" not in s.get("run", ""), f"{s.get('name')}: an expression inside run:"
# The listing step, as the job runs it (the suite checked out under gatehouse/).
root = os.getcwd()
for kernels, want in [("all", None), ("ci", None), ("6.1 7.3/userns-off",
                      [{"kernel": "6.1", "variant": "base"}, {"kernel": "7.3", "variant": "userns-off"}])]:
    out_file = os.path.join(root, "target", "kernel-matrix-workflow.out")
    env = dict(os.environ, GH_KERNELS=kernels, GITHUB_OUTPUT=out_file)
    open(out_file, "w").close()
    script = step["run"].replace("gatehouse/vm-images", "vm-images")
    subprocess.run(["bash", "-c", script], env=env, check=True)
    line = open(out_file).read().strip()
    assert line.startswith("matrix="), line
    matrix = json.loads(line[len("matrix="):])
    assert matrix and all(set(m) == {"kernel", "variant"} for m in matrix), matrix
    if want is not None:
        assert matrix == want, (kernels, matrix)
    print(f"kernel-matrix workflow: kernels={kernels!r}: {len(matrix)} job(s)")
    os.remove(out_file)
# A bad selection fails the listing job instead of starting no guest.
bad = subprocess.run(["python3", "vm-images/build.py", "matrix", "--select", "4.19"],
                     capture_output=True, text=True)
assert bad.returncode != 0 and "4.19" in bad.stderr, bad
print("kernel-matrix workflow: schema, inputs and listing step as expected")
PY
