"""Inspect a Python environment's PyTorch install without importing torch.

Reads what the interpreter would import (its import path, from ``interpreter``), each torch-family
distribution's dist-info (``METADATA``, ``WHEEL``, ``INSTALLER``, ``RECORD``) and ``<package>/version.py``
parsed with ``ast``; nothing from the environment's packages is imported or executed.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..interpreter import Interpreter, query_interpreter, this_interpreter
from ..resolver.request import canonical_name as normalize
from ..versions import small_int

MAX_METADATA = 1024 * 1024  # METADATA, WHEEL, version.py: real ones are far smaller; a bigger one is not read
MAX_RECORD = 16 * 1024 * 1024
MAX_RECORD_LINE = 128 * 1024  # the csv module's field limit; no path of a real RECORD comes close
MAX_INSTALLER = 256
MAX_EGG_LINK = 4096

# Distributions the doctor reads (normalized names); nvidia-* and intel oneAPI runtimes by prefix.
FAMILY = ("torch", "torchvision", "torchaudio")
COMPANION_RUNTIMES = ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu", "triton-xpu",
                      "cuda-toolkit", "cuda-bindings", "pip", "uv")
RUNTIME_PREFIXES = ("nvidia-", "intel-", "rocm-", "amd-torch-device-")
VERSION_PY_FIELDS = ("__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu")
_DIST_DIR = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+?)(?:-py[0-9][^-]*)?\.(?P<kind>dist-info|egg-info)$")


def _wanted(name: str) -> bool:
    return name in FAMILY or name in COMPANION_RUNTIMES or name.startswith(RUNTIME_PREFIXES)


@dataclass(frozen=True)
class Dist:
    """One installed distribution's metadata directory."""

    name: str  # normalized
    version: str  # METADATA Version (falls back to the directory name)
    path: str  # the .dist-info / .egg-info directory, or the .egg-link file
    location: str  # the sys.path entry holding it
    kind: str = "dist-info"  # dist-info | egg-info | egg-link
    installer: str | None = None
    requires: tuple[str, ...] = ()  # Requires-Dist lines, as written
    requires_python: str | None = None
    wheel_tags: tuple[str, ...] = ()
    wheel_build: str | None = None
    problems: tuple[str, ...] = ()  # what could not be read

    @property
    def local_label(self) -> str | None:
        return self.version.partition("+")[2] or None

    @property
    def public_version(self) -> str:
        return self.version.partition("+")[0]

    def record_size(self) -> int | None:
        """Bytes of the files RECORD lists (sizes as RECORD states them), or None without a RECORD."""
        if self.kind != "dist-info":
            return None
        text, _ = read_file(os.path.join(self.path, "RECORD"), MAX_RECORD)
        if text is None:
            return None
        total = 0
        for line in text.splitlines():
            total += small_int(line.rsplit(",", 1)[-1].strip()) or 0
        return total


@dataclass(frozen=True)
class Build:
    """A package's ``version.py`` (torch, torchvision, torchaudio), read with ``ast``."""

    package: str
    path: str
    fields: Mapping[str, str | bool | None] = field(default_factory=dict)
    problem: str | None = None  # "syntax error at line 3", "unreadable"

    @property
    def version(self) -> str | None:
        value = self.fields.get("__version__")
        return value if isinstance(value, str) else None

    def text(self, name: str) -> str | None:
        value = self.fields.get(name)
        return value if isinstance(value, str) and value else None

    @property
    def local_label(self) -> str | None:
        return (self.version or "").partition("+")[2] or None


@dataclass(frozen=True)
class Installed:
    """What an environment holds, as seen without importing torch."""

    interpreter: Interpreter
    dists: tuple[Dist, ...] = ()  # torch family, triton, cuda/nvidia/intel runtimes, pip, uv: path order
    builds: Mapping[str, Build] = field(default_factory=dict)  # package -> version.py `import` would find
    packages: Mapping[str, str] = field(default_factory=dict)  # package -> directory `import` would find
    leftovers: tuple[str, ...] = ()  # "~orch" directories from interrupted uninstalls
    conda_torch: tuple[str, ...] = ()  # conda-meta/pytorch-*.json records in the prefix

    def all_named(self, name: str) -> tuple[Dist, ...]:
        return tuple(d for d in self.dists if d.name == name)

    def dist(self, name: str) -> Dist | None:
        """The first distribution of that name on the path (the one pip reports), or None."""
        return next((d for d in self.dists if d.name == name), None)


# --- files ------------------------------------------------------------------------------------

def read_file(path: str, limit: int = MAX_METADATA) -> tuple[str | None, str | None]:
    """``(text, None)``, or ``(None, why)`` with why one of "missing", "not a regular file" (a FIFO or device
    is never waited on), "larger than N bytes" or "unreadable (reason)": a file of an inspected environment
    is never trusted to be small, regular or readable."""
    from ..probe import read_regular

    try:
        data = read_regular(path, limit + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None, "missing"
    except OSError as exc:
        return None, f"unreadable ({exc.strerror.lower()})" if exc.strerror else "not a regular file"
    except ValueError:  # a NUL in the path
        return None, "missing"
    if len(data) > limit:
        return None, f"larger than {limit} bytes, not read"
    return data.decode("utf-8", "replace"), None


def record_paths(dist_info: str) -> list[str] | None:
    """The paths a ``.dist-info`` directory's RECORD lists (None: no readable RECORD); a line longer than csv's
    field limit is skipped."""
    import csv

    text, _ = read_file(os.path.join(dist_info, "RECORD"), MAX_RECORD)
    if text is None:
        return None
    lines = (line for line in text.splitlines() if len(line) < MAX_RECORD_LINE)
    return [row[0] for row in csv.reader(lines) if row and row[0]]


def parse_headers(text: str) -> dict[str, list[str]]:
    """RFC 822-style headers of METADATA/WHEEL (up to the first blank line); repeated keys keep every value."""
    headers: dict[str, list[str]] = {}
    last: str | None = None
    for line in text.splitlines():
        if not line.strip():
            break
        if line[0] in " \t" and last is not None:
            headers[last][-1] += " " + line.strip()
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        last = key.strip().lower()
        headers.setdefault(last, []).append(value.strip())
    return headers


MAX_VERSION_PY = 64 * 1024  # torch's is under 1 KiB


def read_version_py(package: str, path: str) -> Build:
    """Literal top-level assignments of ``version.py`` (``cuda: Optional[str] = '12.8'`` included)."""
    text, why = read_file(path)
    if text is None:
        return Build(package, path, problem=why)
    if len(text) > MAX_VERSION_PY:
        return Build(package, path, problem=f"is {len(text)} characters, over the {MAX_VERSION_PY} a version.py has")
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        return Build(package, path, problem=f"not valid Python (syntax error{f' at line {line}' if line else ''})")
    except (RecursionError, MemoryError):  # an expression nested past the parser's limits
        return Build(package, path, problem="nested too deeply to be a version.py")
    values: dict[str, str | bool | None] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if (isinstance(target, ast.Name) and target.id in VERSION_PY_FIELDS and isinstance(value, ast.Constant)
                and (value.value is None or isinstance(value.value, (str, bool)))):
            values[target.id] = value.value
    if not isinstance(values.get("__version__"), str):
        return Build(package, path, values, problem="has no __version__ string")
    return Build(package, path, values)


def read_dist(directory: str, location: str, name: str, version: str, kind: str) -> Dist:
    """One dist-info/egg-info directory; unreadable parts become ``problems``, never exceptions."""
    problems: list[str] = []
    metadata_file = "METADATA" if kind == "dist-info" else "PKG-INFO"
    text, why = read_file(os.path.join(directory, metadata_file))
    requires: tuple[str, ...] = ()
    requires_python = None
    if text is None:
        problems.append(f"{metadata_file} {why}")
    else:
        headers = parse_headers(text)
        if headers.get("version"):
            version = headers["version"][0]
        else:
            problems.append(f"{metadata_file} has no Version")
        requires = tuple(headers.get("requires-dist", ()))
        requires_python = next(iter(headers.get("requires-python") or ()), None)
    installer = None
    tags: tuple[str, ...] = ()
    build = None
    if kind == "dist-info":
        installer_text, why = read_file(os.path.join(directory, "INSTALLER"), MAX_INSTALLER)
        installer = (installer_text or "").strip() or None
        if why and why != "missing":  # INSTALLER is optional
            problems.append(f"INSTALLER {why}")
        wheel, why = read_file(os.path.join(directory, "WHEEL"))
        if wheel is not None:
            wheel_headers = parse_headers(wheel)
            tags = tuple(wheel_headers.get("tag", ()))
            build = next(iter(wheel_headers.get("build") or ()), None)
        elif why != "missing":
            problems.append(f"WHEEL {why}")
        record = os.path.join(directory, "RECORD")
        if not os.path.lexists(record):
            problems.append("RECORD missing")
        else:
            import stat

            try:  # only looked at here; read (capped, regular files only) when its sizes are needed
                info = os.stat(record)
            except OSError as exc:
                problems.append(f"RECORD unreadable ({(exc.strerror or str(exc)).lower()})")
            else:
                if not stat.S_ISREG(info.st_mode):
                    problems.append("RECORD not a regular file")
                elif info.st_size > MAX_RECORD:
                    problems.append(f"RECORD larger than {MAX_RECORD} bytes, not read")
    return Dist(name=name, version=version, path=directory, location=location, kind=kind, installer=installer,
                requires=requires, requires_python=requires_python, wheel_tags=tags, wheel_build=build,
                problems=tuple(problems))


def _egg_link(path: str, location: str, name: str) -> Dist:
    text, why = read_file(path, MAX_EGG_LINK)
    target = (text or "").splitlines()
    problem = f"egg-link {why}" if why else "egg-link is empty"
    return Dist(name=name, version="0+develop", path=path, location=target[0].strip() if target else location,
                kind="egg-link", problems=() if target else (problem,))


def _scan_location(location: str) -> tuple[list[Dist], list[str], list[str]]:
    """Dists of interest, top-level package dirs and '~' leftovers in one sys.path entry."""
    try:
        names = sorted(os.listdir(location))
    except OSError:
        return [], [], []
    dists: list[Dist] = []
    leftovers: list[str] = []
    for entry in names:
        if entry.startswith("~"):
            if normalize(entry[1:]).startswith(("orch", "rchvision", "rchaudio")):
                leftovers.append(os.path.join(location, entry))
            continue
        if entry.endswith(".egg-link"):
            name = normalize(entry[: -len(".egg-link")])
            if _wanted(name):
                dists.append(_egg_link(os.path.join(location, entry), location, name))
            continue
        match = _DIST_DIR.match(entry)
        if not match:
            continue
        name = normalize(match["name"])
        if _wanted(name):
            dists.append(read_dist(os.path.join(location, entry), location, name, match["version"], match["kind"]))
    return dists, names, leftovers


def inspect_environment(interpreter: Interpreter) -> Installed:
    """Walk the interpreter's import path: dists of interest, version.py of the family, leftovers."""
    dists: list[Dist] = []
    leftovers: list[str] = []
    packages: dict[str, str] = {}
    for location in interpreter.path:
        if not os.path.isdir(location):
            continue
        found, names, left = _scan_location(location)
        dists += found
        leftovers += left
        for package in FAMILY:
            if package not in packages and package in names and os.path.isfile(
                    os.path.join(location, package, "__init__.py")):
                packages[package] = os.path.join(location, package)
    builds = {package: read_version_py(package, os.path.join(directory, "version.py"))
              for package, directory in packages.items()}
    conda_torch: tuple[str, ...] = ()
    if interpreter.prefix:
        meta = os.path.join(interpreter.prefix, "conda-meta")
        try:
            names = os.listdir(meta)
        except OSError:
            names = []
        conda_torch = tuple(sorted(n for n in names if re.match(r"^pytorch-[0-9].*\.json$", n)))
    return Installed(interpreter=interpreter, dists=tuple(dists), builds=builds, packages=packages,
                     leftovers=tuple(leftovers), conda_torch=conda_torch)


def inspect(python: str | None = None, environ: Mapping[str, str] | None = None) -> Installed:
    """This interpreter's environment, or the one of the interpreter at ``python``."""
    interpreter = query_interpreter(python, environ) if python is not None else this_interpreter(environ)
    return inspect_environment(interpreter)
