#!/usr/bin/env python3
"""Gemini CLI (npm `@google/gemini-cli`, pinned by install.sh) as an implementation under
test: the whole agent, driven headless (`gemini -p ... -o stream-json`) by the scripted
model of `../scripted_model.py` on Gemini's generateContent wire (`../wires/gemini.py`).

Each step is one headless run: the scripted model calls Gemini's shell tool
(`run_shell_command {command}`), Gemini applies its policy engine, its approval mode, its
BeforeTool hooks and its tool sandbox, and the adapter reads the outcome from the stream:
the `tool_result` event's `status` (`success` or `error`) and `error.type`
(`policy_violation`, `tool_not_registered`, ...), and the function response the model was
given. The scenario's setup becomes Gemini's own configuration in a `GEMINI_CLI_HOME`
inside the fixture (README.md has the mapping field by field): patterns, grants and the
allow list as policy rules in `.gemini/policies/gatehouse.toml`, the safety mode as
`--approval-mode`, the hooks as `hooks.BeforeTool`/`AfterTool` running `../hook_shim.py`,
the fence policy as `security.toolSandboxing` (Gemini's bubblewrap sandbox per tool call).

Gemini CLI has no headless way to ask: a call its policy would ask about ends in an error
("requires user confirmation, which is not supported in non-interactive mode"), which is
reported as `deny` (asked: false), and an `answer` of `once` runs the call again with the
same configuration, where it is refused again. Where the tool sandbox is off, the agent
runs inside the core's bubblewrap confinement.
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
from conformance.adapters.agents.wires.gemini import GeminiWire  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

VERSION = "0.61.0"
MODEL = "gemini-2.5-flash"
# The safety mode as Gemini's approval mode. Headless, `default` refuses every call it
# would confirm (and does not offer the shell tool at all); only `yolo` runs one.
MODES = {None: "default", "strict": "default", "balanced": "default", "restricted": "default",
         "autonomous": "yolo"}
EVENTS = {"pre_tool_use": "BeforeTool", "tool_input_transform": "BeforeTool",
          "post_tool_use": "AfterTool"}
DECISIONS = {"allow": "allow", "ask": "ask_user", "deny": "deny"}
# Policy priorities: a deny outranks an ask outranks an allow, whatever their order
# (PERM-SRC-1, -3); all sit above Gemini's own mode rules.
PRIORITY = {"deny": 900, "ask": 800, "allow": 700}


def binary() -> str:
    override = os.environ.get("GATEHOUSE_GEMINI")
    if override:
        return override
    return core.npm_bin("gemini-cli", ".bin", "gemini")


def toml_rule(decision: str, priority: int, prefix: Optional[str] = None,
              regex: Optional[str] = None) -> str:
    out = ['[[rule]]', 'toolName = "run_shell_command"']
    if prefix is not None:
        out.append("commandPrefix = %s" % json.dumps(prefix))
    if regex is not None:
        out.append("commandRegex = %s" % json.dumps(regex))
    out += ["decision = %s" % json.dumps(decision), "priority = %d" % priority, ""]
    return "\n".join(out)


class GeminiCli(core.ShellAgent):
    name = "gemini-cli"
    wire = GeminiWire
    label = "Gemini CLI"
    sandbox = "Gemini CLI's tool sandbox"
    extra_workspaces = False

    def __init__(self, guard: Optional[str] = None) -> None:
        self.version = core.version_of([binary(), "--version"], VERSION).split(" ")[-1]
        # --guard: Gemini CLI with `gatehouse guard gemini` as its BeforeTool hook: the
        # library decides every shell call and runs what it allows in `gatehouse exec`;
        # Gemini's tool sandbox is off and the agent file's hooks are the library's.
        self.use_guard(guard)

    def prepare(self, s: Session) -> None:
        setup = s.setup
        gdir = os.path.join(s.dirs["config"], ".gemini")
        os.makedirs(os.path.join(gdir, "policies"), exist_ok=True)
        src = mapping.Sources(setup)
        if src.safety not in MODES and not self.guard:
            raise Unsupported("safety %r: no Gemini CLI approval mode" % src.safety)
        s.state["mode"] = MODES.get(src.safety, "yolo")
        if self.guard:
            # Headless, Gemini's other modes do not offer the shell tool at all, so no call
            # would reach the hook: the guard decides in its place, as a person who installs
            # it for headless runs has Gemini do. Gemini's own policy rules still apply.
            s.state["mode"] = "yolo"
        rules: list[str] = []
        for lst, pattern, _origin in src.patterns():
            try:
                prefix = " ".join(mapping.shell_prefix(pattern))
            except Unsupported:
                if self.guard:
                    continue   # guarded, the library applies the pattern Gemini cannot say
                raise
            rules.append(toml_rule(DECISIONS[lst], PRIORITY[lst], prefix=prefix))
        for g in setup.get("grants") or []:
            if g["kind"] == "family":
                rules.append(toml_rule("allow", PRIORITY["allow"], prefix=g["key"]))
            else:
                rules.append(toml_rule("allow", PRIORITY["allow"], regex=re.escape(g["key"]) + '"'))
        for line in setup.get("allow_list") or []:
            rules.append(toml_rule("allow", PRIORITY["allow"], regex=re.escape(line) + '"'))
        with open(os.path.join(gdir, "policies", "gatehouse.toml"), "w") as f:
            f.write("\n".join(rules))

        hooks: dict[str, list[dict[str, Any]]] = {}
        for name, event, matcher, h in ([] if self.guard else mapping.command_hooks(
                src, EVENTS, "Gemini CLI", "Gemini CLI runs commands only")):
            cmd = mapping.shim_command("gemini", event, src.safety, h.get("command", ""), h.get("env"))
            hook: dict[str, Any] = {"type": "command", "command": cmd}
            if h.get("timeout") is not None:
                hook["timeout"] = int(h["timeout"]) * 1000
            entry: dict[str, Any] = {"hooks": [hook]}
            shell = mapping.shell_matcher(matcher, "run_shell_command", "Gemini CLI's only shell "
                                          "tool is run_shell_command")
            if shell is not None:
                entry["matcher"] = shell
            hooks.setdefault(name, []).append(entry)

        policy = setup.get("fence_policy")
        s.state["sandbox"] = policy in ("required", "degraded") and not self.guard
        settings: dict[str, Any] = {
            "security": {"auth": {"selectedType": "gemini-api-key"},
                         "toolSandboxing": s.state["sandbox"]},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        if hooks:
            settings["hooks"] = hooks
        with open(os.path.join(gdir, "settings.json"), "w") as f:
            json.dump(settings, f, indent=1)
        if self.guard:
            self.install_guard(s)

    def install_guard(self, s: Session) -> None:
        """Installs the hook with `gatehouse guard install gemini`, which keeps the settings
        written above. Gemini reads its user settings from `GEMINI_CLI_HOME/.gemini`, which
        is the guard's `--user` scope with `HOME` set to that directory (`--project` would
        write `.gemini/` into the workspace, where the scenario's checks see it)."""
        core.install_guard(s, s.setup.get("safety"), "gemini", {"HOME": s.dirs["config"]}, "--user")

    def env(self, s: Session) -> dict[str, str]:
        e = super().env(s)
        e.update(GEMINI_CLI_HOME=s.dirs["config"], GOOGLE_GEMINI_BASE_URL=s.model_url,
                 GEMINI_API_KEY="scripted-model-key", GEMINI_TELEMETRY_ENABLED="false",
                 GEMINI_CLI_NO_RELAUNCH="1")
        if self.guard:
            e["GATEHOUSE_GUARD_CONFIG"] = s.state["guard_config"]
        for k in ("GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI"):
            e.pop(k, None)
        return e

    def script(self, s: Session, call: Call) -> list[Any]:
        if call.tool not in ("shell", "execute_code"):
            raise Unsupported("tool %r: the adapter maps Gemini CLI's shell tool only" % call.tool)
        # Gemini CLI has no code tool: code runs as a model would run it, `python3 -c`.
        line = mapping.shell_line(call)
        args = {"command": line}
        s.state["line"] = line
        if call.cwd:
            args["dir_path"] = s.abs_path(call.cwd)
        return [("run_shell_command", args), "done"]

    def command(self, s: Session, call: Call) -> list[str]:
        # Guarded, an approved call (a fence `run`): the person approves the line the only
        # way this agent's guard takes, in its allow list, for this run.
        self.approve_in_guard(s, call)
        mode = "yolo" if call.approved else s.state["mode"]
        argv = [binary(), "--skip-trust", "-m", MODEL, "-o", "stream-json",
                "--approval-mode", mode, "-p", "Do the task."]
        if s.state["sandbox"] or self.guard:
            return argv   # its tool sandbox, or the guard's `gatehouse exec`, holds the call
        return core.confine(argv, os.path.dirname(os.path.normpath(s.setup["workspace"])))

    def observe_run(self, s: Session, call: Call, result: RunResult,
                 requests: list[dict[str, Any]]) -> Observed:
        events = [json.loads(line) for line in result.stdout.splitlines()
                  if line.strip().startswith("{")]
        uses = [e for e in events if e.get("type") == "tool_use"]
        res = [e for e in events if e.get("type") == "tool_result"]
        if not uses or not res:
            raise AgentError("Gemini CLI gave the scripted call no result (exit %s); last stderr:\n%s"
                             % (result.rc, result.last_stderr()))
        r = res[0]
        given = ""
        for req in requests:
            if req.get("body") and not req.get("side") and req.get("turn"):
                found = GeminiWire().tool_results(req["body"])
                given = found[-1] if found else given
        if r.get("status") == "success":
            exit_code, output = _shell_result(given, r.get("output") or "")
            return core.Observed(ran=True, exit=exit_code, output=output)
        err = r.get("error") or {}
        kind = err.get("type")
        msg = err.get("message") or r.get("output")
        if "hook" in (msg or "").lower() or "hook" in (kind or ""):
            by = "hook"
        elif kind == "policy_violation":
            by = "rule"
        else:
            by = "mode"
        if kind not in ("policy_violation", "tool_not_registered") and not re.search(
                r"confirmation|denied|blocked|hook", msg or "", re.I):
            # An error from the run itself (the tool started and failed): report it as run.
            exit_code, output = _shell_result(given, r.get("output") or "")
            if exit_code is not None:
                return core.Observed(ran=True, exit=exit_code, output=output)
        return core.Observed(ran=False, denied=True, by=by, message=msg)

    def held_by(self, s: Session) -> Optional[str]:
        if self.guard:
            return "native"
        return "bwrap" if s.state.get("sandbox") else "off"


EXIT = re.compile(r"Exit Code: (-?\d+)")


def _shell_result(given: str, shown: str) -> tuple[int, str]:
    """(exit, output) from the function response the model was given (Gemini writes
    `Exit Code: N` there when it is not 0) and the stream's display of the output."""
    m = EXIT.search(given or "")
    return (int(m.group(1)) if m else 0), shown


if __name__ == "__main__":
    core.serve(GeminiCli(core.guard_argument(sys.argv[1:])))
