//! Why the `vm` command could not run (`thiserror`): each error names its object, the
//! option, the file (kernels.toml, build.py, a report), the kernel or the variant. Errors
//! of one guest are not here: a guest that hangs or sends garbage is a row of the matrix.

use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;

/// Why the `vm` command stopped before booting, or could not write its reports.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// An option for the inner run that the vm command sets itself.
    #[error("{flag}: {why}")]
    GuestOwned {
        /// The option as given.
        flag: String,
        /// Why the vm command owns it.
        why: &'static str,
    },
    /// An option for the inner run holds a newline (the guest reads them line by line).
    #[error("{arg:?}: an option for the inner run cannot hold a newline")]
    Newline {
        /// The option.
        arg: String,
    },
    /// The options for the inner run do not parse as `run`'s.
    #[error("the options for the inner run: {}", source.kind())]
    RunArgs {
        /// `run`'s parser's answer.
        source: clap::Error,
    },
    /// A `--guest-copy` that names nothing or a place the guest cannot take.
    #[error("--guest-copy {spec}: {why}")]
    GuestCopy {
        /// The option's value.
        spec: String,
        /// Why it is refused.
        why: String,
    },
    /// The implementation `--impl` names is not in the guest: refused before any boot.
    #[error("--impl {command:?}: {why}")]
    ImplNotInGuest {
        /// The adapter command.
        command: String,
        /// What is missing and how to add it.
        why: String,
    },
    /// The list of the guest's paths build.py wrote could not be read.
    #[error("cannot read the guest's list of paths {}: {source}", path.display())]
    Manifest {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The working directory could not be read (relative copies are relative to it).
    #[error("cannot read the working directory: {source}")]
    Cwd {
        /// Why.
        source: io::Error,
    },
    /// The vm-images directory was not found.
    #[error(transparent)]
    Images(#[from] Box<gatehouse_conform_core::error::Error>),
    /// kernels.toml could not be read.
    #[error("cannot read {}: {source}", path.display())]
    ReadKernels {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// kernels.toml is not valid.
    #[error("{}: {source}", path.display())]
    ParseKernels {
        /// The file.
        path: PathBuf,
        /// The parser's answer.
        source: Box<toml::de::Error>,
    },
    /// A `[[narrowed]]` entry of kernels.toml names no kernel of the file, or no scenario.
    #[error("{}: [[narrowed]] {scenarios:?}: {why}", path.display())]
    BadNarrowed {
        /// The file.
        path: PathBuf,
        /// Its scenario patterns.
        scenarios: Vec<String>,
        /// What is wrong.
        why: String,
    },
    /// A kernel of kernels.toml names a variant nothing declares.
    #[error("{}: kernel {kernel} names the variant {variant:?}, which no [variant.{variant}] declares", path.display())]
    UndeclaredVariant {
        /// The file.
        path: PathBuf,
        /// The kernel's id.
        kernel: String,
        /// The variant it names.
        variant: String,
    },
    /// `--kernel` names no kernel of kernels.toml.
    #[error("--kernel {kernel}: not in kernels.toml (known: {})", known.join(", "))]
    UnknownKernel {
        /// The id given.
        kernel: String,
        /// The ids kernels.toml holds.
        known: Vec<String>,
    },
    /// `--variant` names no variant of kernels.toml.
    #[error("--variant {variant}: not in kernels.toml (known: base, {})", known.join(", "))]
    UnknownVariant {
        /// The name given.
        variant: String,
        /// The variants kernels.toml declares.
        known: Vec<String>,
    },
    /// `GATEHOUSE_ACCEL` is neither `tcg` nor `kvm`.
    #[error("GATEHOUSE_ACCEL={value}: use tcg, kvm or auto")]
    Accel {
        /// The value found.
        value: String,
    },
    /// QEMU does not answer `--version`.
    #[error("{} is not installed (apt-get install qemu-system-x86)", qemu.display())]
    NoQemu {
        /// The QEMU executable tried.
        qemu: PathBuf,
    },
    /// The report directory could not be made or resolved.
    #[error("cannot create {}: {source}", path.display())]
    OutDir {
        /// `--out-dir`.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// build.py could not be started or waited for.
    #[error("cannot run python3 {}: {source}", script.display())]
    BuildSpawn {
        /// vm-images/build.py.
        script: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// build.py's output could not be read.
    #[error("{}: {source}", script.display())]
    BuildRead {
        /// vm-images/build.py.
        script: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A line of build.py's output is not JSON.
    #[error("{}: not JSON ({source}): {line}", script.display())]
    BuildJson {
        /// vm-images/build.py.
        script: PathBuf,
        /// The line.
        line: String,
        /// The parser's answer.
        source: serde_json::Error,
    },
    /// A line of build.py's output lacks `id`, `vmlinuz`, `initramfs` or `files`.
    #[error("{}: an incomplete answer: {line}", script.display())]
    BuildIncomplete {
        /// vm-images/build.py.
        script: PathBuf,
        /// The line.
        line: String,
    },
    /// build.py failed.
    #[error("building the images with {} failed ({status}); see above", script.display())]
    BuildFailed {
        /// vm-images/build.py.
        script: PathBuf,
        /// How it exited.
        status: ExitStatus,
    },
    /// build.py succeeded but built no image for a kernel asked for.
    #[error("{} built no image for kernel {kernel}", script.display())]
    BuildMissing {
        /// vm-images/build.py.
        script: PathBuf,
        /// The kernel's id.
        kernel: String,
    },
    /// A report of the matrix could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A report of the matrix could not be serialized.
    #[error("cannot serialize {}: {source}", path.display())]
    Serialize {
        /// The file it was for.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
}
