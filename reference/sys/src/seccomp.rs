//! A hand-written seccomp-BPF filter (Linux 3.5; `SECCOMP_RET_KILL_PROCESS` 4.14) that
//! closes what the mount tree and Landlock leave open:
//!
//! - `socket(AF_UNIX, ...)` → `EACCES`: a pathname UNIX socket stays connectable through a
//!   read-only bind and under Landlock before ABI 9 (FACTS.md, section 9); `connect()`'s
//!   address cannot be inspected by BPF, so the socket itself is refused;
//! - `socketpair(AF_UNIX, ...)` of any type but `SOCK_STREAM` and `SOCK_SEQPACKET` →
//!   `EACCES`: a datagram pair (`SOCK_RAW` is one too, unix(7)) can be re-`connect`ed, and
//!   `sendto` names any address, pathname or abstract; a stream or seqpacket pair is
//!   connected for good (`connect` is `EISCONN`, `sendto`'s address is refused or
//!   ignored), so the pairs programs use for their children's pipes (libuv) stay;
//! - `socket` of any family but `AF_INET`, `AF_INET6`, `AF_ALG` and `AF_NETLINK` →
//!   `EAFNOSUPPORT`, and `AF_NETLINK` of any protocol but `NETLINK_ROUTE` and
//!   `NETLINK_SOCK_DIAG` → `EPROTONOSUPPORT` (FENCE-SOCK-5): `AF_VSOCK` reaches the host and
//!   its virtual machines from every network namespace, and families the jail has no use
//!   for (Bluetooth, CAN, TIPC, ...) are kernel surface or host devices; `socketpair` of
//!   any family but `AF_UNIX` → `EAFNOSUPPORT` too;
//! - `add_key`, `request_key`, `keyctl` → `ENOSYS` (FENCE-JAIL-19): the kernel's keyrings
//!   are not namespaced, so the session keyring the launcher had (and the user's keyrings)
//!   would be the jail's; `ENOSYS` is what a kernel built without keys answers, a case
//!   every keyring user already handles;
//! - `io_uring_setup` → `ENOSYS`: io_uring performs `connect`/`socket` without the syscalls;
//! - `ioctl(TIOCSTI | TIOCLINUX)` → `EPERM`: no typing into the agent's terminal;
//!   `ioctl(TIOCSETD)` → `EPERM`: no line discipline set (with `dev.tty.ldisc_autoload` a
//!   new discipline loads a kernel module, the n_hdlc class of CVE-2017-2636);
//! - `fcntl(F_SETLEASE)` → `EPERM`: a lease on a file the jail can open read-only (a host
//!   `/etc` entry, another preflight's victim, both the user's or root's own) makes every
//!   host process that opens it for writing, or truncates it, wait for the kernel's
//!   `lease-break-time` (45 s by default) while the lease holder is signalled;
//! - `unshare`, and `clone` with any namespace flag → `EPERM`; `clone3` → `ENOSYS` (libc
//!   falls back to `clone`): no nested namespaces to hide from the layers above;
//! - any foreign architecture (32-bit entry points, x32 numbers) → kill.

use std::io;

const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;

const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K
const AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K

const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const fn off_arg_lo(i: u32) -> u32 {
    // struct seccomp_data: nr (4), arch (4), instruction_pointer (8), args[6] (8 each);
    // the low 32 bits of an argument come first on these little-endian targets.
    16 + 8 * i
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

const AF_UNIX: u32 = 1;
const AF_INET: u32 = libc::AF_INET as u32;
const AF_INET6: u32 = libc::AF_INET6 as u32;
const AF_NETLINK: u32 = libc::AF_NETLINK as u32;
const AF_ALG: u32 = libc::AF_ALG as u32;
/// The two netlink protocols ordinary programs use inside a network namespace: routes and
/// addresses (`getifaddrs`, `ip`), and socket diagnostics (`ss`).
const NETLINK_ROUTE: u32 = 0;
const NETLINK_SOCK_DIAG: u32 = 4;
const SOCK_STREAM: u32 = 1;
const SOCK_SEQPACKET: u32 = 5;
/// The type bits of `socket`'s and `socketpair`'s second argument (the rest are
/// `SOCK_NONBLOCK` and `SOCK_CLOEXEC`).
const SOCK_TYPE_MASK: u32 = 0xf;
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;
const TIOCSETD: u32 = 0x5423;
/// `fcntl`'s lease command (fcntl(2), Linux 2.4).
const F_SETLEASE: u32 = libc::F_SETLEASE as u32;
/// CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME.
const CLONE_NS_MASK: u32 = 0x0002_0000
    | 0x0200_0000
    | 0x0400_0000
    | 0x0800_0000
    | 0x1000_0000
    | 0x2000_0000
    | 0x4000_0000
    | 0x0000_0080;

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The filter program, as data (tested without installing it).
pub fn program() -> Vec<libc::sock_filter> {
    let errno = |e: i32| RET_ERRNO | (e as u32 & 0xffff);
    let mut p = vec![
        // 0: refuse every architecture but the native one.
        stmt(LD_W_ABS, OFF_ARCH),
        jump(JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(RET_K, RET_KILL_PROCESS),
        // 3: load the syscall number.
        stmt(LD_W_ABS, OFF_NR),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        // x32 system calls carry bit 30: refuse the whole range.
        p.push(jump(JGE_K, 0x4000_0000, 0, 1));
        p.push(stmt(RET_K, RET_KILL_PROCESS));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = JGE_K;
    // Each check: if nr == X, fall into the block that follows; else skip it.
    // socket(AF_UNIX, ...) → EACCES; AF_INET, AF_INET6 and AF_ALG pass; AF_NETLINK passes
    // for NETLINK_ROUTE and NETLINK_SOCK_DIAG only (→ EPROTONOSUPPORT); every other
    // family → EAFNOSUPPORT.
    p.push(jump(JEQ_K, libc::SYS_socket as u32, 0, 13));
    p.push(stmt(LD_W_ABS, off_arg_lo(0)));
    p.push(jump(JEQ_K, AF_UNIX, 0, 1));
    p.push(stmt(RET_K, errno(libc::EACCES)));
    p.push(jump(JEQ_K, AF_INET, 8, 0));
    p.push(jump(JEQ_K, AF_INET6, 7, 0));
    p.push(jump(JEQ_K, AF_ALG, 6, 0));
    p.push(jump(JEQ_K, AF_NETLINK, 1, 0));
    p.push(stmt(RET_K, errno(libc::EAFNOSUPPORT)));
    p.push(stmt(LD_W_ABS, off_arg_lo(2)));
    p.push(jump(JEQ_K, NETLINK_ROUTE, 2, 0));
    p.push(jump(JEQ_K, NETLINK_SOCK_DIAG, 1, 0));
    p.push(stmt(RET_K, errno(libc::EPROTONOSUPPORT)));
    p.push(stmt(RET_K, RET_ALLOW));
    // socketpair: AF_UNIX only (→ EAFNOSUPPORT), and then → EACCES unless the type is a
    // stream or seqpacket
    p.push(jump(JEQ_K, libc::SYS_socketpair as u32, 0, 9));
    p.push(stmt(LD_W_ABS, off_arg_lo(0)));
    p.push(jump(JEQ_K, AF_UNIX, 1, 0));
    p.push(stmt(RET_K, errno(libc::EAFNOSUPPORT)));
    p.push(stmt(LD_W_ABS, off_arg_lo(1)));
    p.push(stmt(AND_K, SOCK_TYPE_MASK));
    p.push(jump(JEQ_K, SOCK_STREAM, 2, 0));
    p.push(jump(JEQ_K, SOCK_SEQPACKET, 1, 0));
    p.push(stmt(RET_K, errno(libc::EACCES)));
    p.push(stmt(RET_K, RET_ALLOW));
    // ioctl(fd, TIOCSTI | TIOCSETD | TIOCLINUX) → EPERM
    p.push(jump(JEQ_K, libc::SYS_ioctl as u32, 0, 6));
    p.push(stmt(LD_W_ABS, off_arg_lo(1)));
    p.push(jump(JEQ_K, TIOCSTI, 2, 0));
    p.push(jump(JEQ_K, TIOCSETD, 1, 0));
    p.push(jump(JEQ_K, TIOCLINUX, 0, 1));
    p.push(stmt(RET_K, errno(libc::EPERM)));
    p.push(stmt(RET_K, RET_ALLOW));
    // fcntl(fd, F_SETLEASE) → EPERM
    p.push(jump(JEQ_K, libc::SYS_fcntl as u32, 0, 4));
    p.push(stmt(LD_W_ABS, off_arg_lo(1)));
    p.push(jump(JEQ_K, F_SETLEASE, 0, 1));
    p.push(stmt(RET_K, errno(libc::EPERM)));
    p.push(stmt(RET_K, RET_ALLOW));
    // clone(flags with a namespace bit) → EPERM
    p.push(jump(JEQ_K, libc::SYS_clone as u32, 0, 4));
    p.push(stmt(LD_W_ABS, off_arg_lo(0)));
    p.push(jump(JSET_K, CLONE_NS_MASK, 0, 1));
    p.push(stmt(RET_K, errno(libc::EPERM)));
    p.push(stmt(RET_K, RET_ALLOW));
    // add_key, request_key, keyctl → ENOSYS: the kernel's keyrings are not namespaced
    p.push(jump(JEQ_K, libc::SYS_add_key as u32, 2, 0));
    p.push(jump(JEQ_K, libc::SYS_request_key as u32, 1, 0));
    p.push(jump(JEQ_K, libc::SYS_keyctl as u32, 0, 1));
    p.push(stmt(RET_K, errno(libc::ENOSYS)));
    // unshare → EPERM; clone3 and io_uring_setup → ENOSYS
    p.push(jump(JEQ_K, libc::SYS_unshare as u32, 0, 1));
    p.push(stmt(RET_K, errno(libc::EPERM)));
    p.push(jump(JEQ_K, libc::SYS_clone3 as u32, 0, 1));
    p.push(stmt(RET_K, errno(libc::ENOSYS)));
    p.push(jump(JEQ_K, libc::SYS_io_uring_setup as u32, 0, 1));
    p.push(stmt(RET_K, errno(libc::ENOSYS)));
    p.push(stmt(RET_K, RET_ALLOW));
    p
}

/// Install the filter on the calling thread (inherited by children). Needs
/// `PR_SET_NO_NEW_PRIVS` first (or `CAP_SYS_ADMIN`).
pub fn install() -> io::Result<usize> {
    let mut filter = program();
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_mut_ptr(),
    };
    // SAFETY: `prog` points at `filter`, which outlives the call; the kernel copies the
    // program during `prctl` and keeps no pointer to our memory.
    let rc = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &prog as *const libc::sock_fprog,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(filter.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_jump_lands_inside_the_program() {
        let p = program();
        for (i, ins) in p.iter().enumerate() {
            if ins.code & 0x07 == 0x05 {
                assert!(
                    i + 1 + (ins.jt as usize) < p.len(),
                    "jt out of range at {i}"
                );
                assert!(
                    i + 1 + (ins.jf as usize) < p.len(),
                    "jf out of range at {i}"
                );
            }
        }
        assert_eq!(p.last().unwrap().k, RET_ALLOW);
    }

    /// Runs the program over one system call of the native architecture (the subset of
    /// classic BPF it uses), returning the action.
    fn verdict(nr: i64, args: [u64; 6]) -> u32 {
        let p = program();
        let word = |off: u32| -> u32 {
            match off {
                OFF_NR => nr as u32,
                OFF_ARCH => AUDIT_ARCH,
                o if o >= 16 => {
                    let i = ((o - 16) / 8) as usize;
                    let v = args[i];
                    if (o - 16) % 8 == 0 {
                        v as u32
                    } else {
                        (v >> 32) as u32
                    }
                }
                o => panic!("load at {o}"),
            }
        };
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let ins = p[pc];
            match ins.code {
                LD_W_ABS => a = word(ins.k),
                AND_K => a &= ins.k,
                RET_K => return ins.k,
                JEQ_K | JGE_K | JSET_K => {
                    let hit = match ins.code {
                        JEQ_K => a == ins.k,
                        JGE_K => a >= ins.k,
                        _ => a & ins.k != 0,
                    };
                    pc += if hit { ins.jt } else { ins.jf } as usize;
                }
                c => panic!("opcode {c:#x}"),
            }
            pc += 1;
        }
    }

    fn errno_of(e: i32) -> u32 {
        RET_ERRNO | e as u32
    }

    #[test]
    fn keyring_calls_are_refused() {
        for nr in [libc::SYS_add_key, libc::SYS_request_key, libc::SYS_keyctl] {
            assert_eq!(verdict(nr, [0; 6]), errno_of(libc::ENOSYS), "{nr}");
        }
        // The 32-bit numbers of the same calls reach no rule but the architecture's.
        assert_eq!(verdict(libc::SYS_getpid, [0; 6]), RET_ALLOW);
    }

    #[test]
    fn socket_families_outside_the_list_are_refused() {
        let sock = |fam: i32, proto: i32| {
            verdict(
                libc::SYS_socket,
                [fam as u64, libc::SOCK_STREAM as u64, proto as u64, 0, 0, 0],
            )
        };
        assert_eq!(sock(libc::AF_INET, 0), RET_ALLOW);
        assert_eq!(sock(libc::AF_INET6, 0), RET_ALLOW);
        assert_eq!(sock(libc::AF_ALG, 0), RET_ALLOW);
        assert_eq!(sock(libc::AF_NETLINK, 0), RET_ALLOW);
        assert_eq!(sock(libc::AF_NETLINK, 4), RET_ALLOW);
        assert_eq!(sock(libc::AF_UNIX, 0), errno_of(libc::EACCES));
        for fam in [
            libc::AF_VSOCK,
            libc::AF_BLUETOOTH,
            libc::AF_CAN,
            libc::AF_PACKET,
            libc::AF_TIPC,
            libc::AF_KEY,
            libc::AF_XDP,
        ] {
            assert_eq!(sock(fam, 0), errno_of(libc::EAFNOSUPPORT), "family {fam}");
        }
        // NETLINK_AUDIT, NETLINK_KOBJECT_UEVENT, NETLINK_GENERIC, NETLINK_CONNECTOR
        for proto in [9, 15, 16, 11] {
            assert_eq!(
                sock(libc::AF_NETLINK, proto),
                errno_of(libc::EPROTONOSUPPORT),
                "netlink {proto}"
            );
        }
        // The family is an int: upper bits of the register do not change it.
        assert_eq!(
            verdict(libc::SYS_socket, [(1 << 32) | 40, 1, 0, 0, 0, 0]),
            errno_of(libc::EAFNOSUPPORT)
        );
        let pair =
            |fam: i32, ty: i32| verdict(libc::SYS_socketpair, [fam as u64, ty as u64, 0, 0, 0, 0]);
        assert_eq!(pair(libc::AF_UNIX, libc::SOCK_STREAM), RET_ALLOW);
        assert_eq!(
            pair(libc::AF_UNIX, libc::SOCK_DGRAM),
            errno_of(libc::EACCES)
        );
        assert_eq!(
            pair(libc::AF_TIPC, libc::SOCK_STREAM),
            errno_of(libc::EAFNOSUPPORT)
        );
    }

    #[test]
    fn terminal_injection_is_refused_whatever_the_upper_bits() {
        for cmd in [TIOCSTI, TIOCLINUX, TIOCSETD] {
            for hi in [0u64, 1 << 32, 0xffff_ffff << 32] {
                assert_eq!(
                    verdict(libc::SYS_ioctl, [0, hi | cmd as u64, 0, 0, 0, 0]),
                    errno_of(libc::EPERM)
                );
            }
        }
        assert_eq!(
            verdict(libc::SYS_ioctl, [0, libc::TIOCGWINSZ, 0, 0, 0, 0]),
            RET_ALLOW
        );
    }
}
