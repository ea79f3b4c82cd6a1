"""The only door from detection to the host: files, directories, links, environment, commands, host facts.

``Probe()`` reads the real machine. ``Probe(root=DIR)`` reads a captured tree instead and never touches
the real host; its layout (also what ``detect --capture`` writes) is:

    DIR/proc/..., DIR/sys/..., DIR/etc/..., DIR/opt/...   files, as on the machine
    DIR/_env.json                                          environment variables {name: value}
    DIR/_host.json                                         facts no file holds (see HOST_FACTS)
    DIR/_commands/<slug>                                   a command's stdout (slug: see command_slug)
    DIR/_commands/<slug>.stderr / .rc / .timeout           its stderr, exit code, or "it hung"

Every access is recorded (``probe.accessed``) so a capture can store exactly what detection read.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Callable, Mapping

from .records import Record
from .versions import small_int

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from pathlib import Path

MAX_READ = 4 * 1024 * 1024  # no file detection reads is legitimately bigger
DEFAULT_TIMEOUT = 5.0


class CommandResult(Record):
    """What running a command gave. ``error`` is set when it could not run or did not finish."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    error: str | None = None  # "not found", "timed out after 5 s", "permission denied", …

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0


def command_slug(argv: list[str] | tuple[str, ...]) -> str:
    """File name for a captured command: basename of argv[0] and the arguments joined by '_',
    every character outside ``[A-Za-z0-9.,=+-]`` replaced by '_'."""
    parts = [re.split(r"[\\/]", argv[0])[-1].removesuffix(".exe"), *argv[1:]]  # same slug on every OS
    return re.sub(r"[^A-Za-z0-9.,=+-]", "_", "_".join(parts))[:200]


def _free_threaded() -> str:
    return "true" if not getattr(sys, "_is_gil_enabled", lambda: True)() else "false"


def _libc() -> str:
    try:  # what platform.libc_ver() reads first, without importing platform
        found = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        found = None
    if found and len(found.split()) == 2:
        return found
    import platform

    name, version = platform.libc_ver()
    return f"{name} {version}".strip()


def _uname(field: str, name: str) -> Callable[[], str]:
    """``os.uname()``'s field where there is one, which is what ``platform.<name>()`` answers there; platform
    itself elsewhere (Windows)."""
    def call() -> str:
        if hasattr(os, "uname"):
            return str(getattr(os.uname(), field))
        return _platform(name)()

    return call


def _platform(name: str) -> Callable[[], str]:
    """``platform.<name>()``, importing ``platform`` only when a live host is asked (a captured tree never is)."""
    def call() -> str:
        import platform

        return getattr(platform, name)()

    return call


# Facts about the running host that no file holds; a capture stores them in _host.json.
HOST_FACTS: dict[str, Callable[[], str]] = {
    "system": _uname("sysname", "system"),  # Linux, Windows, Darwin
    "machine": _uname("machine", "machine"),  # x86_64, aarch64, AMD64, arm64
    "python_version": lambda: sys.version.split()[0],  # 3.12.4, as platform.python_version() reads it
    "python_implementation": lambda: sys.implementation.name,  # cpython
    "python_free_threaded": _free_threaded,  # "true" / "false"
    "libc": _libc,  # "glibc 2.35", "" on musl/others
    "mac_ver": lambda: _platform("mac_ver")()[0],  # "14.5" (may be "10.16" under old SDK compat)
    "win_ver": lambda: _platform("version")() if sys.platform == "win32" else "",  # "10.0.22631"
    "release": _uname("release", "release"),  # kernel release: "5.15.153.1-microsoft-standard-WSL2"
}


class Accessed:
    """What a probe touched, for ``detect --capture``."""

    __slots__ = ("files", "dirs", "links", "env", "commands", "host")

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = set()
        self.links: dict[str, str] = {}
        self.env: dict[str, str] = {}
        self.commands: dict[str, CommandResult] = {}
        self.host: dict[str, str] = {}


class DirectoryTree:
    """A captured tree on disk (``Probe(root=DIR)``): read-only, and nothing outside it is ever read, a link that
    leads out of the tree included."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._real_root = os.path.realpath(root)  # resolved once: _inside compares against it
        self._prefix = os.path.join(root, "")
        self._link_free: dict[str, bool] = {self._prefix[:-1] or self._prefix: True}  # see _inside

    def _fs_path(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    def read(self, path: str, limit: int) -> bytes | None:
        fs_path = self._fs_path(path)
        if not self._inside(fs_path):
            return None
        try:
            return read_regular(fs_path, limit)
        except (OSError, ValueError):
            return None

    def listdir(self, path: str) -> list[str] | None:
        fs_path = self._fs_path(path)
        if not self._inside(fs_path):
            return None
        try:
            return sorted(os.listdir(fs_path))
        except (OSError, ValueError):
            return None

    def readlink(self, path: str) -> str | None:
        parent, name = os.path.split(self._fs_path(path))
        if name in ("", ".", "..") or not self._inside(parent):
            return None
        try:
            return os.readlink(os.path.join(parent, name))
        except (OSError, ValueError):
            return None

    def kind(self, path: str) -> str | None:
        """"dir", "file" (any other node: a marker or device node) or None when absent or out of the tree."""
        fs_path = self._fs_path(path)
        if not self._inside(fs_path):
            return None
        try:
            if not os.path.exists(fs_path):
                return None
            return "dir" if os.path.isdir(fs_path) else "file"
        except (OSError, ValueError):
            return None

    def _inside(self, fs_path: str) -> bool:
        """Whether a path of the captured tree, links resolved, stays inside the tree.

        A path is resolved (``os.path.realpath``) only when ``os.lstat`` finds a link on its way, or it
        holds a '.' or '..' part; what each directory gave is remembered for the tree's life (a captured
        tree does not change while it is read)."""
        if not fs_path.startswith(self._prefix):
            return self._resolves_inside(fs_path)
        rel = fs_path[len(self._prefix):]
        if os.altsep:
            rel = rel.replace(os.altsep, os.sep)
        if any(part in ("", ".", "..") for part in rel.split(os.sep)):
            return self._resolves_inside(fs_path)
        return self._stays_inside(fs_path)

    def _stays_inside(self, fs_path: str) -> bool:
        """``_inside`` for a plain path under the root: its parent stays inside, and it is no link or one
        that resolves inside."""
        known = self._link_free.get(fs_path)
        if known is None:
            known = self._stays_inside(os.path.dirname(fs_path)) and (
                not _may_be_link(fs_path) or self._resolves_inside(fs_path))
            self._link_free[fs_path] = known
        return known

    def _resolves_inside(self, fs_path: str) -> bool:
        try:
            return os.path.commonpath([self._real_root, os.path.realpath(fs_path)]) == self._real_root
        except ValueError:  # another drive, or a mix of absolute and relative paths
            return False


class MemoryTree:
    """A captured tree held in memory (a capture archive read by ``capture.read_capture``): files, directories
    and links by their path in the tree ("proc/driver/nvidia/version"). Nothing of it is ever on disk, and a link
    is only text: no path leads through one."""

    def __init__(self, files: Mapping[str, bytes], dirs: set[str], links: Mapping[str, str]) -> None:
        self.files, self.links = dict(files), dict(links)
        self.dirs = set(dirs) | {""}
        self.children: dict[str, set[str]] = {}
        for name in (*self.files, *self.dirs, *self.links):
            while name:
                parent, _, base = name.rpartition("/")
                self.dirs.add(parent)
                self.children.setdefault(parent, set()).add(base)
                name = parent

    @staticmethod
    def _key(path: str) -> str:
        return path.strip("/")

    def read(self, path: str, limit: int) -> bytes | None:
        data = self.files.get(self._key(path))
        return None if data is None else data[:limit]

    def listdir(self, path: str) -> list[str] | None:
        key = self._key(path)
        return sorted(self.children.get(key, ())) if key in self.dirs else None

    def readlink(self, path: str) -> str | None:
        return self.links.get(self._key(path))

    def kind(self, path: str) -> str | None:
        key = self._key(path)
        return "dir" if key in self.dirs else "file" if key in self.files or key in self.links else None


class Probe:
    """Read-only access to a machine: the real one (``root="/"``), a captured tree on disk (a directory), or one in
    memory (a ``MemoryTree``)."""

    def __init__(self, root: str | Path | MemoryTree = "/", env: Mapping[str, str] | None = None,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        if isinstance(root, MemoryTree):
            self._tree: DirectoryTree | MemoryTree | None = root
            self.is_host = False
        else:
            root = os.fspath(root)  # a str: reading files through os needs no pathlib at start-up
            self.is_host = root in ("/", "")
            self._tree = None if self.is_host else DirectoryTree(root)
        self.timeout = timeout
        self.accessed = Accessed()
        if env is not None:
            self._env = dict(env)
        elif self.is_host:
            self._env = dict(os.environ)
        else:
            self._env = self._load_json("_env.json")
        self._host_json = {} if self.is_host else self._load_json("_host.json")

    def _load_json(self, name: str) -> dict[str, str]:
        assert self._tree is not None
        data = self._tree.read(name, MAX_READ)
        try:
            loaded = json.loads(data.decode("utf-8")) if data is not None else None
        except (ValueError, RecursionError):
            return {}
        return {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}

    # files -----------------------------------------------------------------------------------
    def read_bytes(self, path: str, limit: int = MAX_READ) -> bytes | None:
        """A file's bytes (at most ``limit``), or None when it is absent, unreadable or not a regular file
        (a FIFO or device never blocks detection); in a captured tree, also when a link leads out of it."""
        if self._tree is not None:
            data = self._tree.read(path, limit)
        else:
            try:
                data = read_regular(path, limit)
            except (OSError, ValueError):
                data = None
        if data is not None:
            self.accessed.files[path] = data
        return data

    def read_text(self, path: str, limit: int = MAX_READ) -> str | None:
        """A file's text (undecodable bytes replaced), or None when it is absent or unreadable."""
        data = self.read_bytes(path, limit)
        return None if data is None else data.decode("utf-8", errors="replace")

    def listdir(self, path: str) -> list[str]:
        """Sorted entry names of a directory; [] when it is absent or unreadable."""
        if self._tree is not None:
            names = self._tree.listdir(path)
        else:
            try:
                names = sorted(os.listdir(path))
            except (OSError, ValueError):
                names = None
        if names is None:
            return []
        self.accessed.dirs.add(path)
        return names

    def readlink(self, path: str) -> str | None:
        """A symbolic link's target text, or None; in a captured tree, also None when a directory on its way
        leads out of the tree (the link itself is not followed: its target is only text)."""
        if self._tree is not None:
            target = self._tree.readlink(path)
        else:
            try:
                target = os.readlink(path)
            except (OSError, ValueError):
                target = None
        if target is not None:
            self.accessed.links[path] = target
        return target

    def exists(self, path: str) -> bool:
        """Whether a file, directory or device node is there; in a captured tree, False when a link on its way
        leads out of the tree (a host's /dev/nvidia0 never answers for a captured machine)."""
        if self._tree is not None:
            kind = self._tree.kind(path)
        else:
            try:
                kind = ("dir" if os.path.isdir(path) else "file") if os.path.exists(path) else None
            except (OSError, ValueError):
                kind = None
        if kind == "dir":
            self.accessed.dirs.add(path)
        elif kind:  # a marker file or device node (/.dockerenv, /dev/dxg): a capture keeps it, empty
            self.accessed.files.setdefault(path, b"")
        return kind is not None

    # environment and host facts --------------------------------------------------------------
    def env(self, name: str) -> str | None:
        value = self._env.get(name)
        if value is not None:
            self.accessed.env[name] = value
        return value

    @property
    def environ(self) -> Mapping[str, str]:
        return dict(self._env)

    def host(self, name: str) -> str | None:
        """A HOST_FACTS value: live on the host, from _host.json in a captured tree ('' means empty)."""
        if not self.is_host:
            value = self._host_json.get(name)
            if value is not None:
                self.accessed.host[name] = value
            return value
        getter = HOST_FACTS.get(name)
        if getter is None:
            return None
        try:
            value = getter()
        except Exception:  # platform calls can fail in odd sandboxes; unknown is the honest answer
            return None
        self.accessed.host[name] = value
        return value

    def library(self, name: str, query: Callable[[], object]) -> object:
        """What a library call answers (NVML through ctypes): ``query()`` on the live host, recorded as JSON
        under ``name`` in the host facts; replayed from ``_host.json`` in a captured tree (None when absent or
        unreadable). ``query`` must return plain JSON data and never raise."""
        if self.is_host:
            answer = query()
            self.accessed.host[name] = json.dumps(answer)
            return answer
        try:
            return json.loads(self.host(name) or "null")
        except (ValueError, RecursionError):
            return None

    # commands --------------------------------------------------------------------------------
    def run(self, argv: list[str], timeout: float | None = None) -> CommandResult:
        """Run a command (never through a shell) with a timeout; a captured tree replays its output."""
        result = self._run_host(argv, timeout) if self._tree is None else self._replay(argv)
        self.accessed.commands[command_slug(argv)] = result
        return result

    def _run_host(self, argv: list[str], timeout: float | None) -> CommandResult:
        from .child_process import run_captured  # only when a command really runs

        limit = self.timeout if timeout is None else timeout
        try:
            done = run_captured(argv, limit, env=self._env)
        except FileNotFoundError:
            return CommandResult(tuple(argv), None, error="not found")
        except PermissionError:
            return CommandResult(tuple(argv), None, error="permission denied")
        except OSError as exc:
            return CommandResult(tuple(argv), None, error=f"could not run: {exc.strerror or exc}")
        if done.timed_out:
            return CommandResult(tuple(argv), None, error=f"timed out after {limit:g} s and was killed")
        return CommandResult(tuple(argv), done.returncode, done.stdout, done.stderr)

    def _replay(self, argv: list[str]) -> CommandResult:
        assert self._tree is not None
        base = f"_commands/{command_slug(argv)}"
        if self._tree.kind(base + ".timeout") is not None:
            return CommandResult(tuple(argv), None, error=f"timed out after {self.timeout:g} s and was killed")
        stdout = self._tree.read(base, MAX_READ)
        if stdout is None:
            return CommandResult(tuple(argv), None, error="not found")
        # the sidecars obey the tree's rule too: a link out of the tree is not read (nor copied into a capture)
        stderr = (self._tree.read(base + ".stderr", MAX_READ) or b"").decode("utf-8", "replace")
        rc_text = (self._tree.read(base + ".rc", 64) or b"0").decode("utf-8", "replace").strip()
        rc = small_int(rc_text[1:], 4) if rc_text[:1] == "-" else small_int(rc_text, 4)
        return CommandResult(tuple(argv), 1 if rc is None else -rc if rc_text[:1] == "-" else rc,
                             stdout.decode("utf-8", "replace"), stderr)


def read_regular(path: str, limit: int = MAX_READ) -> bytes:
    """At most ``limit`` bytes of a regular file. A FIFO, socket or device is an OSError, found without
    blocking (opened non-blocking, checked before any read); a file that never ends stops at ``limit``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size < limit:
            chunk = os.read(fd, min(limit - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _may_be_link(path: str) -> bool:
    """Whether the last part of ``path`` is a symbolic link (or, on Windows, any reparse point such as a
    junction), or cannot be told; a path that does not exist leads nowhere and is no link."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except (OSError, ValueError):
        return True
    return stat.S_ISLNK(st.st_mode) or bool(getattr(st, "st_file_attributes", 0) & 0x400)  # REPARSE_POINT
