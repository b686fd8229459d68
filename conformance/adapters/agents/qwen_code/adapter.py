#!/usr/bin/env python3
"""Qwen Code (npm `@qwen-code/qwen-code`, pinned by install.sh) as an implementation under
test: the whole agent, driven headless by the scripted model of `../scripted_model.py` on
Gemini's generateContent wire (`../wires/gemini.py`: Qwen Code is Gemini CLI's lineage and
keeps its `gemini` auth type, pointed at 127.0.0.1 by `GOOGLE_GEMINI_BASE_URL`).

Each step is one headless run through `driver.py`, the person's side of Qwen's SDK channel
(`--input-format stream-json`): Qwen sends a `can_use_tool` control request for a call it
would ask about, and the driver answers it as the step says (`if_asked`), so an ask is
seen as an ask. The scenario's setup becomes Qwen's own configuration in `QWEN_HOME` (its
global `.qwen` directory, inside the fixture; README.md has the mapping field by field):
the pattern lists as `permissions.allow/ask/deny` rules in Claude Code's syntax
(`Bash(git push*)`), the safety mode as `--approval-mode`, the hooks as
`hooks.PreToolUse`/`PostToolUse` running `../hook_shim.py` (format `codex`: Claude Code's
answer shape, which Qwen reads). `restricted` (nothing ever prompts) is Qwen's `default`
mode with no channel to ask on: headless, Qwen refuses what it would ask. Qwen's sandboxes
(a container image, or `tools.executionSandbox`) are not used: every run is inside the
core's bubblewrap confinement.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import sys
from typing import Any, Optional

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[4])

from conformance.adapters.agents import agent_adapter as core  # noqa: E402
from conformance.adapters.agents import mapping  # noqa: E402
from conformance.adapters.agents.agent_adapter import (AgentError, Call, Observed, RunResult,  # noqa: E402
                                                      Session, Unsupported)
from conformance.adapters.protocol import Request  # noqa: E402
from conformance.adapters.agents.wires.gemini import GeminiWire  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "driver.py")
VERSION = "0.24.4"
MODEL = "gemini-2.5-flash"
# The protocol's tools as Qwen's (the model's tool names) and as its rules' names.
TOOLS = {"shell": "run_shell_command", "read": "read_file", "write": "write_file", "edit": "edit"}
RULE_TOOLS = {"shell": "Bash", "read": "Read", "write": "Write", "edit": "Edit"}
EVENTS = {"pre_tool_use": "PreToolUse", "post_tool_use": "PostToolUse"}
# The safety mode as Qwen's approval mode, and whether the run has a channel to ask on.
# Qwen's `default` asks about what is not read-only (read-only shell runs unasked);
# `restricted` is `default` with nobody to ask, which Qwen refuses.
MODES: dict[Optional[str], tuple[str, bool]] = {
    None: ("default", True), "balanced": ("default", True), "strict": ("default", True),
    "restricted": ("default", False), "autonomous": ("yolo", True)}
HEADLESS_REFUSAL = "but that permission was declined"
RULE_DENY = "denied by permission rules"
DECLINED = "[Operation Cancelled]"
SHELL = re.compile(r"\nOutput: (?P<out>.*?)\nError: (?P<err>.*?)\nExit Code: (?P<code>\S+)", re.S)


def binary() -> str:
    override = os.environ.get("GATEHOUSE_QWEN_CODE")
    if override:
        return override
    return core.npm_bin("qwen-code", ".bin", "qwen")


def translate_pattern(pattern: str) -> str:
    """A pattern of permissions.md as a Qwen Code rule (Claude Code's syntax, which Qwen
    reads): `shell:cmd=git push*` → `Bash(git push*)`, `shell` → `Bash`,
    `read:path=.env` → `Read(.env)`."""
    tool, conds = mapping.split_pattern(pattern)
    name = RULE_TOOLS.get(tool.lower())
    if name is None:
        raise Unsupported("pattern %r: tool %r has no Qwen Code rule (or is a glob)" % (pattern, tool))
    if not conds:
        return name
    want = "cmd" if name == "Bash" else "path"
    if len(conds) != 1 or conds[0][0].lower() != want:
        raise Unsupported("pattern %r: a Qwen Code rule takes one %s condition" % (pattern, want))
    value = conds[0][1]
    if any(c in value for c in "?[\\"):
        raise Unsupported("pattern %r: a Qwen Code rule takes `*` globs only" % pattern)
    return "%s(%s)" % (name, value)


def translate_matcher(glob: Any) -> Optional[str]:
    return mapping.tool_matcher(glob, TOOLS, "Qwen Code")


def shell_result(text: str) -> tuple[int, str]:
    """(exit, output) from the shell tool's result as Qwen gives it to the model
    (`Command: ...\\nDirectory: ...\\nOutput: ...\\nError: ...\\nExit Code: N\\n...`)."""
    m = SHELL.search(text)
    if m is None:
        return 0, text
    out = m.group("out")
    out = "" if out == "(empty)" else out
    code = m.group("code")
    return (int(code) if re.fullmatch(r"-?\d+", code) else 1), out


class QwenCode(core.Agent):
    name = "qwen-code"
    wire = GeminiWire
    capabilities = ["gate", "permissions", "hooks"]
    file_ops = ("read", "write", "edit")
    known_setup = core.Agent.known_setup | {"agent_file", "settings_file", "safety", "state_dir",
                                            "workspaces", "resume"}

    def __init__(self) -> None:
        self.version = core.version_of([binary(), "--version"], VERSION).strip()

    def check_setup(self, setup: Request) -> None:
        super().check_setup(setup)
        core.refuse_settings_dirs(setup)
        core.refuse_code_grants(setup, "Qwen Code")

    def prepare(self, s: Session) -> None:
        setup = s.setup
        src = mapping.Sources(setup)
        if src.safety not in MODES:
            raise Unsupported("safety %r: no Qwen Code approval mode" % src.safety)
        s.state["mode"], s.state["channel"] = MODES[src.safety]
        if setup.get("asker") == "none":
            # Nobody to ask: Qwen's run with no channel refuses what it would ask, which is
            # the order's deny by `no_asker`, not an ask left unanswered.
            s.state["channel"] = False
        rules: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
        for lst, pattern, _origin in src.patterns():
            rules[lst].append(translate_pattern(pattern))
        for line in setup.get("allow_list") or []:
            rules["allow"].append("Bash(%s)" % line)
        for g in setup.get("grants") or []:
            rules["allow"].append("Bash(%s)" % g["key"] if g["kind"] == "exact" else "Bash(%s *)" % g["key"])
        hooks: dict[str, list[dict[str, Any]]] = {}
        for name, event, matcher, h in mapping.command_hooks(src, EVENTS, "Qwen Code",
                                                             "the adapter maps command hooks"):
            cmd = mapping.shim_command("codex", event, src.safety, h.get("command", ""))
            hook: dict[str, Any] = {"type": "command", "command": cmd}
            if h.get("env"):
                hook["env"] = {str(k): str(v) for k, v in h["env"].items()}
            if h.get("timeout") is not None:
                hook["timeout"] = int(float(h["timeout"]) * 1000)   # Qwen's is in milliseconds
            entry: dict[str, Any] = {"hooks": [hook]}
            m = translate_matcher(matcher)
            if m is not None:
                entry["matcher"] = m
            hooks.setdefault(name, []).append(entry)
        home = setup.get("state_dir") or s.dirs["config"]
        os.makedirs(home, exist_ok=True)
        s.state["qwen_home"] = home
        settings: dict[str, Any] = {
            "permissions": {k: v for k, v in rules.items() if v},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        s.state["pre_hooks"] = bool(hooks.get("PreToolUse"))
        if hooks:
            settings["hooks"] = hooks
        with open(os.path.join(home, "settings.json"), "w") as f:
            json.dump(settings, f, indent=1)

    def env(self, s: Session) -> dict[str, str]:
        e = super().env(s)
        for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DASHSCOPE_API_KEY", "GOOGLE_API_KEY",
                  "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI", "ANTHROPIC_API_KEY"):
            e.pop(k, None)
        e.update(QWEN_HOME=s.state["qwen_home"], GOOGLE_GEMINI_BASE_URL=s.model_url,
                 GEMINI_API_KEY="scripted-model-key", QWEN_CODE_NO_RELAUNCH="1",
                 QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
        return e

    def script(self, s: Session, call: Call) -> list[Any]:
        if call.tool in ("shell", "execute_code"):
            # Qwen Code has no code tool: code runs as a model would run it.
            args: dict[str, Any] = {"command": mapping.shell_line(call)}
            if call.cwd:
                args["directory"] = s.abs_path(call.cwd)
            return [("run_shell_command", args), "done"]
        if call.tool not in TOOLS:
            raise Unsupported("tool %r: Qwen Code has no counterpart" % call.tool)
        path = s.abs_path(call.input["path"])
        read = ("read_file", {"file_path": path})
        if call.tool == "read":
            return [read, "done"]
        # Qwen's edit and write tools refuse a file "not read in this session", before
        # asking: the scripted model reads it first, as a model does, and the adapter
        # reports the last call.
        first = [read] if os.path.lexists(path) else []
        if call.tool == "edit" and not call.input.get("old"):
            raise Unsupported("edit with no old text: Qwen Code's edit tool refuses it before "
                              "asking, and it has no other tool that edits without a match")
        if call.tool == "write":
            return first + [("write_file", {"file_path": path,
                                            "content": call.input.get("content", "")}), "done"]
        return first + [("edit", {"file_path": path, "old_string": call.input.get("old", ""),
                                  "new_string": call.input.get("new", "")}), "done"]

    def command(self, s: Session, call: Call) -> list[str]:
        mode = s.state["mode"]
        if call.approved and mode != "yolo":
            # An approved call (a fence `run`): the person's yes, given up front.
            mode = "yolo"
        qwen = [binary(), "--auth-type", "gemini", "-m", MODEL, "--approval-mode", mode,
                "--chat-recording", "false"]
        for d in (s.setup.get("workspaces") or [])[1:]:
            qwen += ["--include-directories", d]
        if s.state["channel"]:
            argv = [sys.executable, DRIVER, "yes" if call.if_asked == "yes" else "no", "--"] + qwen
        else:
            argv = qwen + ["--output-format", "stream-json", "Do the task."]
        return core.confine(argv, os.path.dirname(os.path.normpath(s.setup["workspace"])))

    def observe(self, s: Session, call: Call, result: RunResult,
                requests: list[dict[str, Any]]) -> Observed:
        uses: list[str] = []
        results: dict[str, dict[str, Any]] = {}
        asked: set[str] = set()
        pending: dict[str, str] = {}
        for line in result.stdout.splitlines():
            if not line.strip().startswith("{"):
                continue
            ev = json.loads(line)
            kind = ev.get("type")
            if kind == "assistant":
                for part in (ev.get("message") or {}).get("content") or []:
                    if isinstance(part, dict) and part.get("type") == "tool_use":
                        uses.append(str(part.get("id")))
            elif kind == "user":
                for part in (ev.get("message") or {}).get("content") or []:
                    if isinstance(part, dict) and part.get("type") == "tool_result":
                        results[str(part.get("tool_use_id"))] = part
            elif kind == "control_request":
                req = ev.get("request") or {}
                if req.get("subtype") == "can_use_tool":
                    pending[str(ev.get("request_id"))] = str(req.get("tool_use_id"))
            elif "answered" in ev:
                asked.add(pending.get(str(ev["answered"]), ""))
        if not uses:
            raise AgentError("Qwen Code made no tool call (exit %s); last stderr:\n%s"
                             % (result.rc, result.last_stderr()))
        part = results.get(uses[-1])
        if part is None:
            raise AgentError("Qwen Code gave the call no result (exit %s); last stderr:\n%s"
                             % (result.rc, result.last_stderr()))
        content = part.get("content")
        text = content if isinstance(content, str) else "".join(
            c.get("text", "") for c in content or [] if isinstance(c, dict))
        was_asked = uses[-1] in asked and not call.approved
        if not part.get("is_error") or "\nExit Code: " in text:
            if call.tool in ("shell", "execute_code"):
                code, output = shell_result(text)
            else:
                code, output = (1 if part.get("is_error") else 0), text
            return Observed(ran=True, exit=code, output=output, asked=was_asked)
        if was_asked:
            return Observed(asked=True, denied=True, by="user", message=text)
        if RULE_DENY in text:
            return Observed(denied=True, by="rule", message=text)
        if HEADLESS_REFUSAL in text:
            return Observed(denied=True, by="mode", message=text)
        if s.state.get("pre_hooks"):
            # A PreToolUse hook's block: Qwen gives the model the hook's reason (its stderr
            # or its `permissionDecisionReason`) and nothing else.
            return Observed(denied=True, by="hook", message=text)
        if call.tool in ("read", "write", "edit"):
            # The tool ran and failed (a missing file, an edit that found nothing).
            return Observed(ran=True, exit=1, output=text)
        return Observed(denied=True, by="mode", message=text)


if __name__ == "__main__":
    core.serve(QwenCode())
