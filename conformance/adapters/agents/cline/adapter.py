#!/usr/bin/env python3
"""Cline CLI (npm `cline`, pinned by install.sh) as an implementation under test: the
whole agent, driven headless (`cline --json --config CFG --data-dir DATA -c WORKSPACE
[--auto-approve false] "Do the task."`) by the scripted model of `../scripted_model.py` on
the OpenAI-compatible chat completions wire (Cline's `openai-compatible` provider, written
into its `providers.json` with the model's 127.0.0.1 address, as `cline auth -p openai -b
URL` writes it).

The scenario's setup becomes Cline's own configuration, all inside the fixture (README.md
has the mapping field by field): the safety mode as `--auto-approve` (Cline has one switch
for every tool: auto-approve on, its default, or ask about every call, which headless is a
refusal the model is told about: "requires approval in a TTY session"); a pattern that
names a whole tool with no condition, in the deny list, as `disabledTools` in its global
settings (`CLINE_GLOBAL_SETTINGS_PATH`; Cline then offers the model no such tool); the
agent file's hooks as Cline's hook files named by event (`PreToolUse`, `PostToolUse`) in
the configuration directory's `hooks/`, each running `../hook_shim.py` (format `cline`).
Cline has no rule that names a command or a path, no per-tool approval, no matcher on a
hook and no per-hook timeout: those are `unsupported`. The person's "yes" is a run with
auto-approval on. Cline has no sandbox: every run is inside the core's bubblewrap
confinement.
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
from conformance.adapters.agents.agent_adapter import Call, Observed, RunResult, Session, Unsupported  # noqa: E402
from conformance.adapters.protocol import Request  # noqa: E402
from conformance.adapters.agents.wires.openai_chat import OpenAIChatWire  # noqa: E402

VERSION = "3.0.65"
API_KEY = "scripted-model-key"
# The protocol's tools as Cline's (the model's tool names).
TOOLS = {"shell": "run_commands", "read": "read_files", "write": "editor", "edit": "editor"}
EVENTS = {"pre_tool_use": "PreToolUse", "post_tool_use": "PostToolUse"}
# Cline reads every file of a hooks directory named EVENT or EVENT.EXT (these extensions),
# runs a file by its shebang, and runs an event's files one after another in the order of
# their paths: the n-th hook of an event is the file with the n-th of these names.
HOOK_SUFFIXES = sorted(["", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts",
                        ".py", ".ps1"])
# The safety mode as auto-approval: Cline asks about every tool or about none.
MODES: dict[Optional[str], bool] = {
    None: True, "autonomous": True, "strict": False, "balanced": False, "restricted": False}
ASKED = "requires approval in a TTY session"
NO_TOOL = "Model tried to call unavailable tool"
BY_POLICY = "is disabled by policy"
BY_HOOK = "blocked by a runtime hook"
EXIT = re.compile(r"^\[Command exited with code (-?\d+)\]\n?")


def binary() -> str:
    override = os.environ.get("GATEHOUSE_CLINE")
    if override:
        return override
    return core.npm_bin("cline", "@cline", "cli-linux-x64", "bin", "cline")


def disabled_tool(pattern: str) -> str:
    """A deny pattern as the Cline tool it disables: only a whole tool, with no condition
    (`shell` → `run_commands`); anything narrower raises Unsupported."""
    tool, conds = mapping.split_pattern(pattern)
    name = TOOLS.get(tool.lower())
    if conds or name is None:
        raise Unsupported("pattern %r: Cline's only rule disables a whole tool "
                          "(`disabledTools`); it has none that names a command or a path" % pattern)
    # One tool (`editor`) writes and edits: disabling it for one disables both.
    return name


def matcher_tools(glob: Any) -> Optional[str]:
    """A hook matcher as the Cline tool names the shim lets the hook see, `|`-separated;
    None for every tool."""
    return mapping.tool_matcher(glob, TOOLS, "Cline")


class Cline(core.Agent):
    name = "cline"
    wire = OpenAIChatWire
    capabilities = ["gate", "permissions", "hooks"]
    file_ops = ("read", "write", "edit")
    known_setup = core.Agent.known_setup | {"agent_file", "settings_file", "safety", "state_dir"}

    def __init__(self) -> None:
        self.version = core.version_number([binary(), "--version"], VERSION)

    def check_setup(self, setup: Request) -> None:
        super().check_setup(setup)
        core.refuse_settings_dirs(setup)

    def prepare(self, s: Session) -> None:
        setup = s.setup
        src = mapping.Sources(setup)
        if src.safety not in MODES:
            raise Unsupported("safety %r: no Cline counterpart" % src.safety)
        auto = MODES[src.safety]
        disabled: list[str] = []
        for lst, pattern, _origin in src.patterns():
            if lst != "deny":
                raise Unsupported("%s pattern %r: Cline has no allow or ask rule (one switch "
                                  "auto-approves every tool or none)" % (lst, pattern))
            name = disabled_tool(pattern)
            if name not in disabled:
                disabled.append(name)
        if setup.get("allow_list"):
            raise Unsupported("allow_list: Cline has no list of allowed commands")
        if setup.get("grants"):
            raise Unsupported("grants: Cline saves no standing permission for a command")
        config = setup.get("state_dir") or s.dirs["config"]
        data = os.path.join(config, "data")
        os.makedirs(os.path.join(data, "settings"), exist_ok=True)
        s.state.update(config=config, data=data, auto=auto, restricted=src.safety == "restricted")
        # The provider, as `cline auth -p openai -b URL` writes it (a file without
        # `updatedAt` is rewritten by Cline without its base URL).
        with open(os.path.join(data, "settings", "providers.json"), "w") as f:
            json.dump({"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
                       "providers": {"openai-compatible": {
                           "settings": {"provider": "openai-compatible", "apiKey": API_KEY,
                                        "model": "scripted", "baseUrl": s.model_url + "/v1"},
                           "updatedAt": "2026-12-07T00:00:00.000Z", "tokenSource": "manual"}}}, f)
        settings = os.path.join(config, "global-settings.json")
        with open(settings, "w") as f:
            json.dump({"telemetryOptOut": True, "autoUpdateEnabled": False,
                       "disabledTools": disabled}, f)
        s.state["settings"] = settings
        self._write_hooks(s, src, config)

    def _write_hooks(self, s: Session, src: mapping.Sources, config: str) -> None:
        per_event: dict[str, list[str]] = {}
        for name, event, matcher, h in mapping.command_hooks(src, EVENTS, "Cline",
                                                             "Cline runs commands only"):
            if h.get("timeout") is not None:
                raise Unsupported("hooks.%s timeout: Cline has no per-hook timeout (one of 120 s "
                                  "for every tool hook)" % event)
            env = dict(h.get("env") or {})
            tools = matcher_tools(matcher)
            if tools is not None:
                env["GATEHOUSE_HOOK_TOOLS"] = tools
            cmd = mapping.shim_command("cline", event, src.safety, h.get("command", ""), env)
            per_event.setdefault(name, []).append(cmd)
        if not per_event:
            return
        hooks = os.path.join(config, "hooks")
        os.makedirs(hooks, exist_ok=True)
        for name, cmds in per_event.items():
            if len(cmds) > len(HOOK_SUFFIXES):
                raise Unsupported("hooks: %d %s hooks; Cline reads at most %d from one directory"
                                  % (len(cmds), name, len(HOOK_SUFFIXES)))
            for suffix, cmd in zip(HOOK_SUFFIXES, cmds):
                path = os.path.join(hooks, name + suffix)
                with open(path, "w") as f:
                    f.write("#!/bin/sh\nexec %s\n" % cmd)
                os.chmod(path, 0o755)

    def env(self, s: Session) -> dict[str, str]:
        e = super().env(s)
        for k in list(e):
            if k.startswith("CLINE_"):
                e.pop(k)
        e.update(CLINE_GLOBAL_SETTINGS_PATH=s.state["settings"],
                 CLINE_HOOKS_LOG_PATH=os.path.join(s.dirs["tmp"], "hooks.jsonl"))
        return e

    def script(self, s: Session, call: Call) -> list[Any]:
        if call.tool in ("shell", "execute_code"):
            line = mapping.shell_line(call, cd_in=s.setup["workspace"])
            return [("run_commands", {"commands": [line]}), "done"]
        if call.tool not in TOOLS:
            raise Unsupported("tool %r: Cline has no counterpart" % call.tool)
        path = s.abs_path(call.input["path"])
        if call.tool == "read":
            return [("read_files", {"files": [{"path": path}]}), "done"]
        # Cline's editor creates a file that does not exist, and replaces text in one that
        # does; it refuses to overwrite a file or to edit with no old text ("already exists,
        # but `old_text` was omitted"). It has no tool that overwrites a file.
        if call.tool == "write":
            if os.path.lexists(path):
                raise Unsupported("write to an existing file: Cline's editor tool refuses to "
                                  "overwrite one, and it has no tool that does")
            return [("editor", {"path": path, "new_text": call.input.get("content", "")}), "done"]
        if not call.input.get("old"):
            raise Unsupported("edit with no old text: Cline's editor needs the text it replaces")
        return [("editor", {"path": path, "old_text": call.input.get("old", ""),
                            "new_text": call.input.get("new", "")}), "done"]

    def command(self, s: Session, call: Call) -> list[str]:
        auto = s.state["auto"] or call.if_asked == "yes" or call.approved
        argv = [binary(), "--json", "--config", s.state["config"], "--data-dir", s.state["data"],
                "-c", s.setup["workspace"], "--auto-approve", "true" if auto else "false",
                "Do the task."]
        return core.confine(argv, os.path.dirname(os.path.normpath(s.setup["workspace"])))

    def observe(self, s: Session, call: Call, result: RunResult,
                requests: list[dict[str, Any]]) -> Observed:
        started: list[str] = []
        ended: dict[str, Any] = {}
        hooked = False
        finish = None
        for line in result.stdout.splitlines():
            if not line.strip():
                continue
            ev = json.loads(line)   # not JSON: the core reports it, with stderr
            if ev.get("type") == "hook_event" and ev.get("hookEventName") == "tool_call":
                hooked = True
            if ev.get("type") == "run_result":
                finish = ev.get("finishReason")
            inner = ev.get("event") or {}
            if ev.get("type") != "agent_event" or inner.get("contentType") != "tool":
                continue
            cid = str(inner.get("toolCallId"))
            if inner.get("type") == "content_start":
                started.append(cid)
            elif inner.get("type") == "content_end":
                ended[cid] = inner
                if cid not in started:
                    started.append(cid)
        if not started:
            if hooked and finish == "aborted":
                # A PreToolUse hook's `cancel`: Cline ends the run before the call starts.
                return core.Observed(denied=True, by="hook", message=self._stop_reason(s))
            raise core.AgentError("Cline made no tool call (exit %s, %s); last stderr:\n%s"
                                  % (result.rc, finish, result.last_stderr()))
        end = ended.get(started[-1])
        if end is None:
            if finish == "aborted":
                # The call started and the run was ended around it: a PostToolUse hook's
                # cancel comes after the result; nothing else ends a run mid-call here.
                return core.Observed(denied=True, by="hook", message=self._stop_reason(s))
            raise core.AgentError("Cline gave the call no result (exit %s); last stderr:\n%s"
                                  % (result.rc, result.last_stderr()))
        return self._read_output(s, end.get("output"))

    @staticmethod
    def _stop_reason(s: Session) -> str:
        """Why a hook ended the run: the `errorMessage` of the last `ControlledStopError`
        in Cline's own log (`DATA/logs/cline.log`, one JSON object a line), which is where
        Cline keeps a hook's cancel reason (its `--json` output does not carry it)."""
        reason = "cancelled by a hook"
        try:
            with open(os.path.join(s.state["data"], "logs", "cline.log"), errors="replace") as f:
                for text in f:
                    if "ControlledStopError" not in text:
                        continue
                    try:
                        entry = json.loads(text)
                    except ValueError:
                        continue
                    if entry.get("errorName") == "ControlledStopError" and entry.get("errorMessage"):
                        reason = str(entry["errorMessage"])
        except OSError:
            pass
        return reason

    def _read_output(self, s: Session, output: Any) -> Observed:
        if isinstance(output, dict) and "query" not in output:
            message = str(output.get("error", ""))
            if ASKED in message:
                if s.setup.get("asker") == "none" or s.state.get("restricted"):
                    # Nobody to ask (no asker), or the mode that denies what would ask
                    # (`restricted`, run with nobody to ask on purpose): Cline refused
                    # without asking anyone, which is that deny, not an ask left unanswered.
                    return core.Observed(denied=True, by="mode", message=message)
                return core.Observed(asked=True, denied=True, by="user", message=message)
            if NO_TOOL in message or BY_POLICY in message:
                return core.Observed(denied=True, by="rule", message=message)
            if BY_HOOK in message:
                return core.Observed(denied=True, by="hook", message=message)
            return core.Observed(denied=True, by="mode", message=message)
        item = output[-1] if isinstance(output, list) and output else output
        if not isinstance(item, dict):
            raise core.AgentError("Cline's tool result is not understood: %r" % (output,))
        text = str(item.get("result") or "")
        if item.get("success"):
            return core.Observed(ran=True, exit=0, output=text)
        m = EXIT.match(text)
        if m:
            return core.Observed(ran=True, exit=int(m.group(1)), output=text[m.end():])
        # The tool ran and failed (a missing file, an edit that found nothing).
        return core.Observed(ran=True, exit=1, output=text or str(item.get("error") or ""))


if __name__ == "__main__":
    core.serve(Cline())
