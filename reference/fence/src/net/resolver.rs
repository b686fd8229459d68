//! The fence's resolver (FENCE-NET-13): with the network off, the native jail's
//! `/etc/resolv.conf` names `127.0.0.1`, and the jail's port 53 there (a UDP socket and a
//! TCP listener its init bound and handed out, [`crate::fence::plan::Step::Resolver`]) is
//! served here, outside the jail, on one thread of the launcher. Every query is answered
//! `REFUSED` (RFC 1035 rcode 5: the server declines for policy reasons), at once, with the
//! question echoed so that the asking library accepts the answer and fails the lookup
//! instead of waiting; nothing is ever resolved and nothing is sent anywhere but back to
//! the jail. The names asked are recorded, bounded ([`MAX_NAMES`] distinct names of at most
//! [`MAX_NAME_LEN`] bytes, only names spelled with letters, digits, `-` and `_`), so that
//! `gatehouse exec` can say after the command which names it looked up and which flags
//! would allow them ([`hint_lines`]).
//!
//! `REFUSED` rather than `NXDOMAIN`: the name may well exist, and `NXDOMAIN` would say it
//! does not (a program may cache or report that as the truth); `REFUSED` says what
//! happened, and resolver libraries treat it as a failure of the server (glibc's
//! `getaddrinfo` returns `EAI_AGAIN`, "Temporary failure in name resolution", as it did
//! when the lookup met an unreachable network).
//!
//! May touch: the two sockets it is given; nothing of the file system.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Distinct names recorded; the others asked are counted.
pub const MAX_NAMES: usize = 8;
/// The longest name recorded (the longest a DNS name can be in text).
pub const MAX_NAME_LEN: usize = 253;
/// How long one TCP connection may take to send its queries (one at a time is served).
pub const TCP_DEADLINE: Duration = Duration::from_millis(250);
/// Queries answered on one TCP connection before it is closed.
pub const TCP_QUERIES: usize = 4;

/// DNS header length.
const HEADER: usize = 12;
/// `REFUSED`.
const RCODE_REFUSED: u8 = 5;
/// `FORMERR`: a query that cannot be read.
const RCODE_FORMERR: u8 = 1;

/// The names the jail asked for, bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lookups {
    /// Distinct names, in the order first asked (at most [`MAX_NAMES`]).
    pub names: Vec<String>,
    /// Queries for names beyond the first [`MAX_NAMES`] (not kept, so not told apart).
    pub more: u64,
    /// Queries whose name is not one to show (other characters, too long, unreadable).
    pub unshown: u64,
    /// Every query answered.
    pub queries: u64,
}

impl Lookups {
    fn record(&mut self, name: Option<String>) {
        self.queries = self.queries.saturating_add(1);
        match name {
            Some(n) if self.names.contains(&n) => {}
            Some(n) if self.names.len() < MAX_NAMES => self.names.push(n),
            Some(_) => self.more = self.more.saturating_add(1),
            None => self.unshown = self.unshown.saturating_add(1),
        }
    }
}

/// The question of a query: the name as text (lower case, no trailing dot), when it is one
/// to show, and where the question section ends.
fn question(q: &[u8]) -> Option<(Option<String>, usize)> {
    let mut at = HEADER;
    let mut name = String::new();
    let mut showable = true;
    loop {
        let len = *q.get(at)? as usize;
        at += 1;
        if len == 0 {
            break;
        }
        // A compression pointer or a reserved label type has no place in a question.
        if len & 0xC0 != 0 {
            return None;
        }
        let label = q.get(at..at + len)?;
        at += len;
        if !name.is_empty() {
            name.push('.');
        }
        for &b in label {
            if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
                name.push(b.to_ascii_lowercase() as char);
            } else {
                showable = false;
            }
        }
        if name.len() > MAX_NAME_LEN {
            showable = false;
        }
        if at > 512 {
            return None;
        }
    }
    // QTYPE and QCLASS.
    q.get(at..at + 4)?;
    let shown = (showable && !name.is_empty()).then_some(name);
    Some((shown, at + 4))
}

/// The answer to one query (`None` for a message that is no query: too short, or a
/// response), and the name asked when it is one to show. `REFUSED` with the question
/// echoed for a standard query of one question; `FORMERR` with the header alone otherwise.
pub fn answer(q: &[u8]) -> Option<(Vec<u8>, Option<String>)> {
    let header = q.get(..HEADER)?;
    if header[2] & 0x80 != 0 {
        return None;
    }
    let opcode = header[2] & 0x78;
    let rd = header[2] & 0x01;
    let qdcount = u16::from_be_bytes([header[4], header[5]]);
    let parsed = if opcode == 0 && qdcount == 1 {
        question(q)
    } else {
        None
    };
    let mut out = Vec::with_capacity(HEADER + 64);
    out.extend_from_slice(&header[..2]);
    out.push(0x80 | opcode | rd);
    match &parsed {
        Some(_) => out.push(RCODE_REFUSED),
        None => out.push(RCODE_FORMERR),
    }
    let questions: u16 = parsed.is_some().into();
    out.extend_from_slice(&questions.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    let name = match parsed {
        Some((name, end)) => {
            out.extend_from_slice(&q[HEADER..end]);
            name
        }
        None => None,
    };
    Some((out, name))
}

/// The resolver serving a jail's port 53 on a thread of its own, until dropped.
#[derive(Debug)]
pub struct Running {
    lookups: Arc<Mutex<Lookups>>,
    stop: Arc<AtomicBool>,
}

impl Running {
    /// Serve `udp` and `tcp` (the jail's `127.0.0.1:53`) on a new thread.
    pub fn spawn(udp: UdpSocket, tcp: TcpListener) -> std::io::Result<Running> {
        udp.set_nonblocking(true)?;
        tcp.set_nonblocking(true)?;
        let lookups = Arc::new(Mutex::new(Lookups::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (l, s) = (lookups.clone(), stop.clone());
        std::thread::Builder::new()
            .name("resolver".into())
            .stack_size(64 << 10)
            .spawn(move || serve(&udp, &tcp, &l, &s))?;
        Ok(Running { lookups, stop })
    }

    /// What was asked so far.
    pub fn lookups(&self) -> Lookups {
        match self.lookups.lock() {
            Ok(l) => l.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl Drop for Running {
    /// The thread stops at its next wake-up (within a quarter of a second); nothing waits
    /// for it.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn record(lookups: &Mutex<Lookups>, name: Option<String>) {
    match lookups.lock() {
        Ok(mut l) => l.record(name),
        Err(poisoned) => poisoned.into_inner().record(name),
    }
}

/// The thread: answer every datagram and every TCP query as it comes.
fn serve(udp: &UdpSocket, tcp: &TcpListener, lookups: &Mutex<Lookups>, stop: &AtomicBool) {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let mut buf = [0u8; 1500];
    let wake = Timespec {
        tv_sec: 0,
        tv_nsec: 250_000_000,
    };
    while !stop.load(Ordering::Relaxed) {
        let mut fds = [
            PollFd::new(udp, PollFlags::IN),
            PollFd::new(tcp, PollFlags::IN),
        ];
        match poll(&mut fds, Some(&wake)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return,
        }
        // Every datagram waiting.
        while let Ok((n, from)) = udp.recv_from(&mut buf) {
            if let Some((reply, name)) = answer(&buf[..n]) {
                record(lookups, name);
                let _ = udp.send_to(&reply, from);
            }
        }
        if let Ok((conn, _)) = tcp.accept() {
            serve_tcp(conn, lookups);
        }
    }
}

/// One TCP connection: up to [`TCP_QUERIES`] length-prefixed queries within
/// [`TCP_DEADLINE`], each answered, then closed.
fn serve_tcp(mut conn: TcpStream, lookups: &Mutex<Lookups>) {
    let deadline = Instant::now() + TCP_DEADLINE;
    if conn.set_nonblocking(false).is_err() {
        return;
    }
    for _ in 0..TCP_QUERIES {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || conn.set_read_timeout(Some(left)).is_err() {
            return;
        }
        let _ = conn.set_write_timeout(Some(left));
        let mut len = [0u8; 2];
        if conn.read_exact(&mut len).is_err() {
            return;
        }
        let mut q = vec![0u8; u16::from_be_bytes(len) as usize];
        if conn.read_exact(&mut q).is_err() {
            return;
        }
        let Some((reply, name)) = answer(&q) else {
            return;
        };
        record(lookups, name);
        let mut framed = (reply.len() as u16).to_be_bytes().to_vec();
        framed.extend_from_slice(&reply);
        if conn.write_all(&framed).is_err() {
            return;
        }
    }
}

/// What `gatehouse exec` says after a command whose lookups the fence refused: one line
/// per name (FENCE-NET-13), and one for the rest. A name among `registries` (the domains
/// `--fetch` allows) names that switch too.
pub fn hint_lines(l: &Lookups, registries: &[&str]) -> Vec<String> {
    let mut lines: Vec<String> = l
        .names
        .iter()
        .map(|n| {
            let fetch = if registries.contains(&n.as_str()) {
                ", or --fetch for the package registries"
            } else {
                ""
            };
            format!(
                "gatehouse exec: the network is off; the command looked up {n} (allow it with --allow-domain {n}{fetch})"
            )
        })
        .collect();
    let rest = l.more.saturating_add(l.unshown);
    let s = if rest == 1 { "" } else { "s" };
    if rest > 0 && !lines.is_empty() {
        lines.push(format!(
            "gatehouse exec: the network is off; the command made {rest} more lookup{s} of names not shown"
        ));
    } else if rest > 0 {
        lines.push(format!(
            "gatehouse exec: the network is off; the command made {rest} lookup{s} of names not shown (allow one with --allow-domain NAME)"
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A standard query for `name` (type A, class IN), with recursion desired.
    fn query(id: u16, name: &str) -> Vec<u8> {
        let mut q = id.to_be_bytes().to_vec();
        q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
        for label in name.split('.') {
            q.push(label.len() as u8);
            q.extend_from_slice(label.as_bytes());
        }
        q.extend_from_slice(&[0, 0, 1, 0, 1]);
        q
    }

    #[test]
    fn a_query_is_refused_with_its_question_echoed() {
        let q = query(0xBEEF, "Example.COM");
        let (a, name) = answer(&q).unwrap();
        assert_eq!(name.as_deref(), Some("example.com"));
        assert_eq!(&a[..2], &[0xBE, 0xEF]);
        assert_eq!(a[2], 0x81, "QR, opcode 0, RD copied");
        assert_eq!(a[3], RCODE_REFUSED, "no RA, rcode REFUSED");
        assert_eq!(&a[4..12], &[0, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&a[12..], &q[12..]);
    }

    #[test]
    fn what_is_no_query_gets_no_answer_or_a_format_error() {
        assert!(answer(&[0; 5]).is_none());
        let mut response = query(1, "a.b");
        response[2] |= 0x80;
        assert!(answer(&response).is_none());
        let mut truncated = query(2, "example.com");
        truncated.truncate(20);
        let (a, name) = answer(&truncated).unwrap();
        assert_eq!((a[3], a.len(), name), (RCODE_FORMERR, HEADER, None));
        // A pointer in the question.
        let mut pointer = query(3, "x");
        pointer[12] = 0xC0;
        assert_eq!(answer(&pointer).unwrap().0[3], RCODE_FORMERR);
    }

    #[test]
    fn only_plain_names_are_kept_and_the_record_is_bounded() {
        let (_, odd) = answer(&query(4, "a\x1b[31m.evil")).unwrap();
        assert_eq!(odd, None, "a control character is never shown");
        let long = [
            "a".repeat(63),
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(63),
        ]
        .join(".");
        assert_eq!(answer(&query(5, &long)).unwrap().1, None);
        let mut l = Lookups::default();
        for i in 0..10_000 {
            l.record(Some(format!("n{}.example", i % 20)));
        }
        l.record(None);
        assert_eq!(l.names.len(), MAX_NAMES);
        assert_eq!(l.queries, 10_001);
        assert_eq!(l.unshown, 1);
        let lines = hint_lines(&l, &["n1.example"]);
        assert_eq!(lines.len(), MAX_NAMES + 1);
        assert_eq!(
            lines[0],
            "gatehouse exec: the network is off; the command looked up n0.example (allow it with --allow-domain n0.example)"
        );
        assert_eq!(
            lines[1],
            "gatehouse exec: the network is off; the command looked up n1.example (allow it with --allow-domain n1.example, or --fetch for the package registries)"
        );
        assert_eq!(
            lines[MAX_NAMES],
            "gatehouse exec: the network is off; the command made 6001 more lookups of names not shown"
        );
        assert!(hint_lines(&Lookups::default(), &[]).is_empty());
    }

    #[test]
    fn the_thread_answers_over_udp_and_tcp_and_records() {
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        let (ua, ta) = (udp.local_addr().unwrap(), tcp.local_addr().unwrap());
        let running = Running::spawn(udp, tcp).unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        client.send_to(&query(7, "pypi.org"), ua).unwrap();
        let mut buf = [0u8; 512];
        let (n, _) = client.recv_from(&mut buf).unwrap();
        assert_eq!(buf[3], RCODE_REFUSED);
        assert_eq!(&buf[..2], &[0, 7]);
        assert!(n > HEADER);
        let mut conn = TcpStream::connect(ta).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let q = query(8, "crates.io");
        let mut framed = (q.len() as u16).to_be_bytes().to_vec();
        framed.extend_from_slice(&q);
        conn.write_all(&framed).unwrap();
        let mut len = [0u8; 2];
        conn.read_exact(&mut len).unwrap();
        let mut a = vec![0u8; u16::from_be_bytes(len) as usize];
        conn.read_exact(&mut a).unwrap();
        assert_eq!((a[1], a[3]), (8, RCODE_REFUSED));
        assert_eq!(running.lookups().names, vec!["pypi.org", "crates.io"]);
    }
}
