"""What the agent adapters read alike from a scenario's setup: the agent file and the
person's settings file (permissions.md section 8), the safety mode in force (PERM-MODE-4),
the pattern lists by source, and the hooks, each as plain data that the agent's adapter
then writes in its own configuration or answers `unsupported`; and what they write alike
from it: a command hook as the line that runs `hook_shim.py` in the agent's hook format
(`shim_command`, after `command_hooks` has refused what the agent cannot run), and a hook
matcher as the agent's tool names (`tool_matcher`, or `shell_matcher` for an agent whose
hooks see its shell tool only).

A pattern is split as PERM-PAT-1 and -2 say (`tool` glob, then `:key=value` conditions);
`shell_prefix` says whether a `shell:cmd=` value is a run of literal words that a
command-prefix rule (the only kind of rule either agent has) can express, and how.
Standard library and PyYAML (the reading of YAML is the agents' test's, not the agent's).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from typing import Any, Optional

from conformance.adapters.agents.agent_adapter import AgentError, Call, Unsupported
from conformance.adapters.protocol import Request

COND = re.compile(r":([A-Za-z_][A-Za-z0-9_]*)=")
GLOB_CHARS = set("*?[\\")
# The hook shim every agent's hook file runs (hook_shim.py: its formats are the agents').
SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hook_shim.py")


def load_yaml(path: str, what: str) -> dict[str, Any]:
    try:
        import yaml
    except ImportError:
        raise Unsupported("%s: reading YAML needs PyYAML, which this python3 lacks" % what) from None
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise AgentError("%s %s does not load: %s" % (what, path, e)) from e
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise AgentError("%s %s is not a mapping" % (what, path))
    return data


class Sources:
    """The agent file's root agent, its patterns, the settings file's, and the mode."""

    def __init__(self, setup: Request) -> None:
        self.agent: dict[str, Any] = {}
        self.agent_perms: Any = {}
        self.person: dict[str, Any] = {}
        if setup.get("agent_file"):
            doc = load_yaml(setup["agent_file"], "agent file")
            agents = doc.get("agents") or {}
            if "root" not in agents and len(agents) != 1:
                raise AgentError("agent file: no agent named root")
            self.agent = agents.get("root") or next(iter(agents.values())) or {}
            self.agent_perms = doc.get("permissions") or {}
        if setup.get("settings_file"):
            self.person = load_yaml(setup["settings_file"], "settings file").get("settings") or {}
        self.person_perms = self.person.get("permissions") or {}
        self.safety = setup.get("safety") or self.person.get("safety") or self.agent.get("safety")
        if self.safety == "yolo":
            self.safety = "autonomous"
        self.safety_source = ("flag" if setup.get("safety") else "settings" if self.person.get("safety")
                              else "agent_file" if self.agent.get("safety") else "default")

    def patterns(self) -> list[tuple[str, str, str]]:
        """(list, pattern, origin) for every pattern of both files."""
        out: list[tuple[str, str, str]] = []
        for origin, perms in (("agent_file", self.agent_perms), ("settings", self.person_perms)):
            if not isinstance(perms, dict) or set(perms) - {"allow", "ask", "deny"}:
                raise Unsupported("%s permissions %r: not the lists allow/ask/deny" % (origin, perms))
            for lst in ("allow", "ask", "deny"):
                for p in perms.get(lst) or []:
                    out.append((lst, str(p), origin))
        return out

    def hooks(self) -> list[tuple[str, Optional[str], dict[str, Any], dict[str, Any]]]:
        """(event, matcher glob or None, matcher entry, hook dict) for every hook of the root
        agent."""
        out: list[tuple[str, Optional[str], dict[str, Any], dict[str, Any]]] = []
        for event, matchers in (self.agent.get("hooks") or {}).items():
            for m in matchers or []:
                for h in m.get("hooks") or []:
                    out.append((event, m.get("matcher"), m, h))
        return out


def split_pattern(pattern: str) -> tuple[str, list[tuple[str, str]]]:
    """(tool glob, [(key, value)]) as PERM-PAT-1/-2 read it."""
    marks = list(COND.finditer(pattern))
    if not marks:
        return pattern, []
    tool = pattern[:marks[0].start()]
    conds: list[tuple[str, str]] = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(pattern)
        conds.append((m.group(1), pattern[m.end():end]))
    return tool, conds


def shell_prefix(pattern: str) -> list[str]:
    """The words of a `shell:cmd=WORDS*` pattern, for a command-prefix rule, or raises
    Unsupported saying why the agent's rules cannot say it. `WORDS *` and `WORDS*` both
    give WORDS (a prefix rule matches whole words: `rm*` is read as the command `rm`, not
    also `rmdir`, a difference the README records); a value with no final `*`, a glob
    character elsewhere, or another condition cannot be said."""
    tool, conds = split_pattern(pattern)
    if tool.lower() != "shell":
        raise Unsupported("pattern %r: only shell patterns have a counterpart (a command-prefix rule)"
                          % pattern)
    if len(conds) != 1 or conds[0][0].lower() != "cmd":
        raise Unsupported("pattern %r: a command-prefix rule takes one cmd condition" % pattern)
    value = conds[0][1]
    if not value.endswith("*") or any(c in GLOB_CHARS for c in value[:-1]):
        raise Unsupported("pattern %r: a command-prefix rule cannot say a glob other than WORDS*"
                          % pattern)
    words = value[:-1].split()
    if not words:
        raise Unsupported("pattern %r: a command-prefix rule needs at least one word" % pattern)
    return words


def shell_line(call: Call, cd_in: Optional[str] = None) -> str:
    """The line a model runs for a `shell` or `execute_code` call: code as `python3 -c
    CODE`, as a model runs it with an agent that has no code tool. `cd_in`: the workspace
    of an agent whose shell tool takes no working directory; the line then starts with
    `cd CWD &&` when the call has one (relative to the workspace)."""
    line = call.line()
    if call.tool == "execute_code":
        line = "python3 -c %s" % quote(line)
    if cd_in is not None and call.cwd:
        cwd = call.cwd if os.path.isabs(call.cwd) else os.path.join(cd_in, call.cwd)
        line = "cd %s && %s" % (quote(cwd), line)
    return line


def quote(s: object) -> str:
    return "'" + str(s).replace("'", "'\"'\"'") + "'"


def command_hooks(src: Sources, events: dict[str, str], agent: str,
                  only_commands: str) -> Iterator[tuple[str, str, Optional[str], dict[str, Any]]]:
    """(the agent's event name, the setup's event, matcher glob or None, hook dict) for each
    hook of the root agent in turn, or raises Unsupported, when it comes to it, for an event
    the agent has not (`events` maps the setup's events to the agent's) or a hook that is not
    a command (`only_commands` says why, in the parenthesis of the reason)."""
    for event, matcher, _m, h in src.hooks():
        name = events.get(event)
        if name is None:
            raise Unsupported("hooks.%s: %s has no such event" % (event, agent))
        if h.get("type") != "command":
            raise Unsupported("hooks.%s: a %r hook (%s)" % (event, h.get("type"), only_commands))
        yield name, event, matcher, h


def shim_command(fmt: str, event: str, safety: Optional[str], command: str,
                 env: Optional[dict[str, Any]] = None) -> str:
    """The shell line an agent's hook runs: `hook_shim.py` speaking the agent's hook format
    `fmt` for the setup's `event` under the safety mode, around the scenario's hook command,
    with the hook's `env` set in front (`env K=V ...`) when it has one."""
    cmd = "%s %s %s %s %s -- %s" % (quote(sys.executable), quote(SHIM), fmt, event,
                                    quote(safety or ""), quote(command))
    if env:
        cmd = "env %s %s" % (" ".join(quote("%s=%s" % kv) for kv in env.items()), cmd)
    return cmd


def tool_matcher(glob: Any, tools: dict[str, str], agent: str) -> Optional[str]:
    """A hook matcher as the agent's tool names (`tools` maps the protocol's to them),
    `|`-separated; None for every tool (no matcher, or `*`)."""
    if glob is None or str(glob).strip() == "*":
        return None
    names = []
    for part in str(glob).split("|"):
        name = tools.get(part.strip().lower())
        if name is None:
            raise Unsupported("hook matcher %r: no %s tool for %r" % (glob, agent, part))
        names.append(name)
    return "|".join(names)


def shell_matcher(glob: Any, shell_tool: str, why: str) -> Optional[str]:
    """A hook matcher for an agent whose hooks see its shell tool only: `shell_tool` when
    every part names the shell (or `*`), None with no matcher; anything else raises
    Unsupported with `why`."""
    if glob is None:
        return None
    for part in str(glob).split("|"):
        if part.strip().lower() not in ("shell", "*"):
            raise Unsupported("hook matcher %r: %s" % (glob, why))
    return shell_tool
