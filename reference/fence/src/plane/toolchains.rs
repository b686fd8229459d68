//! The common toolchains, found where their installers put them and given to the jail of
//! `gatehouse exec` the way each needs, with no flag (`spec/execution-plane.md`,
//! FENCE-TOOL-1 to 6): the toolchain read-only, the variables that locate it set, its
//! credentials hidden, and, only when the person allowed fetching (`--fetch`, network mode
//! `registries`), its download cache writable and the package registries' domains allowed.
//!
//! Each toolchain is located by its own variables first, then by its installer's default
//! below the person's home: rustup and cargo (`RUSTUP_HOME`, `CARGO_HOME`, `~/.rustup`,
//! `~/.cargo`), pyenv (`PYENV_ROOT`, `~/.pyenv`), a virtualenv (`VIRTUAL_ENV`), uv
//! (`UV_PYTHON_INSTALL_DIR`, `~/.local/share/uv`, its binary in `~/.local/bin`), nvm
//! (`NVM_DIR`, `~/.nvm`), pnpm (`PNPM_HOME`, `~/.local/share/pnpm`) and go (`GOROOT`,
//! `GOPATH`, `GOMODCACHE`, `~/go`). A toolchain in a system directory (Debian's
//! `/usr/bin/node`, `/usr/lib/go`) is visible already and needs nothing.
//!
//! What is found is added to the merged choices after every layer, as values of their own
//! source ([`Source::Found`]), so `gatehouse info` and the posture show each with the
//! variable that located it; a variable the person passed or set keeps the person's value.
//!
//! Caches that are not the toolchain's own (pip's, npm's, uv's, go's build cache) are not
//! given: the jail's scratch home holds fresh ones, thrown away with it, so nothing a jailed
//! command downloads lands where a later command on the host reads it (FENCE-TOOL-5).
//!
//! May touch: reads the file system to find what exists; creates a missing cache directory
//! of a toolchain found, only when fetching is allowed.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::choices::{Choices, EnvName, NetworkMode, Source, Sourced};

/// The package registries' domains, allowed in the `registries` network mode (`--fetch`),
/// each with the tools that fetch from it (FENCE-TOOL-4).
pub const REGISTRY_DOMAINS: [(&str, &str); 8] = [
    ("crates.io", "cargo"),
    ("index.crates.io", "cargo"),
    ("static.crates.io", "cargo"),
    ("pypi.org", "pip, uv"),
    ("files.pythonhosted.org", "pip, uv"),
    ("registry.npmjs.org", "npm, pnpm"),
    ("proxy.golang.org", "go"),
    ("sum.golang.org", "go"),
];

/// One toolchain found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toolchain {
    /// Its name (`rustup`, `pyenv`, ...).
    pub name: &'static str,
    /// Paths shown read-only, each with what located it (`CARGO_HOME`, `~/.cargo`).
    pub read_only: Vec<(PathBuf, String)>,
    /// Its download caches: writable when fetching is allowed, else read-only (where a
    /// read-only path above does not hold them already).
    pub caches: Vec<(PathBuf, String)>,
    /// Files below a read-only path that hold the person's credentials: hidden.
    pub hidden: Vec<PathBuf>,
    /// Variables set in the jail (the jail's `HOME` is its scratch home, so a toolchain
    /// found by its default below the real home is named by its variable).
    pub set_env: Vec<(String, String)>,
    /// Variables set in the jail only when the session's first workspace holds no `.git`
    /// of its own: there the jail's placeholder `.git` (FENCE-PROTECT-12) is an empty
    /// directory, which a tool that stamps its build with the repository's state (`go
    /// build`) would take for a broken repository.
    pub unless_repo: Vec<(String, String)>,
}

/// Where the variables and the home point: what [`discover`] reads (tests give their
/// own).
pub trait Lookup {
    /// The variable `name`, when set, not empty.
    fn var(&self, name: &str) -> Option<OsString>;
}

impl<F: Fn(&str) -> Option<OsString>> Lookup for F {
    fn var(&self, name: &str) -> Option<OsString> {
        self(name).filter(|v| !v.is_empty())
    }
}

/// An absolute path from the variable `name`, else `default` below the home.
fn located(env: &dyn Lookup, name: &str, default: Option<&str>) -> Option<(PathBuf, String)> {
    if let Some(v) = env.var(name).map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Some((v, name.to_string()));
    }
    let home = env.var("HOME").map(PathBuf::from)?;
    let d = default?;
    Some((home.join(d), format!("~/{d}")))
}

fn dir(p: Option<(PathBuf, String)>) -> Option<(PathBuf, String)> {
    p.filter(|(p, _)| p.is_dir())
}

fn text(p: &Path) -> String {
    p.display().to_string()
}

/// Every toolchain found in the environment `env` answers.
pub fn discover(env: &dyn Lookup) -> Vec<Toolchain> {
    let mut out = Vec::new();
    out.extend(rust(env));
    out.extend(python(env));
    out.extend(node(env));
    out.extend(go(env));
    let mut tls = Toolchain {
        name: "tls",
        ..Toolchain::default()
    };
    pass(env, &mut tls, &TRUST_VARIABLES);
    out.push(tls);
    out.retain(|t| {
        !t.read_only.is_empty()
            || !t.caches.is_empty()
            || !t.set_env.is_empty()
            || !t.unless_repo.is_empty()
    });
    out
}

/// The variables that point the package managers at the certificates they trust (a
/// host behind a TLS-inspecting proxy names its authority so): passed as they are, for
/// every toolchain fetches through them (FENCE-TOOL-2). Paths, never secrets.
pub const TRUST_VARIABLES: [&str; 8] = [
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "PIP_CERT",
    "NODE_EXTRA_CA_CERTS",
    "CURL_CA_BUNDLE",
    "CARGO_HTTP_CAINFO",
    "GIT_SSL_CAINFO",
];

fn pass(env: &dyn Lookup, t: &mut Toolchain, names: &[&str]) {
    for n in names {
        if let Some(v) = env.var(n).and_then(|v| v.into_string().ok()) {
            t.set_env.push((n.to_string(), v));
        }
    }
}

fn rust(env: &dyn Lookup) -> Vec<Toolchain> {
    let mut t = Toolchain {
        name: "rustup",
        ..Toolchain::default()
    };
    if let Some((cargo, how)) = dir(located(env, "CARGO_HOME", Some(".cargo"))) {
        for f in ["credentials", "credentials.toml"] {
            if cargo.join(f).exists() {
                t.hidden.push(cargo.join(f));
            }
        }
        for c in ["registry", "git"] {
            t.caches.push((cargo.join(c), format!("{how}/{c}")));
        }
        t.set_env.push(("CARGO_HOME".into(), text(&cargo)));
        t.read_only.push((cargo, how));
    }
    if let Some((rustup, how)) = dir(located(env, "RUSTUP_HOME", Some(".rustup"))) {
        t.set_env.push(("RUSTUP_HOME".into(), text(&rustup)));
        t.read_only.push((rustup, how));
        pass(env, &mut t, &["RUSTUP_TOOLCHAIN"]);
    }
    vec![t]
}

fn python(env: &dyn Lookup) -> Vec<Toolchain> {
    let mut out = Vec::new();
    if let Some((root, how)) = dir(located(env, "PYENV_ROOT", Some(".pyenv"))) {
        let mut t = Toolchain {
            name: "pyenv",
            ..Toolchain::default()
        };
        t.set_env.push(("PYENV_ROOT".into(), text(&root)));
        t.read_only.push((root, how));
        pass(env, &mut t, &["PYENV_VERSION"]);
        out.push(t);
    }
    if let Some((venv, how)) = dir(located(env, "VIRTUAL_ENV", None)) {
        let mut t = Toolchain {
            name: "venv",
            ..Toolchain::default()
        };
        t.set_env.push(("VIRTUAL_ENV".into(), text(&venv)));
        t.read_only.push((venv, how));
        out.push(t);
    }
    let mut uv = Toolchain {
        name: "uv",
        ..Toolchain::default()
    };
    let data = env
        .var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let pythons = match (env.var("UV_PYTHON_INSTALL_DIR"), &data) {
        (Some(v), _) => Some((PathBuf::from(v), "UV_PYTHON_INSTALL_DIR".to_string())),
        (None, Some(d)) => Some((d.join("uv/python"), "XDG_DATA_HOME/uv/python".into())),
        (None, None) => located(env, "", Some(".local/share/uv/python")),
    };
    if let Some((p, how)) = dir(pythons.filter(|(p, _)| p.is_absolute())) {
        uv.set_env.push(("UV_PYTHON_INSTALL_DIR".into(), text(&p)));
        uv.read_only.push((p, how));
    }
    // The installer's place for the binary: `$XDG_BIN_HOME`, else `~/.local/bin`.
    let bin = match env.var("XDG_BIN_HOME") {
        Some(b) => Some((PathBuf::from(b), "XDG_BIN_HOME".to_string())),
        None => located(env, "", Some(".local/bin")),
    };
    if let Some((b, how)) = dir(bin.filter(|(p, _)| p.is_absolute())) {
        if b.join("uv").is_file() {
            uv.read_only.push((b, how));
        }
    }
    out.push(uv);
    out
}

fn node(env: &dyn Lookup) -> Vec<Toolchain> {
    let mut out = Vec::new();
    if let Some((nvm, how)) = dir(located(env, "NVM_DIR", Some(".nvm"))) {
        let mut t = Toolchain {
            name: "nvm",
            ..Toolchain::default()
        };
        t.set_env.push(("NVM_DIR".into(), text(&nvm)));
        t.read_only.push((nvm, how));
        out.push(t);
    }
    let pnpm = match (env.var("PNPM_HOME"), env.var("XDG_DATA_HOME")) {
        (Some(v), _) => Some((PathBuf::from(v), "PNPM_HOME".to_string())),
        (None, Some(d)) => Some((PathBuf::from(d).join("pnpm"), "XDG_DATA_HOME/pnpm".into())),
        (None, None) => located(env, "", Some(".local/share/pnpm")),
    };
    if let Some((home, how)) = dir(pnpm.filter(|(p, _)| p.is_absolute())) {
        let mut t = Toolchain {
            name: "pnpm",
            ..Toolchain::default()
        };
        t.caches.push((home.join("store"), format!("{how}/store")));
        t.set_env.push(("PNPM_HOME".into(), text(&home)));
        t.read_only.push((home, how));
        out.push(t);
    }
    out
}

fn go(env: &dyn Lookup) -> Vec<Toolchain> {
    let mut t = Toolchain {
        name: "go",
        ..Toolchain::default()
    };
    if let Some((root, how)) = dir(located(env, "GOROOT", None)) {
        t.set_env.push(("GOROOT".into(), text(&root)));
        t.read_only.push((root, how));
    }
    let gopath = dir(located(env, "GOPATH", Some("go")));
    if let Some((path, how)) = &gopath {
        t.set_env.push(("GOPATH".into(), text(path)));
        t.read_only.push((path.clone(), how.clone()));
    }
    let modcache = match (env.var("GOMODCACHE"), &gopath) {
        (Some(m), _) => Some((PathBuf::from(m), "GOMODCACHE".to_string())),
        (None, Some((p, how))) => Some((p.join("pkg/mod"), format!("{how}/pkg/mod"))),
        (None, None) => None,
    };
    if let Some((m, how)) = modcache.filter(|(p, _)| p.is_absolute()) {
        t.set_env.push(("GOMODCACHE".into(), text(&m)));
        t.caches.push((m, how));
    }
    let on_path = env.var("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| d.is_absolute() && d.join("go").is_file())
    });
    if on_path || !t.read_only.is_empty() {
        t.unless_repo
            .push(("GOFLAGS".into(), "-buildvcs=false".into()));
    }
    vec![t]
}

/// Whether `a` and `b` are one path or one holds the other.
fn overlap(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// Add what `found` gives to the merged choices `s` of a session rooted at `workspaces`:
/// read-only paths, hidden credentials, variables (where the person did not pass or set
/// the name), and in the `registries` mode the caches writable (created when missing) and
/// the registries' domains allowed. A path already visible (in a system directory, a
/// workspace or another path given) or holding a workspace is left out; a cache outside
/// every read-only path is shown read-only when fetching is not allowed.
pub fn apply(s: &mut Choices, found: &[Toolchain], workspaces: &[PathBuf], system: &[PathBuf]) {
    let fetch = s.network.value == NetworkMode::Registries;
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let roots: Vec<PathBuf> = workspaces.iter().map(|w| real(w)).collect();
    let taken = |s: &Choices, p: &Path| {
        roots.iter().any(|w| overlap(p, w))
            || system.iter().any(|d| p.starts_with(d))
            || s.read_only
                .iter()
                .chain(s.writable.iter())
                .any(|v| overlap(&real(&v.value), p))
    };
    let src = |t: &Toolchain, how: &str| Source::Found(format!("{}: {how}", t.name));
    for t in found {
        for (p, how) in &t.read_only {
            let p = real(p);
            if !taken(s, &p) {
                s.read_only.push(Sourced::new(p, src(t, how)));
            }
        }
        for h in &t.hidden {
            if !s.hidden.iter().any(|v| v.value == *h) {
                s.hidden
                    .push(Sourced::new(h.clone(), src(t, "credentials, hidden")));
            }
        }
        for (c, how) in &t.caches {
            if fetch {
                let inside_ro = s.read_only.iter().any(|v| c.starts_with(&v.value));
                let made = !inside_ro || c.is_dir() || std::fs::create_dir_all(c).is_ok();
                let c = real(c);
                let clash = roots.iter().any(|w| overlap(&c, w))
                    || s.writable.iter().any(|v| overlap(&real(&v.value), &c));
                if made && c.is_dir() && !clash {
                    s.writable.push(Sourced::new(c, src(t, how)));
                }
            } else if c.is_dir() && !taken(s, &real(c)) {
                s.read_only.push(Sourced::new(real(c), src(t, how)));
            }
        }
        let repo = workspaces
            .first()
            .is_some_and(|w| w.join(".git").symlink_metadata().is_ok());
        let unless = if repo { &[][..] } else { &t.unless_repo[..] };
        for (k, v) in t.set_env.iter().chain(unless) {
            let chosen = s.pass_env.iter().any(|n| n.value.as_str() == k)
                || s.pass_secrets.iter().any(|n| n.value.as_str() == k)
                || s.set_env.iter().any(|n| n.value.0.as_str() == k);
            let Ok(name) = EnvName::new(k) else { continue };
            let Ok(pair) = name.with_value(v.clone()) else {
                continue;
            };
            if !chosen {
                s.set_env.push(Sourced::new(pair, src(t, k)));
            }
        }
    }
    if fetch {
        for (d, tools) in REGISTRY_DOMAINS {
            if !s.allow_domains.iter().any(|v| v.value == d) {
                s.allow_domains.push(Sourced::new(
                    d.to_string(),
                    Source::Found(format!("the registry of {tools} (network registries)")),
                ));
            }
        }
    }
}

/// The lines `gatehouse info` adds: the registries `--fetch` allows.
pub fn report() -> Vec<String> {
    REGISTRY_DOMAINS
        .iter()
        .map(|(d, tools)| format!("registry {d} ({tools}): allowed with --fetch"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(vars: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> {
        let m: BTreeMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
            .collect();
        move |k: &str| m.get(k).cloned()
    }

    fn names(found: &[Toolchain]) -> Vec<&str> {
        found.iter().map(|t| t.name).collect()
    }

    /// FENCE-TOOL-1: the variables first, then the installers' defaults below the home.
    #[test]
    fn each_toolchain_is_found_by_its_variable_then_its_default() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        let elsewhere = d.path().join("rustup-elsewhere");
        for p in [
            ".cargo/registry",
            ".pyenv/versions",
            ".nvm/versions/node/v20.0.0/bin",
            "go/pkg/mod",
            ".local/share/pnpm",
        ] {
            std::fs::create_dir_all(home.join(p)).unwrap();
        }
        std::fs::create_dir_all(home.join(".rustup")).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(home.join(".cargo/credentials.toml"), "token").unwrap();
        let found = discover(&env(&[("HOME", &home), ("RUSTUP_HOME", &elsewhere)]));
        assert_eq!(names(&found), ["rustup", "pyenv", "nvm", "pnpm", "go"]);
        let rust = &found[0];
        assert_eq!(
            rust.read_only,
            [
                (home.join(".cargo"), "~/.cargo".to_string()),
                (elsewhere.clone(), "RUSTUP_HOME".to_string())
            ]
        );
        assert_eq!(rust.hidden, [home.join(".cargo/credentials.toml")]);
        assert!(rust
            .set_env
            .contains(&("RUSTUP_HOME".into(), elsewhere.display().to_string())));
        let go = &found[4];
        assert_eq!(go.caches[0].0, home.join("go/pkg/mod"));
    }

    /// FENCE-TOOL-3 and 4: read-only and no domain unless fetching; with it the caches
    /// writable inside their read-only toolchain, and the registries allowed.
    #[test]
    fn caches_are_writable_and_registries_allowed_only_when_fetching() {
        let d = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(d.path()).unwrap().join("home");
        std::fs::create_dir_all(home.join(".cargo/bin")).unwrap();
        std::fs::create_dir_all(home.join("w")).unwrap();
        let found = discover(&env(&[("HOME", &home)]));
        let ws = [home.join("w")];
        let mut off = Choices::default();
        apply(&mut off, &found, &ws, &[]);
        assert_eq!(off.read_only.len(), 1);
        assert!(off.writable.is_empty() && off.allow_domains.is_empty());
        assert_eq!(
            off.read_only[0].source.to_string(),
            "found: rustup: ~/.cargo"
        );
        let mut on = Choices {
            network: Sourced::new(NetworkMode::Registries, Source::Flag("fetch")),
            ..Choices::default()
        };
        apply(&mut on, &found, &ws, &[]);
        let rw: Vec<&Path> = on.writable.iter().map(|v| v.value.as_path()).collect();
        assert_eq!(rw, [home.join(".cargo/registry"), home.join(".cargo/git")]);
        assert!(on
            .allow_domains
            .iter()
            .any(|v| v.value == "index.crates.io"));
    }

    /// A toolchain in a workspace or a system directory needs nothing; a variable the
    /// person set keeps the person's value.
    #[test]
    fn what_is_visible_already_and_what_the_person_chose_stay() {
        let d = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(ws.join(".venv")).unwrap();
        let found = discover(&env(&[("VIRTUAL_ENV", &ws.join(".venv"))]));
        let mut s = Choices {
            set_env: vec![Sourced::new(
                EnvName::new("VIRTUAL_ENV")
                    .unwrap()
                    .with_value("/mine".into())
                    .unwrap(),
                Source::Flag("set-env"),
            )],
            ..Choices::default()
        };
        apply(&mut s, &found, std::slice::from_ref(&ws), &[]);
        assert!(s.read_only.is_empty());
        assert_eq!(s.set_env.len(), 1);
        assert_eq!(s.set_env[0].value.1, "/mine");
        let found = discover(&env(&[("GOROOT", Path::new("/usr"))]));
        let mut s = Choices::default();
        apply(&mut s, &found, &[ws], &[PathBuf::from("/usr")]);
        assert!(s.read_only.is_empty());
    }
}
