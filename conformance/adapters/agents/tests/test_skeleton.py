"""The shared skeleton the agent adapters stand on, with no agent: how a hook of the agent
file becomes the agent's hook line (`mapping.command_hooks`, `mapping.shim_command`, run
here through `sh` into the real hook shim), a hook matcher the agent's tool names
(`tool_matcher`, `shell_matcher`), a shell or code call the line a model runs
(`shell_line`), a step's path an absolute one (`Session.abs_path`), `--guard` on an agent
(`Agent.use_guard`), and what the shell-only agents (Codex CLI, Gemini CLI) refuse alike
(`ShellAgent.check_setup`).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import textwrap
import unittest
from typing import Any

from conformance.adapters.agents import agent_adapter as core
from conformance.adapters.agents import mapping
from conformance.adapters.agents.agent_adapter import Call, Unsupported
from conformance.adapters.agents.tests import helpers

TOOLS = {"shell": "bash", "write": "create"}


def sources(agent_file: str) -> mapping.Sources:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "agent.yaml")
        with open(path, "w") as f:
            f.write(textwrap.dedent(agent_file))
        return mapping.Sources({"workspace": d, "agent_file": path})


class HookTest(unittest.TestCase):
    def test_shim_command_runs_the_hook_through_the_shim_with_its_env(self) -> None:
        cmd = mapping.shim_command("copilot", "pre_tool_use", None,
                                   "echo \"$WHO it's\" >&2; echo '{\"permission_decision\":\"deny\"}'",
                                   {"WHO": "a b"})
        self.assertTrue(cmd.startswith("env 'WHO=a b' "), cmd)
        p = subprocess.run(["sh", "-c", cmd], input=json.dumps({"toolName": "bash", "toolArgs": {
            "command": "ls"}}), capture_output=True, text=True, timeout=20)
        self.assertEqual((p.returncode, p.stderr, json.loads(p.stdout)),
                         (0, "a b it's\n", {"permissionDecision": "deny"}))
        self.assertNotIn("env ", mapping.shim_command("codex", "pre_tool_use", "strict", "true"))

    def test_command_hooks_refuse_in_order_what_the_agent_cannot_run(self) -> None:
        src = sources("""\
            agents:
              root:
                hooks:
                  pre_tool_use: [{matcher: fetch, hooks: [{type: command, command: a}]}]
                  post_tool_use: [{hooks: [{type: prompt, prompt: b}]}]
            """)
        hooks = mapping.command_hooks(src, {"pre_tool_use": "Pre", "post_tool_use": "Post"}, "X", "X runs commands")
        self.assertEqual(next(hooks), ("Pre", "pre_tool_use", "fetch", {"type": "command", "command": "a"}))
        with self.assertRaisesRegex(Unsupported, r"^hooks.post_tool_use: a 'prompt' hook \(X runs commands\)$"):
            next(hooks)
        with self.assertRaisesRegex(Unsupported, r"^hooks.post_tool_use: X has no such event$"):
            list(mapping.command_hooks(src, {"pre_tool_use": "Pre"}, "X", "-"))

    def test_matchers(self) -> None:
        self.assertIsNone(mapping.tool_matcher(None, TOOLS, "X"))
        self.assertIsNone(mapping.tool_matcher(" * ", TOOLS, "X"))
        self.assertEqual(mapping.tool_matcher("Shell | write", TOOLS, "X"), "bash|create")
        with self.assertRaisesRegex(Unsupported, "no X tool for 'read'"):
            mapping.tool_matcher("shell|read", TOOLS, "X")
        self.assertIsNone(mapping.shell_matcher(None, "Bash", "-"))
        self.assertEqual(mapping.shell_matcher("shell|*", "Bash", "-"), "Bash")
        with self.assertRaisesRegex(Unsupported, "only the shell"):
            mapping.shell_matcher("shell|write", "Bash", "only the shell")


class CallTest(unittest.TestCase):
    def test_shell_line(self) -> None:
        self.assertEqual(mapping.shell_line(Call("shell", "ls", cwd="sub")), "ls")
        self.assertEqual(mapping.shell_line(Call("execute_code", {"code": "print('x')"})),
                         "python3 -c 'print('\"'\"'x'\"'\"')'")
        self.assertEqual(mapping.shell_line(Call("shell", "ls", cwd="sub dir"), cd_in="/w"),
                         "cd '/w/sub dir' && ls")
        self.assertEqual(mapping.shell_line(Call("shell", "ls", cwd="/abs"), cd_in="/w"), "cd '/abs' && ls")
        self.assertEqual(mapping.shell_line(Call("shell", "ls"), cd_in="/w"), "ls")

    def test_abs_path_is_the_workspaces(self) -> None:
        s = helpers.session(core.Agent(), workspace="/w/work")
        self.assertEqual((s.abs_path("f"), s.abs_path("/etc/f")), ("/w/work/f", "/etc/f"))


class Shelly(core.ShellAgent):
    name = "shelly"
    label = "Shelly"
    sandbox = "Shelly's box"


class AgentTest(unittest.TestCase):
    def test_use_guard_names_the_guarded_agent_and_leaves_the_class_alone(self) -> None:
        alone, guarded = Shelly(), Shelly()
        alone.use_guard(None)
        guarded.use_guard("/g/gatehouse")
        self.assertEqual((alone.name, alone.capabilities, alone.fence_backend, alone.guard),
                         ("shelly", ["gate", "permissions", "hooks", "fence"], "bwrap", None))
        self.assertEqual((guarded.name, guarded.capabilities[-1], guarded.fence_backend, guarded.guard),
                         ("shelly+gatehouse", "guard", "native", "/g/gatehouse"))
        self.assertNotIn("guard", Shelly.capabilities)

    def test_what_a_shell_agent_refuses(self) -> None:
        base: dict[str, Any] = {"workspace": "/w/work", "home": "/w"}

        def reason(agent: core.Agent, **setup: Any) -> str:
            with self.assertRaises(Unsupported) as e:
                agent.check_setup(dict(base, **setup))
            return str(e.exception)

        agent = Shelly()
        self.assertEqual(reason(agent, limits={}), "limits: Shelly cannot be made to act as on a poorer kernel")
        self.assertEqual(reason(agent, choices={}), "choices: Shelly's box has no counterpart for gatehouse "
                                                    "exec's flags")
        self.assertEqual(reason(agent, grants=[{"tool": "execute_code", "key": "x", "kind": "exact"}]),
                         "grant for execute_code: Shelly has no code tool")
        agent.check_setup(dict(base, workspaces=["/w/work", "/w/other"]))
        agent.extra_workspaces = False
        self.assertEqual(reason(agent, workspaces=["/w/work", "/w/other"]),
                         "workspaces: the adapter does not map extra workspace roots")


if __name__ == "__main__":
    unittest.main()
