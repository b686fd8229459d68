//! The head of one proxy request, read and judged: `CONNECT host:port` (a tunnel, for
//! HTTPS) or a plain-HTTP request in absolute form (`GET http://host/path`). Parsing is
//! httparse's; what counts as the target, and which spellings are refused, is decided
//! here and nowhere else.

use std::io::Read;

use super::allow::Host;

/// The largest request head the proxy reads (request line and headers).
pub const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 128;

/// Where a request wants to go, and how to get there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The method (`CONNECT`, `GET`, ...).
    pub method: String,
    /// The host, normalized.
    pub host: Host,
    /// The port.
    pub port: u16,
    /// For plain HTTP: the head to send upstream (origin form, hop-by-hop headers dropped,
    /// `Connection: close`); `None` for a tunnel.
    pub forward_head: Option<Vec<u8>>,
}

/// A request the proxy answers itself, with the status it sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// HTTP status (400, 403, 431, 502).
    pub status: u16,
    /// A short machine-readable reason (`not-allowed`, `malformed`, ...).
    pub code: &'static str,
    /// One line for the person.
    pub detail: String,
    /// The target as the client spelled it, when one was read.
    pub target: Option<String>,
}

impl Refusal {
    pub(crate) fn new(
        status: u16,
        code: &'static str,
        detail: String,
        target: Option<&str>,
    ) -> Refusal {
        Refusal {
            status,
            code,
            detail,
            target: target.map(str::to_string),
        }
    }

    /// The response the client receives.
    pub fn response(&self) -> Vec<u8> {
        let reason = match self.status {
            400 => "Bad Request",
            403 => "Forbidden",
            431 => "Request Header Fields Too Large",
            502 => "Bad Gateway",
            503 => "Service Unavailable",
            _ => "Error",
        };
        let body = format!("gatehouse proxy: {}\n", self.detail);
        format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nX-Gatehouse-Refused: {}\r\n\r\n{body}",
            self.status,
            body.len(),
            self.code
        )
        .into_bytes()
    }
}

/// Read one request head from `r`. Returns the parsed target (or the refusal to send)
/// and the bytes read past the head, which belong to the body or the tunnel.
pub fn read_head(r: &mut impl Read) -> std::io::Result<(Result<Target, Refusal>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = r.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "client closed before a complete request head",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => {
                let judged = judge(&req);
                return Ok((judged, buf[len..].to_vec()));
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => continue,
            Ok(httparse::Status::Partial) => {
                return Ok((
                    Err(Refusal::new(
                        431,
                        "head-too-large",
                        format!("request head longer than {MAX_HEAD} bytes"),
                        None,
                    )),
                    Vec::new(),
                ))
            }
            Err(e) => {
                return Ok((
                    Err(Refusal::new(
                        400,
                        "malformed",
                        format!("not an HTTP request: {e}"),
                        None,
                    )),
                    Vec::new(),
                ))
            }
        }
    }
}

/// Split `host[:port]` (IPv6 in brackets); `None` port when absent.
fn split_authority(auth: &str) -> Result<(&str, Option<u16>), &'static str> {
    let (host, port) = if auth.starts_with('[') {
        match auth.find(']') {
            Some(end) => {
                let rest = &auth[end + 1..];
                match rest.strip_prefix(':') {
                    Some(p) => (&auth[..=end], Some(p)),
                    None if rest.is_empty() => (&auth[..=end], None),
                    None => return Err("junk after the IPv6 address"),
                }
            }
            None => return Err("an unclosed `[`"),
        }
    } else {
        match auth.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (auth, None),
        }
    };
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p.parse::<u16>().map_err(|_| "a port above 65535")?)
        }
        Some(_) => return Err("a port that is not a number"),
    };
    if port == Some(0) {
        return Err("port 0");
    }
    Ok((host, port))
}

fn parse_host(raw: &str, spelled: &str) -> Result<Host, Refusal> {
    Host::parse(raw).map_err(|e| Refusal::new(400, "bad-host", e.to_string(), Some(spelled)))
}

/// A `Host` header naming another host (or port) than the target is refused (FENCE-NET-5):
/// which of the two a server honours is the server's choice, and the allow-list judged
/// only one. For plain HTTP a Host without a port means 80; for `CONNECT` (`connect_port`)
/// a Host without a port is judged by its name alone, as clients write either.
fn host_header_agrees(
    req: &httparse::Request<'_, '_>,
    host: &Host,
    connect_port: Option<u16>,
    path: &str,
) -> Result<(), Refusal> {
    let malformed = |detail: &str| Refusal::new(400, "malformed", detail.to_string(), Some(path));
    let target_port = match connect_port {
        Some(p) => p,
        None => {
            let rest = &path[7..];
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            split_authority(&rest[..end])
                .map_err(malformed)?
                .1
                .unwrap_or(80)
        }
    };
    for hd in req.headers.iter() {
        if hd.name.eq_ignore_ascii_case("host") {
            let v = std::str::from_utf8(hd.value)
                .map_err(|_| malformed("a Host header that is not text"))?;
            let (hh, hp) = split_authority(v.trim()).map_err(malformed)?;
            let port_ok = match (hp, connect_port) {
                (None, Some(_)) => true,
                (hp, _) => hp.unwrap_or(80) == target_port,
            };
            let same = Host::parse(hh).map(|x| &x == host).unwrap_or(false) && port_ok;
            if !same {
                return Err(Refusal::new(
                    400,
                    "host-mismatch",
                    format!("the Host header `{v}` names another host than the target"),
                    Some(path),
                ));
            }
        }
    }
    Ok(())
}

/// Hop-by-hop and proxy-only headers, never sent upstream.
const DROPPED: [&str; 6] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
];

fn judge(req: &httparse::Request<'_, '_>) -> Result<Target, Refusal> {
    let method = req.method.unwrap_or("").to_string();
    let path = req.path.unwrap_or("");
    let malformed = |detail: &str| Refusal::new(400, "malformed", detail.to_string(), Some(path));
    if method.eq_ignore_ascii_case("CONNECT") {
        let (h, port) = split_authority(path).map_err(malformed)?;
        let port = port.ok_or_else(|| malformed("CONNECT needs host:port"))?;
        if h.contains('@') {
            return Err(malformed("no user information in a CONNECT target"));
        }
        let host = parse_host(h, path)?;
        host_header_agrees(req, &host, Some(port), path)?;
        return Ok(Target {
            method: "CONNECT".into(),
            host,
            port,
            forward_head: None,
        });
    }
    let lower = path.to_ascii_lowercase();
    if lower.starts_with("https://") {
        return Err(malformed("an https:// URL goes through CONNECT"));
    }
    let Some(rest) = lower.strip_prefix("http://").map(|_| &path[7..]) else {
        return Err(malformed(
            "a proxy request names its target in absolute form (http://host/path) or with CONNECT",
        ));
    };
    let (authority, origin) = match rest.find(['/', '?', '#']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], &rest[i..]),
        Some(i) if rest.as_bytes()[i] == b'?' => (&rest[..i], &rest[i..]),
        Some(_) => return Err(malformed("a fragment in a request target")),
        None => (rest, "/"),
    };
    if authority.contains('@') {
        return Err(malformed("no user information in a proxy URL"));
    }
    let (h, port) = split_authority(authority).map_err(malformed)?;
    let host = parse_host(h, path)?;
    let port = port.unwrap_or(80);
    host_header_agrees(req, &host, None, path)?;
    let origin = if origin.starts_with('?') {
        format!("/{origin}")
    } else {
        origin.to_string()
    };
    let mut head = format!("{method} {origin} HTTP/1.1\r\n").into_bytes();
    let mut has_host = false;
    for hd in req.headers.iter() {
        let name = hd.name.to_ascii_lowercase();
        if DROPPED.contains(&name.as_str()) {
            continue;
        }
        has_host |= name == "host";
        head.extend_from_slice(hd.name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(hd.value);
        head.extend_from_slice(b"\r\n");
    }
    if !has_host {
        head.extend_from_slice(format!("Host: {authority}\r\n").as_bytes());
    }
    head.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Target {
        method,
        host,
        port,
        forward_head: Some(head),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(s: &str) -> Result<Target, Refusal> {
        read_head(&mut s.as_bytes()).unwrap().0
    }

    #[test]
    fn connect_names_host_and_port() {
        let t =
            head("CONNECT Registry.NPMjs.org:443 HTTP/1.1\r\nHost: registry.npmjs.org:443\r\n\r\n")
                .unwrap();
        assert_eq!(t.host, Host::Name("registry.npmjs.org".into()));
        assert_eq!(t.port, 443);
        assert!(t.forward_head.is_none());
    }

    #[test]
    fn plain_http_is_rewritten_to_origin_form() {
        let t = head("GET http://example.org:8080/a?b HTTP/1.1\r\nHost: example.org:8080\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n").unwrap();
        assert_eq!(t.port, 8080);
        let h = String::from_utf8(t.forward_head.unwrap()).unwrap();
        assert_eq!(
            h,
            "GET /a?b HTTP/1.1\r\nHost: example.org:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn a_connect_host_header_naming_the_target_passes() {
        for h in ["allowed.org:443", "allowed.org", "ALLOWED.org:443"] {
            let req = format!("CONNECT allowed.org:443 HTTP/1.1\r\nHost: {h}\r\n\r\n");
            assert!(head(&req).is_ok(), "{h}");
        }
    }

    #[test]
    fn leftover_bytes_are_kept() {
        let (t, rest) =
            read_head(&mut &b"CONNECT a.example.org:443 HTTP/1.1\r\n\r\n\x16\x03\x01"[..]).unwrap();
        assert!(t.is_ok());
        assert_eq!(rest, b"\x16\x03\x01");
    }

    #[rstest::rstest]
    #[case("GET http://allowed.org@evil.net/ HTTP/1.1\r\n\r\n", "malformed")]
    #[case(
        "GET http://allowed.org/ HTTP/1.1\r\nHost: evil.net\r\n\r\n",
        "host-mismatch"
    )]
    #[case("GET / HTTP/1.1\r\nHost: allowed.org\r\n\r\n", "malformed")]
    #[case("GET https://allowed.org/ HTTP/1.1\r\n\r\n", "malformed")]
    #[case("CONNECT allowed.org HTTP/1.1\r\n\r\n", "malformed")]
    #[case("CONNECT 127.1:80 HTTP/1.1\r\n\r\n", "bad-host")]
    #[case(
        "CONNECT allowed.org:443 HTTP/1.1\r\nHost: evil.net:443\r\n\r\n",
        "host-mismatch"
    )]
    #[case(
        "CONNECT allowed.org:443 HTTP/1.1\r\nHost: allowed.org:8443\r\n\r\n",
        "host-mismatch"
    )]
    #[case("CONNECT allowed.org:99999 HTTP/1.1\r\n\r\n", "malformed")]
    #[case("CONNECT [::1:80 HTTP/1.1\r\n\r\n", "malformed")]
    #[case("\x16\x03\x01 garbage\r\n\r\n", "malformed")]
    fn respellings_are_refused(#[case] req: &str, #[case] code: &str) {
        assert_eq!(head(req).unwrap_err().code, code, "{req:?}");
    }
}
