#!/usr/bin/env python3
"""Codex CLI (npm `@openai/codex`, pinned by install.sh) as an implementation under test:
the whole agent, driven headless through `codex app-server` (`driver.py`) by the scripted
model of `../scripted_model.py` on the OpenAI Responses wire (`../wires/openai_responses.py`).

Each step is one turn of a fresh app-server: the scripted model calls Codex's shell tool
(`exec_command {cmd}`), Codex applies its execpolicy rules, its approval policy, its hooks
and its sandbox, and the driver answers Codex's approval request (when it makes one) as
the step says the person answers. The scenario's setup becomes Codex's own configuration
in a `CODEX_HOME` inside the fixture (README.md has the mapping field by field): patterns,
grants and the allow list as `prefix_rule`s in `rules/gatehouse.rules`, the safety mode
and the asker as the approval policy, the fence policy as the sandbox mode, the hooks as
`hooks.json` entries running `../hook_shim.py` (trusted as a person trusts them: their
hashes in `config.toml`). What is reported is read from the app-server's messages: the
command item's status (`completed`, `failed`, `declined`), whether an approval request
came for it, the hook runs, and the tool result the model was given.

The agent runs inside the core's bubblewrap confinement, so that a call Codex lets run
touches nothing outside the fixture; with Codex's sandbox on, the confinement its own
bubblewrap nests in (`confine(nests=True)`), since a call the person approves runs outside
Codex's sandbox (FINDINGS-codex-gemini.md).
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
from conformance.adapters.agents.wires.openai_responses import OpenAIResponsesWire  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

VERSION = "0.171.0"
DRIVER = os.path.join(HERE, "driver.py")
# The safety mode as Codex's approval policy: `untrusted` asks before every command that is
# not on Codex's own known-safe list, which is the gate's "safe runs, the rest asks", and
# the nearest Codex has to strict (it has no policy that asks before everything).
APPROVAL = {None: "untrusted", "balanced": "untrusted", "strict": "untrusted", "autonomous": "never"}
EVENTS = {"pre_tool_use": "PreToolUse", "tool_input_transform": "PreToolUse",
          "post_tool_use": "PostToolUse"}
DECISIONS = {"allow": "allow", "ask": "prompt", "deny": "forbidden"}


def binary() -> str:
    override = os.environ.get("GATEHOUSE_CODEX")
    if override:
        return override
    return core.npm_bin("codex-cli", ".bin", "codex")


def rule(words: list[str], decision: str) -> str:
    return "prefix_rule(pattern=%s, decision=%s)\n" % (json.dumps(words), json.dumps(decision))


def toml_str(s: object) -> str:
    return json.dumps(str(s))


class CodexCli(core.ShellAgent):
    name = "codex-cli"
    wire = OpenAIResponsesWire
    label = "Codex"
    sandbox = "Codex's sandbox"

    def __init__(self, guard: Optional[str] = None) -> None:
        self.version = core.version_of([binary(), "--version"], VERSION).split(" ")[-1]
        # --guard: Codex with `gatehouse guard codex` as its PreToolUse hook: the library
        # decides every shell call and runs what it allows in `gatehouse exec`; Codex's own
        # sandbox is off (`danger-full-access`) and the agent file's hooks are the library's.
        self.use_guard(guard)

    # -- configuration -------------------------------------------------------------------

    def prepare(self, s: Session) -> None:
        setup = s.setup
        home = s.dirs["config"]
        s.state["codex_home"] = home
        src = mapping.Sources(setup)
        if src.safety not in APPROVAL and not self.guard:
            raise Unsupported("safety %r: Codex has no approval policy that runs known-safe "
                              "commands and refuses every other without asking" % src.safety)
        approval = APPROVAL.get(src.safety, "never")
        if setup.get("asker", "terminal") == "none":
            approval = "never"      # nobody to ask: Codex's policy that never asks
        if self.guard:
            # The guard is the approval: Codex asks about every line not on its known-safe
            # list, and a fenced line (`gatehouse exec ... -- bash -c LINE`) never is, so
            # under any other policy it would ask again about each call the guard allowed
            # (a hook's allow does not skip Codex's approval). What the guard cannot ask
            # about it has already denied. Codex's own rules still apply.
            approval = "never"
        policy = setup.get("fence_policy")
        sandbox = "danger-full-access" if policy == "off" or self.guard else "workspace-write"
        s.state.update(approval=approval, sandbox=sandbox, safety=src.safety or "")

        rules: list[str] = []
        for lst, pattern, _origin in src.patterns():
            try:
                rules.append(rule(mapping.shell_prefix(pattern), DECISIONS[lst]))
            except Unsupported:
                if not self.guard:
                    raise   # guarded, the library applies the pattern Codex cannot say
        for g in setup.get("grants") or []:
            words = g["key"].split() if g["kind"] == "family" else _words(g["key"])
            rules.append(rule(words, "allow"))
        for line in setup.get("allow_list") or []:
            rules.append(rule(_words(line), "allow"))
        os.makedirs(os.path.join(home, "rules"), exist_ok=True)
        with open(os.path.join(home, "rules", "gatehouse.rules"), "w") as f:
            f.writelines(rules)

        hooks: dict[str, list[dict[str, Any]]] = {}
        for name, event, matcher, h in ([] if self.guard else mapping.command_hooks(
                src, EVENTS, "Codex", "Codex runs commands only")):
            cmd = mapping.shim_command("codex", event, s.state["safety"], h.get("command", ""),
                                       h.get("env"))
            entry: dict[str, Any] = {"hooks": [dict({"type": "command", "command": cmd},
                                    **({"timeout": h["timeout"]} if h.get("timeout") is not None else {}))]}
            shell = mapping.shell_matcher(matcher, "Bash", "Codex's only shell tool is Bash")
            if shell is not None:
                entry["matcher"] = shell
            hooks.setdefault(name, []).append(entry)
        if hooks:
            with open(os.path.join(home, "hooks.json"), "w") as f:
                json.dump({"hooks": hooks}, f, indent=1)
        self._write_config(s, bool(hooks), trusted={})
        if self.guard:
            self.install_guard(s)
        elif hooks:
            self._trust_hooks(s)

    def install_guard(self, s: Session) -> None:
        """Installs the hook with `CODEX_HOME=<the session's> gatehouse guard install codex`
        (its `hooks.json` and `[features] hooks = true`), then trusts it as a person does
        once (Codex skips an untrusted hook silently: `gatehouse guard doctor codex`)."""
        core.install_guard(s, s.setup.get("safety"), "codex", {"CODEX_HOME": s.state["codex_home"]})
        self._trust_hooks(s)

    def _write_config(self, s: Session, hooks: bool, trusted: dict[str, str]) -> None:
        setup = s.setup
        roots = (setup.get("workspaces") or [])[1:]
        lines = [
            'model = "scripted"', 'model_provider = "scripted"',
            'check_for_update_on_startup = false',
            '[analytics]', 'enabled = false',
            '[model_providers.scripted]', 'name = "scripted"',
            'base_url = %s' % toml_str(s.model_url + "/v1"), 'wire_api = "responses"',
            'env_key = "GATEHOUSE_SCRIPTED_KEY"', 'request_max_retries = 0', 'stream_max_retries = 0',
            '[sandbox_workspace_write]', 'network_access = false',
            'writable_roots = [%s]' % ", ".join(toml_str(r) for r in roots),
            # A fence the person asked for (FENCE-*) covers /tmp and $TMPDIR too, which
            # workspace-write leaves writable unless told (the runner's fixture, like
            # any other path outside the workspace, may well be under /tmp).
            'exclude_slash_tmp = %s' % ("true" if setup.get("fence_policy") else "false"),
            'exclude_tmpdir_env_var = %s' % ("true" if setup.get("fence_policy") else "false"),
            '[projects.%s]' % toml_str(setup["workspace"]), 'trust_level = "trusted"',
        ]
        if hooks:
            lines += ['[features]', 'hooks = true']
        for key, digest in trusted.items():
            lines += ['[hooks.state.%s]' % toml_str(key), 'trusted_hash = %s' % toml_str(digest)]
        with open(os.path.join(s.state["codex_home"], "config.toml"), "w") as f:
            f.write("\n".join(lines) + "\n")

    def _trust_hooks(self, s: Session) -> None:
        """What a person does once after writing hooks: trust them (Codex skips untrusted
        hooks silently). The hashes are Codex's own, read back through `hooks/list`."""
        res = core.run_process([sys.executable, DRIVER, binary(), s.cwd, "--list-hooks"],
                               self.env(s), s.cwd, deadline_s=30)
        trusted: dict[str, str] = {}
        for line in res.stdout.splitlines():
            m = json.loads(line)
            for entry in (m.get("result") or {}).get("data") or []:
                if entry.get("errors"):
                    raise AgentError("Codex does not load the hooks: %s" % entry["errors"])
                for h in entry.get("hooks") or []:
                    trusted[h["key"]] = h["currentHash"]
        if not trusted:
            raise AgentError("Codex lists none of the hooks written; last stderr:\n%s" % res.last_stderr())
        self._write_config(s, True, trusted)

    def env(self, s: Session) -> dict[str, str]:
        e = super().env(s)
        e.update(CODEX_HOME=s.state["codex_home"], GATEHOUSE_SCRIPTED_KEY="sk-scripted-model",
                 RUST_LOG="error")
        if self.guard:
            e["GATEHOUSE_GUARD_CONFIG"] = s.state["guard_config"]
        return e

    # -- one step --------------------------------------------------------------------------

    def script(self, s: Session, call: Call) -> list[Any]:
        if call.tool not in ("shell", "execute_code"):
            raise Unsupported("tool %r: Codex has no file tools of its own but apply_patch; the "
                              "adapter maps its shell tool only" % call.tool)
        # Codex has no code tool: code runs as a model would run it, `python3 -c`.
        line = mapping.shell_line(call)
        args = {"cmd": line}
        s.state["line"] = line
        if call.cwd:
            args["workdir"] = s.abs_path(call.cwd)
        return [("exec_command", args), "done"]

    def command(self, s: Session, call: Call) -> list[str]:
        # Guarded, an approved call (a fence `run`): the person approves the line the only
        # way this agent's guard takes, in its allow list, for this run.
        self.approve_in_guard(s, call)
        # An approved call (a fence `run`) is one the person accepts when Codex asks:
        # `never` would instead refuse what Codex asks about (`rm -f` style lines).
        approval = "untrusted" if call.approved and not self.guard else s.state["approval"]
        answer = "accept" if call.if_asked == "yes" else "decline"
        argv = [sys.executable, DRIVER, binary(), s.cwd, approval, s.state["sandbox"], answer]
        if self.guard:
            return argv   # the guard's `gatehouse exec` holds the call
        # Its own sandbox does not hold a call the person approved (it runs unsandboxed):
        # with the sandbox on, a confinement its bubblewrap nests in.
        return core.confine(argv, os.path.dirname(os.path.normpath(s.setup["workspace"])),
                            nests=s.state["sandbox"] != "danger-full-access")

    def observe_run(self, s: Session, call: Call, result: RunResult,
                 requests: list[dict[str, Any]]) -> Observed:
        msgs = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
        asked = any("answered" in m for m in msgs)
        items = [m["params"]["item"] for m in msgs if m.get("method") == "item/completed"
                 and m["params"]["item"].get("type") == "commandExecution"]
        hooks = [m["params"]["run"] for m in msgs if m.get("method") == "hook/completed"]
        done = any(m.get("method") == "turn/completed" for m in msgs)
        results: list[str] = []
        for r in requests:
            if r.get("body") and not r.get("side") and r.get("turn"):
                results = OpenAIResponsesWire().tool_results(r["body"])
        if not done:
            raise AgentError("Codex did not finish the turn (driver exit %s); last stderr:\n%s"
                             % (result.rc, result.last_stderr()))
        if not items and not results:
            raise AgentError("Codex gave the scripted call no result; last stderr:\n%s" % result.last_stderr())
        text = results[-1] if results else ""
        exit_code, output = _unified_exec(text)
        item = items[0] if items else None
        # A command that ends at once (a sandbox refusal, say) may leave no command item;
        # the exit Codex wrote for the model still says it ran.
        ran = (item is not None and item.get("status") in ("completed", "failed")
               and (item.get("exitCode") is not None or exit_code is not None)) or \
            (item is None and exit_code is not None)
        if ran:
            if item is not None and item.get("exitCode") is not None:
                exit_code = item["exitCode"]
            if output is None:
                output = (item or {}).get("aggregatedOutput") or ""
            return core.Observed(ran=True, asked=asked, exit=exit_code, output=output)
        blocked = [h for h in hooks if h.get("status") in ("blocked", "stopped")]
        if blocked:
            by = "hook"
        elif item is not None and item.get("status") == "declined":
            by = "user"
        elif "policy forbids" in text:
            by = "rule"
        else:
            by = "mode"
        return core.Observed(ran=False, asked=asked, denied=True, by=by, message=text or None)

    def held_by(self, s: Session) -> Optional[str]:
        if self.guard:
            return "native"
        return "off" if s.state.get("sandbox") == "danger-full-access" else "bwrap"


def _words(line: str) -> list[str]:
    import shlex
    try:
        return shlex.split(line)
    except ValueError:
        raise Unsupported("%r: not a line Codex's command-prefix rules can split" % line) from None


UNIFIED = re.compile(r"Process exited with code (-?\d+)")


def _unified_exec(text: str) -> tuple[Optional[int], Optional[str]]:
    """(exit, output) from the text Codex's unified exec gives the model, or (None, None)."""
    m = UNIFIED.search(text or "")
    if not m:
        return None, None
    _, sep, out = text.partition("\nOutput:\n")
    return int(m.group(1)), out if sep else ""


if __name__ == "__main__":
    core.serve(CodexCli(core.guard_argument(sys.argv[1:])))
