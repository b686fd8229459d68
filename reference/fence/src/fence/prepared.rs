//! A prepared fence: the backend chosen for this host and options, its claimed layers
//! checked against what is required, probed in a real jail, and ready to turn an action
//! into a command. Nothing is claimed before the probe passed; nothing fails open.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::fence::coverage::Coverage;
use crate::fence::error::FenceError;
use crate::fence::host::Host;
use crate::fence::jail::PLAN_ENV;
use crate::fence::launch::{Launched, Streams};
use crate::fence::plan::{Abi, Action, Plan};
use crate::fence::policy::{BackendChoice, FenceOptions, Policy};
use crate::fence::posture::{BackendKind, Layer, Posture};
use crate::fence::probe;

/// The backend configurations this host can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Namespaces and a fresh root, capabilities dropped, Landlock when present, seccomp.
    Native {
        /// The Landlock ABI used on top (`None`: the kernel has none).
        landlock: Option<Abi>,
    },
    /// Landlock alone (no user namespaces): degraded.
    LandlockOnly {
        /// The Landlock ABI used.
        abi: Abi,
    },
    /// bubblewrap, with the helper applying Landlock and seccomp inside.
    Bwrap {
        /// The `bwrap` executable.
        exe: PathBuf,
        /// The Landlock ABI used inside.
        landlock: Option<Abi>,
    },
    /// macOS Seatbelt.
    Seatbelt,
    /// The operator's explicit opt-out.
    Off,
}

fn namespaces_covers() -> Vec<Coverage> {
    use Coverage::*;
    vec![
        Write,
        RenameLink,
        Truncate,
        Metadata,
        Hidden,
        ProtectedPaths,
        Signal,
        UnixAbstract,
        ProcessView,
        Ipc,
        Uts,
        Network,
    ]
}

fn landlock_layer(abi: Abi) -> Layer {
    use Coverage::*;
    let mut covers = vec![Write, RenameLink, Hidden];
    if abi.restricts_truncate() {
        covers.push(Truncate);
    }
    if abi.scopes_ipc() {
        covers.extend([Signal, UnixAbstract]);
    }
    covers.sort();
    Layer {
        name: format!("landlock ABI {abi}"),
        covers,
    }
}

fn layer(name: &str, covers: Vec<Coverage>) -> Layer {
    Layer {
        name: name.to_string(),
        covers,
    }
}

impl Kind {
    /// The backend named in the posture.
    pub fn backend(&self) -> BackendKind {
        match self {
            Kind::Native { .. } | Kind::LandlockOnly { .. } => BackendKind::Native,
            Kind::Bwrap { .. } => BackendKind::Bwrap,
            Kind::Seatbelt => BackendKind::Seatbelt,
            Kind::Off => BackendKind::Off,
        }
    }

    /// The Landlock ABI in use.
    pub fn landlock_abi(&self) -> Option<Abi> {
        match self {
            Kind::Native { landlock } | Kind::Bwrap { landlock, .. } => *landlock,
            Kind::LandlockOnly { abi } => Some(*abi),
            Kind::Seatbelt | Kind::Off => None,
        }
    }

    /// The layers this configuration claims, outermost first.
    pub fn layers(&self) -> Vec<Layer> {
        let mut layers = match self {
            Kind::Native { .. } => vec![layer("namespaces", namespaces_covers())],
            Kind::Bwrap { .. } => vec![layer("bwrap", namespaces_covers())],
            Kind::LandlockOnly { .. } => Vec::new(),
            Kind::Seatbelt => {
                use Coverage::*;
                return vec![
                    layer(
                        "seatbelt",
                        vec![
                            Write,
                            RenameLink,
                            Truncate,
                            Metadata,
                            Hidden,
                            ProtectedPaths,
                            Signal,
                            Network,
                            UnixSocket,
                        ],
                    ),
                    layer(
                        "macos (no abstract sockets, no Linux capabilities, no kernel keyrings)",
                        vec![UnixAbstract, Capabilities, Keyring],
                    ),
                ];
            }
            Kind::Off => return Vec::new(),
        };
        layers.push(layer("capabilities", vec![Coverage::Capabilities]));
        if let Some(abi) = self.landlock_abi() {
            layers.push(landlock_layer(abi));
        }
        layers.push(layer(
            "seccomp",
            vec![Coverage::UnixSocket, Coverage::Keyring],
        ));
        layers
    }
}

impl Kind {
    /// The layers of [`Kind::layers`] for a network mode: in `host` mode (FENCE-NET-8) no
    /// layer keeps a network namespace of its own, so none covers `network`, and the
    /// namespaces' share of `unix_abstract` (abstract names live in the network namespace)
    /// falls to the seccomp filter, which refuses every way to a UNIX socket that can
    /// reach an address (`socket(AF_UNIX)`, a datagram `socketpair`, io_uring), and to
    /// Landlock's scoping where the ABI has it (6).
    pub fn layers_with_network(&self, host_network: bool) -> Vec<Layer> {
        let mut layers = self.layers();
        if !host_network {
            return layers;
        }
        let mut stripped = false;
        for l in &mut layers {
            if l.name == "namespaces" || l.name == "bwrap" {
                l.covers
                    .retain(|c| !matches!(c, Coverage::Network | Coverage::UnixAbstract));
                l.name = format!("{} (host network)", l.name);
                stripped = true;
            }
        }
        // Only in place of what the namespaces gave up: a backend without them (Landlock
        // alone) claims no more in `host` mode than it does in `off` mode.
        for l in &mut layers {
            if stripped && l.name == "seccomp" && !l.covers.contains(&Coverage::UnixAbstract) {
                l.covers.push(Coverage::UnixAbstract);
                l.covers.sort();
            }
        }
        layers
    }
}

/// A fence ready to run commands.
#[derive(Debug, Clone)]
pub struct Fence {
    kind: Kind,
    policy: Policy,
    posture: Posture,
    helper: PathBuf,
    host: Host,
    /// Prepared by [`Fence::prepare_for_checked`] without a probe jail: only
    /// [`Fence::spawn_checked`] may run commands in it.
    checked_only: bool,
}

impl Fence {
    /// Choose the backend, check what it covers against what is required, probe it in a
    /// real jail, and return the fence with its posture. The policy is resolved first.
    pub fn prepare(policy: Policy, options: &FenceOptions) -> Result<Fence, FenceError> {
        Fence::prepare_with(policy, options, true)
    }

    /// Like [`Fence::prepare`], but without a probe jail of its own: the fence is claimed
    /// for [`Fence::spawn_checked`] only, whose command's own jail runs the probe's legs
    /// just before the command starts. For a one-shot command this halves the jails.
    pub fn prepare_for_checked(
        policy: Policy,
        options: &FenceOptions,
    ) -> Result<Fence, FenceError> {
        Fence::prepare_with(policy, options, false)
    }

    fn prepare_with(
        policy: Policy,
        options: &FenceOptions,
        probe_now: bool,
    ) -> Result<Fence, FenceError> {
        let policy = policy.resolve()?;
        let host = Host::detect(options);
        let helper = options.helper_exe()?;
        let mut refused = None;
        let mut reasons = Vec::new();
        for candidate in candidates(options, &host) {
            let kind = match candidate {
                Ok(k) => k,
                Err(e) => {
                    reasons.push(e.to_string());
                    continue;
                }
            };
            match Fence::prepare_kind(kind, &policy, options, &host, &helper, probe_now) {
                Ok(f) => return Ok(f),
                Err(FenceError::Refused {
                    backend,
                    missing,
                    reason,
                }) => {
                    // A weaker candidate refused after stronger ones failed: the refusal
                    // names the step that really failed first, not only what is missing.
                    let reason = if reasons.is_empty() {
                        reason
                    } else {
                        format!("{reason}; tried before: {}", reasons.join("; "))
                    };
                    let e = FenceError::Refused {
                        backend,
                        missing,
                        reason,
                    };
                    reasons.push(e.to_string());
                    refused.get_or_insert(e);
                }
                Err(e) => reasons.push(e.to_string()),
            }
        }
        Err(refused.unwrap_or(FenceError::NoFence {
            reason: reasons.join("; "),
        }))
    }

    /// [`Fence::prepare_kind_with`]; only the native jail builds a scratch of its own, so
    /// for every other backend (which binds or lets through host paths) a policy whose
    /// scratch was to live in the jail gets a fresh host directory, removed again when
    /// that backend is not the one prepared.
    fn prepare_kind(
        kind: Kind,
        policy: &Policy,
        options: &FenceOptions,
        host: &Host,
        helper: &Path,
        probe_now: bool,
    ) -> Result<Fence, FenceError> {
        if !policy.scratch_in_jail || matches!(kind, Kind::Native { .. }) {
            return Fence::prepare_kind_with(kind, policy, options, host, helper, probe_now);
        }
        let dir = probe::tempdir().map_err(|e| FenceError::Policy {
            path: std::env::temp_dir(),
            reason: format!("cannot create the scratch directory: {e}"),
        })?;
        let on_host = match policy.clone().scratch_on_host(dir.clone()) {
            Ok(p) => p,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let r = Fence::prepare_kind_with(kind, &on_host, options, host, helper, probe_now);
        if r.is_err() {
            let _ = std::fs::remove_dir_all(&on_host.scratch);
        }
        r
    }

    fn prepare_kind_with(
        kind: Kind,
        policy: &Policy,
        options: &FenceOptions,
        host: &Host,
        helper: &Path,
        probe_now: bool,
    ) -> Result<Fence, FenceError> {
        let backend = kind.backend();
        if kind == Kind::Off {
            return Ok(Fence {
                kind,
                policy: policy.clone(),
                posture: Posture::unfenced(
                    BackendKind::Off,
                    "switched off by the operator: commands run UNFENCED (only the environment is scrubbed)",
                ),
                helper: helper.to_path_buf(),
                host: host.clone(),
                checked_only: false,
            });
        }
        if policy.host_network && matches!(kind, Kind::Seatbelt) {
            return Err(FenceError::Unavailable {
                backend: backend.to_string(),
                reason: "network mode `host`: this build's Seatbelt profile denies the network and has no rule that keeps the host's UNIX sockets out with it allowed (FENCE-NET-8)".into(),
            });
        }
        let layers = kind.layers_with_network(policy.host_network);
        let mut posture = Posture::fenced(backend, layers, kind.landlock_abi(), None);
        let missing = posture.missing_required();
        let why = missing_reasons(&kind, host, &missing);
        if !missing.is_empty() && !options.allow_degraded {
            return Err(FenceError::Refused {
                backend: backend.to_string(),
                missing,
                reason: why,
            });
        }
        let key = format!("{kind:?}|{}", helper.display());
        // A checked command's own jail proves the legs; every other use probes here.
        let probe_now = probe_now || !checked_backend(&kind);
        let verdict = if !probe_now {
            None
        } else {
            Some(probe::verify(&key, &posture, |ws, scratch, outside| {
                let mut p = Policy::new(vec![ws.to_path_buf()], scratch.to_path_buf());
                p.read_only = vec![outside.to_path_buf()];
                p.system_dirs = policy.system_dirs.clone();
                p.etc_entries = policy.etc_entries.clone();
                let p = p.resolve()?;
                let action = Action::Probe {
                    outside: p.read_only[0].clone(),
                    inside: p.workspaces[0].clone(),
                };
                build_command(&kind, &p, helper, action, Vec::new())
            })?)
        };
        let mut notes = Vec::new();
        if posture.degraded {
            notes.push(format!("DEGRADED by explicit opt-in: {why}"));
            if let Some(v) = &verdict {
                notes.extend(degraded_notes(v));
            }
        }
        if !host.emulation.is_empty() && !posture.degraded {
            notes.push(format!("emulated: {}", host.emulation.join(", ")));
        }
        // Hooks the host's git would run at a root, and nested repositories not searched
        // (FENCE-PROTECT-15, FENCE-PROTECT-14): said, so that the person decides.
        let home = policy
            .home
            .clone()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
        notes.extend(crate::fence::protect::hook_notes(
            &policy.workspaces,
            home.as_deref(),
        ));
        if !notes.is_empty() {
            posture.reason = Some(notes.join("; "));
        }
        Ok(Fence {
            kind,
            policy: policy.clone(),
            posture,
            helper: helper.to_path_buf(),
            host: host.clone(),
            checked_only: verdict.is_none(),
        })
    }

    /// Start `argv` in this fence with exactly `env`, its jail proven first: the probe's
    /// legs run inside the command's own jail after its last setup step, the launcher
    /// judges the files from outside, and only on that verdict and [`Checked::start`] does
    /// the command start (nothing runs otherwise). `streams` are the standard streams of
    /// the jail's first process (its init, or its helper), and the command's without a
    /// terminal. With `terminal`, the
    /// command gets a fresh pseudo-terminal as its standard streams and controlling
    /// terminal, opened in its jail, whose master only the launcher holds
    /// ([`Checked::take_terminal`], FENCE-TTY-2). Backends without a jail of their own
    /// (`off`) and platforms without the handoff run the command as [`Fence::command`]
    /// does, after the probe [`Fence::prepare`] ran (a terminal is then opened here).
    pub fn spawn_checked(
        &self,
        argv: Vec<String>,
        env: Vec<(String, String)>,
        listen: Option<u16>,
        terminal: bool,
        streams: Streams,
    ) -> Result<Checked, FenceError> {
        if (!checked_backend(&self.kind) || matches!(self.kind, Kind::LandlockOnly { .. }))
            && listen.is_some()
        {
            return Err(FenceError::Unavailable {
                backend: self.posture.backend.to_string(),
                reason: "the allow-list network mode needs a jail with its own network namespace"
                    .into(),
            });
        }
        if !checked_backend(&self.kind) {
            let mut cmd = self.command(Action::Exec { argv }, env)?;
            streams.apply(&mut cmd);
            let master = if terminal {
                Some(unjailed_terminal(&mut cmd).map_err(|e| FenceError::Io {
                    what: "cannot open a terminal for the command".into(),
                    path: PathBuf::from("/dev/ptmx"),
                    source: e,
                })?)
            } else {
                None
            };
            let child = cmd.spawn().map_err(|e| FenceError::Io {
                what: "cannot start the fence".into(),
                path: self.helper.clone(),
                source: e,
            })?;
            drop(cmd);
            return Ok(Checked {
                child: Launched::spawned(child),
                verdict: None,
                dirs: None,
                go: None,
                listener: None,
                resolver: None,
                terminal: master,
                #[cfg(target_os = "linux")]
                jail_end: None,
                #[cfg(target_os = "linux")]
                watched: None,
                reaped: false,
                jail_ended: false,
            });
        }
        #[cfg(target_os = "linux")]
        {
            self.spawn_checked_linux(argv, env, listen, terminal, streams)
        }
        #[cfg(not(target_os = "linux"))]
        unreachable!("checked_backend is false off Linux")
    }

    /// The checked launch of Linux, stage by stage: the channels, the host side (the
    /// early init's test hook, the probe's directories, the policy that reads them), the
    /// jail spawned, our copies of its ends let go, the listener and the terminal
    /// received, the probe's report judged, and the jail handed over or ended.
    #[cfg(target_os = "linux")]
    fn spawn_checked_linux(
        &self,
        argv: Vec<String>,
        env: Vec<(String, String)>,
        listen: Option<u16>,
        terminal: bool,
        streams: Streams,
    ) -> Result<Checked, FenceError> {
        if terminal && !self.gives_terminal() {
            return Err(self.probe_failed(
                "setup",
                "this backend gives no terminal of the jail's own (Landlock alone has no devpts)"
                    .into(),
            ));
        }
        let resolver = listen.is_none() && self.answers_lookups();
        let channels =
            Channels::open(listen, terminal, resolver).map_err(|e| self.setup_failed(e))?;
        let (early, network_thread) = self.early_init()?;
        let (mut dirs, policy) = self.preflight_dirs()?;
        let launch = Launch {
            argv,
            env,
            streams,
            early,
            network_thread,
        };
        let mut child = self.spawn_jail(&channels, &dirs, &policy, launch)?;
        let kept = channels.let_go();
        if self.policy.scratch_in_jail {
            dirs.seen_through(child.id());
        }
        let deadline = std::time::Instant::now() + probe::TIMEOUT;
        let listener = self.receive_listener(&kept, &mut child, deadline)?;
        let master = self.receive_terminal(&kept, &mut child, deadline)?;
        let judged = self.judge_report(&kept, &dirs, &child, deadline);
        crate::sys::mark::mark("judged");
        // The resolver's sockets wait in their channel (sent by a setup step, before the
        // report): taken once the jail is judged, so that a jail the probe refuses is
        // refused for what the probe found.
        let judged = judged.and_then(|j| Ok((j, self.receive_resolver(&kept, deadline)?)));
        match judged {
            Ok(((verdict, init), resolver)) => Ok(Checked {
                jail_end: early.then_some(PendingEnd {
                    init,
                    report: kept.report,
                }),
                watched: None,
                child,
                verdict: Some(verdict),
                dirs: Some(dirs),
                go: Some(kept.go),
                listener,
                resolver,
                terminal: master,
                reaped: false,
                jail_ended: false,
            }),
            Err(e) => Err(no_go(e, kept.go, &mut child)),
        }
    }

    /// Whether the native jail's init is cloned from this very binary (jail::Early), with
    /// no helper, once its plan and host objects are made: the plan is in its memory from
    /// the start (any other helper starts with its plan too); and the early init's network
    /// test hook, whose bad value fails before anything is made on the host.
    #[cfg(target_os = "linux")]
    fn early_init(&self) -> Result<(bool, bool), FenceError> {
        let early = matches!(self.kind, Kind::Native { .. }) && can_fork_helper(&self.helper);
        let network_thread = match early {
            true => network_thread()?,
            false => false,
        };
        Ok((early, network_thread))
    }

    /// A failed leg of the checked launch.
    #[cfg(target_os = "linux")]
    fn probe_failed(&self, leg: &str, detail: String) -> FenceError {
        FenceError::ProbeFailed {
            backend: self.posture.backend.to_string(),
            leg: leg.to_string(),
            detail,
        }
    }

    /// A host error while setting the launch up.
    #[cfg(target_os = "linux")]
    fn setup_failed(&self, e: std::io::Error) -> FenceError {
        self.probe_failed("setup", e.to_string())
    }

    /// The probe's directories (a shared outside directory only where jailed code cannot
    /// change its mode), and this fence's policy with the outside one read-only.
    #[cfg(target_os = "linux")]
    fn preflight_dirs(&self) -> Result<(probe::PreflightDirs, Policy), FenceError> {
        let shared = !self.posture.not_covered.contains(&Coverage::Metadata);
        let dirs =
            probe::PreflightDirs::create(&self.policy.scratch, self.policy.scratch_in_jail, shared)
                .map_err(|e| self.probe_failed("setup", e.to_string()))?;
        let mut policy = self.policy.clone();
        policy.read_only.push(dirs.outside.clone());
        policy.validate()?;
        Ok((dirs, policy))
    }

    /// The jail started with its plan: the native init cloned from this binary
    /// (`plan-made`, `host-ready`, `init-clone`, `init-cloned`), or a forked helper, or the
    /// backend's command.
    #[cfg(target_os = "linux")]
    fn spawn_jail(
        &self,
        channels: &Channels,
        dirs: &probe::PreflightDirs,
        policy: &Policy,
        launch: Launch,
    ) -> Result<Launched, FenceError> {
        let keep = channels.keep();
        let Launch {
            argv,
            env,
            streams,
            early,
            network_thread,
        } = launch;
        let action = channels.action(argv, dirs);
        match &self.kind {
            Kind::Native { landlock } if early => {
                let plan = Plan::native(policy, *landlock, action, env)?;
                crate::sys::mark::mark("plan-made");
                prepare_protected(policy)?;
                crate::sys::mark::mark("host-ready");
                let early = crate::fence::jail::Early {
                    parent_pid: std::process::id(),
                    ids: crate::sys::ns::ids(),
                    host_network: self.policy.host_network,
                    network_thread,
                };
                let ends = streams.ends().map_err(|e| self.setup_failed(e))?;
                crate::sys::mark::mark("init-clone");
                let cloned = crate::sys::ns::clone_init(ends.theirs, &keep, move || {
                    crate::fence::jail::run_early(&early, plan)
                })
                .map_err(|e| {
                    self.probe_failed("setup", format!("cannot clone the jail's init: {e}"))
                })?;
                crate::sys::mark::mark("init-cloned");
                Ok(Launched::cloned(cloned, ends.ours))
            }
            kind => {
                let mut cmd = match kind {
                    Kind::Native { landlock } => forked_helper(
                        &self.helper,
                        Plan::native(policy, *landlock, action, env)?,
                        &keep,
                    )?,
                    _ => build_command(kind, policy, &self.helper, action, env)?,
                };
                streams.apply(&mut cmd);
                cmd.spawn()
                    .map(Launched::spawned)
                    .map_err(|e| FenceError::Io {
                        what: "cannot start the fence".into(),
                        path: self.helper.clone(),
                        source: e,
                    })
            }
        }
    }

    /// The jail's listener (allow-list mode), received by the deadline; the jail is ended
    /// if it never comes.
    #[cfg(target_os = "linux")]
    fn receive_listener(
        &self,
        kept: &Kept,
        child: &mut Launched,
        deadline: std::time::Instant,
    ) -> Result<Option<std::net::TcpListener>, FenceError> {
        let Some(sock) = &kept.listener else {
            return Ok(None);
        };
        match crate::sys::net::recv_fd(sock, deadline) {
            Ok(fd) => Ok(Some(std::net::TcpListener::from(fd))),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(self.probe_failed("listener", e.to_string()))
            }
        }
    }

    /// The jail's port 53 (FENCE-NET-13), its UDP socket and TCP listener, received by the
    /// deadline (the caller ends the jail if they never come).
    #[cfg(target_os = "linux")]
    fn receive_resolver(
        &self,
        kept: &Kept,
        deadline: std::time::Instant,
    ) -> Result<Option<ResolverSockets>, FenceError> {
        let Some(sock) = &kept.resolver else {
            return Ok(None);
        };
        match crate::sys::net::recv_fds(sock, deadline, 2) {
            Ok(fds) => {
                match <[std::os::fd::OwnedFd; 2]>::try_from(fds) {
                    Ok([udp, tcp]) => Ok(Some(ResolverSockets {
                        udp: std::net::UdpSocket::from(udp),
                        tcp: std::net::TcpListener::from(tcp),
                    })),
                    Err(_) => Err(self
                        .probe_failed("resolver", "the jail handed other than two sockets".into())),
                }
            }
            Err(e) => Err(self.probe_failed("resolver", e.to_string())),
        }
    }

    /// Whether a checked command's jail hands its port 53 to the launcher, whose resolver
    /// answers every name asked there, refusing it, and reports the names
    /// (FENCE-NET-13): the policy asks for it, the backend is the native jail (its init
    /// binds the port while it holds its capabilities), and the network is off.
    pub fn answers_lookups(&self) -> bool {
        self.policy.resolver
            && !self.policy.host_network
            && matches!(self.kind, Kind::Native { .. })
            && cfg!(target_os = "linux")
    }

    /// The master of the jail's own terminal (FENCE-TTY-2), received by the deadline; the
    /// jail is ended if it never comes, with the reason its helper gave.
    #[cfg(target_os = "linux")]
    fn receive_terminal(
        &self,
        kept: &Kept,
        child: &mut Launched,
        deadline: std::time::Instant,
    ) -> Result<Option<std::os::fd::OwnedFd>, FenceError> {
        let Some(sock) = &kept.terminal else {
            return Ok(None);
        };
        match crate::sys::net::recv_fd(sock, deadline) {
            Ok(fd) => Ok(Some(fd)),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                let why = setup_failure(child).unwrap_or_else(|| e.to_string());
                Err(self.probe_failed("terminal", why))
            }
        }
    }

    /// The probe's legs, reported from inside the jail by the deadline and judged from
    /// outside (`report-read`); for the native jail, its network namespace seen from
    /// outside too, with the init's pid.
    #[cfg(target_os = "linux")]
    fn judge_report(
        &self,
        kept: &Kept,
        dirs: &probe::PreflightDirs,
        child: &Launched,
        deadline: std::time::Instant,
    ) -> Result<(probe::Verdict, Option<u32>), FenceError> {
        crate::sys::handoff::read_line_by(&kept.report, deadline, 1 << 20)
            .inspect(|_| crate::sys::mark::mark("report-read"))
            .map_err(|e| self.probe_failed("report", e.to_string()))
            .and_then(|bytes| {
                serde_json::from_slice::<probe::LegReport>(&bytes).map_err(|e| {
                    self.probe_failed(
                        "report",
                        format!("the jail ended or failed before its probe reported ({e})"),
                    )
                })
            })
            .and_then(|report| dirs.judge(&self.posture, report))
            .and_then(|verdict| match self.kind {
                // The native jail's network namespace is the init's own join (the
                // others are made by the tool that builds the jail, with its other
                // namespaces): seen from outside too.
                Kind::Native { .. } => {
                    let init = match child.is_init() {
                        true => Ok(child.id()),
                        false => probe::init_of_helper(&self.posture, child.id()),
                    };
                    init.and_then(|init| probe::judge_network(&self.posture, init))
                        .map(|init| (verdict, init))
                }
                _ => Ok((verdict, None)),
            })
    }

    /// The posture (after the probe).
    pub fn posture(&self) -> &Posture {
        &self.posture
    }

    /// Mutable posture, for the plane's own facts (environment scrubbing, session logs).
    pub fn posture_mut(&mut self) -> &mut Posture {
        &mut self.posture
    }

    /// The binary the jail's helper runs as (`gatehouse __jail`), and a root's lingerer.
    pub fn helper(&self) -> &Path {
        &self.helper
    }

    /// The resolved policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The host as probed.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// This fence with its commands started in `cwd` (`None`: the policy's own); checked
    /// again when a command is spawned.
    pub fn at(&self, cwd: Option<PathBuf>) -> Fence {
        let mut f = self.clone();
        if cwd.is_some() {
            f.policy.cwd = cwd;
        }
        f
    }

    /// The backend configuration.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// Whether a command here can get a terminal of its own (FENCE-TTY-2): a jail with a
    /// devpts of its own. Landlock alone has none (the host's `/dev/pts` holds the
    /// person's terminals), nor has macOS.
    pub fn gives_terminal(&self) -> bool {
        cfg!(target_os = "linux") && !matches!(self.kind, Kind::LandlockOnly { .. })
    }

    /// The command that performs `action` inside this fence with exactly `env`.
    pub fn command(
        &self,
        action: Action,
        env: Vec<(String, String)>,
    ) -> Result<Command, FenceError> {
        if self.checked_only && !matches!(action, Action::CheckedExec { .. }) {
            return Err(FenceError::ProbeFailed {
                backend: self.posture.backend.to_string(),
                leg: "not-probed".into(),
                detail: "this fence was prepared for checked commands only (Fence::spawn_checked); prepare it with Fence::prepare to run anything else".into(),
            });
        }
        build_command(&self.kind, &self.policy, &self.helper, action, env)
    }
}

impl Fence {
    /// The command of a pooled executor ([`Action::Serve`]) with exactly `env`. With
    /// `listen` (the `allow-list` network mode), its jail listens on its own `127.0.0.1`
    /// at that port and hands the listener back: the [`PendingListener`] returned with the
    /// command receives it once the command has been spawned. Only a backend with a
    /// network namespace of its own can take it.
    pub fn serve_command(
        &self,
        env: Vec<(String, String)>,
        listen: Option<u16>,
    ) -> Result<(Command, Option<PendingListener>), FenceError> {
        let Some(port) = listen else {
            return Ok((self.command(Action::Serve { listener: None }, env)?, None));
        };
        if !matches!(self.kind, Kind::Native { .. } | Kind::Bwrap { .. })
            || !cfg!(target_os = "linux")
        {
            return Err(FenceError::Unavailable {
                backend: self.posture.backend.to_string(),
                reason: "the allow-list network mode needs a jail with its own network namespace"
                    .into(),
            });
        }
        #[cfg(target_os = "linux")]
        {
            let failed = |e: std::io::Error| FenceError::ProbeFailed {
                backend: self.posture.backend.to_string(),
                leg: "listener".into(),
                detail: e.to_string(),
            };
            let (ours, theirs) = crate::sys::net::pair().map_err(failed)?;
            crate::sys::net::inheritable(&theirs).map_err(failed)?;
            let action = Action::Serve {
                listener: Some(crate::fence::plan::ListenerHandoff {
                    port,
                    fd: crate::sys::handoff::raw(&theirs),
                }),
            };
            let cmd = self.command(action, env)?;
            Ok((
                cmd,
                Some(PendingListener {
                    ours,
                    theirs: Some(theirs),
                }),
            ))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = port;
            unreachable!("refused above off Linux")
        }
    }
}

/// The launcher's side of a listener an executor's jail hands out (the `allow-list`
/// mode): drop the jail's end once the command is spawned, then receive.
#[derive(Debug)]
pub struct PendingListener {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))] // received on Linux only
    ours: std::os::fd::OwnedFd,
    theirs: Option<std::os::fd::OwnedFd>,
}

impl PendingListener {
    /// The command has been spawned (or failed to): the jail's end goes, so that a jail
    /// that ends without handing out is seen at once.
    pub fn spawned(&mut self) {
        self.theirs = None;
    }

    /// Wait until `deadline` for the jail's listening socket.
    #[cfg(target_os = "linux")]
    pub fn receive(
        mut self,
        deadline: std::time::Instant,
    ) -> std::io::Result<std::net::TcpListener> {
        self.spawned();
        crate::sys::net::recv_fd(&self.ours, deadline).map(std::net::TcpListener::from)
    }
}

/// A command started by [`Fence::spawn_checked`].
#[derive(Debug)]
pub struct Checked {
    /// The running command's jail: its init, or the helper outside it.
    pub child: Launched,
    /// What the command's own jail proved (`None` for a backend without a jail).
    pub verdict: Option<probe::Verdict>,
    dirs: Option<probe::PreflightDirs>,
    #[cfg(target_os = "linux")]
    go: Option<std::os::fd::OwnedFd>,
    #[cfg(not(target_os = "linux"))]
    go: Option<()>,
    listener: Option<std::net::TcpListener>,
    resolver: Option<ResolverSockets>,
    terminal: Option<std::os::fd::OwnedFd>,
    /// How the jail is seen to end before its first process has (an early init's jail):
    /// what it takes before the go, and once it is sent.
    #[cfg(target_os = "linux")]
    jail_end: Option<PendingEnd>,
    #[cfg(target_os = "linux")]
    watched: Option<JailEnd>,
    /// Whether the jail's first process (its init, or its helper) has been reaped.
    reaped: bool,
    /// Whether the jail's end was seen ([`JailEnd`]): nothing jailed runs any more.
    jail_ended: bool,
}

/// The jail's port 53, handed out by its [`crate::fence::plan::Step::Resolver`]: a UDP
/// socket and a TCP listener on its `127.0.0.1:53`, for the launcher's resolver.
#[derive(Debug)]
pub struct ResolverSockets {
    /// The UDP socket.
    pub udp: std::net::UdpSocket,
    /// The TCP listener.
    pub tcp: std::net::TcpListener,
}

/// How a checked command's jail is seen to end without waiting for its init to be gone
/// (an early init, [`crate::fence::jail::Early`], which takes the jail's mount tree down as it
/// exits, 0.1-0.3 ms here): the probe's report
/// channel, on which the init's last word is the command's code ([`probe::tell_exit`]),
/// said only once it has ended every other process of its namespace
/// ([`crate::fence::jail::checked_exec`]); and the init's pidfd, readable once the init, and with
/// it every jailed process, is gone (the processes of a PID namespace die with its init),
/// for an init that could not say.
#[cfg(target_os = "linux")]
#[derive(Debug)]
struct JailEnd {
    init: std::os::fd::OwnedFd,
    report: std::os::fd::OwnedFd,
}

/// The descriptors a checked launch hands its jail: the probe's report, the go, the
/// listener's socket pair of the allow-list mode, the terminal's and the resolver's, the
/// jail's end of each pair inheritable. The fields stand in the reverse order of their
/// making, so that a way out before the jail is spawned closes the last made first.
#[cfg(target_os = "linux")]
struct Channels {
    resolver: Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)>,
    terminal: Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)>,
    listener: Option<(u16, std::os::fd::OwnedFd, std::os::fd::OwnedFd)>,
    go: crate::sys::handoff::Handoff,
    report: crate::sys::handoff::Handoff,
}

/// What the launcher keeps of [`Channels`] once the jail holds its ends.
#[cfg(target_os = "linux")]
struct Kept {
    resolver: Option<std::os::fd::OwnedFd>,
    terminal: Option<std::os::fd::OwnedFd>,
    listener: Option<std::os::fd::OwnedFd>,
    go: std::os::fd::OwnedFd,
    report: std::os::fd::OwnedFd,
}

/// What the jail is started with, besides its channels.
#[cfg(target_os = "linux")]
struct Launch {
    argv: Vec<String>,
    env: Vec<(String, String)>,
    streams: Streams,
    /// The native init is cloned from this binary.
    early: bool,
    /// The early init's network test hook.
    network_thread: bool,
}

#[cfg(target_os = "linux")]
impl Channels {
    /// The report and go channels, and the listener's, terminal's and resolver's pairs
    /// where asked.
    fn open(listen: Option<u16>, terminal: bool, resolver: bool) -> std::io::Result<Channels> {
        use crate::sys::handoff;
        let report = handoff::channel_from_child()?;
        let go = handoff::channel_to_child()?;
        let listener = match listen {
            None => None,
            Some(port) => {
                let (ours, theirs) = crate::sys::net::pair()?;
                crate::sys::net::inheritable(&theirs)?;
                Some((port, ours, theirs))
            }
        };
        let terminal = if terminal {
            let (ours, theirs) = crate::sys::net::pair()?;
            crate::sys::net::inheritable(&theirs)?;
            Some((ours, theirs))
        } else {
            None
        };
        let resolver = if resolver {
            let (ours, theirs) = crate::sys::net::pair()?;
            crate::sys::net::inheritable(&theirs)?;
            Some((ours, theirs))
        } else {
            None
        };
        Ok(Channels {
            resolver,
            terminal,
            listener,
            go,
            report,
        })
    }

    /// Every descriptor the action names, and no other, survives into a forked helper.
    fn keep(&self) -> [i32; 5] {
        use crate::sys::handoff::raw;
        [
            raw(&self.report.child_end),
            raw(&self.go.child_end),
            self.listener
                .as_ref()
                .map(|(_, _, theirs)| raw(theirs))
                .unwrap_or(-1),
            self.terminal
                .as_ref()
                .map(|(_, theirs)| raw(theirs))
                .unwrap_or(-1),
            self.resolver
                .as_ref()
                .map(|(_, theirs)| raw(theirs))
                .unwrap_or(-1),
        ]
    }

    /// The checked action: `argv`, the probe's directories, and the descriptors the jail
    /// reports, waits and listens on.
    fn action(&self, argv: Vec<String>, dirs: &probe::PreflightDirs) -> Action {
        use crate::sys::handoff::raw;
        Action::CheckedExec {
            terminal: self.terminal.as_ref().map(|(_, theirs)| raw(theirs)),
            resolver: self.resolver.as_ref().map(|(_, theirs)| raw(theirs)),
            argv,
            preflight: probe::Preflight {
                outside: dirs.outside.clone(),
                inside: dirs.inside.clone(),
                tag: dirs.tag.clone(),
                report_fd: raw(&self.report.child_end),
                go_fd: raw(&self.go.child_end),
            },
            listener: self.listener.as_ref().map(|(port, _, theirs)| {
                crate::fence::plan::ListenerHandoff {
                    port: *port,
                    fd: raw(theirs),
                }
            }),
        }
    }

    /// The jail holds its ends now; ours must go, or the channels never report EOF.
    fn let_go(self) -> Kept {
        let Channels {
            resolver,
            terminal,
            listener,
            go,
            report,
        } = self;
        drop(report.child_end);
        drop(go.child_end);
        let listener = listener.map(|(_, ours, theirs)| {
            drop(theirs);
            ours
        });
        let terminal = terminal.map(|(ours, theirs)| {
            drop(theirs);
            ours
        });
        let resolver = resolver.map(|(ours, theirs)| {
            drop(theirs);
            ours
        });
        Kept {
            resolver,
            terminal,
            listener,
            go: go.parent_end,
            report: report.parent_end,
        }
    }
}

/// No go: the helper leaves without running anything; make sure of it, and say why.
#[cfg(target_os = "linux")]
fn no_go(e: FenceError, go: std::os::fd::OwnedFd, child: &mut Launched) -> FenceError {
    drop(go);
    let _ = child.kill();
    let _ = child.wait();
    with_setup_failure(e, child)
}

/// What [`JailEnd`] is made of once the go is sent: the init's pid where the network leg
/// found it, and the report's channel.
#[cfg(target_os = "linux")]
#[derive(Debug)]
struct PendingEnd {
    init: Option<u32>,
    report: std::os::fd::OwnedFd,
}

#[cfg(target_os = "linux")]
impl JailEnd {
    /// The jail of `helper`, whose one child is its init. `None` where the kernel has no
    /// `pidfd_open`, or the init is not (or no longer) found: then the helper is waited
    /// for. Made after the go, off the way to the command's start.
    fn of(helper: u32, pending: PendingEnd) -> Option<JailEnd> {
        let init = match pending.init {
            Some(init) => init,
            None => match crate::sys::ns::children_of(helper)[..] {
                [init] => init,
                _ => return None,
            },
        };
        let report = pending.report;
        let pidfd = crate::sys::ns::pidfd_of(init)?;
        // The pid still names the helper's one child, not a process that took it after.
        (crate::sys::ns::children_of(helper) == [init]).then_some(JailEnd {
            init: pidfd,
            report,
        })
    }

    /// The jail whose init is our child `init` (cloned, [`crate::sys::ns::clone_init`]):
    /// its pid names it until we reap it. `None` where the kernel has no `pidfd_open`.
    fn of_init(init: u32, pending: PendingEnd) -> Option<JailEnd> {
        Some(JailEnd {
            init: crate::sys::ns::pidfd_of(init)?,
            report: pending.report,
        })
    }

    /// Wait until the init has said its code, or is gone; then its code, where it said
    /// one. Either way nothing jailed runs any more.
    fn wait(self) -> Option<i32> {
        use rustix::event::{poll, PollFd, PollFlags};
        // The report channel is listened to until it ends or says anything but the word.
        let mut listening = true;
        loop {
            let mut fds = [
                PollFd::new(&self.init, PollFlags::IN),
                PollFd::new(&self.report, PollFlags::IN),
            ];
            let watched = if listening { 2 } else { 1 };
            match poll(&mut fds[..watched], None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return None,
            }
            if !fds[0].revents().is_empty() {
                return probe::read_exit(&self.report);
            }
            if listening && !fds[1].revents().is_empty() {
                match probe::said_exit(&self.report) {
                    Some(Some(code)) => return Some(code),
                    Some(None) => listening = false,
                    None => {}
                }
            }
        }
    }
}

/// A `Checked` let go without being waited for (an error path, or a panic unwinding the
/// caller) ends its jail and reaps it first: whatever the caller holds for the jail's
/// lifetime and drops after it (the mount points of missing protected paths, which must
/// never be removed under a running jail, FENCE-PROTECT-10) is then let go only once
/// nothing jailed runs.
impl Drop for Checked {
    fn drop(&mut self) {
        if !self.reaped {
            // A helper whose jail was seen ended is only reaped: it is ending with its
            // init, and a kill could take it before it reaped the init, whose zombie
            // would go elsewhere.
            if !self.jail_ended {
                let _ = self.go.take();
                let _ = self.child.kill();
            }
            let _ = self.child.wait();
        }
    }
}

impl Checked {
    /// The master of the command's terminal (asked with `terminal`): the caller relays it
    /// ([`crate::fence::tty::Relay`]). Nothing in the jail holds a copy.
    pub fn take_terminal(&mut self) -> Option<std::os::fd::OwnedFd> {
        self.terminal.take()
    }

    /// The listening socket on the jail's loopback (the `allow-list` mode), to serve with
    /// the proxy before [`Checked::start`].
    pub fn take_listener(&mut self) -> Option<std::net::TcpListener> {
        self.listener.take()
    }

    /// The jail's port 53 (FENCE-NET-13), for the resolver to serve before
    /// [`Checked::start`].
    pub fn take_resolver(&mut self) -> Option<ResolverSockets> {
        self.resolver.take()
    }

    /// Let the command start (its jail passed the probe and waits for this word). A
    /// `Checked` dropped or waited for without `start` runs nothing. The probe's files
    /// (its victim, what its legs left) are removed right after the word, while the jail
    /// starts the command, not after the command ends.
    pub fn start(&mut self) -> Result<(), FenceError> {
        #[cfg(target_os = "linux")]
        if let Some(go) = self.go.take() {
            crate::sys::mark::mark("go");
            rustix::io::write(&go, &[probe::GO]).map_err(|e| FenceError::ProbeFailed {
                backend: "jail".into(),
                leg: "go".into(),
                detail: e.to_string(),
            })?;
            drop(self.dirs.take());
            let (pid, is_init) = (self.child.id(), self.child.is_init());
            self.watched = self.jail_end.take().and_then(|pending| match is_init {
                true => JailEnd::of_init(pid, pending),
                false => JailEnd::of(pid, pending),
            });
        }
        Ok(())
    }

    /// Let this go without reaping the jail's init, for a process about to exit: once the
    /// jail's end was seen ([`Checked::wait`]: nothing jailed runs), the init, which runs
    /// nothing jailed any more and may still be taking the mount tree down, finishes (or
    /// dies with this process, its parent-death signal) and is reaped by whoever adopts
    /// it, as bubblewrap leaves its own. Anything else is ended and reaped as on drop.
    pub fn leave(mut self) {
        if self.jail_ended {
            self.reaped = true;
        }
    }

    /// Notes the posture gains from this jail's probe (what a degraded fence let through).
    pub fn notes(&self) -> Vec<String> {
        self.verdict
            .as_ref()
            .map(degraded_notes)
            .unwrap_or_default()
    }

    /// Wait for the command (never started unless [`Checked::start`] was called); the
    /// probe's directories go with it. Returns once nothing jailed runs: where the jail's
    /// end can be seen ([`JailEnd`]), with the code its init said, while the init, which
    /// runs nothing jailed any more, may still be taking the jail down (it is reaped when
    /// this is dropped, or left by [`Checked::leave`]); else once the jail's first process
    /// (its init, or the helper outside it) is gone, with its code.
    pub fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        let _ = self.go.take();
        #[cfg(target_os = "linux")]
        if let Some(code) = self.watched.take().and_then(JailEnd::wait) {
            crate::sys::mark::mark("init-word");
            use std::os::unix::process::ExitStatusExt;
            self.jail_ended = true;
            drop(self.dirs.take());
            return Ok(std::process::ExitStatus::from_raw(code << 8));
        }
        let s = self.child.wait();
        self.reaped = s.is_ok();
        drop(self.dirs.take());
        s
    }
}

/// A terminal for a command that runs without a jail of its own (`off`): opened here, the
/// slave given to `cmd`, the master returned (FENCE-TTY-2).
#[cfg(target_os = "linux")]
fn unjailed_terminal(cmd: &mut Command) -> std::io::Result<std::os::fd::OwnedFd> {
    let pair = crate::sys::pty::open_pair()?;
    crate::fence::tty::attach(cmd, pair.slave)?;
    Ok(pair.master)
}

#[cfg(not(target_os = "linux"))]
fn unjailed_terminal(_cmd: &mut Command) -> std::io::Result<std::os::fd::OwnedFd> {
    Err(std::io::Error::other(
        "a terminal for the command needs Linux",
    ))
}

/// The lines the jail's helper wrote on its standard error before it ended (which step
/// failed and why, FENCE-PROBE-5), when the caller piped it; read after the helper was
/// waited for, so whatever is left is all there will be (bounded, should a leftover
/// process keep the pipe open).
#[cfg(target_os = "linux")]
fn setup_failure(child: &mut Launched) -> Option<String> {
    let fd = child.stderr.take()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while out.len() < 1 << 16 {
        match crate::sys::handoff::readable_by(&fd, deadline) {
            Ok(true) => {}
            _ => break,
        }
        match rustix::io::read(&fd, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&out);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("gatehouse jail") || l.starts_with("bwrap:"))
        .collect();
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// `e`, with the helper's own account of what failed when it left one.
#[cfg(target_os = "linux")]
fn with_setup_failure(e: FenceError, child: &mut Launched) -> FenceError {
    match (e, setup_failure(child)) {
        (
            FenceError::ProbeFailed {
                backend,
                leg,
                detail,
            },
            Some(why),
        ) => FenceError::ProbeFailed {
            backend,
            leg,
            detail: format!("{detail}: {why}"),
        },
        (e, _) => e,
    }
}

fn degraded_notes(v: &probe::Verdict) -> Vec<String> {
    let mut notes = Vec::new();
    if v.truncate_went_through {
        notes.push("probe: truncate outside the workspace went through".into());
    }
    if v.chmod_went_through {
        notes.push("probe: chmod outside the workspace went through".into());
    }
    notes
}

/// Whether a backend's jail can prove itself for one command ([`Fence::spawn_checked`]):
/// every Linux backend that builds a jail; not `off`, not Seatbelt.
fn checked_backend(kind: &Kind) -> bool {
    cfg!(target_os = "linux")
        && matches!(
            kind,
            Kind::Native { .. } | Kind::LandlockOnly { .. } | Kind::Bwrap { .. }
        )
}

fn candidates(options: &FenceOptions, host: &Host) -> Vec<Result<Kind, FenceError>> {
    match options.backend {
        BackendChoice::Off => vec![Ok(Kind::Off)],
        BackendChoice::Native => vec![native(host)],
        BackendChoice::Bwrap => vec![bwrap(host)],
        BackendChoice::Seatbelt => vec![seatbelt()],
        BackendChoice::Auto => {
            if cfg!(target_os = "macos") {
                vec![seatbelt()]
            } else if cfg!(target_os = "linux") {
                let n = native(host);
                if matches!(n, Ok(Kind::LandlockOnly { .. })) {
                    // Without user namespaces bubblewrap cannot do better.
                    vec![n]
                } else {
                    vec![n, bwrap(host), landlock_only(host)]
                }
            } else {
                vec![Err(FenceError::Unavailable {
                    backend: "none".into(),
                    reason: "no fence backend exists on this platform".into(),
                })]
            }
        }
    }
}

fn native(host: &Host) -> Result<Kind, FenceError> {
    if !cfg!(target_os = "linux") {
        return Err(FenceError::Unavailable {
            backend: "native".into(),
            reason: "the native fence is Linux only".into(),
        });
    }
    if host.user_namespaces {
        Ok(Kind::Native {
            landlock: host.landlock_abi,
        })
    } else {
        landlock_only(host)
    }
}

fn landlock_only(host: &Host) -> Result<Kind, FenceError> {
    match host.landlock_abi {
        Some(abi) if cfg!(target_os = "linux") => Ok(Kind::LandlockOnly { abi }),
        _ => Err(FenceError::Unavailable {
            backend: "native".into(),
            reason: format!(
                "{} and no Landlock",
                host.user_namespaces_reason
                    .clone()
                    .unwrap_or_else(|| "no user namespaces".into())
            ),
        }),
    }
}

fn bwrap(host: &Host) -> Result<Kind, FenceError> {
    let unavailable = |reason: String| FenceError::Unavailable {
        backend: "bwrap".into(),
        reason,
    };
    if !cfg!(target_os = "linux") {
        return Err(unavailable("bubblewrap is Linux only".into()));
    }
    let Some(exe) = host.bwrap.clone() else {
        return Err(unavailable(format!(
            "{} is not installed",
            crate::fence::host::BWRAP
        )));
    };
    if !host.user_namespaces {
        return Err(unavailable(
            host.user_namespaces_reason
                .clone()
                .unwrap_or_else(|| "no user namespaces".into()),
        ));
    }
    Ok(Kind::Bwrap {
        exe,
        landlock: host.landlock_abi,
    })
}

fn seatbelt() -> Result<Kind, FenceError> {
    if cfg!(target_os = "macos") && Path::new(crate::fence::host::SANDBOX_EXEC).exists() {
        Ok(Kind::Seatbelt)
    } else {
        Err(FenceError::Unavailable {
            backend: "seatbelt".into(),
            reason: format!("{} is not present", crate::fence::host::SANDBOX_EXEC),
        })
    }
}

fn missing_reasons(kind: &Kind, host: &Host, missing: &[Coverage]) -> String {
    if missing.is_empty() {
        return String::new();
    }
    let mut why = Vec::new();
    if matches!(kind, Kind::LandlockOnly { .. }) {
        why.push(match &host.user_namespaces_reason {
            Some(r) => r.clone(),
            // User namespaces exist: Landlock alone is left because the fences that use
            // them failed, and their failures follow.
            None if host.user_namespaces => {
                "the fences with user namespaces could not be built".into()
            }
            None => "no user namespaces".into(),
        });
    }
    match kind.landlock_abi() {
        None => why.push("no Landlock".into()),
        Some(abi) if !abi.restricts_truncate() && missing.contains(&Coverage::Truncate) => why
            .push(format!(
                "Landlock ABI {abi} cannot restrict truncate (ABI 3, Linux 6.2)"
            )),
        _ => {}
    }
    if missing.contains(&Coverage::Metadata) {
        why.push("Landlock never restricts chmod, chown, utimes or xattr changes".into());
    }
    if missing.contains(&Coverage::ProtectedPaths) {
        why.push(
            "Landlock rights only add up below a writable root, so .git/hooks stays writable"
                .into(),
        );
    }
    if !host.emulation.is_empty() {
        why.push(format!("emulated: {}", host.emulation.join(", ")));
    }
    why.join("; ")
}

fn helper_command(helper: &Path, plan: &Plan) -> Result<Command, FenceError> {
    let json = serde_json::to_string(plan).map_err(|e| FenceError::Plan {
        index: 0,
        step: "serialize".into(),
        reason: e.to_string(),
    })?;
    let mut c = Command::new(helper);
    c.arg("__jail").env_clear().env(PLAN_ENV, json);
    Ok(c)
}

/// The native helper of a checked command, forked from this process instead of executed
/// again (no second load of the binary, no plan in JSON): the child applies `plan` itself
/// ([`crate::fence::jail::run_forked`]). Where this process has other threads already, or the
/// helper asked for is another binary, the helper is executed as before
/// ([`helper_command`]); `keep` are the descriptors the plan names.
#[cfg(target_os = "linux")]
fn forked_helper(helper: &Path, plan: Plan, keep: &[i32]) -> Result<Command, FenceError> {
    if std::env::current_exe().ok().as_deref() != Some(helper) {
        // Another helper was asked for (`GATEHOUSE_JAIL_HELPER`): that one is executed.
        return helper_command(helper, &plan);
    }
    let mut c = Command::new(helper);
    c.arg("__jail").env_clear();
    let shared = plan.clone();
    match crate::sys::ns::fork_instead_of_exec(&mut c, keep, move || {
        crate::fence::jail::run_forked(&shared)
    }) {
        Ok(()) => Ok(c),
        Err(_) => helper_command(helper, &plan),
    }
}

/// Whether an early init makes its network namespace on a thread of its own
/// ([`crate::fence::jail::Early::network_thread`]): where a core is free for it, unless
/// `GATEHOUSE_JAIL_NETWORK_THREAD` says `always` or `never` (for the tests of both ways);
/// any other value is refused, not taken for the guess. It changes only where the
/// namespace is made, never whether (the join is checked the same either way), so it
/// changes speed alone and stays in release builds, unlike the test faults.
#[cfg(target_os = "linux")]
fn network_thread() -> Result<bool, FenceError> {
    const ENV: &str = "GATEHOUSE_JAIL_NETWORK_THREAD";
    match std::env::var_os(ENV) {
        None => Ok(crate::sys::net::core_free()),
        Some(v) if v == "always" => Ok(true),
        Some(v) if v == "never" => Ok(false),
        Some(v) => Err(FenceError::Options {
            reason: format!(
                "{ENV}={}: must be `always` or `never` (unset: a thread where a core is free)",
                v.to_string_lossy()
            ),
        }),
    }
}

/// Whether the native helper of a checked command can be forked from this process rather
/// than executed: it is this very binary, and this process has one thread (see
/// [`crate::sys::ns::fork_instead_of_exec`]).
#[cfg(target_os = "linux")]
fn can_fork_helper(helper: &Path) -> bool {
    std::env::current_exe().ok().as_deref() == Some(helper)
        && crate::sys::ns::threads().ok() == Some(1)
}

/// Create missing protected paths on the host, never through a symlink: bubblewrap needs
/// them to exist before it starts, and so does an early init ([`crate::fence::jail::Early`]),
/// whose plan's `prepare-protected` steps (the same paths) come before the namespaces its
/// clone made. An executed or forked native helper takes those steps itself.
#[cfg(target_os = "linux")]
fn prepare_protected(policy: &Policy) -> Result<(), FenceError> {
    for p in policy.protected_paths() {
        let file = crate::fence::protect::placeholder_is_file(&p);
        crate::sys::fs::prepare_nofollow(&p.root, &p.rel, file).map_err(|e| FenceError::Io {
            what: "cannot prepare the protected path".into(),
            path: p.root.join(&p.rel),
            source: e,
        })?;
    }
    Ok(())
}

fn build_command(
    kind: &Kind,
    policy: &Policy,
    helper: &Path,
    action: Action,
    env: Vec<(String, String)>,
) -> Result<Command, FenceError> {
    match kind {
        Kind::Native { landlock } => {
            helper_command(helper, &Plan::native(policy, *landlock, action, env)?)
        }
        Kind::LandlockOnly { abi } => {
            helper_command(helper, &Plan::landlock_only(policy, *abi, action, env)?)
        }
        Kind::Off => helper_command(helper, &Plan::bare(BackendKind::Off, policy, action, env)?),
        #[cfg(target_os = "linux")]
        Kind::Bwrap { exe, landlock } => {
            prepare_protected(policy)?;
            let inner = Plan::inside_bwrap(policy, *landlock, action, env)?;
            let json = serde_json::to_string(&inner).map_err(|e| FenceError::Plan {
                index: 0,
                step: "serialize".into(),
                reason: e.to_string(),
            })?;
            let layout = crate::fence::plan::Layout::of(policy, *landlock);
            let mut c = Command::new(exe);
            c.args(crate::fence::bwrap::args(policy, &layout, helper))
                .arg("--")
                .arg(crate::fence::bwrap::HELPER_INSIDE)
                .arg("__jail")
                .env_clear()
                .env(PLAN_ENV, json);
            Ok(c)
        }
        #[cfg(target_os = "macos")]
        Kind::Seatbelt => {
            let plan = Plan::bare(BackendKind::Seatbelt, policy, action, env)?;
            let json = serde_json::to_string(&plan).map_err(|e| FenceError::Plan {
                index: 0,
                step: "serialize".into(),
                reason: e.to_string(),
            })?;
            let mut c = Command::new(crate::fence::host::SANDBOX_EXEC);
            c.args(crate::fence::seatbelt::args(policy, helper))
                .arg(helper)
                .arg("__jail")
                .env_clear()
                .env(PLAN_ENV, json);
            Ok(c)
        }
        #[allow(unreachable_patterns)]
        other => Err(FenceError::Unavailable {
            backend: other.backend().to_string(),
            reason: "not available on this platform".into(),
        }),
    }
}

/// The posture `gatehouse info` shows: the fence prepared (and probed) on a throwaway
/// workspace with these options, or `none` with the reason.
pub fn current_posture(options: &FenceOptions) -> Posture {
    let dir = match probe::tempdir() {
        Ok(d) => d,
        Err(e) => {
            return Posture::unfenced(BackendKind::None, format!("cannot create a temp dir: {e}"))
        }
    };
    let ws = dir.join("workspace");
    let scratch = dir.join("scratch");
    let posture = match std::fs::create_dir_all(&ws) {
        Err(e) => Posture::unfenced(BackendKind::None, format!("cannot create a temp dir: {e}")),
        Ok(()) => match Fence::prepare(Policy::new(vec![ws], scratch), options) {
            Ok(f) => f.posture().clone(),
            Err(e) => Posture::unfenced(BackendKind::None, e.to_string()),
        },
    };
    let _ = std::fs::remove_dir_all(&dir);
    posture
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered(layers: &[Layer]) -> Vec<Coverage> {
        Coverage::missing(layers.iter().map(|l| l.covers.as_slice()))
    }

    #[test]
    fn host_network_claims_no_network_and_keeps_abstract_sockets_by_the_filter() {
        for kind in [
            Kind::Native {
                landlock: Some(Abi::V5),
            },
            Kind::Bwrap {
                exe: PathBuf::from("/usr/bin/bwrap"),
                landlock: None,
            },
        ] {
            assert_eq!(covered(&kind.layers_with_network(false)), Vec::new());
            let host = kind.layers_with_network(true);
            assert_eq!(covered(&host), vec![Coverage::Network], "{kind:?}");
            let seccomp = host.iter().find(|l| l.name == "seccomp").unwrap();
            assert!(seccomp.covers.contains(&Coverage::UnixAbstract));
            assert!(host
                .iter()
                .filter(|l| l.name.starts_with("namespaces") || l.name.starts_with("bwrap"))
                .all(|l| !l.covers.contains(&Coverage::UnixAbstract)));
        }
        let alone = Kind::LandlockOnly { abi: Abi::V5 };
        assert_eq!(alone.layers_with_network(true), alone.layers());
    }
}
