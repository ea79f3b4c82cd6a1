"""Host detector: OS, CPU architecture, Python, C library, distribution, WSL, container, Jetson.

Platform facts come from the probe's host facts (``platform``/``sys`` on the live host, ``_host.json``
in a captured tree); the rest from files: ``/etc/os-release``, ``/proc/version``, ``/dev/dxg``,
``/.dockerenv``, ``/etc/nv_tegra_release``. macOS and Windows specifics belong to their own detectors.
"""

from __future__ import annotations

import re

from ..machine import python_patch_release
from ..probe import Probe
from .found import Found

_OS_NAMES = {"linux": "linux", "windows": "windows", "darwin": "macos"}
_ARCH_NAMES = {"x86_64": "x86_64", "amd64": "x86_64", "x64": "x86_64", "aarch64": "aarch64", "arm64": "arm64",
               "armv8l": "aarch64"}
_PYTHON = r"^(3)\.([0-9]{1,2})(?:\.[0-9]+)?"
_TEGRA = r"^#\s*R([0-9]+)\s*\(release\),\s*REVISION:\s*([0-9]+)(?:\.([0-9]+))?"
_CGROUP_RUNTIMES = (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman"),
                    ("containerd", "containerd"), ("lxc", "lxc"))


def parse_os(system: str | None) -> str | None:
    """``platform.system()`` → linux | windows | macos; None for anything else."""
    return _OS_NAMES.get((system or "").strip().lower())


def parse_arch(machine: str | None, os_name: str | None) -> str | None:
    """``platform.machine()`` → x86_64 | aarch64 | arm64 (aarch64 on Linux, arm64 elsewhere); None if unknown."""
    arch = _ARCH_NAMES.get((machine or "").strip().lower())
    if arch in ("aarch64", "arm64"):
        return "aarch64" if os_name == "linux" else "arm64"
    return arch


def parse_python(version: str | None, free_threaded: str | None) -> str | None:
    """'3.13.1' + 'true' → '3.13t'; None when the version is not a Python 3 version."""
    match = re.match(_PYTHON, (version or "").strip())
    if not match:
        return None
    return f"3.{int(match.group(2))}" + ("t" if (free_threaded or "").strip().lower() == "true" else "")


def parse_glibc(libc: str | None) -> str | None:
    """HOST_FACTS 'libc' ('glibc 2.35') → '2.35'; None for musl, empty or malformed text."""
    match = re.fullmatch(r"glibc\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)", (libc or "").strip())
    return match.group(1) if match else None


def parse_os_release(text: str | None) -> str | None:
    """``/etc/os-release`` → 'ubuntu 22.04' (ID and VERSION_ID); None without an ID."""
    values: dict[str, str] = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() in ("ID", "VERSION_ID"):
            values[key.strip()] = value.strip().strip("\"'")
    if not re.fullmatch(r"[a-z0-9._-]{1,40}", values.get("ID", "")):
        return None
    version = values.get("VERSION_ID", "")
    return f"{values['ID']} {version}" if re.fullmatch(r"[A-Za-z0-9._-]{1,20}", version) else values["ID"]


def parse_tegra_release(text: str | None) -> str | None:
    """First line of ``/etc/nv_tegra_release`` ('# R36 (release), REVISION: 4.3, …') → L4T '36.4.3'."""
    match = re.match(_TEGRA, text.lstrip()) if text else None  # most machines have no such file
    if not match:
        return None
    return ".".join(g for g in match.groups() if g is not None)


def parse_musl_version(apk_installed: str | None) -> str | None:
    """Alpine's ``/lib/apk/db/installed`` → musl version ('1.2.4'), or None."""
    match = re.search(r"^P:musl\nV:([0-9]+\.[0-9]+\.[0-9]+)", apk_installed, re.M) if apk_installed else None
    return match.group(1) if match else None


def detect(probe: Probe, found: Found) -> None:
    system = probe.host("system")
    os_name = parse_os(system)
    found.set("os", os_name, f"platform.system() = {system!r}")
    machine = probe.host("machine")
    arch = parse_arch(machine, os_name)
    found.set("arch", arch, f"platform.machine() = {machine!r}")
    if machine and arch is None:
        found.note(f"CPU architecture {machine!r} has no PyTorch wheels on PyTorch's indexes")
    _detect_python(probe, found)
    if os_name == "linux":
        _detect_linux(probe, found)


def _detect_python(probe: Probe, found: Found) -> None:
    version, free = probe.host("python_version"), probe.host("python_free_threaded")
    python = parse_python(version, free)
    free_note = " (free-threaded build)" if python and python.endswith("t") else ""
    found.set("python", python, f"Python {version}{free_note}")
    full = python_patch_release(version)
    if python and full:
        found.set("python_full", full, f"Python {version}")
    implementation = (probe.host("python_implementation") or "").strip().lower()
    if re.fullmatch(r"[a-z]{2,20}", implementation):
        found.set("python_implementation", implementation, "sys.implementation.name")


def _detect_linux(probe: Probe, found: Found) -> None:
    libc = probe.host("libc")
    found.set("glibc", parse_glibc(libc), f"platform.libc_ver() = {libc!r}")
    if "glibc" not in found.values:
        musl_loaders = [n for n in probe.listdir("/lib") if n.startswith("ld-musl-")]
        if musl_loaders:
            version = parse_musl_version(probe.read_text("/lib/apk/db/installed"))
            if version:
                found.set("musl", version, "/lib/apk/db/installed (package musl)")
            else:
                found.note(f"musl libc (/lib/{musl_loaders[0]}); its version is unknown")
    found.set("os_version", parse_os_release(probe.read_text("/etc/os-release", 64 * 1024)), "/etc/os-release")
    _detect_wsl(probe, found)
    _detect_container(probe, found)
    tegra = probe.read_text("/etc/nv_tegra_release", 4096)
    l4t = parse_tegra_release(tegra)
    found.set("jetson", l4t, "/etc/nv_tegra_release")
    if tegra is not None and l4t is None:
        found.note("/etc/nv_tegra_release: unknown format, L4T release not read")


def _detect_wsl(probe: Probe, found: Found) -> None:
    kernel = probe.read_text("/proc/version", 4096) or ""
    release = probe.host("release") or ""
    markers = []
    if "microsoft" in kernel.lower():
        markers.append("/proc/version")
    elif "microsoft" in release.lower():
        markers.append("kernel release")
    for path in ("/dev/dxg", "/usr/lib/wsl/lib"):
        if probe.exists(path):
            markers.append(path)
    if not markers:
        return
    found.set("wsl", True, ", ".join(markers))
    if "/dev/dxg" not in markers and "WSL2" not in kernel + release:
        found.note("WSL without /dev/dxg (WSL 1, or GPU paravirtualisation off): no GPU is reachable")


def _detect_container(probe: Probe, found: Found) -> None:
    if probe.exists("/.dockerenv"):
        found.set("container", "docker", "/.dockerenv")
    elif probe.exists("/run/.containerenv"):
        found.set("container", "podman", "/run/.containerenv")
    elif probe.env("KUBERNETES_SERVICE_HOST"):
        found.set("container", "kubernetes", "$KUBERNETES_SERVICE_HOST")
    else:
        cgroup = probe.read_text("/proc/1/cgroup", 64 * 1024) or ""
        for marker, runtime in _CGROUP_RUNTIMES:
            if f"/{marker}" in cgroup:
                found.set("container", runtime, f"/proc/1/cgroup mentions {marker}")
                break
