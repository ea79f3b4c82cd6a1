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


class Redactor:
    """Replaces identifying values with stable stand-ins."""

    def __init__(self, hostname: str | None = None) -> None:
        self._uuids: dict[bytes, bytes] = {}
        self._addresses: dict[bytes, bytes] = {}
        self._users: dict[bytes, bytes] = {}
        self._hostname = hostname.encode() if hostname and len(hostname) >= 3 else None

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
            data = data.replace(self._hostname, b"redacted-host")
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


@contextmanager
def sysroot_dir(path: str | Path) -> Iterator[str]:
    """A captured tree as a directory: the directory itself, or a capture archive extracted to a temporary
    directory (removed afterwards). Anything else is an InputError naming the path."""
    path = Path(path)
    if path.is_dir():
        yield str(path)
        return
    if not path.is_file() or not path.name.endswith((".tar.gz", ".tgz", ".tar")):
        raise InputError(f"--sysroot {path}: not a directory or a .tar.gz capture")
    if not hasattr(tarfile, "data_filter"):
        raise InputError(f"--sysroot {path}: this Python's tarfile cannot extract safely; extract it and pass the "
                         "directory")
    with tempfile.TemporaryDirectory(prefix="torch-install-sysroot-") as tmp:
        try:
            with tarfile.open(path) as archive:
                members: list[tarfile.TarInfo] = []
                total = 0
                for member in archive:  # checked header by header: a bomb is refused before it is inflated
                    members.append(member)
                    total += member.size
                    if len(members) > MAX_MEMBERS or total > MAX_ARCHIVE_BYTES:
                        raise InputError(f"--sysroot {path}: archive too large for a capture "
                                         f"(limits: {MAX_MEMBERS} entries, {MAX_ARCHIVE_BYTES >> 20} MiB)")
                archive.extractall(tmp, members=members, filter="data")
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise InputError(f"--sysroot {path}: not a readable capture archive ({exc})") from None
        yield tmp

