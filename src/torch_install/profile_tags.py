"""The wheel tags a machine profile accepts (PEP 425 / PEP 600 platform tags and CPython tags), worked out from the
profile alone: what the resolver compares a wheel's tags with (a direct reference's), and what ``wheel_tags.py``
gives for any target but the running interpreter."""

from __future__ import annotations

from .machine import Machine
from .records import Record
from .versions import numeric_key

MANYLINUX_LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}  # tag -> glibc it needs
_GLIBC_ASSUMED_MAX = 99  # glibc minor accepted when a Linux target's glibc is not known
_MINOR_MAX = 99  # no glibc or musl minor reaches this; a larger one in a profile would list a tag per number


class TargetTags(Record):
    """The wheel tags a target accepts. ``tags`` is None when its Python is unknown (platform match only)."""

    tags: frozenset[str] | None
    platforms: frozenset[str]
    key: str  # identifies the tag set in cache keys
    assumed: tuple[str, ...] = ()


def python_tuple(python: str) -> tuple[tuple[int, int], bool]:
    free = python.endswith("t")
    major, minor = python.rstrip("t").split(".")
    return (int(major), int(minor)), free


def platform_tags(machine: Machine) -> tuple[list[str], list[str]]:
    """(platform tags the target accepts, assumptions made). Linux uses glibc (or musl) for manylinux."""
    assumed: list[str] = []
    os_name, arch = machine.os, machine.arch
    if os_name == "linux" and arch in ("x86_64", "aarch64", "arm64"):
        arch = "aarch64" if arch == "arm64" else arch
        if machine.musl:
            major, minor = (*numeric_key(machine.musl), 0)[:2]
            return ([f"musllinux_{major}_{m}_{arch}" for m in range(min(minor, _MINOR_MAX), -1, -1)]
                    + [f"linux_{arch}"], assumed)
        if machine.glibc:
            minor = min((*numeric_key(machine.glibc), 0, 17)[1] if "." in machine.glibc else 17, _MINOR_MAX)
        else:
            minor = _GLIBC_ASSUMED_MAX
            assumed.append("glibc unknown: any manylinux wheel assumed to run")
        tags = [f"manylinux_2_{m}_{arch}" for m in range(minor, 4, -1)]
        tags += [f"{legacy}_{arch}" for legacy, (_, m) in MANYLINUX_LEGACY.items() if m <= minor]
        return tags + [f"linux_{arch}"], assumed
    if os_name == "windows":
        return ["win_arm64" if arch in ("arm64", "aarch64") else "win_amd64"], assumed
    if os_name == "macos" and arch in ("arm64", "aarch64", "x86_64"):
        from packaging.tags import mac_platforms

        if machine.os_version:
            parts = [*numeric_key(machine.os_version)[:2], 0]
            version = (min(parts[0], _MINOR_MAX), min(parts[1], _MINOR_MAX) if parts[0] == 10 else 0)
        else:
            version = (99, 0)
            assumed.append("macOS version unknown: any macOS wheel assumed to run")
        return list(mac_platforms(version, "arm64" if arch != "x86_64" else "x86_64")), assumed
    return [], assumed


def profile_tags(machine: Machine, key: str = "") -> TargetTags:
    """The tags the profile accepts (``key``: what identifies them in cache keys)."""
    from packaging import tags as ptags

    platforms, assumed = platform_tags(machine)
    if not machine.python:
        return TargetTags(None, frozenset(platforms), key, (*assumed, "Python unknown: wheels of any Python counted"))
    version, free = python_tuple(machine.python)
    abi = f"cp{version[0]}{version[1]}{'t' if free else ''}"
    accepted = [*ptags.cpython_tags(version, [abi], platforms),
                *ptags.compatible_tags(version, f"cp{version[0]}{version[1]}", platforms)]
    return TargetTags(frozenset(str(t) for t in accepted), frozenset(platforms), key, tuple(assumed))
