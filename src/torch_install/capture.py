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
        return self._secrets(self._personal(data))

    @staticmethod
    def _secrets(data: bytes) -> bytes:
        """URL credentials and secret-named values masked, as in every other output (``display.redact``)."""
        from .display import redact

        text = data.decode("utf-8", "surrogateescape")
        masked = redact(text)
        return data if masked == text else masked.encode("utf-8", "surrogateescape")

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
    import tarfile  # here and where an archive is read: a captured tree (--sysroot DIR) loads no archive module

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
MAX_FILE_BYTES = MAX_ARCHIVE_BYTES  # the archive file itself, compressed
_LONG_HEADERS = (b"L", b"K")  # GNU long name and long link: their data is the name
_PAX_HEADERS = (b"x", b"X", b"g")
# The types tarfile knows; it skips the data of the regular ones and of any type it does not know
_REGULAR = (b"0", b"\0", b"7")
_KNOWN = (*_REGULAR, b"1", b"2", b"3", b"4", b"5", b"6", *_LONG_HEADERS, b"S")
# The first bytes of files that are not a gzip-compressed or plain tar
_OTHER_FORMATS = {b"BZh": "a bzip2-compressed file", b"\xfd7zXZ\0": "an xz-compressed file",
                  b"\x28\xb5\x2f\xfd": "a zstd-compressed file", b"\x5d\0\0": "an lzma-compressed file",
                  b"PK\x03\x04": "a zip archive"}
_PAX_RECORD = rb"(\d{1,6}) ([^=\n]+)="


def _tar_number(field: bytes) -> int | None:
    """A numeric header field as tarfile reads it (``nti``: base-256, else octal as ``int(…, 8)`` takes it, with
    signs, underscores and blanks), None where tarfile finds it invalid."""
    if field[:1] in (b"\x80", b"\xff"):
        value = int.from_bytes(field[1:], "big")
        return value - 256 ** (len(field) - 1) if field[:1] == b"\xff" else value
    try:
        return int(field.split(b"\0", 1)[0].decode("ascii").strip() or "0", 8)
    except ValueError:
        return None


def _plain_size(field: bytes) -> int | None:
    """A size field written as tar writers write one: base-256, or octal digits padded with blanks or NULs; None
    for a sign, an underscore, or anything else ``int(…, 8)`` would also take."""
    if field[:1] == b"\x80":
        return int.from_bytes(field[1:], "big")
    digits = field.split(b"\0", 1)[0].strip(b" ")
    return int(digits or b"0", 8) if all(48 <= c <= 55 for c in digits) else None


def _pax_keys(data: bytes) -> list[str]:
    """The keywords of a PAX header's records ("%d %s=%s\n", each length counting the whole record), or
    InputError when they do not fill it exactly so (tarfile versions read a malformed one differently)."""
    keys: list[str] = []
    at, end = 0, len(data)
    while at < end:
        found = re.compile(_PAX_RECORD).match(data, at)
        length = int(found[1]) if found else 0
        if found is None or length <= found.end() - at or at + length > end or data[at + length - 1] != 10:
            raise InputError(f"a malformed extended (PAX) header at byte {at}")
        keys.append(found[2].decode("utf-8", "surrogateescape"))
        at += length
    return keys


def _check_headers(data: bytes) -> None:
    """Walk the tar headers of an archive before tarfile parses them, stepping from header to header as tarfile
    does, and refuse (InputError) what tarfile would read into memory unbounded or another way: a PAX or long-name
    header over MAX_HEADER_BYTES, a total over MAX_ARCHIVE_BYTES (found before that much is read), a size that is
    not plain digits (a sign, an underscore: tarfile's ``int(…, 8)`` takes them), a negative base-256 size, a
    sparse member, a PAX record that resizes a member. Where tarfile stops (a zero block, a bad checksum, the
    end) this stops too."""
    import gzip
    import tarfile

    stream = gzip.GzipFile(fileobj=io.BytesIO(data)) if data[:2] == b"\x1f\x8b" else io.BytesIO(data)
    read = 0
    while True:
        block = stream.read(512)
        if len(block) < 512 or not block.strip(b"\0"):
            return
        checksum = _tar_number(block[148:156])
        if checksum is None or checksum not in tarfile.calc_chksums(block):  # type: ignore[attr-defined]
            return
        kind, name = block[156:157], block[:100].split(b"\0", 1)[0]
        size = _plain_size(block[124:136])
        if size is None or size != _tar_number(block[124:136]):
            written = block[124:136].rstrip(bytes(1)).decode("ascii", "replace")
            raise InputError(f"a member size written {written!r}, which tar readers read differently (a capture's "
                             "are octal digits)")
        if kind == b"S":
            raise InputError(f"{name.decode('utf-8', 'replace')!r}: a sparse file (a capture holds plain files)")
        if kind in _LONG_HEADERS or kind in _PAX_HEADERS:
            if size > MAX_HEADER_BYTES:
                raise InputError(f"an archive header of {size} bytes (a capture's are small)")
            content = stream.read(-(-size // 512) * 512)[:size]
            if kind in _PAX_HEADERS:
                keys = _pax_keys(content)
                if "size" in keys or any(key.startswith("GNU.sparse") for key in keys):
                    raise InputError("an extended header that resizes a member or makes it sparse (a capture's "
                                     "members are small plain files)")
            read += 512 + size
            continue
        carries_data = (kind in _REGULAR and not (kind == b"\0" and name.endswith(b"/"))) or kind not in _KNOWN
        read += 512 + (size if carries_data else 0)
        if read > MAX_ARCHIVE_BYTES + MAX_MEMBERS * 512:
            raise InputError("archive too large for a capture")
        left = -(-size // 512) * 512 if carries_data else 0
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
    names of MAX_NAME characters and MAX_DEPTH directories, every header checked before tarfile reads it. Only a
    gzip-compressed or plain tar is read. Anything else is one InputError line naming the path and the member."""
    import tarfile

    from .probe import read_regular

    files: dict[str, bytes] = {}
    dirs: set[str] = set()
    links: dict[str, str] = {}
    total = 0
    try:
        data = read_regular(path, MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise InputError(f"archive too large for a capture: over {MAX_FILE_BYTES >> 20} MiB")
        other = next((what for magic, what in _OTHER_FORMATS.items() if data.startswith(magic)), None)
        if other:
            raise InputError(f"{other}; a capture is a gzip-compressed tar (.tar.gz)")
        _check_headers(data)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz" if data[:2] == b"\x1f\x8b" else "r:") as archive:
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
        why = " ".join(str(getattr(exc, "strerror", None) or exc).split()) or type(exc).__name__
        raise InputError(f"--sysroot {path}: not a readable capture archive ({why})") from None
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
