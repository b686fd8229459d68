# The runner's keyring bait (conformance/core/src/observe/keyring.rs), Linux only. Two modes:
#   plant NAME PAYLOAD STATUS -- ARGV...   join (or make) the session keyring NAME, let the
#       same user search and read it, put the user key `gatehouse-bait` holding PAYLOAD in
#       it, write "planted RING KEY" (or "error WHY") to STATUS, then exec ARGV: the
#       implementation and everything it starts inherit that session keyring.
#   check NAME                             join NAME and print each key it holds, one per
#       line: "DESCRIPTION\tPAYLOAD-HEX" (the runner compares them with what it planted).
import ctypes
import os
import platform
import sys

NR = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}.get(platform.machine())
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long


def call(nr, *args):
    r = libc.syscall(L(nr), *args)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def keyctl(*args):
    return call(NR[2], *args)


def join(name):
    return keyctl(L(1), name.encode())  # KEYCTL_JOIN_SESSION_KEYRING


def plant(name, payload):
    ring = join(name)
    keyctl(L(5), L(ring), L(0x3F3F0000))  # KEYCTL_SETPERM: possessor and user, all
    data = payload.encode()
    key = call(NR[0], b"user", b"gatehouse-bait", data, ctypes.c_size_t(len(data)), L(ring))
    return ring, key


def read(serial, size=4096):
    buf = ctypes.create_string_buffer(size)
    n = keyctl(L(11), L(serial), buf, L(size))  # KEYCTL_READ
    return buf.raw[: min(n, size)]


def check(name):
    ring = join(name)
    ids = read(ring)
    for i in range(0, len(ids), 4):
        serial = int.from_bytes(ids[i : i + 4], sys.byteorder)
        buf = ctypes.create_string_buffer(512)
        n = keyctl(L(6), L(serial), buf, L(512))  # KEYCTL_DESCRIBE: type;uid;gid;perm;desc
        desc = buf.raw[: n - 1].decode().split(";", 4)[-1]
        try:
            payload = read(serial).hex()
        except OSError as e:
            payload = "unreadable:%d" % e.errno
        print("%s\t%s" % (desc, payload))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "check":
        check(sys.argv[2])
    elif mode == "plant":
        name, payload, status = sys.argv[2:5]
        argv = sys.argv[sys.argv.index("--") + 1 :]
        try:
            if NR is None:
                raise OSError("no keyring numbers for %s" % platform.machine())
            line = "planted %d %d" % plant(name, payload)
        except OSError as e:
            line = "error %s" % e
        with open(status, "w") as f:
            f.write(line + "\n")
        os.execvp(argv[0], argv)
