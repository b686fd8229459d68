#!/usr/bin/env python3
"""The guard's cost per call across one session (GUARD-FAIL-3; issue 42, item 4).

Feeds the real `gatehouse guard claude-code` binary the hook JSON Claude Code sends: for
each call a PreToolUse of an allowed `cat notes.txt` (timed) and its PostToolUse (as the
agent sends it after the call ran), N calls in one session, each a fresh hook process as
the agent starts it. Prints the median and the worst wall time of the PreToolUse calls in
a window of 21 calls around call 1, 100 and 1,500 (call 1: the first 21 calls), in wall
time and in CPU time (user + system of the hook process, which a loaded machine moves
much less).

    python3 benches/guard_calls.py [GATEHOUSE] [CALLS]   (default target/release/gatehouse, 1500)
"""

from __future__ import annotations
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

program = sys.argv[1] if len(sys.argv) > 1 else "target/release/gatehouse"
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
root = tempfile.mkdtemp(prefix="guard-calls-")
ws = os.path.join(root, "ws")
os.makedirs(ws)
open(os.path.join(ws, "notes.txt"), "w").write("a\n")
config = os.path.join(root, "guard.toml")
open(config, "w").write('state-dir = %s\n' % json.dumps(os.path.join(root, "state")))
env = dict(os.environ, GATEHOUSE_GUARD_CONFIG=config, HOME=root)

def hook(event: str, i: int) -> tuple[float, float]:
    call: dict[str, Any] = {"session_id": "bench", "transcript_path": "/tmp/t.jsonl", "cwd": ws,
            "permission_mode": "default", "hook_event_name": event, "tool_name": "Bash",
            "tool_input": {"command": "cat notes.txt", "description": "d"},
            "tool_use_id": "c%d" % i}
    if event == "PostToolUse":
        call["tool_response"] = {"stdout": "a\n"}
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([program, "guard", "claude-code"], input=json.dumps(call).encode(),
                       capture_output=True, env=env, cwd=ws)
    elapsed = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("call %d: exit %d: %s" % (i, p.returncode, p.stderr.decode()))
    return elapsed, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime

times = []
for i in range(1, calls + 1):
    times.append(hook("PreToolUse", i))
    hook("PostToolUse", i)

for at in (1, 100, 1500):
    if at > calls:
        continue
    lo = max(0, at - 11) if at > 1 else 0  # calls at-10 .. at+10
    window = times[lo:lo + 21]
    wall = [w for w, _ in window]
    cpu = [c for _, c in window]
    print("call %5d: wall median %.1f ms, worst %.1f ms; CPU median %.2f ms, worst %.2f ms (%d calls)" % (
        at, statistics.median(wall) * 1e3, max(wall) * 1e3,
        statistics.median(cpu) * 1e3, max(cpu) * 1e3, len(window)))
journal = os.path.join(root, "state")
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(journal) for f in fs)
print("state directory after %d calls: %d bytes" % (calls, size))
