"""The machine profile: everything about a machine that decides which PyTorch build runs on it.

A profile is what detection produces and what the resolver consumes; its JSON form (documented in
docs/machine-profile.md) describes machines other than this one (``--target FILE``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from types import MappingProxyType

from . import vendors
from .display import excerpt
from .drivers import nvidia_driver_of_file_version
from .errors import InputError
from .records import Record
from .versions import release_part

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

SCHEMA_VERSION = 1

OSES = ("linux", "windows", "macos")
ARCHES = ("x86_64", "aarch64", "arm64")

# Patterns are strings: only profile validation needs them, and re.fullmatch caches what it compiles.
_VERSION = r"^[0-9]+(\.[0-9]+){0,3}$"
# a Python patch release as interpreters report it: "3.14.1", "3.15.0rc1" (the one pattern for profiles,
# detection and the inspected interpreter)
PYTHON_PATCH = r"3\.[0-9]{1,2}\.[0-9]{1,3}(?:(?:a|b|rc)[0-9]{1,3})?"
_PATTERNS: dict[str, tuple[str, str]] = {
    "python": (r"^3\.[0-9]{1,2}t?$", 'like "3.12" or "3.13t" (or "3.14.1")'),
    "python_full": (f"^{PYTHON_PATCH}$", 'like "3.14.1"'),
    "pci_id": (r"^[0-9a-f]{4}:[0-9a-f]{4}$", 'like "10de:2684" (lower-case hex vendor:device)'),
    "compute_capability": (r"^[0-9]{1,2}\.[0-9]$", 'like "8.9"'),
    "gfx": (r"^gfx[0-9a-f]{3,4}$", 'like "gfx1100"'),
}
_VERSION_FIELDS = ("glibc", "musl", "nvidia_driver", "cuda_driver_api", "rocm", "amdgpu_driver", "jetson")
# ROCm and amdgpu versions as machines and packages report them: a pre-release ("6.4.0rc1") or a build suffix
# ("7.1.0-38", hipconfig's "6.2.41133-dd7f95766", a package's "6.4.0.60400-47~24.04"). Rules read the
# leading dotted numbers (versions.release_numbers).
_SUFFIXED_VERSION = r"^[0-9]+(\.[0-9]+){0,3}(?:(?:rc|alpha|beta|a|b|dev|post)[0-9]*|[-+~][0-9A-Za-z.+~-]{1,40})?$"
_SUFFIXED_FIELDS = ("rocm", "amdgpu_driver")
_VERSION_EXAMPLES = {"glibc": "2.35", "musl": "1.2.5", "nvidia_driver": "550.54.15", "cuda_driver_api": "12.4",
                     "rocm": "6.4.1", "amdgpu_driver": "6.10.5", "jetson": "36.4.3"}
# Plausible major versions (inclusive): anything outside is a typo or garbage, not a future release.
_MAJOR_BOUNDS: dict[str, tuple[int, int, str]] = {
    "nvidia_driver": (100, 999, "an NVIDIA driver major from 100 to 999"),
    "rocm": (1, 99, "a ROCm major from 1 to 99"),
    "amdgpu_driver": (1, 99, "an amdgpu DKMS driver version like \"6.10.5\""),
    "cuda_driver_api": (1, 99, "a CUDA major from 1 to 99"),
    "glibc": (2, 2, "glibc 2.x"),
}


# The start of ``sources["nvidia_driver"]`` when the driver version stands for "at least the GA driver of the CUDA
# version the driver reports" (completion.py sets it; the resolver and the text summary say so).
DRIVER_FROM_CUDA_VERSION = "from the CUDA Version"


class Gpu(Record):
    """One GPU model on the machine (``count`` identical devices in PCI bus order). Immutable: change a copy
    with ``gpu._replace(...)``. The field ``count`` hides ``tuple.count``."""

    vendor: str
    name: str | None = None
    pci_id: str | None = None
    compute_capability: str | None = None  # NVIDIA, e.g. "8.9"
    gfx: str | None = None  # AMD LLVM target, e.g. "gfx1100"
    family: str | None = None  # Intel/Apple family, e.g. "alchemist", "battlemage", "m2"
    integrated: bool | None = None
    count: int = 1  # type: ignore[assignment]  # the profile's own field name; it hides tuple.count
    visible: bool = True
    driver: str | None = None  # bound kernel driver: nvidia, nouveau, amdgpu, i915, xe, vfio-pci …

    @property
    def sm(self) -> int | None:
        """Compute capability as an integer ×10 (8.9 → 89), or None."""
        if not self.compute_capability:
            return None
        major, minor = self.compute_capability.split(".")
        return int(major) * 10 + int(minor)

    @property
    def arch(self) -> str | None:
        """The architecture that decides which builds run it: ``sm_89``, ``gfx1100`` or a family (``alchemist``)."""
        return f"sm_{self.sm}" if self.sm is not None else self.gfx or self.family

    @property
    def label(self) -> str:
        """How messages name the GPU: its name, else its vendor and PCI id, else its vendor."""
        if self.name:
            return self.name
        return f"{self.vendor} GPU {self.pci_id}" if self.pci_id else f"{self.vendor} GPU"

    @property
    def label_with_arch(self) -> str:
        """``NVIDIA GeForce RTX 4090 (sm_89)``: the label and the architecture, for reasons and warnings."""
        return f"{self.label} ({self.arch})" if self.arch else self.label


class Machine(Record):
    """A machine profile. Every field is optional: None means unknown. Immutable: ``machine._replace(...)``."""

    os: str | None = None
    os_version: str | None = None
    arch: str | None = None
    python: str | None = None  # "3.12", free-threaded "3.13t"
    python_full: str | None = None  # "3.14.1" where known: some wheels exclude one patch release
    python_implementation: str | None = None  # "cpython", "pypy"
    glibc: str | None = None
    musl: str | None = None
    wsl: bool | None = None
    container: str | None = None  # docker, podman, kubernetes, lxc, …
    jetson: str | None = None  # L4T release, e.g. "36.4.3"
    rosetta: bool | None = None  # x86_64 Python translated on Apple silicon
    nvidia_driver: str | None = None  # "550.54.15"
    cuda_driver_api: str | None = None  # newest CUDA the driver supports, "12.4"
    rocm: str | None = None  # ROCm user space, "6.4.1"
    amdgpu_driver: str | None = None  # AMD's DKMS amdgpu kernel driver, "6.10.5" (none with the in-tree driver)
    gpus: tuple[Gpu, ...] = ()
    gpus_known: bool = True  # False: a profile that does not state its GPUs (unknown, not "none"); no JSON key
    sources: Mapping[str, str] = MappingProxyType({})  # "nvidia_driver" / "gpus[0].gfx" -> where from
    notes: tuple[str, ...] = ()  # detection problems and hints, one line each
    assumed: tuple[str, ...] = ()  # fields taken from this machine for a target profile
    schema: int = SCHEMA_VERSION

    @property
    def visible_gpus(self) -> tuple[Gpu, ...]:
        return tuple(g for g in self.gpus if g.visible)

    def gpus_of(self, vendor: str) -> tuple[Gpu, ...]:
        return tuple(g for g in self.gpus if g.vendor == vendor)

    @property
    def platform(self) -> str | None:
        """Matrix platform key: linux_x86_64, linux_aarch64, windows_x86_64, windows_arm64, macos_arm64 …"""
        if not self.os or not self.arch:
            return None
        arch = "arm64" if self.arch in ("arm64", "aarch64") and self.os != "linux" else self.arch
        if self.os == "linux" and arch == "arm64":
            arch = "aarch64"
        return f"{self.os}_{arch}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: schema first, unknown (None) and empty fields left out; ``gpus`` present unless the
        GPUs are unknown (a profile that did not state them)."""
        out: dict[str, Any] = {"schema": self.schema}
        for name, value in self._asdict().items():
            if name in ("schema", "gpus", "gpus_known") or value is None or value == () or value == {}:
                continue
            out[name] = dict(value) if isinstance(value, Mapping) else list(value) if isinstance(
                value, tuple) else value
        if self.gpus_known or self.gpus:
            out["gpus"] = [_gpu_to_dict(g) for g in self.gpus]
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


def _gpu_to_dict(gpu: Gpu) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in gpu._asdict().items():
        if value is None or (name == "count" and value == 1) or (name == "visible" and value is True):
            continue
        out[name] = value
    return out


_MACHINE_TYPES: dict[str, type | tuple[type, ...]] = {
    "schema": int, "os": str, "os_version": str, "arch": str, "python": str, "python_full": str,
    "python_implementation": str,
    "glibc": str, "musl": str, "wsl": bool, "container": str, "jetson": str, "rosetta": bool,
    "nvidia_driver": str, "cuda_driver_api": str, "rocm": str, "amdgpu_driver": str, "gpus": list, "sources": dict,
    "notes": list, "assumed": list,
}
_GPU_TYPES: dict[str, type | tuple[type, ...]] = {
    "vendor": str, "name": str, "pci_id": str, "compute_capability": str, "gfx": str, "family": str,
    "integrated": bool, "count": int, "visible": bool, "driver": str,
}


def _type_name(t: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", bool: "true or false", list: "a list", dict: "an object"}
    return names[t] if isinstance(t, type) else " or ".join(names[x] for x in t)


def _check_type(where: str, value: Any, expected: type | tuple[type, ...]) -> str | None:
    ok = isinstance(value, expected)
    if expected is int and isinstance(value, bool):
        ok = False
    return None if ok else f"{where}: expected {_type_name(expected)}, got {excerpt(json.dumps(value), 40)}"


def _check_fields(where: str, data: Mapping[str, Any], types: Mapping[str, Any]) -> list[str]:
    problems = []
    for key, value in data.items():
        if key not in types:
            problems.append(f"{where}{key}: unknown key (known: {', '.join(types)})")
        elif value is not None and (problem := _check_type(f"{where}{key}", value, types[key])):
            problems.append(problem)
    return problems


def _check_value(where: str, key: str, value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    if key in _PATTERNS:
        pattern, shape = _PATTERNS[key]
        if not re.fullmatch(pattern, value):  # "$" alone would let a trailing line break through
            return f"{where}{key}: {value!r} is malformed, expected {shape}"
    if key in _VERSION_FIELDS and not re.fullmatch(_SUFFIXED_VERSION if key in _SUFFIXED_FIELDS else _VERSION, value):
        return f"{where}{key}: {value!r} is not a version like \"{_VERSION_EXAMPLES[key]}\""
    if key in _MAJOR_BOUNDS:
        low, high, expected = _MAJOR_BOUNDS[key]
        parts = release_part(value).split(".")
        if len(parts[0]) > 3 or not low <= int(parts[0]) <= high or any(len(p) > 6 for p in parts[1:]):
            return f"{where}{key}: {value!r} is not plausible, expected {expected}"
    choices = {"os": OSES, "arch": ARCHES, "vendor": vendors.names()}.get(key)
    if choices and value not in choices:
        return f"{where}{key}: {value!r} is not one of {', '.join(choices)}"
    return None


def _python_with_patch(data: dict[str, Any]) -> dict[str, Any]:
    """``"python": "3.14.1"`` (or "3.13.1t", as copied from ``python -VV``) is python "3.14" with python_full
    "3.14.1"."""
    value = data.get("python")
    found = (re.fullmatch(f"({PYTHON_PATCH})(t?)", value)  # "3.12" has no patch release to split off
             if isinstance(value, str) and value.count(".") == 2 else None)
    if not found:
        return data
    minor = ".".join(found[1].split(".")[:2])
    return {**data, "python": minor + found[2], "python_full": data.get("python_full") or found[1]}


def python_patch_release(version: str | None) -> str | None:
    """The patch release a version string names ("3.14.1"; a development build's trailing "+" dropped), else
    None ("3.14", "garbage")."""
    found = re.fullmatch(f"({PYTHON_PATCH})\\+?", (version or "").strip())
    return found[1] if found else None


def machine_from_dict(data: Any, origin: str = "profile") -> Machine:
    """Build a validated Machine from its JSON form; every problem is one line of the InputError."""
    if not isinstance(data, dict):
        raise InputError(f"{origin}: a machine profile must be a JSON object")
    data = _python_with_patch(_windows_driver_version(data))
    problems = _check_fields("", data, _MACHINE_TYPES)
    problems += [p for k, v in data.items() if k in _MACHINE_TYPES if (p := _check_value("", k, v))]
    if data.get("os") == "macos" and isinstance(data.get("os_version"), str) and not re.fullmatch(
            r"(1[0-9]|[2-9][0-9])(\.[0-9]{1,3}){0,2}", data["os_version"]):
        problems.append(f"os_version: {data['os_version']!r} is not a macOS version like \"14.5\"")
    if isinstance(data.get("schema"), int) and data["schema"] != SCHEMA_VERSION:
        problems.append(f"schema: version {data['schema']} is not supported (this torch-install reads 1)")
    gpus: list[Gpu] = []
    for i, item in enumerate(data["gpus"] if isinstance(data.get("gpus"), list) else []):
        where = f"gpus[{i}]."
        if not isinstance(item, dict):
            problems.append(f"gpus[{i}]: expected an object")
            continue
        gpu_problems = _check_fields(where, item, _GPU_TYPES)
        gpu_problems += [p for k, v in item.items() if k in _GPU_TYPES if (p := _check_value(where, k, v))]
        if item.get("vendor") is None:
            gpu_problems.append(f"{where}vendor: required (one of {', '.join(vendors.names())})")
        if isinstance(item.get("count"), int) and not isinstance(item["count"], bool) and item["count"] < 1:
            gpu_problems.append(f"{where}count: must be at least 1")
        problems += gpu_problems
        if not gpu_problems:
            gpus.append(Gpu(**{k: v for k, v in item.items() if v is not None}))
    for key in ("notes", "assumed"):
        if isinstance(data.get(key), list) and not all(isinstance(x, str) for x in data[key]):
            problems.append(f"{key}: expected a list of strings")
    if isinstance(data.get("sources"), dict) and not all(isinstance(v, str) for v in data["sources"].values()):
        problems.append("sources: expected an object of strings")
    if problems:
        raise InputError("\n".join(f"{origin}: {p}" for p in problems))
    kwargs = {k: v for k, v in data.items() if k != "gpus" and v is not None}
    for key in ("notes", "assumed"):
        if key in kwargs:
            kwargs[key] = tuple(kwargs[key])
    return Machine(**kwargs, gpus=tuple(gpus), gpus_known="gpus" in data)


def _windows_driver_version(data: dict[str, Any]) -> dict[str, Any]:
    """A profile whose ``nvidia_driver`` is a Windows driver file version ("32.0.15.6094", as Device Manager shows
    it) with the NVIDIA driver version it stands for ("560.94"), saying so in ``sources``."""
    value = data.get("nvidia_driver")
    if (not isinstance(value, str) or value.count(".") != 3  # "570.133.07" has no fourth part
            or not re.fullmatch(r"[0-9]{2}\.[0-9]\.[0-9]{2}\.[0-9]{4}", value)):
        return data
    driver = nvidia_driver_of_file_version(value)
    if driver is None:
        return data
    sources = dict(data["sources"]) if isinstance(data.get("sources"), dict) else {}
    sources.setdefault("nvidia_driver", f"Windows driver file version {value}")
    return {**data, "nvidia_driver": driver, "sources": sources}


def load_machine(path: str | Path) -> Machine:
    """Read a machine profile file; any problem is an InputError naming the file."""
    from .probe import read_regular

    try:  # a FIFO or device is refused without blocking; a profile is a few kB
        data = read_regular(str(path), MAX_PROFILE_BYTES + 1)
        if len(data) > MAX_PROFILE_BYTES:
            raise InputError(f"{path}: larger than {MAX_PROFILE_BYTES >> 20} MiB, not a machine profile")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read machine profile ({exc.__class__.__name__}: {exc})") from None
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply for a machine profile") from None
    except ValueError as exc:  # an integer of more digits than Python converts (4,300)
        raise InputError(f"{path}: not a machine profile ({str(exc).split(':')[0]})") from None
    except _DuplicateKey as exc:
        raise InputError(f"{path}: key {exc.args[0]!r} appears twice in one object") from None
    return machine_from_dict(data, origin=str(path))


class _DuplicateKey(Exception):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


PLATFORM_FIELDS = ("os", "arch", "python", "glibc")
MAX_PROFILE_BYTES = 1 << 20


def environment_python(machine: Machine, python: tuple[str, str], stated: bool) -> tuple[Machine, str | None]:
    """The machine an environment file's Python is planned on, and a note: conda or pixi makes the environment
    with the Python its file names (``python`` = (its PEP 440 range, what names it)), not the one running here. A
    Python the target states (``stated``: ``--python``, a profile's own) stays, the note saying the file's differs;
    another outside the range becomes the minor release within it nearest this one."""
    from packaging.specifiers import SpecifierSet

    spec, what = python
    current = machine.python_full or (machine.python or "").rstrip("t")
    specifier = SpecifierSet(spec)
    if not current or specifier.contains(current, prereleases=True) or \
            (machine.python_full is None and specifier.contains(f"{current}.0", prereleases=True)):
        return machine, None
    if stated:
        return machine, f"{what}: the environment's Python is not Python {machine.python}, for which the target is " \
                        "planned"
    major, minor = (int(p) for p in current.split(".")[:2])
    exact = next((s.version for s in specifier if s.operator in ("==", "===") and "*" not in s.version
                  and s.version.count(".") == 2), None)  # "3.12.4": that patch release
    allowed = [m for m in range(0, 40) if specifier.contains(f"{major}.{m}", prereleases=True)
               or specifier.contains(f"{major}.{m}.0", prereleases=True)
               or (exact is not None and exact.startswith(f"{major}.{m}."))]
    if not allowed:
        return machine, f"{what}: no Python {major} release is in its range: planned for this machine's Python " \
                        f"{machine.python}"
    chosen = min(allowed, key=lambda m: (abs(m - minor), -m))
    return machine._replace(python=f"{major}.{chosen}", python_full=exact, assumed=tuple(
        a for a in machine.assumed if a != "python")), f"Python {major}.{chosen}, as {what} makes the environment " \
                                                       f"with it (not this machine's {machine.python})"


def fill_platform(target: Machine, host: Machine) -> Machine:
    """Complete a target profile's platform fields (os, arch, python, glibc) from this machine.

    Hardware fields are never filled: a GPU, driver or ROCm left out of a target stays unknown.
    glibc is only taken for a target of the host's OS that names no other C library (musl) and no other OS
    release ("alpine 3.20" on an Ubuntu host is not the host's glibc).
    """
    updates: dict[str, Any] = {}
    other_system = bool(target.musl) or (target.os_version is not None and target.os_version != host.os_version)
    for name in PLATFORM_FIELDS:
        if getattr(target, name) is None and getattr(host, name) is not None:
            if name == "glibc" and ((target.os or host.os) != host.os or other_system):
                continue
            updates[name] = getattr(host, name)
            if name == "python" and target.python_full is None:
                updates["python_full"] = host.python_full  # the patch release of the Python taken
    if not updates:
        return target
    return target._replace(**updates, assumed=tuple(target.assumed) + tuple(k for k in updates if k != "python_full"))
