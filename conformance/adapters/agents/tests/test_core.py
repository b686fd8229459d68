"""Bad input and bounds for the agents' shared core (issue 31, item 6), with no real agent:
a fake agent (fake_agent.py) that hangs, crashes, prints what cannot be parsed or waits on a
terminal must make that step `error` with its last stderr lines, within the deadline, and
the adapter must go on answering the next request; the scripted model must answer bad
requests with its wire's error; the confinement must keep a run from writing outside the
scenario's directory. Run: cargo xtask test (with the
package's other tests), or python3 -m unittest discover -s conformance/adapters -t .
"""

from __future__ import annotations

import io
import json
import time
import os
import shutil
import sys
import tempfile
import unittest
import urllib.error
import urllib.request
from typing import Any

from conformance.adapters.agents import agent_adapter as core
from conformance.adapters.agents.agent_adapter import Call, Observed, RunResult, Session
from conformance.adapters.agents.scripted_model import ScriptedModel
from conformance.adapters.protocol import Answer, Request
from conformance.adapters.agents.wires.anthropic import AnthropicWire
from conformance.adapters.agents.wires.openai_chat import OpenAIChatWire

HERE = os.path.dirname(os.path.abspath(__file__))


class FakeAgent(core.Agent):
    name = "fake"
    version = "0"
    wire = AnthropicWire
    capabilities = ["gate"]
    # Long enough that a fake agent which does finish (a python3 start) finishes on a
    # loaded CI machine; only the hanging one meets it.
    deadline_s = 15
    confined = False

    def script(self, s: Session, call: Call) -> list[Any]:
        return [("Bash", {"command": call.line()}), "done"]

    def env(self, s: Session) -> dict[str, str]:
        return dict(super().env(s), FAKE_MODEL_URL=s.model_url)

    def command(self, s: Session, call: Call) -> list[str]:
        mode, _, arg = call.line().partition(" ")
        argv = [sys.executable, os.path.join(HERE, "fake_agent.py"), mode] + ([arg] if arg else [])
        if self.confined:
            return core.confine(argv, os.path.dirname(s.setup["workspace"]))
        return argv

    def observe(self, s: Session, call: Call, result: RunResult,
                requests: list[dict[str, Any]]) -> Observed:
        line = result.stdout.strip().splitlines()[-1]
        got = json.loads(line)
        return core.Observed(ran=True, exit=0, output=json.dumps(got))


class CoreTest(unittest.TestCase):
    def setUp(self) -> None:
        self.r = tempfile.mkdtemp(prefix="gh-agents-test-")
        for d in ("workspace", "home", "outside"):
            os.makedirs(os.path.join(self.r, d))

    def tearDown(self) -> None:
        shutil.rmtree(self.r, ignore_errors=True)

    def converse(self, agent: core.Agent, lines: list[Request]) -> dict[int, Answer]:
        setup: dict[str, Any] = {"workspace": os.path.join(self.r, "workspace"),
                 "home": os.path.join(self.r, "home"), "host": "posix", "asker": "terminal",
                 "allow_list": [], "grants": [], "card_window_ms": None}
        reqs = [{"id": 0, "op": "hello", "protocol": "1.6"},
                {"id": 1, "op": "open", "session": "s1", "setup": setup}]
        reqs += [dict(r, id=i + 2, session="s1") for i, r in enumerate(lines)]
        reqs += [{"id": 99, "op": "close", "session": "s1"}, {"id": 100, "op": "bye"}]
        out = io.StringIO()
        core.serve(agent, io.StringIO("\n".join(json.dumps(r) for r in reqs) + "\n"), out)
        answers = [json.loads(ln) for ln in out.getvalue().splitlines()]
        self.assertEqual([a["id"] for a in answers], [r["id"] for r in reqs])
        return {a["id"]: a for a in answers}

    def assert_errored(self, answer: Answer, *needles: str) -> None:
        self.assertFalse(answer["ok"], answer)
        self.assertEqual(answer["error"]["kind"], "error", answer)
        for n in needles:
            self.assertIn(n, answer["error"]["message"])

    def test_each_bad_run_is_errored_with_its_stderr_and_the_run_goes_on(self) -> None:
        a = self.converse(FakeAgent(), [
            {"op": "decide", "input": "hang"},
            {"op": "decide", "input": "crash"},
            {"op": "decide", "input": "garbage"},
            {"op": "decide", "input": "tty"},
            {"op": "decide", "input": "ok"},
        ])
        self.assertTrue(a[1]["ok"])
        self.assert_errored(a[2], "did not finish within 15 s", "waiting forever")
        self.assert_errored(a[3], "cannot read the agent's output", "Segmentation fault (pretend)")
        self.assert_errored(a[4], "cannot read the agent's output", "printed garbage")
        self.assert_errored(a[5], "cannot read the agent's output", "tty")
        self.assertTrue(a[6]["ok"], a[6])
        self.assertEqual(a[6]["decision"], "allow")
        self.assertTrue(a[99]["ok"])
        # the session's directory inside the fixture is gone after close
        self.assertFalse(os.path.exists(os.path.join(self.r, ".agent-s1")))

    def test_unparseable_request_and_unknown_op(self) -> None:
        out = io.StringIO()
        core.serve(FakeAgent(), io.StringIO('{not json\n{"id": 5, "op": "hello"}\n'
                                            '{"id": 6, "op": "posture", "session": "nope"}\n'), out)
        answers = [json.loads(ln) for ln in out.getvalue().splitlines()]
        self.assertEqual(answers[0]["id"], None)
        self.assertEqual(answers[0]["error"]["kind"], "error")
        self.assertTrue(answers[1]["ok"])
        self.assertEqual(answers[2]["error"]["kind"], "error")

    def test_unsupported_setup_names_the_field(self) -> None:
        a = self.converse(FakeAgent(), [])
        self.assertTrue(a[1]["ok"])
        out = io.StringIO()
        setup = {"workspace": os.path.join(self.r, "workspace"), "home": self.r,
                 "host": "windows"}
        core.serve(FakeAgent(), io.StringIO(json.dumps(
            {"id": 1, "op": "open", "session": "s1", "setup": setup}) + "\n"), out)
        ans = json.loads(out.getvalue())
        self.assertEqual(ans["error"]["kind"], "unsupported")
        self.assertIn("host", ans["error"]["message"])

    @unittest.skipUnless(shutil.which("bwrap"), "bubblewrap is not installed")
    def test_confinement_keeps_writes_inside_the_scenario_directory(self) -> None:
        outside = tempfile.mkdtemp(prefix="gh-agents-outside-")
        try:
            agent = FakeAgent()
            agent.confined = True
            target = os.path.join(outside, "victim")
            inside = os.path.join(self.r, "outside", "fine")
            a = self.converse(agent, [{"op": "decide", "input": "outside " + target},
                                      {"op": "decide", "input": "outside " + inside}])
            self.assertTrue(a[2]["ok"], a[2])
            self.assertFalse(os.path.exists(target))
            self.assertTrue(os.path.exists(inside))
        finally:
            shutil.rmtree(outside, ignore_errors=True)


class ConfineTest(unittest.TestCase):
    """What a confined agent's command holds, read from inside: no capability (a command
    an agent lets run once set this machine's clock with `date -s`), PID 1 its own, and a
    host name change refused (to the name it has: nothing changes if it is not). Its
    twin: the same probe unconfined, as the user running the suite, where that user is
    root, holds capabilities."""

    PROBE = ("grep '^CapEff' /proc/self/status; cat /proc/1/comm; "
             "hostname \"$(hostname)\" 2>/dev/null && echo renamed || echo kept")

    def run_probe(self, argv: list[str]) -> str:
        import subprocess
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout

    @unittest.skipUnless(shutil.which("bwrap"), "bubblewrap is not installed")
    def test_a_confined_command_has_no_capability_and_its_own_processes(self) -> None:
        root = tempfile.mkdtemp(prefix="gh-agents-confine-")
        try:
            out = self.run_probe(core.confine(["sh", "-c", self.PROBE], root))
        finally:
            shutil.rmtree(root, ignore_errors=True)
        self.assertIn("CapEff:\t0000000000000000", out)
        self.assertEqual(out.splitlines()[1], "bwrap")
        self.assertEqual(out.splitlines()[2], "kept")
        if os.geteuid() == 0:
            host = self.run_probe(["sh", "-c", "grep '^CapEff' /proc/self/status"])
            self.assertNotIn("CapEff:\t0000000000000000", host)


class NestingConfineTest(unittest.TestCase):
    """The confinement an agent's own bubblewrap nests in (`confine(nests=True)`, for Codex
    CLI and Claude Code with their sandboxes on, whose approved calls run outside those
    sandboxes): a nested bubblewrap with its own PID namespace and /proc runs there, while
    the machine's clock stays out of reach and the processes are the confinement's own.
    Its twin: the plain confinement, where the nested bubblewrap cannot start (why these
    agents ran unconfined before)."""

    PROBE = ("bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent "
             "-- true 2>/dev/null && echo nested || echo no-nested; cat /proc/1/comm; "
             "date -s 2001-01-01 >/dev/null 2>&1 && echo clock-set || echo clock-kept; "
             "ls /proc | grep -c '^[0-9]'")

    @unittest.skipUnless(shutil.which("bwrap") and os.geteuid() == 0,
                         "bubblewrap is not installed, or not run as root")
    def test_a_nested_bubblewrap_runs_and_the_clock_stays_out_of_reach(self) -> None:
        import subprocess
        root = tempfile.mkdtemp(prefix="gh-agents-nest-")
        try:
            nested = subprocess.run(core.confine(["sh", "-c", self.PROBE], root, nests=True),
                                    capture_output=True, text=True, check=True).stdout
            plain = subprocess.run(core.confine(["sh", "-c", self.PROBE], root),
                                   capture_output=True, text=True, check=True).stdout
        finally:
            shutil.rmtree(root, ignore_errors=True)
        lines = nested.splitlines()
        self.assertEqual(lines[:3], ["nested", "bwrap", "clock-kept"], nested)
        # Its own processes only: bubblewrap's init, the shell, `ls` and `grep`.
        self.assertLess(int(lines[3]), 10, nested)
        self.assertEqual(plain.splitlines()[:3], ["no-nested", "bwrap", "clock-kept"], plain)


class ScriptedModelTest(unittest.TestCase):
    def post(self, m: ScriptedModel, path: str, raw: bytes) -> tuple[int, str]:
        req = urllib.request.Request(m.url + path, data=raw, method="POST")
        try:
            r = urllib.request.urlopen(req, timeout=10)
            return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def test_turns_side_calls_and_errors_in_the_wire_format(self) -> None:
        d = tempfile.mkdtemp()
        try:
            for wire, path, side_path in ((AnthropicWire(), "/v1/messages", "/v1/messages"),
                                          (OpenAIChatWire(), "/v1/chat/completions",
                                           "/v1/chat/completions")):
                m = ScriptedModel(wire, os.path.join(d, "log.jsonl")).start()
                try:
                    m.script([("Bash", {"command": "ls"}), "all done"])
                    tool_result = ({"role": "user", "content": [{"type": "tool_result", "content": "x"}]}
                                   if isinstance(wire, AnthropicWire) else {"role": "tool", "content": "x"})
                    first = {"tools": [{}], "messages": [{"role": "user", "content": "go"}]}
                    second = {"tools": [{}], "messages": [{"role": "user", "content": "go"}, tool_result]}
                    st, body = self.post(m, path, json.dumps(first).encode())
                    self.assertEqual(st, 200)
                    self.assertIn('Bash', body)
                    self.assertIn('ls', body)
                    st, body = self.post(m, path, json.dumps(second).encode())
                    self.assertIn("all done", body)
                    st, body = self.post(m, side_path, json.dumps({"messages": []}).encode())
                    self.assertIn(wire.side_text, body)
                    st, body = self.post(m, path, b"{oops")
                    self.assertEqual(st, 400)
                    self.assertIn("not JSON", json.loads(body)["error"]["message"])
                    st, body = self.post(m, "/nowhere", b"{}")
                    self.assertEqual(st, 404)
                    self.assertIn("error", json.loads(body))
                    # The server records a request after its reply has gone out, so the
                    # last entry may land a moment after the client read the reply, and on
                    # a loaded machine one request's record may follow the next one's.
                    for _ in range(100):
                        log = m.requests()
                        if len(log) >= 5:
                            break
                        time.sleep(0.05)
                    self.assertCountEqual([(r["turn"], r["side"], r["status"]) for r in log],
                                     [(0, False, 200), (1, False, 200), (None, True, 200),
                                      (None, False, 400), (None, False, 404)])
                finally:
                    m.stop()
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    unittest.main()
