"""Captures: everything one detection read, as a .tar.gz that ``--sysroot`` replays.

``write_capture(probe, path)`` stores the files, directories, links, command outputs, environment variables
and host facts a probe touched (layout in probe.py), with GPU UUIDs, other UUIDs, serial numbers and the
host name redacted, and MAC (and other hardware) addresses and the user names in home-directory paths too,
in stored paths as well as contents; the same value is always replaced by the same stand-in, so
``CUDA_VISIBLE_DEVICES=GPU-…`` still selects the same GPU in the replay. ``open_sysroot(path)`` gives the probe of
a captured tree (a directory) or of a capture archive, whose members are read into memory and never written to disk:
no link, name spelling or planted directory can redirect a write, since there is none.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
import time
import zlib
from pathlib import Path

from .errors import InputError
from .probe import MemoryTree, Probe

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


MAX_HEADER_BYTES = 64 * 1024  # a PAX or GNU long-name header; a capture's are a few hundred bytes
MAX_NAME = 1024  # characters of a member's path; a capture's longest are under 200
MAX_DEPTH = 32  # directories deep; a capture's deepest (sysfs) are under 15
_LONG_HEADERS = (b"x", b"g", b"L", b"K")


def _header_size(block: bytes) -> int:
    field = block[124:136]
    if field[0] & 0x80:  # GNU base-256
        return int.from_bytes(field[1:], "big")
    digits = field.split(b"\0", 1)[0].strip()
    return int(digits, 8) if digits and all(48 <= c <= 55 for c in digits) else 0


def _check_headers(path: str) -> None:
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


def _member_name(raw: str) -> str:
    """A member's path in the tree ("proc/driver/nvidia/version"): "." parts dropped; InputError for a path that
    leaves the tree or could not come from a capture."""
    if len(raw) > MAX_NAME:
        raise InputError(f"{raw[:40]!r}…: a name of {len(raw)} characters, longer than a capture's ({MAX_NAME})")
    if raw.startswith("/") or "\\" in raw or "\0" in raw:
        raise InputError(f"{raw[:80]!r}: a path outside the capture")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise InputError(f"{raw[:80]!r}: a path outside the capture")
    if len(parts) > MAX_DEPTH:
        raise InputError(f"{raw[:80]!r}…: nested {len(parts)} deep, deeper than a capture's {MAX_DEPTH}")
    return "/".join(parts)


def read_capture(path: str) -> MemoryTree:
    """A capture archive's members, read into memory (never written to disk): regular files, directories and links
    (a link's target is only text, never followed). Bounded: MAX_MEMBERS entries, MAX_ARCHIVE_BYTES of contents,
    names of MAX_NAME characters and MAX_DEPTH directories. Anything else is an InputError naming the member."""
    files: dict[str, bytes] = {}
    dirs: set[str] = set()
    links: dict[str, str] = {}
    total = 0
    try:
        _check_headers(path)
        with tarfile.open(path) as archive:
            for count, member in enumerate(archive, 1):  # header by header: a bomb is refused before it inflates
                if count > MAX_MEMBERS:
                    raise InputError(f"archive too large for a capture: more than {MAX_MEMBERS} entries")
                name = _member_name(member.name)
                if not name:
                    continue
                if member.isdir():
                    dirs.add(name)
                elif member.issym():
                    links[name] = member.linkname[:MAX_NAME]
                elif member.isreg():
                    total += member.size
                    if total > MAX_ARCHIVE_BYTES:
                        raise InputError(f"archive too large for a capture: contents over {MAX_ARCHIVE_BYTES} bytes")
                    source = archive.extractfile(member)
                    files[name] = source.read(member.size) if source else b""
                else:
                    kind = "hard link" if member.islnk() else "special file"
                    raise InputError(f"{name!r}: a {kind} (a capture holds files, directories and links only)")
    except InputError as exc:
        raise InputError(f"--sysroot {path}: {exc}") from None
    except (tarfile.TarError, OSError, EOFError, ValueError, zlib.error) as exc:
        raise InputError(f"--sysroot {path}: not a readable capture archive ({exc})") from None
    _check_shape(path, files, dirs, links)
    return MemoryTree(files, dirs, links)


def _check_shape(path: str, files: dict[str, bytes], dirs: set[str], links: dict[str, str]) -> None:
    """No path is two things: a file or link over a directory, or a path through a link, is refused."""
    parents = {name.rsplit("/", 1)[0] for name in (*files, *dirs, *links) if "/" in name}
    parents |= {"/".join(p.split("/")[:i]) for p in parents for i in range(1, p.count("/") + 1)}
    for name in sorted(parents & (set(files) | set(links))):
        what = "a path through a link" if name in links else "a file over a directory"
        raise InputError(f"--sysroot {path}: {name!r}: {what}")
    for name in sorted(set(files) & set(links)):
        raise InputError(f"--sysroot {path}: {name!r}: a file and a link of one name")


def open_sysroot(path: str) -> Probe:
    """The probe of a captured machine: a captured tree (a directory, read in place) or a capture archive (read
    into memory). Anything else is an InputError naming the path."""
    if os.path.isdir(path):  # os.path, not Path: a name too long for the system is False, not an OSError
        return Probe(root=path)
    if not os.path.isfile(path) or not path.endswith((".tar.gz", ".tgz", ".tar")):
        raise InputError(f"--sysroot {path}: not a directory or a .tar.gz capture")
    return Probe(root=read_capture(path))
