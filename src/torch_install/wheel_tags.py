"""The wheel tags a target machine accepts (PEP 425 / PEP 600 platform tags and CPython tags): packaging's
``sys_tags()`` when the target is the running interpreter, else worked out from its profile
(``profile_tags.py``). Read by online mode (which wheels the index offers the target) and by the doctor
(which glibc a wheel's tag needs).
"""

from __future__ import annotations

import re
import sys
from functools import cache

from .machine import Machine
from .profile_tags import MANYLINUX_LEGACY, TargetTags, profile_tags, python_tuple


def python_sort_key(python: str) -> tuple[tuple[int, int], bool]:
    """Sort key for profile Pythons: "3.9" < "3.12" < "3.13" < "3.13t"."""
    return python_tuple(python)[0], python.endswith("t")


def _host_machine() -> str:
    """``platform.machine()``: on POSIX that is ``os.uname().machine``, read without importing ``platform``."""
    import os

    if hasattr(os, "uname") and os.uname().machine:
        return os.uname().machine
    import platform

    return platform.machine()


def _host_platform() -> tuple[str | None, str]:
    os_name = {"linux": "linux", "win32": "windows", "darwin": "macos"}.get(sys.platform)
    arch = {"amd64": "x86_64", "arm64": "arm64", "aarch64": "aarch64"}.get(_host_machine().lower(),
                                                                              _host_machine().lower())
    free = not getattr(sys, "_is_gil_enabled", lambda: True)()
    return Machine(os=os_name, arch=arch).platform, f"{sys.version_info.major}.{sys.version_info.minor}" + (
        "t" if free else "")


def _here(machine: Machine) -> bool:
    """Whether the target is the running interpreter's platform and Python (then packaging's sys_tags apply)."""
    host_platform, host_python = _host_platform()
    return (sys.implementation.name == "cpython" and machine.python == host_python
            and machine.platform == host_platform and not machine.musl)


def target_key(machine: Machine) -> str:
    """What identifies the target's tag set in cache keys."""
    key = "|".join(str(getattr(machine, f) or "") for f in ("os", "arch", "python", "glibc", "musl", "os_version"))
    return ("here:" if _here(machine) else "") + key


def target_tags(machine: Machine) -> TargetTags:
    """The target's tags: packaging's ``sys_tags()`` for this interpreter, else computed from the profile."""
    key = target_key(machine)
    if key.startswith("here:"):
        from packaging import tags as ptags

        tags = frozenset(str(t) for t in ptags.sys_tags())
        return TargetTags(tags, frozenset(t.split("-")[-1] for t in tags), key)
    return profile_tags(machine, key)


@cache
def python_of_tag(tag: str) -> str | None:
    """ "cp313-cp313t-manylinux_2_28_x86_64" -> "3.13t"; None for a tag that is not a CPython one (cached: a page
    repeats a few tags over its thousands of files)."""
    interpreter, abi, _ = tag.split("-", 2)
    match = re.fullmatch(r"cp([0-9])([0-9]+)", interpreter)
    if not match:
        return None
    return f"{match[1]}.{match[2]}{'t' if abi.endswith('t') else ''}"


def expand_tag(python: str, abi: str, platform: str) -> list[tuple[str, str, str]]:
    """The tags a compressed tag set names: ("py2.py3", "none", "any") -> [("py2", …), ("py3", …)] (PEP 425)."""
    return [(i, a, p) for i in python.split(".") for a in abi.split(".") for p in platform.split(".")]


def _parsed(tags: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """(interpreter, abi, platform) of each tag of a WHEEL file's ``Tag`` lines (compressed sets expanded, lower
    case, as packaging's ``parse_tag`` gives them)."""
    out = []
    for text in tags:
        parts = text.strip().lower().split("-")
        if len(parts) != 3 or not all(parts):  # not interpreter-abi-platform: not a tag
            continue
        out += expand_tag(*parts)
    return out


def wheel_abis(tags: tuple[str, ...]) -> set[str]:
    """The ABI tags a wheel's ``Tag`` lines name: {"cp312"}, {"cp313t"}, {"abi3"}, {"none"}."""
    return {abi for _, abi, _ in _parsed(tags)}


def wheel_glibc(tags: tuple[str, ...]) -> str | None:
    """Lowest glibc a wheel's platform tags need: manylinux_2_28_x86_64 -> "2.28", manylinux2014 -> "2.17"."""
    floors = []
    for _, _, platform in _parsed(tags):
        match = re.match(r"^manylinux_([0-9]+)_([0-9]+)_", platform)
        if match:
            floors.append((int(match[1]), int(match[2])))
        for legacy, glibc in MANYLINUX_LEGACY.items():
            if platform.startswith(legacy + "_"):
                floors.append(glibc)
    return ".".join(str(x) for x in min(floors)) if floors else None
