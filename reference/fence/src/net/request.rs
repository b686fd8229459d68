//! One proxy request, judged: `CONNECT host:port` (a tunnel, for HTTPS) or a plain-HTTP
//! request in absolute form (`GET http://host/path`). Parsing and framing are hyper's
//! (every request of a connection, FENCE-NET-5); what counts as the target, which
//! spellings are refused, and which headers go upstream are decided here and nowhere
//! else.

use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Uri};

use super::allow::Host;

/// The largest request head the proxy reads (request line and headers); hyper's read
/// buffer, which a longer head overflows (431).
pub const MAX_HEAD: usize = 64 * 1024;

/// Where a request wants to go, and how to get there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The method (`CONNECT`, `GET`, ...).
    pub method: String,
    /// The host, normalized.
    pub host: Host,
    /// The port.
    pub port: u16,
    /// For plain HTTP: the target in origin form (`/a?b`) and the authority as spelled
    /// (the `Host` to send when the client sent none); `None` for a tunnel.
    pub origin: Option<(String, String)>,
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

    /// The status line's reason phrase.
    pub fn reason(&self) -> &'static str {
        match self.status {
            400 => "Bad Request",
            403 => "Forbidden",
            431 => "Request Header Fields Too Large",
            502 => "Bad Gateway",
            503 => "Service Unavailable",
            _ => "Error",
        }
    }

    /// The body the client receives.
    pub fn body(&self) -> String {
        format!("gatehouse proxy: {}\n", self.detail)
    }

    /// The whole response, as bytes (for answers written before hyper serves the
    /// connection: the cap on connections).
    pub fn response(&self) -> Vec<u8> {
        let body = self.body();
        format!(
            "HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nX-Gatehouse-Refused: {}\r\n\r\n{body}",
            self.status,
            self.reason(),
            body.len(),
            self.code
        )
        .into_bytes()
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
/// only one. For plain HTTP a Host without a port means 80; for `CONNECT` (`connect`) a
/// Host without a port is judged by its name alone, as clients write either.
fn host_header_agrees(
    headers: &HeaderMap,
    host: &Host,
    port: u16,
    connect: bool,
    spelled: &str,
) -> Result<(), Refusal> {
    let malformed =
        |detail: &str| Refusal::new(400, "malformed", detail.to_string(), Some(spelled));
    for value in headers.get_all(hyper::header::HOST) {
        let v = value
            .to_str()
            .map_err(|_| malformed("a Host header that is not text"))?;
        let (hh, hp) = split_authority(v.trim()).map_err(malformed)?;
        let port_ok = match (hp, connect) {
            (None, true) => true,
            (hp, _) => hp.unwrap_or(80) == port,
        };
        let same = Host::parse(hh).map(|x| &x == host).unwrap_or(false) && port_ok;
        if !same {
            return Err(Refusal::new(
                400,
                "host-mismatch",
                format!("the Host header `{v}` names another host than the target"),
                Some(spelled),
            ));
        }
    }
    Ok(())
}

/// Judge one request as hyper parsed it: the method, the target and the headers.
pub fn judge(method: &Method, uri: &Uri, headers: &HeaderMap) -> Result<Target, Refusal> {
    let spelled = uri.to_string();
    let malformed =
        |detail: &str| Refusal::new(400, "malformed", detail.to_string(), Some(&spelled));
    if method == Method::CONNECT {
        let auth = match (uri.scheme(), uri.authority(), uri.path_and_query()) {
            (None, Some(a), None) => a.as_str(),
            _ => return Err(malformed("CONNECT needs host:port")),
        };
        if auth.contains('@') {
            return Err(malformed("no user information in a CONNECT target"));
        }
        let (h, port) = split_authority(auth).map_err(malformed)?;
        let port = port.ok_or_else(|| malformed("CONNECT needs host:port"))?;
        let host = parse_host(h, &spelled)?;
        host_header_agrees(headers, &host, port, true, &spelled)?;
        return Ok(Target {
            method: "CONNECT".into(),
            host,
            port,
            origin: None,
        });
    }
    match uri.scheme_str() {
        Some(s) if s.eq_ignore_ascii_case("http") => {}
        Some(s) if s.eq_ignore_ascii_case("https") => {
            return Err(malformed("an https:// URL goes through CONNECT"))
        }
        _ => return Err(malformed(
            "a proxy request names its target in absolute form (http://host/path) or with CONNECT",
        )),
    }
    let Some(authority) = uri.authority().map(|a| a.as_str()) else {
        return Err(malformed("a URL without a host"));
    };
    if authority.contains('@') {
        return Err(malformed("no user information in a proxy URL"));
    }
    let (h, port) = split_authority(authority).map_err(malformed)?;
    let host = parse_host(h, &spelled)?;
    let port = port.unwrap_or(80);
    host_header_agrees(headers, &host, port, false, &spelled)?;
    let origin = match uri.path_and_query().map(|p| p.as_str()) {
        Some(p) if p.starts_with('/') => p.to_string(),
        Some(p) => format!("/{p}"),
        None => "/".to_string(),
    };
    Ok(Target {
        method: method.as_str().to_string(),
        host,
        port,
        origin: Some((origin, authority.to_string())),
    })
}

/// Hop-by-hop and proxy-only headers, never passed on in either direction. The framing
/// headers are among them: hyper frames each message anew from the body it decoded, so
/// a body's length on one side is never what the other side's parser reads in its
/// place (`Content-Length` against `Transfer-Encoding`).
const HOP_BY_HOP: [&str; 10] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "content-length",
    "upgrade",
];

/// `headers` without the hop-by-hop ones and those the `Connection` header names.
fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let named: Vec<String> = headers
        .get_all(hyper::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect();
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let n = name.as_str();
        if HOP_BY_HOP.contains(&n) || named.iter().any(|t| t == n) {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// The headers sent upstream with a plain-HTTP request: the client's end-to-end ones, a
/// `Host` naming the target when the client sent none (HTTP/1.0), and `Connection:
/// close`, as each upstream connection carries one request.
pub fn upstream_headers(headers: &HeaderMap, authority: &str) -> HeaderMap {
    let mut out = end_to_end(headers);
    if !out.contains_key(hyper::header::HOST) {
        if let Ok(v) = HeaderValue::from_str(authority) {
            out.insert(hyper::header::HOST, v);
        }
    }
    out.insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    out
}

/// The headers sent back to the client with an upstream response: its end-to-end ones.
/// Whether the client's connection stays open is the proxy's own business with the
/// client, not the upstream's (hyper frames the response for the client anew).
pub fn downstream_headers(headers: &HeaderMap) -> HeaderMap {
    end_to_end(headers)
}

/// The `X-Gatehouse-Refused` header's name.
pub fn refused_header() -> HeaderName {
    HeaderName::from_static("x-gatehouse-refused")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parse a head as the proxy's server does (hyper's parser is httparse), then judge.
    fn head(s: &str) -> Result<Target, Refusal> {
        let mut hs = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut hs);
        req.parse(s.as_bytes()).unwrap();
        let method = Method::from_bytes(req.method.unwrap().as_bytes()).unwrap();
        let uri: Uri = match req.path.unwrap().parse() {
            Ok(u) => u,
            Err(_) => return Err(Refusal::new(400, "malformed", "uri".into(), None)),
        };
        let mut headers = HeaderMap::new();
        for h in req.headers.iter() {
            headers.append(
                HeaderName::from_bytes(h.name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(h.value).unwrap(),
            );
        }
        judge(&method, &uri, &headers)
    }

    #[test]
    fn connect_names_host_and_port() {
        let t =
            head("CONNECT Registry.NPMjs.org:443 HTTP/1.1\r\nHost: registry.npmjs.org:443\r\n\r\n")
                .unwrap();
        assert_eq!(t.host, Host::Name("registry.npmjs.org".into()));
        assert_eq!(t.port, 443);
        assert!(t.origin.is_none());
    }

    #[test]
    fn plain_http_is_sent_in_origin_form_without_hop_by_hop_headers() {
        let req = "GET http://example.org:8080/a?b HTTP/1.1\r\nHost: example.org:8080\r\nProxy-Connection: keep-alive\r\nConnection: x-secret, keep-alive\r\nX-Secret: 1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\nUpgrade: websocket\r\nAccept: */*\r\n\r\n";
        let t = head(req).unwrap();
        assert_eq!(t.port, 8080);
        let (origin, authority) = t.origin.unwrap();
        assert_eq!(origin, "/a?b");
        let mut hs = [httparse::EMPTY_HEADER; 64];
        let mut r = httparse::Request::new(&mut hs);
        r.parse(req.as_bytes()).unwrap();
        let mut headers = HeaderMap::new();
        for h in r.headers.iter() {
            headers.append(
                HeaderName::from_bytes(h.name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(h.value).unwrap(),
            );
        }
        let up = upstream_headers(&headers, &authority);
        let mut names: Vec<&str> = up.keys().map(|k| k.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["accept", "connection", "host"]);
        assert_eq!(up["connection"], "close");
        // HTTP/1.0 without a Host: the target's authority is sent as one.
        let up = upstream_headers(&HeaderMap::new(), "example.org:8080");
        assert_eq!(up["host"], "example.org:8080");
    }

    #[test]
    fn a_connect_host_header_naming_the_target_passes() {
        for h in ["allowed.org:443", "allowed.org", "ALLOWED.org:443"] {
            let req = format!("CONNECT allowed.org:443 HTTP/1.1\r\nHost: {h}\r\n\r\n");
            assert!(head(&req).is_ok(), "{h}");
        }
    }

    #[rstest::rstest]
    #[case("GET http://allowed.org@evil.net/ HTTP/1.1\r\n\r\n", "malformed")]
    #[case(
        "GET http://allowed.org/ HTTP/1.1\r\nHost: evil.net\r\n\r\n",
        "host-mismatch"
    )]
    #[case(
        "GET http://allowed.org/ HTTP/1.1\r\nHost: allowed.org\r\nHost: evil.net\r\n\r\n",
        "host-mismatch"
    )]
    #[case("GET / HTTP/1.1\r\nHost: allowed.org\r\n\r\n", "malformed")]
    #[case("GET * HTTP/1.1\r\nHost: allowed.org\r\n\r\n", "malformed")]
    #[case("GET https://allowed.org/ HTTP/1.1\r\n\r\n", "malformed")]
    #[case("GET ftp://allowed.org/ HTTP/1.1\r\n\r\n", "malformed")]
    #[case("CONNECT allowed.org HTTP/1.1\r\n\r\n", "malformed")]
    #[case("CONNECT http://allowed.org:443/ HTTP/1.1\r\n\r\n", "malformed")]
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
    fn respellings_are_refused(#[case] req: &str, #[case] code: &str) {
        assert_eq!(head(req).unwrap_err().code, code, "{req:?}");
    }
}
