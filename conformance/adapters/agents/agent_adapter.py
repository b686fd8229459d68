"""The part every agent adapter shares: the adapter protocol around one real agent.

An agent adapter (`claude_code/adapter.py`, `opencode/adapter.py`, ...) scores a whole
agent (its rules, modes, hooks, sandbox and prompt) by running it headless for each step,
with its model replaced by the scripted model of `scripted_model.py`, which makes the
call the step describes. This module speaks the protocol (spec/adapter-protocol.md) for
it and owns everything that is not particular to one agent:

- `hello` with the agent's name, version and capabilities; `open` checks the setup
  (`Agent.check_setup` raises `Unsupported` naming the field the agent cannot express,
  which the runner counts as skipped with that reason), makes the session's directories
  *inside the scenario's fixture* (`R/.agent-<session>/`, beside the runner's workspace,
  home and outside trees: the agent's config directory, its temporary directory, XDG
  directories, the scripted model's log), starts a scripted model on 127.0.0.1 for the
  session and lets the agent write its configuration (`Agent.prepare`); `close` stops the
  model and removes the directory; `bye` ends.
- every tool-call step becomes a `Call` (the protocol's tool: `shell`, `execute_code`,
  `read`, `write`, `edit`, or another name; its input; its id; what the person answers if
  the agent asks; whether the call is already approved, as a fence `run` is). The agent
  adapter turns it into the script (`Agent.script`: turns in the agent's own vocabulary)
  and the command line (`Agent.command`), the core runs the agent with a deadline, and the
  agent adapter reads what happened from the agent's output (`Agent.observe` returns an
  `Observed`: ran, asked, denied and by what, exit, the output the model was given).
- a per-run deadline (`GATEHOUSE_AGENT_DEADLINE`, seconds, default 45; keep the runner's
  `--step-timeout` above it): the agent runs in a session and process group of its own,
  with no terminal (stdin is /dev/null, no controlling tty), and the whole group is killed
  at the deadline and after every run. A run that hangs, crashes, or prints what the agent
  adapter cannot read is answered `error` (the runner reports the step `errored`) with the
  agent's last stderr lines; the adapter itself goes on with the next request.
- the ops: `decide`/`code`/`tool` and `call` report `allow` (the agent ran it without
  asking), `ask` (it asked through its own channel) or `deny` (refused without asking);
  the prompt is answered "no" so that nothing runs on an ask, and `answer` with `once`
  runs the call again with the prompt answered "yes". `act` reports `ran`, `not_run`,
  `exit` and the output the model was given. `run` (the fence) runs the call approved.
  `read`, `write` and `edit` (the file tools) go through the agent's own file tools. What
  an agent has no counterpart for (grant tables, the trust map's queries, postures,
  toggles, restarts) is `unsupported` with the reason, never invented.

The adapter judges nothing: the runner checks the files itself. The agent gets the
runner's environment (as a person's agent gets the person's), with `HOME` set to the
session's home, `PWD` and the working directory set to the workspace, `TMPDIR` and the XDG
directories inside the fixture, and telemetry and update checks off where the agent allows
(`Agent.env`). The loop, `Unsupported` and the setup's fields are `protocol.py`'s.
Standard library only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from typing import IO, Any, Optional, Union

from conformance.adapters import protocol
from conformance.adapters.confinement import bwrap_for, own_user_namespace
from conformance.adapters.agents.scripted_model import ScriptedModel, Wire
from conformance.adapters.protocol import Answer, Failure, Request, Unsupported, cache_dir

HERE = os.path.dirname(os.path.abspath(__file__))

DEADLINE_S = float(os.environ.get("GATEHOUSE_AGENT_DEADLINE", "45"))
STDERR_LINES = 8


class AgentError(Failure):
    """The agent run failed (hung, crashed, or printed what cannot be read)."""


class Call:
    """One tool call, in the protocol's vocabulary."""

    def __init__(self, tool: str, input: Any, call_id: Optional[str] = None,
                 if_asked: str = "no", approved: bool = False, cwd: Optional[str] = None) -> None:
        self.tool = tool
        self.input = input
        self.call_id = call_id
        self.if_asked = if_asked    # what the person answers if the agent asks: yes | no
        self.approved = approved    # a fence `run`: approved before the agent sees it
        self.cwd = cwd

    def line(self) -> str:
        """The command line or code of a shell/execute_code call."""
        if isinstance(self.input, str):
            return self.input
        for key in ("cmd", "command", "code"):
            value = self.input.get(key) if isinstance(self.input, dict) else None
            if isinstance(value, str):
                return value
        raise Unsupported("a %s call whose input has no command: %r" % (self.tool, self.input))


class Observed:
    """What one agent run showed. `by` says what refused: rule, hook, mode, user, sandbox;
    `refused`, the protocol's code when the fence itself refused to start the call."""

    def __init__(self, ran: bool = False, asked: bool = False, denied: bool = False,
                 by: Optional[str] = None, exit: Optional[int] = None, output: str = "",
                 message: Optional[str] = None, refused: Optional[str] = None,
                 refusal: Optional[str] = None) -> None:
        # refused: the fence refused to run the approved call (`choice_refused`), with its
        # one line (`refusal`): what `gatehouse exec` says when the guard's rewrite meets a
        # choice it cannot honour.
        self.refused = refused
        self.refusal = refusal
        self.ran = ran
        self.asked = asked
        self.denied = denied
        self.by = by
        self.exit = exit
        self.output = output
        self.message = message

    def decision(self) -> str:
        if self.asked:
            return "ask"
        return "allow" if self.ran else "deny"

    def __repr__(self) -> str:
        return "Observed(%r)" % self.__dict__


class RunResult:
    """One finished run: its exit status and its output."""

    def __init__(self, rc: int, stdout: str, stderr: str) -> None:
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr

    def last_stderr(self, n: int = STDERR_LINES) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return "\n".join(lines[-n:]) or "(no stderr)"


def run_process(argv: Sequence[str], env: dict[str, str], cwd: str,
                deadline_s: Optional[float] = None, stdin_data: Optional[str] = None) -> RunResult:
    """Runs argv in a session of its own, no terminal, stdout and stderr to files; kills
    the whole process group at the deadline (raising AgentError with the last stderr
    lines) and after it ends (helpers it left behind)."""
    deadline_s = DEADLINE_S if deadline_s is None else deadline_s
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err,
                                 stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
                                 start_new_session=True)
        except OSError as e:
            raise AgentError("cannot start %s: %s" % (argv[0], e)) from e
        timed_out = False
        try:
            if stdin_data is not None and p.stdin is not None:
                try:
                    p.stdin.write(stdin_data.encode())
                    p.stdin.close()
                except BrokenPipeError:
                    pass
            p.wait(timeout=deadline_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            p.wait()
        out.seek(0)
        err.seek(0)
        res = RunResult(p.returncode, out.read().decode("utf-8", "replace"),
                        err.read().decode("utf-8", "replace"))
    if timed_out:
        raise AgentError("the agent did not finish within %g s and was killed; last stderr:\n%s"
                         % (deadline_s, res.last_stderr()))
    return res


def confine(argv: list[str], root: str, extra_writable: Sequence[str] = (),
            nests: bool = False) -> list[str]:
    """argv inside a bubblewrap confinement of the adapter's own: the whole filesystem
    read-only, a fresh /tmp, /dev and /proc, and only `root` (the scenario's directory,
    holding the fixture and the session's agent directories) and `extra_writable` writable;
    the network is shared (the scripted model listens on 127.0.0.1); no capability, and
    processes, IPC and the host name of its own. It keeps a call that an agent lets run
    from touching anything outside the fixture or the machine's clock, processes or name.

    `nests`: for an agent whose own sandbox is on, which makes its own bubblewrap inside
    this one. That needs capabilities in a user namespace (mapping root of the namespace
    above needs CAP_SETFCAP there) and a /proc of its PID namespace with nothing mounted
    over it (bubblewrap's own has read-only covers, which forbid a /proc below; the host's
    shows other PIDs than the nested bubblewrap's): the agent runs in a user namespace of
    its own, root there with that namespace's capabilities, which give it nothing on the
    host (the clock, the host's mounts, modules and processes stay out of reach), and a
    /proc it mounts itself over the host's before it starts. Without it such an agent ran
    unconfined, as the user running the suite (FINDINGS-codex-gemini.md).

    `GATEHOUSE_AGENT_CONFINE=0` turns it off (a host without bubblewrap); without
    bubblewrap and without that switch the run fails rather than go unconfined."""
    bwrap = bwrap_for("GATEHOUSE_AGENT_CONFINE", "keep the agent inside the fixture",
                      AgentError)
    if bwrap is None:
        return argv
    # Every capability dropped and the process, IPC and host-name namespaces its own: an
    # agent in a permissive mode runs what the scripted model asks, as the user running
    # the suite (often root on CI), and a scenario's `date -s 2001-01-01` (the gate's
    # escape-link-following, asked of Cline's gate/ column) set this machine's clock
    # before the capabilities were dropped here. `kill -1`, `reboot`, `hostname` and
    # `mount` are refused the same way.
    out = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev"]
    if nests:
        out += ["--dev-bind", "/proc", "/proc"] + own_user_namespace()
    else:
        out += ["--proc", "/proc", "--cap-drop", "ALL"]
    out += ["--tmpfs", "/tmp", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--die-with-parent"]
    # What the run needs that may live under /tmp, hidden by the fresh one: the agents'
    # cache, these adapters, the python that runs helpers (read-only, as elsewhere).
    for need in (cache_dir(), HERE, os.path.dirname(sys.executable)):
        real = os.path.realpath(need)
        if real.startswith("/tmp/") and os.path.exists(real):
            out += ["--ro-bind", real, real]
    for path in (root,) + tuple(extra_writable):
        out += ["--bind", path, path]
    if nests:
        return out + ["--", "/bin/sh", "-c", 'mount -t proc proc /proc && exec "$@"', "sh"] + argv
    return out + ["--"] + argv


class Agent:
    """One agent. Subclasses fill in the class fields and the methods below."""

    name = "?"
    version = "?"
    wire: type[Wire] = Wire     # the agent's Wire subclass
    capabilities = ["gate"]
    file_ops: Sequence[str] = ("read", "write", "edit")   # the protocol's file steps it maps
    fence_backend: Optional[str] = None   # environment.fence_backend: the agent's sandbox
    deadline_s: Optional[float] = None    # per-run deadline; None: GATEHOUSE_AGENT_DEADLINE
    # The setup fields it reads beyond those every `open` carries (the schema's required).
    known_setup: frozenset[str] = frozenset()
    # `--guard`: the gatehouse binary run as the agent's pre-tool hook (use_guard); None alone.
    guard: Optional[str] = None

    def use_guard(self, guard: Optional[str]) -> None:
        """`--guard GATEHOUSE` (guard_argument): the agent with `gatehouse guard` as its
        pre-tool hook (README.md, "Put Gatehouse in front of your agent"), the library
        deciding its calls and running what it allows in `gatehouse exec`, which is then the
        fence: the name `<agent>+gatehouse`, the capability `guard`, the fence backend
        `native`. None leaves the agent alone."""
        self.guard = guard
        if guard is not None:
            self.name = self.name + "+gatehouse"
            self.capabilities = self.capabilities + ["guard"]
            self.fence_backend = "native"

    def approve_in_guard(self, session: Session, call: Call) -> None:
        """Guarded, before each run: the guard's configuration again, with the line of an
        approved call (a fence `run`, `session.state["line"]` from script) in its allow
        list, the only way a person approves a line for a guard that cannot ask."""
        if self.guard:
            write_guard_config(session, self.guard, session.setup.get("safety"),
                               approved=[session.state.get("line", "")] if call.approved else [])

    def check_setup(self, setup: Request) -> None:
        """Raises Unsupported naming a field the agent cannot express. The shared rules
        first; subclasses call this and add their own."""
        protocol.check_setup(setup, self.known_setup, self.name)
        if setup.get("host", "posix") != "posix":
            raise Unsupported("host %r: the agent runs here, on POSIX" % setup["host"])
        if setup.get("card_window_ms") is not None:
            raise Unsupported("card_window_ms: %s's prompt has no time window" % self.name)

    def prepare(self, session: Session) -> None:
        """Writes the agent's configuration for the session (its files under
        session.dirs, or its settings in the workspace)."""

    def env(self, session: Session) -> dict[str, str]:
        """The agent's environment: the runner's, placed inside the fixture."""
        d = session.dirs
        return dict(os.environ, HOME=session.setup["home"], PWD=session.cwd, TMPDIR=d["tmp"],
                    XDG_CONFIG_HOME=d["xdg_config"], XDG_DATA_HOME=d["xdg_data"],
                    XDG_CACHE_HOME=d["xdg_cache"], XDG_STATE_HOME=d["xdg_state"],
                    NO_COLOR="1", TERM="dumb", CI="1")

    def script(self, session: Session, call: Call) -> list[Any]:
        """The scripted model's turns for this call, in the agent's own vocabulary."""
        raise NotImplementedError

    def command(self, session: Session,
                call: Call) -> Union[list[str], tuple[list[str], Optional[str]]]:
        """The argument list of one headless run (and optionally stdin text: return
        (argv, stdin_data))."""
        raise NotImplementedError

    def observe(self, session: Session, call: Call, result: RunResult,
                requests: list[dict[str, Any]]) -> Observed:
        """Reads an Observed from the run's RunResult and the scripted model's log;
        raises AgentError when the output cannot be read."""
        raise NotImplementedError

    def held_by(self, session: Session) -> Optional[str]:
        """What holds a command of a fence `run`: the agent's sandbox or `off`."""
        return "off"

    def cleanup(self, session: Session) -> None:
        """Anything prepare made outside session.dirs."""


class ShellAgent(Agent):
    """What the Codex CLI and Gemini CLI adapters share: an agent whose one tool mapped is
    its shell (code runs as `python3 -c`), with a sandbox of its own (bubblewrap) for the
    fence, that runs on this kernel as it is, and `--guard` (use_guard) with a guard that
    cannot ask (guard_unapprovable reads each run). Subclasses name themselves in reasons
    (`label`, `sandbox`) and read a run in `observe_run`."""

    capabilities = ["gate", "permissions", "hooks", "fence"]
    fence_backend: Optional[str] = "bwrap"
    known_setup = Agent.known_setup | {
        "fence_policy", "workspaces", "log_dir", "limits", "choices",
        "agent_file", "settings_file", "safety", "state_dir", "resume"}
    label = "?"                  # the agent, as a reason names it
    sandbox = "?"                # its sandbox, as the reason for `choices` names it
    extra_workspaces = True      # whether it maps the setup's workspace roots after the first

    def check_setup(self, setup: Request) -> None:
        super().check_setup(setup)
        refuse_limits(setup, self.label)
        if setup.get("choices") is not None:
            raise Unsupported("choices: %s has no counterpart for gatehouse exec's flags" % self.sandbox)
        if not self.extra_workspaces and (setup.get("workspaces") or [])[1:]:
            raise Unsupported("workspaces: the adapter does not map extra workspace roots")
        refuse_code_grants(setup, self.label)

    def observe(self, session: Session, call: Call, result: RunResult,
                requests: list[dict[str, Any]]) -> Observed:
        return guard_unapprovable(self, call, self.observe_run(session, call, result, requests))

    def observe_run(self, session: Session, call: Call, result: RunResult,
                    requests: list[dict[str, Any]]) -> Observed:
        """What the run showed, before guard_unapprovable reads it (Agent.observe)."""
        raise NotImplementedError


class Session:
    """One protocol session: its setup, its directories inside the fixture, its model."""

    def __init__(self, agent: Agent, sid: str, setup: Request) -> None:
        self.agent = agent
        self.sid = sid
        self.setup = setup
        self.cwd = setup["workspace"]
        root = os.path.join(os.path.dirname(os.path.normpath(setup["workspace"])),
                            ".agent-%s" % sid)
        self.root = root
        self.dirs = {k: os.path.join(root, k) for k in
                     ("config", "tmp", "xdg_config", "xdg_data", "xdg_cache", "xdg_state", "model")}
        self.model: Optional[ScriptedModel] = None
        self.pending: Optional[tuple[str, Call]] = None   # (op, call) whose prompt was answered "no"
        self.state: dict[str, Any] = {}                   # the agent adapter's own

    def abs_path(self, path: str) -> str:
        """A path of a step (a call's file or working directory) as an absolute one: a
        relative path is the workspace's."""
        return path if os.path.isabs(path) else os.path.join(self.setup["workspace"], path)

    @property
    def model_url(self) -> str:
        """The scripted model's address; the session is open."""
        if self.model is None:
            raise Failure("session %r: no scripted model before open" % self.sid)
        return self.model.url

    def open(self) -> None:
        for d in self.dirs.values():
            os.makedirs(d, exist_ok=True)
        self.model = ScriptedModel(self.agent.wire(), os.path.join(self.dirs["model"], "requests.jsonl")).start()

    def close(self) -> None:
        if self.model:
            self.model.stop()
        self.agent.cleanup(self)
        shutil.rmtree(self.root, ignore_errors=True)

    def execute(self, call: Call) -> Observed:
        """One headless run of the agent for `call`; returns an Observed."""
        if self.model is None:
            raise AgentError("session %r is not open" % self.sid)
        self.model.script(self.agent.script(self, call))
        cmd = self.agent.command(self, call)
        argv, stdin_data = cmd if isinstance(cmd, tuple) else (cmd, None)
        cwd = self.abs_path(call.cwd) if call.cwd else self.cwd
        result = run_process(argv, self.agent.env(self), cwd, deadline_s=self.agent.deadline_s,
                             stdin_data=stdin_data)
        requests = self.model.requests()
        try:
            return self.agent.observe(self, call, result, requests)
        except AgentError:
            raise
        except (ValueError, KeyError, TypeError, IndexError) as e:
            raise AgentError("cannot read the agent's output (%r, exit %s); last stderr:\n%s"
                             % (e, result.rc, result.last_stderr())) from e


def _call_of(req: Request, tool: Optional[str] = None, input: Any = None) -> Call:
    return Call(tool or req.get("tool", "shell"), req.get("input") if input is None else input,
                call_id=req.get("call_id"))


def _gate_answer(obs: Observed) -> Answer:
    d = obs.decision()
    ans: Answer = {"decision": d, "route": "card" if d == "ask" else None, "reason": None,
           "offers": None, "card": None}
    if d == "ask":
        ans["card"] = {"channel": "terminal", "window_ms": None}
    return ans


def _order_answer(obs: Observed) -> Answer:
    ans = _gate_answer(obs)
    stage = None
    if obs.denied:
        stage = {"hook": "preempt_hook", "rule": "deny_pattern"}.get(obs.by or "")
    ans.update({"stage": stage, "label": None, "mode": None, "mode_source": None,
                "source": None, "hooks": [], "advice": None, "input": None, "redirects": []})
    if obs.message:
        ans["hooks"] = [{"event": "pre_tool_use", "hook": None, "verdict": "deny",
                         "code": None, "message": obs.message}] if obs.by == "hook" else []
    return ans


def _refused_fields(obs: Observed) -> Answer:
    """A `run` the fence refused to start: nothing ran, the refusal code, and its line as
    the posture's reason and the stderr (the fields of `run` and of `act` alike)."""
    return {"exit": None, "signal": None, "stdout": "", "stderr": obs.refusal or "",
            "held_by": None, "refused": obs.refused,
            "posture": {"state": "fence", "reason": obs.refusal}}


def _ran_fields(obs: Observed, held_by: Optional[str]) -> Answer:
    ran = obs.ran
    if obs.refused:
        fields = _refused_fields(obs)
        response = {k: fields[k] for k in ("exit", "signal", "stdout", "stderr")}
        fields.update({"ran": False, "not_run": "denied", "truncated": False, "withheld": None,
                       "response": dict(response, truncated=False), "marked": []})
        return fields
    return {"ran": ran, "not_run": None if ran else ("pending" if obs.asked else "denied"),
            "exit": obs.exit if ran else None, "signal": None,
            "stdout": obs.output if ran else "", "stderr": "",
            "held_by": held_by if ran else None, "refused": None, "posture": None,
            "truncated": False, "withheld": None,
            "response": {"exit": obs.exit if ran else None, "signal": None,
                         "stdout": obs.output if ran else "", "stderr": "", "truncated": False},
            "marked": []}


FILE_OPS = ("read", "write", "edit", "list", "search")


class Sessions(dict[str, Session]):
    """The open sessions, and the ids whose `open` was unsupported (their later steps are
    unsupported too, not an error of the agent)."""

    def __init__(self) -> None:
        super().__init__()
        self.unsupported: set[str] = set()


def handle(agent: Agent, sessions: Sessions, req: Request) -> Answer:
    op = req.get("op")
    if op == "hello":
        u = os.uname()
        return {"protocol": "1.6", "name": agent.name, "version": agent.version,
                "capabilities": list(agent.capabilities),
                "environment": {"os": "linux", "arch": u.machine, "kernel": u.release,
                                "landlock_abi": None, "fence_backend": agent.fence_backend}}
    if op == "load":
        raise Unsupported("%s has no separate load check" % agent.name)
    if op == "open":
        setup = req["setup"]
        try:
            if setup.get("resume"):
                raise Unsupported("resume: the adapter keeps no session record to reopen")
            agent.check_setup(setup)
        except Unsupported:
            sessions.unsupported.add(req["session"])
            raise
        opened = Session(agent, req["session"], setup)
        opened.open()
        try:
            agent.prepare(opened)
        except BaseException:
            opened.close()
            raise
        sessions[req["session"]] = opened
        return {}
    s = sessions.get(req.get("session", ""))
    if s is None:
        if req.get("session") in sessions.unsupported:
            raise Unsupported("session %r: its open was unsupported" % req.get("session"))
        raise AgentError("no session %r" % req.get("session"))
    if op == "close":
        sessions.pop(req["session"]).close()
        return {}
    if op in ("decide", "code", "tool"):
        # `decide` names its tool too (protocol 1.5: `execute_code`, `mcp_install`, ...);
        # only a `decide` without one is the shell's.
        tool = req.get("tool") or {"decide": "shell", "code": "execute_code"}.get(op, "")
        call = Call(tool, req.get("input"))
        obs = s.execute(call)
        s.pending = ("decide", call) if obs.asked else None
        return _gate_answer(obs)
    if op == "call":
        call = _call_of(req)
        obs = s.execute(call)
        s.pending = ("call", call) if obs.asked else None
        return _order_answer(obs)
    if op == "act":
        call = _call_of(req)
        obs = s.execute(call)
        s.pending = ("act", call) if obs.asked else None
        return dict(_order_answer(obs), **_ran_fields(obs, agent.held_by(s)))
    if op == "answer":
        choice = req.get("choice")
        if s.pending is None:
            return {"outcome": "not_offered", "saved": None}
        kind, call = s.pending
        s.pending = None
        if choice == "refuse":
            # The run that asked was answered "no" already: that was the refusal.
            ans = {"outcome": "refused", "saved": None}
            if kind == "act":
                ans.update(_ran_fields(Observed(asked=False, denied=True), None))
                ans["not_run"] = "denied"
            return ans
        if choice == "once":
            call.if_asked = "yes"
            obs = s.execute(call)
            ans = {"outcome": "approved" if obs.ran else "refused", "saved": None}
            if kind == "act":
                ans.update(_ran_fields(obs, agent.held_by(s)))
            return ans
        raise Unsupported("answer %r: %s's headless prompt answers once or refuses; it has no %s"
                          % (choice, agent.name, "window to let run out" if choice == "silence"
                             else "standing permission to save"))
    if op == "run":
        tool = req.get("tool", "shell")
        if req.get("tty"):
            raise Unsupported("tty: %s runs its tools without a terminal" % agent.name)
        call = Call(tool, req["input"], approved=True, if_asked="yes", cwd=req.get("cwd"))
        obs = s.execute(call)
        if obs.refused:
            return _refused_fields(obs)
        if not obs.ran:
            raise AgentError("the approved call did not run (%r)" % obs)
        return {"exit": obs.exit, "signal": None, "stdout": obs.output, "stderr": "",
                "held_by": agent.held_by(s), "refused": None}
    if op in FILE_OPS:
        if op not in agent.file_ops:
            raise Unsupported("%s: the adapter maps %s only" % (op, ", ".join(agent.file_ops)))
        return file_op(agent, s, op, req)
    raise Unsupported("%s has no counterpart for %r" % (agent.name, op))


def file_op(agent: Agent, s: Session, op: str, req: Request) -> Answer:
    inp = {k: req[k] for k in ("path", "content", "old", "new", "pattern") if k in req}
    call = Call(op, inp, if_asked="yes" if req.get("if_asked", "yes" if op in ("write", "edit")
                                                 else "no") == "yes" else "no")
    obs = s.execute(call)
    done = obs.ran and obs.exit == 0
    refusal = "declined" if obs.asked else "refused"
    if op == "search":
        # What the tool handed the model, one `file:line:text` a line (a line that does not
        # parse is kept whole as its text, so that nothing it showed escapes the runner).
        matches: list[Answer] = []
        for text in (obs.output or "").splitlines() if done else ():
            file, _, rest = text.partition(":")
            line, _, body = rest.partition(":")
            if line.isdigit():
                matches.append({"file": file, "line": int(line), "text": body})
            elif text.strip():
                matches.append({"file": text, "line": 0, "text": text})
        return {"result": "searched" if done else refusal, "matches": matches,
                "withheld": []}
    if op == "list":
        entries = [{"name": os.path.basename(t.rstrip("/")) or t, "kind": "other"}
                   for t in (obs.output or "").splitlines() if done and t.strip()]
        return {"result": "listed" if done else refusal, "entries": entries}
    if op == "read":
        return {"result": "read" if done else refusal,
                "content": obs.output if done else None,
                "prompted": obs.asked, "preview": None, "size": None}
    return {"result": "written" if done else refusal, "prompted": obs.asked, "effect": None}


def serve(agent: Agent, stdin: Optional[IO[str]] = None,
          stdout: Optional[IO[str]] = None) -> None:
    """Answers the runner for `agent` until `bye`; every open session is closed at the end."""
    sessions = Sessions()

    def close_all() -> None:
        for s in list(sessions.values()):
            s.close()

    protocol.serve(lambda req: handle(agent, sessions, req), stdin, stdout, on_end=close_all)


def npm_bin(package_dir: str, *rel: str) -> str:
    """A file of an npm package installed by install.sh under $CACHE/agents/<package_dir>."""
    return os.path.join(cache_dir(), "agents", package_dir, "node_modules", *rel)


def version_of(argv: Sequence[str], default: str = "unknown") -> str:
    """The first line a program prints for its version, or `default`."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
        lines = (done.stdout or done.stderr).strip().splitlines()
        return lines[0] if lines else default
    except (OSError, subprocess.TimeoutExpired):
        return default


def version_number(argv: Sequence[str], default: str) -> str:
    """The first `N.N.N` of the version a program prints (version_of), or `default`."""
    m = re.search(r"(\d+\.\d+\.\d+)", version_of(argv, default))
    return m.group(1) if m else default


def refuse_settings_dirs(setup: Request) -> None:
    """Raises Unsupported for settings-named directories, which no agent adapter maps."""
    if setup.get("settings_dirs"):
        raise Unsupported("settings_dirs: the adapter does not map settings-named directories")


def refuse_limits(setup: Request, agent: str) -> None:
    """Raises Unsupported for `limits`: a whole agent runs on this kernel as it is."""
    if setup.get("limits") is not None:
        raise Unsupported("limits: %s cannot be made to act as on a poorer kernel" % agent)


def refuse_code_grants(setup: Request, agent: str) -> None:
    """Raises Unsupported for a grant of another tool than the shell, for an agent whose
    code runs through its shell tool (`python3 -c`)."""
    for g in setup.get("grants") or []:
        if g.get("tool", "shell") != "shell":
            raise Unsupported("grant for %s: %s has no code tool" % (g.get("tool"), agent))


def guard_argument(argv: Sequence[str]) -> Optional[str]:
    """`--guard [GATEHOUSE]` of an agent adapter: the agent with `gatehouse guard` as its
    pre-tool hook (README.md, "Put Gatehouse in front of your agent"). The gatehouse binary
    the guard runs, given or by default the repository's release build; None without
    `--guard`."""
    if "--guard" not in argv:
        return None
    i = list(argv).index("--guard")
    if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
        return os.path.abspath(argv[i + 1])
    root = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
    return os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target")),
                        "release", "gatehouse")


def unmapped_choices(choices: Optional[dict[str, Any]]) -> list[str]:
    """The keys of a setup's `choices` the guard cannot carry (set, and not [exec]'s: the
    schema's `x-guard`, protocol.guard_choices)."""
    carried = protocol.guard_choices()
    return sorted(k for k, v in (choices or {}).items()
                  if k not in carried and v not in (None, False))


def write_guard_config(s: Session, gatehouse: str, safety: Optional[str] = None,
                       approved: Iterable[str] = ()) -> str:
    """The guard's configuration for session `s` (`R/.agent-*/guard.toml`, outside the
    workspace), from the setup: a state directory of the session's own, the workspace
    roots, the agent file and settings file the library reads its patterns, hooks and mode
    from, the start flag's safety mode and the allow list. `approved`: lines the person
    approved for this run, added to the allow list, which is how a person approves a line
    for an agent whose hook cannot ask (Codex CLI, Gemini CLI): the guard denies what would
    ask. Returns its path; the agent runs its hook with `GATEHOUSE_GUARD_CONFIG` naming it."""
    setup = s.setup
    # The session's logs and records live where the runner says the implementation keeps
    # them (`log_dir`): the guard's state directory, which `gatehouse exec` never binds and
    # no workspace or [exec] path may reach (ORDER-REC-1, GUARD-STATE-3).
    state_dir = setup.get("log_dir") or os.path.join(s.root, "guard-state")
    lines = ["state-dir = %s" % json.dumps(state_dir),
             "workspaces = %s" % json.dumps(setup.get("workspaces") or [setup["workspace"]]),
             "gatehouse = %s" % json.dumps(gatehouse)]
    for key in ("agent_file", "settings_file"):
        if setup.get(key):
            lines.append("%s = %s" % (key.replace("_", "-"), json.dumps(setup[key])))
    if safety:
        lines.append("safety = %s" % json.dumps(safety))
    lines.append("allow = %s" % json.dumps(list(setup.get("allow_list") or []) + list(approved)))
    # The fence's choices: each key of the setup's `choices` is the flag of `gatehouse exec`
    # the guard's [exec] table adds to every rewritten command (last: a TOML table). The
    # keys it carries, and their spelling there, are the schema's (protocol.guard_choices).
    choices = setup.get("choices") or {}
    exec_lines = []
    for key in protocol.guard_choices():
        value = choices.get(key)
        if value is None:
            continue
        name = key.replace("_", "-")
        if isinstance(value, dict):
            pairs = ", ".join("%s = %s" % (json.dumps(k), json.dumps(v))
                              for k, v in sorted(value.items()))
            exec_lines.append("%s = { %s }" % (name, pairs))
        else:
            exec_lines.append("%s = %s" % (name, json.dumps(value)))
    if exec_lines:
        lines.append("[exec]")
        lines.extend(exec_lines)
    path = os.path.join(s.root, "guard.toml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def install_guard(s: Session, safety: Optional[str], agent: str, env: dict[str, str],
                  *flags: str) -> None:
    """Guarded, at prepare: writes the guard's configuration from the setup and `safety`
    (outside the workspace, `s.state["guard_config"]`) and installs the hook with `gatehouse
    guard install AGENT FLAGS...`, its environment the runner's with `env` (where the agent
    keeps its settings) and GATEHOUSE_GUARD_CONFIG. An install that fails is an AgentError."""
    guard = s.agent.guard
    assert guard is not None  # installed only with --guard
    s.state["guard_config"] = write_guard_config(s, guard, safety)
    run_env = dict(os.environ, **env)
    run_env["GATEHOUSE_GUARD_CONFIG"] = s.state["guard_config"]
    r = run_process([guard, "guard", "install", agent, *flags], run_env, s.setup["workspace"],
                    deadline_s=30)
    if r.rc != 0:
        raise AgentError("gatehouse guard install failed (%s): %s" % (r.rc, r.last_stderr()))


def exec_refusal(text: str, exit_code: Optional[int]) -> Optional[str]:
    """`gatehouse exec`'s refusal of the guard's rewritten command: exit 125 and its one
    line `gatehouse exec: ...` naming the choice it cannot honour (a workspace that is the
    home, a writable root holding the user's configuration). Its fence notice (`gatehouse
    exec: fence: ...`) is not a refusal. None when the text shows none."""
    if exit_code != 125:
        return None
    for line in text.splitlines():
        if line.startswith("gatehouse exec: ") and not line.startswith("gatehouse exec: fence: "):
            return line
    return None


def guard_unapprovable(agent: Agent, call: Call, obs: Observed) -> Observed:
    """Raises Unsupported when a guard that cannot ask (Codex CLI's, Gemini CLI's) refused
    an approved call for want of a person, although the adapter approved the line in its
    allow list: a line the gate always asks about (its dangerous list outranks every allow
    list and pattern: `dangerous`), or one whose redirection writes a file the session's
    trust map has never seen (the map's plan asks, whatever allowed the line:
    `redirect_prompt`), has no way to be approved for such an agent, so a fence `run` of it
    is not something the agent can be made to do."""
    if (getattr(agent, "guard", None) and call.approved and not obs.ran and obs.by == "hook"
            and "gatehouse guard: cannot open the workspace" in (obs.message or "")):
        # The guard refused the session's workspace root itself (one that holds the home,
        # say): the refusal of a workspace choice, as `gatehouse exec` gives it, with the
        # guard's line as its reason.
        message = obs.message or ""
        obs.refused = "choice_refused"
        obs.refusal = message[message.index("gatehouse guard: "):].strip().splitlines()[0]
        return obs
    if (getattr(agent, "guard", None) and call.approved and not obs.ran and obs.by == "hook"
            and "cannot ask one from a hook" in (obs.message or "")):
        m = re.search(r"denied \((\w+), stage (\w+)\)", obs.message or "")
        if m and m.group(1) in UNAPPROVABLE:
            raise Unsupported("%s cannot approve this line: its guard cannot ask, and %s"
                              % (agent.name, UNAPPROVABLE[m.group(1)]))
    return obs


UNAPPROVABLE = {
    "dangerous": "the gate always asks about it (no allow list outranks its dangerous list)",
    "redirect_prompt": "its redirection writes a file the trust map has not seen, which asks "
                       "whatever allowed the line",
}


__all__ = ["Agent", "AgentError", "Call", "confine", "Observed", "RunResult", "Session", "Unsupported",
           "run_process", "serve", "cache_dir", "npm_bin", "version_of", "time", "guard_argument",
           "write_guard_config", "guard_unapprovable", "ShellAgent", "version_number", "refuse_settings_dirs",
           "refuse_limits", "refuse_code_grants", "install_guard", "exec_refusal"]
