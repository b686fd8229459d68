#!/usr/bin/env python3
"""GitHub Copilot CLI (npm `@github/copilot`, pinned by install.sh) as an implementation
under test: the whole agent, driven headless (`copilot -p "Do the task." --output-format
json`) by the scripted model of `../scripted_model.py` on the OpenAI-compatible chat
completions wire (Copilot's BYOK provider: `COPILOT_PROVIDER_BASE_URL`, its default wire
`completions`, streamed), with `COPILOT_OFFLINE=true` (no GitHub sign-in, no telemetry, no
update).

The scenario's setup becomes Copilot's own configuration (README.md has the mapping field
by field): the safety mode as `--allow-all-tools` or Copilot's default (ask), the
pattern lists as `--allow-tool`/`--deny-tool` rules (`shell(git push)`, `shell(git:*)`,
`write(PATH)`), the agent file's hooks as user-level `preToolUse`/`postToolUse` hooks in
`COPILOT_HOME/hooks/gatehouse.json` running `../hook_shim.py` (format `copilot`). Headless,
Copilot refuses what it would ask ("Permission denied because no interactive user response
was available"), which is how the adapter sees that it asked; the person's "yes" is
`--allow-all-tools` for that run (a deny rule still outranks it, as Copilot documents).
Copilot's own sandbox (MXC over bubblewrap) needs slirp4netns, iptables and /dev/net/tun,
which this host lacks: no `fence` capability, and every run is inside the core's bubblewrap
confinement.

`--guard [GATEHOUSE]`: Copilot CLI with `gatehouse guard copilot` as its preToolUse hook,
installed by `gatehouse guard install copilot` into the session's `COPILOT_HOME/settings.json`
(README.md, "The guarded column"): the library decides every call and runs the shell lines it
allows in `gatehouse exec`, which is then the fence (capabilities `guard` and `fence`).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
from typing import Any, Optional

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[4])

from conformance.adapters.agents import agent_adapter as core  # noqa: E402
from conformance.adapters.agents import mapping  # noqa: E402
from conformance.adapters.agents.agent_adapter import Call, Observed, RunResult, Session, Unsupported  # noqa: E402
from conformance.adapters.protocol import Request  # noqa: E402
from conformance.adapters.agents.wires.openai_chat import OpenAIChatWire  # noqa: E402

VERSION = "1.0.102"
# A key long enough that Copilot's redaction of it (it masks the provider key's value in
# everything it prints) never masks a word of the output.
API_KEY = "scripted-model-key-0123456789abcdef"
TOOLS = {"shell": "bash", "read": "view", "write": "create", "edit": "edit"}
EVENTS = {"pre_tool_use": "preToolUse", "post_tool_use": "postToolUse"}
ASKED = "no interactive user response was available"
HOOK_ASKED = "unable to ask user for confirmation"
EXIT = re.compile(r"\n?<shellId: \S+ completed with exit code (-?\d+)>\s*$")
# The safety mode as Copilot's flags: it has one mode (ask about what is not read-only,
# refuse it headless) and allow-all; `restricted` (deny what would ask) is its default,
# since headless every ask is a refusal (reported as asked: see README.md). `yolo` is read
# as `autonomous` by mapping.Sources.
OVERWRITE = ("write to an existing file: Copilot CLI's create tool refuses a path that exists "
             "before asking, and it has no tool that overwrites one")
EMPTY_OLD = "edit with no old text: Copilot CLI's edit tool refuses it before asking"
MODES: dict[Optional[str], list[str]] = {
    None: [], "strict": [], "balanced": [], "restricted": [],
    "autonomous": ["--allow-all-tools"],
}


def package_dir() -> str:
    return core.npm_bin("copilot-cli", "@github")


def binary() -> str:
    override = os.environ.get("GATEHOUSE_COPILOT")
    if override:
        return override
    return os.path.join(package_dir(), "copilot-linux-x64", "copilot")


def dist_dir(version: str) -> str:
    """The package the native program unpacks at its first start (235 MB, into
    `$XDG_CACHE_HOME/copilot/pkg`): unpacked once into the agents' cache and named by
    `COPILOT_CLI_DIST_DIR` in every run, so that a session's fresh cache directory does not
    unpack it again (3 s a run instead of 6)."""
    return os.path.join(core.cache_dir(), "agents", "copilot-cli", "unpacked", "copilot", "pkg",
                        "linux-x64", version)


def unpack(version: str) -> Optional[str]:
    """Unpacks the package into dist_dir (once); returns it, or None when it cannot."""
    d = dist_dir(version)
    if os.path.isfile(os.path.join(d, "index.js")):
        return d
    base = os.path.join(core.cache_dir(), "agents", "copilot-cli", "unpacked")
    os.makedirs(base, exist_ok=True)
    try:
        subprocess.run([binary(), "--version"], env=dict(os.environ, HOME=base, XDG_CACHE_HOME=base),
                       capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return d if os.path.isfile(os.path.join(d, "index.js")) else None


def translate_pattern(pattern: str) -> str:
    """A pattern of permissions.md as a Copilot permission rule: `shell:cmd=git push*` →
    `shell(git push:*)`, `shell:cmd=rm` → `shell(rm)`, `write:path=P` → `write(P)`."""
    tool, conds = mapping.split_pattern(pattern)
    t = tool.lower()
    if t == "shell":
        if not conds:
            return "shell"
        if len(conds) != 1 or conds[0][0].lower() != "cmd":
            raise Unsupported("pattern %r: a Copilot shell rule takes one command" % pattern)
        value = conds[0][1]
        if value.endswith("*") and not any(c in mapping.GLOB_CHARS for c in value[:-1]):
            words = value[:-1].strip()
            if not words:
                return "shell"
            return "shell(%s:*)" % words
        if any(c in mapping.GLOB_CHARS for c in value):
            raise Unsupported("pattern %r: a Copilot shell rule is a command or a `:*` stem, "
                              "not a glob" % pattern)
        return "shell(%s)" % value
    if t in ("write", "edit"):
        if not conds:
            return "write"
        if len(conds) != 1 or conds[0][0].lower() != "path" or any(c in mapping.GLOB_CHARS
                                                                      for c in conds[0][1]):
            raise Unsupported("pattern %r: a Copilot write rule takes one path, no glob" % pattern)
        return "write(%s)" % conds[0][1]
    raise Unsupported("pattern %r: Copilot CLI's rules are shell, write, url and MCP tools "
                      "(no %s)" % (pattern, tool))


def translate_matcher(glob: Any) -> Optional[str]:
    return mapping.tool_matcher(glob, TOOLS, "Copilot CLI")


class CopilotCli(core.Agent):
    name = "copilot-cli"
    wire = OpenAIChatWire
    capabilities = ["gate", "permissions", "hooks"]
    file_ops: tuple[str, ...] = ("read", "write", "edit")
    known_setup = core.Agent.known_setup | {"agent_file", "settings_file", "safety", "state_dir",
                                            "roots", "workspaces", "resume"}

    def __init__(self, guard: Optional[str] = None) -> None:
        self.version = core.version_number([binary(), "--version"], VERSION)
        self.dist = unpack(self.version)
        # --guard: the library decides every call through Copilot's preToolUse hook and runs
        # the shell lines it allows in `gatehouse exec`, which is then the fence; the agent
        # file's hooks are the library's, and Copilot's own rules still apply.
        self.use_guard(guard)
        if guard is not None:
            # The guard decides the file tools on the paths they reach (GUARD-DECIDE-4,
            # -5): `paths`, and the searches and listings mapped (grep, view of a folder).
            self.capabilities = self.capabilities + ["fence", "paths"]
            self.file_ops = ("read", "write", "edit", "list", "search")
            self.known_setup = self.known_setup | {"fence_policy", "log_dir", "limits", "choices",
                                                   "resolver"}

    def check_setup(self, setup: Request) -> None:
        super().check_setup(setup)
        core.refuse_settings_dirs(setup)
        core.refuse_limits(setup, "Copilot CLI")
        if setup.get("resolver") is not None:
            raise Unsupported("resolver: the guard resolves paths one way (beneath the roots)")
        other = core.unmapped_choices(setup.get("choices"))
        if other:
            raise Unsupported("choices %s: the guard's [exec] has no counterpart" % ", ".join(other))

    def prepare(self, s: Session) -> None:
        setup = s.setup
        src = mapping.Sources(setup)
        if src.safety not in MODES and not self.guard:
            raise Unsupported("safety %r: no Copilot CLI counterpart" % src.safety)
        # Guarded, the library applies the safety mode; Copilot keeps its default, whose
        # asks a hook's allow skips (FINDINGS-copilot-cli.md) and whose headless refusal
        # stops what the guard passes.
        flags = [] if self.guard else list(MODES[src.safety])
        allow: list[str] = []
        deny: list[str] = []
        asks: list[str] = []
        for lst, pattern, _origin in src.patterns():
            try:
                rule = translate_pattern(pattern)
            except Unsupported:
                if self.guard:
                    continue   # guarded, the library applies the pattern Copilot cannot say
                raise
            {"allow": allow, "deny": deny, "ask": asks}[lst].append(rule)
        for line in setup.get("allow_list") or []:
            allow.append("shell(%s)" % line)
        for g in setup.get("grants") or []:
            key = g["key"] if g.get("tool", "shell") == "shell" else "python3 -c " + mapping.quote(g["key"])
            allow.append("shell(%s)" % key if g["kind"] == "exact" else "shell(%s:*)" % key)
        if asks and (allow or flags) and not self.guard:
            # Copilot has no ask rule: its default asks, but an allow rule or allow-all
            # would outrank what the ask pattern means.
            raise Unsupported("ask patterns %s: Copilot CLI has no ask rule to outrank an allow"
                              % ", ".join(asks))
        for r in allow:
            flags.append("--allow-tool=%s" % r)
        for r in deny:
            flags.append("--deny-tool=%s" % r)
        s.state["flags"] = flags
        home = setup.get("state_dir") or s.dirs["config"]
        os.makedirs(home, exist_ok=True)
        s.state["copilot_home"] = home
        hooks: dict[str, list[dict[str, Any]]] = {}
        for name, event, matcher, h in ([] if self.guard else mapping.command_hooks(
                src, EVENTS, "Copilot CLI", "Copilot runs commands only")):
            cmd = mapping.shim_command("copilot", event, src.safety, h.get("command", ""), h.get("env"))
            entry: dict[str, Any] = {"type": "command", "bash": cmd}
            if h.get("timeout") is not None:
                entry["timeoutSec"] = h["timeout"]
            m = translate_matcher(matcher)
            if m is not None:
                entry["matcher"] = m
            hooks.setdefault(name, []).append(entry)
        if hooks:
            os.makedirs(os.path.join(home, "hooks"), exist_ok=True)
            with open(os.path.join(home, "hooks", "gatehouse.json"), "w") as f:
                json.dump({"version": 1, "hooks": hooks}, f, indent=1)
        if self.guard:
            # `COPILOT_HOME=<the session's> gatehouse guard install copilot` merges the hook
            # into `COPILOT_HOME/settings.json` (never the workspace: a trusted folder's own
            # settings could switch it off).
            core.install_guard(s, setup.get("safety"), "copilot", {"COPILOT_HOME": home})

    def env(self, s: Session) -> dict[str, str]:
        e = super().env(s)
        for k in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_ALLOW_ALL"):
            e.pop(k, None)
        e.update(COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=s.model_url + "/v1",
                 COPILOT_PROVIDER_TYPE="openai", COPILOT_PROVIDER_API_KEY=API_KEY,
                 COPILOT_MODEL="scripted", COPILOT_HOME=s.state["copilot_home"],
                 COPILOT_AUTO_UPDATE="false")
        if self.dist:
            e["COPILOT_CLI_DIST_DIR"] = self.dist
        if self.guard:
            e["GATEHOUSE_GUARD_CONFIG"] = s.state["guard_config"]
        return e

    def script(self, s: Session, call: Call) -> list[Any]:
        s.state.pop("unsupported_if_failed", None)
        if call.tool in ("shell", "execute_code"):
            line = mapping.shell_line(call, cd_in=s.setup["workspace"])
            s.state["line"] = line
            return [("bash", {"command": line, "description": "Run the requested command"}), "done"]
        if call.tool not in TOOLS and call.tool not in self.file_ops:
            raise Unsupported("tool %r: Copilot CLI has no counterpart" % call.tool)
        path = s.abs_path(call.input["path"])
        if call.tool in ("read", "list"):
            return [("view", {"path": path}), "done"]
        if call.tool == "search":
            return [("grep", {"pattern": call.input.get("pattern", ""), "paths": [path],
                              "output_mode": "content", "-n": True}), "done"]
        # Copilot's file tools check their input before its permissions: `create` refuses
        # a path that exists ("Path already exists") and `edit` an empty old string
        # ("old_str is required"), without asking and without running. Read as a run that
        # failed, either would report `allow` for a call nobody was asked about, so neither
        # is made: Copilot has no tool that overwrites a file or edits without a match.
        # Guarded, the call is made all the same: the preToolUse hook runs before those checks
        # (measured: a hook's deny of a `create` over an existing file is what Copilot
        # reports), so the guard's refusal is seen; if the guard lets it through, Copilot's
        # own refusal makes the step `unsupported` (observe).
        if call.tool == "write":
            if os.path.lexists(path):
                if not self.guard:
                    raise Unsupported(OVERWRITE)
                s.state["unsupported_if_failed"] = OVERWRITE
            return [("create", {"path": path, "file_text": call.input.get("content", "")}), "done"]
        if not call.input.get("old"):
            if not self.guard:
                raise Unsupported(EMPTY_OLD)
            s.state["unsupported_if_failed"] = EMPTY_OLD
        return [("edit", {"path": path, "old_str": call.input.get("old", ""),
                          "new_str": call.input.get("new", "")}), "done"]

    def command(self, s: Session, call: Call) -> list[str]:
        argv = [binary(), "-p", "Do the task.", "--output-format", "json", "--no-auto-update",
                "--no-ask-user", "--disable-builtin-mcps", "--no-custom-instructions",
                "--log-dir", s.dirs["tmp"]]
        argv += s.state["flags"]
        if self.guard:
            # An approved call (a fence `run`): the person approves the line the only way
            # this agent's guard takes, in its allow list, for this run.
            self.approve_in_guard(s, call)
        elif (call.if_asked == "yes" or call.approved) and "--allow-all-tools" not in argv:
            argv.append("--allow-all-tools")
        for d in (s.setup.get("workspaces") or [])[1:] + (s.setup.get("roots") or []):
            argv += ["--add-dir", d]
        if self.guard:
            return argv   # the guard's `gatehouse exec` holds the call
        return core.confine(argv, os.path.dirname(os.path.normpath(s.setup["workspace"])))

    def observe(self, s: Session, call: Call, result: RunResult,
                requests: list[dict[str, Any]]) -> Observed:
        obs = self._observe(s, call, result, requests)
        unsupported = s.state.pop("unsupported_if_failed", None)
        if unsupported and obs.ran and obs.exit != 0:
            raise Unsupported(unsupported + " (the guard let it through)")
        if self.guard:
            refusal = None
            if obs.ran:
                refusal = core.exec_refusal(obs.output or "", obs.exit)
            elif obs.by == "hook":
                refusal = guard_refusal(obs.message or "")
            if refusal:
                return core.Observed(ran=False, denied=True, by="sandbox", output=obs.output,
                                     message=refusal, refused="choice_refused", refusal=refusal)
        return core.guard_unapprovable(self, call, obs)

    def held_by(self, s: Session) -> Optional[str]:
        return "native" if self.guard else "off"

    def _observe(self, s: Session, call: Call, result: RunResult,
                 requests: list[dict[str, Any]]) -> Observed:
        starts: list[str] = []
        done: dict[str, dict[str, Any]] = {}
        for line in result.stdout.splitlines():
            if not line.strip():
                continue
            ev = json.loads(line)   # not JSON: the core reports it, with stderr
            data = ev.get("data") or {}
            call_id = str(data.get("toolCallId"))
            if ev.get("type") == "tool.execution_start":
                starts.append(call_id)
            elif ev.get("type") == "tool.execution_complete":
                done[call_id] = data
        if not starts:
            raise core.AgentError("Copilot CLI made no tool call (exit %s); last stderr:\n%s"
                                  % (result.rc, result.last_stderr()))
        data = done.get(starts[-1])
        if data is None:
            raise core.AgentError("Copilot CLI gave the call no result (exit %s); last stderr:\n%s"
                                  % (result.rc, result.last_stderr()))
        if data.get("success"):
            res = data.get("result") or {}
            text = res.get("content") or ""
            code = 0
            m = EXIT.search(text)
            if m:
                code = int(m.group(1))
                text = text[:m.start()]
            return core.Observed(ran=True, exit=code, output=text)
        err = data.get("error") or {}
        message = err.get("message", "")
        if err.get("code") == "denied":
            if ASKED in message:
                if s.setup.get("asker") == "none":
                    # Nobody to ask: Copilot refused without asking anyone, which is the
                    # order's deny by `no_asker`, not an ask left unanswered.
                    return core.Observed(denied=True, by="mode", message=message)
                return core.Observed(asked=True, denied=True, by="user", message=message)
            if "preToolUse hook" in message:
                return core.Observed(asked=HOOK_ASKED in message, denied=True, by="hook",
                                     message=message)
            if "following rules" in message:
                return core.Observed(denied=True, by="rule", message=message)
            return core.Observed(denied=True, by="mode", message=message)
        # The tool ran and failed (a missing file, an edit that found nothing, a create
        # over a file that exists).
        return core.Observed(ran=True, exit=1, output=message)


def guard_refusal(message: str) -> Optional[str]:
    """The guard's refusal to open the session at all (a workspace root it cannot open, a
    state directory inside a root): its block answer, which Copilot shows as the hook's
    deny reason, naming no decision (`denied (CODE, stage S)`). None for a decision."""
    marker = "gatehouse guard: "
    if marker not in message:
        return None
    line = message[message.index(marker):].strip().splitlines()[0]
    rest = line[len(marker):]
    if rest.startswith(("denied (", "asks (", "allowed (")):
        return None
    return line


if __name__ == "__main__":
    core.serve(CopilotCli(core.guard_argument(sys.argv[1:])))
