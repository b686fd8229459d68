//! The addresses of this machine's network interfaces, as `getifaddrs(3)` lists them
//! (glibc: a netlink `RTM_GETADDR` dump of the calling thread's network namespace; the
//! BSDs and macOS: `sysctl`). The proxy of the `allow-list` network mode reads them at
//! every connection it makes, so that an address added after the session started
//! (a VPN coming up, a container bridge) is refused like the others (FENCE-NET-9).
//! POSIX-free but universal on Linux (glibc 2.3.3, musl 1.1.5) and the BSDs.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Every IPv4 and IPv6 address of every interface of this network namespace, up or down
/// (an interface that is down may come up while a session runs), loopback included.
/// Interfaces without an address (or with another family's) contribute nothing.
pub fn local_addresses() -> io::Result<Vec<IpAddr>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: `head` is a valid out-pointer; on success the list it points to is owned by
    // us until `freeifaddrs`, which is called exactly once below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a non-null node of the list getifaddrs returned, not yet freed.
        let node = unsafe { &*cur };
        let sa = node.ifa_addr;
        if !sa.is_null() {
            // SAFETY: `ifa_addr` is non-null and points to a sockaddr whose `sa_family`
            // tells its real type; each cast below matches the family it is read under.
            let family = i32::from(unsafe { (*sa).sa_family });
            if family == libc::AF_INET {
                // SAFETY: an AF_INET address is a sockaddr_in.
                let sin = unsafe { &*(sa as *const libc::sockaddr_in) };
                out.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                    sin.sin_addr.s_addr,
                ))));
            } else if family == libc::AF_INET6 {
                // SAFETY: an AF_INET6 address is a sockaddr_in6.
                let sin6 = unsafe { &*(sa as *const libc::sockaddr_in6) };
                out.push(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)));
            }
        }
        cur = node.ifa_next;
    }
    // SAFETY: `head` came from a successful getifaddrs and is freed once; no reference
    // into the list outlives this point (the addresses were copied out).
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_among_them() {
        let all = local_addresses().unwrap();
        assert!(all.contains(&IpAddr::V4(Ipv4Addr::LOCALHOST)), "{all:?}");
    }
}
