"""Online mode: learn torch releases and variants from the live index and merge them into the Matrix.

What the index says for the target's wheel tags is authoritative for *what exists*: a release or variant
found there is added (``2.16.0+cu134``), and one the index lacks for the target is left out, so it is never
chosen. The *rules* for a variant the embedded data does not know come from its name and are labelled
``assumed``: a CUDA variant's driver floor from its CUDA major; its arch list from the nearest known variant
of the same major; a ROCm variant's gfx list from the nearest known ROCm version; XPU device families from the
newest release with XPU wheels. Each assumption is returned as one line for the plan's notes.

Results derived from cached pages are cached too, so a warm ``plan --online`` reads two small files.
"""

import re
import sys
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Any, NamedTuple

from .errors import EnvironmentFailure, InputError
from .resolver.matrix import variant_order
from .versions import numeric_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from .index import IndexClient, Listing, Wheel
    from .index_cache import IndexCache
    from .machine import Machine
    from .resolver.matrix import Matrix, Release

ASSUMED = "assumed"
PROJECT = "torch"
_FACTS_FORMAT = 1
MANYLINUX_LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}  # tag -> glibc it needs
_GLIBC_ASSUMED_MAX = 99  # glibc minor accepted when a Linux target's glibc is not known


# --------------------------------------------------------------------------------------------- target tags

class TargetTags(NamedTuple):
    """The wheel tags a target accepts. ``tags`` is None when its Python is unknown (platform match only)."""

    tags: frozenset[str] | None
    platforms: frozenset[str]
    key: str  # identifies the tag set in cache keys
    assumed: tuple[str, ...] = ()


def _python_tuple(python: str) -> tuple[tuple[int, int], bool]:
    free = python.endswith("t")
    major, minor = python.rstrip("t").split(".")
    return (int(major), int(minor)), free


def _host_machine() -> str:
    """``platform.machine()``: on POSIX that is ``os.uname().machine``, read without importing ``platform``."""
    import os

    if hasattr(os, "uname") and os.uname().machine:
        return os.uname().machine
    import platform

    return platform.machine()


def _host_platform() -> tuple[str | None, str]:
    from .machine import Machine

    os_name = {"linux": "linux", "win32": "windows", "darwin": "macos"}.get(sys.platform)
    arch = {"amd64": "x86_64", "arm64": "arm64", "aarch64": "aarch64"}.get(_host_machine().lower(),
                                                                              _host_machine().lower())
    free = not getattr(sys, "_is_gil_enabled", lambda: True)()
    return Machine(os=os_name, arch=arch).platform, f"{sys.version_info.major}.{sys.version_info.minor}" + (
        "t" if free else "")


def _here(machine: "Machine") -> bool:
    """Whether the target is the running interpreter's platform and Python (then packaging's sys_tags apply)."""
    host_platform, host_python = _host_platform()
    return (sys.implementation.name == "cpython" and machine.python == host_python
            and machine.platform == host_platform and not machine.musl)


def _target_key(machine: "Machine") -> str:
    key = "|".join(str(getattr(machine, f) or "") for f in ("os", "arch", "python", "glibc", "musl", "os_version"))
    return ("here:" if _here(machine) else "") + key


def platform_tags(machine: "Machine") -> tuple[list[str], list[str]]:
    """(platform tags the target accepts, assumptions made). Linux uses glibc (or musl) for manylinux."""
    assumed: list[str] = []
    os_name, arch = machine.os, machine.arch
    if os_name == "linux" and arch in ("x86_64", "aarch64", "arm64"):
        arch = "aarch64" if arch == "arm64" else arch
        if machine.musl:
            major, minor = (int(x) for x in machine.musl.split(".")[:2])
            return [f"musllinux_{major}_{m}_{arch}" for m in range(minor, -1, -1)] + [f"linux_{arch}"], assumed
        if machine.glibc:
            minor = int(machine.glibc.split(".")[1]) if "." in machine.glibc else 17
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
            version = (parts[0], parts[1] if parts[0] == 10 else 0)
        else:
            version = (99, 0)
            assumed.append("macOS version unknown: any macOS wheel assumed to run")
        return list(mac_platforms(version, "arm64" if arch != "x86_64" else "x86_64")), assumed
    return [], assumed


def target_tags(machine: "Machine") -> TargetTags:
    """The target's tags: packaging's ``sys_tags()`` for this interpreter, else computed from the profile."""
    from packaging import tags as ptags

    key = _target_key(machine)
    if key.startswith("here:"):
        tags = frozenset(str(t) for t in ptags.sys_tags())
        return TargetTags(tags, frozenset(t.split("-")[-1] for t in tags), key)
    platforms, assumed = platform_tags(machine)
    if not machine.python:
        return TargetTags(None, frozenset(platforms), key, (*assumed, "Python unknown: wheels of any Python counted"))
    version, free = _python_tuple(machine.python)
    abi = f"cp{version[0]}{version[1]}{'t' if free else ''}"
    tags = [*ptags.cpython_tags(version, [abi], platforms),
            *ptags.compatible_tags(version, f"cp{version[0]}{version[1]}", platforms)]
    return TargetTags(frozenset(str(t) for t in tags), frozenset(platforms), key, tuple(assumed))


def python_of_tag(tag: str) -> str | None:
    """ "cp313-cp313t-manylinux_2_28_x86_64" -> "3.13t"; None for a tag that is not a CPython one."""
    interpreter, abi, _ = tag.split("-", 2)
    match = re.fullmatch(r"cp(\d)(\d+)", interpreter)
    if not match:
        return None
    return f"{match[1]}.{match[2]}{'t' if abi.endswith('t') else ''}"


# --------------------------------------------------------------------------------------------- index facts

class ReleaseFacts(NamedTuple):
    """What the index lists of one release for the target: variants, and per-platform facts of their wheels."""

    version: str
    variants: tuple[str, ...]  # variant ids whose wheels match the target's tags (no match: those of other Pythons)
    python: tuple[str, ...]  # Pythons with a wheel for the target's platform (any variant)
    requires_python: str | None = None
    glibc: str | None = None  # lowest manylinux glibc among the matching wheels
    macos: str | None = None  # lowest macOS among the matching wheels


class IndexFacts(NamedTuple):
    """Releases the index offers the target (newest first) and where that knowledge came from."""

    base: str
    releases: tuple[ReleaseFacts, ...]
    fetched_at: float
    stale_error: str | None = None  # set when a refresh failed and cached pages were used
    pages: tuple[str, ...] = ()

    def release(self, version: str) -> ReleaseFacts | None:
        return next((r for r in self.releases if r.version == version), None)


def variant_of(label: str, platform: str) -> str | None:
    """Variant id of a wheel's local label: cu134, rocm7.14, xpu, cpu; unlabelled macOS wheels -> default."""
    from .resolver.matrix import variant_kind

    if not label:
        return "default" if platform.startswith("macos") else None
    return label if variant_kind(label) in ("cuda", "rocm", "xpu", "cpu") else None


def facts_from_wheels(wheels: "Iterable[Wheel]", target: TargetTags, platform: str, base: str, fetched_at: float,
                      pre_releases: bool = False) -> IndexFacts:
    """Group the wheels matching the target's tags by release; pre-/dev releases only when asked for.

    A release with wheels for the platform but none for the target's Python is kept with the variants and
    Pythons it does have (so the resolver can say "no wheels for Python 3.11 (has 3.12)"); its Python list
    lacks the target's, so it is never chosen."""
    from packaging.version import InvalidVersion, Version

    found: dict[str, dict[str, Any]] = {}
    wanted = {python_of_tag(t) for t in target.tags if t.split("-")[1].startswith("cp")} if target.tags else set()
    for wheel in wheels:
        if not any(t.rsplit("-", 1)[-1] in target.platforms for t in wheel.tags):
            continue
        try:
            version = Version(wheel.version)
        except InvalidVersion:
            continue
        if version.is_prerelease and not pre_releases:
            continue
        variant = variant_of(wheel.label, platform)
        if variant is None:
            continue
        entry = found.setdefault(wheel.version, {"variants": set(), "python": set(), "rp": None, "glibc": [],
                                                 "macos": [], "any_python": set()})
        entry["any_python"].add(variant)
        for tag in wheel.tags:
            python = python_of_tag(tag)
            if python:
                entry["python"].add(python)
            plat = tag.rsplit("-", 1)[-1]
            if m := re.match(r"manylinux_(\d+)_(\d+)_", plat):
                entry["glibc"].append((int(m[1]), int(m[2])))
            elif m := re.match(r"macosx_(\d+)_(\d+)_", plat):
                entry["macos"].append((int(m[1]), int(m[2])))
        if target.tags is None or wheel.tags & target.tags:
            entry["variants"].add(variant)
            entry["rp"] = entry["rp"] or wheel.file.requires_python
    releases = []
    for version in sorted(found, key=Version, reverse=True):
        entry = found[version]
        if not entry["variants"]:
            if not wanted or not entry["python"] or entry["python"] & wanted:
                continue
            entry["variants"] = entry["any_python"]  # gated out by Python: only its message uses them
        glibc = "{}.{}".format(*min(entry["glibc"])) if entry["glibc"] else None
        macos = "{}.{}".format(*min(entry["macos"])) if entry["macos"] else None
        pythons = tuple(sorted(entry["python"], key=lambda p: (_python_tuple(p)[0], p.endswith("t"))))
        releases.append(ReleaseFacts(version, tuple(sorted(entry["variants"], key=variant_order)), pythons,
                                     entry["rp"], glibc, macos))
    return IndexFacts(base, tuple(releases), fetched_at)


def _facts_to_json(facts: IndexFacts) -> dict[str, Any]:
    return {"format": _FACTS_FORMAT, "base": facts.base, "fetched_at": facts.fetched_at,
            "releases": [[r.version, list(r.variants), list(r.python), r.requires_python, r.glibc, r.macos]
                         for r in facts.releases]}


def _facts_from_json(data: Any) -> IndexFacts | None:
    try:
        if data["format"] != _FACTS_FORMAT:
            return None
        releases = tuple(ReleaseFacts(r[0], tuple(r[1]), tuple(r[2]), r[3], r[4], r[5]) for r in data["releases"])
        return IndexFacts(data["base"], releases, float(data["fetched_at"]))
    except (KeyError, TypeError, IndexError, ValueError):
        return None


# --------------------------------------------------------------------------------------------- learning

@lru_cache(maxsize=1)
def online_matrix_class() -> type:
    from .resolver.matrix import Matrix

    class OnlineMatrix(Matrix):
        """A Matrix extended from a live index. ``provenance`` holds the assumption lines per
        "version+variant" ("" for lines about the whole index)."""

        _fields = (*Matrix._fields, "provenance")
        __slots__ = ("provenance",)
        provenance: Mapping[str, tuple[str, ...]]

        def __init__(self, *args: Any, provenance: Mapping[str, tuple[str, ...]] = MappingProxyType({}),
                     **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            object.__setattr__(self, "provenance", provenance)

    return OnlineMatrix


class OnlineResult(NamedTuple):
    """A matrix extended from the index (or the one given, on failure), and the one fallback warning."""

    matrix: "Matrix"
    facts: IndexFacts | None
    warning: str | None = None


def channel_root(base: str, matrix: "Matrix", channel: str) -> str:
    sub = matrix.channels.get(channel, "") if hasattr(matrix, "channels") else ""
    return f"{base.rstrip('/')}/{sub}" if sub else base.rstrip("/")


def _fallback_variants(matrix: "Matrix", platform: str) -> list[str]:
    """Variant directories to read one by one when the index has no all-variants page (a partial mirror)."""
    seen: set[str] = set()
    for release in matrix.releases[:8]:
        seen.update(v for v in release.variants(platform) if v != "default")
    if platform.startswith("macos"):
        seen.add("cpu")
    return sorted(seen, key=variant_order)


def _listings(client: "IndexClient", matrix: "Matrix", platform: str) -> "list[Listing]":
    from .index import IndexUnavailable

    try:
        return [client.listing(PROJECT)]
    except IndexUnavailable as exc:
        if exc.status not in (403, 404):
            raise
        first = exc
    listings = []
    for variant in _fallback_variants(matrix, platform):
        try:
            listings.append(client.listing(PROJECT, variant))
        except IndexUnavailable as exc:
            if exc.status not in (403, 404):
                raise
    if not listings:
        raise first
    return listings


def learn(client: "IndexClient", machine: "Machine", matrix: "Matrix", channel: str = "stable") -> IndexFacts:
    """What the index offers this target. Raises IndexUnavailable when neither network nor cache can say."""
    from .index import parse_wheels

    platform = machine.platform or ""
    listings = _listings(client, matrix, platform)
    stale = next((listing.error for listing in listings if listing.stale), None)
    pre = channel in getattr(matrix, "pre_release_channels", ("nightly",))
    key = "facts|" + "|".join(f"{x.url}@{x.fetched_at}" for x in listings) + f"|{pre}|{platform}|"
    cached = client.cache.get_derived(key + _target_key(machine)) if client.cache else None
    facts = _facts_from_json(cached) if cached is not None else None
    if facts is None:
        target = target_tags(machine)
        wheels = [w for listing in listings for w in parse_wheels(listing.files, PROJECT)]
        facts = facts_from_wheels(wheels, target, platform, client.base, min(x.fetched_at for x in listings), pre)
        if client.cache:
            client.cache.put_derived(key + _target_key(machine), _facts_to_json(facts))
    if client.cache and not stale:
        client.cache.put_derived(_latest_key(client.base, pre, machine), {
            "pages": {x.url: x.fetched_at for x in listings}, "facts": _facts_to_json(facts)})
    return facts._replace(stale_error=stale, pages=tuple(x.url for x in listings))


def _latest_key(root: str, pre: bool, machine: "Machine") -> str:
    return f"latest|{root}|{pre}|{machine.platform}|{_target_key(machine)}"


def warm_facts(cache: "IndexCache", root: str, machine: "Machine", pre: bool, offline: bool) -> IndexFacts | None:
    """The facts last learnt for this target, if every page they came from is still fresh in the cache
    (any age with ``offline``): a warm lookup that reads a few small files and imports no network code."""
    value = cache.get_derived(_latest_key(root, pre, machine))
    if not isinstance(value, dict) or not isinstance(value.get("pages"), dict) or not value["pages"]:
        return None
    for url, fetched_at in value["pages"].items():
        entry = cache.get(url)
        if entry is None or entry.fetched_at != fetched_at or not (entry.fresh or offline):
            return None
    facts = _facts_from_json(value.get("facts"))
    return facts._replace(pages=tuple(value["pages"])) if facts else None


# --------------------------------------------------------------------------------------------- merging

def _nearest_cuda_arch(matrix: "Matrix", platform: str, variant: str) -> tuple[Any, str] | None:
    """Arch list of the known variant of the same CUDA major nearest in minor, newest release first."""
    from .resolver.matrix import cuda_version

    major, minor = cuda_version(variant)  # type: ignore[misc]
    for release in matrix.releases:
        same = [(v, a) for v, a in release.cuda.get(platform, {}).items()
                if (cuda_version(v) or (0, 0))[0] == major]
        if same:
            best = min(same, key=lambda va: (abs(cuda_version(va[0])[1] - minor), -cuda_version(va[0])[1]))  # type: ignore[index]
            return best[1], f"{best[0]} of torch {release.version}"
    return None


def _nearest_gfx(matrix: "Matrix", variant: str) -> tuple[Any, str] | None:
    """gfx list of the known ROCm variant nearest in version (at or below it when there is one)."""
    from .resolver.matrix import rocm_version

    wanted = rocm_version(variant) or ()
    known = [(rocm_version(v) or (), v, t, r.version) for r in matrix.releases for v, t in r.rocm.items()
             if t.gfx and v != variant]
    if not known:
        return None
    below = [k for k in known if k[0] <= wanted]
    best = max(below, key=lambda k: (k[0], k[3])) if below else min(known, key=lambda k: (k[0], k[3]))
    return best[2], f"{best[1]} of torch {best[3]}"


class _Assumptions:
    """What one merge assumes for variants the embedded matrix lacks. A variant's rules (driver floor, inherited
    arch or gfx list) and their note lines do not depend on the release listing it, so each is worked out once
    per merge, however many releases list that variant."""

    __slots__ = ("matrix", "platform", "os", "_rules", "_xpu")

    def __init__(self, matrix: "Matrix", platform: str) -> None:
        self.matrix = matrix
        self.platform = platform
        self.os = platform.split("_", 1)[0]
        self._rules: dict[str, tuple[bool, Any, Any, tuple[str, ...]]] = {}
        self._xpu: dict[str, tuple[Any, str] | None] = {}

    def rules(self, variant: str) -> tuple[bool, Any, Any, tuple[str, ...]]:
        """(offered, CUDA arch list, ROCm targets, note lines) of a variant whose rules come from its name; a
        variant whose name gives no rule (a CUDA major this torch-install does not know) is not offered."""
        rules = self._rules.get(variant)
        if rules is None:
            rules = self._rules[variant] = self._work_out(variant)
        return rules

    def _work_out(self, variant: str) -> tuple[bool, Any, Any, tuple[str, ...]]:
        from .resolver.matrix import CudaArch, RocmTargets, cuda_version, variant_kind

        matrix, kind = self.matrix, variant_kind(variant)
        if kind == "cuda":
            major = cuda_version(variant)[0]  # type: ignore[index]
            floor = matrix.cuda_floor(variant, self.os)
            if floor is None:
                return False, None, None, (f"CUDA {major} is unknown to this torch-install, so {variant} is not "
                                           "offered",)
            notes = []
            if variant not in matrix.cuda_toolkits:
                notes.append(f"driver floor {floor} assumed from CUDA {major}.x minor-version compatibility")
            nearest = _nearest_cuda_arch(matrix, self.platform, variant)
            arch = None
            if nearest:
                arch = CudaArch(nearest[0].sm, nearest[0].ptx, ASSUMED, f"assumed: inherited from {nearest[1]}")
                sms = " ".join(f"sm_{s}" for s in nearest[0].sm)
                notes.append(f"GPU architectures ({sms}) assumed from {nearest[1]}")
            else:
                notes.append(f"compiled GPU architectures unknown (no known CUDA {major} variant)")
            return True, arch, None, tuple(notes)
        if kind == "rocm":
            nearest_gfx = _nearest_gfx(matrix, variant)
            gfx = RocmTargets(nearest_gfx[0].gfx if nearest_gfx else None, ASSUMED)
            return True, None, gfx, (f"gfx targets assumed from {nearest_gfx[1]}" if nearest_gfx
                                     else "gfx targets unknown",)
        return True, None, None, ()

    def xpu(self, version: str) -> tuple[Any, str] | None:
        """(assumed XPU support, note line) for release ``version`` from the newest other release with XPU wheels."""
        if version not in self._xpu:
            from .resolver.matrix import XpuSupport

            donor = next((r for r in self.matrix.releases if r.xpu is not None and r.version != version), None)
            self._xpu[version] = (XpuSupport(donor.xpu.families, ASSUMED),
                                  f"Intel GPU families assumed from torch {donor.version}") if donor and donor.xpu \
                else None
        return self._xpu[version]


def _assume_variants(assumptions: _Assumptions, release: "Release", variants: Iterable[str],
                     provenance: dict[str, tuple[str, ...]]) -> "Release":
    """``release`` listing each of ``variants`` on the merge's platform, with the rules each inherits by name
    (its assumptions recorded in ``provenance`` under "version+variant"), the copy built once; a variant whose
    name gives no rule is left out."""
    added: list[tuple[str, Any, Any]] = []
    xpu = release.xpu
    for variant in variants:
        offered, arch, gfx, notes = assumptions.rules(variant)
        header = f"torch {release.version}+{variant}: on the index, not in the embedded matrix"
        if offered:
            added.append((variant, arch, gfx))
            if variant == "xpu" and xpu is None:
                donated = assumptions.xpu(release.version)
                if donated:
                    xpu, line = donated
                    notes = (*notes, line)
        provenance[f"{release.version}+{variant}"] = (header, *notes)
    if not added:
        return release
    updated = release.with_variants(assumptions.platform, added, confidence=ASSUMED)
    return updated if xpu is release.xpu else updated._replace(xpu=xpu)


def _new_release(facts: ReleaseFacts, platform: str) -> "Release":
    from .resolver.matrix import Release

    return Release(
        version=facts.version,
        requires_python=facts.requires_python,
        python=MappingProxyType({platform: facts.python}),
        glibc=MappingProxyType({platform: facts.glibc} if facts.glibc else {}),
        macos=MappingProxyType({platform: facts.macos} if facts.macos else {}),
        variants_confidence="verified",  # read from the index itself
        confidence="verified",
    )


def merge(matrix: "Matrix", facts: IndexFacts, platform: str) -> "Matrix":
    """The matrix as the index has it for the target: releases and variants the index offers, others left out.
    Returns an OnlineMatrix whose ``provenance`` says what was assumed.

    On macOS the plain build comes from the default index, which is not read: there releases are only added.
    """
    from .resolver.matrix import Matrix, version_key

    provenance: dict[str, tuple[str, ...]] = {}
    assumptions = _Assumptions(matrix, platform)
    offered = {r.version: r for r in facts.releases}
    macos = platform.startswith("macos")
    known_versions = {r.version for r in matrix.releases}
    kept: list[Release] = []
    dropped: list[str] = []
    for known in matrix.releases:
        found = offered.get(known.version)
        if found is None:
            (kept.append(known) if macos else dropped.append(known.version))
            continue
        release = known
        listed = known.variants(platform)
        pythons = set(found.python) or set(known.python_tags(platform))  # the index's own Pythons when it lists any
        if pythons != set(known.python_tags(platform)):
            python = dict(release.python)
            python[platform] = tuple(sorted(pythons, key=lambda p: (_python_tuple(p)[0], p.endswith("t"))))
            release = release._replace(python=MappingProxyType(python))
        if not macos and any(v not in found.variants for v in listed):
            lists = dict(release.variant_lists)
            lists[platform] = tuple(v for v in listed if v in found.variants)
            release = release._replace(variant_lists=MappingProxyType(lists))
        release = _assume_variants(assumptions, release, [v for v in found.variants if v not in listed], provenance)
        kept.append(release)
    for found in facts.releases:
        if found.version in known_versions:
            continue
        release = _assume_variants(assumptions, _new_release(found, platform), found.variants, provenance)
        if release.variants(platform):
            kept.append(release)
    if dropped:
        shown = ", ".join(dropped[:5]) + (f" and {len(dropped) - 5} more" if len(dropped) > 5 else "")
        provenance[""] = (f"not on the index for this platform and Python, so not chosen: torch {shown}",)
    kept.sort(key=lambda r: version_key(r.version), reverse=True)
    fields_ = {f: getattr(matrix, f) for f in Matrix._fields if f != "releases"}
    return online_matrix_class()(releases=tuple(kept), **fields_,
                                 provenance=MappingProxyType(provenance))


def assumptions_for(matrix: "Matrix", torch: str, variant: str) -> tuple[str, ...]:
    """The provenance lines a plan choosing ``torch`` ``variant`` rests on (none for an embedded matrix)."""
    provenance = getattr(matrix, "provenance", {})
    return tuple(f"index: {line}" for line in provenance.get(f"{torch}+{variant}", ()))


# --------------------------------------------------------------------------------------------- entry points

def _date(epoch: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def make_client(base: str, offline: bool = False, allow_insecure: bool = False, cache: "IndexCache | None" = None
                ) -> "IndexClient":
    from .index import Fetcher, IndexClient
    from .index_cache import IndexCache

    return IndexClient(base, cache or IndexCache(), Fetcher(allow_insecure=allow_insecure, **fetch_settings()),
                       offline=offline)


def fetch_settings(env: Mapping[str, str] | None = None) -> dict[str, float]:
    """Timeout and retry overrides: ``TORCH_INSTALL_INDEX_TIMEOUT`` (seconds, connect and read) and
    ``TORCH_INSTALL_INDEX_RETRIES`` (extra attempts). A malformed value is an input error."""
    import os

    env = os.environ if env is None else env
    out: dict[str, float] = {}
    for name, keys, low, high in (("TORCH_INSTALL_INDEX_TIMEOUT", ("connect_timeout", "read_timeout"), 0.05, 600),
                                  ("TORCH_INSTALL_INDEX_RETRIES", ("retries",), 0, 10)):
        if not env.get(name):
            continue
        try:
            value = float(env[name])
        except ValueError:
            value = -1.0
        if not low <= value <= high or (keys == ("retries",) and value != int(value)):
            raise InputError(f"${name}={env[name]!r}: expected a number from {low:g} to {high:g}")
        out.update({k: int(value) if k == "retries" else value for k in keys})
    return out


def online_matrix(matrix: "Matrix", machine: "Machine", base: str, *, channel: str = "stable", offline: bool = False,
                  allow_insecure: bool = False, client: "IndexClient | None" = None) -> OnlineResult:
    """The matrix extended from the index at ``base``; on failure the cached, then the embedded data, with a
    one-line warning. Never raises for a network problem."""
    if not machine.platform:
        return OnlineResult(matrix, None, warning="index not consulted: the target's OS or architecture is unknown; "
                                                  "using the embedded matrix")
    root = channel_root(base, matrix, channel)
    facts = None
    if client is None:
        from .index_cache import IndexCache

        cache = IndexCache()
        pre = channel in getattr(matrix, "pre_release_channels", ("nightly",))
        facts = warm_facts(cache, root, machine, pre, offline)
        client = None if facts else make_client(root, offline, allow_insecure, cache)
    if facts is None:
        from .index import IndexUnavailable

        try:
            facts = learn(client, machine, matrix, channel)  # type: ignore[arg-type]
        except IndexUnavailable as exc:
            why = "not in the cache (--offline)" if offline else f"index unreachable ({exc})"
            return OnlineResult(matrix, None, warning=f"{why}; using the embedded matrix")
    merged = merge(matrix, facts, machine.platform)._replace(index_base=base)
    warning = None
    if facts.stale_error:
        warning = f"index unreachable ({facts.stale_error}); using cached data from {_date(facts.fetched_at)}"
    return OnlineResult(merged, facts, warning)


def wheel_hashes(client: "IndexClient", machine: "Machine", packages: Mapping[str, str]) -> dict[str, list[str]]:
    """sha256 of every file of each pinned ``name==version+label`` on the client's ``{base}/{name}/`` page
    that matches the target's tags. EnvironmentFailure when a package has none."""
    from .index import IndexUnavailable, parse_wheels

    target = target_tags(machine)
    out: dict[str, list[str]] = {}
    for name, version in packages.items():
        if not version:
            raise InputError(f"--hashes: {name} has no pinned version in the plan")
        try:
            listing = client.listing(name)
        except IndexUnavailable as exc:
            raise EnvironmentFailure(f"--hashes: {exc}") from None
        digests = sorted({w.file.sha256 for w in parse_wheels(listing.files, name)
                          if w.full_version == version and w.file.sha256
                          and (w.tags & target.tags if target.tags is not None
                               else any(t.rsplit("-", 1)[-1] in target.platforms for t in w.tags))})
        if not digests:
            raise EnvironmentFailure(f"--hashes: {listing.url} lists no {name} {version} wheel with a sha256 "
                                     "for the target's platform and Python")
        out[name] = digests
    return out


def emit_warning(text: str, write: Callable[[str], Any] | None = None) -> None:
    (write or sys.stderr.write)(f"torch-install: warning: {text}\n")


def with_index_notes(plan: Any, matrix: "Matrix") -> Any:
    """The plan with the index assumptions its choice rests on added to its notes (unchanged offline)."""
    provenance = getattr(matrix, "provenance", None)
    if not provenance or plan.choice is None:
        return plan
    lines = [*assumptions_for(matrix, plan.choice.torch, plan.choice.variant),
             *(f"index: {line}" for line in provenance.get("", ()))]
    return plan._replace(notes=tuple(plan.notes) + tuple(n for n in lines if n not in plan.notes))


def plan_hashes(plan: Any, machine: "Machine", *, offline: bool = False, allow_insecure: bool = False,
                client: "IndexClient | None" = None) -> dict[str, list[str]]:
    """sha256 digests for the plan's pinned packages, from the index its commands install from."""
    if plan.choice is None:
        raise InputError("--hashes: the plan has no choice to hash")
    if not plan.choice.index_url:
        raise InputError("--hashes: this plan installs from the default index, which torch-install does not read")
    client = client or make_client(plan.choice.index_url, offline, allow_insecure)
    return wheel_hashes(client, machine, plan.choice.packages)
