#!/usr/bin/env python3
"""Claude Code (npm `@anthropic-ai/claude-code`, pinned by install.sh) as an implementation
under test: the whole agent, driven headless (`claude -p --output-format stream-json`) by
the scripted model of `../scripted_model.py` on the Anthropic Messages wire.

The scenario's setup becomes Claude Code's own configuration (README.md has the mapping
field by field): the agent file's patterns and hooks go to the user settings in the
session's `CLAUDE_CONFIG_DIR`, the person's settings file, grants and allow list to a
`--settings` file, the safety mode to `--permission-mode`, the fence policy to
`sandbox.enabled`/`sandbox.failIfUnavailable`, the startup answer to the folder's trust in
`.claude.json`. The person at the prompt is `prompt_mcp.py`, named by
`--permission-prompt-tool` (absent when the setup has no asker: then Claude Code refuses
what it would ask). What is reported is read from Claude Code's stream: the tool result's
`tool_result_meta[].permission_decision` (accept or reject, and by what), whether the
prompt tool was called for the call, and the tool result itself (exit code and output).

The agent runs inside a bubblewrap confinement of the adapter's (the root read-only, a
fresh /tmp, the scenario's directory `R` writable), so that a call Claude Code lets run
touches nothing outside the fixture; with its sandbox on, the confinement its own
bubblewrap nests in (`confine(nests=True)`: a user namespace of its own, the host's /proc).
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
from typing import Any, Optional

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[4])

from conformance.adapters.agents import agent_adapter as core  # noqa: E402
from conformance.adapters.agents import mapping  # noqa: E402
from conformance.adapters.agents.agent_adapter import Call, Observed, RunResult, Session, Unsupported  # noqa: E402
from conformance.adapters.protocol import Request  # noqa: E402
from conformance.adapters.agents.wires.anthropic import AnthropicWire  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = "2.1.332"
MODEL = "claude-sonnet-4-5"
TOOLS = {"shell": "Bash", "read": "Read", "write": "Write", "edit": "Edit"}
# The protocol's `search` and `list`: Claude Code 2.1.332 offers no Grep, Glob or LS tool
# (its native build answers "Grep is not available in this session — search file contents
# with `grep` via the Bash tool instead"), so the model searches and lists through Bash.
LISTING = {"search": "grep -rn -e %(pattern)s -- %(path)s", "list": "ls -A1 -- %(path)s"}
MODES = {None: "default", "strict": "default", "balanced": "default",
         "restricted": "dontAsk", "autonomous": "bypassPermissions", "yolo": "bypassPermissions"}
HOME_DIRS = ("bridge-spawn", "ssh", "cache/model-catalog", "daemon", "child-logs", "file-history")
EVENTS = {"pre_tool_use": "PreToolUse", "post_tool_use": "PostToolUse"}
# Who refused a call, by the `source` of Claude Code's permission decision (any JSON value).
BY_SOURCE: dict[Any, Any] = {"config": "rule", "hook": "hook", "user_reject": "user"}


def binary() -> str:
    """The native program: the platform package's, or the wrapper's copy of it."""
    override = os.environ.get("GATEHOUSE_CLAUDE_CODE")
    if override:
        return override
    for rel in (("@anthropic-ai", "claude-code-linux-x64", "claude"),
                ("@anthropic-ai", "claude-code", "bin", "claude.exe")):
        path = core.npm_bin("claude-code", *rel)
        if os.path.isfile(path) and os.access(path, os.X_OK) and os.path.getsize(path) > 1_000_000:
            return path
    return core.npm_bin("claude-code", ".bin", "claude")


def translate_pattern(pattern: str) -> str:
    """A pattern of permissions.md (`shell:cmd=rm*`) as a Claude Code rule (`Bash(rm*)`)."""
    head, sep, rest = pattern.partition(":")
    tool = TOOLS.get(head.lower())
    if tool is None:
        raise Unsupported("pattern %r: tool %r has no Claude Code counterpart (or is a glob)"
                          % (pattern, head))
    if not sep:
        return tool
    key, eq, value = rest.partition("=")
    want = "cmd" if tool == "Bash" else "path"
    if not eq or key != want or any(c in value for c in "?[\\") or ":" in value and "=" in value:
        raise Unsupported("pattern %r: Claude Code rules take one %s condition with `*` globs only"
                          % (pattern, want))
    if tool != "Bash" and value.startswith("/"):
        value = "/" + value   # Claude Code writes an absolute path `//abs`
    return "%s(%s)" % (tool, value)


def translate_rules(perms: Any, where: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    if not perms:
        return out
    if not isinstance(perms, dict) or set(perms) - set(out):
        raise Unsupported("%s permissions %r: not the lists allow/ask/deny" % (where, perms))
    for lst in out:
        for p in perms.get(lst) or []:
            out[lst].append(translate_pattern(str(p)))
    return out


def translate_matcher(glob: Any) -> str:
    if glob is None:
        return "*"
    names: list[str] = []
    for part in str(glob).split("|"):
        tool = TOOLS.get(part.strip().lower())
        if tool is None:
            raise Unsupported("hook matcher %r: no Claude Code tool name for %r" % (glob, part))
        names.append(tool)
    return "|".join(names)


def translate_hooks(hooks: Any) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for event, matchers in (hooks or {}).items():
        name = EVENTS.get(event)
        if name is None:
            raise Unsupported("hooks.%s: Claude Code has no such event" % event)
        for m in matchers or []:
            entry: dict[str, Any] = {"matcher": translate_matcher(m.get("matcher")), "hooks": []}
            for h in m.get("hooks") or []:
                if h.get("type") != "command":
                    raise Unsupported("hooks.%s: a %r hook (Claude Code runs commands only)"
                                      % (event, h.get("type")))
                cmd = h.get("command", "")
                env = h.get("env") or {}
                if env:
                    cmd = "env %s sh -c %s" % (" ".join(mapping.quote("%s=%s" % kv) for kv in env.items()),
                                               mapping.quote(cmd))
                hook: dict[str, Any] = {"type": "command", "command": cmd}
                if h.get("timeout") is not None:
                    hook["timeout"] = h["timeout"]
                entry["hooks"].append(hook)
            out.setdefault(name, []).append(entry)
    return out


class ClaudeCode(core.Agent):
    name = "claude-code"
    wire = AnthropicWire
    capabilities = ["gate", "permissions", "hooks", "fence", "paths", "trust"]
    file_ops = ("read", "write", "edit", "list", "search")
    fence_backend = "bwrap"     # its sandbox on Linux (settings sandbox.enabled)
    known_setup = core.Agent.known_setup | {
        "roots", "resolver", "startup", "skip_permissions", "settings_dirs",
        "fence_policy", "workspaces", "log_dir", "limits", "choices",
        "agent_file", "settings_file", "safety", "state_dir", "resume"}

    def __init__(self, guard: Optional[str] = None) -> None:
        self.version = core.version_of([binary(), "--version"], VERSION).split(" ")[0]
        # --guard: Claude Code with `gatehouse guard` as its PreToolUse hook (README.md,
        # "Put Gatehouse in front of your agent"): the library decides every call and runs
        # what it allows in `gatehouse exec`, which is then the fence.
        self.use_guard(guard)

    def check_setup(self, setup: Request) -> None:
        super().check_setup(setup)
        if setup.get("resolver") is not None:
            raise Unsupported("resolver: Claude Code's path resolution has no switch")
        if setup.get("startup", "yes") == "leave":
            raise Unsupported("startup = leave: a headless run has no startup question to leave")
        if setup.get("settings_dirs"):
            raise Unsupported("settings_dirs: the adapter does not map settings-named directories")
        if setup.get("limits") is not None:
            raise Unsupported("limits: Claude Code cannot be made to act as on a poorer kernel")
        choices = setup.get("choices")
        if choices is not None and not self.guard:
            raise Unsupported("choices: Claude Code's sandbox has no counterpart for "
                              "gatehouse exec's flags")
        if choices is not None:
            other = core.unmapped_choices(choices)
            if other:
                raise Unsupported("choices %s: the guard's [exec] has no counterpart"
                                  % ", ".join(other))

    def prepare(self, s: Session) -> None:
        setup = s.setup
        cfg = setup.get("state_dir") or s.dirs["config"]
        os.makedirs(cfg, exist_ok=True)
        s.state["config_dir"] = cfg
        agent: dict[str, Any] = {}
        if setup.get("agent_file"):
            doc = mapping.load_yaml(setup["agent_file"], "agent file")
            agents = doc.get("agents") or {}
            if "root" not in agents and len(agents) != 1:
                raise core.AgentError("agent file: no agent named root")
            agent = agents.get("root") or next(iter(agents.values()))
            agent_rules = translate_rules(doc.get("permissions"), "agent file")
        else:
            agent_rules = translate_rules(None, "")
        person: dict[str, Any] = {}
        if setup.get("settings_file"):
            person = (mapping.load_yaml(setup["settings_file"], "settings file").get("settings") or {})
        person_rules = translate_rules(person.get("permissions"), "settings file")
        for line in setup.get("allow_list") or []:
            person_rules["allow"].append("Bash(%s)" % line)
        for g in setup.get("grants") or []:
            key = g["key"] if g.get("tool", "shell") == "shell" else "python3 -c " + mapping.quote(g["key"])
            person_rules["allow"].append(("Bash(%s)" if g["kind"] == "exact" else "Bash(%s:*)") % key)
        safety = setup.get("safety") or person.get("safety") or agent.get("safety")
        if safety not in MODES:
            raise Unsupported("safety %r: no Claude Code permission mode" % safety)
        s.state["mode"] = "bypassPermissions" if setup.get("skip_permissions") else MODES[safety]
        # The author's file: the user settings of the session's config directory.
        user: dict[str, Any] = {"permissions": agent_rules}
        hooks = None if self.guard else translate_hooks(agent.get("hooks"))
        if hooks:
            user["hooks"] = hooks
        with open(os.path.join(cfg, "settings.json"), "w") as f:
            json.dump(user, f, indent=1)
        # The person's: a --settings file, with the fence policy.
        flag: dict[str, Any] = {"permissions": person_rules}
        policy = setup.get("fence_policy")
        s.state["sandbox"] = policy in ("required", "degraded") and not self.guard
        if s.state["sandbox"]:
            flag["sandbox"] = {"enabled": True, "failIfUnavailable": policy == "required"}
        elif policy == "off":
            flag["sandbox"] = {"enabled": False}
        s.state["flag_settings"] = os.path.join(s.root, "flag-settings.json")
        with open(s.state["flag_settings"], "w") as f:
            json.dump(flag, f, indent=1)
        # The folder's trust, as the startup answer left it.
        trusted = setup.get("startup", "yes") == "yes"
        with open(os.path.join(cfg, ".claude.json"), "w") as f:
            json.dump({"hasCompletedOnboarding": True, "projects": {
                setup["workspace"]: {"hasTrustDialogAccepted": trusted,
                                     "hasCompletedProjectOnboarding": True}}}, f)
        if self.guard:
            # Into the session's user settings, keeping the settings written above.
            core.install_guard(s, safety, "claude-code", {"CLAUDE_CONFIG_DIR": cfg}, "--user")
        # The directories Claude Code makes in the person's home at every start whatever
        # CLAUDE_CONFIG_DIR says (a person who runs it has them): made here, before the
        # first step, so that the runner's guard on the home judges the commands alone.
        for d in HOME_DIRS:
            os.makedirs(os.path.join(setup["home"], ".claude", d), exist_ok=True)
        s.state["prompts"] = os.path.join(s.dirs["model"], "prompts.jsonl")
        for answer in ("yes", "no"):
            with open(os.path.join(s.root, "mcp-%s.json" % answer), "w") as f:
                json.dump({"mcpServers": {"gatehouse": {
                    "type": "stdio", "command": sys.executable,
                    "args": [os.path.join(HERE, "prompt_mcp.py"), s.state["prompts"], answer]}}}, f)

    def env(self, s: Session) -> dict[str, str]:
        e = super().env(s)
        if self.guard:
            e["GATEHOUSE_GUARD_CONFIG"] = s.state["guard_config"]
        e.update(ANTHROPIC_BASE_URL=s.model_url, ANTHROPIC_API_KEY="sk-ant-scripted-model",
                 CLAUDE_CONFIG_DIR=s.state["config_dir"],
                 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
                 DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1",
                 # its sandbox asks `npm root --global`, which logs under ~/.npm otherwise
                 npm_config_cache=os.path.join(s.root, "npm"), NPM_CONFIG_UPDATE_NOTIFIER="false")
        if s.state["mode"] == "bypassPermissions" and os.geteuid() == 0:
            e["IS_SANDBOX"] = "1"   # as root, bypass mode refuses to start without it
        e.pop("ANTHROPIC_AUTH_TOKEN", None)
        return e

    def script(self, s: Session, call: Call) -> list[Any]:
        tool = TOOLS.get(call.tool)
        if call.tool in LISTING:
            line = LISTING[call.tool] % {"pattern": mapping.quote(call.input.get("pattern", "")),
                                         "path": mapping.quote(s.abs_path(call.input["path"]))}
            return [("Bash", {"command": line, "description": "Search the files"}), "done"]
        if call.tool == "execute_code":
            tool = "Bash"   # no code tool: the model runs code through Bash, as python3 -c
        if tool is None:
            raise Unsupported("tool %r: Claude Code has no counterpart" % call.tool)
        if tool == "Bash":
            line = mapping.shell_line(call, cd_in=s.setup["workspace"])
            return [("Bash", {"command": line, "description": "Run the requested command"}), "done"]
        path = s.abs_path(call.input["path"])
        if tool == "Read":
            return [("Read", {"file_path": path}), "done"]
        if tool == "Write":
            return [("Write", {"file_path": path, "content": call.input.get("content", "")}), "done"]
        # Claude Code edits only a file read in the session ("File has not been read yet"),
        # so the model reads it first, as it would; the Edit is the call observed.
        return [("Read", {"file_path": path}),
                ("Edit", {"file_path": path, "old_string": call.input.get("old", ""),
                          "new_string": call.input.get("new", "")}), "done"]

    def command(self, s: Session, call: Call) -> list[str]:
        try:
            os.remove(s.state["prompts"])
        except FileNotFoundError:
            pass
        argv = [binary(), "-p", "Do the task.", "--output-format", "stream-json", "--verbose",
                "--model", MODEL, "--settings", s.state["flag_settings"],
                "--permission-mode", s.state["mode"], "--strict-mcp-config",
                "--mcp-config", os.path.join(s.root, "mcp-%s.json" % call.if_asked)]
        if s.setup.get("asker", "terminal") != "none":
            argv += ["--permission-prompt-tool", "mcp__gatehouse__prompt"]
        for d in (s.setup.get("workspaces") or [])[1:] + (s.setup.get("roots") or []):
            argv += ["--add-dir", d]
        if call.approved:
            argv += ["--allowedTools", TOOLS.get(call.tool, "Bash")]
        if self.guard:
            return argv   # the guard's `gatehouse exec` holds the call
        # With its own sandbox on, a confinement its bubblewrap nests in: a call it lets
        # run outside its sandbox is held there.
        return core.confine(argv, os.path.dirname(os.path.normpath(s.setup["workspace"])),
                            nests=bool(s.state["sandbox"]))

    def observe(self, s: Session, call: Call, result: RunResult,
                requests: list[dict[str, Any]]) -> Observed:
        events: list[Any] = []
        for line in result.stdout.splitlines():
            if line.strip():
                events.append(json.loads(line))   # not JSON: the core reports it, with stderr
        # The call observed is the script's last tool call (an Edit follows its Read).
        use_id = None
        for ev in events:
            if ev.get("type") == "assistant":
                for b in ev["message"].get("content", []):
                    if b.get("type") == "tool_use":
                        use_id = b["id"]
        final = next((ev for ev in events if ev.get("type") == "result"), None)
        if use_id is None:
            raise core.AgentError("Claude Code made no tool call (exit %s, result %r); last stderr:\n%s"
                                  % (result.rc, final and final.get("result"), result.last_stderr()))
        block: Optional[dict[str, Any]] = None
        meta: dict[str, Any] = {}
        for ev in events:
            if ev.get("type") != "user":
                continue
            for b in ev["message"].get("content", []):
                if isinstance(b, dict) and b.get("tool_use_id") == use_id:
                    block = b
                    meta = next((m for m in ev.get("tool_result_meta", []) if m.get("id") == use_id), {})
        if block is None:
            raise core.AgentError("Claude Code gave the call no result (exit %s); last stderr:\n%s"
                                  % (result.rc, result.last_stderr()))
        asked = False
        if os.path.exists(s.state["prompts"]):
            with open(s.state["prompts"]) as f:
                asked = any(json.loads(ln).get("tool_use_id") == use_id for ln in f if ln.strip())
        decision = (meta.get("permission_decision") or {})
        ran = decision.get("decision") == "accept" and "non_execution_kind" not in meta
        text = block.get("content")
        if isinstance(text, list):
            text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
        text = text or ""
        exit_code = None
        if ran:
            exit_code = 0
            if text.startswith("Exit code "):
                first, _, rest = text.partition("\n")
                try:
                    exit_code = int(first[len("Exit code "):])
                    text = rest
                except ValueError:
                    pass
            elif block.get("is_error"):
                exit_code = 1
        refusal: Optional[str] = None
        if self.guard and ran:
            refusal = core.exec_refusal(text, exit_code)
        elif self.guard and not ran:
            refusal = guard_refusal(text)
        if refusal:
            return core.Observed(ran=False, asked=asked, denied=True, by="sandbox", output=text,
                                 message=refusal, refused="choice_refused", refusal=refusal)
        src = decision.get("source")
        by = None if ran else BY_SOURCE.get(src, src)
        return core.Observed(ran=ran, asked=asked, denied=not ran, by=by, exit=exit_code, output=text,
                             message=None if ran else text)

    def held_by(self, s: Session) -> Optional[str]:
        if self.guard:
            return "native"
        return "bwrap" if s.state.get("sandbox") else "off"


def guard_refusal(text: str) -> Optional[str]:
    """The guard's refusal to open the session at all (a workspace root it cannot open or
    that holds the home, a state directory inside a root): its block answer, which Claude
    Code shows as the hook's error, and the call does not run (GUARD-FAIL-1). A deny of the
    call itself is a decision with its reason, not a hook error. None when the text shows
    none."""
    marker = "gatehouse guard: "
    if "hook error" in text and marker in text:
        return text[text.index(marker):].strip().splitlines()[0]
    return None


guard_argument = core.guard_argument


if __name__ == "__main__":
    core.serve(ClaudeCode(guard_argument(sys.argv[1:])))
