#!/usr/bin/env python3
"""Builds the kernel matrix's boot images: a kernel's vmlinuz and the suite's initramfs.

Everything is fetched through a PRIVATE apt configuration (its own sources, lists and
archive directories under the cache; the system's apt state is never read or written)
and cached by content under $GATEHOUSE_VM_CACHE (default: target/vm-cache), so a second
run does no network access and an interrupted run resumes where it stopped. Each step
says on stderr what it does. No disk image is made: the guest's root is a tmpfs that
the initramfs's init fills and switches into.

    build.py kernel ID       fetch kernel ID's package, print {"vmlinuz": PATH, ...}
    build.py initramfs       build the initramfs, print {"initramfs": PATH, ...}
    build.py image [--package NAME]... [--copy HOST_PATH:GUEST_PATH]... ID...
                             both, for each ID, one JSON object per line; with --package
                             or --copy, the initramfs is the suite's followed by a second
                             archive holding the packages (and their dependencies, from the
                             userland's suite) and the copied files, cached by content
    build.py copy-plan [--image-dir /PATH]... HOST_PATH:GUEST_PATH...
                             every directory entry (and its mode, as a JSON object) of the
                             archive `image` would append for these copies to an image
                             holding the given directories, without fetching or booting
                             anything (the runner's tests check it)
    build.py matrix [--select all|ci|ID[/VARIANT]...]
                             the (kernel, variant) pairs of the matrix, as a JSON array:
                             every one (all, the default), those `vm --ci` boots (ci), or
                             the named kernels (each in base unless /VARIANT is given)

Why Python and not the runner: this part only drives Debian's own tools (apt-get,
dpkg-deb) and hashes files; Python's standard library (tomllib, hashlib) does that
without adding crates to the runner, and CI can list the matrix before any build.
Needs: python3 >= 3.11, apt-get, dpkg-deb, Debian's archive keyring, cargo with the
x86_64-unknown-linux-musl target.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "vm-images" / "kernels.toml"
INIT_DIR = ROOT / "vm-images" / "init"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
MUSL = "x86_64-unknown-linux-musl"
# Busybox applets the init and the scenarios use where the Debian userland has none.
APPLETS = ["sh", "mount", "umount", "switch_root", "stty", "sysctl", "unshare", "poweroff",
           "mknod", "base64", "sync", "cat", "mkdir", "cp", "ln", "chown", "chmod", "wc",
           "printf", "sleep", "dmesg", "timeout", "hostname", "ps", "kill"]
UNPRIVILEGED_UID = 1000


def log(message: str) -> None:
    print(f"vm-images: {message}", file=sys.stderr, flush=True)


def die(message: str) -> None:
    print(f"vm-images: error: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def cache_dir() -> Path:
    given = os.environ.get("GATEHOUSE_VM_CACHE")
    if given:
        return Path(given).resolve()
    target = os.environ.get("CARGO_TARGET_DIR")
    return (Path(target) if target else ROOT / "target").resolve() / "vm-cache"


def refresh() -> bool:
    """GATEHOUSE_VM_REFRESH=1 re-reads the archive's lists and re-resolves the kernels."""
    return os.environ.get("GATEHOUSE_VM_REFRESH") == "1"


def load_kernels() -> dict:
    try:
        with open(KERNELS, "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        die(f"{KERNELS}: {e}")


def kernel_entry(config: dict, kernel_id: str) -> dict:
    for k in config["kernel"]:
        if k["id"] == kernel_id:
            return k
    known = ", ".join(k["id"] for k in config["kernel"])
    die(f"kernel {kernel_id!r} is not in {KERNELS.name} (known: {known})")


def mirror() -> str:
    """The Debian mirror: $GATEHOUSE_DEBIAN_MIRROR, else the one the system's apt uses."""
    given = os.environ.get("GATEHOUSE_DEBIAN_MIRROR")
    if given:
        return given.rstrip("/")
    candidates: list[str] = []
    etc = Path("/etc/apt")
    for f in sorted(etc.glob("sources.list.d/*.sources")):
        for line in f.read_text(errors="replace").splitlines():
            if line.startswith("URIs:"):
                candidates += line.split()[1:]
    for f in [etc / "sources.list", *sorted(etc.glob("sources.list.d/*.list"))]:
        if f.is_file():
            for line in f.read_text(errors="replace").splitlines():
                words = [w for w in line.split() if not w.startswith("[")]
                if len(words) >= 3 and words[0] == "deb":
                    candidates.append(words[1])
    for uri in candidates:
        if uri.rstrip("/").endswith("/debian"):
            return uri.rstrip("/")
    die("no Debian mirror in /etc/apt (a URI ending in /debian); set GATEHOUSE_DEBIAN_MIRROR")


class Apt:
    """apt-get and apt-cache on a private configuration for one suite."""

    def __init__(self, cache: Path, suite: str):
        self.suite = suite
        self.dir = cache / "apt" / suite
        self.debs = cache / "debs"
        for d in ["lists/partial", "sources", "cache/archives/partial", "prefs"]:
            (self.dir / d).mkdir(parents=True, exist_ok=True)
        self.debs.mkdir(parents=True, exist_ok=True)
        status = self.dir / "status"
        status.touch()
        if not KEYRING.is_file():
            die(f"{KEYRING} is missing: install the debian-archive-keyring package")
        (self.dir / "sources" / "debian.sources").write_text(
            f"Types: deb\nURIs: {mirror()}\nSuites: {suite}\nComponents: main\n"
            f"Signed-By: {KEYRING}\n")
        self.opts = [
            "-o", f"Dir::State::Lists={self.dir / 'lists'}",
            "-o", f"Dir::State::status={status}",
            "-o", "Dir::Etc::SourceList=/dev/null",
            "-o", f"Dir::Etc::SourceParts={self.dir / 'sources'}",
            "-o", "Dir::Etc::Preferences=/dev/null",
            "-o", f"Dir::Etc::PreferencesParts={self.dir / 'prefs'}",
            "-o", f"Dir::Cache={self.dir / 'cache'}",
            "-o", "APT::Architecture=amd64",
            "-o", "APT::Architectures::=amd64",
            "-o", "Acquire::Languages=none",
            "-o", "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false",
            "-o", "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false",
            "-o", "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false",
            "-o", "Acquire::IndexTargets::deb::CNF::DefaultEnabled=false",
        ]
        if os.geteuid() == 0:
            self.opts += ["-o", "APT::Sandbox::User=root"]
        self.updated = False

    def ensure_lists(self) -> None:
        if self.updated:
            return
        have = any(self.dir.glob("lists/*_Packages*"))
        if have and not refresh():
            self.updated = True
            return
        log(f"reading the package lists of {self.suite} (private apt configuration in {self.dir})")
        run(["apt-get", *self.opts, "-q", "update"], quiet=True)
        self.updated = True

    def cache_query(self, *args: str) -> str:
        self.ensure_lists()
        return run(["apt-cache", *self.opts, *args], capture=True)

    def version(self, package: str) -> str | None:
        out = self.cache_query("madison", package)
        for line in out.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) >= 3 and parts[0] == package:
                return parts[1]
        return None

    def depends(self, package: str) -> list[str]:
        out = self.cache_query("depends", "--no-recommends", "--no-suggests", "--no-conflicts",
                               "--no-breaks", "--no-replaces", "--no-enhances", package)
        deps = []
        for line in out.splitlines():
            m = re.match(r"\s*\|?(?:Pre)?Depends: (\S+)", line)
            if m and not m.group(1).startswith("<"):
                deps.append(m.group(1))
        return deps

    def closure(self, roots: list[str], skip: set[str]) -> list[str]:
        """Every package `roots` need, following Depends and Pre-Depends, never entering
        a skipped package (so what only it needs stays out: `git` without `perl`)."""
        seen: set[str] = set()
        todo = [r for r in roots if r not in skip]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(d for d in self.depends(name) if d not in seen and d not in skip)
        return sorted(seen)

    def newest_matching(self, pattern: str) -> str | None:
        prefix = pattern.split("*")[0]
        names = [n for n in self.cache_query("pkgnames", prefix).split()
                 if fnmatch.fnmatch(n, pattern) and "-dbg" not in n]
        best: tuple[str, str] | None = None
        for n in names:
            v = self.version(n)
            if v and (best is None or dpkg_newer(v, best[1])):
                best = (n, v)
        return best[0] if best else None

    def download(self, package: str) -> Path:
        """The package's .deb in the shared deb cache, downloaded once."""
        version = self.version(package)
        if version is None:
            die(f"{package} is not in {self.suite}")
        name = f"{package}_{version.replace(':', '%3a')}_"
        found = [p for p in self.debs.glob(f"{glob_escape(name)}*.deb")]
        if found:
            return found[0]
        log(f"downloading {package} {version} from {self.suite}")
        with tempfile.TemporaryDirectory(dir=self.debs) as tmp:
            run(["apt-get", *self.opts, "-q", "download", f"{package}={version}"], cwd=tmp,
                quiet=True)
            debs = list(Path(tmp).glob("*.deb"))
            if len(debs) != 1:
                die(f"apt-get download {package}={version} left {len(debs)} files")
            target = self.debs / debs[0].name
            os.replace(debs[0], target)
            return target


def glob_escape(s: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", s)


def dpkg_newer(a: str, b: str) -> bool:
    return subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).returncode == 0


def run(cmd: list[str], cwd=None, capture=False, quiet=False) -> str:
    try:
        p = subprocess.run(cmd, cwd=cwd, text=True,
                           stdout=subprocess.PIPE if (capture or quiet) else None,
                           stderr=subprocess.PIPE if (capture or quiet) else None)
    except FileNotFoundError:
        die(f"{cmd[0]} is not installed")
    if p.returncode != 0:
        detail = (p.stderr or "").strip().splitlines()[-5:] if (capture or quiet) else []
        die(f"`{' '.join(cmd[:1] + cmd[-3:])}` failed ({p.returncode})" +
            ("".join(f"\n  {l}" for l in detail)))
    return p.stdout or ""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---------------------------------------------------------------------------- kernels

VMLINUZ = re.compile(r"^\./(boot/vmlinuz-\S+|usr/lib/\S*vmlinuz\S*)$")


def vmlinuz_member(deb: Path) -> str | None:
    """Where the package keeps vmlinuz: /boot (up to 7.1) or under /usr/lib (from 7.2)."""
    tar = subprocess.run(f"dpkg-deb --fsys-tarfile '{deb}' | tar -t", shell=True,
                         capture_output=True, text=True)
    if tar.returncode != 0:
        die(f"cannot list {deb.name}: {tar.stderr.strip()}")
    for member in tar.stdout.splitlines():
        if VMLINUZ.match(member) and not member.endswith(".sig"):
            return member
    return None


def resolve_kernel_package(apt: Apt, k: dict) -> str:
    if apt.version(k["package"]):
        return k["package"]
    fallback = k.get("fallback")
    if not fallback:
        die(f"kernel {k['id']}: {k['package']} is gone from {k['suite']} and no fallback is declared")
    if "*" in fallback:
        found = apt.newest_matching(fallback)
        if not found:
            die(f"kernel {k['id']}: neither {k['package']} nor any {fallback} is in {k['suite']}")
        log(f"kernel {k['id']}: {k['package']} is gone from {k['suite']}; using {found}")
        return found
    images = [d for d in apt.depends(fallback) if d.startswith("linux-image-")]
    if not images:
        die(f"kernel {k['id']}: the metapackage {fallback} names no linux-image package")
    log(f"kernel {k['id']}: {k['package']} is gone from {k['suite']}; {fallback} gives {images[0]}")
    return images[0]


def build_kernel(config: dict, kernel_id: str) -> dict:
    cache = cache_dir()
    k = kernel_entry(config, kernel_id)
    meta_path = cache / "kernels" / f"{kernel_id}.json"
    if meta_path.is_file() and not refresh():
        meta = json.loads(meta_path.read_text())
        if Path(meta["vmlinuz"]).is_file():
            log(f"kernel {kernel_id}: cached ({meta['package']} {meta['version']})")
            return meta
    apt = Apt(cache, k["suite"])
    package = resolve_kernel_package(apt, k)
    deb = apt.download(package)
    member = vmlinuz_member(deb)
    holder = deb
    if member is None:
        # From 6.19 the image is a metapackage; vmlinuz lives in linux-binary-*.
        binaries = [d for d in apt.depends(package) if d.startswith("linux-binary-")]
        if not binaries:
            die(f"{deb.name} has no vmlinuz and depends on no linux-binary-* package")
        holder = apt.download(binaries[0])
        member = vmlinuz_member(holder)
        if member is None:
            die(f"neither {deb.name} nor {holder.name} holds a vmlinuz")
    log(f"kernel {kernel_id}: extracting {member} from {holder.name}")
    out_dir = cache / "kernels"
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        p = subprocess.run(f"dpkg-deb --fsys-tarfile '{holder}' | tar -x -C '{tmp}' '{member}'",
                           shell=True, capture_output=True, text=True)
        if p.returncode != 0:
            die(f"cannot extract {member} from {holder.name}: {p.stderr.strip()}")
        extracted = Path(tmp) / member
        digest = sha256_file(extracted)
        target = out_dir / f"vmlinuz-{digest[:16]}"
        os.replace(extracted, target)
    meta = {"id": kernel_id, "package": package, "version": apt.version(package),
            "suite": k["suite"], "vmlinuz": str(target), "sha256": digest}
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return meta


# -------------------------------------------------------------------------- initramfs

def musl_binaries() -> list[Path]:
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve()
    log(f"building gatehouse and gatehouse-conform for {MUSL} (static)")
    cmd = ["cargo", "build", "--release", "--locked", "--quiet", "--target", MUSL,
           "-p", "gatehouse", "-p", "gatehouse-conformance",
           "--bin", "gatehouse", "--bin", "gatehouse-conform"]
    p = subprocess.run(cmd, cwd=ROOT)
    if p.returncode != 0:
        die(f"`{' '.join(cmd)}` failed; is the target installed? `rustup target add {MUSL}`")
    out = target / MUSL / "release"
    return [out / "gatehouse", out / "gatehouse-conform"]


def tree_digest(h, base: Path) -> None:
    for path in sorted(base.rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(base)).encode() + b"\0")
            h.update(path.read_bytes())


def userland_debs(config: dict) -> list[Path]:
    d = config["defaults"]
    cache = cache_dir()
    list_path = cache / "userland" / f"{d['userland_suite']}.json"
    wanted = d["userland"]
    if list_path.is_file() and not refresh():
        saved = json.loads(list_path.read_text())
        if saved["roots"] == wanted and saved.get("skip") == d.get("userland_skip", []) and all(Path(p).is_file() for p in saved["debs"]):
            return [Path(p) for p in saved["debs"]]
    apt = Apt(cache, d["userland_suite"])
    skip = set(d.get("userland_skip", []))
    names = apt.closure(wanted, skip)
    log(f"userland from {d['userland_suite']}: {len(names)} packages ({', '.join(wanted)} and their dependencies)")
    debs = [apt.download(n) for n in names]
    list_path.parent.mkdir(parents=True, exist_ok=True)
    list_path.write_text(json.dumps({"roots": wanted, "skip": d.get("userland_skip", []), "debs": [str(p) for p in debs]}, indent=1))
    return debs


def write_ssl(work: Path) -> None:
    """/etc/ssl as a Debian host has it: the certificate bundle update-ca-certificates
    (the maintainer script of ca-certificates, not run here) writes, and a root-only
    /etc/ssl/private holding a key (ssl-cert's snakeoil key on a Debian host; a stand-in
    here, with the same modes), so the jail's masking of root-only /etc entries has
    something to hide in the guest too."""
    certs = sorted((work / "usr" / "share" / "ca-certificates").rglob("*.crt"))
    if not certs:
        die("ca-certificates provided no certificates under /usr/share/ca-certificates")
    ssl = work / "etc" / "ssl"
    (ssl / "certs").mkdir(parents=True, exist_ok=True)
    (ssl / "certs" / "ca-certificates.crt").write_bytes(b"".join(c.read_bytes() for c in certs))
    private = ssl / "private"
    private.mkdir(exist_ok=True)
    private.chmod(0o700)
    key = private / "gatehouse-vm.key"
    key.write_text("-----BEGIN PRIVATE KEY-----\n"
                   "c3RhbmQtaW4ga2V5IG9mIHRoZSBnYXRlaG91c2UgZ3Vlc3QgaW1hZ2U=\n"
                   "-----END PRIVATE KEY-----\n")
    key.chmod(0o600)


def stage_root(work: Path, debs: list[Path], binaries: list[Path]) -> None:
    for deb in debs:
        run(["dpkg-deb", "-x", str(deb), str(work)])
    write_ssl(work)
    # Documentation, manuals and locales: nothing in the guest reads them.
    shutil.rmtree(work / "usr" / "share", ignore_errors=True)
    # /impl: where `vm --guest-copy` puts relative paths, and the inner run's working
    # directory, so that an --impl naming files relative to the host's working directory
    # names the same files in the guest.
    for d in ["proc", "sys", "dev", "tmp", "root", "newroot", "suite", "usr/local/bin", "etc",
              "home/runner", "sbin", "bin", "impl"]:
        (work / d).mkdir(parents=True, exist_ok=True)
    (work / "tmp").chmod(0o1777)
    (work / "root").chmod(0o700)
    bb = work / "bin" / "busybox"
    if not bb.is_file():
        die("busybox-static did not provide /bin/busybox")
    search = ["bin", "usr/bin", "sbin", "usr/sbin"]
    for applet in APPLETS:
        if not any((work / s / applet).exists() or (work / s / applet).is_symlink()
                   for s in search):
            (work / "bin" / applet).symlink_to("busybox")
    sh = work / "bin" / "sh"
    if not sh.exists():
        sh.symlink_to("dash")
    for b in binaries:
        shutil.copy2(b, work / "usr/local/bin" / b.name)
    shutil.copytree(ROOT / "scenarios", work / "suite" / "scenarios")
    shutil.copytree(ROOT / "spec", work / "suite" / "spec")
    shutil.copy2(INIT_DIR / "init", work / "init")
    shutil.copy2(INIT_DIR / "gatehouse-init", work / "sbin" / "gatehouse-init")
    (work / "init").chmod(0o755)
    (work / "sbin" / "gatehouse-init").chmod(0o755)
    (work / "etc" / "passwd").write_text(
        "root:x:0:0:root:/root:/bin/sh\n"
        f"runner:x:{UNPRIVILEGED_UID}:{UNPRIVILEGED_UID}:suite runner:/home/runner:/bin/sh\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
    (work / "etc" / "group").write_text(
        f"root:x:0:\nrunner:x:{UNPRIVILEGED_UID}:\nnogroup:x:65534:\n")
    (work / "etc" / "hostname").write_text("gatehouse-vm\n")


def write_cpio(root: Path, out, root_entry: bool = True, keep: frozenset[str] = frozenset(),
               modes: dict[str, int] | None = None) -> None:
    """A newc archive of `root`, owners and times normalised (reproducible). Without
    `root_entry` the archive leaves `.` out (an archive appended to another must not
    change the mode of the root the first one made); likewise every directory in `keep`
    (/PATH, the directories the first archive made: the kernel's unpacking chmods an
    existing directory to a later entry's mode, so re-emitting /tmp would turn the
    sticky 1777 into whatever the build's umask gave). `modes` sets the mode of some
    directories (/PATH: mode) instead of the one they have under `root`."""
    ino = 1

    def entry(name: str, mode: int, data: bytes, uid: int = 0, nlink: int = 1) -> None:
        nonlocal ino
        header = "070701" + "".join(f"{v:08x}" for v in [
            ino, mode, uid, uid, nlink, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0])
        out.write(header.encode() + name.encode() + b"\0")
        out.write(b"\0" * ((4 - (110 + len(name) + 1) % 4) % 4))
        out.write(data)
        out.write(b"\0" * ((4 - len(data) % 4) % 4))
        ino += 1

    if root_entry:
        entry(".", stat.S_IFDIR | 0o755, b"", nlink=2)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames) + sorted(filenames):
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            st = path.lstat()
            uid = UNPRIVILEGED_UID if rel == "home/runner" else 0
            mode = stat.S_IFMT(st.st_mode) | stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                entry(rel, mode, os.readlink(path).encode(), uid)
            elif stat.S_ISDIR(st.st_mode):
                if "/" + rel in keep:
                    continue
                if modes and "/" + rel in modes:
                    mode = stat.S_IFDIR | modes["/" + rel]
                entry(rel, mode, b"", uid, nlink=2)
            elif stat.S_ISREG(st.st_mode):
                entry(rel, mode, path.read_bytes(), uid)
    entry("TRAILER!!!", 0, b"")


def build_initramfs(config: dict) -> dict:
    cache = cache_dir()
    debs = userland_debs(config)
    binaries = musl_binaries()
    h = hashlib.sha256()
    for p in sorted(debs) + binaries:
        h.update(p.name.encode() + sha256_file(p).encode())
    for d in [ROOT / "scenarios", ROOT / "spec", INIT_DIR]:
        tree_digest(h, d)
    h.update(Path(__file__).read_bytes())
    key = h.hexdigest()[:16]
    out_dir = cache / "initramfs"
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"initramfs-{key}.cpio"
    if target.is_file():
        log(f"initramfs: cached ({target.name})")
    else:
        log(f"initramfs: unpacking {len(debs)} packages, the static binaries, the scenarios and the spec")
        with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
            work = Path(tmp) / "root"
            work.mkdir()
            stage_root(work, debs, binaries)
            partial = Path(tmp) / "out.cpio"
            with open(partial, "wb") as f:
                write_cpio(work, f)
            os.replace(partial, target)
        size = target.stat().st_size / (1 << 20)
        log(f"initramfs: wrote {target.name} ({size:.1f} MiB)")
        for old in [*out_dir.glob("initramfs-*.cpio"), *out_dir.glob("initramfs-*.files")]:
            if old != target:
                old.unlink()
    return {"initramfs": str(target), "key": key}


# ----------------------------------------------------------------------------- extras
# What an implementation under test needs in the guest: Debian packages (through the same
# private apt configuration as the userland) and files copied from the host. They go into
# a second newc archive appended to the suite's initramfs (the kernel unpacks concatenated
# archives in order), so the suite's archive is never rebuilt for them and each set of
# extras is cached by content.

# Directories a copy leaves out: caches of the host's tools, never the implementation.
COPY_SKIP = {"__pycache__", ".git", ".mypy_cache", ".pytest_cache"}


def copy_digest(h, src: Path) -> None:
    """The content, names and modes of a copied file or tree."""
    if src.is_file() or src.is_symlink():
        paths = [src]
        base = src.parent
    else:
        base = src
        paths = []
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames[:] = sorted(d for d in dirnames if d not in COPY_SKIP)
            paths += [Path(dirpath) / d for d in dirnames]
            paths += [Path(dirpath) / f for f in sorted(filenames)]
    for p in paths:
        st = p.lstat()
        h.update(str(p.relative_to(base)).encode() + b"\0" + str(st.st_mode).encode() + b"\0")
        if stat.S_ISLNK(st.st_mode):
            h.update(os.readlink(p).encode())
        elif stat.S_ISREG(st.st_mode):
            h.update(sha256_file(p).encode())


def parse_copy(spec: str) -> tuple[Path, str]:
    host, sep, guest = spec.partition(":")
    src = Path(host)
    if not src.exists():
        die(f"--copy {spec}: {host} does not exist")
    if not sep or not guest.startswith("/"):
        die(f"--copy {spec}: give HOST_PATH:/ABSOLUTE/GUEST_PATH")
    return src.resolve(), guest


# The mode of a directory a GUEST_PATH needs that neither the image nor the host has at the
# same place (`sandboxer:peers/sandboxer` makes /impl/peers): the image's own directories'.
NEW_DIR_MODE = 0o755


def copy_plan(pairs: list[tuple[Path, str]], image: set[str]) -> dict[str, int]:
    """The directories the copies need that the suite's image does not have (/PATH: mode),
    parents first. Each takes the mode of its twin on the host: the host directory at the
    same distance above the copied path, when every name from it down to the copy is the
    same in both (a copy that keeps its place: an absolute path, or a relative one under
    /impl). A directory the image has is never in the plan: the image's entry stands (the
    sticky 1777 /tmp, the root-only /root). A directory with no twin (a GUEST_PATH at a
    new place) gets NEW_DIR_MODE, what the image gives its own."""
    plan: dict[str, int] = {}
    for src, guest in pairs:
        g = PurePosixPath(guest).parts
        h = src.parts
        for depth in range(2, len(g)):
            gdir = str(PurePosixPath(*g[:depth]))
            if gdir in image or gdir in plan:
                continue
            n = len(g) - depth + 1
            if len(h) > n and h[-n:] == g[-n:]:
                plan[gdir] = stat.S_IMODE(Path(*h[:len(h) - n + 1]).stat().st_mode)
            else:
                plan[gdir] = NEW_DIR_MODE
    return plan


def extra_debs(config: dict, packages: list[str]) -> list[Path]:
    """The packages and every dependency the userland does not already hold."""
    d = config["defaults"]
    apt = Apt(cache_dir(), d["userland_suite"])
    have = {p.name.split("_")[0] for p in userland_debs(config)}
    for name in packages:
        if apt.version(name) is None:
            die(f"--guest-package {name}: no such package in {d['userland_suite']} "
                "(the guest's userland suite)")
    skip = set(d.get("userland_skip", [])) | have
    names = apt.closure(packages, skip)
    if names:
        log(f"guest packages from {d['userland_suite']}: {', '.join(names)}")
    return [apt.download(n) for n in names]


def copy_into(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(*COPY_SKIP))
    else:
        shutil.copy2(src, dest, follow_symlinks=False)


def build_extras(config: dict, base: dict, packages: list[str], copies: list[str]) -> dict:
    """The suite's initramfs followed by the extras' archive: {"initramfs", "key"}."""
    debs = extra_debs(config, packages) if packages else []
    pairs = [parse_copy(c) for c in copies]
    image = set(list_cpio(Path(base["initramfs"])))
    plan = copy_plan(pairs, image)
    h = hashlib.sha256()
    h.update(json.dumps(sorted(plan.items())).encode())
    for p in sorted(debs):
        h.update(p.name.encode() + sha256_file(p).encode())
    for src, guest in pairs:
        h.update(b"copy\0" + guest.encode() + b"\0")
        copy_digest(h, src)
    h.update(Path(__file__).read_bytes())
    key = h.hexdigest()[:16]
    out_dir = cache_dir() / "initramfs"
    extras = out_dir / f"extras-{key}.cpio"
    if extras.is_file():
        log(f"guest extras: cached ({extras.name})")
    else:
        log(f"guest extras: {len(debs)} package(s) and {len(pairs)} copy(ies)")
        with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
            work = Path(tmp) / "root"
            work.mkdir()
            for deb in debs:
                run(["dpkg-deb", "-x", str(deb), str(work)])
            shutil.rmtree(work / "usr" / "share" / "doc", ignore_errors=True)
            shutil.rmtree(work / "usr" / "share" / "man", ignore_errors=True)
            for src, guest in pairs:
                copy_into(src, work / guest.lstrip("/"))
            partial = Path(tmp) / "out.cpio"
            with open(partial, "wb") as f:
                write_cpio(work, f, root_entry=False, keep=frozenset(image), modes=plan)
            os.replace(partial, extras)
        log(f"guest extras: wrote {extras.name} ({extras.stat().st_size / (1 << 20):.1f} MiB)")
    combined = out_dir / f"initramfs-{base['key']}+{key}.cpio"
    if not combined.is_file():
        with tempfile.NamedTemporaryFile(dir=out_dir, delete=False) as f:
            for part in [Path(base["initramfs"]), extras]:
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, f, 1 << 20)
        os.replace(f.name, combined)
    # The combined images of an older suite archive are stale: keep only the current ones.
    for old in [*out_dir.glob("initramfs-*+*.cpio"), *out_dir.glob("initramfs-*+*.files")]:
        if not old.name.startswith(f"initramfs-{base['key']}+"):
            old.unlink()
    return {"initramfs": str(combined), "key": f"{base['key']}+{key}",
            "extras": str(extras)}


def cpio_entries(path: Path) -> list[tuple[str, int]]:
    """Every (/PATH, mode) a newc archive (or several concatenated) holds, in order."""
    entries = []
    with open(path, "rb") as f:
        while True:
            header = f.read(110)
            if len(header) < 110:
                break
            if header[:6] != b"070701":
                die(f"{path.name}: not a newc archive at offset {f.tell() - 110}")
            mode = int(header[14:22], 16)
            size, namesize = int(header[54:62], 16), int(header[94:102], 16)
            name = f.read(namesize)[:-1].decode("utf-8", "replace")
            f.seek((4 - (110 + namesize) % 4) % 4, 1)
            f.seek(size + (4 - size % 4) % 4, 1)
            if name != "TRAILER!!!" and name != ".":
                entries.append(("/" + name, mode))
    return entries


def list_cpio(path: Path) -> list[str]:
    """Every path a newc archive (or several concatenated) holds, as /PATH."""
    return [name for name, _ in cpio_entries(path)]


def manifest(ramfs: dict) -> str:
    """A file listing every path of the guest's root, one a line, beside the image."""
    image = Path(ramfs["initramfs"])
    out = image.with_suffix(".files")
    if not out.is_file():
        partial = out.with_suffix(".files.partial")
        partial.write_text("".join(n + "\n" for n in list_cpio(image)))
        os.replace(partial, out)
    return str(out)


# ------------------------------------------------------------------------------ main

def matrix(config: dict, select: str = "all") -> list[dict]:
    words = select.split()
    if words in (["all"], ["ci"]):
        pairs = []
        for k in config["kernel"]:
            if words == ["ci"] and not k.get("ci", False):
                continue
            for v in ["base", *k.get("variants", [])]:
                pairs.append({"kernel": k["id"], "variant": v})
        return pairs
    if not words:
        die("matrix --select: name all, ci, or kernel ids")
    pairs = []
    for w in words:
        kid, _, variant = w.partition("/")
        kernel_entry(config, kid)
        variant = variant or "base"
        if variant != "base" and variant not in config.get("variant", {}):
            die(f"matrix --select {w}: no [variant.{variant}] in {KERNELS.name}")
        pairs.append({"kernel": kid, "variant": variant})
    return pairs


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return
    config = load_kernels()
    cmd, args = argv[0], argv[1:]
    if cmd == "kernel" and len(args) == 1:
        print(json.dumps(build_kernel(config, args[0])))
    elif cmd == "initramfs" and not args:
        print(json.dumps(build_initramfs(config)))
    elif cmd == "image" and args:
        packages, copies, ids = [], [], []
        it = iter(args)
        for a in it:
            if a in ("--package", "--copy"):
                value = next(it, None)
                if value is None:
                    die(f"{a} needs a value")
                (packages if a == "--package" else copies).append(value)
            else:
                ids.append(a)
        if not ids:
            die("image: name at least one kernel")
        ramfs = build_initramfs(config)
        if packages or copies:
            ramfs = build_extras(config, ramfs, packages, copies)
        ramfs["files"] = manifest(ramfs)
        for kid in ids:
            print(json.dumps({**build_kernel(config, kid), **ramfs}), flush=True)
    elif cmd == "copy-plan" and args:
        image, copies = set(), []
        it = iter(args)
        for a in it:
            if a == "--image-dir":
                image.add(next(it, ""))
            else:
                copies.append(a)
        pairs = [parse_copy(c) for c in copies]
        plan = copy_plan(pairs, image)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / "root"
            work.mkdir()
            for src, guest in pairs:
                copy_into(src, work / guest.lstrip("/"))
            archive = Path(tmp) / "out.cpio"
            with open(archive, "wb") as f:
                write_cpio(work, f, root_entry=False, keep=frozenset(image), modes=plan)
            print(json.dumps({name: f"{stat.S_IMODE(mode):04o}"
                              for name, mode in cpio_entries(archive) if stat.S_ISDIR(mode)}))
    elif cmd == "matrix" and not args:
        print(json.dumps(matrix(config)))
    elif cmd == "matrix" and len(args) == 2 and args[0] == "--select":
        print(json.dumps(matrix(config, args[1])))
    else:
        die(f"unknown command {' '.join(argv)!r}; see --help")


if __name__ == "__main__":
    main(sys.argv[1:])
