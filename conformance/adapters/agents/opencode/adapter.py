#!/usr/bin/env python3
"""opencode (npm `opencode-ai`, pinned by install.sh) as an implementation under test: the
whole agent, driven headless (`opencode run --format json --dir WORKSPACE`) by the scripted
model of `../scripted_model.py` on the OpenAI-compatible chat completions wire, declared as
an `@ai-sdk/openai-compatible` provider in `OPENCODE_CONFIG_CONTENT`.

The scenario's setup becomes opencode's `permission` configuration (README.md has the
mapping field by field). opencode has no headless prompt: a call its rules would ask about
is rejected with "The user rejected permission ...", which is how the adapter sees that it
asked; `--auto` approves every ask instead, which is how the person's "yes" is given. It
has no hooks, no sandbox and no trusted folders, so it declares `gate`, `permissions` and
`paths` only, and answers a setup with hooks `unsupported`. Every run is inside the core's
bubblewrap confinement (the root read-only, the scenario's directory writable), since
nothing of opencode's own holds a command.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
from typing import Any

if not __package__:  # started as a file: the repository's root, to import by package
    sys.path[0] = str(pathlib.Path(__file__).resolve().parents[4])

from conformance.adapters.agents import agent_adapter as core  # noqa: E402
from conformance.adapters.agents import mapping  # noqa: E402
from conformance.adapters.agents.agent_adapter import Call, Observed, RunResult, Session, Unsupported  # noqa: E402
from conformance.adapters.protocol import Request  # noqa: E402
from conformance.adapters.agents.wires.openai_chat import OpenAIChatWire  # noqa: E402

VERSION = "1.18.33"
TOOLS = {"shell": "bash", "read": "read", "write": "edit", "edit": "edit"}
ASKED = "The user rejected permission"
DENIED = "The user has specified a rule which prevents"
# What opencode answers a call of a tool it did not offer the model, and the tool it may
# run in its place.
UNOFFERED = "Model tried to call unavailable tool"
WITHHELD = "invalid"
# opencode's permission keys the mode sets (its bash, edit and read tools).
MODES = {
    None: None,   # opencode's own default: every tool allowed
    "strict": {"bash": "ask", "edit": "ask", "read": "ask"},
    "balanced": {"bash": "ask", "edit": "ask", "read": "allow"},
    "restricted": {"bash": "deny", "edit": "deny", "read": "allow"},
    "autonomous": {"bash": "allow", "edit": "allow", "read": "allow"},
    "yolo": {"bash": "allow", "edit": "allow", "read": "allow"},
}


def binary() -> str:
    override = os.environ.get("GATEHOUSE_OPENCODE")
    if override:
        return override
    native = core.npm_bin("opencode", "opencode-linux-x64", "bin", "opencode")
    return native if os.path.isfile(native) else core.npm_bin("opencode", ".bin", "opencode")


def translate_pattern(pattern: str) -> tuple[str, str]:
    """`shell:cmd=rm*` as opencode's (`bash`, `rm*`); a bare tool as (`bash`, `*`)."""
    head, sep, rest = pattern.partition(":")
    tool = {"shell": "bash", "read": "read", "write": "edit", "edit": "edit"}.get(head.lower())
    if tool is None:
        raise Unsupported("pattern %r: tool %r has no opencode permission key" % (pattern, head))
    if not sep:
        return tool, "*"
    key, eq, value = rest.partition("=")
    if tool != "bash" or not eq or key != "cmd" or any(c in value for c in "[\\"):
        raise Unsupported("pattern %r: opencode patterns take a bash command glob only" % pattern)
    return tool, value


class OpenCode(core.Agent):
    name = "opencode"
    wire = OpenAIChatWire
    capabilities = ["gate", "permissions", "paths"]
    known_setup = core.Agent.known_setup | {"roots", "resolver", "agent_file", "settings_file",
                                            "safety", "state_dir", "resume"}

    def __init__(self) -> None:
        self.version = core.version_of([binary(), "--version"], VERSION)

    def check_setup(self, setup: Request) -> None:
        super().check_setup(setup)
        if setup.get("resolver") is not None:
            raise Unsupported("resolver: opencode's path resolution has no switch")
        if setup.get("roots"):
            raise Unsupported("roots: opencode has no --add-dir (external_directory is a "
                              "permission, not a root)")

    def prepare(self, s: Session) -> None:
        setup = s.setup
        agent: dict[str, Any] = {}
        person: dict[str, Any] = {}
        agent_perms: Any = None
        person_perms: Any = None
        if setup.get("agent_file"):
            doc = mapping.load_yaml(setup["agent_file"], "agent file")
            agents = doc.get("agents") or {}
            found = agents.get("root") or (next(iter(agents.values())) if len(agents) == 1 else None)
            if found is None:
                raise core.AgentError("agent file: no agent named root")
            agent = found or {}
            if agent.get("hooks"):
                raise Unsupported("hooks: opencode has plugins, not command hooks")
            agent_perms = doc.get("permissions")
        if setup.get("settings_file"):
            person = mapping.load_yaml(setup["settings_file"], "settings file").get("settings") or {}
            person_perms = person.get("permissions")
        safety = setup.get("safety") or person.get("safety") or agent.get("safety")
        if safety not in MODES:
            raise Unsupported("safety %r: no opencode counterpart" % safety)
        # opencode: the last matching rule wins. So the mode's default first, then allow,
        # ask, deny: a deny of any source wins, and an ask beats an allow.
        perm: dict[str, dict[str, str]] = {}
        for key, action in (MODES[safety] or {}).items():
            perm[key] = {"*": action}
        rules: dict[str, list[tuple[str, str]]] = {"allow": [], "ask": [], "deny": []}
        for perms, where in ((agent_perms, "agent file"), (person_perms, "settings file")):
            if not perms:
                continue
            if not isinstance(perms, dict) or set(perms) - set(rules):
                raise Unsupported("%s permissions %r: not the lists allow/ask/deny" % (where, perms))
            for lst in rules:
                rules[lst] += [translate_pattern(str(p)) for p in perms.get(lst) or []]
        for line in setup.get("allow_list") or []:
            rules["allow"].append(("bash", line))
        for g in setup.get("grants") or []:
            key = g["key"] if g.get("tool", "shell") == "shell" else "python3 -c " + mapping.quote(g["key"])
            rules["allow"].append(("bash", key if g["kind"] == "exact" else key + " *"))
            if g["kind"] == "family":
                rules["allow"].append(("bash", key))
        if safety == "restricted":
            # Nothing prompts under restricted (PERM-MODE-3): what an ask pattern would ask
            # about is denied. opencode has no such mode, so the ask rules are written as
            # deny rules, as a person would configure it.
            rules["deny"] += rules["ask"]
            rules["ask"] = []
        for lst in ("allow", "ask", "deny"):
            for tool, glob in rules[lst]:
                perm.setdefault(tool, {"*": "allow" if MODES[safety] is None else "ask"})
                perm[tool][glob] = lst
        config: dict[str, Any] = {"$schema": "https://opencode.ai/config.json",
                  "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "scripted",
                                            "options": {"baseURL": None, "apiKey": "scripted"},
                                            "models": {"m": {"name": "m"}}}},
                  "model": "scripted/m", "small_model": "scripted/m", "autoupdate": False,
                  "share": "disabled"}
        if perm:
            config["permission"] = perm
        s.state["config"] = config

    def env(self, s: Session) -> dict[str, str]:
        e = super().env(s)
        config = json.loads(json.dumps(s.state["config"]))
        config["provider"]["scripted"]["options"]["baseURL"] = s.model_url + "/v1"
        e.update(OPENCODE_CONFIG_CONTENT=json.dumps(config), OPENCODE_DISABLE_AUTOUPDATE="1",
                 OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_SHARE="1",
                 OPENCODE_DISABLE_LSP_DOWNLOAD="1", OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
                 OPENCODE_DISABLE_CLAUDE_CODE="1",
                 npm_config_cache=os.path.join(s.root, "npm"), NPM_CONFIG_UPDATE_NOTIFIER="false")
        return e

    def script(self, s: Session, call: Call) -> list[Any]:
        if call.tool in ("shell", "execute_code"):
            line = mapping.shell_line(call, cd_in=s.setup["workspace"])
            return [("bash", {"command": line, "description": "Run the requested command"}), "done"]
        if call.tool not in TOOLS:
            raise Unsupported("tool %r: opencode has no counterpart" % call.tool)
        path = s.abs_path(call.input["path"])
        if call.tool == "read":
            return [("read", {"filePath": path}), "done"]
        if call.tool == "write":
            return [("write", {"filePath": path, "content": call.input.get("content", "")}), "done"]
        # The edit tool refuses an edit whose old and new text are the same (none at all,
        # say) before asking and without running; read as a run that failed, it would
        # report `allow` for a call nobody was asked about. Its other way in, an empty old
        # text, writes the whole file: a `write`, not an edit.
        if not call.input.get("old"):
            raise Unsupported("edit with no old text: %s's edit tool refuses it before asking"
                              % self.name)
        return [("edit", {"filePath": path, "oldString": call.input.get("old", ""),
                          "newString": call.input.get("new", "")}), "done"]

    def command(self, s: Session, call: Call) -> list[str]:
        argv = [binary(), "run", "--format", "json", "--dir", s.setup["workspace"]]
        if call.if_asked == "yes" or call.approved:
            argv.append("--auto")
        argv.append("Do the task.")
        return core.confine(argv, os.path.dirname(os.path.normpath(s.setup["workspace"])))

    def observe(self, s: Session, call: Call, result: RunResult,
                requests: list[dict[str, Any]]) -> Observed:
        part = None
        for line in result.stdout.splitlines():
            if not line.strip():
                continue
            ev = json.loads(line)   # not JSON: the core reports it, with stderr
            if ev.get("type") == "tool_use" and part is None:
                part = ev["part"]
        if part is None:
            raise core.AgentError("opencode made no tool call (exit %s); last stderr:\n%s"
                                  % (result.rc, result.last_stderr()))
        state = part["state"]
        # A tool whose permission is `deny` for every pattern is not offered to the model at
        # all: the model's call of it fails with "Model tried to call unavailable tool" (as
        # a tool error, or through opencode's `invalid` tool), and nothing runs. The mode
        # refused the call; read as a run that failed, it would report `allow`.
        said = str(state.get("error", "")) + str(state.get("output", ""))
        if UNOFFERED in said and (state.get("status") == "error" or part.get("tool") == WITHHELD):
            return core.Observed(denied=True, by="mode", message=said)
        if part.get("tool") == WITHHELD:
            raise core.AgentError("opencode ran its `invalid` tool: %s" % said[:300])
        status = state.get("status")
        if status == "completed":
            meta = state.get("metadata") or {}
            code = meta.get("exit", 0)
            return core.Observed(ran=True, exit=code if isinstance(code, int) else 0,
                                 output=state.get("output", ""))
        err = state.get("error", "")
        if status == "error" and err.startswith(ASKED):
            return core.Observed(asked=True, denied=True, by="user", message=err)
        if status == "error" and err.startswith(DENIED):
            return core.Observed(denied=True, by="rule", message=err)
        if status == "error":
            # The tool ran and failed (a read of a missing file, an edit that found nothing).
            return core.Observed(ran=True, exit=1, output=err)
        raise core.AgentError("opencode's tool part has status %r (exit %s); last stderr:\n%s"
                              % (status, result.rc, result.last_stderr()))


if __name__ == "__main__":
    core.serve(OpenCode())
