"""What the agent adapters' tests do alike, with no agent installed: an adapter made without
its `__init__` (which asks the agent's program for its version), a session on a workspace
that need not exist, the files `prepare` writes from a setup and an agent file (in a
temporary fixture, the scripted model's address a fixed one), the hook shim run in one
agent's format, and the checks every adapter passes alike: a run with no tool call is an
AgentError that carries the agent's stderr, and a file call the agent's file tools refuse
before asking is `unsupported`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Optional, TypeVar
from unittest import mock

from conformance.adapters.agents import agent_adapter as core
from conformance.adapters.agents.agent_adapter import Call, RunResult, Unsupported

AGENTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL_URL = "http://127.0.0.1:9"

A = TypeVar("A", bound=core.Agent)


def bare(cls: type[A]) -> A:
    """The adapter without its `__init__`: no agent program is asked for its version."""
    return cls.__new__(cls)


def session(agent: core.Agent, workspace: str = "/w/work", **setup: Any) -> core.Session:
    """A session of `agent` on `workspace` (which need not exist), its setup `setup`."""
    return core.Session(agent, "s", dict(setup, workspace=workspace))


def prepare(agent: core.Agent, setup: dict[str, Any],
            agent_file: Optional[str] = None) -> dict[str, Any]:
    """The files `agent.prepare` wrote into the session's configuration directory, by path
    relative to it, and `_state`, the session's state, for `setup` and the agent file's text
    (in a temporary fixture: a workspace `work/` and the home beside it)."""
    with tempfile.TemporaryDirectory() as d:
        ws = os.path.join(d, "work")
        os.makedirs(ws)
        if agent_file is not None:
            with open(os.path.join(d, "agent.yaml"), "w") as f:
                f.write(agent_file)
            setup["agent_file"] = os.path.join(d, "agent.yaml")
        s = core.Session(agent, "s", dict(setup, workspace=ws, home=d))
        os.makedirs(s.dirs["config"])
        s.model = mock.Mock(url=MODEL_URL)
        agent.prepare(s)
        out: dict[str, Any] = {"_state": dict(s.state)}
        for root, _dirs, files in os.walk(s.dirs["config"]):
            for name in files:
                path = os.path.join(root, name)
                with open(path) as f:
                    out[os.path.relpath(path, s.dirs["config"])] = f.read()
        return out


def run_shim(fmt: str, hook: str, agent_in: Any, env: Optional[dict[str, str]] = None,
             event: str = "pre_tool_use", safety: str = "balanced") -> subprocess.CompletedProcess[str]:
    """hook_shim.py in the agent's format `fmt`, around the scenario's hook command `hook`,
    given `agent_in` as the agent gives its hook input."""
    return subprocess.run([sys.executable, os.path.join(AGENTS, "hook_shim.py"), fmt, event, safety,
                           "--", hook], input=json.dumps(agent_in), capture_output=True, text=True,
                          timeout=20, env=dict(os.environ, **(env or {})))


def assert_no_call_is_an_error(test: unittest.TestCase, agent: core.Agent) -> None:
    """A run that made no tool call is an AgentError with the agent's last stderr."""
    with test.assertRaises(core.AgentError) as e:
        agent.observe(session(agent), Call("shell", "ls"), RunResult(1, "", "boom\n"), [])
    test.assertIn("boom", str(e.exception))


def assert_file_calls_refused(test: unittest.TestCase, agent: core.Agent) -> tuple[core.Session, str]:
    """A write over a file that exists and an edit with no old text are `unsupported` (the
    agent's file tools refuse both before asking, and it has none that does them). Returns
    the session (its workspace this folder) and the path of a new file in it, for the write
    the agent can make."""
    ws = os.path.dirname(os.path.abspath(__file__))
    s = session(agent, workspace=ws)
    with test.assertRaises(Unsupported):
        agent.script(s, Call("write", {"path": "helpers.py", "content": "x"}))
    with test.assertRaises(Unsupported):
        agent.script(s, Call("edit", {"path": "helpers.py", "old": "", "new": "y"}))
    return s, os.path.join(ws, "new-file")
