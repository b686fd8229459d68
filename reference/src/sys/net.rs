//! The jail's side of the `allow-list` network mode: bring up the loopback interface of a
//! fresh network namespace (`SIOCSIFFLAGS`), listen on it, and hand the listening socket
//! out to the launcher over an inherited socket pair (`SCM_RIGHTS`), so the proxy outside
//! accepts the jail's connections without any address of the host becoming reachable.
//! Linux 2.2 (`SCM_RIGHTS`), network namespaces Linux 2.6.29.

use std::io;
use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Instant;

use rustix::net::{
    recvmsg, sendmsg, socketpair, AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage,
    RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
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

/// A connected UNIX stream pair, both ends close-on-exec (the caller makes the child's
/// end inheritable with [`super::handoff`]'s rules).
pub fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    socketpair(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )
    .map_err(io::Error::from)
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
        SendFlags::empty(),
    )?;
    Ok(())
}

/// Receive one descriptor sent by [`send_fd`] on `from`, or fail at `deadline`.
pub fn recv_fd(from: &OwnedFd, deadline: Instant) -> io::Result<OwnedFd> {
    if !super::handoff::readable_by(from, deadline)? {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the jail handed no listening socket by the deadline",
        ));
    }
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
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
            "the jail closed before handing its listening socket",
        ));
    }
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(mut fds) = m {
            if let Some(fd) = fds.next() {
                return Ok(fd);
            }
        }
    }
    Err(io::Error::other("no descriptor in the jail's message"))
}
