//! The protected paths of the workspace roots: one list and one rule, shared by the fence
//! (read-only inside the jail, existing or not: FENCE-PROTECT-6, FENCE-PROTECT-7,
//! FENCE-PROTECT-16, FENCE-PROTECT-17) and by the file tools (`write` and `edit` refused
//! with `protected`: PATH-WRITE-7).
//!
//! The list is the fixed names at every workspace root ([`AT_EVERY_ROOT`], each with the
//! reason it is there: git's, Gatehouse's own, and the configuration every common coding
//! agent and host tool reads its hooks, permissions, MCP servers, tasks or trust from),
//! the hook managers' files of a repository ([`HOOK_MANAGER_FILES`]; missing ones too
//! where a hook is installed, and the files their configuration names), plus the places
//! the person's git would read configuration, hooks or a repository's location from,
//! found on the host's files: the directory a `.git` file names, the common directory its
//! `commondir` names, every `core.hooksPath` of the repository's, the global and the
//! system configuration, and every file an `include.path` or `includeIf.*.path` names.
//! A place outside every writable root needs no protection (it is read-only or hidden).
//!
//! The public functions: [`discover`] (every protected path of a session), [`covers`]
//! (whether a physical path lies at or below one), [`reason`] (why, in one phrase, for a
//! refusal), [`is_leftover_placeholder`] (an empty directory a killed launcher left),
//! [`hook_notes`] (the posture's lines), [`nested_repositories`],
//! [`git_targets`] and [`placeholder_is_file`].
//!
//! Reads files only; never writes, never runs git.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Names protected at every workspace root, existing or not. `.git` whole (its config,
/// hooks, `commondir`, `worktrees/`, `modules/` and the index all steer a later host git),
/// `HEAD` because with `objects/` and `refs/` it makes the root itself a bare repository
/// once `.git` is no repository, `.gatehouse` because it is the agent's own configuration.
pub const PROTECTED: [&str; 3] = [".git", "HEAD", ".gatehouse"];

/// One name protected at every workspace root, existing or not, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name {
    /// The path below the root (one component but for `.github/hooks` and `.github/copilot`).
    pub rel: &'static str,
    /// Who reads it and what planting it does, for a refusal's reason.
    pub reason: &'static str,
    /// The tool reads a file by this name: an empty directory here is a placeholder a
    /// killed launcher left ([`is_leftover_placeholder`]).
    pub file: bool,
}

/// Everything protected at every workspace root, existing or not: [`PROTECTED`]
/// (FENCE-PROTECT-6), then the configuration the coding agents and the host's tools read
/// hooks, permissions, MCP servers, tasks or trust from (FENCE-PROTECT-16). A tool's whole
/// directory where it has one: its settings name scripts beside them (`.claude/hooks/`,
/// `.cursor/hooks/`), and one empty directory is the only placeholder a missing one needs.
/// Instructions files (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, `.cursorrules`,
/// `.goosehints`, `.github/copilot-instructions.md`) are not here: they are text the
/// project keeps, which no agent runs.
pub const AT_EVERY_ROOT: [Name; 29] = [
    Name { rel: ".git", reason: "git's repository: its config, hooks and index steer the host's next git", file: false },
    Name { rel: "HEAD", reason: "makes the root a bare repository for the host's git", file: false },
    Name { rel: ".gatehouse", reason: "Gatehouse's own configuration", file: false },
    Name { rel: ".claude", reason: "Claude Code's settings (hooks, permissions, disableAllHooks, env, apiKeyHelper), hook scripts, agents and commands", file: false },
    Name { rel: ".mcp.json", reason: "Claude Code's project MCP servers, commands it starts on the host", file: true },
    Name { rel: ".codex", reason: "Codex CLI's project config.toml (MCP servers, sandbox, approval, notify) and hooks", file: false },
    Name { rel: ".gemini", reason: "Gemini CLI's settings (hooks, MCP servers, sandbox, tools) and commands", file: false },
    Name { rel: ".qwen", reason: "Qwen Code's settings (hooks, MCP servers, sandbox, tools)", file: false },
    Name { rel: ".cursor", reason: "Cursor's hooks.json, mcp.json, environment.json and rules", file: false },
    Name { rel: ".github/hooks", reason: "GitHub Copilot CLI's hooks, loaded from the working directory", file: false },
    Name { rel: ".github/copilot", reason: "GitHub Copilot CLI's project settings (hooks, disableAllHooks, permissions, MCP servers), read in a folder it trusts", file: false },
    Name { rel: ".opencode", reason: "opencode's plugins (code it loads), agents and commands", file: false },
    Name { rel: "opencode.json", reason: "opencode's project configuration (MCP servers, permissions, plugins)", file: true },
    Name { rel: "opencode.jsonc", reason: "opencode's project configuration (MCP servers, permissions, plugins)", file: true },
    Name { rel: ".crush.json", reason: "Crush's project configuration (MCP servers, LSP commands, allowed tools)", file: true },
    Name { rel: "crush.json", reason: "Crush's project configuration (MCP servers, LSP commands, allowed tools)", file: true },
    Name { rel: ".continue", reason: "Continue's configuration and MCP servers", file: false },
    Name { rel: ".clinerules", reason: "Cline's rules and hooks", file: false },
    Name { rel: ".roo", reason: "Roo Code's MCP servers and rules", file: false },
    Name { rel: ".roomodes", reason: "Roo Code's modes and the tools each may use", file: true },
    Name { rel: ".kilocode", reason: "Kilo Code's MCP servers and rules", file: false },
    Name { rel: ".windsurf", reason: "Windsurf's hooks, workflows and rules", file: false },
    Name { rel: ".amp", reason: "Amp's workspace settings (MCP servers, permissions, command allow-list)", file: false },
    Name { rel: ".kiro", reason: "Kiro's hooks, MCP servers and steering", file: false },
    Name { rel: ".aider.conf.yml", reason: "aider's configuration (lint-cmd and test-cmd run on the host after each edit)", file: true },
    Name { rel: ".vscode", reason: "VS Code's tasks (run on folder open), settings (tool paths, terminal environment), launch and MCP configuration", file: false },
    Name { rel: ".zed", reason: "Zed's settings (context servers, language server binaries) and tasks", file: false },
    Name { rel: ".devcontainer", reason: "a dev container's configuration: initializeCommand runs on the host", file: false },
    Name { rel: ".devcontainer.json", reason: "a dev container's configuration: initializeCommand runs on the host", file: true },
];

/// What the common hook managers read their commands from, below a repository's work
/// tree (FENCE-PROTECT-13): husky's directory (v9's `core.hooksPath=.husky/_` runs
/// `.husky/<hook>`; v4 to v8 source `.husky/_/husky.sh`), pre-commit's configuration
/// (its `repo: local` entries name commands), lefthook's configuration and script
/// directories in every spelling it reads, and overcommit's. Protected where they exist
/// when the jail is built, and in a repository with a hook installed whether they exist
/// or not (FENCE-PROTECT-17): a manager reads its configuration only from a hook, and no
/// hook can be added while the hooks directories are read-only; a missing file (a
/// lefthook `-local` one, a second spelling) is read by the installed manager's next run.
pub const HOOK_MANAGER_FILES: [&str; 27] = [
    ".husky",
    ".pre-commit-config.yaml",
    ".pre-commit-config.yml",
    "lefthook.yml",
    "lefthook.yaml",
    "lefthook.toml",
    "lefthook.json",
    "lefthook.jsonc",
    ".lefthook.yml",
    ".lefthook.yaml",
    ".lefthook.toml",
    ".lefthook.json",
    ".lefthook.jsonc",
    "lefthook-local.yml",
    "lefthook-local.yaml",
    "lefthook-local.toml",
    "lefthook-local.json",
    "lefthook-local.jsonc",
    ".lefthook-local.yml",
    ".lefthook-local.yaml",
    ".lefthook-local.toml",
    ".lefthook-local.json",
    ".lefthook-local.jsonc",
    ".lefthook",
    ".lefthook-local",
    ".config/lefthook.yml",
    ".overcommit.yml",
];

/// How deep below a workspace root repositories that already exist are looked for
/// (FENCE-PROTECT-14), and how many directories the search reads at most per root.
pub const NESTED_DEPTH: usize = 3;
/// See [`NESTED_DEPTH`].
pub const NESTED_MAX_DIRS: usize = 2000;

/// How deep `include.path` chains are followed (git itself stops at 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// One protected path: a writable root and a path relative to it (normal components only).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Protected {
    /// The writable root the path lies in.
    pub root: PathBuf,
    /// The path below the root.
    pub rel: PathBuf,
    /// A file git reads (an included configuration file): made an empty file, not an
    /// empty directory, when it is missing.
    pub file: bool,
}

/// Every protected path of a session: [`PROTECTED`] at each workspace root, then what git
/// would read at each of them. `writable` is every writable root (workspaces and scratch),
/// canonical; `home` is the person's home (for `~/.gitconfig` and `~/` in values).
pub fn discover(
    workspaces: &[PathBuf],
    writable: &[PathBuf],
    home: Option<&Path>,
) -> Vec<Protected> {
    let mut out = Vec::new();
    for w in workspaces {
        for name in AT_EVERY_ROOT {
            out.push(Protected {
                root: w.clone(),
                rel: PathBuf::from(name.rel),
                file: false,
            });
        }
        let (nested, _) = nested_repositories(w);
        for tree in std::iter::once(w.clone()).chain(nested.iter().map(|n| w.join(n))) {
            if &tree != w {
                out.push(Protected {
                    root: w.clone(),
                    rel: tree.strip_prefix(w).unwrap_or(&tree).join(".git"),
                    file: false,
                });
            }
            // FENCE-PROTECT-17: with a hook installed, every spelling, existing or not.
            let hooked = !installed_hooks(&tree, home).is_empty();
            for name in HOOK_MANAGER_FILES {
                let at = tree.join(name);
                let exists = std::fs::symlink_metadata(&at).is_ok();
                if exists || hooked {
                    if let Some(p) = place(&normalize(&at), writable) {
                        out.push(p);
                    }
                }
                if exists {
                    for named in named_by_manager(&at, &tree) {
                        if let Some(p) = place(&normalize(&named), writable) {
                            out.push(p);
                        }
                    }
                }
            }
            for (target, file) in git_targets(&tree, home) {
                if let Some(mut p) = place(&target, writable) {
                    p.file = file;
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.root == b.root && a.rel == b.rel);
    drop_covered(out)
}

/// `sorted` (by root, then path, each once) without the paths beneath another of the same
/// root, which that one covers. Sorted component by component, every path beneath one
/// follows it directly (`a`, `a/b`, `a/b/c`, then `a.b`), so one pass keeping the last
/// path kept finds them all: linear, where comparing each pair was quadratic in the
/// nested repositories.
fn drop_covered(sorted: Vec<Protected>) -> Vec<Protected> {
    let mut kept: Vec<Protected> = Vec::with_capacity(sorted.len());
    for p in sorted {
        let covered = kept
            .last()
            .is_some_and(|q| q.root == p.root && p.rel.starts_with(&q.rel));
        if !covered {
            kept.push(p);
        }
    }
    kept
}

/// Whether `root/rel` is an empty directory where a tool reads a file (`.mcp.json`,
/// `.aider.conf.yml`, a hook manager's configuration): a placeholder a launcher killed by
/// `SIGKILL` left behind (FENCE-PROTECT-12), which the tool on the host would fail to read.
/// The next launcher counts it as one it made, so that the last jail of the root to end
/// removes it. Never through a symlink: a link is not a directory here.
pub fn is_leftover_placeholder(root: &Path, rel: &Path) -> bool {
    let Some(name) = rel.to_str() else {
        return false;
    };
    let file_named = AT_EVERY_ROOT.iter().any(|n| n.file && n.rel == name)
        || name == "HEAD"
        || (HOOK_MANAGER_FILES.contains(&name)
            && ![".husky", ".lefthook", ".lefthook-local"].contains(&name));
    let at = root.join(rel);
    file_named
        && std::fs::symlink_metadata(&at)
            .map(|m| m.is_dir())
            .unwrap_or(false)
        && std::fs::read_dir(&at)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false)
}

/// Whether the placeholder at `rel` below a root may outlive the last jail of the root
/// (FENCE-PROTECT-20): a directory a tool reads its configuration *from* (`.claude`,
/// `.vscode`, `.git`...), or a parent made for one (`.github` for `.github/hooks`), where
/// the host's tools find an empty directory as good as none and can still create their
/// files in it. Not a name a tool reads *as* a file (`HEAD`, `.mcp.json`, a hook
/// manager's configuration): an empty directory there makes the host's write of that
/// file fail, so it goes as the last jail ends.
pub fn placeholder_lingers(rel: &Path) -> bool {
    let Some(name) = rel.to_str() else {
        return false;
    };
    !name.is_empty()
        && AT_EVERY_ROOT
            .iter()
            .any(|n| !n.file && n.rel != "HEAD" && Path::new(n.rel).starts_with(rel))
}

/// Why the physical path `path` is protected, in one phrase for a refusal: the reason of
/// the [`AT_EVERY_ROOT`] name it lies under, or what git or a hook manager reads there;
/// `None` where [`covers`] is false.
pub fn reason(list: &[Protected], path: &Path) -> Option<&'static str> {
    let path = normalize(path);
    let hit = list
        .iter()
        .find(|p| path.starts_with(p.root.join(&p.rel)))?;
    if let Some(n) = AT_EVERY_ROOT.iter().find(|n| hit.rel == Path::new(n.rel)) {
        return Some(n.reason);
    }
    let name = hit.rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if HOOK_MANAGER_FILES.iter().any(|m| hit.rel.ends_with(m)) {
        return Some("a hook manager's configuration: the host's next commit runs what it names");
    }
    if name == ".git" {
        return Some("a nested repository's git directory: it steers the host's next git there");
    }
    Some("a place git or a hook manager reads hooks, configuration or commands from on the host")
}

/// How much of a hook manager's file is read for the paths it names.
const MAX_MANAGER_FILE: u64 = 256 * 1024;

/// The configuration files and script directories a hook manager's configuration at `at`
/// names below the work tree `tree` (FENCE-PROTECT-17): lefthook's `extends` (merged
/// into it), `source_dir` and `source_dir_local` (the scripts its hooks run), in YAML,
/// JSON or TOML spelling. A script a command names (`run: ./scripts/lint.sh`, pre-commit's
/// `entry`) is the repository's own code, left writable and named by FENCE-PROTECT-15's
/// posture line. Linear in the file's size; the file is read to [`MAX_MANAGER_FILE`].
fn named_by_manager(at: &Path, tree: &Path) -> Vec<PathBuf> {
    use std::io::Read;
    let mut texts: Vec<String> = Vec::new();
    let read = |p: &Path| -> Option<String> {
        let f = std::fs::File::open(p).ok()?;
        let mut s = String::new();
        f.take(MAX_MANAGER_FILE).read_to_string(&mut s).ok()?;
        Some(s)
    };
    match std::fs::metadata(at) {
        Ok(m) if m.is_file() => texts.extend(read(at)),
        _ => return Vec::new(),
    }
    let mut out = Vec::new();
    for text in &texts {
        let mut in_extends = false;
        for line in text.lines() {
            let t = line.trim();
            let unquote = |v: &str| {
                v.trim()
                    .trim_matches(|c: char| "\"',[]{} ".contains(c))
                    .to_string()
            };
            // `key: value`, `"key": "value"`, `key = "value"`.
            let kv = t
                .split_once(':')
                .or_else(|| t.split_once('='))
                .map(|(k, v)| (unquote(k).to_ascii_lowercase(), v.trim().to_string()));
            if let Some((k, v)) = &kv {
                in_extends = k == "extends" && (v.is_empty() || v == "[");
                match k.as_str() {
                    "source_dir" | "source_dir_local" => out.push(tree.join(unquote(v))),
                    "extends" => {
                        for item in v.trim_matches(|c| c == '[' || c == ']').split(',') {
                            let item = unquote(item);
                            if !item.is_empty() {
                                out.push(tree.join(item));
                            }
                        }
                    }
                    _ => {}
                }
                if matches!(k.as_str(), "extends" | "source_dir" | "source_dir_local") {
                    continue;
                }
            } else if in_extends {
                // A list below `extends:` (`- a.yml`) or inside `[` ... `]`.
                let item = unquote(t.trim_start_matches('-'));
                if !item.is_empty() {
                    out.push(tree.join(item));
                }
                if t.contains(']') || (!t.starts_with('-') && !t.starts_with('"')) {
                    in_extends = false;
                }
            }
        }
    }
    out.retain(|p| normalize(p).starts_with(tree));
    out
}

/// Directories a package manager or a build fills and rewrites wholesale (FENCE-PROTECT-19):
/// searched for repositories only with what the rest of the tree leaves of the budget, and
/// a limit reached below one makes no line of the posture.
pub const DEPENDENCY_DIRS: [&str; 9] = [
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".gradle",
    "bower_components",
    ".yarn",
];

/// The repositories that exist below `root` (a `.git` directory or file), as paths
/// relative to it, found breadth first to [`NESTED_DEPTH`] levels and at most
/// [`NESTED_MAX_DIRS`] directories read; `false` when the search stopped at a limit
/// before it had read every directory it could reach outside the [`DEPENDENCY_DIRS`].
/// Those are searched too, as deep, once every other directory within reach has been
/// read (a limit reached there is not reported: FENCE-PROTECT-19). Symlinks are not
/// followed, a repository's own `.git` is not entered, and neither is a name of
/// [`AT_EVERY_ROOT`] at the root, which the jail sees read-only whole.
pub fn nested_repositories(root: &Path) -> (Vec<PathBuf>, bool) {
    use std::collections::VecDeque;
    let mut found = Vec::new();
    // The person's tree first, the dependency directories after it.
    let mut own: VecDeque<(PathBuf, usize)> = VecDeque::from([(PathBuf::new(), 0)]);
    let mut deps: VecDeque<(PathBuf, usize)> = VecDeque::new();
    let mut read = 0usize;
    let mut complete = true;
    loop {
        let (rel, depth, in_deps) = match own.pop_front() {
            Some((r, d)) => (r, d, false),
            None => match deps.pop_front() {
                Some((r, d)) => (r, d, true),
                None => break,
            },
        };
        if read >= NESTED_MAX_DIRS {
            complete &= in_deps;
            break;
        }
        read += 1;
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            let name = e.file_name();
            if name == ".git" {
                if !rel.as_os_str().is_empty() {
                    found.push(rel.clone());
                }
                continue;
            }
            // A name protected at every root is read-only in the jail whole: a repository
            // inside it keeps its `.git` read-only too, and lingering placeholders
            // (FENCE-PROTECT-20) are not read each time.
            if rel.as_os_str().is_empty() && AT_EVERY_ROOT.iter().any(|n| name == n.rel) {
                continue;
            }
            if kind.is_dir() {
                let dep = in_deps || DEPENDENCY_DIRS.iter().any(|d| name == *d);
                if depth + 1 > NESTED_DEPTH {
                    complete &= dep;
                } else if dep {
                    deps.push_back((rel.join(&name), depth + 1));
                } else {
                    own.push_back((rel.join(&name), depth + 1));
                }
            }
        }
    }
    found.sort();
    (found, complete)
}

/// One plain line per workspace root whose repository has hooks installed that git runs
/// on the host (an executable file of its hooks directory or `core.hooksPath`, not a
/// `.sample`), and one per root whose search for nested repositories stopped at a limit
/// (FENCE-PROTECT-15, FENCE-PROTECT-14): the person decides. A hook is a program of the
/// repository, and the programs it runs (a test suite, a linter, a script of the tree, a
/// hook manager's commands) are files the jail can write.
pub fn hook_notes(workspaces: &[PathBuf], home: Option<&Path>) -> Vec<String> {
    let mut notes = Vec::new();
    for w in workspaces {
        let (nested, complete) = nested_repositories(w);
        for tree in std::iter::once(w.clone()).chain(nested.iter().map(|n| w.join(n))) {
            let hooks = installed_hooks(&tree, home);
            if !hooks.is_empty() {
                notes.push(format!(
                    "hooks: git at {} runs {} on the host, which may run files this jail can write (review the changes before the next commit there, or commit with --no-verify)",
                    tree.display(),
                    hooks.join(", ")
                ));
            }
        }
        if !complete {
            notes.push(format!(
                "nested repositories: the search below {} stopped at {NESTED_DEPTH} levels or {NESTED_MAX_DIRS} directories (a repository deeper down keeps a .git the jail can write)",
                w.display()
            ));
        }
    }
    notes
}

/// The hooks installed for the work tree at `tree`: executable files, not `.sample`, of
/// its git directory's `hooks/` and of every `core.hooksPath`.
fn installed_hooks(tree: &Path, home: Option<&Path>) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let dot_git = tree.join(".git");
    let mut dirs = Vec::new();
    match std::fs::symlink_metadata(&dot_git) {
        Ok(m) if m.is_dir() => dirs.push(dot_git.join("hooks")),
        Ok(m) if m.is_file() => {
            if let Some(g) = gitfile_target(&dot_git) {
                if let Ok(text) = std::fs::read_to_string(g.join("commondir")) {
                    dirs.push(absolute_from(&g, text.trim_end_matches(['\n', '\r'])).join("hooks"));
                }
                dirs.push(g.join("hooks"));
            }
        }
        _ => return Vec::new(),
    }
    let mut hooks_paths: Vec<PathBuf> = git_targets(tree, home)
        .into_iter()
        .filter(|(_, file)| !file)
        .map(|(t, _)| t)
        .collect();
    dirs.append(&mut hooks_paths);
    let mut names = Vec::new();
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".sample") || !GIT_HOOKS.contains(&name.as_str()) {
                continue;
            }
            let exec = std::fs::metadata(e.path())
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false);
            if exec && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names.sort();
    names
}

/// The hooks git runs (githooks(5)).
const GIT_HOOKS: [&str; 28] = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// Whether the placeholder for the missing protected path `p` is an empty file rather than
/// an empty directory (FENCE-PROTECT-12): only a configuration file git reads (an included
/// one), which git must still be able to read. Every other placeholder (`.git`, `HEAD`,
/// `.gatehouse`, a hooks directory, a hook manager's file) is an empty directory, which
/// the person's git on the host passes over while the jail runs: its discovery takes an
/// empty `.git` directory for no repository and goes on upward, a directory `HEAD` fails
/// its check of a bare repository, and `git status` and `git add` never list an empty
/// directory. An empty `.git` *file* made the host's `git status` fail ("invalid gitfile
/// format") and an empty `HEAD` or `.gatehouse` file showed as untracked.
pub fn placeholder_is_file(p: &Protected) -> bool {
    p.file
}

/// Whether the physical path `path` lies at or beneath a protected path of `list`.
pub fn covers(list: &[Protected], path: &Path) -> bool {
    let path = normalize(path);
    list.iter().any(|p| path.starts_with(p.root.join(&p.rel)))
}

/// The absolute places git reads configuration, hooks or a repository location from for
/// a working tree at `root`, beyond `root/.git` itself; `true` marks a file.
pub fn git_targets(root: &Path, home: Option<&Path>) -> Vec<(PathBuf, bool)> {
    let mut targets = Vec::new();
    let dot_git = root.join(".git");
    let git_dir = match std::fs::symlink_metadata(&dot_git) {
        Ok(m) if m.is_file() => match gitfile_target(&dot_git) {
            Some(g) => {
                targets.push((g.clone(), false));
                Some(g)
            }
            None => None,
        },
        Ok(m) if m.is_dir() => Some(dot_git.clone()),
        _ => None,
    };
    let mut configs: Vec<PathBuf> = Vec::new();
    if let Some(g) = &git_dir {
        if let Ok(text) = std::fs::read_to_string(g.join("commondir")) {
            let c = absolute_from(g, text.trim_end_matches(['\n', '\r']));
            targets.push((c.clone(), false));
            configs.push(c.join("config"));
        }
        configs.push(g.join("config"));
        configs.push(g.join("config.worktree"));
    }
    if let Some(h) = home {
        configs.push(h.join(".gitconfig"));
        match std::env::var_os("XDG_CONFIG_HOME") {
            Some(x) if !x.is_empty() => configs.push(PathBuf::from(x).join("git/config")),
            _ => configs.push(h.join(".config/git/config")),
        }
    }
    configs.push(PathBuf::from("/etc/gitconfig"));
    let mut seen = Vec::new();
    for file in configs {
        read_config(&file, root, home, 0, &mut seen, &mut targets);
    }
    targets.sort();
    targets.dedup();
    targets
}

/// The directory a `.git` file names (`gitdir: PATH`, relative to the file's directory).
fn gitfile_target(file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().next()?;
    let rest = line.strip_prefix("gitdir:")?.trim();
    if rest.is_empty() {
        return None;
    }
    Some(absolute_from(file.parent()?, rest))
}

/// Read one configuration file: record the `core.hooksPath` values and follow includes.
fn read_config(
    file: &Path,
    worktree: &Path,
    home: Option<&Path>,
    depth: usize,
    seen: &mut Vec<PathBuf>,
    targets: &mut Vec<(PathBuf, bool)>,
) {
    if depth > MAX_INCLUDE_DEPTH || seen.iter().any(|s| s == file) {
        return;
    }
    seen.push(file.to_path_buf());
    let Ok(text) = std::fs::read_to_string(file) else {
        return;
    };
    let dir = file.parent().unwrap_or(Path::new("/"));
    for (section, key, value) in entries(&text) {
        let section = section.to_ascii_lowercase();
        let key = key.to_ascii_lowercase();
        if section == "core" && key == "hookspath" {
            targets.push((expand(&value, worktree, home), false));
        } else if (section == "include" || section.starts_with("includeif")) && key == "path" {
            let included = expand(&value, dir, home);
            targets.push((included.clone(), true));
            read_config(&included, worktree, home, depth + 1, seen, targets);
        }
    }
}

/// A value of a path-valued key: `~/` is the home, relative is relative to `base`.
fn expand(value: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    if let (Some(rest), Some(h)) = (value.strip_prefix("~/"), home) {
        return normalize(&h.join(rest));
    }
    absolute_from(base, value)
}

fn absolute_from(base: &Path, value: &str) -> PathBuf {
    let p = Path::new(value);
    normalize(&if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    })
}

/// Resolve `..` and `.` lexically, then the symlinks of the longest prefix that exists,
/// so that a target is compared where it lands on disk.
fn normalize(p: &Path) -> PathBuf {
    let mut lexical = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other.as_os_str()),
        }
    }
    let mut existing = lexical.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            let mut out = real;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return lexical,
        }
    }
}

/// The writable root `target` lies strictly beneath, and the path below it.
fn place(target: &Path, writable: &[PathBuf]) -> Option<Protected> {
    writable.iter().find_map(|root| {
        let rel = target.strip_prefix(root).ok()?;
        if rel.as_os_str().is_empty()
            || !rel.components().all(|c| matches!(c, Component::Normal(_)))
        {
            return None;
        }
        Some(Protected {
            root: root.clone(),
            rel: rel.to_path_buf(),
            file: false,
        })
    })
}

/// The entries of a git configuration file: (section with subsection, key, value). Enough
/// of git-config(1)'s syntax for the path-valued keys: sections `[a]`, `[a "b"]` and
/// `[a.b]`, comments, quoted values with escapes, and line continuations.
fn entries(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let mut l = line.trim_start().to_string();
        if l.starts_with('[') {
            let Some(end) = l.find(']') else { continue };
            let head = l[1..end].trim().to_string();
            section = match head.split_once(char::is_whitespace) {
                Some((name, sub)) => format!("{name}.{}", sub.trim().trim_matches('"')),
                None => head,
            };
            l = l[end + 1..].trim_start().to_string();
            if l.is_empty() {
                continue;
            }
        }
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        let (key, raw) = match l.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), v.to_string()),
            None => (l.trim().to_string(), String::from("true")),
        };
        let mut raw = raw;
        while raw.trim_end().ends_with('\\') && !raw.trim_end().ends_with("\\\\") {
            let t = raw.trim_end();
            raw = t[..t.len() - 1].to_string();
            match lines.next() {
                Some(next) => raw.push_str(next),
                None => break,
            }
        }
        out.push((section.clone(), key, value_of(&raw)));
    }
    out
}

/// A value with git's quoting: `"..."` keeps spaces, `\"`, `\\`, `\n`, `\t` escape, `#`
/// and `;` outside quotes start a comment.
fn value_of(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = raw.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('b') => {
                    out.pop();
                }
                Some(o) => out.push(o),
                None => {}
            },
            '#' | ';' if !quoted => break,
            o => out.push(o),
        }
    }
    if quoted {
        out
    } else {
        out.trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_beneath_another_of_its_root_is_dropped_in_one_pass_as_pairwise() {
        let p = |root: &str, rel: &str| Protected {
            root: PathBuf::from(root),
            rel: PathBuf::from(rel),
            file: false,
        };
        let mut all = vec![
            p("/r1", "a"),
            p("/r1", "a/b"),
            p("/r1", "a/b/c"),
            p("/r1", "a.b"),
            p("/r1", "a.b/c"),
            p("/r1", "ab"),
            p("/r1", "b/x"),
            p("/r2", "a/b"),
            p("/r2", "a/c"),
            p("/r2", "a"),
        ];
        all.sort();
        // The pairwise reading the pass replaces.
        let pairwise: Vec<Protected> = all
            .iter()
            .filter(|q| {
                !all.iter()
                    .any(|o| o != *q && o.root == q.root && q.rel.starts_with(&o.rel))
            })
            .cloned()
            .collect();
        let kept = drop_covered(all);
        assert_eq!(kept, pairwise);
        let names: Vec<String> = kept
            .iter()
            .map(|q| q.root.join(&q.rel).display().to_string())
            .collect();
        assert_eq!(names, ["/r1/a", "/r1/a.b", "/r1/ab", "/r1/b/x", "/r2/a"]);
    }

    #[test]
    fn config_syntax() {
        let e = entries(
            "[core]\n\thooksPath = .husky/_ # comment\n[include]\n  path = \"../a b\"\n[includeIf \"gitdir:~/w/\"]\npath=x\n[Core]hooksPath=y\n",
        );
        assert_eq!(
            e,
            vec![
                ("core".into(), "hooksPath".into(), ".husky/_".into()),
                ("include".into(), "path".into(), "../a b".into()),
                ("includeIf.gitdir:~/w/".into(), "path".into(), "x".into()),
                ("Core".into(), "hooksPath".into(), "y".into()),
            ]
        );
    }

    #[test]
    fn git_places_inside_the_root_are_found() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join(".repo/main")).unwrap();
        std::fs::write(root.join(".git"), "gitdir: .repo/main\n").unwrap();
        std::fs::write(
            root.join(".repo/main/config"),
            "[core]\n\thooksPath = .husky/_\n[include]\n\tpath = ../../local.cfg\n",
        )
        .unwrap();
        std::fs::write(root.join(".repo/main/commondir"), "../common\n").unwrap();
        let list = discover(
            std::slice::from_ref(&root),
            std::slice::from_ref(&root),
            None,
        );
        let rels: Vec<&Path> = list.iter().map(|p| p.rel.as_path()).collect();
        for want in [
            ".git",
            "HEAD",
            ".gatehouse",
            ".repo/main",
            ".repo/common",
            ".husky/_",
            "local.cfg",
        ] {
            assert!(rels.contains(&Path::new(want)), "{want} in {rels:?}");
        }
        assert!(covers(&list, &root.join(".repo/main/hooks/pre-commit")));
        assert!(covers(&list, &root.join("sub/../.git/config")));
        assert!(!covers(&list, &root.join("src/a.js")));
        assert!(!covers(&list, &root.join(".gitignore")));
    }

    #[test]
    fn places_outside_every_writable_root_are_left_alone() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap().join("ws");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(
            root.join(".git/config"),
            "[core]\n\thooksPath = /usr/share/hooks\n",
        )
        .unwrap();
        let list = discover(
            std::slice::from_ref(&root),
            std::slice::from_ref(&root),
            None,
        );
        assert_eq!(list.len(), AT_EVERY_ROOT.len());
    }

    #[test]
    fn agent_configuration_is_protected_whether_it_exists_or_not() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        let list = discover(
            std::slice::from_ref(&root),
            std::slice::from_ref(&root),
            None,
        );
        for p in [
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".mcp.json",
            ".codex/config.toml",
            ".gemini/settings.json",
            ".vscode/tasks.json",
            ".devcontainer/devcontainer.json",
            ".github/hooks/h.json",
            ".github/copilot/settings.json",
            ".github/copilot/settings.local.json",
        ] {
            assert!(covers(&list, &root.join(p)), "{p}");
            assert!(reason(&list, &root.join(p)).is_some(), "{p}");
        }
        assert!(reason(&list, &root.join(".claude/x"))
            .unwrap()
            .contains("Claude Code"));
        // The allowed twins: ordinary files beside them.
        for p in [
            "src/a.rs",
            ".github/workflows/ci.yml",
            "CLAUDE.md",
            ".mcp.json.bak",
        ] {
            assert!(!covers(&list, &root.join(p)), "{p}");
            assert!(reason(&list, &root.join(p)).is_none(), "{p}");
        }
    }

    #[test]
    fn hook_manager_files_with_a_hook_installed_and_what_lefthook_names() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(
            root.join("lefthook.yml"),
            "extends:\n  - shared/base.yml\n  - ../outside.yml\nsource_dir: hooks-src\nsource_dir_local: \"local-src\"\n",
        )
        .unwrap();
        let rels =
            |list: &[Protected]| -> Vec<PathBuf> { list.iter().map(|p| p.rel.clone()).collect() };
        let list = discover(
            std::slice::from_ref(&root),
            std::slice::from_ref(&root),
            None,
        );
        let r = rels(&list);
        for want in ["lefthook.yml", "shared/base.yml", "hooks-src", "local-src"] {
            assert!(r.contains(&PathBuf::from(want)), "{want} in {r:?}");
        }
        // No hook installed: a missing spelling is inert, not protected.
        assert!(!r.contains(&PathBuf::from("lefthook-local.yml")));
        assert!(!r.iter().any(|p| p.starts_with("..")));
        // A hook installed: every spelling, existing or not.
        std::fs::write(
            root.join(".git/hooks/pre-commit"),
            "#!/bin/sh\nlefthook run pre-commit\n",
        )
        .unwrap();
        std::fs::set_permissions(
            root.join(".git/hooks/pre-commit"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let r = rels(&discover(
            std::slice::from_ref(&root),
            std::slice::from_ref(&root),
            None,
        ));
        for want in [
            "lefthook-local.yml",
            ".lefthook-local.toml",
            ".pre-commit-config.yaml",
            ".config/lefthook.yml",
        ] {
            assert!(r.contains(&PathBuf::from(want)), "{want} in {r:?}");
        }
        // JSON and TOML spellings of extends.
        let named = |text: &str| {
            std::fs::write(root.join("lefthook.json"), text).unwrap();
            named_by_manager(&root.join("lefthook.json"), &root)
        };
        assert_eq!(
            named("{\"extends\": [\n  \"a.yml\",\n  \"b.yml\"\n]}\n"),
            vec![root.join("a.yml"), root.join("b.yml")]
        );
        assert_eq!(named("extends = [\"c.toml\"]\n"), vec![root.join("c.toml")]);
    }

    #[test]
    fn an_empty_directory_where_a_tool_reads_a_file_is_a_leftover_placeholder() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for d in [".mcp.json", ".vscode", "lefthook-local.yml", "full.json"] {
            std::fs::create_dir(root.join(d)).unwrap();
        }
        std::fs::create_dir(root.join("opencode.json")).unwrap();
        std::fs::write(root.join("opencode.json/x"), "").unwrap();
        std::os::unix::fs::symlink(root.join(".vscode"), root.join(".crush.json")).unwrap();
        assert!(is_leftover_placeholder(root, Path::new(".mcp.json")));
        assert!(is_leftover_placeholder(
            root,
            Path::new("lefthook-local.yml")
        ));
        // The twins: a tool's directory, a non-empty one, a link, a name of no tool.
        assert!(!is_leftover_placeholder(root, Path::new(".vscode")));
        assert!(!is_leftover_placeholder(root, Path::new("opencode.json")));
        assert!(!is_leftover_placeholder(root, Path::new(".crush.json")));
        assert!(!is_leftover_placeholder(root, Path::new("full.json")));
        assert!(!is_leftover_placeholder(root, Path::new("crush.json")));
    }

    /// FENCE-PROTECT-19: a dependency directory deeper than the search makes no line, and a
    /// repository within reach inside one is still found; the person's own tree deeper
    /// than the search still makes the line.
    #[test]
    fn dependency_directories_are_searched_last_and_make_no_line() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for d in [
            "node_modules/pkg/.git/hooks",
            "node_modules/pkg/lib/deep/deeper/deepest",
            "target/debug/build/x/out",
            "src/main",
            "vendor/tool/.git",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let (found, complete) = nested_repositories(root);
        assert_eq!(
            found,
            vec![
                PathBuf::from("node_modules/pkg"),
                PathBuf::from("vendor/tool")
            ]
        );
        assert!(complete, "a limit below a dependency directory is no line");
        assert!(hook_notes(&[root.to_path_buf()], None).is_empty());
        // The twin: the person's own tree deeper than the search.
        std::fs::create_dir_all(root.join("src/a/b/c/d")).unwrap();
        let (_, complete) = nested_repositories(root);
        assert!(!complete);
        let notes = hook_notes(&[root.to_path_buf()], None);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("nested repositories: "), "{notes:?}");
    }

    /// A name protected at every root is not entered: the jail sees it read-only whole
    /// (a repository inside it is no nested repository to protect); its twin, the same
    /// layout under a name that is not protected, is found. `.github` itself is no such
    /// name (only `.github/hooks` is).
    #[test]
    fn the_names_protected_at_every_root_are_not_searched() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for d in [
            ".vscode/sub/.git",
            ".claude/x/.git",
            "tools/sub/.git",
            ".github/sub/.git",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let (found, complete) = nested_repositories(root);
        assert_eq!(
            found,
            vec![PathBuf::from(".github/sub"), PathBuf::from("tools/sub")]
        );
        assert!(complete);
    }

    /// FENCE-PROTECT-20: directories linger, names read as files do not.
    #[test]
    fn directories_linger_and_file_names_do_not() {
        for rel in [
            ".git",
            ".claude",
            ".vscode",
            ".gatehouse",
            ".github",
            ".github/hooks",
        ] {
            assert!(placeholder_lingers(Path::new(rel)), "{rel}");
        }
        for rel in [
            "HEAD",
            ".mcp.json",
            "opencode.json",
            ".pre-commit-config.yaml",
            "lefthook.yml",
            "src",
            ".git/hooks",
        ] {
            assert!(!placeholder_lingers(Path::new(rel)), "{rel}");
        }
    }
}
