//! The environment a tool sees, decided at spawn by an allow-list: `PATH`, `LANG`,
//! `LANGUAGE`, `LC_*`, `TERM`, `COLORTERM`, `NO_COLOR`, `TZ`, `USER`, `LOGNAME` pass, except
//! a name on the never-passes list (FENCE-ENV-8: `LC_API_KEY` is a secret however it is
//! prefixed); `HOME` and `TMPDIR` are the session's scratch home and scratch
//! temporary directory inside the fence; nothing else of the agent's environment ever
//! enters (provider keys, tokens, sockets of agents).
//!
//! The plane-wide opt-out hands tools the full environment (`HOME` and `TMPDIR` still point
//! into the scratch directory); the posture reports it so it is never silent.

use std::ffi::OsString;
use std::path::Path;

/// The port of the allow-list proxy on the jail's own `127.0.0.1` (FENCE-NET-7).
pub const PROXY_PORT: u16 = 3128;

/// The variables that point programs at the proxy, in both spellings programs read.
pub const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];

/// The `allow-list` mode's environment (FENCE-NET-7): every proxy variable points at the
/// proxy, whatever the person passed or set, and `NO_PROXY` (either spelling) never
/// passes, so no host is reached around the proxy's judgement. Sorted afterwards.
pub fn point_at_proxy(env: &mut Vec<(String, String)>) {
    let url = format!("http://127.0.0.1:{PROXY_PORT}");
    env.retain(|(k, _)| {
        !PROXY_VARIABLES.contains(&k.as_str()) && !k.eq_ignore_ascii_case("no_proxy")
    });
    env.extend(PROXY_VARIABLES.iter().map(|n| (n.to_string(), url.clone())));
    env.sort();
}

/// Variables passed through by name.
pub const PASSED: [&str; 9] = [
    "PATH",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "USER",
    "LOGNAME",
];
/// Prefixes passed through.
pub const PASSED_PREFIXES: [&str; 1] = ["LC_"];
/// `PATH` when the agent has none.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Parts of a name that mark it secret, compared without regard to case.
pub const NEVER_PARTS: [&str; 8] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASS",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "PRIVATE",
];
/// Prefixes of names that never pass, compared without regard to case.
pub const NEVER_PREFIXES: [&str; 19] = [
    "AWS_",
    "AZURE_",
    "GOOGLE_",
    "GCP_",
    "GCLOUD_",
    "ANTHROPIC_",
    "OPENAI_",
    "GEMINI_",
    "HF_",
    "GITHUB_",
    "GH_",
    "GITLAB_",
    "NPM_",
    "DOCKER_",
    "KUBE",
    "GATEHOUSE_",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
];
/// Whole names that never pass (credential services of the host).
pub const NEVER_NAMES: [&str; 2] = ["XDG_RUNTIME_DIR", "KRB5CCNAME"];

/// Whether `name` is on the never-passes list of the spec's environment section.
pub fn never_passes(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    NEVER_PARTS.iter().any(|p| upper.contains(p))
        || NEVER_PREFIXES.iter().any(|p| upper.starts_with(p))
        || NEVER_NAMES.contains(&upper.as_str())
}

/// Whether `name` passes the allow-list: listed (or `LC_*`) and not a secret's name.
pub fn passes(name: &str) -> bool {
    (PASSED.contains(&name) || PASSED_PREFIXES.iter().any(|p| name.starts_with(p)))
        && !never_passes(name)
}

/// The environment of a jailed command.
///
/// - `scrubbing`: apply the allow-list (false: the plane-wide opt-out, everything passes);
/// - `home`: the scratch home, always `HOME`;
/// - `tmpdir`: `TMPDIR`, the session's scratch temporary directory ([`Policy::tmpdir`]);
///   the plane passes it for every backend, a jail with a private `/tmp` included. `None`
///   leaves `TMPDIR` unset (the agent's own value never passes either way).
///
/// [`Policy::tmpdir`]: crate::fence::Policy::tmpdir
///
/// Names or values that are not UTF-8 are dropped (the plan travels as JSON).
pub fn jail_env<I>(
    parent: I,
    home: &Path,
    tmpdir: Option<&Path>,
    scrubbing: bool,
) -> Vec<(String, String)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut env: Vec<(String, String)> = parent
        .into_iter()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| k != "HOME" && k != "TMPDIR" && (!scrubbing || passes(k)))
        .collect();
    env.sort();
    env.dedup_by(|a, b| a.0 == b.0);
    if !env.iter().any(|(k, _)| k == "PATH") {
        env.push(("PATH".into(), DEFAULT_PATH.into()));
    }
    env.push(("HOME".into(), home.display().to_string()));
    if let Some(t) = tmpdir {
        env.push(("TMPDIR".into(), t.display().to_string()));
    }
    env.sort();
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> Vec<(OsString, OsString)> {
        [
            ("PATH", "/usr/bin"),
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "C"),
            ("TERM", "xterm"),
            ("TZ", "UTC"),
            ("HOME", "/root"),
            ("ANTHROPIC_API_KEY", "sk-secret"),
            ("GITHUB_TOKEN", "ghp_secret"),
            ("SSH_AUTH_SOCK", "/tmp/agent.sock"),
            ("LD_PRELOAD", "/evil.so"),
            ("LC_API_KEY", "sk-lc"),
            ("LC_MY_TOKEN", "tok"),
            ("lc_auth", "x"),
            ("USER", "person"),
            ("LOGNAME", "person"),
        ]
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
    }

    #[test]
    fn only_the_allow_list_passes_and_home_is_scratch() {
        let env = jail_env(parent(), Path::new("/s/home"), None, true);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "TERM", "TZ", "USER"]
        );
        assert!(env.contains(&("HOME".into(), "/s/home".into())));
    }

    #[test]
    fn opt_out_passes_everything_but_home() {
        let env = jail_env(
            parent(),
            Path::new("/s/home"),
            Some(Path::new("/s/tmp")),
            false,
        );
        assert!(env.iter().any(|(k, _)| k == "ANTHROPIC_API_KEY"));
        assert!(env.contains(&("HOME".into(), "/s/home".into())));
        assert!(env.contains(&("TMPDIR".into(), "/s/tmp".into())));
    }

    #[test]
    fn missing_path_gets_a_default() {
        let env = jail_env(Vec::new(), Path::new("/h"), None, true);
        assert!(env.contains(&("PATH".into(), DEFAULT_PATH.into())));
    }

    /// The one rule both the scrub and `--pass-env` apply (FENCE-ENV-8, FENCE-ENV-9):
    /// respelled in case, prefixed or as a part of a longer name.
    #[rstest::rstest]
    #[case("npm_token")]
    #[case("LC_API_KEY")]
    #[case("MY_PASSWORD")]
    #[case("AWS_REGION")]
    #[case("SSH_AUTH_SOCK")]
    #[case("xdg_runtime_dir")]
    fn respelled_secret_names_never_pass(#[case] name: &str) {
        assert!(never_passes(name), "{name}");
        assert!(!passes(name), "{name}");
    }
}
