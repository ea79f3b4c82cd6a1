"""PEP 508 environment markers evaluated for a target machine, not for the host: ``sys_platform``,
``platform_machine``, ``python_version``… from the machine profile (an unknown field is the empty string, as
packaging has it for values a platform does not have). Also the marker that names a machine's platform, for
output that must tell several targets apart (pyproject sources, requirements files)."""

from __future__ import annotations

from .errors import InputError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from .machine import Machine

SYS_PLATFORM = {"linux": "linux", "windows": "win32", "macos": "darwin"}
PLATFORM_SYSTEM = {"linux": "Linux", "windows": "Windows", "macos": "Darwin"}
# (os, arch) -> platform_machine as Python reports it there
PLATFORM_MACHINE = {("linux", "x86_64"): "x86_64", ("linux", "aarch64"): "aarch64", ("linux", "arm64"): "aarch64",
                    ("windows", "x86_64"): "AMD64", ("windows", "arm64"): "ARM64", ("windows", "aarch64"): "ARM64",
                    ("macos", "arm64"): "arm64", ("macos", "aarch64"): "arm64", ("macos", "x86_64"): "x86_64"}


def environment(machine: Machine) -> dict[str, str]:
    """The marker environment of ``machine`` (CPython unless the profile says otherwise)."""
    os_name = machine.os or ""
    python = (machine.python or "").rstrip("t")
    full = machine.python_full or (f"{python}.0" if python else "")
    implementation = (machine.python_implementation or "cpython").lower()
    return {
        "os_name": "nt" if os_name == "windows" else "posix" if os_name else "",
        "sys_platform": SYS_PLATFORM.get(os_name, os_name),
        "platform_system": PLATFORM_SYSTEM.get(os_name, os_name),
        "platform_machine": PLATFORM_MACHINE.get((os_name, machine.arch or ""), machine.arch or ""),
        "platform_release": "",
        "platform_version": "",
        "platform_python_implementation": {"cpython": "CPython", "pypy": "PyPy"}.get(implementation, implementation),
        "implementation_name": implementation,
        "implementation_version": full,
        "python_version": ".".join(python.split(".")[:2]),
        "python_full_version": full,
        "extra": "",
    }


# What the platform fields hold on the machines torch is built for: none of them reads as a version, so packaging
# compares them as strings, and so does ``simple_marker``
_PLATFORM_FIELDS = ("os_name", "sys_platform", "platform_system", "platform_machine")
_PLATFORM_VALUES = frozenset({"posix", "nt", *SYS_PLATFORM.values(), *PLATFORM_SYSTEM.values(),
                              *PLATFORM_MACHINE.values()})


def simple_marker(marker: str, environment: Mapping[str, str]) -> bool | None:
    """A marker as torch's own ``Requires-Dist`` lines write them (``platform_system == "Linux" and
    platform_machine == "x86_64"``: platform fields compared with == or != to a known value, joined by ``and``)
    evaluated without packaging; None for any other marker, which packaging evaluates."""
    result = True
    for term in marker.split(" and "):
        parts = term.split()
        if len(parts) != 3 or parts[0] not in _PLATFORM_FIELDS or parts[1] not in ("==", "!="):
            return None
        value = parts[2]
        if len(value) < 2 or value[0] != value[-1] or value[0] not in "\"'" or value[1:-1] not in _PLATFORM_VALUES:
            return None
        result = result and (environment.get(parts[0], "") == value[1:-1]) == (parts[1] == "==")
    return result


def marker_of(requirement: str) -> str | None:
    """The marker text of a requirement (PEP 508, or pip's ``URL ; marker`` form), None when it has none."""
    if ";" not in requirement:
        return None
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        parsed = Requirement(requirement)
    except InvalidRequirement:
        for separator in (" ;", "; "):  # pip's form for a URL or path: the marker after whitespace and ";"
            if separator in requirement:
                return requirement.split(separator, 1)[1].lstrip("; ").strip() or None
        return None
    return str(parsed.marker) if parsed.marker is not None else None


def applies(requirement: str, machine: Machine, origin: str = "") -> bool:
    """Whether a requirement's marker (if any) is true on ``machine``; a marker that is not one is an InputError
    naming ``origin``."""
    marker_text = marker_of(requirement)
    if marker_text is None:
        return True
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName

    try:
        return bool(Marker(marker_text).evaluate(environment(machine)))
    except InvalidMarker as exc:
        raise InputError(f"{origin or requirement}: {marker_text!r} is not a marker ({str(exc).splitlines()[0]})"
                         ) from None
    except (UndefinedComparison, UndefinedEnvironmentName):
        return True  # a comparison the profile cannot decide (a field it does not know): kept


def platform_marker(machine: Machine, tegra: bool | None = None) -> str:
    """The PEP 508 marker of a machine's platform: ``sys_platform == 'linux' and platform_machine == 'x86_64'``;
    ``tegra`` True or False adds whether ``'tegra'`` is in ``platform_release`` (a Jetson's kernel release,
    ``5.15.148-tegra``), which tells a Jetson from another Linux aarch64 machine."""
    os_name = machine.os or ""
    marker = f"sys_platform == '{SYS_PLATFORM.get(os_name, os_name)}'"
    found = PLATFORM_MACHINE.get((os_name, machine.arch or ""))
    marker = f"{marker} and platform_machine == '{found}'" if found else marker
    if tegra is not None:
        marker += f" and 'tegra' {'in' if tegra else 'not in'} platform_release"
    return marker


def is_tegra(machine: Machine) -> bool:
    """Whether the machine is a Jetson (an L4T release, or a GPU of a Jetson family): its kernel is tegra's."""
    return bool(machine.jetson) or any(g.vendor == "nvidia" and (g.family or "").startswith("jetson-")
                                       for g in machine.gpus)


def platform_markers(machines: Sequence[Machine]) -> list[str]:
    """Each machine's platform marker, telling Jetsons from the other Linux aarch64 machines (``'tegra' in
    platform_release`` / ``not in``) where the machines have both: they share ``sys_platform`` and
    ``platform_machine``, and their builds come from different indexes."""
    arm = [i for i, m in enumerate(machines) if PLATFORM_MACHINE.get((m.os or "", m.arch or "")) == "aarch64"
           and m.os == "linux"]
    mixed = len({is_tegra(machines[i]) for i in arm}) == 2
    return [platform_marker(m, is_tegra(m) if mixed and i in arm else None) for i, m in enumerate(machines)]


_NEGATED_OPS = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<", "in": "not in", "not in": "in"}


def negated(marker: str) -> str | None:
    """A marker that holds exactly where ``marker`` does not (PEP 508 has no ``not``: each comparison's operator is
    turned, ``and`` and ``or`` swapped by De Morgan's laws), read by packaging's parser; None where it has a
    comparison with no opposite (``~=``, ``===``) or cannot be read."""
    from packaging.markers import InvalidMarker, Marker

    try:
        tree = Marker(marker)._markers  # packaging's parse: comparisons, nested lists, "and" / "or"
    except InvalidMarker:
        return None
    return _negated(tree)


def _negated(tree: list[Any]) -> str | None:
    """The negation of a parsed marker: an ``or`` of ``and`` groups becomes an ``and`` of ``or`` groups."""
    groups: list[list[object]] = [[]]
    for item in tree:
        if item == "or":
            groups.append([])
        elif item != "and":
            groups[-1].append(item)
    parts = []
    for group in groups:
        terms = [_negated(item) if isinstance(item, list) else _negated_term(item) for item in group]
        if any(t is None for t in terms):
            return None
        parts.append(" or ".join(f"({t})" for t in terms) if len(terms) > 1 else str(terms[0]))
    return " and ".join(f"({p})" for p in parts) if len(parts) > 1 else parts[0]


def _negated_term(term: Any) -> str | None:
    left, op, right = term  # packaging's (Variable | Value, Op, Value | Variable)
    turned = _NEGATED_OPS.get(str(op.value))
    if turned is None:
        return None
    return f"{_operand(left)} {turned} {_operand(right)}"


def _operand(node: Any) -> str:
    value = str(node.value)
    return value if type(node).__name__ == "Variable" else repr(value)


def overlap(first: str, second: str) -> bool:
    """Whether some environment meets both markers, as uv's marker algebra tells (``python_version`` is read as
    a range of ``python_full_version``): both are evaluated on each environment made of the values they compare
    to, the values beside those (a version just below, just above) and one neither names."""
    from itertools import product

    from packaging.markers import Marker

    markers = Marker(first), Marker(second)
    values: dict[str, set[str]] = {}
    for marker in markers:
        _compared(marker._markers, values)  # packaging's parse: comparisons, nested lists, "and" / "or"
    pythons = values.pop("python_version", set()) | values.pop("python_full_version", set())
    platforms = [dict(zip(_OS_FIELDS, known, strict=True)) for known in _KNOWN_OS]  # the fields of one OS agree
    platforms += [{field: value} for field in _OS_FIELDS for value in values.pop(field, set())]
    names = list(values)
    choices = [sorted(values[n] | {"\x00"}) for n in names]
    fulls = sorted({v for p in pythons for v in _beside(p)}) or [""]
    for platform, full, chosen in product([*platforms, {}], fulls, product(*choices)):
        env = {**dict.fromkeys(_OS_FIELDS, "\x00"), **platform, **dict(zip(names, chosen, strict=True))}
        if full:
            env |= {"python_full_version": full, "python_version": ".".join(full.split(".")[:2])}
        if all(m.evaluate(env) for m in markers):
            return True
    return False


_OS_FIELDS = ("sys_platform", "platform_system", "os_name")
_KNOWN_OS = (("linux", "Linux", "posix"), ("win32", "Windows", "nt"), ("darwin", "Darwin", "posix"))


def _compared(tree: list[Any], values: dict[str, set[str]]) -> None:
    """The values each variable of a parsed marker is compared to (``in``: each word of the value too)."""
    for item in tree:
        if isinstance(item, list):
            _compared(item, values)
        elif isinstance(item, tuple):
            left, _, right = item
            variable, value = (left, right) if type(left).__name__ == "Variable" else (right, left)
            values.setdefault(str(variable.value), set()).update({str(value.value), *str(value.value).split()})


def _beside(version: str) -> list[str]:
    """Full Python versions at, just below and just above a version a marker compares to."""
    parts = [int(p) if p.isdigit() else 0 for p in version.split(".")[:3]] + [0] * (3 - len(version.split(".")[:3]))
    major, minor, micro = parts
    return [f"{major}.{minor}.{micro}", f"{major}.{minor}.{micro + 1}", f"{major}.{minor + 1}.0",
            f"{major}.{max(minor - 1, 0)}.99", f"{major}.{minor}.{max(micro - 1, 0)}", f"{max(major - 1, 0)}.99.99"]
