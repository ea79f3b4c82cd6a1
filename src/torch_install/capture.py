"""Captures: everything one detection read, as a .tar.gz that ``--sysroot`` replays.

``write_capture(probe, path)`` stores the files, directories, links, command outputs, environment variables
and host facts a probe touched (layout in probe.py), with GPU UUIDs, other UUIDs, serial numbers and the
host name redacted, and MAC (and other hardware) addresses and the user names in home-directory paths too,
in stored paths as well as contents; the same value is always replaced by the same stand-in, so
``CUDA_VISIBLE_DEVICES=GPU-…`` still selects the same GPU in the replay. ``sysroot_dir(path)`` opens a
directory or a capture archive, extracting the archive with tarfile's ``data`` filter and a size cap.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError
from .probe import Probe

MAX_ARCHIVE_BYTES = 64 * 1024 * 1024  # unpacked size of a capture; real ones are a few hundred kB
MAX_MEMBERS = 50_000

_UUID = re.compile(rb"(?i)\b(GPU-|MIG-)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b")
_SERIAL = re.compile(rb"(?im)^(\s*(?:Serial Number|Board Serial|serial_number|unique_id)\s*[:=]?\s*)(\S.*)$")
# a MAC address (aa:bb:cc:dd:ee:ff or aa-bb-…), or a longer one such as InfiniBand's 20 bytes; not part of a
# longer run of hex digits and separators
_HW_ADDRESS = re.compile(rb"(?i)(?<![0-9a-f:-])[0-9a-f]{2}([:-])[0-9a-f]{2}(?:\1[0-9a-f]{2}){4,}(?![0-9a-f:-])")
# the user name in /home/<user>, /Users/<user> and C:\Users\<user> (also with doubled or forward slashes; a
# Windows user name may hold spaces)
_POSIX_HOME = re.compile(rb"(/home/|/Users/)([^/\\\s:;,\"'<>|=()\[\]]+)")
_WINDOWS_HOME = re.compile(rb"(?i)\b([a-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/))([^/\\\r\n\t:;,\"'<>|=]+)")
_SHARED_HOMES = {b"shared", b"public", b"default", b"all users", b"default user"}  # not a person's name
# Host names that are words the captured files use for other things (a distribution's ID, "localhost"): replacing
# them would rewrite /etc/os-release's ID=ubuntu, so they are left alone (they identify no one either).
_COMMON_HOSTNAMES = {b"ubuntu", b"debian", b"fedora", b"centos", b"rhel", b"rocky", b"almalinux", b"alpine",
                     b"arch", b"archlinux", b"opensuse", b"suse", b"linux", b"localhost", b"raspberrypi", b"jetson",
                     b"container", b"docker", b"default"}
# The kernel builder in /proc/version: "Linux version 6.8.0 (alice@workstation) (gcc …)"
_KERNEL_BUILDER = re.compile(rb"(Linux version \S+ \()[^()\s@]+@[^()\s]+(\))")


class Redactor:
    """Replaces identifying values with stable stand-ins."""

    def __init__(self, hostname: str | None = None) -> None:
        self._uuids: dict[bytes, bytes] = {}
        self._addresses: dict[bytes, bytes] = {}
        self._users: dict[bytes, bytes] = {}
        name = hostname.encode() if hostname and len(hostname) >= 3 else None
        # whole words only: a host "gpu" must not rewrite "nvidia-gpu"; common words are not redacted at all
        self._hostname = re.compile(rb"(?<![A-Za-z0-9_.-])" + re.escape(name) + rb"(?![A-Za-z0-9_-])") \
            if name and name.lower() not in _COMMON_HOSTNAMES else None

    def _uuid(self, match: re.Match[bytes]) -> bytes:
        key = match.group(2).lower()
        if key not in self._uuids:
            n = len(self._uuids) + 1
            self._uuids[key] = f"00000000-0000-4000-8000-{n:012x}".encode()
        return (match.group(1) or b"") + self._uuids[key]

    def _address(self, match: re.Match[bytes]) -> bytes:
        """A locally administered stand-in (02:00:…:NN) with the same length and separator."""
        key = match.group(0).lower().replace(b"-", b":")
        if not key.strip(b"0:"):  # all zeros (a loopback or unset address) identifies nothing
            return match.group(0)
        if key not in self._addresses:
            n = len(self._addresses) + 1
            size = key.count(b":") + 1
            self._addresses[key] = ":".join(["02", *["00"] * (size - 3), f"{n >> 8 & 0xff:02x}",
                                             f"{n & 0xff:02x}"]).encode()
        return self._addresses[key].replace(b":", match.group(1))

    def _user(self, match: re.Match[bytes]) -> bytes:
        name = match.group(2)
        if name.lower() in _SHARED_HOMES:
            return match.group(0)
        if name not in self._users:
            self._users[name] = f"user{len(self._users) + 1}".encode()
        return match.group(1) + self._users[name]

    def redact_bytes(self, data: bytes) -> bytes:
        data = _UUID.sub(self._uuid, data)
        data = _SERIAL.sub(lambda m: m.group(1) + b"[redacted]", data)
        if self._hostname:
            data = self._hostname.sub(b"redacted-host", data)
        data = _KERNEL_BUILDER.sub(rb"\1user@redacted-host\2", data)
        return self._personal(data)

    def _personal(self, data: bytes) -> bytes:
        data = _HW_ADDRESS.sub(self._address, data)
        data = _POSIX_HOME.sub(self._user, data)
        return _WINDOWS_HOME.sub(self._user, data)

    def path(self, path: str) -> str:
        """A stored path with hardware addresses and home-directory user names redacted (UUIDs and the host
        name are left alone: a host named like a /sys directory must not rename it)."""
        return self._personal(path.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")

    def redact_text(self, text: str) -> str:
        return self.redact_bytes(text.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")


def _hostname() -> str | None:
    import socket

    try:
        return socket.gethostname()
    except OSError:
        return None


def capture_members(probe: Probe, redactor: Redactor | None = None) -> dict[str, bytes | str | None]:
    """What a capture holds: relative path → file bytes, a link target (str), or None for a directory."""
    redactor = redactor or Redactor(_hostname())
    accessed = probe.accessed
    members: dict[str, bytes | str | None] = {}
    for path in sorted(accessed.dirs):
        members[redactor.path(path).strip("/")] = None
    for path, data in sorted(accessed.files.items()):
        members[redactor.path(path).strip("/")] = redactor.redact_bytes(data)
    for path, target in sorted(accessed.links.items()):
        name = redactor.path(target.rstrip("/").rsplit("/", 1)[-1])
        # only the basename of a link is ever read; keep the link inside the tree
        members[redactor.path(path).strip("/")] = (f"../../../bus/pci/drivers/{name}" if path.endswith("/driver")
                                                   else name)
    for slug, result in sorted(accessed.commands.items()):
        base = f"_commands/{slug}"
        if result.error and result.error.startswith("timed out"):
            members[f"{base}.timeout"] = b""
            continue
        if result.error:  # not found / could not run: absence replays as "not found"
            continue
        members[base] = redactor.redact_bytes(result.stdout.encode("utf-8", "surrogateescape"))
        if result.stderr:
            members[f"{base}.stderr"] = redactor.redact_bytes(result.stderr.encode("utf-8", "surrogateescape"))
        if result.returncode:
            members[f"{base}.rc"] = f"{result.returncode}\n".encode()
    env = {k: redactor.redact_text(v) for k, v in sorted(accessed.env.items())}
    host = {k: redactor.redact_text(v) for k, v in sorted(accessed.host.items())}
    members["_env.json"] = (json.dumps(env, indent=2) + "\n").encode()
    members["_host.json"] = (json.dumps(host, indent=2) + "\n").encode()
    return members


def write_capture(probe: Probe, path: str | Path) -> int:
    """Write the capture archive for what ``probe`` read; returns the number of entries."""
    members = capture_members(probe)
    now = int(time.time())
    try:
        with tarfile.open(path, "w:gz") as archive:
            for name in sorted(members):
                content = members[name]
                info = tarfile.TarInfo(name)
                info.mtime, info.mode = now, 0o644
                if content is None:
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    archive.addfile(info)
                elif isinstance(content, str):
                    info.type, info.linkname = tarfile.SYMTYPE, content
                    archive.addfile(info)
                else:
                    info.size = len(content)
                    archive.addfile(info, io.BytesIO(content))
    except OSError as exc:
        raise InputError(f"--capture {path}: cannot write ({exc.strerror or exc})") from None
    return len(members)


# A capture holds regular files, directories and the `driver` links of PCI devices (../../../bus/pci/drivers/X).
_DRIVER_LINK = re.compile(r"^(?:\.\./)+bus/pci/drivers/[A-Za-z0-9_.-]+$")
MAX_HEADER_BYTES = 64 * 1024  # a PAX or GNU long-name header; a capture's are a few hundred bytes
_LONG_HEADERS = (b"x", b"g", b"L", b"K")


def _header_size(block: bytes) -> int:
    field = block[124:136]
    if field[0] & 0x80:  # GNU base-256
        return int.from_bytes(field[1:], "big")
    digits = field.split(b"\0", 1)[0].strip()
    return int(digits, 8) if digits and all(48 <= c <= 55 for c in digits) else 0


def _check_headers(path: Path) -> None:
    """Walk the tar headers before tarfile parses them: a PAX or long-name header over MAX_HEADER_BYTES (tarfile
    would read it whole into memory) or a total over MAX_ARCHIVE_BYTES is refused, reading at most that much."""
    import gzip

    with open(path, "rb") as raw:
        gzipped = raw.read(2) == b"\x1f\x8b"
    opener = gzip.open if gzipped else open
    read = 0
    with opener(path, "rb") as stream:
        while True:
            block = stream.read(512)
            if len(block) < 512 or block == b"\0" * 512:
                return
            size = _header_size(block)
            if block[156:157] in _LONG_HEADERS and size > MAX_HEADER_BYTES:
                raise InputError(f"--sysroot {path}: an archive header of {size} bytes (a capture's are small)")
            read += 512 + size
            if read > MAX_ARCHIVE_BYTES + MAX_MEMBERS * 512:
                raise InputError(f"--sysroot {path}: archive too large for a capture")
            left = -(-size // 512) * 512
            while left:
                chunk = stream.read(min(left, 1 << 20))
                if not chunk:
                    return
                left -= len(chunk)


def _member_problem(member: tarfile.TarInfo, links: set[str]) -> str | None:
    """Why a member has no place in a capture, or None."""
    name = member.name
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or any(p in ("..", "") for p in parts[:-1]) or parts[-1] == "..":
        return f"{name!r}: a path outside the capture"
    if any("/".join(parts[:i]) in links for i in range(1, len(parts))):
        return f"{name!r}: a path through a link"
    if member.isdir() or member.isreg():
        return None
    if member.issym() and parts[-1] == "driver" and _DRIVER_LINK.match(member.linkname) and \
            member.linkname.count("../") <= len(parts) - 1:
        return None
    kind = "hard link" if member.islnk() else "link" if member.issym() else "special file"
    return f"{name!r}: a {kind} (a capture holds files, directories and PCI driver links only)"


def _extract(archive: tarfile.TarFile, members: list[tarfile.TarInfo], root: str) -> None:
    """Write the checked members under ``root`` (files 0644, directories 0755), never following a link."""
    import os

    for member in members:
        target = os.path.join(root, *member.name.rstrip("/").split("/"))
        if member.isdir():
            os.makedirs(target, mode=0o755, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        if os.path.lexists(target):
            if os.path.isdir(target) and not os.path.islink(target):
                raise InputError(f"{member.name!r}: a file over a directory")
            os.unlink(target)
        if member.issym():
            os.symlink(member.linkname, target)
            continue
        source = archive.extractfile(member)
        data = source.read(MAX_ARCHIVE_BYTES + 1) if source else b""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(target, flags, 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(data)


@contextmanager
def sysroot_dir(path: str | Path) -> Iterator[str]:
    """A captured tree as a directory: the directory itself, or a capture archive extracted to a temporary
    directory (removed afterwards). Anything else is an InputError naming the path.

    Members are checked by this module, not by tarfile's filters (bypassable before Python 3.11.13/3.12.11/3.13.4,
    CVE-2025-4517): regular files, directories and PCI ``driver`` links inside the tree only; no hard link, no
    other link, no path through a link, no header larger than a capture's."""
    path = Path(path)
    if os.path.isdir(path):  # os.path, not Path: a name too long for the system is False, not an OSError
        yield str(path)
        return
    if not os.path.isfile(path) or not path.name.endswith((".tar.gz", ".tgz", ".tar")):
        raise InputError(f"--sysroot {path}: not a directory or a .tar.gz capture")
    with tempfile.TemporaryDirectory(prefix="torch-install-sysroot-") as tmp:
        try:
            _check_headers(path)
            with tarfile.open(path) as archive:
                members: list[tarfile.TarInfo] = []
                links: set[str] = set()
                total = 0
                for member in archive:  # checked header by header: a bomb is refused before it is inflated
                    member.name = member.name.removeprefix("./")
                    if not member.name or member.name == ".":
                        continue
                    problem = _member_problem(member, links)
                    if problem:
                        raise InputError(f"--sysroot {path}: {problem}")
                    if member.issym():
                        links.add(member.name)
                    members.append(member)
                    total += member.size
                    if len(members) > MAX_MEMBERS or total > MAX_ARCHIVE_BYTES:
                        raise InputError(f"--sysroot {path}: archive too large for a capture "
                                         f"(limits: {MAX_MEMBERS} entries, {MAX_ARCHIVE_BYTES >> 20} MiB)")
                _extract(archive, members, tmp)
        except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
            raise InputError(f"--sysroot {path}: not a readable capture archive ({exc})") from None
        yield tmp

