#!/usr/bin/env python3
"""Runs one hook of a scenario's agent file as an agent's own hook, translating only the
JSON shapes (used by the Codex CLI, Gemini CLI, Copilot CLI, Qwen Code and Cline CLI adapters;
Claude Code reads the scenario's hooks as they are).

    hook_shim.py FORMAT EVENT SAFETY -- COMMAND

The agent starts this program where its configuration names a hook; it reads the agent's
hook input on stdin, gives the scenario's hook (`sh -c COMMAND`, in the same process
group, so that whatever the agent does to the shim's group it does to the hook) the
object hooks.md section 3 describes (`hook_event_name`, `tool_name` `shell`, `tool_input`
`{"cmd": ...}`, `cwd`, `session_id`, `tool_use_id`, `safety_policy`, and the agent's own
object under `agent_input`), and passes back what the hook did:

- its exit status unchanged (2 stays a block, 1 stays a crash, a signal is re-raised on
  the shim), with its stderr;
- on exit 0, its stdout translated into the agent's answer when it is one JSON object
  holding a decision or a rewritten input (the seed's `permission_decision`,
  `hook_specific_output`, or Claude Code's `hookSpecificOutput`); any other stdout
  (empty, `{}`, garbage) is passed through byte for byte, so the agent meets it as it is.

FORMAT `codex` answers Claude Code's shape (`hookSpecificOutput.permissionDecision`,
`updatedInput` as `{"command": ...}`), which Codex reads; `gemini` answers Gemini CLI's
(`{"decision", "reason", "hookSpecificOutput": {"tool_input": {"command": ...}}}`);
`copilot` answers GitHub Copilot CLI's (`{"permissionDecision", "permissionDecisionReason",
"modifiedArgs": {"command": ...}}`), whose input carries the call as `toolArgs`;
`cline` answers Cline CLI's (`{"cancel": true, "errorMessage"}` for a deny, `{"review":
true}` for an ask, `{"overrideInput": {"commands": [...]}}` for a rewritten command), whose
input carries the call as `tool_call` (`tool_result` after it). Cline reads no exit status
and has no matcher, so for `cline` the shim also answers a hook's exit 2 (a block) as
`cancel` with the hook's stderr as the message, and, when `GATEHOUSE_HOOK_TOOLS` names
Cline tools (`run_commands|editor`), runs the hook only for those.
Standard library only.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any, Optional

# Looked up with whatever JSON value the agent sent as its event's name.
EVENTS: dict[Any, str] = {"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use",
                          "BeforeTool": "pre_tool_use", "AfterTool": "post_tool_use"}


def gatehouse_input(agent_in: dict[str, Any], event: str, safety: str) -> dict[str, Any]:
    ti = agent_in.get("tool_input") if isinstance(agent_in, dict) else None
    if ti is None and isinstance(agent_in, dict):
        ti = agent_in.get("toolArgs")   # Copilot CLI's preToolUse input
    cline_call = cline_call_of(agent_in)
    if ti is None and cline_call is not None:
        ti = cline_call.get("input")
    cmd = ti.get("command") if isinstance(ti, dict) else None
    if cmd is None and isinstance(ti, dict) and isinstance(ti.get("commands"), list) and ti["commands"]:
        cmd = ti["commands"][0]   # Cline's run_commands
    out = {"agent_name": "root", "cwd": agent_in.get("cwd", os.getcwd()),
           "hook_event_name": event, "safety_policy": safety,
           "session_id": agent_in.get("session_id"), "tool_name": "shell",
           "tool_input": {"cmd": cmd} if cmd is not None else ti,
           "tool_use_id": agent_in.get("tool_use_id"), "agent_input": agent_in}
    if "tool_response" in agent_in:
        out["tool_response"] = agent_in["tool_response"]
    elif isinstance(agent_in.get("tool_result"), dict):
        out["tool_response"] = agent_in["tool_result"].get("output")
    return out


def cline_call_of(agent_in: Any) -> Optional[dict[str, Any]]:
    """Cline's call in its hook input (`tool_call` before it runs, `tool_result` after)."""
    if not isinstance(agent_in, dict):
        return None
    for key in ("tool_call", "tool_result"):
        if isinstance(agent_in.get(key), dict):
            call: dict[str, Any] = agent_in[key]
            return call
    return None


def decision_of(ans: dict[str, Any]) -> Optional[tuple[Any, Any, Any]]:
    """(decision, reason, updated_input) from any of the accepted shapes, or None."""
    for node in (ans, ans.get("hook_specific_output"), ans.get("hookSpecificOutput")):
        if not isinstance(node, dict):
            continue
        d = node.get("permission_decision") or node.get("permissionDecision")
        r = node.get("permission_decision_reason") or node.get("permissionDecisionReason")
        u = node.get("updated_input") or node.get("updatedInput")
        if d or u:
            return d, r, u
    return None


# The keys an answer of each format names the decision, the reason and the rewritten call by,
# and the rewritten call's shape (the command given): copilot's, codex's (inside its
# `hookSpecificOutput`) and gemini's (any other format but cline's, which has no such keys).
ANSWER_KEYS: dict[str, tuple[str, str, str, Callable[[Any], Any]]] = {
    "copilot": ("permissionDecision", "permissionDecisionReason", "modifiedArgs",
                lambda cmd: {"command": cmd}),
    "codex": ("permissionDecision", "permissionDecisionReason", "updatedInput",
              lambda cmd: {"command": cmd}),
    "gemini": ("decision", "reason", "hookSpecificOutput", lambda cmd: {"tool_input": {"command": cmd}}),
}


def translate(fmt: str, ans: dict[str, Any]) -> Optional[dict[str, Any]]:
    found = decision_of(ans)
    if found is None:
        return None
    d, r, u = found
    cmd = u.get("cmd", u.get("command")) if isinstance(u, dict) else None
    if fmt == "cline":
        out_k: dict[str, Any] = {}
        if d == "deny":
            out_k.update(cancel=True, errorMessage=r or "denied by a hook")
        elif d == "ask":
            out_k["review"] = True
        if cmd is not None:
            out_k["overrideInput"] = {"commands": [cmd]}
        return out_k
    decision, reason, rewritten, shape = ANSWER_KEYS.get(fmt, ANSWER_KEYS["gemini"])
    out: dict[str, Any] = {"hookEventName": "PreToolUse"} if fmt == "codex" else {}
    if d:
        out[decision] = d
    if r:
        out[reason] = r
    if cmd is not None:
        out[rewritten] = shape(cmd)
    return {"hookSpecificOutput": out} if fmt == "codex" else out


def main() -> None:
    fmt, event, safety, dashdash, command = sys.argv[1:6]
    raw = sys.stdin.read()
    try:
        agent_in = json.loads(raw)
    except ValueError:
        agent_in = {}
    event = EVENTS.get(agent_in.get("hook_event_name"), event) if isinstance(agent_in, dict) else event
    if fmt == "cline":
        tools = os.environ.pop("GATEHOUSE_HOOK_TOOLS", "")
        call = cline_call_of(agent_in)
        if tools and (call is None or call.get("name") not in tools.split("|")):
            sys.exit(0)   # the hook's matcher does not name this tool: the hook is not run
    data = json.dumps(gatehouse_input(agent_in if isinstance(agent_in, dict) else {}, event, safety)) + "\n"
    p = subprocess.Popen(["sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE if fmt == "cline" else None)
    err = b""
    try:
        out, err_or_none = p.communicate(data.encode())
        err = err_or_none or b""
    except BrokenPipeError:
        assert p.stdout is not None  # stdout=PIPE
        out = p.stdout.read()
        err = p.stderr.read() if p.stderr is not None else b""
        p.wait()
    if fmt == "cline":
        sys.stderr.buffer.write(err)
        sys.stderr.flush()
        if p.returncode == 2:
            # A block, which Cline can only be told in JSON.
            reason = err.decode("utf-8", "replace").strip() or "blocked by a hook (exit 2)"
            sys.stdout.write(json.dumps({"cancel": True, "errorMessage": reason}))
            sys.stdout.flush()
            sys.exit(2)
    if p.returncode < 0:
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
        signal.signal(-p.returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -p.returncode)
    if p.returncode == 0:
        try:
            ans = json.loads(out)
        except ValueError:
            ans = None
        new = translate(fmt, ans) if isinstance(ans, dict) else None
        if new is not None:
            out = json.dumps(new).encode()
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()
