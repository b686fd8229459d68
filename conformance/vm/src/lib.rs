//! `gatehouse-conform vm` (the crate `gatehouse-conform-vm`): the same suite inside QEMU
//! on the kernels of `vm-images/kernels.toml`, as root and as an unprivileged user, and
//! the merged matrix report. Images come from `vm-images/build.py` (fetched and cached by
//! content); this crate plans the guests, boots them a few at a time, and reports. It
//! never links the reference either: inside the guest the ordinary `run` talks to
//! `gatehouse adapter`. It is reached from the binary's `vm` subcommand, which hands it
//! `run`'s argument parser to check the options meant for the guests' runs.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
mod extras;
mod guest;
mod kernels;
mod matrix;
mod serial;

use std::collections::{BTreeMap, VecDeque};
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use error::VmError;
pub use guest::Users;
use guest::{Boot, GuestResult, Watch};
use kernels::{GuestPlan, KernelsFile, BASE};

use gatehouse_conform_core::{exit, locate};

/// The `vm` command's arguments.
#[derive(Debug, clap::Args)]
pub struct VmArgs {
    /// The kernel to boot (an id of vm-images/kernels.toml, e.g. 6.1); repeatable.
    #[arg(long = "kernel", value_name = "ID", required_unless_present_any = ["all", "ci"])]
    kernels: Vec<String>,
    /// The variant of each --kernel (base, or a [variant.*] of kernels.toml).
    #[arg(long, value_name = "NAME", default_value = BASE, conflicts_with_all = ["all", "ci"])]
    variant: String,
    /// The whole matrix: every kernel in base and in the variants kernels.toml lists for it.
    #[arg(long, conflicts_with_all = ["kernels", "ci"])]
    all: bool,
    /// The part of the matrix kernels.toml marks `ci` (what .ci/run can afford on two
    /// cores): those kernels in base and in their variants.
    #[arg(long, conflicts_with = "kernels")]
    ci: bool,
    /// Guests booted at once [default: the machine's cores; each guest has one vCPU].
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Every scenario in every guest: both tiers, not the decision tier only where
    /// kernels.toml asks for it (`decision_tier`), and nothing left out by its
    /// `[[narrowed]]` entries.
    #[arg(long)]
    whole_suite: bool,
    /// Who runs the suite inside each guest.
    #[arg(long, value_enum, default_value = "both")]
    user: Users,
    /// Where the reports go: each guest's JSON and JUnit, its console log, matrix.md and
    /// matrix.json.
    #[arg(long, value_name = "DIR", default_value = "reports/vm")]
    out_dir: PathBuf,
    /// Seconds before a guest is killed and reported errored [default: kernels.toml's].
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// The vm-images directory [default: ./vm-images, else the workspace's].
    #[arg(long, value_name = "DIR")]
    images: Option<PathBuf>,
    /// A Debian package the implementation under test needs in the guest (`bubblewrap`,
    /// `nodejs`), with its dependencies, from the guest's userland suite through the
    /// image's private apt configuration; repeatable. The guest holds only the suite and
    /// the reference otherwise: an `--impl` whose program is not in it is refused before
    /// any boot.
    #[arg(long = "guest-package", value_name = "NAME")]
    guest_packages: Vec<String>,
    /// A file or directory copied into the guest (the implementation's build, its
    /// adapter): a relative PATH lands at the same relative place under /impl, the inner
    /// run's working directory, so `--impl 'python3 adapters/x.py' --guest-copy adapters`
    /// names the same file inside as outside; an absolute one keeps its place; GUEST_PATH
    /// puts it elsewhere. A directory the guest already has keeps its mode (the sticky
    /// /tmp stays 1777); a parent the copy adds takes the mode of the host's directory at
    /// the same place (0755, as the image's own, when a GUEST_PATH leaves it none).
    /// Cached by content; repeatable.
    #[arg(long = "guest-copy", value_name = "PATH[:GUEST_PATH]")]
    guest_copies: Vec<String>,
    /// Options for the `run` inside each guest (any `run` option but the report ones,
    /// --scenarios, --spec, --tier and the --expect-* checks, which the guest sets), e.g.
    /// `--filter fence/ --step-timeout 30`, or `--impl CMD` for another implementation
    /// than the reference (give it what it needs with --guest-package and --guest-copy).
    #[arg(
        value_name = "RUN_OPTIONS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    run_args: Vec<String>,
}

/// The inner run's `--step-timeout` under TCG unless one is given.
const TCG_STEP_TIMEOUT_SECS: u64 = 60;

/// Options the vm command sets for the inner run itself, each with why; passing them
/// through would contradict it.
const GUEST_OWNED: &[(&str, &str)] = &[
    ("--format", REPORTS),
    ("--out", REPORTS),
    ("--json-out", REPORTS),
    ("--scenarios", REPORTS),
    ("--spec", REPORTS),
    ("--expect-landlock-abi", REPORTS),
    ("--expect-fence-backend", REPORTS),
    (
        "--tier",
        "the vm command picks each guest's tiers (kernels.toml's decision_tier; --whole-suite for both everywhere)",
    ),
];
const REPORTS: &str = "the guest sets this itself; the vm command writes its reports to --out-dir";

/// Runs the `vm` command. `check_run` validates the pass-through options with the real
/// `run` parser, so a typo is caught here rather than after a boot.
pub fn main(
    args: VmArgs,
    check_run: fn(&[String]) -> Result<(), clap::Error>,
) -> Result<i32, VmError> {
    let started = Instant::now();
    for a in &args.run_args {
        let flag = a.split('=').next().unwrap_or(a);
        if let Some((_, why)) = GUEST_OWNED.iter().find(|(owned, _)| *owned == flag) {
            return Err(VmError::GuestOwned {
                flag: flag.to_string(),
                why,
            });
        }
    }
    if let Some(a) = args.run_args.iter().find(|a| a.contains('\n')) {
        return Err(VmError::Newline { arg: a.clone() });
    }
    check_run(&args.run_args).map_err(|source| VmError::RunArgs { source })?;
    let images = locate::dir(args.images.as_deref(), "vm-images", "--images").map_err(Box::new)?;
    let kernels_path = images.join("kernels.toml");
    let file = KernelsFile::load(&kernels_path)?;
    // The scenarios are read once: for the `[[narrowed]]` entries' check before any boot
    // and for the counts of what guests leave out; `None` when they cannot be read here
    // (the report then names what was left out without a count).
    let scenarios = gatehouse_conform_core::scenario::load_dir(
        &images.parent().unwrap_or(&images).join("scenarios"),
        None,
    )
    .ok()
    .map(|l| l.scenarios);
    check_narrowed(&file, &kernels_path, scenarios.as_deref())?;
    let mut plans: Vec<GuestPlan> = if args.all {
        file.matrix()?
    } else if args.ci {
        file.ci_matrix()?
    } else {
        args.kernels
            .iter()
            .map(|k| file.plan(k, &args.variant))
            .collect::<Result<_, _>>()?
    };
    if args.whole_suite {
        for p in &mut plans {
            p.decision_tier = true;
            p.leaves_out.clear();
        }
    }
    let requested = match std::env::var("GATEHOUSE_ACCEL").as_deref() {
        Ok("kvm") => "kvm".to_string(),
        Ok("auto") => "auto".to_string(),
        Ok("tcg") | Err(_) => "tcg".to_string(),
        Ok(other) => {
            return Err(VmError::Accel {
                value: other.to_string(),
            })
        }
    };
    let qemu = PathBuf::from(
        std::env::var_os("GATEHOUSE_QEMU").unwrap_or_else(|| "qemu-system-x86_64".into()),
    );
    prerequisites(&qemu)?;
    let out_dir = std::fs::create_dir_all(&args.out_dir)
        .and_then(|()| args.out_dir.canonicalize())
        .map_err(|source| VmError::OutDir {
            path: args.out_dir.clone(),
            source,
        })?;
    let cwd = std::env::current_dir().map_err(|source| VmError::Cwd { source })?;
    let copies = args
        .guest_copies
        .iter()
        .map(|c| extras::parse_copy(c, &cwd))
        .collect::<Result<Vec<_>, _>>()?;
    let mut ids: Vec<String> = plans.iter().map(|p| p.kernel.clone()).collect();
    ids.dedup();
    let built = build_images(&images, &ids, &args.guest_packages, &copies)?;
    // The implementation must be in the guest: refused here, before any boot, rather than
    // found missing by every guest's handshake.
    let guest_files = read_manifest(&built.files)?;
    let reference = extras::impl_command(&args.run_args).is_none();
    let implementation = extras::impl_command(&args.run_args).unwrap_or("gatehouse adapter");
    extras::check_impl(implementation, &guest_files, &cwd)?;
    // The guest's root is a tmpfs filled from the initramfs: room for the archive, its
    // unpacked copy and the tmpfs copy, beside what kernels.toml gives the suite.
    let memory_mib = file.defaults.memory_mib + 3 * built.initramfs_mib;
    let accel = if requested == "auto" {
        let vmlinuz = built.images.values().next().map(|(k, _)| k.clone());
        match vmlinuz.map(|k| probe_kvm(&qemu, &k, &out_dir)) {
            Some(Ok(())) => "kvm".to_string(),
            Some(Err(why)) => {
                eprintln!("vm: GATEHOUSE_ACCEL=auto: KVM not used ({why}); TCG");
                "tcg".to_string()
            }
            None => "tcg".to_string(),
        }
    } else {
        requested
    };
    let timeout = Duration::from_secs(args.timeout.unwrap_or(file.defaults.timeout_secs));
    let boots: VecDeque<Boot> = plans
        .into_iter()
        .map(|plan| {
            let (vmlinuz, initramfs) = built.images[&plan.kernel].clone();
            let mut run_args = args.run_args.clone();
            let mut env = Vec::new();
            if accel == "tcg" && !run_args.iter().any(|a| a.starts_with("--step-timeout")) {
                // TCG runs a guest 10 to 50 times slower than the host: the runner's
                // per-answer bound and the adapter's deadline for one command (8 s by
                // default, made for a host) are widened together, the second below the
                // first as on a host.
                run_args.push("--step-timeout".into());
                run_args.push(TCG_STEP_TIMEOUT_SECS.to_string());
                env.push(format!(
                    "GATEHOUSE_RUN_TIMEOUT={}",
                    TCG_STEP_TIMEOUT_SECS - 10
                ));
                // The same for the third-party adapters of conformance/adapters/.
                env.push(format!(
                    "GATEHOUSE_PEER_RUN_TIMEOUT={}",
                    TCG_STEP_TIMEOUT_SECS - 10
                ));
            }
            if !plan.decision_tier {
                run_args.push("--tier".into());
                run_args.push("enforcement".into());
            }
            // kernels.toml's [[narrowed]]: scenarios one kernel per class shows; the
            // report says which guests left them out.
            for pattern in plan.leaves_out.iter().flat_map(|n| &n.scenarios) {
                run_args.push("--exclude".into());
                run_args.push(pattern.clone());
            }
            // What the reference must declare on this guest. Another implementation
            // declares its own backend (or none): the guest's init probes the kernel's
            // Landlock ABI and user namespaces itself, whoever is under test.
            if reference {
                run_args.push("--expect-landlock-abi".into());
                run_args.push(plan.landlock_abi.to_string());
                run_args.push("--expect-fence-backend".into());
                run_args.push(plan.fence_backend.clone());
            }
            Boot {
                plan,
                vmlinuz,
                initramfs,
                memory_mib,
                timeout,
                users: args.user,
                run_args,
                env,
                accel: accel.clone(),
                qemu: qemu.clone(),
                dir: out_dir.clone(),
            }
        })
        .collect();
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, boots.len().max(1));
    eprintln!(
        "vm: {} guest(s), {jobs} at a time, {accel}, suite as {}; reports in {}",
        boots.len(),
        args.user.names().join(" and "),
        out_dir.display()
    );
    let results = run_all(boots, jobs);
    let command = command_line();
    let scenarios = scenarios.as_deref();
    let host_only = matrix::HostOnly {
        decision_scenarios: scenarios.and_then(|s| decision_tier_count(s, &args.run_args)),
        narrowed: file
            .narrowed
            .iter()
            .map(|n| (n.clone(), scenarios.and_then(|s| narrowed_count(s, n))))
            .collect(),
    };
    let md = matrix::write(
        &out_dir,
        &results,
        &command,
        started.elapsed().as_secs_f64(),
        &host_only,
    )?;
    print!("{md}");
    Ok(if results.iter().all(matrix::guest_green) {
        exit::SUCCESS
    } else {
        exit::FAILURE
    })
}

/// Refuses a `[[narrowed]]` entry that would leave out of some guests a scenario of the
/// enforcement tier pinning a requirement its `unless_pins` excludes. An entry with
/// `unless_pins` cannot be checked without the scenarios, so it is refused then too.
fn check_narrowed(
    file: &KernelsFile,
    path: &Path,
    scenarios: Option<&[gatehouse_conform_core::scenario::Scenario]>,
) -> Result<(), VmError> {
    let bad = |n: &kernels::Narrowed, why: String| VmError::BadNarrowed {
        path: path.to_path_buf(),
        scenarios: n.scenarios.clone(),
        why,
    };
    match scenarios {
        Some(scenarios) => match file.broken_narrowing(scenarios) {
            Some((n, why)) => Err(bad(n, why)),
            None => Ok(()),
        },
        None => match file.narrowed.iter().find(|n| !n.unless_pins.is_empty()) {
            Some(n) => Err(bad(
                n,
                "`unless_pins` cannot be checked: the scenarios beside vm-images/ could not be read".into(),
            )),
            None => Ok(()),
        },
    }
}

/// How many of `scenarios` a `[[narrowed]]` entry's patterns select.
fn narrowed_count(
    scenarios: &[gatehouse_conform_core::scenario::Scenario],
    n: &kernels::Narrowed,
) -> Option<usize> {
    gatehouse_conform_core::filter::select_all(&n.scenarios, &[], scenarios.iter().collect(), |s| {
        s.id.as_str()
    })
    .ok()
    .map(|v| v.len())
}

/// How many scenarios of the decision tier the run options select: what a guest that runs
/// the enforcement tier only leaves to the host.
fn decision_tier_count(
    scenarios: &[gatehouse_conform_core::scenario::Scenario],
    run_args: &[String],
) -> Option<usize> {
    let (mut filters, mut excludes) = (Vec::new(), Vec::new());
    let mut it = run_args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (a.as_str(), None),
        };
        let into = match flag {
            "--filter" => &mut filters,
            "--exclude" => &mut excludes,
            _ => continue,
        };
        if let Some(v) = inline.or_else(|| it.next().cloned()) {
            into.push(v);
        }
    }
    let picked = gatehouse_conform_core::filter::select_all(
        &filters,
        &excludes,
        scenarios.iter().collect(),
        |s| s.id.as_str(),
    )
    .ok()?;
    Some(
        picked
            .iter()
            .filter(|s| s.tier == gatehouse_conform_core::scenario::Tier::Decision)
            .count(),
    )
}

/// How long a KVM guest gets to print its first console line before KVM is judged not
/// to work (a working one prints it well under a second; TCG takes a few).
const KVM_PROBE: Duration = Duration::from_secs(15);

/// Whether KVM really runs a guest here: `/dev/kvm` can exist, and QEMU can open it, on a
/// machine where every KVM guest hangs before its first instruction's output (nested
/// virtualization without the features QEMU asks for). The probe boots `vmlinuz` without
/// an initramfs under KVM and waits for the kernel's banner on the console.
fn probe_kvm(qemu: &Path, vmlinuz: &Path, dir: &Path) -> Result<(), String> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .map_err(|e| format!("/dev/kvm: {e}"))?;
    let console = dir.join("kvm-probe.console.log");
    let _ = std::fs::remove_file(&console);
    let mut child = Command::new(qemu)
        .args(["-accel", "kvm", "-M", "q35", "-nodefaults", "-no-reboot"])
        .args(["-display", "none", "-smp", "1", "-m", "256"])
        .arg("-serial")
        .arg(format!("file:{}", console.display()))
        .arg("-kernel")
        .arg(vmlinuz)
        .args(["-append", "console=ttyS0 panic=-1"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", qemu.display()))?;
    let started = Instant::now();
    let verdict = loop {
        let text = std::fs::read(&console).unwrap_or_default();
        if text.windows(13).any(|w| w == b"Linux version") {
            break Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            break Err(format!(
                "the probe guest exited with {status} before its banner"
            ));
        }
        if started.elapsed() > KVM_PROBE {
            break Err(format!(
                "a guest printed nothing within {} s",
                KVM_PROBE.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_file(&console);
    verdict
}

fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("gatehouse-conform {}", args.join(" "))
}

fn prerequisites(qemu: &Path) -> Result<(), VmError> {
    let found = Command::new(qemu)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match found {
        Ok(s) if s.success() => Ok(()),
        _ => Err(VmError::NoQemu {
            qemu: qemu.to_path_buf(),
        }),
    }
}

/// What build.py made.
struct Built {
    /// Per kernel id: its vmlinuz and the initramfs.
    images: BTreeMap<String, (PathBuf, PathBuf)>,
    /// The list of the guest's paths, one a line.
    files: PathBuf,
    /// The initramfs's size.
    initramfs_mib: u32,
}

/// Every path of the guest's root, from build.py's list.
fn read_manifest(path: &Path) -> Result<std::collections::BTreeSet<String>, VmError> {
    let text = std::fs::read_to_string(path).map_err(|source| VmError::Manifest {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(text.lines().map(str::to_string).collect())
}

/// Runs `vm-images/build.py image [--package NAME]... [--copy HOST:GUEST]... ID...` (its
/// progress goes to stderr) and reads the kernel and initramfs paths it prints, one JSON
/// object per kernel.
fn build_images(
    images: &Path,
    ids: &[String],
    packages: &[String],
    copies: &[extras::Copy],
) -> Result<Built, VmError> {
    let script = images.join("build.py");
    let spawn_error = |source| VmError::BuildSpawn {
        script: script.clone(),
        source,
    };
    let mut extra_args: Vec<std::ffi::OsString> = Vec::new();
    for p in packages {
        extra_args.push("--package".into());
        extra_args.push(p.into());
    }
    for c in copies {
        extra_args.push("--copy".into());
        let mut spec = c.host.clone().into_os_string();
        spec.push(":");
        spec.push(&c.guest);
        extra_args.push(spec);
    }
    let mut child = Command::new("python3")
        .arg(&script)
        .arg("image")
        .args(extra_args)
        .args(ids)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(spawn_error)?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| spawn_error(std::io::Error::other("its stdout was not piped")))?;
    let mut built = BTreeMap::new();
    let mut files = None;
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.map_err(|source| VmError::BuildRead {
            script: script.clone(),
            source,
        })?;
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|source| VmError::BuildJson {
                script: script.clone(),
                line: line.clone(),
                source,
            })?;
        let get = |k: &str| {
            v.get(k)
                .and_then(serde_json::Value::as_str)
                .map(PathBuf::from)
        };
        let (Some(id), Some(kernel), Some(ramfs), Some(list)) = (
            v.get("id").and_then(serde_json::Value::as_str),
            get("vmlinuz"),
            get("initramfs"),
            get("files"),
        ) else {
            return Err(VmError::BuildIncomplete {
                script: script.clone(),
                line,
            });
        };
        built.insert(id.to_string(), (kernel, ramfs));
        files = Some(list);
    }
    let status = child.wait().map_err(spawn_error)?;
    if !status.success() {
        return Err(VmError::BuildFailed { script, status });
    }
    if let Some(missing) = ids.iter().find(|id| !built.contains_key(*id)) {
        return Err(VmError::BuildMissing {
            script,
            kernel: missing.clone(),
        });
    }
    let Some(files) = files else {
        return Err(VmError::BuildMissing {
            script,
            kernel: ids.join(", "),
        });
    };
    let initramfs_mib = built
        .values()
        .next()
        .and_then(|(_, ramfs)| std::fs::metadata(ramfs).ok())
        .map_or(0, |m| u32::try_from(m.len() >> 20).unwrap_or(u32::MAX / 4));
    Ok(Built {
        images: built,
        files,
        initramfs_mib,
    })
}

/// Progress lines on stderr, one writer at a time.
struct Stderr {
    started: Instant,
    lock: Mutex<()>,
}

impl Watch for Stderr {
    fn line(&self, label: &str, text: &str) {
        let _held = self.lock.lock();
        eprintln!(
            "[{:>6.1} s] {label:<18} {text}",
            self.started.elapsed().as_secs_f64()
        );
    }
}

fn run_all(boots: VecDeque<Boot>, jobs: usize) -> Vec<GuestResult> {
    let order: Vec<String> = boots.iter().map(|b| b.plan.label()).collect();
    // Long guests first, so that the short ones fill the gaps at the end: a guest that
    // keeps the `[[narrowed]]` scenarios runs more than one that leaves them out, and one
    // where the fence refuses skips most of the enforcement tier.
    let mut boots: Vec<Boot> = boots.into();
    boots.sort_by_key(|b| (b.plan.fence_backend == "none", b.plan.leaves_out.len()));
    let queue = Mutex::new(VecDeque::from(boots));
    let done = Mutex::new(Vec::new());
    let watch = Stderr {
        started: Instant::now(),
        lock: Mutex::new(()),
    };
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let Some(boot) = lock(&queue).pop_front() else {
                    break;
                };
                let result = guest::run(&boot, &watch);
                watch.line(&boot.plan.label(), &verdict(&result));
                lock(&done).push(result);
            });
        }
    });
    let mut results = done
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    results.sort_by_key(|r| order.iter().position(|l| *l == r.plan.label()));
    results
}

fn verdict(r: &GuestResult) -> String {
    if let Some(e) = &r.error {
        return format!(
            "ERRORED after {:.0} s: {e} (console: {})",
            r.total.as_secs_f64(),
            r.console.display()
        );
    }
    let users: Vec<String> = r
        .users
        .iter()
        .map(|u| {
            let s = u.report.as_ref().and_then(|r| r.get("summary"));
            let n = |k: &str| {
                s.and_then(|s| s.get(k))
                    .and_then(serde_json::Value::as_u64)
                    .unwrap_or(0)
            };
            format!(
                "{}: {} passed, {} failed, {} skipped, {} errored",
                u.user,
                n("passed"),
                n("failed"),
                n("skipped"),
                n("errored")
            )
        })
        .collect();
    format!("{} in {:.0} s", users.join("; "), r.total.as_secs_f64())
}

/// The data behind `m`, even if a thread panicked while it held the lock: every update
/// made under these locks is one push, one field or one swap, never left half done.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
