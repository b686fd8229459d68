//! The jail's side of the `allow-list` network mode: bring up the loopback interface of a
//! fresh network namespace (`SIOCSIFFLAGS`), listen on it, and hand the listening socket
//! out to the launcher over an inherited socket pair (`SCM_RIGHTS`), so the proxy outside
//! accepts the jail's connections without any address of the host becoming reachable.
//! It also hands the jail's network namespace from the helper, or from a thread of the
//! init's own, to the init ([`NetworkHandoff`], [`OwnNetwork`]; Linux 3.0 for `setns(2)` of
//! a network namespace, 3.17 for `/proc/thread-self`).
//! Linux 2.2 (`SCM_RIGHTS`), network namespaces Linux 2.6.29.

use std::io;
use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Instant;

use rustix::net::{
    recvmsg, sendmsg, AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags,
    SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketType,
};

/// Set `IFF_UP` on the loopback interface of this network namespace (needs
/// `CAP_NET_ADMIN` in the namespace's owning user namespace).
pub fn loopback_up() -> io::Result<()> {
    let sock = rustix::net::socket(AddressFamily::INET, SocketType::DGRAM, None)?;
    use std::os::fd::AsRawFd;
    let mut req: libc::ifreq = unsafe_zeroed_ifreq();
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    // SAFETY: `req` is a valid, NUL-terminated ifreq for "lo" that outlives the call, and
    // SIOCGIFFLAGS only writes `ifr_flags` inside it.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the union member read is the one SIOCGIFFLAGS just wrote.
    let flags = unsafe { req.ifr_ifru.ifru_flags };
    if flags & libc::IFF_UP as libc::c_short != 0 {
        // Already up (bubblewrap brings it up in the namespaces it builds).
        return Ok(());
    }
    req.ifr_ifru.ifru_flags = flags | libc::IFF_UP as libc::c_short;
    // SAFETY: as above; SIOCSIFFLAGS reads the name and flags of `req` only.
    if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS as _, &req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn unsafe_zeroed_ifreq() -> libc::ifreq {
    // SAFETY: `ifreq` is plain old data (a name array and a union of integers and
    // addresses) for which all-zero bytes are a valid value.
    unsafe { std::mem::zeroed() }
}

/// Listen on `127.0.0.1:port` in this network namespace.
pub fn listen_loopback(port: u16) -> io::Result<TcpListener> {
    TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))
}

/// The jail's end of the fence's resolver (FENCE-NET-13): a UDP socket and a TCP listener
/// on `127.0.0.1:53` of this network namespace, for the launcher to answer from outside.
/// Port 53 needs `CAP_NET_BIND_SERVICE` in the namespace's owning user namespace, so this
/// runs before the capabilities are dropped; neither socket asks for `SO_REUSEPORT`, and
/// the UDP one not for `SO_REUSEADDR`, so no jailed process can bind the port beside them
/// (nor could it bind below 1024 at all once its capabilities are gone).
pub fn bind_resolver() -> io::Result<(std::net::UdpSocket, TcpListener)> {
    let at = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 53);
    let udp = std::net::UdpSocket::bind(at)?;
    let tcp = TcpListener::bind(at)?;
    Ok((udp, tcp))
}

/// Send the descriptors `fds` in one message over the connected UNIX socket `over`.
pub fn send_fds(over: BorrowedFd<'_>, fds: &[BorrowedFd<'_>]) -> io::Result<()> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(4))];
    if fds.len() > 4 {
        return Err(io::Error::other(
            "more than four descriptors in one message",
        ));
    }
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(io::Error::other("no room for the descriptors"));
    }
    sendmsg(
        over,
        &[io::IoSlice::new(b"R")],
        &mut control,
        SendFlags::NOSIGNAL,
    )?;
    Ok(())
}

/// Receive exactly `n` descriptors (at most four) sent in one message by [`send_fds`] on
/// `from`, or fail at `deadline`.
pub fn recv_fds(from: &OwnedFd, deadline: Instant, n: usize) -> io::Result<Vec<OwnedFd>> {
    if !super::handoff::readable_by(from, deadline)? {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the jail handed nothing by the deadline",
        ));
    }
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8; 1];
    let msg = recvmsg(
        from.as_fd(),
        &mut [io::IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    if msg.bytes == 0 {
        return Err(io::Error::other(
            "the jail closed before handing its sockets",
        ));
    }
    let mut got = Vec::new();
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = m {
            got.extend(fds);
        }
    }
    if got.len() != n {
        return Err(io::Error::other(format!(
            "{} descriptors in the jail's message, {n} expected",
            got.len()
        )));
    }
    Ok(got)
}

/// A connected UNIX stream pair, both ends close-on-exec (the caller makes the child's
/// end inheritable with [`super::handoff`]'s rules).
pub fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    super::handoff::stream_pair()
}

/// Make `fd` survive exec (for the one spawn that hands it over).
pub fn inheritable(fd: &OwnedFd) -> io::Result<()> {
    rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty()).map_err(io::Error::from)
}

/// Send `fd` over the connected UNIX socket `over`.
pub fn send_fd(over: BorrowedFd<'_>, fd: BorrowedFd<'_>) -> io::Result<()> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds = [fd];
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(io::Error::other("no room for the descriptor"));
    }
    sendmsg(
        over,
        &[io::IoSlice::new(b"L")],
        &mut control,
        SendFlags::NOSIGNAL,
    )?;
    Ok(())
}

/// Send `why` instead of a descriptor over `over`: the sender could not make what
/// [`recv_fd_or_text`] waits for.
pub fn send_text(over: BorrowedFd<'_>, why: &str) -> io::Result<()> {
    let mut bytes = why.as_bytes();
    if bytes.len() > TEXT_MAX {
        bytes = &bytes[..TEXT_MAX];
    }
    if bytes.is_empty() {
        bytes = b"?";
    }
    rustix::net::send(over, bytes, SendFlags::NOSIGNAL)?;
    Ok(())
}

/// The longest reason [`send_text`] sends.
const TEXT_MAX: usize = 512;

/// One message on `from`, waited for until `deadline` (`None`: nothing came): the first
/// descriptor it carries, if any, and how many of its bytes landed in `text`.
fn recv_message(
    from: &OwnedFd,
    deadline: Instant,
    text: &mut [u8],
) -> io::Result<Option<(Option<OwnedFd>, usize)>> {
    if !super::handoff::readable_by(from, deadline)? {
        return Ok(None);
    }
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let msg = recvmsg(
        from.as_fd(),
        &mut [io::IoSliceMut::new(text)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    let mut received = None;
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = m {
            for fd in fds {
                received.get_or_insert(fd);
            }
        }
    }
    Ok(Some((received, msg.bytes)))
}

/// Receive the descriptor of [`send_fd`], or the reason of [`send_text`] as the error, on
/// `from`; fail at `deadline` or when the sender closed without a word.
pub fn recv_fd_or_text(from: &OwnedFd, deadline: Instant) -> io::Result<OwnedFd> {
    let mut text = [0u8; TEXT_MAX];
    match recv_message(from, deadline, &mut text)? {
        None => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "nothing was handed over by the deadline",
        )),
        Some((Some(fd), _)) => Ok(fd),
        Some((None, 0)) => Err(io::Error::other("the sender closed without a word")),
        Some((None, n)) => Err(io::Error::other(
            String::from_utf8_lossy(&text[..n]).into_owned(),
        )),
    }
}

/// Receive one descriptor sent by [`send_fd`] on `from`, or fail at `deadline`.
pub fn recv_fd(from: &OwnedFd, deadline: Instant) -> io::Result<OwnedFd> {
    let mut byte = [0u8; 1];
    match recv_message(from, deadline, &mut byte)? {
        None => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the jail handed no listening socket by the deadline",
        )),
        Some((_, 0)) => Err(io::Error::other(
            "the jail closed before handing its listening socket",
        )),
        Some((Some(fd), _)) => Ok(fd),
        Some((None, _)) => Err(io::Error::other("no descriptor in the jail's message")),
    }
}

/// The network namespace a jail's helper makes for its init (Linux 3.0 for `setns(2)` of
/// a network namespace): making one takes 0.4-0.6 ms, nearly all of a new jail's
/// `unshare`, so the helper makes it after the fork while the init builds the mount tree,
/// and hands it over on a socket pair made before the fork. The init joins it before
/// anything that depends on the network (the probe's legs, the listener, Landlock's
/// scopes). A helper that fails says why on the same socket; the init then fails its step
/// with that reason, and a jail without its network namespace never runs a command.
pub struct NetworkHandoff {
    helper: OwnedFd,
    init: OwnedFd,
    /// The helper's `/proc/thread-self/ns`, opened before the fork: once the init has
    /// pivoted into the new root, the helper (which shares its mount namespace) sees the
    /// jail's `/proc`, where it has no PID.
    ns_dir: OwnedFd,
}

impl NetworkHandoff {
    /// The socket pair and the helper's namespace directory, made before the fork.
    pub fn new() -> io::Result<NetworkHandoff> {
        use rustix::fs::{Mode, OFlags};
        let (helper, init) = pair()?;
        let ns_dir = rustix::fs::open(
            "/proc/thread-self/ns",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(NetworkHandoff {
            helper,
            init,
            ns_dir,
        })
    }

    /// The helper's side, after the fork: a new network namespace with its loopback up,
    /// sent to the init; or the reason it could not be made.
    pub fn make_and_send(self) {
        use rustix::fs::{Mode, OFlags};
        drop(self.init);
        // A namespace link is read when opened: after the unshare it names the new one.
        let stage = |what: &'static str| {
            move |e: io::Error| io::Error::new(e.kind(), format!("the helper's {what}: {e}"))
        };
        let made = super::ns::unshare_network()
            .map_err(stage("unshare(CLONE_NEWNET)"))
            .and_then(|()| loopback_up().map_err(stage("loopback")))
            .and_then(|()| {
                rustix::fs::openat(
                    &self.ns_dir,
                    "net",
                    OFlags::RDONLY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(io::Error::from)
                .map_err(stage("open of its network namespace"))
            });
        let sent = match made {
            Ok(ns) => send_fd(self.helper.as_fd(), ns.as_fd()),
            Err(e) => send_text(self.helper.as_fd(), &e.to_string()),
        };
        // An init that is gone already has nothing to join; its end says so to nobody.
        let _ = sent;
    }

    /// The init's side, after the fork: its end, held until [`join_network`].
    pub fn into_init_end(self) -> OwnedFd {
        self.init
    }
}

/// A network namespace made on a thread of the init's own while the init goes on (it
/// builds its mount tree), for an init with no helper outside: it
/// owns its user namespace, so its thread may make one (`CLONE_NEWNET` needs
/// `CAP_SYS_ADMIN` there). The thread makes it, brings its loopback up, and hands back a
/// descriptor of it, which the init joins ([`OwnNetwork::join`]) as it would one a helper
/// sent. The namespace is per thread until joined: the init itself stays where it is.
pub struct OwnNetwork {
    thread: std::thread::JoinHandle<io::Result<OwnedFd>>,
}

impl OwnNetwork {
    /// Start the thread. Its namespace is found through `/proc/thread-self` of the `/proc`
    /// this process sees now (opened here), since the init's root may have moved by the
    /// time the thread looks.
    pub fn start() -> io::Result<OwnNetwork> {
        use rustix::fs::{Mode, OFlags};
        let proc_dir = rustix::fs::open(
            "/proc",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let stage = |what: &'static str| {
            move |e: io::Error| io::Error::new(e.kind(), format!("the init's {what}: {e}"))
        };
        let thread = std::thread::Builder::new()
            .name("netns".into())
            .stack_size(64 << 10)
            .spawn(move || {
                super::ns::unshare_network().map_err(stage("unshare(CLONE_NEWNET)"))?;
                loopback_up().map_err(stage("loopback"))?;
                rustix::fs::openat(
                    &proc_dir,
                    "thread-self/ns/net",
                    OFlags::RDONLY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(io::Error::from)
                .map_err(stage("open of its network namespace"))
            })?;
        Ok(OwnNetwork { thread })
    }

    /// Wait for the thread (gone once this returns) and its namespace.
    pub fn made(self) -> io::Result<OwnedFd> {
        self.thread
            .join()
            .map_err(|_| io::Error::other("the init's network thread panicked"))?
    }

    /// Join the namespace the thread made, refusing one that is this process's own.
    pub fn join(self) -> io::Result<()> {
        let ns = self.made()?;
        join_given(ns)
    }
}

/// A network namespace of this process's own, its loopback up, made by the calling thread
/// itself: for an init with no helper outside, which owns its user namespace and so may
/// make one (`CLONE_NEWNET` needs `CAP_SYS_ADMIN` there), where no core is free for
/// [`OwnNetwork`]'s thread.
pub fn make_own() -> io::Result<()> {
    let stage = |what: &'static str| {
        move |e: io::Error| io::Error::new(e.kind(), format!("the init's {what}: {e}"))
    };
    super::ns::unshare_network().map_err(stage("unshare(CLONE_NEWNET)"))?;
    loopback_up().map_err(stage("loopback"))
}

/// Whether a core is free right now: fewer tasks runnable on the whole system (the
/// fourth field of `/proc/loadavg`, the caller among them) than cores this process may
/// run on. A guess of one instant, for work that may go on a thread of its own or not
/// ([`OwnNetwork`]): where it is wrong the work is only slower. `false` where it cannot
/// be read.
pub fn core_free() -> bool {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let running = std::fs::read_to_string("/proc/loadavg").ok().and_then(|l| {
        let field = l.split_whitespace().nth(3)?.to_owned();
        field.split('/').next()?.parse::<usize>().ok()
    });
    matches!(running, Some(r) if r < cores)
}

/// Join the network namespace the helper sent on `from` ([`NetworkHandoff`]), refusing
/// one that is this process's own (it would be the host's).
pub fn join_network(from: &OwnedFd, deadline: Instant) -> io::Result<()> {
    join_given(recv_fd_or_text(from, deadline)?)
}

/// Join the network namespace `ns`, refusing one that is this process's own (it would be
/// the host's).
fn join_given(ns: OwnedFd) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let own = std::fs::metadata("/proc/thread-self/ns/net")?;
    let given = rustix::fs::fstat(&ns)?;
    if given.st_dev as u64 == own.dev() && given.st_ino as u64 == own.ino() {
        return Err(io::Error::other(
            "the namespace handed over is this process's own network namespace",
        ));
    }
    rustix::thread::move_into_link_name_space(
        ns.as_fd(),
        Some(rustix::thread::LinkNameSpaceType::Network),
    )
    .map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn later() -> std::time::Instant {
        std::time::Instant::now() + std::time::Duration::from_secs(5)
    }

    #[test]
    fn the_init_refuses_its_own_network_namespace() {
        use std::os::fd::AsFd;
        let (helper, init) = pair().unwrap();
        let own = std::fs::File::open("/proc/thread-self/ns/net").unwrap();
        send_fd(helper.as_fd(), own.as_fd()).unwrap();
        let e = join_network(&init, later()).unwrap_err().to_string();
        assert!(e.contains("own network namespace"), "{e}");
    }

    #[test]
    fn descriptors_travel_together_and_a_wrong_count_fails() {
        use std::os::fd::AsFd;
        let (a, b) = pair().unwrap();
        let one = std::fs::File::open("/proc/self/stat").unwrap();
        let two = std::fs::File::open("/proc/self/status").unwrap();
        send_fds(a.as_fd(), &[one.as_fd(), two.as_fd()]).unwrap();
        assert_eq!(recv_fds(&b, later(), 2).unwrap().len(), 2);
        send_fds(a.as_fd(), &[one.as_fd()]).unwrap();
        let e = recv_fds(&b, later(), 2).unwrap_err().to_string();
        assert!(e.contains("1 descriptors"), "{e}");
        drop(a);
        assert!(recv_fds(&b, later(), 2).is_err());
    }

    #[test]
    fn the_helpers_reason_fails_the_join() {
        use std::os::fd::AsFd;
        let (helper, init) = pair().unwrap();
        send_text(helper.as_fd(), "unshare: No space left on device").unwrap();
        let e = join_network(&init, later()).unwrap_err().to_string();
        assert_eq!(e, "unshare: No space left on device");
        let (helper, init) = pair().unwrap();
        drop(helper);
        let e = join_network(&init, later()).unwrap_err().to_string();
        assert!(e.contains("closed without a word"), "{e}");
    }
}
