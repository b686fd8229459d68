//! Which destination addresses are this machine or its link (FENCE-NET-9): the addresses
//! a name the allow-list admits must not reach unless its entry names such a destination.
//! Pure: the local interfaces' addresses are passed in (the proxy reads them at each
//! connection, `sys::ifaddrs`), so every rule here is tested without a network.
//!
//! An IPv6 address that carries an IPv4 one is judged by the IPv4 one as well: the
//! IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`) and IPv4-translated
//! (`::ffff:0:a.b.c.d`) forms, which the kernel connects to the IPv4 address, and the
//! translation prefixes a NAT64 gateway or a 6to4 relay turns back into it (the
//! well-known `64:ff9b::/96`, the local-use `64:ff9b:1::/48` at each prefix length of
//! RFC 6052, and `2002::/16`).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is this machine or its link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Internal {
    /// `0.0.0.0/8` or `::`: Linux connects the unspecified address to this machine.
    Unspecified,
    /// `127.0.0.0/8` or `::1`.
    Loopback,
    /// `169.254.0.0/16` or `fe80::/10` (a cloud host's metadata service lives there).
    LinkLocal,
    /// An address of one of this machine's interfaces (its LAN address, a bridge's, a
    /// VPN's), where every service bound to `0.0.0.0` or `::` listens.
    Interface,
}

impl fmt::Display for Internal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Internal::Unspecified => "an unspecified address",
            Internal::Loopback => "a loopback address",
            Internal::LinkLocal => "a link-local address",
            Internal::Interface => "an address of this machine's interfaces",
        })
    }
}

/// The IPv4 addresses an IPv6 address may stand for: one for the forms the kernel
/// connects as IPv4, and those a translator or relay would reach.
pub fn embedded_v4(a: Ipv6Addr) -> Vec<Ipv4Addr> {
    let s = a.segments();
    let o = a.octets();
    let last = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    let mut out = Vec::new();
    // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), ::ffff:0:a.b.c.d (translated).
    if s[..5] == [0; 5] && matches!(s[5], 0 | 0xffff)
        || s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0
    {
        out.push(last);
    }
    // NAT64, the well-known prefix (RFC 6052): 64:ff9b::/96.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        out.push(last);
    }
    // NAT64, the local-use prefix (RFC 8215): 64:ff9b:1::/48, whose length the operator
    // chooses; RFC 6052 places the IPv4 address by that length, skipping bits 64..72 (the
    // `u` octet, zero) and leaving the suffix after it zero, which tells the lengths
    // apart where they could be meant.
    if s[..3] == [0x64, 0xff9b, 1] && o[8] == 0 {
        let zero = |from: usize| o[from..].iter().all(|b| *b == 0);
        if zero(11) {
            out.push(Ipv4Addr::new(o[6], o[7], o[9], o[10])); // /48
        }
        if zero(12) {
            out.push(Ipv4Addr::new(o[7], o[9], o[10], o[11])); // /56
        }
        if zero(13) {
            out.push(Ipv4Addr::new(o[9], o[10], o[11], o[12])); // /64
        }
    }
    if s[..3] == [0x64, 0xff9b, 1] {
        out.push(last); // /96
    }
    // 6to4 (RFC 3056): 2002:a.b.c.d::/48.
    if s[0] == 0x2002 {
        out.push(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    }
    out
}

/// Whether `ip` is this machine or its link, and why; `local` is every address of this
/// machine's interfaces.
pub fn classify(ip: IpAddr, local: &[IpAddr]) -> Option<Internal> {
    if local.contains(&ip) {
        return Some(Internal::Interface);
    }
    match ip {
        IpAddr::V4(a) => {
            let o = a.octets();
            if o[0] == 0 {
                Some(Internal::Unspecified)
            } else if a.is_loopback() {
                Some(Internal::Loopback)
            } else if a.is_link_local() {
                Some(Internal::LinkLocal)
            } else {
                None
            }
        }
        IpAddr::V6(a) => {
            if a.is_unspecified() {
                return Some(Internal::Unspecified);
            }
            if a.is_loopback() {
                return Some(Internal::Loopback);
            }
            if a.segments()[0] & 0xffc0 == 0xfe80 {
                return Some(Internal::LinkLocal);
            }
            embedded_v4(a)
                .into_iter()
                .find_map(|v4| classify(IpAddr::V4(v4), local))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    /// A machine with a LAN address in each family.
    fn lan() -> Vec<IpAddr> {
        vec![ip("127.0.0.1"), ip("::1"), ip("192.0.2.2"), ip("fd00::2")]
    }

    #[rstest::rstest]
    #[case("0.0.0.0", Internal::Unspecified)]
    #[case("0.1.2.3", Internal::Unspecified)]
    #[case("::", Internal::Unspecified)]
    #[case("127.0.0.1", Internal::Interface)]
    #[case("127.3.4.5", Internal::Loopback)]
    #[case("::1", Internal::Interface)]
    #[case("169.254.169.254", Internal::LinkLocal)]
    #[case("fe80::1", Internal::LinkLocal)]
    #[case("febf::1", Internal::LinkLocal)]
    #[case("192.0.2.2", Internal::Interface)]
    #[case("fd00::2", Internal::Interface)]
    #[case("::ffff:192.0.2.2", Internal::Interface)]
    #[case("::ffff:127.0.0.2", Internal::Loopback)]
    #[case("::ffff:0.0.0.0", Internal::Unspecified)]
    #[case("::ffff:169.254.1.1", Internal::LinkLocal)]
    #[case("::192.0.2.2", Internal::Interface)]
    #[case("::127.0.0.2", Internal::Loopback)]
    #[case("::ffff:0:192.0.2.2", Internal::Interface)]
    #[case("64:ff9b::192.0.2.2", Internal::Interface)]
    #[case("64:ff9b::127.0.0.1", Internal::Interface)]
    #[case("64:ff9b::a9fe:a9fe", Internal::LinkLocal)]
    #[case("64:ff9b:1:c000:2:200::", Internal::Interface)] // /48: c0.00 | 02.02
    #[case("64:ff9b:1::c000:202", Internal::Interface)] // /96
    #[case("64:ff9b:1:0:7f:0:200::", Internal::Loopback)] // /64
    #[case("2002:c000:202::1", Internal::Interface)]
    #[case("2002:7f00:1::", Internal::Interface)]
    fn internal(#[case] a: &str, #[case] why: Internal) {
        assert_eq!(classify(ip(a), &lan()), Some(why), "{a}");
    }

    #[rstest::rstest]
    #[case("192.0.2.3")]
    #[case("10.0.0.1")]
    #[case("192.168.1.1")]
    #[case("93.184.215.14")]
    #[case("fd00::3")]
    #[case("2606:4700::1111")]
    #[case("::ffff:10.0.0.1")]
    #[case("64:ff9b::93.184.215.14")]
    #[case("fec0::1")]
    #[case("64:ff9b:1::5db8:d70e")] // /96: the other lengths read zeros only where a suffix is
    #[case("1.0.0.127")]
    fn elsewhere(#[case] a: &str) {
        assert_eq!(classify(ip(a), &lan()), None, "{a}");
    }

    proptest! {
        /// Every address of every interface is refused, in each spelling the kernel
        /// connects to it by.
        #[test]
        fn every_local_address_is_refused_in_every_spelling(
            v4 in any::<u32>(), v6 in any::<u128>()
        ) {
            let (v4, v6) = (Ipv4Addr::from(v4), Ipv6Addr::from(v6));
            let local = vec![IpAddr::V4(v4), IpAddr::V6(v6)];
            prop_assert!(classify(IpAddr::V4(v4), &local).is_some());
            prop_assert!(classify(IpAddr::V6(v6), &local).is_some());
            prop_assert!(classify(IpAddr::V6(v4.to_ipv6_mapped()), &local).is_some());
            prop_assert!(classify(IpAddr::V6(v4.to_ipv6_compatible()), &local).is_some());
            let nat64 = Ipv6Addr::from((0x0064_ff9b_u128 << 96) | u128::from(u32::from(v4)));
            prop_assert!(classify(IpAddr::V6(nat64), &local).is_some());
        }

        /// The whole of 127/8, 169.254/16, fe80::/10 and 0/8, with no interface at all.
        #[test]
        fn the_reserved_ranges_are_refused_whole(low in any::<u32>(), low6 in any::<u128>()) {
            let none: [IpAddr; 0] = [];
            let l = Ipv4Addr::from((127 << 24) | (low & 0x00ff_ffff));
            prop_assert_eq!(classify(IpAddr::V4(l), &none), Some(Internal::Loopback));
            let k = Ipv4Addr::from((0xa9fe << 16) | (low & 0xffff));
            prop_assert_eq!(classify(IpAddr::V4(k), &none), Some(Internal::LinkLocal));
            let z = Ipv4Addr::from(low & 0x00ff_ffff);
            prop_assert_eq!(classify(IpAddr::V4(z), &none), Some(Internal::Unspecified));
            let f = Ipv6Addr::from((0xfe80_u128 << 112) | (low6 >> 10));
            prop_assert_eq!(classify(IpAddr::V6(f), &none), Some(Internal::LinkLocal));
            prop_assert!(classify(IpAddr::V6(l.to_ipv6_mapped()), &none).is_some());
        }

        /// A public IPv4 address (outside the reserved ranges and not an interface's) is
        /// reachable, in the mapped spelling too.
        #[test]
        fn other_addresses_pass(v4 in any::<u32>()) {
            let a = Ipv4Addr::from(v4);
            let o = a.octets();
            prop_assume!(o[0] != 0 && o[0] != 127 && !(o[0] == 169 && o[1] == 254));
            prop_assume!(!lan().contains(&IpAddr::V4(a)));
            prop_assert_eq!(classify(IpAddr::V4(a), &lan()), None);
            prop_assert_eq!(classify(IpAddr::V6(a.to_ipv6_mapped()), &lan()), None);
        }
    }
}
