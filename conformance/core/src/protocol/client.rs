//! The connection to the implementation under test: spawning it, the `hello` handshake,
//! one request line out and one answer line in under a timeout, and telling apart the ways
//! it can go wrong (crashed, timeout, garbage). After any of them the process is gone and
//! the next [`Client::ensure_running`] starts a fresh one and redoes the handshake.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::protocol::{Hello, Reply, Request, RequestBody, SessionOp, PROTOCOL_VERSION};

/// How many stderr lines are kept.
const STDERR_LINES: usize = 20;
/// How long a dying implementation gets to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How to start the implementation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImplCommand {
    /// Run through `sh -c` (the command has shell syntax).
    Shell(String),
    /// Run directly: program and arguments.
    Argv(Vec<String>),
}

impl ImplCommand {
    /// `--impl 'CMD ARGS'`: split on spaces when the command is plain words, else `sh -c`.
    pub fn parse(cmd: &str) -> ImplCommand {
        let plain = cmd
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == ' ' || "/._-=:,@+%".contains(c));
        if plain {
            ImplCommand::Argv(cmd.split_whitespace().map(str::to_string).collect())
        } else {
            ImplCommand::Shell(cmd.to_string())
        }
    }

    /// How it is shown in reports.
    pub fn display(&self) -> String {
        match self {
            ImplCommand::Shell(s) => s.clone(),
            ImplCommand::Argv(a) => a.join(" "),
        }
    }
}

/// What went wrong with the implementation while it handled a request; displays as
/// [`Failure::detail`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.detail())]
pub enum Failure {
    /// It exited (or closed its stdout).
    Crashed {
        /// Exit code, or a description (signal, still running).
        status: String,
        /// The op in progress.
        during: String,
    },
    /// No answer within the timeout; it was killed.
    Timeout {
        /// The timeout that ran out.
        after: Duration,
        /// The op in progress.
        during: String,
    },
    /// A line that is not a JSON object or carries the wrong id.
    Garbage {
        /// The offending line (shortened).
        line: String,
        /// Why it is garbage.
        why: String,
    },
    /// It could not be (re)started or refused the handshake.
    Start(String),
}

impl Failure {
    /// `crashed`, `timeout`, `garbage` or `start`.
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::Crashed { .. } => "crashed",
            Failure::Timeout { .. } => "timeout",
            Failure::Garbage { .. } => "garbage",
            Failure::Start(_) => "start",
        }
    }

    /// One line for the report.
    pub fn detail(&self) -> String {
        match self {
            Failure::Crashed { status, during } => {
                format!("the implementation exited with {status} during `{during}`")
            }
            Failure::Timeout { after, during } => {
                format!(
                    "no answer to `{during}` within {:.1} s",
                    after.as_secs_f64()
                )
            }
            Failure::Garbage { line, why } => format!("{why}: {line}"),
            Failure::Start(m) => m.clone(),
        }
    }
}

struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr_thread: JoinHandle<()>,
    grouped: bool,
}

/// A running implementation (restarted on demand).
pub struct Client {
    command: ImplCommand,
    step_timeout: Duration,
    process: Option<Process>,
    next_id: u64,
    stderr: Arc<Mutex<VecDeque<String>>>,
    hello: Option<Hello>,
    env: Vec<(String, String)>,
    wire_log: Option<std::fs::File>,
}

impl Client {
    /// Starts the implementation with `env` added to its environment (the planted
    /// secrets) and does the handshake; the error is one line. With `wire_log`, every
    /// line sent (`> `) and received (`< `) is appended there, restarts included.
    pub fn start(
        command: ImplCommand,
        step_timeout: Duration,
        env: Vec<(String, String)>,
        wire_log: Option<std::fs::File>,
    ) -> Result<Client, Failure> {
        let mut client = Client {
            command,
            step_timeout,
            process: None,
            next_id: 0,
            stderr: Arc::new(Mutex::new(VecDeque::new())),
            hello: None,
            env,
            wire_log,
        };
        client.ensure_running()?;
        Ok(client)
    }

    fn log_line(&mut self, direction: &str, line: &str) {
        if let Some(f) = self.wire_log.as_mut() {
            let _ = writeln!(f, "{direction} {}", line.trim_end_matches('\n'));
        }
    }

    /// The last handshake's answer.
    pub fn hello(&self) -> Option<&Hello> {
        self.hello.as_ref()
    }

    /// The last stderr lines.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .map(|q| q.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Forgets the stderr lines seen so far.
    pub fn clear_stderr(&self) {
        if let Ok(mut q) = self.stderr.lock() {
            q.clear();
        }
    }

    /// Starts the implementation and does the handshake if it is not running.
    pub fn ensure_running(&mut self) -> Result<(), Failure> {
        if self.process.is_some() {
            return Ok(());
        }
        self.process = Some(self.spawn()?);
        self.next_id = 0;
        let hello = RequestBody::Session(SessionOp::Hello {
            protocol: PROTOCOL_VERSION.to_string(),
        });
        let answer = match self.send(hello, Duration::ZERO) {
            Ok((Reply::Ok(obj), _)) => obj,
            Ok((Reply::Unsupported(m) | Reply::Error(m), _)) => {
                self.kill();
                return Err(Failure::Start(format!(
                    "the implementation refused the handshake: {m}"
                )));
            }
            Err(f) => {
                // A dead adapter's own words say why (an import error, a missing file):
                // keep its last stderr lines (PROTO-WIRE-3); a garbage line is in `f`.
                self.kill();
                let mut message = format!("handshake failed: {}: {}", f.kind(), f.detail());
                let tail = self.stderr_tail();
                if tail.is_empty() {
                    message.push_str(" (it wrote nothing on stderr)");
                } else {
                    message.push_str("; the last lines it wrote on stderr:");
                    for line in tail {
                        message.push_str("\n  stderr| ");
                        message.push_str(&line);
                    }
                }
                return Err(Failure::Start(message));
            }
        };
        let hello: Hello = match serde_json::from_value(Value::Object(answer)) {
            Ok(h) => h,
            Err(e) => {
                self.kill();
                return Err(Failure::Start(format!(
                    "the hello answer is malformed: {e}"
                )));
            }
        };
        let ours = PROTOCOL_VERSION.split('.').next().unwrap_or("");
        if hello.major() != ours {
            self.kill();
            return Err(Failure::Start(format!(
                "the implementation speaks protocol {}, this runner speaks {PROTOCOL_VERSION}: major versions differ",
                hello.protocol
            )));
        }
        self.hello = Some(hello);
        Ok(())
    }

    fn spawn(&self) -> Result<Process, Failure> {
        let mut cmd = match &self.command {
            ImplCommand::Shell(s) => {
                let mut c = Command::new("sh");
                c.arg("-c").arg(s);
                c
            }
            ImplCommand::Argv(argv) => {
                let (program, args) = argv
                    .split_first()
                    .ok_or_else(|| Failure::Start("the implementation command is empty".into()))?;
                let mut c = Command::new(program);
                c.args(args);
                c
            }
        };
        let grouped = matches!(self.command, ImplCommand::Shell(_));
        #[cfg(unix)]
        if grouped {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| {
            Failure::Start(format!("cannot start `{}`: {e}", self.command.display()))
        })?;
        // All three were asked for as pipes above.
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Failure::Start(format!(
                "`{}`: its standard streams are not pipes",
                self.command.display()
            )));
        };
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            while matches!(reader.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
                let line = String::from_utf8_lossy(&buf)
                    .trim_end_matches(['\n', '\r'])
                    .to_string();
                buf.clear();
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let ring = Arc::clone(&self.stderr);
        let stderr_thread = std::thread::spawn(move || keep_tail(stderr, &ring));
        Ok(Process {
            child,
            stdin,
            lines,
            stderr_thread,
            grouped,
        })
    }

    /// Sends one request and waits for its answer: the step timeout plus `extra`. Returns
    /// the classified answer and how long it took. On failure the process is gone.
    pub fn send(
        &mut self,
        body: RequestBody,
        extra: Duration,
    ) -> Result<(Reply, Duration), Failure> {
        let op = body.op();
        let id = self.next_id;
        self.next_id += 1;
        // serde_json fails only on a map key that is not a string or a hand-written
        // `Serialize` that errs: a request's derived fields have neither.
        #[allow(clippy::expect_used)]
        let mut line = serde_json::to_string(&Request { id, body }).expect("requests serialize");
        self.log_line(">", &line);
        line.push('\n');
        let timeout = self.step_timeout + extra;
        let Some(process) = self.process.as_mut() else {
            return Err(Failure::Start("the implementation is not running".into()));
        };
        let started = Instant::now();
        let written = process
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| process.stdin.flush());
        if written.is_err() {
            return Err(self.crashed(&op));
        }
        match process.lines.recv_timeout(timeout) {
            Ok(answer) => {
                let elapsed = started.elapsed();
                self.log_line("<", &answer);
                match check_answer(&answer, id) {
                    Ok(obj) => Ok((Reply::classify(obj), elapsed)),
                    Err(why) => {
                        self.kill();
                        Err(Failure::Garbage {
                            line: shorten(&answer),
                            why: why.to_string(),
                        })
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Err(Failure::Timeout {
                    after: timeout,
                    during: op,
                })
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.crashed(&op)),
        }
    }

    fn crashed(&mut self, op: &str) -> Failure {
        let status = match self.process.take() {
            Some(mut p) => {
                let deadline = Instant::now() + EXIT_GRACE;
                let status = loop {
                    match p.child.try_wait() {
                        Ok(Some(s)) => break describe_status(s),
                        Ok(None) if Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_millis(10))
                        }
                        _ => {
                            kill_process(&mut p);
                            break "its standard output closed".to_string();
                        }
                    }
                };
                wait_for(&p.stderr_thread, Duration::from_millis(300));
                status
            }
            None => "unknown status".to_string(),
        };
        Failure::Crashed {
            status,
            during: op.to_string(),
        }
    }

    fn kill(&mut self) {
        if let Some(mut p) = self.process.take() {
            kill_process(&mut p);
            wait_for(&p.stderr_thread, Duration::from_millis(300));
        }
    }

    /// Sends `bye` to the running implementation and gives it a second to exit; `true`
    /// when it did.
    fn bye_and_wait(&mut self) -> bool {
        if self.process.is_none() {
            return false;
        }
        let bye = Request {
            id: self.next_id,
            body: RequestBody::Session(SessionOp::Bye),
        };
        // serde_json fails only on a map key that is not a string or a hand-written
        // `Serialize` that errs: a request's derived fields have neither.
        #[allow(clippy::expect_used)]
        let mut line = serde_json::to_string(&bye).expect("requests serialize");
        self.log_line(">", &line);
        line.push('\n');
        let Some(p) = self.process.as_mut() else {
            return false;
        };
        let _ = p
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| p.stdin.flush());
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            if matches!(p.child.try_wait(), Ok(Some(_))) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// Ends the running implementation between two steps (PROTO-REC-1): `hard` kills it
    /// with `SIGKILL`; otherwise it is sent `bye` and given a second to exit. The next
    /// [`Client::ensure_running`] starts it again.
    pub fn stop(&mut self, hard: bool) {
        if !hard {
            self.bye_and_wait();
        }
        self.kill();
    }

    /// Sends `bye`, lets the implementation exit, kills it if it does not.
    pub fn shutdown(mut self) {
        if self.bye_and_wait() {
            self.process = None;
            return;
        }
        self.kill();
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Why an answer line is garbage (PROTO-WIRE-2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// Not one JSON object.
    #[error("not a JSON object")]
    NotAnObject,
    /// Another request's id.
    #[error("answer carries id {got}, expected {expected}")]
    WrongId {
        /// The id it carries.
        got: Value,
        /// The id of the request.
        expected: u64,
    },
    /// No id.
    #[error("answer carries no id, expected {expected}")]
    NoId {
        /// The id of the request.
        expected: u64,
    },
}

fn check_answer(line: &str, id: u64) -> Result<Map<String, Value>, AnswerError> {
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(line) else {
        return Err(AnswerError::NotAnObject);
    };
    match obj.get("id") {
        Some(Value::Number(n)) if n.as_u64() == Some(id) => Ok(obj),
        Some(other) => Err(AnswerError::WrongId {
            got: other.clone(),
            expected: id,
        }),
        None => Err(AnswerError::NoId { expected: id }),
    }
}

fn keep_tail(stderr: impl Read, ring: &Mutex<VecDeque<String>>) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    while matches!(reader.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
        let line = String::from_utf8_lossy(&buf).trim_end().to_string();
        buf.clear();
        if let Ok(mut q) = ring.lock() {
            if q.len() == STDERR_LINES {
                q.pop_front();
            }
            q.push_back(line);
        }
    }
}

fn kill_process(p: &mut Process) {
    #[cfg(unix)]
    if p.grouped {
        // The shell's children share its process group; take them all down.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", p.child.id())])
            .stderr(Stdio::null())
            .status();
    }
    let _ = p.child.kill();
    let _ = p.child.wait();
}

fn wait_for(thread: &JoinHandle<()>, limit: Duration) {
    let deadline = Instant::now() + limit;
    while !thread.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn describe_status(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("signal {sig}");
        }
    }
    status.to_string()
}

fn shorten(line: &str) -> String {
    const MAX: usize = 200;
    if line.chars().count() <= MAX {
        line.to_string()
    } else {
        format!("{}...", line.chars().take(MAX).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_or_go_through_sh() {
        assert_eq!(
            ImplCommand::parse("python3 /a/b-c.py --x=1"),
            ImplCommand::Argv(vec!["python3".into(), "/a/b-c.py".into(), "--x=1".into()])
        );
        assert_eq!(
            ImplCommand::parse("cd x && ./a"),
            ImplCommand::Shell("cd x && ./a".into())
        );
        assert_eq!(
            ImplCommand::parse("a 'b c'"),
            ImplCommand::Shell("a 'b c'".into())
        );
    }

    #[test]
    fn answers_are_checked() {
        assert!(check_answer(r#"{"id": 3, "ok": true}"#, 3).is_ok());
        let why = |line: &str| check_answer(line, 3).unwrap_err().to_string();
        assert_eq!(why("hello"), "not a JSON object");
        assert_eq!(why("[1]"), "not a JSON object");
        assert_eq!(why(r#"{"id": 4}"#), "answer carries id 4, expected 3");
        assert_eq!(why(r#"{"ok": true}"#), "answer carries no id, expected 3");
    }
}
