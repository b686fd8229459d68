//! The gate's fixed lists: the read list (GATE-READ-1), the escape-flag table (section 5),
//! the never-savable families (section 9) and the names the dangerous-list scan treats as
//! wrappers (GATE-DANGER-3).
//!
//! Pure data and lookups over it: this module touches nothing outside itself.

use super::codes::Withheld;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The 29 commands whose plain use may run without asking (GATE-READ-1), sorted.
pub const READ_LIST: [&str; 29] = [
    "base64", "cat", "cut", "date", "echo", "find", "grep", "head", "hexdump", "id", "ls", "mkdir",
    "nl", "od", "printf", "pwd", "rg", "sort", "stat", "strings", "tac", "tail", "tr", "true",
    "uname", "uniq", "wc", "whoami", "xxd",
];

/// Whether `word` (after quote removal) is one of the 29 read commands, byte for byte.
///
/// A path spelling (`/bin/ls`) is not on the list: the path may hold any program.
pub fn is_read_command(word: &str) -> bool {
    READ_LIST.binary_search(&word).is_ok()
}

/// The flags of one read command that make it execute, write or never return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EscapeFlags {
    /// The command the flags belong to.
    pub command: &'static str,
    /// Long options, without their leading `--`, matched by prefix (GATE-FLAG-2).
    pub long: &'static [&'static str],
    /// Short option letters, matched inside a cluster (GATE-FLAG-3).
    pub short: &'static [u8],
    /// `find` primaries, matched as whole words anywhere in the line (GATE-FLAG-4).
    pub primaries: &'static [&'static str],
}

/// The escape-flag table of section 5, including each flag's other spelling, with the
/// flags of GATE-FLAG-9: recursive reads that follow every link (`grep -R`, `rg -L`,
/// `find -L`, `ls -L`) and `date -s`, which sets the clock.
pub const ESCAPE_FLAGS: [EscapeFlags; 9] = [
    EscapeFlags {
        command: "find",
        long: &[],
        short: &[],
        primaries: &[
            "-exec",
            "-execdir",
            "-ok",
            "-okdir",
            "-delete",
            "-fprintf",
            "-fprint",
            "-fprint0",
            "-fls",
            "-files0-from",
            "-L",
            "-follow",
        ],
    },
    EscapeFlags {
        command: "rg",
        long: &["pre", "pre-glob", "hostname-bin", "follow"],
        short: b"L",
        primaries: &[],
    },
    EscapeFlags {
        command: "sort",
        long: &["output", "compress-program", "files0-from"],
        short: b"o",
        primaries: &[],
    },
    EscapeFlags {
        command: "tail",
        long: &["follow", "retry"],
        short: b"fF",
        primaries: &[],
    },
    EscapeFlags {
        command: "grep",
        long: &["null", "dereference-recursive"],
        short: b"ZR",
        primaries: &[],
    },
    EscapeFlags {
        command: "head",
        long: &["zero-terminated"],
        short: b"z",
        primaries: &[],
    },
    EscapeFlags {
        command: "wc",
        long: &["files0-from"],
        short: &[],
        primaries: &[],
    },
    EscapeFlags {
        command: "ls",
        long: &["dereference"],
        short: b"L",
        primaries: &[],
    },
    EscapeFlags {
        command: "date",
        long: &["set"],
        short: b"s",
        primaries: &[],
    },
];

/// The escape flags of `command`, if it is one of the seven commands that have any.
pub fn escape_flags(command: &str) -> Option<&'static EscapeFlags> {
    ESCAPE_FLAGS.iter().find(|e| e.command == command)
}

/// Interpreters: they run whatever code they are given.
pub const INTERPRETERS: [&str; 27] = [
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "ash",
    "csh",
    "tcsh",
    "busybox",
    "python",
    "pypy",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "tclsh",
    "rscript",
    "osascript",
    "awk",
    "gawk",
    "mawk",
    "nawk",
];

/// Exec wrappers: they run another command named in their arguments.
pub const EXEC_WRAPPERS: [&str; 17] = [
    "sudo", "doas", "su", "env", "xargs", "nohup", "time", "timeout", "ssh", "docker", "podman",
    "setsid", "stdbuf", "nice", "ionice", "chroot", "unshare",
];

/// Pagers and editors: each can start a shell from inside.
pub const PAGERS_EDITORS: [&str; 14] = [
    "less", "more", "pg", "vi", "vim", "view", "vimdiff", "rvim", "rview", "nano", "pico", "emacs",
    "ed", "ex",
];

/// Transfer tools: their whole job is moving bytes off the machine.
pub const TRANSFER_TOOLS: [&str; 10] = [
    "curl", "wget", "scp", "sftp", "rsync", "ftp", "nc", "ncat", "netcat", "socat",
];

/// One of the four groups of families that can never be saved (section 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeverSavable {
    /// `interpreter`: runs whatever code it is given.
    Interpreter,
    /// `exec_wrapper`: runs another command named in its arguments.
    ExecWrapper,
    /// `pager_editor`: can start a shell from inside.
    PagerEditor,
    /// `transfer`: moves bytes off the machine.
    Transfer,
}

impl NeverSavable {
    /// The withheld-key code of the group.
    pub fn code(self) -> Withheld {
        match self {
            NeverSavable::Interpreter => Withheld::Interpreter,
            NeverSavable::ExecWrapper => Withheld::ExecWrapper,
            NeverSavable::PagerEditor => Withheld::PagerEditor,
            NeverSavable::Transfer => Withheld::Transfer,
        }
    }

    /// The text the card prints for withholding `name` as a family.
    pub fn reason_text(self, name: &str) -> String {
        match self {
            NeverSavable::Interpreter => format!(
                "\"{name}\" runs whatever code it is given, so a rule for it would allow anything: it can't be saved as a family."
            ),
            NeverSavable::ExecWrapper => format!(
                "\"{name}\" runs another command named in its arguments, so a rule for it would allow anything: it can't be saved as a family."
            ),
            NeverSavable::PagerEditor => format!(
                "\"{name}\" can start a shell from inside, so a rule for it would allow anything: it can't be saved as a family."
            ),
            NeverSavable::Transfer => format!(
                "\"{name}\" moves bytes off this machine, and the jail cannot tell which file it sends: it can't be saved as a family."
            ),
        }
    }
}

/// The last path component of `word` (`/usr/bin/python` -> `python`).
pub fn basename(word: &str) -> &str {
    match word.rfind('/') {
        Some(i) => &word[i + 1..],
        None => word,
    }
}

/// Whether `name` is a listed interpreter, possibly followed only by digits and dots
/// (GATE-NEVER-3: `python3`, `python3.12`, `perl5`, `pypy3`).
pub fn is_interpreter(name: &str) -> bool {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    INTERPRETERS.contains(&stem) || MORE_INTERPRETERS.contains(&stem)
}

/// The shells among the interpreters: their inline code is a command line, which the
/// dangerous-list scan reads (GATE-DANGER-3); any other interpreter's is not.
const SHELLS: [&str; 14] = [
    "sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "csh", "tcsh", "busybox", "toybox", "mksh",
    "yash", "posh",
];

/// Launchers beyond section 9's table that run the command named in their arguments
/// (GATE-NEVER-5): withheld as `exec_wrapper`, and wrappers for the dangerous-list scan.
pub const LAUNCHERS: [&str; 62] = [
    "run0",
    "tmux",
    "screen",
    "script",
    "watch",
    "flock",
    "strace",
    "ltrace",
    "valgrind",
    "parallel",
    "sem",
    "taskset",
    "chrt",
    "numactl",
    "nsenter",
    "setpriv",
    "prlimit",
    "fakeroot",
    "eatmydata",
    "unbuffer",
    "chronic",
    "ifne",
    "firejail",
    "systemd-run",
    "pkexec",
    "runuser",
    "sg",
    "runcon",
    "cgexec",
    "torsocks",
    "proxychains",
    "proxychains4",
    "xvfb-run",
    "dbus-run-session",
    "dbus-launch",
    "catchsegv",
    "tsp",
    "entr",
    "caffeinate",
    "sandbox-exec",
    "command",
    "builtin",
    "exec",
    "eval",
    "trap",
    "npx",
    "pnpx",
    "bunx",
    "uvx",
    "pipx",
    "at",
    "batch",
    "setarch",
    "linux32",
    "linux64",
    "faketime",
    "proot",
    "bwrap",
    "rlwrap",
    "ssh-agent",
    "expect",
    "gdb",
];

/// Interpreters beyond section 9's table (GATE-NEVER-6): `toybox`, a multi-call binary
/// like `busybox` that holds a shell, and `R`, whose `Rscript` the table lists.
pub const MORE_INTERPRETERS: [&str; 2] = ["toybox", "r"];

/// Whether `name` (lower case, a last path component) is the dynamic loader, which runs
/// the program named in its arguments as that program (GATE-NEVER-7):
/// `ld.so`, `ld-linux-x86-64.so.2`, `ld-linux.so.2`, `ld-linux-aarch64.so.1`,
/// `ld-musl-x86_64.so.1`, `ld64.so.2`, `ld-2.31.so`.
pub fn is_loader(name: &str) -> bool {
    name == "ld.so"
        || name.starts_with("ld.so.")
        || ((name.starts_with("ld-") || name.starts_with("ld64.")) && name.contains(".so"))
}

/// The never-savable group of a first word, judged by its last path component
/// (GATE-NEVER-2), counting versioned interpreters (GATE-NEVER-3), compared without
/// regard to ASCII case (GATE-NEVER-6: `Rscript`; a case-insensitive filesystem runs
/// `SUDO` as `sudo`), and counting the launchers of GATE-NEVER-5.
pub fn never_savable(first_word: &str) -> Option<NeverSavable> {
    let lower = basename(first_word).to_ascii_lowercase();
    let name = lower.as_str();
    if is_interpreter(name) {
        Some(NeverSavable::Interpreter)
    } else if EXEC_WRAPPERS.contains(&name) || LAUNCHERS.contains(&name) || is_loader(name) {
        Some(NeverSavable::ExecWrapper)
    } else if PAGERS_EDITORS.contains(&name) {
        Some(NeverSavable::PagerEditor)
    } else if TRANSFER_TOOLS.contains(&name) {
        Some(NeverSavable::Transfer)
    } else {
        None
    }
}

/// Names after which the dangerous-list scan treats a word holding an expansion as a
/// command it cannot read (GATE-DANGER-9), besides the exec wrappers, the launchers and
/// the interpreters: shell reserved words that may precede a command, `find` (its `-exec`
/// family runs one), and `source`/`.`.
const EXTRA_DANGER_WRAPPERS: [&str; 12] = [
    "if", "then", "else", "elif", "do", "while", "until", "!", "find", "source", ".", "time",
];

/// What the dangerous-list scan knows about a command name, as bits of one byte.
pub mod class {
    /// Runs a command named in its arguments (GATE-DANGER-3, -9).
    pub const WRAPPER: u8 = 1;
    /// An interpreter of section 9 or GATE-NEVER-6.
    pub const INTERPRETER: u8 = 2;
    /// A shell: its inline code is a command line.
    pub const SHELL: u8 = 4;
    /// One of the `awk` family.
    pub const AWK: u8 = 8;
}

/// The class bits of a lower-cased name, possibly versioned (`python3.12`), from one
/// table built once: the scan asks for every word, so it is one hash lookup or two.
pub fn classify(name: &str) -> u8 {
    static TABLE: OnceLock<HashMap<&'static str, u8>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t: HashMap<&'static str, u8> = HashMap::new();
        let mut add = |names: &[&'static str], bits: u8| {
            for &n in names {
                *t.entry(n).or_insert(0) |= bits;
            }
        };
        add(&EXEC_WRAPPERS, class::WRAPPER);
        add(&LAUNCHERS, class::WRAPPER);
        add(&EXTRA_DANGER_WRAPPERS, class::WRAPPER);
        add(&INTERPRETERS, class::WRAPPER | class::INTERPRETER);
        add(&MORE_INTERPRETERS, class::WRAPPER | class::INTERPRETER);
        add(&SHELLS, class::WRAPPER | class::SHELL);
        add(&["awk", "gawk", "mawk", "nawk"], class::AWK);
        t
    });
    let mut exact = table.get(name).copied().unwrap_or(0);
    if is_loader(name) {
        exact |= class::WRAPPER;
    }
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if stem.len() == name.len() || stem.is_empty() {
        return exact;
    }
    // A versioned spelling counts for interpreters and shells only (GATE-NEVER-3).
    exact | (table.get(stem).copied().unwrap_or(0) & !class::AWK)
}

/// Whether the dangerous-list scan treats `word` as a wrapper: a name that runs (or may
/// run) a command named among its arguments.
pub fn is_danger_wrapper(word: &str) -> bool {
    let base = basename(word);
    let lower;
    let name = if base.bytes().any(|b| b.is_ascii_uppercase()) {
        lower = base.to_ascii_lowercase();
        lower.as_str()
    } else {
        base
    };
    classify(name) & class::WRAPPER != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn read_list_is_sorted_and_has_29_commands() {
        let mut sorted = READ_LIST;
        sorted.sort_unstable();
        assert_eq!(sorted, READ_LIST);
        assert_eq!(READ_LIST.len(), 29);
    }

    #[rstest]
    fn every_read_command_is_on_the_list(
        #[values(
            "base64", "cat", "cut", "date", "echo", "find", "grep", "head", "hexdump", "id", "ls",
            "mkdir", "nl", "od", "printf", "pwd", "rg", "sort", "stat", "strings", "tac", "tail",
            "tr", "true", "uname", "uniq", "wc", "whoami", "xxd"
        )]
        name: &str,
    ) {
        assert!(is_read_command(name));
    }

    #[rstest]
    #[case("/bin/ls")]
    #[case("./cat")]
    #[case("LS")]
    #[case("ls ")]
    #[case("")]
    #[case("git")]
    #[case("rm")]
    fn look_alikes_are_not_read_commands(#[case] name: &str) {
        assert!(!is_read_command(name));
    }

    #[rstest]
    #[case("python", NeverSavable::Interpreter)]
    #[case("python3", NeverSavable::Interpreter)]
    #[case("python3.12", NeverSavable::Interpreter)]
    #[case("perl5", NeverSavable::Interpreter)]
    #[case("pypy3", NeverSavable::Interpreter)]
    #[case("/usr/bin/python", NeverSavable::Interpreter)]
    #[case("awk", NeverSavable::Interpreter)]
    #[case("sudo", NeverSavable::ExecWrapper)]
    #[case("/usr/bin/env", NeverSavable::ExecWrapper)]
    #[case("xargs", NeverSavable::ExecWrapper)]
    #[case("vim", NeverSavable::PagerEditor)]
    #[case("less", NeverSavable::PagerEditor)]
    #[case("curl", NeverSavable::Transfer)]
    #[case("nc", NeverSavable::Transfer)]
    #[case("Rscript", NeverSavable::Interpreter)]
    #[case("R", NeverSavable::Interpreter)]
    #[case("toybox", NeverSavable::Interpreter)]
    #[case("SUDO", NeverSavable::ExecWrapper)]
    #[case("/usr/bin/Python3", NeverSavable::Interpreter)]
    #[case("run0", NeverSavable::ExecWrapper)]
    #[case("tmux", NeverSavable::ExecWrapper)]
    #[case("npx", NeverSavable::ExecWrapper)]
    #[case("/lib64/ld-linux-x86-64.so.2", NeverSavable::ExecWrapper)]
    #[case("ld.so", NeverSavable::ExecWrapper)]
    #[case("/lib/ld-musl-x86_64.so.1", NeverSavable::ExecWrapper)]
    #[case("ld64.so.2", NeverSavable::ExecWrapper)]
    fn never_savable_groups(#[case] word: &str, #[case] group: NeverSavable) {
        assert_eq!(never_savable(word), Some(group));
    }

    #[rstest]
    #[case("git")]
    #[case("npm")]
    #[case("python-config")]
    #[case("pythonx")]
    #[case("shellcheck")]
    #[case("ls")]
    #[case("3")]
    #[case("ld")]
    #[case("ldd")]
    #[case("ldconfig")]
    #[case("libc.so.6")]
    fn savable_names(#[case] word: &str) {
        assert_eq!(never_savable(word), None);
    }

    #[rstest]
    #[case("sudo", class::WRAPPER)]
    #[case("tmux", class::WRAPPER)]
    #[case("find", class::WRAPPER)]
    #[case("python3", class::WRAPPER | class::INTERPRETER)]
    #[case("python3.12", class::WRAPPER | class::INTERPRETER)]
    #[case("r", class::WRAPPER | class::INTERPRETER)]
    #[case("bash5", class::WRAPPER | class::SHELL | class::INTERPRETER)]
    #[case("busybox", class::WRAPPER | class::SHELL | class::INTERPRETER)]
    #[case("mksh", class::WRAPPER | class::SHELL)]
    #[case("awk", class::WRAPPER | class::INTERPRETER | class::AWK)]
    #[case("ld-linux-x86-64.so.2", class::WRAPPER)]
    #[case("ld.so", class::WRAPPER)]
    #[case("git", 0)]
    #[case("3", 0)]
    #[case("", 0)]
    fn classes(#[case] name: &str, #[case] bits: u8) {
        assert_eq!(classify(name), bits, "{name}");
        if !name.is_empty() {
            assert_eq!(is_danger_wrapper(name), bits & class::WRAPPER != 0);
        }
    }

    #[test]
    fn escape_flags_cover_nine_commands() {
        for cmd in [
            "find", "rg", "sort", "tail", "grep", "head", "wc", "ls", "date",
        ] {
            assert!(escape_flags(cmd).is_some(), "{cmd}");
            assert!(is_read_command(cmd), "{cmd}");
        }
        assert!(escape_flags("cat").is_none());
    }
}
