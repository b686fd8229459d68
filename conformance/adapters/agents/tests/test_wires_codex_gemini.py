"""The OpenAI Responses and Gemini wires of the scripted model, and the hook shim, with no
real agent: each wire answers a conversation's turn N with turn N of the script (in the
stream shape Codex and Gemini CLI read), a side call with its canned text, a bad body with
its own error object; the shim passes a hook's exit status through and translates only a
decision. Run: cargo xtask test (with the
package's other tests), or python3 -m unittest discover -s conformance/adapters -t .
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request
from typing import Any, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
AGENTS = os.path.dirname(HERE)

from conformance.adapters.agents.scripted_model import ScriptedModel, Wire  # noqa: E402
from conformance.adapters.agents.wires.gemini import GeminiWire  # noqa: E402
from conformance.adapters.agents.wires.openai_responses import OpenAIResponsesWire  # noqa: E402


def post(url: str, body: Any, raw: Optional[bytes] = None) -> tuple[int, str]:
    data = raw if raw is not None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def sse(text: str) -> list[Any]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


class WireTest(unittest.TestCase):
    def setUp(self) -> None:
        self.d = tempfile.mkdtemp(prefix="gh-wires-test-")

    def tearDown(self) -> None:
        shutil.rmtree(self.d, ignore_errors=True)

    def model(self, wire: Wire) -> ScriptedModel:
        m = ScriptedModel(wire, os.path.join(self.d, "log.jsonl")).start()
        self.addCleanup(m.stop)
        m.script([("exec_command", {"cmd": "ls"}), "done"])
        return m

    def test_responses_turns_side_calls_and_errors(self) -> None:
        m = self.model(OpenAIResponsesWire())
        url = m.url + "/v1/responses"
        tools = [{"type": "function", "name": "exec_command"}]
        st, text = post(url, {"stream": True, "tools": tools, "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]})
        self.assertEqual(st, 200)
        events = sse(text)
        self.assertEqual([e["type"] for e in events][0], "response.created")
        self.assertEqual(events[-1]["type"], "response.completed")
        item = next(e["item"] for e in events if e["type"] == "response.output_item.done")
        self.assertEqual((item["type"], item["name"], json.loads(item["arguments"])),
                         ("function_call", "exec_command", {"cmd": "ls"}))
        st, text = post(url, {"stream": True, "tools": tools, "input": [
            item, {"type": "function_call_output", "call_id": item["call_id"], "output": "a\n"}]})
        done = next(e["item"] for e in sse(text) if e["type"] == "response.output_item.done")
        self.assertEqual(done["content"][0]["text"], "done")
        st, text = post(url, {"input": "title please"})          # no tools: a side call
        self.assertEqual(json.loads(text)["output"][0]["content"][0]["text"], "OK")
        st, text = post(url, None, raw=b"{not json")
        self.assertEqual(st, 400)
        self.assertIn("not JSON", json.loads(text)["error"]["message"])
        self.assertEqual([r["turn"] for r in m.requests() if not r["side"] and r["body"]], [0, 1])

    def test_gemini_stream_and_plain_answers(self) -> None:
        m = self.model(GeminiWire())
        m.script([("run_shell_command", {"command": "ls"}), "done"])
        base = m.url + "/v1beta/models/gemini-2.5-flash"
        tools = [{"functionDeclarations": [{"name": "run_shell_command"}]}]
        st, text = post(base + ":streamGenerateContent?alt=sse", {"tools": tools, "contents": [
            {"role": "user", "parts": [{"text": "go"}]}]})
        self.assertEqual(st, 200)
        part = sse(text)[0]["candidates"][0]["content"]["parts"][0]
        self.assertEqual(part["functionCall"]["args"], {"command": "ls"})
        st, text = post(base + ":generateContent", {"tools": tools, "contents": [
            {"role": "model", "parts": [part]},
            {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command",
                                                             "response": {"output": "a"}}}]}]})
        self.assertEqual(json.loads(text)["candidates"][0]["content"]["parts"][0]["text"], "done")
        st, text = post(base + ":generateContent", {"contents": []})   # no tools: a side call
        self.assertEqual(json.loads(text)["candidates"][0]["content"]["parts"][0]["text"], "OK")
        st, text = post(base + ":streamGenerateContent", {"tools": tools, "contents": "x"})
        self.assertEqual((st, json.loads(text)["error"]["status"]), (400, "INVALID_ARGUMENT"))


class ShimTest(unittest.TestCase):
    def shim(self, fmt: str, command: str, agent_in: Any) -> tuple[int, str, str]:
        p = subprocess.run([sys.executable, os.path.join(AGENTS, "hook_shim.py"), fmt, "pre_tool_use",
                            "balanced", "--", command], input=json.dumps(agent_in),
                           capture_output=True, text=True, timeout=20)
        return p.returncode, p.stdout, p.stderr

    def test_exit_status_and_garbage_pass_through(self) -> None:
        codex_in = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
        self.assertEqual(self.shim("codex", "echo no >&2; exit 2", codex_in), (2, "", "no\n"))
        self.assertEqual(self.shim("codex", "echo garbage; exit 1", codex_in)[:2], (1, "garbage\n"))
        self.assertEqual(self.shim("gemini", "echo '{}'", codex_in)[:2], (0, "{}\n"))
        self.assertEqual(self.shim("codex", "kill -TERM $$", codex_in)[0], -15)

    def test_decisions_translated_and_input_given_as_the_spec_says(self) -> None:
        gem_in = {"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                  "tool_input": {"command": "rm x"}}
        rc, out, _ = self.shim("gemini", "cat >&2; echo '{\"permission_decision\":\"deny\","
                                         "\"permission_decision_reason\":\"r\"}'", gem_in)
        self.assertEqual((rc, json.loads(out)), (0, {"decision": "deny", "reason": "r"}))
        _, _, err = self.shim("gemini", "cat >&2", gem_in)
        seen = json.loads(err)
        self.assertEqual((seen["tool_name"], seen["tool_input"], seen["hook_event_name"]),
                         ("shell", {"cmd": "rm x"}, "pre_tool_use"))
        rc, out, _ = self.shim("codex", "echo '{\"updated_input\":{\"cmd\":\"echo safe\"}}'", gem_in)
        self.assertEqual(json.loads(out)["hookSpecificOutput"]["updatedInput"], {"command": "echo safe"})


if __name__ == "__main__":
    unittest.main()
