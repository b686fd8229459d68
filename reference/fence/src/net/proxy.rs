//! The allow-list proxy: runs in the reference's own process, outside the jail, and is
//! the only way out of a jail in the `allow-list` network mode. It accepts HTTP CONNECT
//! tunnels and plain-HTTP requests, connects only to names the allow-list admits (the
//! name is judged before it is resolved, so a refused name never reaches a resolver) and
//! only to addresses that are not this machine's or its link's ([`super::address`]),
//! answers everything else itself with a status and one line, and reports every
//! decision to its journal (the session log).
//!
//! Every request of a connection is parsed by hyper's HTTP/1 server and judged on its
//! own (FENCE-NET-5); each admitted plain-HTTP request goes upstream on a connection of
//! its own through hyper's client, which frames it anew, so no byte the client sent
//! reaches an upstream except inside a request the proxy judged. A `CONNECT` tunnel,
//! once judged, connects only after its first bytes are: a TLS ClientHello must ask for
//! the host the `CONNECT` named ([`super::hello`], FENCE-NET-11); then it carries bytes
//! both ways (TLS, which the proxy cannot read).
//!
//! One thread per connection, each running its connection on a single-threaded tokio
//! runtime of its own: a proxy for one person's session carries a handful of connections
//! at a time, and the cap on threads ([`MAX_CONNECTIONS`]) stays what it was.

use std::convert::Infallible;
use std::io::Write;
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONNECTION, CONTENT_TYPE};
use hyper::{Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde::Serialize;

use super::address::{classify, Internal};
use super::allow::{AllowList, DomainPattern, Host};
use super::hello::{opening, Opening};
use super::request::{
    downstream_headers, judge, refused_header, upstream_headers, Refusal, Target, MAX_HEAD,
};

/// The body of every response the proxy sends through hyper.
type Body = BoxBody<Bytes, hyper::Error>;

/// How long the proxy waits for a client's whole request head, however slowly it comes.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one upstream connection attempt may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once, each on a thread of the reference's process: more are
/// refused (503), so that jailed code cannot spend the person's threads and processes
/// (`RLIMIT_NPROC`) by opening connections and holding them.
pub const MAX_CONNECTIONS: usize = 128;
/// Refusals journalled per [`REFUSAL_WINDOW`]; beyond them each refusal is still answered
/// but only counted, and the count is journalled once when the next window opens, so
/// that jailed code refused in a loop cannot fill the person's disk with the session log.
pub const REFUSALS_PER_WINDOW: u32 = 64;
/// The window of [`REFUSALS_PER_WINDOW`].
pub const REFUSAL_WINDOW: Duration = Duration::from_secs(10);

/// One decision of the proxy, as the session log records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "kebab-case")]
pub enum NetEvent {
    /// A connection to an admitted host was opened.
    Allowed {
        /// `CONNECT` or the HTTP method.
        method: String,
        /// The host, normalized.
        host: String,
        /// The port.
        port: u16,
        /// The allow-list entry that admitted it.
        rule: String,
    },
    /// A request the proxy refused, with the status it answered.
    Refused {
        /// The status sent to the client.
        status: u16,
        /// The machine-readable reason (`not-allowed`, `malformed`, `bad-host`, ...).
        code: String,
        /// The request target as the client spelled it.
        target: Option<String>,
        /// One line for the person.
        detail: String,
    },
    /// Refusals answered but not journalled one by one (more than
    /// [`REFUSALS_PER_WINDOW`] in a window), counted.
    Suppressed {
        /// How many.
        refusals: u64,
    },
}

/// The journal's budget of refusals: [`REFUSALS_PER_WINDOW`] per [`REFUSAL_WINDOW`].
#[derive(Debug)]
struct RefusalBudget {
    opened: Instant,
    spent: u32,
    suppressed: u64,
}

impl RefusalBudget {
    fn new(now: Instant) -> RefusalBudget {
        RefusalBudget {
            opened: now,
            spent: 0,
            suppressed: 0,
        }
    }

    /// Whether a refusal at `now` is journalled; with it, the count of those suppressed
    /// since, to be journalled first (when a new window opened).
    fn admit(&mut self, now: Instant) -> (bool, u64) {
        let mut carried = 0;
        if now.duration_since(self.opened) >= REFUSAL_WINDOW {
            carried = std::mem::take(&mut self.suppressed);
            self.opened = now;
            self.spent = 0;
        }
        if self.spent < REFUSALS_PER_WINDOW {
            self.spent += 1;
            (true, carried)
        } else {
            self.suppressed += 1;
            (false, carried)
        }
    }
}

/// How admitted names become addresses.
type Resolver = Arc<dyn Fn(&Host, u16) -> std::io::Result<Vec<SocketAddr>> + Send + Sync>;

/// Where this machine's interfaces' addresses come from.
type Interfaces = Arc<dyn Fn() -> std::io::Result<Vec<IpAddr>> + Send + Sync>;

/// Where decisions go.
pub type Journal = Arc<dyn Fn(&NetEvent) + Send + Sync>;

/// A proxy ready to serve.
#[derive(Clone)]
pub struct Proxy {
    allow: Arc<AllowList>,
    journal: Journal,
    resolve: Resolver,
    interfaces: Interfaces,
    budget: Arc<Mutex<RefusalBudget>>,
    head_timeout: Duration,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy").field("allow", &self.allow).finish()
    }
}

/// A running proxy; dropping it stops accepting new connections.
pub struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// The proxy's journal and budget: refusals still only counted are journalled when
    /// the proxy stops, so that none goes unrecorded (FENCE-NET-10).
    journal: Journal,
    budget: Arc<Mutex<RefusalBudget>>,
    /// The listening socket, shut down on drop so that the accept loop ends at once.
    listener: Option<TcpListener>,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").field("addr", &self.addr).finish()
    }
}

impl Running {
    /// The address it listens on (in the network namespace the listener belongs to).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // The accept loop stops at its next connection, or at once: a listening socket
        // shut down for reading wakes its blocked `accept` (Linux). No wake-up connect:
        // the listener usually lives in a jail's network namespace, and the same address
        // here is the host's.
        self.stop.store(true, Ordering::SeqCst);
        if let Some(l) = self.listener.take() {
            let _ = rustix::net::shutdown(&l, rustix::net::Shutdown::Read);
        }
        let pending = self
            .budget
            .lock()
            .map(|mut b| std::mem::take(&mut b.suppressed))
            .unwrap_or(0);
        if pending > 0 {
            (self.journal)(&NetEvent::Suppressed { refusals: pending });
        }
    }
}

/// The system resolver, used only for names the allow-list admitted. `localhost` is
/// answered here, with the loopback addresses, and never asked of a resolver (RFC 6761,
/// section 6.3): no `/etc/hosts` (a minimal system) must not send it to DNS, where any
/// server could answer it with another address.
fn system_resolve(host: &Host, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    match host {
        Host::Ip(ip) => Ok(vec![SocketAddr::new(*ip, port)]),
        Host::Name(n) if n == "localhost" => Ok(vec![
            SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port)),
            SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, port)),
        ]),
        Host::Name(n) => Ok((n.as_str(), port).to_socket_addrs()?.collect()),
    }
}

impl Proxy {
    /// A proxy admitting `allow`, reporting to `journal`.
    pub fn new(allow: AllowList, journal: Journal) -> Proxy {
        Proxy {
            allow: Arc::new(allow),
            journal,
            resolve: Arc::new(system_resolve),
            interfaces: Arc::new(system_interfaces),
            budget: Arc::new(Mutex::new(RefusalBudget::new(Instant::now()))),
            head_timeout: HEAD_TIMEOUT,
        }
    }

    /// Serve on `listener` from a thread of its own until the returned handle is dropped
    /// or the listener fails.
    pub fn spawn(self, listener: TcpListener) -> std::io::Result<Running> {
        let addr = listener.local_addr()?;
        let (journal, budget) = (self.journal.clone(), self.budget.clone());
        let shut = listener.try_clone().ok();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("gatehouse-proxy".into())
            .spawn(move || {
                let live = Arc::new(AtomicUsize::new(0));
                for conn in listener.incoming() {
                    if flag.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(mut conn) = conn else { break };
                    if live.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                        live.fetch_sub(1, Ordering::SeqCst);
                        self.refuse(
                            &mut conn,
                            Refusal::new(
                                503,
                                "too-many-connections",
                                format!("more than {MAX_CONNECTIONS} connections at once"),
                                None,
                            ),
                        );
                        continue;
                    }
                    let me = self.clone();
                    let held = live.clone();
                    let spawned = std::thread::Builder::new()
                        .name("gatehouse-proxy-conn".into())
                        .spawn(move || {
                            me.serve(conn);
                            held.fetch_sub(1, Ordering::SeqCst);
                        });
                    if spawned.is_err() {
                        live.fetch_sub(1, Ordering::SeqCst);
                    }
                }
            })?;
        Ok(Running {
            addr,
            stop,
            journal,
            budget,
            listener: shut,
        })
    }

    /// Record a refusal (beyond the journal's budget, count it instead:
    /// [`REFUSALS_PER_WINDOW`]).
    fn record(&self, r: &Refusal) {
        let (journalled, carried) = self
            .budget
            .lock()
            .map(|mut b| b.admit(Instant::now()))
            .unwrap_or((true, 0));
        if carried > 0 {
            (self.journal)(&NetEvent::Suppressed { refusals: carried });
        }
        if journalled {
            (self.journal)(&NetEvent::Refused {
                status: r.status,
                code: r.code.to_string(),
                target: r.target.clone(),
                detail: r.detail.clone(),
            });
        }
    }

    /// Record the refusal first (the log never lags what the client saw), then answer
    /// and close, on a connection hyper does not serve (the cap on connections).
    fn refuse(&self, client: &mut TcpStream, r: Refusal) {
        self.record(&r);
        let _ = client.write_all(&r.response());
        let _ = client.shutdown(Shutdown::Both);
    }

    /// Record the refusal, then the response hyper sends for it; the connection closes
    /// after it, so nothing the client sent after a refused request is read.
    fn refusal(&self, r: Refusal) -> Response<Body> {
        self.record(&r);
        let mut resp = Response::new(full(r.body()));
        *resp.status_mut() = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
        let h = resp.headers_mut();
        h.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        h.insert(CONNECTION, HeaderValue::from_static("close"));
        h.insert(refused_header(), HeaderValue::from_static(r.code));
        resp
    }

    /// Serve one client connection: every request on it judged, each admitted one sent
    /// upstream on a connection of its own, until the client closes, a request is
    /// refused, a request asks to close, or a tunnel is opened (which then carries the
    /// rest of the connection).
    pub fn serve(&self, client: TcpStream) {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
        else {
            return;
        };
        let me = self.clone();
        rt.block_on(async move {
            if client.set_nonblocking(true).is_err() {
                return;
            }
            let Ok(io) = tokio::net::TcpStream::from_std(client) else {
                return;
            };
            let tunnels: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
            let (p, t) = (me.clone(), tunnels.clone());
            let service = hyper::service::service_fn(move |req| {
                let (p, t) = (p.clone(), t.clone());
                async move { Ok::<_, Infallible>(p.answer(req, &t).await) }
            });
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(me.head_timeout)
                .max_buf_size(MAX_HEAD)
                .title_case_headers(true)
                .serve_connection(TokioIo::new(io), service)
                .with_upgrades()
                .await;
            // hyper answered a request it could not parse itself (400, or 431 for a head
            // too long) and closed: recorded here, after the fact.
            if let Err(e) = served {
                let r = if e.is_parse_too_large() {
                    Some((
                        431,
                        "head-too-large",
                        format!("request head longer than {MAX_HEAD} bytes"),
                    ))
                } else if e.is_parse() {
                    Some((400, "malformed", format!("not an HTTP request: {e}")))
                } else {
                    None
                };
                if let Some((status, code, detail)) = r {
                    me.record(&Refusal::new(status, code, detail, None));
                }
            }
            let open: Vec<_> = tunnels
                .lock()
                .map(|mut v| v.drain(..).collect())
                .unwrap_or_default();
            for t in open {
                let _ = t.await;
            }
        });
    }

    /// Judge one request and answer it: a refusal, a tunnel opened, or the upstream's
    /// response.
    async fn answer(
        &self,
        req: Request<Incoming>,
        tunnels: &Mutex<Vec<tokio::task::JoinHandle<()>>>,
    ) -> Response<Body> {
        let target = match judge(req.method(), req.uri(), req.headers()) {
            Ok(t) => t,
            Err(r) => return self.refusal(r),
        };
        let spelled = format!("{}:{}", target.host, target.port);
        let Some(pattern) = self.allow.admits(&target.host).cloned() else {
            return self.refusal(Refusal::new(
                403,
                "not-allowed",
                format!("{} is not on this session's domain allow-list", target.host),
                Some(&spelled),
            ));
        };
        let addrs = match self.checked(&target, &pattern) {
            Ok(a) => a,
            Err(e) => return self.refusal(e.refusal(&target.host, &spelled)),
        };
        let Some((origin, authority)) = target.origin.clone() else {
            // The tunnel: hyper hands over the client's connection once the 200 is
            // written; nothing connects upstream until the client's first bytes are
            // judged (FENCE-NET-11), so a refused tunnel reaches no host at all.
            let me = self.clone();
            let task = tokio::spawn(async move {
                if let Ok(upgraded) = hyper::upgrade::on(req).await {
                    me.tunnel(TokioIo::new(upgraded), target, pattern, addrs, spelled)
                        .await;
                }
            });
            if let Ok(mut v) = tunnels.lock() {
                v.push(task);
            }
            return Response::new(Empty::new().map_err(|never| match never {}).boxed());
        };
        let upstream = match self.dial(addrs, &pattern).and_then(tokio_stream) {
            Ok(s) => s,
            Err(e) => return self.refusal(e.refusal(&target.host, &spelled)),
        };
        (self.journal)(&NetEvent::Allowed {
            method: target.method.clone(),
            host: target.host.to_string(),
            port: target.port,
            rule: pattern.to_string(),
        });
        match self.forward(req, upstream, &origin, &authority).await {
            Ok(resp) => resp,
            Err(e) => self.refusal(Refusal::new(
                502,
                "upstream-failed",
                format!("{spelled} did not answer: {e}"),
                Some(&spelled),
            )),
        }
    }

    /// Carry a tunnel whose `CONNECT` was admitted: read the client's first bytes, and
    /// when they are a TLS ClientHello, refuse it unless the name it asks for is the
    /// host the `CONNECT` named (FENCE-NET-11); only then connect, send those bytes and
    /// carry the rest both ways. A refusal is journalled and answered with a TLS alert
    /// (the client already has its `200`), and nothing reaches the host.
    async fn tunnel(
        &self,
        mut client: TokioIo<hyper::upgrade::Upgraded>,
        target: Target,
        pattern: DomainPattern,
        addrs: Vec<SocketAddr>,
        spelled: String,
    ) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut first = Vec::new();
        let deadline = tokio::time::sleep(self.head_timeout);
        tokio::pin!(deadline);
        let judged = loop {
            match opening(&first) {
                Opening::Incomplete => {}
                o => break o,
            }
            let mut buf = [0u8; 4096];
            tokio::select! {
                r = client.read(&mut buf) => match r {
                    Ok(0) | Err(_) => return,
                    Ok(n) => first.extend_from_slice(&buf[..n]),
                },
                () = &mut deadline => {
                    self.record(&Refusal::new(
                        408,
                        "tunnel-silent",
                        format!(
                            "the tunnel to {spelled} sent nothing within {} s; the proxy judges a tunnel's first bytes before it connects",
                            self.head_timeout.as_secs()
                        ),
                        Some(&spelled),
                    ));
                    return;
                }
            }
        };
        let refused = match &judged {
            Opening::Hello { encrypted: true, .. } => Some(Refusal::new(
                403,
                "encrypted-hello",
                format!("the tunnel to {spelled} sends an encrypted ClientHello, whose inner server name the proxy cannot compare with {}", target.host),
                Some(&spelled),
            )),
            Opening::Hello { name: Some(n), .. } if Host::parse(n).ok().as_ref() != Some(&target.host) => {
                Some(Refusal::new(
                    403,
                    "server-name-mismatch",
                    format!("the tunnel to {spelled} asks TLS for the server name {n}; only {} was admitted (add {n} to the allow-list and connect to it by that name)", target.host),
                    Some(&spelled),
                ))
            }
            Opening::Malformed(why) => Some(Refusal::new(
                400,
                "malformed-hello",
                format!("the tunnel to {spelled} began with TLS records the proxy cannot read: {why}"),
                Some(&spelled),
            )),
            _ => None,
        };
        if let Some(r) = refused {
            self.record(&r);
            // A fatal TLS alert, access_denied (49): the client's TLS stack says so.
            let _ = client.write_all(&[21, 3, 3, 0, 2, 2, 49]).await;
            let _ = client.shutdown().await;
            return;
        }
        let mut up = match self.dial(addrs, &pattern).and_then(tokio_stream) {
            Ok(s) => s,
            Err(e) => {
                self.record(&e.refusal(&target.host, &spelled));
                let _ = client.shutdown().await;
                return;
            }
        };
        (self.journal)(&NetEvent::Allowed {
            method: target.method.clone(),
            host: target.host.to_string(),
            port: target.port,
            rule: pattern.to_string(),
        });
        if up.write_all(&first).await.is_err() {
            return;
        }
        let _ = tokio::io::copy_bidirectional(&mut client, &mut up).await;
    }

    /// Send one judged plain-HTTP request upstream, in origin form, on `upstream` (a
    /// connection for it alone), and hand back the response. hyper frames the request
    /// anew from the body it decoded: the framing headers the client sent never pass.
    async fn forward(
        &self,
        req: Request<Incoming>,
        upstream: tokio::net::TcpStream,
        origin: &str,
        authority: &str,
    ) -> Result<Response<Body>, hyper::Error> {
        let (parts, body) = req.into_parts();
        let (mut send, conn) =
            hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut out = Request::new(body);
        *out.method_mut() = parts.method;
        *out.version_mut() = Version::HTTP_11;
        *out.uri_mut() = match origin.parse() {
            Ok(u) => u,
            Err(_) => hyper::Uri::from_static("/"),
        };
        *out.headers_mut() = upstream_headers(&parts.headers, authority);
        let resp = send.send_request(out).await?;
        let (mut parts, body) = resp.into_parts();
        parts.headers = downstream_headers(&parts.headers);
        parts.version = Version::HTTP_11;
        Ok(Response::from_parts(parts, body.boxed()))
    }

    /// Resolve (only now, the name being admitted) and keep the addresses that may be
    /// reached, never resolving again. An address of this machine or its link
    /// ([`classify`], against the interfaces' addresses read now) is refused unless its
    /// entry names such a destination (FENCE-NET-9): a wildcard entry, or a name whose
    /// DNS an attacker answers, must not reach the person's own services.
    fn checked(&self, t: &Target, entry: &DomainPattern) -> Result<Vec<SocketAddr>, Upstream> {
        let addrs = (self.resolve)(&t.host, t.port).map_err(Upstream::Io)?;
        let names_internal = names_internal(entry);
        let local = if names_internal {
            Vec::new()
        } else {
            (self.interfaces)().map_err(|e| {
                Upstream::Io(std::io::Error::new(
                    e.kind(),
                    format!("cannot list this machine's addresses to check them: {e}"),
                ))
            })?
        };
        let mut usable = Vec::new();
        let mut internal = Vec::new();
        for a in addrs {
            match classify(a.ip(), &local) {
                Some(why) if !names_internal => internal.push((a, why)),
                _ => usable.push(a),
            }
        }
        if usable.is_empty() && !internal.is_empty() {
            let shown: Vec<String> = internal
                .iter()
                .map(|(a, why)| format!("{} ({why})", a.ip()))
                .collect();
            return Err(Upstream::Internal(shown.join(", ")));
        }
        Ok(usable)
    }

    /// Connect to one of the addresses [`Proxy::checked`] kept. Once connected, a
    /// connection whose two ends are one address (the kernel routed it to this machine,
    /// through an address added since the interfaces were read) is dropped before a byte
    /// is sent.
    fn dial(&self, addrs: Vec<SocketAddr>, entry: &DomainPattern) -> Result<TcpStream, Upstream> {
        let names_internal = names_internal(entry);
        let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
        for a in addrs {
            match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
                Ok(s) if !names_internal && loops_back(&s) => {
                    let _ = s.shutdown(Shutdown::Both);
                    return Err(Upstream::Internal(format!(
                        "{} ({})",
                        a.ip(),
                        Internal::Interface
                    )));
                }
                Ok(s) => return Ok(s),
                Err(e) => last = e,
            }
        }
        Err(Upstream::Io(last))
    }
}

/// Whether an allow-list entry names a destination of this machine or its link itself
/// (the address, or `localhost`), which FENCE-NET-9 lets it reach.
fn names_internal(entry: &DomainPattern) -> bool {
    match entry {
        DomainPattern::Ip(_) => true,
        DomainPattern::Exact(n) => n == "localhost",
        DomainPattern::Below(_) => false,
    }
}

/// A connected upstream socket, handed to tokio.
fn tokio_stream(s: TcpStream) -> Result<tokio::net::TcpStream, Upstream> {
    s.set_nonblocking(true)
        .and_then(|()| tokio::net::TcpStream::from_std(s))
        .map_err(|e| {
            Upstream::Io(std::io::Error::new(
                e.kind(),
                format!("cannot use the connection: {e}"),
            ))
        })
}

/// Whether a connection's two ends are one address: the kernel routed it to this
/// machine (a destination in its local routing table chooses itself as the source).
fn loops_back(s: &TcpStream) -> bool {
    match (s.local_addr(), s.peer_addr()) {
        (Ok(l), Ok(p)) => l.ip().to_canonical() == p.ip().to_canonical(),
        _ => true,
    }
}

/// A body of one piece.
fn full(text: String) -> Body {
    Full::new(Bytes::from(text))
        .map_err(|never| match never {})
        .boxed()
}

/// Why no upstream connection was made.
enum Upstream {
    /// Every address the name resolved to is internal (shown).
    Internal(String),
    /// Resolving or connecting failed.
    Io(std::io::Error),
}

impl Upstream {
    /// The refusal answered (or, in a tunnel already open, journalled) for it.
    fn refusal(&self, host: &Host, spelled: &str) -> Refusal {
        match self {
            Upstream::Internal(addrs) => Refusal::new(
                403,
                "internal-address",
                format!(
                    "{host} resolves to {addrs}, which only an entry naming it (`localhost`, the address itself) admits"
                ),
                Some(spelled),
            ),
            Upstream::Io(e) => Refusal::new(
                502,
                "unreachable",
                format!("cannot reach {spelled}: {e}"),
                Some(spelled),
            ),
        }
    }
}

/// Every address of this machine's interfaces, read at each connection.
fn system_interfaces() -> std::io::Result<Vec<IpAddr>> {
    crate::sys::ifaddrs::local_addresses()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::sync::Mutex;

    /// A loopback HTTP server answering every request with `hello from <name>`; counts
    /// the connections it saw.
    fn server(name: &'static str) -> (u16, Arc<Mutex<usize>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(0));
        let s = seen.clone();
        std::thread::spawn(move || {
            for c in l.incoming() {
                let Ok(mut c) = c else { break };
                *s.lock().unwrap() += 1;
                let mut buf = [0u8; 4096];
                let _ = c.read(&mut buf);
                let body = format!("hello from {name}");
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        (port, seen)
    }

    fn proxy(allow: &[&str]) -> (Running, Arc<Mutex<Vec<NetEvent>>>) {
        let events = Arc::new(Mutex::new(Vec::new()));
        let e = events.clone();
        let p = Proxy::new(
            AllowList::parse(allow).unwrap(),
            Arc::new(move |ev: &NetEvent| e.lock().unwrap().push(ev.clone())),
        );
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        (p.spawn(l).unwrap(), events)
    }

    fn ask(proxy: &Running, req: &str) -> String {
        let mut c = TcpStream::connect(proxy.local_addr()).unwrap();
        c.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        out
    }

    #[test]
    fn an_allowed_host_answers_over_plain_http() {
        let (port, seen) = server("a");
        let (p, events) = proxy(&["localhost"]);
        let out = ask(
            &p,
            &format!("GET http://localhost:{port}/x HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"),
        );
        assert!(out.ends_with("hello from a"), "{out}");
        assert_eq!(*seen.lock().unwrap(), 1);
        assert!(
            matches!(&events.lock().unwrap()[0], NetEvent::Allowed { rule, .. } if rule == "localhost")
        );
    }

    #[test]
    fn an_allowed_host_answers_through_a_tunnel() {
        let (port, _) = server("b");
        let (p, _) = proxy(&["localhost"]);
        let out = ask(
            &p,
            &format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        );
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
        assert!(out.ends_with("hello from b"), "{out}");
    }

    #[test]
    fn a_host_off_the_list_is_refused_and_recorded_and_never_reached() {
        let (port, seen) = server("c");
        let (p, events) = proxy(&["localhost"]);
        for req in [
            format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n"),
            format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\n\r\n"),
            format!("CONNECT localhost.evil.net:{port} HTTP/1.1\r\n\r\n"),
        ] {
            let out = ask(&p, &req);
            assert!(out.starts_with("HTTP/1.1 403 Forbidden"), "{out}");
            assert!(out.contains("X-Gatehouse-Refused: not-allowed"), "{out}");
        }
        assert_eq!(*seen.lock().unwrap(), 0);
        let ev = events.lock().unwrap();
        assert_eq!(ev.len(), 3);
        assert!(ev
            .iter()
            .all(|e| matches!(e, NetEvent::Refused { status: 403, .. })));
    }

    #[test]
    fn connections_beyond_the_cap_are_refused_until_one_ends() {
        let (port, _) = server("d");
        let (p, events) = proxy(&["localhost"]);
        // Connections that send nothing hold a thread each, waiting for their head.
        let held: Vec<TcpStream> = (0..MAX_CONNECTIONS)
            .map(|_| TcpStream::connect(p.local_addr()).unwrap())
            .collect();
        let out = ask(&p, "CONNECT localhost:1 HTTP/1.1\r\n\r\n");
        assert!(out.starts_with("HTTP/1.1 503 Service Unavailable"), "{out}");
        assert!(out.contains("too-many-connections"), "{out}");
        assert!(matches!(
            events.lock().unwrap().last(),
            Some(NetEvent::Refused { status: 503, .. })
        ));
        // The allowed twin: once they end, a request is served again.
        drop(held);
        let req =
            format!("GET http://localhost:{port}/ HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n");
        let mut out = ask(&p, &req);
        while out.starts_with("HTTP/1.1 503") {
            // The held connections' threads end as they read EOF; no timing is asserted.
            std::thread::yield_now();
            out = ask(&p, &req);
        }
        assert!(out.ends_with("hello from d"), "{out}");
    }

    #[test]
    fn a_malformed_request_gets_400_and_is_recorded() {
        let (p, events) = proxy(&["localhost"]);
        let out = ask(&p, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
        assert!(out.starts_with("HTTP/1.1 400 Bad Request"), "{out}");
        assert!(
            matches!(&events.lock().unwrap()[0], NetEvent::Refused { code, .. } if code == "malformed")
        );
    }

    #[test]
    fn a_name_resolving_to_loopback_is_refused_unless_its_entry_is_localhost() {
        let (port, seen) = server("d");
        for (entry, host, allowed) in [
            ("*.example.org", "rebound.example.org", false),
            ("rebound.example.org", "rebound.example.org", false),
            ("localhost", "localhost", true),
        ] {
            let events = Arc::new(Mutex::new(Vec::new()));
            let e = events.clone();
            let mut p = Proxy::new(
                AllowList::parse([entry]).unwrap(),
                Arc::new(move |ev: &NetEvent| e.lock().unwrap().push(ev.clone())),
            );
            // A resolver answering every name with the loopback address, as a rebinding
            // attacker's DNS server would.
            p.resolve = Arc::new(|_, port| Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))]));
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            let running = p.spawn(l).unwrap();
            let out = ask(
                &running,
                &format!("GET http://{host}:{port}/ HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"),
            );
            if allowed {
                assert!(out.ends_with("hello from d"), "{entry}: {out}");
            } else {
                assert!(out.starts_with("HTTP/1.1 403"), "{entry}: {out}");
                assert!(out.contains("internal-address"), "{entry}: {out}");
            }
        }
        assert_eq!(*seen.lock().unwrap(), 1);
    }

    /// Every byte a test server was sent.
    type Kept = Arc<Mutex<Vec<u8>>>;

    /// A server on every address of one family (`0.0.0.0` or `::`), as a person's own
    /// services are often bound; it keeps every byte it is sent, until the end.
    fn server_everywhere(any: &str) -> (u16, Kept, Arc<Mutex<usize>>) {
        let l = TcpListener::bind(any).unwrap();
        let port = l.local_addr().unwrap().port();
        let (bytes, seen) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(0)));
        let (b, n) = (bytes.clone(), seen.clone());
        std::thread::spawn(move || {
            for c in l.incoming() {
                let Ok(mut c) = c else { break };
                *n.lock().unwrap() += 1;
                let mut buf = [0u8; 4096];
                let got = c.read(&mut buf).unwrap_or(0);
                b.lock().unwrap().extend_from_slice(&buf[..got]);
                let _ = c.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nmine",
                );
                let _ = c.shutdown(Shutdown::Write);
                while let Ok(k) = c.read(&mut buf) {
                    if k == 0 {
                        break;
                    }
                    b.lock().unwrap().extend_from_slice(&buf[..k]);
                }
            }
        });
        (port, bytes, seen)
    }

    /// This machine's addresses other than loopback and link-local (its LAN's).
    fn lan_addresses() -> Vec<IpAddr> {
        crate::sys::ifaddrs::local_addresses()
            .unwrap()
            .into_iter()
            .filter(|a| match a {
                IpAddr::V4(v) => !v.is_loopback() && !v.is_link_local(),
                IpAddr::V6(v) => !v.is_loopback() && (v.segments()[0] & 0xffc0) != 0xfe80,
            })
            .collect()
    }

    /// A proxy admitting `entry` whose resolver answers every name with `to`.
    fn rebound(entry: &str, to: IpAddr) -> Running {
        let mut p = Proxy::new(
            AllowList::parse([entry]).unwrap(),
            Arc::new(|_: &NetEvent| {}),
        );
        p.resolve = Arc::new(move |_, port| Ok(vec![SocketAddr::new(to, port)]));
        p.spawn(TcpListener::bind("127.0.0.1:0").unwrap()).unwrap()
    }

    fn get(host: &str, port: u16) -> String {
        format!("GET http://{host}:{port}/ HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n")
    }

    #[test]
    fn a_name_resolving_to_an_address_of_this_machine_is_refused_in_every_spelling() {
        let lan = lan_addresses();
        // The machines this runs on have one (a CI runner's, a developer's); one without
        // would leave only the classifier's own tests.
        assert!(!lan.is_empty(), "this machine has no address but loopback");
        for ip in lan {
            let (port, bytes, seen) = server_everywhere(match ip {
                IpAddr::V4(_) => "0.0.0.0:0",
                IpAddr::V6(_) => "[::]:0",
            });
            let mut spellings = vec![ip];
            match ip {
                IpAddr::V4(v4) => {
                    spellings.push(IpAddr::V6(v4.to_ipv6_mapped()));
                    spellings.push(IpAddr::V6(v4.to_ipv6_compatible()));
                    spellings.push(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
                }
                IpAddr::V6(_) => spellings.push(IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED)),
            }
            for to in spellings {
                for entry in ["*.example.org", "lan.example.org"] {
                    let out = ask(&rebound(entry, to), &get("lan.example.org", port));
                    assert!(out.starts_with("HTTP/1.1 403"), "{to} via {entry}: {out}");
                    assert!(out.contains("internal-address"), "{to} via {entry}: {out}");
                }
            }
            assert_eq!(*seen.lock().unwrap(), 0, "{ip}: the server was reached");
            assert!(bytes.lock().unwrap().is_empty());
            // The allowed twin: an entry naming the address itself reaches it.
            let host = Host::Ip(ip).to_string();
            let out = ask(&rebound(&ip.to_string(), ip), &get(&host, port));
            assert!(out.ends_with("mine"), "{ip}: {out}");
            assert_eq!(*seen.lock().unwrap(), 1);
        }
    }

    #[test]
    fn an_address_added_after_the_interfaces_were_read_is_caught_on_the_connection() {
        let Some(ip) = lan_addresses().into_iter().find(IpAddr::is_ipv4) else {
            panic!("this machine has no IPv4 address but loopback");
        };
        let (port, bytes, _) = server_everywhere("0.0.0.0:0");
        let reads = Arc::new(AtomicUsize::new(0));
        let r = reads.clone();
        let mut p = Proxy::new(
            AllowList::parse(["*.example.org"]).unwrap(),
            Arc::new(|_: &NetEvent| {}),
        );
        p.resolve = Arc::new(move |_, port| Ok(vec![SocketAddr::new(ip, port)]));
        // As if the address came up after the list was read: the list misses it.
        p.interfaces = Arc::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
            Ok(vec![IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)])
        });
        let running = p.spawn(TcpListener::bind("127.0.0.1:0").unwrap()).unwrap();
        for _ in 0..2 {
            let out = ask(&running, &get("lan.example.org", port));
            assert!(out.starts_with("HTTP/1.1 403"), "{out}");
            assert!(out.contains("internal-address"), "{out}");
        }
        // Read at each connection, not once; and not a byte reached the service.
        assert_eq!(reads.load(Ordering::SeqCst), 2);
        assert!(bytes.lock().unwrap().is_empty());
    }

    #[test]
    fn every_request_of_a_connection_is_judged() {
        let (port, bytes, _) = server_everywhere("127.0.0.1:0");
        let (p, events) = proxy(&["localhost"]);
        let out = ask(
            &p,
            &format!(
                "GET http://localhost:{port}/first HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n\
                 GET http://127.0.0.1:{port}/second HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
            ),
        );
        assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
        assert!(out.contains("mine"), "{out}");
        assert!(out.contains("HTTP/1.1 403 Forbidden"), "{out}");
        let got = String::from_utf8_lossy(&bytes.lock().unwrap()).to_string();
        assert!(got.starts_with("GET /first HTTP/1.1\r\n"), "{got}");
        assert!(!got.contains("second"), "{got}");
        let ev = events.lock().unwrap();
        assert!(matches!(&ev[0], NetEvent::Allowed { .. }));
        assert!(matches!(&ev[1], NetEvent::Refused { status: 403, .. }));
    }

    #[test]
    fn the_journal_keeps_a_budget_of_refusals_and_counts_the_rest() {
        let t0 = Instant::now();
        let mut b = RefusalBudget::new(t0);
        for _ in 0..REFUSALS_PER_WINDOW {
            assert_eq!(b.admit(t0), (true, 0));
        }
        for _ in 0..5 {
            assert_eq!(b.admit(t0 + Duration::from_secs(1)), (false, 0));
        }
        // The next window journals again, the five counted first.
        assert_eq!(b.admit(t0 + REFUSAL_WINDOW), (true, 5));
        assert_eq!(b.admit(t0 + REFUSAL_WINDOW), (true, 0));
    }

    #[test]
    fn refusals_beyond_the_budget_are_answered_but_only_counted() {
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = events.clone();
        let proxy = Proxy::new(
            AllowList::parse(["example.org"]).unwrap(),
            Arc::new(move |e: &NetEvent| seen.lock().unwrap().push(e.clone())),
        );
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let running = proxy.spawn(l).unwrap();
        let _running = running;
        let n = REFUSALS_PER_WINDOW as usize + 20;
        for _ in 0..n {
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            c.write_all(b"CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n")
                .unwrap();
            let mut answer = String::new();
            let _ = c.read_to_string(&mut answer);
            assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        }
        {
            let events = events.lock().unwrap();
            let refused = events
                .iter()
                .filter(|e| matches!(e, NetEvent::Refused { .. }))
                .count();
            assert_eq!(refused, REFUSALS_PER_WINDOW as usize);
        }
        // The rest is journalled, counted, when the proxy stops.
        drop(_running);
        let events = events.lock().unwrap();
        assert_eq!(events.last(), Some(&NetEvent::Suppressed { refusals: 20 }));
    }

    #[test]
    fn a_head_trickled_in_is_cut_off_at_its_deadline() {
        let mut proxy = Proxy::new(
            AllowList::parse(["example.org"]).unwrap(),
            Arc::new(|_: &NetEvent| {}),
        );
        proxy.head_timeout = Duration::from_millis(300);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let _running = proxy.spawn(l).unwrap();
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        // One byte every 50 ms: each read of the proxy's would wait far less than a
        // per-read timeout, but the whole head never arrives within the deadline.
        let head = b"CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
        let mut cut = false;
        for byte in head.iter() {
            if c.write_all(&[*byte]).is_err() {
                cut = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Cut off: the proxy closed while the head was still coming, and answered nothing
        // (with a per-read timeout alone the head would complete and be answered).
        let mut rest = Vec::new();
        let _ = c.read_to_end(&mut rest);
        assert!(cut, "the whole head was accepted");
        assert!(rest.is_empty(), "{:?}", String::from_utf8_lossy(&rest));
    }

    #[test]
    fn localhost_is_answered_without_a_resolver() {
        let a = system_resolve(&Host::Name("localhost".into()), 8).unwrap();
        assert_eq!(a[0], SocketAddr::from(([127, 0, 0, 1], 8)));
        assert!(a.iter().all(|x| x.ip().is_loopback()));
    }

    #[test]
    fn an_unreachable_allowed_host_gets_502() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        let (p, events) = proxy(&["127.0.0.1"]);
        let out = ask(
            &p,
            &format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"),
        );
        assert!(out.starts_with("HTTP/1.1 502 Bad Gateway"), "{out}");
        // A tunnel connects only once its first bytes are judged: then it is closed,
        // and the 502 is in the journal.
        let out = ask(
            &p,
            &format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n"),
        );
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
        assert!(!out.contains("hello"), "{out}");
        let ev = events.lock().unwrap();
        assert!(
            matches!(&ev[..], [NetEvent::Refused { status: 502, .. }, NetEvent::Refused { status: 502, code, .. }] if code == "unreachable"),
            "{ev:?}"
        );
    }

    /// Open a tunnel to `localhost:port` and send `bytes` through it; what came back.
    fn through_tunnel(p: &Running, port: u16, bytes: &[u8]) -> Vec<u8> {
        let mut c = TcpStream::connect(p.local_addr()).unwrap();
        c.write_all(
            format!("CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n")
                .as_bytes(),
        )
        .unwrap();
        c.write_all(bytes).unwrap();
        let mut out = Vec::new();
        let _ = c.read_to_end(&mut out);
        out
    }

    #[test]
    fn a_hello_naming_another_server_is_refused_before_anything_connects() {
        use crate::net::hello::tests::client_hello;
        let (port, seen) = server("sni");
        let (p, events) = proxy(&["localhost"]);
        for (hello, code) in [
            (
                client_hello(Some("evil.example"), &[], 4096),
                "server-name-mismatch",
            ),
            (
                client_hello(Some("localhost.evil.example"), &[], 9),
                "server-name-mismatch",
            ),
            (
                client_hello(Some("127.0.0.1"), &[], 4096),
                "server-name-mismatch",
            ),
            (
                client_hello(Some("localhost"), &[(0xfe0d, vec![0; 8])], 4096),
                "encrypted-hello",
            ),
            (vec![22, 3, 3, 0, 4, 2, 0, 0, 0], "malformed-hello"),
        ] {
            let out = through_tunnel(&p, port, &hello);
            assert!(out.starts_with(b"HTTP/1.1 200 OK\r\n"), "{out:?}");
            assert!(out.ends_with(&[21, 3, 3, 0, 2, 2, 49]), "{code}: {out:?}");
            let ev = events.lock().unwrap();
            assert!(
                matches!(ev.last(), Some(NetEvent::Refused { code: c, .. }) if c == code),
                "{code}: {ev:?}"
            );
        }
        assert_eq!(
            *seen.lock().unwrap(),
            0,
            "a refused tunnel connected upstream"
        );
    }

    #[test]
    fn a_hello_naming_the_tunnel_host_or_none_goes_through() {
        use crate::net::hello::tests::client_hello;
        let (port, seen) = server("tls");
        let (p, events) = proxy(&["localhost"]);
        for hello in [
            client_hello(Some("LocalHost."), &[], 4096),
            client_hello(Some("localhost"), &[], 5),
            client_hello(None, &[], 4096),
        ] {
            let out = through_tunnel(&p, port, &hello);
            let text = String::from_utf8_lossy(&out);
            assert!(text.ends_with("hello from tls"), "{text}");
        }
        assert_eq!(*seen.lock().unwrap(), 3);
        assert!(events
            .lock()
            .unwrap()
            .iter()
            .all(|e| matches!(e, NetEvent::Allowed { method, .. } if method == "CONNECT")));
    }
}
