//! The domain allow-list of the `allow-list` network mode: which host names the proxy
//! connects to. Pure data and string rules, no I/O: a name is matched before anything
//! resolves it, so a refused name never reaches a resolver.
//!
//! An entry is a host name (`example.org`, matching that name only), a wildcard
//! (`*.example.org`, matching every name below it but not `example.org` itself), or an IP
//! address literal (matching that address only). Matching is on whole labels, case
//! insensitive, with one trailing dot ignored: `evil-example.org` and
//! `example.org.evil.net` never match `example.org`.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

/// One allow-list entry, validated.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DomainPattern {
    /// Exactly this name (lower case, no trailing dot).
    Exact(String),
    /// Every name strictly below this one (`*.example.org` holds `example.org`).
    Below(String),
    /// Exactly this address.
    Ip(IpAddr),
}

/// Why an allow-list entry or a requested host name is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// An allow-list entry that is not a name, a `*.` wildcard or an address.
    #[error("`{entry}` is not a domain allow-list entry: {reason}")]
    BadEntry {
        /// The entry as given.
        entry: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A requested host that is neither a host name nor an address literal.
    #[error("`{host}` is not a host name: {reason}")]
    BadHost {
        /// The host as requested.
        host: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// A requested host, normalized: a lower-case DNS name or an address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A DNS name (lower case, no trailing dot).
    Name(String),
    /// An address literal (`192.0.2.1`, `[2001:db8::1]`).
    Ip(IpAddr),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(IpAddr::V6(a)) => write!(f, "[{a}]"),
            Host::Ip(a) => write!(f, "{a}"),
        }
    }
}

/// A DNS name of at most 253 bytes, labels of 1..=63 bytes of `a-z`, `0-9`, `-` and `_`,
/// never starting or ending with `-`, and a last label that is not all digits (so no
/// name can be read as a numeric IPv4 spelling such as `127.1` or `0x7f.1` by a
/// resolver). Lower case, one trailing dot removed.
fn dns_name(raw: &str) -> Result<String, &'static str> {
    let s = raw.strip_suffix('.').unwrap_or(raw).to_ascii_lowercase();
    if s.is_empty() {
        return Err("empty");
    }
    if s.len() > 253 {
        return Err("longer than 253 bytes");
    }
    let labels: Vec<&str> = s.split('.').collect();
    for l in &labels {
        if l.is_empty() {
            return Err("an empty label");
        }
        if l.len() > 63 {
            return Err("a label longer than 63 bytes");
        }
        if !l
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        {
            return Err("a character outside a-z, 0-9, `-` and `_`");
        }
        if l.starts_with('-') || l.ends_with('-') {
            return Err("a label starting or ending with `-`");
        }
    }
    // `split` yields at least one label, and `s` is not empty.
    let Some(last) = labels.last() else {
        return Err("empty");
    };
    if last.bytes().all(|b| b.is_ascii_digit()) || is_hex_number(last) {
        return Err("a numeric last label (an address spelled as a name)");
    }
    Ok(s)
}

fn is_hex_number(label: &str) -> bool {
    label
        .strip_prefix("0x")
        .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// An address literal in its one canonical spelling: dotted-quad IPv4, or IPv6 (in
/// brackets or not). Respellings (`127.1`, `2130706433`, `0177.0.0.1`) are not literals.
fn ip_literal(raw: &str) -> Option<IpAddr> {
    if let Some(inner) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return inner.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let ip: IpAddr = raw.parse().ok()?;
    // Rust's parser accepts only the canonical dotted quad (no octal, no short forms).
    Some(ip)
}

impl Host {
    /// Normalize a requested host (the part of an authority before the port).
    pub fn parse(raw: &str) -> Result<Host, NameError> {
        if let Some(ip) = ip_literal(raw) {
            return Ok(Host::Ip(ip));
        }
        if raw.starts_with('[') {
            return Err(NameError::BadHost {
                host: raw.to_string(),
                reason: "not an IPv6 address in brackets",
            });
        }
        dns_name(raw)
            .map(Host::Name)
            .map_err(|reason| NameError::BadHost {
                host: raw.to_string(),
                reason,
            })
    }
}

impl DomainPattern {
    /// Parse one allow-list entry.
    pub fn parse(entry: &str) -> Result<DomainPattern, NameError> {
        let bad = |reason| NameError::BadEntry {
            entry: entry.to_string(),
            reason,
        };
        if entry.contains("://") || entry.contains('/') {
            return Err(bad("a domain, not a URL (no scheme, no path)"));
        }
        if let Some(ip) = ip_literal(entry) {
            return Ok(DomainPattern::Ip(ip));
        }
        if let Some(rest) = entry.strip_prefix("*.") {
            if rest.contains('*') {
                return Err(bad("`*` only as the whole first label"));
            }
            let name = dns_name(rest).map_err(bad)?;
            if !name.contains('.') {
                return Err(bad("a wildcard needs at least two labels after `*.`"));
            }
            return Ok(DomainPattern::Below(name));
        }
        if entry.contains('*') {
            return Err(bad("`*` only as the whole first label (`*.example.org`)"));
        }
        if entry.contains(':') {
            return Err(bad("no port: an allowed name is allowed on every port"));
        }
        dns_name(entry).map(DomainPattern::Exact).map_err(bad)
    }

    /// Whether this entry admits `host`.
    pub fn admits(&self, host: &Host) -> bool {
        match (self, host) {
            (DomainPattern::Exact(p), Host::Name(n)) => p == n,
            (DomainPattern::Below(p), Host::Name(n)) => n
                .strip_suffix(p.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (DomainPattern::Ip(p), Host::Ip(a)) => p == a,
            _ => false,
        }
    }
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DomainPattern::Exact(n) => f.write_str(n),
            DomainPattern::Below(n) => write!(f, "*.{n}"),
            DomainPattern::Ip(a) => write!(f, "{a}"),
        }
    }
}

/// The allow-list: the names the proxy may connect to, on any port.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<DomainPattern>,
}

impl AllowList {
    /// Parse every entry; the first bad one is the error.
    pub fn parse<I, S>(entries: I) -> Result<AllowList, NameError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list: Vec<DomainPattern> = entries
            .into_iter()
            .map(|e| DomainPattern::parse(e.as_ref()))
            .collect::<Result<_, _>>()?;
        list.sort();
        list.dedup();
        Ok(AllowList { entries: list })
    }

    /// The entries, sorted.
    pub fn entries(&self) -> &[DomainPattern] {
        &self.entries
    }

    /// The entry that admits `host`, if any.
    pub fn admits(&self, host: &Host) -> Option<&DomainPattern> {
        self.entries.iter().find(|p| p.admits(host))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn list() -> AllowList {
        AllowList::parse(["registry.npmjs.org", "*.pythonhosted.org", "192.0.2.7"]).unwrap()
    }

    #[rstest]
    #[case("registry.npmjs.org", true)]
    #[case("REGISTRY.NPMJS.ORG", true)]
    #[case("registry.npmjs.org.", true)]
    #[case("files.pythonhosted.org", true)]
    #[case("a.b.pythonhosted.org", true)]
    #[case("192.0.2.7", true)]
    #[case("pythonhosted.org", false)]
    #[case("evilpythonhosted.org", false)]
    #[case("npmjs.org", false)]
    #[case("x.registry.npmjs.org", false)]
    #[case("registry.npmjs.org.evil.net", false)]
    #[case("evil-registry.npmjs.org", false)]
    #[case("192.0.2.8", false)]
    #[case("[::ffff:192.0.2.7]", false)]
    fn admits(#[case] host: &str, #[case] allowed: bool) {
        let h = Host::parse(host).unwrap();
        assert_eq!(list().admits(&h).is_some(), allowed, "{host}");
    }

    #[rstest]
    #[case("127.1")]
    #[case("2130706433")]
    #[case("0x7f000001")]
    #[case("0177.0.0.1")]
    #[case("exa mple.org")]
    #[case("%65xample.org")]
    #[case("example.org@evil.net")]
    #[case("")]
    #[case("a..b")]
    #[case("[127.0.0.1]")]
    fn respelled_hosts_are_not_names(#[case] host: &str) {
        assert!(Host::parse(host).is_err(), "{host}");
    }

    #[rstest]
    #[case("*")]
    #[case("*.org")]
    #[case("a.*.org")]
    #[case("*example.org")]
    #[case("https://example.org")]
    #[case("example.org/path")]
    #[case("example.org:443")]
    #[case("")]
    fn bad_entries_are_refused(#[case] entry: &str) {
        assert!(DomainPattern::parse(entry).is_err(), "{entry}");
    }

    #[test]
    fn entries_print_as_given() {
        let l = list();
        let shown: Vec<String> = l.entries().iter().map(|e| e.to_string()).collect();
        assert_eq!(
            shown,
            ["registry.npmjs.org", "*.pythonhosted.org", "192.0.2.7"]
        );
    }
}
