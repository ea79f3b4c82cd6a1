"""Merging what an index offers into the matrix: the index is authoritative for *what exists* for the target, the
embedded data for the rules; a variant the data does not know inherits its rules from its name, labelled
``assumed``, and each assumption becomes a line of the matrix's ``provenance``.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType

from ..drivers import toolkit_ga_driver
from ..records import Record
from ..resolver.matrix import ASSUMED, ArchTargets, CudaArch, Matrix, Release, XpuSupport, version_key
from ..resolver.plan import Plan
from ..resolver.variants import cuda_version, rocm_version, variant_kind
from ..wheel_tags import python_sort_key
from .facts import IndexFacts, ReleaseFacts


def _nearest_cuda_arch(matrix: Matrix, platform: str, major: int, minor: int) -> tuple[CudaArch, str] | None:
    """Arch list of the known variant of CUDA ``major`` nearest in minor, newest release first."""
    for release in matrix.releases:
        same = [(cv[1], v, a) for v, a in release.cuda.get(platform, {}).items()
                if (cv := cuda_version(v)) and cv[0] == major]
        if same:
            _, variant, arch = min(same, key=lambda m_v_a: (abs(m_v_a[0] - minor), -m_v_a[0]))
            return arch, f"{variant} of torch {release.version}"
    return None


def _nearest_gfx(matrix: Matrix, variant: str) -> tuple[ArchTargets, str] | None:
    """gfx list of the known ROCm variant nearest in version (at or below it when there is one)."""
    wanted = rocm_version(variant) or ()
    known = [(rocm_version(v) or (), v, t, r.version) for r in matrix.releases for v, t in r.targets.items()
             if t.arches and v != variant and variant_kind(v) == "rocm"]
    if not known:
        return None
    below = [k for k in known if k[0] <= wanted]
    best = max(below, key=lambda k: (k[0], k[3])) if below else min(known, key=lambda k: (k[0], k[3]))
    return best[2], f"{best[1]} of torch {best[3]}"


class VariantRules(Record):
    """What a variant the embedded data lacks inherits by its name; ``offered`` False: its name gives no rule."""

    offered: bool
    arch: CudaArch | None = None
    gfx: ArchTargets | None = None
    notes: tuple[str, ...] = ()


class _Assumptions:
    """What one merge assumes for variants the embedded matrix lacks. A variant's rules (driver floor, inherited
    arch or gfx list) and their note lines do not depend on the release listing it, so each is worked out once
    per merge, however many releases list that variant."""

    __slots__ = ("matrix", "platform", "os", "_rules", "_xpu")

    def __init__(self, matrix: Matrix, platform: str) -> None:
        self.matrix = matrix
        self.platform = platform
        self.os = platform.split("_", 1)[0]
        self._rules: dict[str, VariantRules] = {}
        self._xpu: dict[str, tuple[XpuSupport, str] | None] = {}

    def rules(self, variant: str) -> VariantRules:
        """The rules of a variant that come from its name; a variant whose name gives no rule (a CUDA major this
        torch-install does not know) is not offered."""
        rules = self._rules.get(variant)
        if rules is None:
            rules = self._rules[variant] = self._work_out(variant)
        return rules

    def _work_out(self, variant: str) -> VariantRules:
        matrix = self.matrix
        cv = cuda_version(variant)
        if cv:
            major, minor = cv
            floor = matrix.cuda_floor(variant, self.os)
            if floor is None:
                return VariantRules(False, notes=(f"CUDA {major} is unknown to this torch-install, so {variant} is "
                                                  "not offered",))
            notes = []
            if toolkit_ga_driver(major, minor, self.os) is None:
                notes.append(f"driver floor {floor} assumed from CUDA {major}.x minor-version compatibility")
            nearest = _nearest_cuda_arch(matrix, self.platform, major, minor)
            arch = None
            if nearest:
                arch = CudaArch(nearest[0].sm, nearest[0].ptx, ASSUMED, f"assumed: inherited from {nearest[1]}")
                sms = " ".join(f"sm_{s}" for s in nearest[0].sm)
                notes.append(f"GPU architectures ({sms}) assumed from {nearest[1]}")
            else:
                notes.append(f"compiled GPU architectures unknown (no known CUDA {major} variant)")
            return VariantRules(True, arch, None, tuple(notes))
        if variant_kind(variant) == "rocm":
            nearest_gfx = _nearest_gfx(matrix, variant)
            gfx = ArchTargets(nearest_gfx[0].arches if nearest_gfx else None, ASSUMED)
            return VariantRules(True, None, gfx, (f"gfx targets assumed from {nearest_gfx[1]}" if nearest_gfx
                                                  else "gfx targets unknown",))
        return VariantRules(True)

    def xpu(self, version: str) -> tuple[XpuSupport, str] | None:
        """(assumed XPU support, note line) for release ``version`` from the newest other release with XPU wheels."""
        if version not in self._xpu:
            donor = next((r for r in self.matrix.releases if r.xpu is not None and r.version != version), None)
            self._xpu[version] = (XpuSupport(donor.xpu.families, ASSUMED),
                                  f"Intel GPU families assumed from torch {donor.version}") if donor and donor.xpu \
                else None
        return self._xpu[version]


def _assume_variants(assumptions: _Assumptions, release: Release, variants: Iterable[str],
                     provenance: dict[str, tuple[str, ...]]) -> Release:
    """``release`` listing each of ``variants`` on the merge's platform, with the rules each inherits by name
    (its assumptions recorded in ``provenance`` under "version+variant"), the copy built once; a variant whose
    name gives no rule is left out."""
    added: list[tuple[str, CudaArch | None, ArchTargets | None]] = []
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


def _new_release(facts: ReleaseFacts, platform: str) -> Release:
    return Release(
        version=facts.version,
        requires_python=facts.requires_python,
        python=MappingProxyType({platform: facts.python}),
        glibc=MappingProxyType({platform: facts.glibc} if facts.glibc else {}),
        macos=MappingProxyType({platform: facts.macos} if facts.macos else {}),
        variants_confidence="verified",  # read from the index itself
        confidence="verified",
    )


def merge(matrix: Matrix, facts: IndexFacts, platform: str) -> Matrix:
    """The matrix as the index has it for the target: releases and variants the index offers, others left out.
    The result's ``provenance`` says what was assumed.

    On macOS the plain build comes from the default index, which is not read: there releases are only added.
    """
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
            if macos:
                kept.append(known)
            else:
                dropped.append(known.version)
            continue
        release = known
        listed = known.variants(platform)
        pythons = set(found.python) or set(known.python_tags(platform))  # the index's own Pythons when it lists any
        if pythons != set(known.python_tags(platform)):
            python = dict(release.python)
            python[platform] = tuple(sorted(pythons, key=python_sort_key))
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
    return matrix._replace(releases=tuple(kept), provenance=MappingProxyType(provenance))


def merge_default(matrix: Matrix, facts: IndexFacts, platform: str, where: str) -> Matrix:
    """The matrix with what the default index (configured at ``where``) says of torch for the target: on macOS,
    where its wheels are the build, each release's Pythons and macOS floor; everywhere, the releases the
    embedded data lacks, learned (their PyTorch-index variants, unless that index was read, are the newest known
    release's, assumed)."""
    provenance = dict(matrix.provenance or {})
    assumptions = _Assumptions(matrix, platform)
    macos = platform.startswith("macos")
    releases = {r.version: r for r in matrix.releases}
    donor = next((r for r in matrix.releases if r.variants(platform)), None)
    for found in facts.releases:
        known = releases.get(found.version)
        if known is not None:
            if macos and found.python:
                known = known._replace(python=MappingProxyType({**known.python, platform: found.python}),
                                       macos=MappingProxyType({**known.macos, platform: found.macos})
                                       if found.macos else known.macos)
                releases[found.version] = known
            continue
        release = _new_release(found, platform)._replace(variants_confidence=ASSUMED)
        header = f"torch {found.version}: learned from the default index ({where}), not in the embedded matrix"
        if macos:
            release = release._replace(variant_lists=MappingProxyType({platform: ("default",)}))
            provenance[f"{found.version}+default"] = (header,)
        elif donor is not None:
            release = _assume_variants(assumptions, release, donor.variants(platform), provenance)
            built: tuple[str, ...] = ()
            if found.default_build:
                release = release._replace(pypi=MappingProxyType({platform: found.default_build}))
                built = (f"the default index's wheel is a {found.default_build} build (its METADATA's pins)",)
            for variant in release.variants(platform):
                lines = provenance.get(f"{found.version}+{variant}", ())
                provenance[f"{found.version}+{variant}"] = (header, *built, f"its PyTorch-index variants assumed "
                                                            f"from torch {donor.version}", *lines[1:])
        if release.variants(platform):
            releases[found.version] = release
    ordered = sorted(releases.values(), key=lambda r: version_key(r.version), reverse=True)
    return matrix._replace(releases=tuple(ordered), provenance=MappingProxyType(provenance))


def assumptions_for(matrix: Matrix, torch: str, variant: str) -> tuple[str, ...]:
    """The provenance lines a plan choosing ``torch`` ``variant`` rests on (none for an embedded matrix)."""
    return tuple(f"index: {line}" for line in (matrix.provenance or {}).get(f"{torch}+{variant}", ()))


def with_index_notes(plan: Plan, matrix: Matrix) -> Plan:
    """The plan with the index assumptions its choice rests on added to its notes (unchanged offline)."""
    provenance = matrix.provenance
    if not provenance or plan.choice is None:
        return plan
    lines = [*assumptions_for(matrix, plan.choice.torch, plan.choice.variant),
             *(f"index: {line}" for line in provenance.get("", ()))]
    return plan._replace(notes=tuple(plan.notes) + tuple(n for n in lines if n not in plan.notes))
