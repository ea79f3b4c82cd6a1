"""Per-vendor usability checks: can this wheel variant run on these GPUs with this driver?

Each check is pure and answers with a :class:`Verdict`: usable or not, one-line reasons, and what would
change the answer (the driver a variant needs, GPUs it cannot run). The release-level choice lives in
``choose.py``; the facts (driver floors, arch lists, gfx lists, XPU families) come from the Matrix.
"""

from __future__ import annotations

from .. import vendors
from ..machine import Gpu, Machine
from ..records import Record
from ..versions import numeric_key, release_numbers, specifier_allows
from .matrix import CudaArch, GpuDriverLast, Matrix, Release, os_of
from .plan import Need
from .variants import cuda_version, rocm_version, variant_kind

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

# Confidence values that deserve a note when a plan rests on them.
WEAK_CONFIDENCE = ("derived", "inferred", "unverified", "secondary", "maintainer-statement", "assumed")


class Verdict:
    """Outcome of checking one (release, variant) against the machine; the checks fill it in."""

    __slots__ = ("variant", "usable", "reason", "native", "driver_needed", "arch_ok", "unusable_gpus", "env", "notes",
                 "unknown_arch")

    def __init__(self, variant: str, usable: bool) -> None:
        self.variant = variant
        self.usable = usable
        self.reason = ""  # one line: why rejected (or, when usable, how it runs)
        self.native = False  # NVIDIA: driver meets the toolkit's full-feature minimum
        self.driver_needed: str | None = None  # NVIDIA: floor the driver failed (None: driver was fine or unknown)
        self.arch_ok = True  # every considered GPU has kernels in this build
        self.unusable_gpus: tuple[Gpu, ...] = ()  # GPUs this build cannot drive
        self.env: dict[str, str] = {}  # environment the user must set (HSA_OVERRIDE_GFX_VERSION)
        self.notes: list[str] = []  # weak facts the verdict rests on
        self.unknown_arch: tuple[Gpu, ...] = ()  # GPUs whose architecture is unknown (not rejected for it)

    def __repr__(self) -> str:
        return f"Verdict({self.variant!r}, usable={self.usable}, reason={self.reason!r})"


# Arch lists no source states (read off neighbouring builds): a GPU served only by their PTX is not counted as served.
UNSOURCED = ("inferred", "unverified", "assumed")


def sm_text(sm: int) -> str:
    return f"sm_{sm}"


def driver_meets(driver: str, floor: str) -> tuple[bool, bool]:
    """(meets, exact): whether an NVIDIA driver meets a floor. A driver given as its branch only ("575", as people
    write it) meets every floor of an older branch, and one of its own branch without the exact release being
    checked (``exact`` False); a floor given as a branch ("580") is met by every driver of that branch."""
    have, need = numeric_key(driver), numeric_key(floor)
    if len(have) == 1 and have and need and have[0] == need[0] and len(need) > 1:
        return True, False
    return have >= need, True


def cubin_or_ptx(arch: CudaArch, sm: int) -> tuple[str, int] | None:
    """How a build runs on a GPU of compute capability ``sm`` (×10): ("cubin", target) or ("ptx", target), or None.

    A cubin for X.y runs on X.z with z ≥ y (same major only); PTX for X.y JIT-compiles for any CC ≥ X.y.
    """
    cubins = [c for c in arch.sm if c // 10 == sm // 10 and c % 10 <= sm % 10]
    if cubins:
        return "cubin", max(cubins)
    ptx = [p for p in arch.ptx if p <= sm]
    return ("ptx", max(ptx)) if ptx else None


def possible_capabilities(matrix: Matrix, driver: str | None, platform: str) -> list[int]:
    """The compute capabilities (×10) a GPU of unknown model may have: those the platform's builds have ever
    targeted, less those the driver cannot drive (too new for it: ``gpu_driver_floor``; too old for it: the
    generations ``gpu_driver_last`` ends before its branch)."""
    every = sorted({sm for r in matrix.releases for arch in r.cuda.get(platform, {}).values() for sm in arch.sm})
    if not driver:
        return every
    out = []
    for sm in every:
        floor = matrix.gpu_driver_floor_for(sm)
        if floor is not None and not driver_meets(driver, floor.driver)[0]:
            continue
        if driver_beyond_last(matrix, driver, sm):
            continue
        out.append(sm)
    return out


def driver_beyond_last(matrix: Matrix, driver: str | None, sm: int | None) -> GpuDriverLast | None:
    """The generation's last driver branch when ``driver`` is of a newer branch (it no longer drives a GPU of
    compute capability ``sm``), else None."""
    last = matrix.gpu_driver_last_for(sm)
    if driver is None or last is None or not numeric_key(driver):
        return None
    return last if numeric_key(driver)[0] > int(last.driver) else None


def _served_text(sm: int, how: str, target: int) -> str:
    """How one GPU architecture runs a build: "has sm_90 kernels", "sm_89 runs its sm_86 kernels", "sm_121 runs
    sm_120 PTX by just-in-time compilation"."""
    if how == "ptx":
        return f"{sm_text(sm)} runs {sm_text(target)} PTX by just-in-time compilation"
    return f"has {sm_text(sm)} kernels" if sm == target else f"{sm_text(sm)} runs its {sm_text(target)} kernels"


def runs_on(arch: CudaArch, sm: int) -> int | None:
    """The build target that runs on a GPU of compute capability ``sm`` (×10), or None (see ``cubin_or_ptx``)."""
    found = cubin_or_ptx(arch, sm)
    return found[1] if found else None


def check_cuda(matrix: Matrix, release: Release, variant: str, platform: str, gpus: tuple[Gpu, ...],
               machine: Machine) -> Verdict:
    """NVIDIA: usable iff the driver meets the variant's CUDA-major floor and every GPU has a kernel."""
    os = os_of(platform)
    driver = machine.nvidia_driver
    v = Verdict(variant, usable=True)
    floor = matrix.cuda_floor(variant, os)
    fam = matrix.cuda_family(variant)
    if fam and fam.confidence_for(os) in WEAK_CONFIDENCE:
        v.notes.append(f"driver floor of {variant} on {os} ({floor}) is {fam.confidence_for(os)}")
    if floor is None:
        v.notes.append(f"no driver floor known for {variant}")
    problems: list[str] = []
    if driver and floor:
        meets, exact = driver_meets(driver, floor)
        if not meets:
            v.driver_needed = floor
            problems.append(f"needs driver ≥ {floor}, found {driver}")
        elif not exact:
            v.notes.append(f"driver {driver} is given as its branch: it meets the {variant} floor {floor} only if it "
                           "is that release or newer (not checked)")
    stranded = []
    for gpu in gpus:
        if last := driver_beyond_last(matrix, driver, gpu.sm):
            stranded.append(gpu)
            problems.append(f"driver {driver} no longer drives {gpu.label_with_arch} (R{last.driver} is the last "
                            f"driver branch for {last.arch})")
    for gpu in gpus:
        gpu_floor = matrix.gpu_driver_floor_for(gpu.sm)
        if driver and gpu_floor and not driver_meets(driver, gpu_floor.driver)[0]:
            if not v.driver_needed or numeric_key(gpu_floor.driver) > numeric_key(v.driver_needed):
                v.driver_needed = gpu_floor.driver
            problems.append(f"{gpu.label_with_arch} ({gpu_floor.arch}) needs driver ≥ {gpu_floor.driver}, "
                            f"found {driver}")
            break
    full = matrix.cuda_full_driver(variant, os)
    v.native = bool(driver and full and driver_meets(driver, full)[0])
    arch = release.cuda_arch(variant, platform)
    unusable: list[Gpu] = list(stranded)
    unknown: list[Gpu] = []
    if arch is None:
        v.notes.append(f"arch list of {release.version}+{variant} on {platform} is not known; not checked")
    else:
        if arch.confidence in WEAK_CONFIDENCE:
            v.notes.append(f"arch list of {release.version}+{variant} on {platform} is {arch.confidence}"
                           + (f" ({arch.note})" if arch.note else ""))
        jit_only: list[Gpu] = []
        for gpu in gpus:
            served = cubin_or_ptx(arch, gpu.sm) if gpu.sm is not None else None
            if gpu.sm is None:
                unknown.append(gpu)
            elif gpu in stranded:
                continue
            elif served is None:
                unusable.append(gpu)
            elif served[0] == "ptx" and arch.confidence in UNSOURCED:
                jit_only.append(gpu)
        if jit_only:
            unusable += jit_only
            problems.append(f"{', '.join(g.label_with_arch for g in jit_only)} would run only by just-in-time "
                            f"compilation of PTX, and the arch list of {release.version}+{variant} is "
                            f"{arch.confidence}")
        unusable_no_kernels = [g for g in unusable if g not in jit_only and g not in stranded]
        if unusable_no_kernels:
            built = " ".join(sm_text(s) for s in arch.sm) + (
                " + PTX " + " ".join(sm_text(p) for p in arch.ptx) if arch.ptx else "")
            names = ", ".join(g.label_with_arch for g in unusable_no_kernels)
            problems.append(f"no kernels for {names} (builds {built})")
    v.unusable_gpus = tuple(unusable)
    v.unknown_arch = tuple(unknown)
    v.arch_ok = not unusable
    if problems:
        v.usable = False
        v.reason = f"{variant} rejected: " + "; ".join(problems)
        return v
    cv = cuda_version(variant)
    how = []
    if arch is not None:
        ways: dict[int, tuple[str, int]] = {}
        for g in gpus:
            if g.sm is not None and (way := cubin_or_ptx(arch, g.sm)) is not None:
                ways[g.sm] = way
        if ways:
            how.append(", ".join(_served_text(sm, kind, target) for sm, (kind, target) in sorted(ways.items())))
    if driver:
        mode = "natively" if v.native else "under minor-version compatibility"
        how.append(f"driver {driver} runs CUDA {cv[0]}.{cv[1]} {mode}" if cv else f"driver {driver}")
    v.reason = f"{variant}: " + "; ".join(how) if how else variant
    return v


def hsa_override(gfx: str) -> str:
    """HSA_OVERRIDE_GFX_VERSION value for a built target: gfx1030 -> 10.3.0, gfx900 -> 9.0.0, gfx90a -> 9.0.10."""
    digits = gfx[3:]
    major, minor, step = digits[:-2], digits[-2], digits[-1]
    return f"{int(major)}.{int(minor, 16)}.{int(step, 16)}"


def check_arch_list(matrix: Matrix, release: Release, variant: str, platform: str, gpus: tuple[Gpu, ...],
                    machine: Machine) -> Verdict:
    """Usable iff every GPU's architecture (its vendor's ``arch_field``: AMD's gfx target) is compiled into the
    variant, or is a known alias of one that is (ROCm's gfx aliases, run with HSA_OVERRIDE_GFX_VERSION)."""
    row = vendors.of_kind(variant_kind(variant))
    field, word, lists = (row.arch_field, row.arch_word, row.list_word) if row else ("family", "architecture",
                                                                                   "architecture list")
    v = Verdict(variant, usable=True)
    targets = release.arch_targets(variant)
    if targets is None or targets.arches is None:
        v.usable = False
        v.reason = f"{variant} rejected: its {word} list for torch {release.version} is not known"
        return v
    if targets.confidence in WEAK_CONFIDENCE:
        v.notes.append(f"{lists} of {release.version}+{variant} is {targets.confidence}")
    unusable, unknown = [], []
    arch_of = {gpu: getattr(gpu, field) for gpu in gpus}
    for gpu in gpus:
        arch = arch_of[gpu]
        if not arch:
            unknown.append(gpu)
            continue
        if arch in targets.arches:
            continue
        alias = next((a for a in matrix.gfx_aliases.get(arch, ()) if a in targets.arches), None)
        if alias:
            override = hsa_override(alias)
            if v.env.get("HSA_OVERRIDE_GFX_VERSION", override) != override:
                unusable.append(gpu)
                continue
            v.env["HSA_OVERRIDE_GFX_VERSION"] = override
            v.notes.append(f"{arch} runs {alias} code only with HSA_OVERRIDE_GFX_VERSION={override} "
                           f"(a community workaround, {matrix.gfx_aliases_confidence})")
        else:
            unusable.append(gpu)
    needed = v.env.get("HSA_OVERRIDE_GFX_VERSION")
    built = [g for g in gpus if arch_of[g] and arch_of[g] in targets.arches]
    mistargeted = [g for g in built if needed and hsa_override(arch_of[g] or "") != needed]
    v.unknown_arch = tuple(unknown)
    if unusable:
        v.unusable_gpus = tuple(unusable)
        v.arch_ok = False
        v.usable = False
        v.reason = (f"{variant} rejected: no code for " + ", ".join(g.label_with_arch for g in unusable)
                    + f" (builds {' '.join(targets.arches)})")
        return v
    if mistargeted:  # the override applies to every GPU of the process: it would make these run foreign code
        needing = [g for g in gpus if arch_of[g] and g not in built]
        v.unusable_gpus = tuple(needing)
        v.arch_ok = False
        v.usable = False
        v.reason = (f"{variant} rejected: {', '.join(g.label_with_arch for g in needing)} needs "
                    f"HSA_OVERRIDE_GFX_VERSION={needed}, which applies to every GPU in the process, and "
                    f"{', '.join(g.label_with_arch for g in mistargeted)} runs its own code")
        return v
    direct = sorted({arch_of[g] or "" for g in built})
    aliased = sorted({arch_of[g] or "" for g in gpus if arch_of[g] and g not in built})
    how = [f"builds {', '.join(direct)}"] if direct else []
    if aliased:
        how.append(f"runs {', '.join(aliased)} with HSA_OVERRIDE_GFX_VERSION={v.env['HSA_OVERRIDE_GFX_VERSION']}")
    v.reason = f"{variant}: " + "; ".join(how) if how else variant
    return v


# AMD tests the amdgpu kernel driver against ROCm user space within this many ROCm releases either way.
ROCM_DRIVER_WINDOW = 2


def rocm_series(version: str) -> tuple[int, int] | None:
    """ROCm release series of a version or variant: "6.2.4" / "rocm6.2.4" -> (6, 2); None when unreadable."""
    parts = release_numbers(version)
    return (parts[0], parts[1]) if len(parts) >= 2 else None


def rocm_distance(matrix: Matrix, a: str, b: str) -> int | None:
    """How many ROCm releases apart two versions are, counted on the series the matrix knows from its ROCm
    variants (…6.3, 6.4, 7.0, 7.1, 7.2, 7.14…); a series the matrix lacks is slotted in by order."""
    sa, sb = rocm_series(a), rocm_series(b)
    if sa is None or sb is None:
        return None
    known = {s for r in matrix.releases for v in r.targets if variant_kind(v) == "rocm" and (s := rocm_series(v))}
    order = sorted(known | {sa, sb})
    return abs(order.index(sa) - order.index(sb))


def check_xpu(matrix: Matrix, release: Release, variant: str, platform: str, gpus: tuple[Gpu, ...],
              machine: Machine) -> Verdict:
    """Intel: usable iff the release builds XPU code for every GPU's device family on this OS."""
    v = Verdict("xpu", usable=True)
    os = os_of(platform)
    families = release.xpu.families.get(os, ()) if release.xpu else ()
    if not release.xpu or not families:
        v.usable = False
        v.reason = f"xpu rejected: torch {release.version} has no XPU wheels for {os}"
        return v
    if release.xpu.confidence in WEAK_CONFIDENCE:
        v.notes.append(f"XPU device list of torch {release.version} is {release.xpu.confidence}")
    unusable = [g for g in gpus if g.family and not set(family_candidates(g.family)) & set(families)]
    unsure = [g for g in gpus if g.family and g not in unusable
              and not set(family_candidates(g.family)) <= set(families)]
    v.unknown_arch = tuple(g for g in gpus if not g.family or g in unsure)
    for g in gpus:
        if g.family and "|" in g.family and g not in unusable and g not in unsure:
            v.notes.append(f"{g.label} is one of several chips ({', '.join(family_candidates(g.family))}); the "
                           f"build has code for each")
    v.unusable_gpus = tuple(unusable)
    v.arch_ok = not unusable
    if unusable:
        v.usable = False
        v.reason = (f"xpu rejected: torch {release.version} on {os} builds for {', '.join(families)}; "
                    f"not {', '.join(g.label_with_arch for g in unusable)}")
        return v
    built = sorted({f for g in gpus if g.family for f in family_candidates(g.family) if f in families})
    v.reason = f"xpu: builds for {', '.join(built)}"
    return v


def family_candidates(family: str) -> tuple[str, ...]:
    """The Intel device families a GPU's ``family`` allows: one, or several joined by "|" where a marketing name
    is shared by chips of several families ("meteor-lake|arrow-lake" for a bare "Intel Arc Graphics")."""
    return tuple(family.split("|"))


class Walk:
    """What walking the releases for one GPU set found: the release and verdict chosen, the other usable variants of
    that release, and every verdict per release walked."""

    __slots__ = ("release", "verdict", "others", "per_release")

    def __init__(self, per_release: list[tuple[Release, list[Verdict]]] | None = None) -> None:
        self.release: Release | None = None
        self.verdict: Verdict | None = None
        self.others: list[Verdict] = []  # usable variants of the chosen release, not chosen
        self.per_release: list[tuple[Release, list[Verdict]]] = [] if per_release is None else per_release


def driver_need(driver: str | None, need: str, row: vendors.Vendor = vendors.NVIDIA) -> Need:
    """The change "NVIDIA driver ≥ X" an upgrade names (the driver of ``row``: its first driver field)."""
    return Need(row.driver_fields[0], driver, f">={need}", f"{row.brand} driver ≥ {need}")


def driver_of(machine: Machine, row: vendors.Vendor) -> str | None:
    """The machine's driver version for the vendor's builds (its row's first driver field), None if unknown."""
    driver: str | None = getattr(machine, row.driver_fields[0]) if row.driver_fields else None
    return driver


class Blocker(Record):
    """Why a release is out for this machine: a plan warning code, one line, and what change would lift it."""

    code: str
    reason: str
    need: Need | None = None


def _python_key(python: str) -> tuple[int, ...]:
    return numeric_key(python)


def python_need(release: Release, platform: str, python: str) -> Need:
    """The Python a release has wheels for, in the words of an upgrade: "Python ≥ 3.11", "Python ≤ 3.14", or a GIL
    (or free-threaded) build of the machine's version."""
    tags = release.python_tags(platform)
    free = python.endswith("t")
    same_kind = [t for t in tags if t.endswith("t") == free]
    if not same_kind:  # a free-threaded Python where the release has only GIL builds (or the reverse)
        other = python.rstrip("t") + ("" if free else "t")
        kind = "a GIL build" if free else "a free-threaded build"
        target = other if other in tags else (tags[-1] if tags else other)
        return Need("python", python, target, f"{kind} of Python ({target})")
    low, high = min(same_kind, key=_python_key), max(same_kind, key=_python_key)
    kind = "free-threaded Python" if free else "Python"
    if _python_key(python) < _python_key(low):
        return Need("python", python, f">={low}", f"{kind} ≥ {low.rstrip('t')}")
    if _python_key(python) > _python_key(high):
        return Need("python", python, f"<={high}", f"{kind} ≤ {high.rstrip('t')}")
    return Need("python", python, " or ".join(same_kind), f"{kind} {' or '.join(t.rstrip('t') for t in same_kind)}")


def python_gate(release: Release, platform: str, python: str | None) -> str | None:
    """Why the release has no wheel for this Python on this platform (None: it has one or Python is unknown)."""
    if not python:
        return None
    tags = release.python_tags(platform)
    if tags and python not in tags:
        kind = "free-threaded " if python.endswith("t") else ""
        return (f"torch {release.version} has no wheels for {kind}Python {python} on {platform} "
                f"(has {', '.join(tags)})")
    return None


def glibc_gate(release: Release, platform: str, machine: Machine) -> str | None:
    need = release.glibc.get(platform)
    if machine.glibc and need and numeric_key(machine.glibc) < numeric_key(need):
        return f"torch {release.version} wheels need glibc ≥ {need} (manylinux), found {machine.glibc}"
    return None


def macos_gate(release: Release, platform: str, machine: Machine) -> str | None:
    need = release.macos_floor(platform, machine.python)
    if machine.os_version and need and numeric_key(machine.os_version) < numeric_key(need):
        which = f" for Python {machine.python}" if need != release.macos.get(platform) else ""
        return f"torch {release.version} wheels{which} need macOS ≥ {need}, found {machine.os_version}"
    return None


def companion_gate(release: Release, platform: str, machine: Machine, companion: str) -> Blocker | None:
    """Why the release's companion (torchvision, torchaudio) has no wheel for this Python here (or none for this
    macOS version), or None."""
    python = machine.python
    version = release.companions.get(companion, "")
    if python and python in release.companion_gaps.get(companion, {}).get(platform, ()):
        return Blocker("python-unsupported", f"{companion} {version} (the match of torch {release.version}) has no "
                                             f"wheels for Python {python} on {platform}")
    if machine.python_full and machine.python_full in release.companion_python.get(companion, ()):
        return Blocker("python-unsupported", f"{companion} {version} (the match of torch {release.version}) "
                                             f"excludes Python {machine.python_full} (Requires-Python "
                                             f"!={machine.python_full})",
                       Need("python", machine.python_full, f"!={machine.python_full}",
                            f"a Python other than {machine.python_full}"))
    floors = release.companion_macos.get(companion, {}).get(platform, {})
    need = floors.get(python or "") or floors.get("*")
    if need and machine.os_version and numeric_key(machine.os_version) < numeric_key(need):
        which = f" for Python {python}" if python in floors else ""
        return Blocker("platform-unsupported", f"{companion} {version} (the match of torch {release.version}) "
                                               f"wheels{which} need macOS ≥ {need}, found {machine.os_version}",
                       Need("macos", machine.os_version, f">={need}", f"macOS ≥ {need}"))
    return None


def companion_candidates(matrix: Matrix, release: Release, name: str, spec: Any) -> list[str]:
    """The versions of companion ``name`` that may go with ``release`` and that the request's ``spec`` (a
    SpecifierSet or AnyVersion; None: any) allows: its own match first, then the decoupled releases, newest first."""
    return [v for v in matrix.companion_versions(name, release)
            if spec is None or not str(spec) or spec.contains(v, prereleases=True)]


def companion_goes_with(matrix: Matrix, release: Release, name: str, version: str) -> bool:
    """Whether ``version`` of companion ``name`` (a local label aside) is one a plan may choose to go with
    ``release`` (``companion_candidates``): what the doctor holds an installed companion to."""
    return version.partition("+")[0] in matrix.companion_versions(name, release)


def companion_blocker(matrix: Matrix, release: Release, name: str, version: str, platform: str, machine: Machine,
                      variant: str | None = None) -> Blocker | None:
    """Why ``version`` of companion ``name`` has no wheel to go with ``release`` here (and, with ``variant``, none
    of that variant), or None. The release's own match: the gaps recorded with the release. A decoupled release
    (one that pins no one torch): its own wheels' Python tags, macOS floors and variants."""
    facts = matrix.decoupled_companions.get(name, {}).get(version)
    if version == release.companions.get(name) or facts is None:
        return companion_gate(release, platform, machine, name)
    which = f"{name} {version} (not the match of torch {release.version}: it pins no one torch)"
    tags = facts.python.get(platform)
    if tags is None:
        return Blocker("platform-unsupported", f"{which} has no wheels for {platform}")
    python = machine.python
    if python and "*" not in tags and python not in tags:
        return Blocker("python-unsupported", f"{which} has no wheels for Python {python} on {platform} (has "
                                             f"{', '.join(tags)})")
    if facts.requires_python and (machine.python_full or python):
        asked = machine.python_full or (python or "").rstrip("t")
        if not specifier_allows(facts.requires_python, asked):
            return Blocker("python-unsupported", f"{which} requires Python {facts.requires_python}, found {asked}")
    floors = facts.macos.get(platform, {})
    need = floors.get(python or "") or floors.get("*")
    if need and machine.os_version and numeric_key(machine.os_version) < numeric_key(need):
        return Blocker("platform-unsupported", f"{which}: its wheels need macOS ≥ {need}, found {machine.os_version}",
                       Need("macos", machine.os_version, f">={need}", f"macOS ≥ {need}"))
    built = facts.variants.get(platform)
    if variant and variant != "default" and built is not None and variant not in built:
        return Blocker("constrained-by", f"{which} has no {variant} build (its builds for {platform}: "
                                         f"{', '.join(built)}; {facts.variants_confidence})")
    return None


def gates(release: Release, platform: str, machine: Machine) -> list[Blocker]:
    """Every reason the release's own wheels do not install on the machine (platform, Python, glibc, macOS); the
    requested companions' are ``companion_blocker``'s."""
    if not release.variants(platform):
        return [Blocker("platform-unsupported", f"torch {release.version} has no wheels for {platform}")]
    found: list[Blocker] = []
    if machine.python and (reason := python_gate(release, platform, machine.python)):
        found.append(Blocker("python-unsupported", reason, python_need(release, platform, machine.python)))
    if reason := glibc_gate(release, platform, machine):
        need = release.glibc[platform]
        found.append(Blocker("platform-unsupported", reason, Need("glibc", machine.glibc, f">={need}",
                                                                  f"glibc ≥ {need}")))
    if reason := macos_gate(release, platform, machine):
        need = release.macos_floor(platform, machine.python) or ""
        found.append(Blocker("platform-unsupported", reason, Need("macos", machine.os_version, f">={need}",
                                                                  f"macOS ≥ {need}")))
    return found


# -- vendor policy -------------------------------------------------------------------------------------------

class Check(vendors.Protocol):
    """A vendor's check (its row's ``check``): whether a variant of a release runs on the vendor's GPUs here."""

    def __call__(self, matrix: Matrix, release: Release, variant: str, platform: str, gpus: tuple[Gpu, ...],
                 machine: Machine) -> Verdict: ...


class Preference(vendors.Protocol):
    """A vendor's order of a release's usable variants (its row's ``preference``): the highest key wins."""

    def __call__(self, release: Release, platform: str, v: Verdict, machine: Machine) -> tuple[object, ...]: ...


CHECK: vendors.Hook[Check] = vendors.Hook("check", Check, "torch_install.resolver")
PREFERENCE: vendors.Hook[Preference] = vendors.Hook("preference", Preference, "torch_install.resolver")


class VendorPolicy(Record):
    """How one GPU vendor's builds are chosen: its registry row (``vendors.py``), the check that decides whether
    one of its variants runs on the GPUs, and how the usable ones of a release are ordered (the highest key
    wins)."""

    row: vendors.Vendor
    check: Check
    preference: Preference

    @property
    def vendor(self) -> str:
        return self.row.name

    @property
    def kind(self) -> str:
        return self.row.kind or ""

    @property
    def brand(self) -> str:
        return self.row.brand

    @property
    def build(self) -> str:
        return self.row.build

    @property
    def select(self) -> str:
        return self.row.select

    def variants(self, release: Release, platform: str) -> list[str]:
        """The release's variants of this vendor's kind on the platform, in index order."""
        return [v for v in release.variants(platform) if variant_kind(v) == self.kind]


def cuda_preference(release: Release, platform: str, v: Verdict, machine: Machine) -> tuple[object, ...]:
    """A driver-native variant (when the driver is known), then the release default, then the newest CUDA."""
    default = v.variant == release.default_variant(platform)
    return (v.native if machine.nvidia_driver else False, default, cuda_version(v.variant) or (0, 0))


def rocm_preference(release: Release, platform: str, v: Verdict, machine: Machine) -> tuple[object, ...]:
    """No HSA_OVERRIDE_GFX_VERSION needed, then the newest ROCm."""
    return (not v.env, rocm_version(v.variant) or ())


def no_preference(release: Release, platform: str, v: Verdict, machine: Machine) -> tuple[object, ...]:
    """Every usable variant alike: the first in index order wins."""
    return ()


def policy_of(row: vendors.Vendor) -> VendorPolicy:
    """The policy of a vendor with builds of its own, its hooks resolved."""
    return VendorPolicy(row, CHECK.load(row), PREFERENCE.load(row))


def vendor_policies() -> dict[str, VendorPolicy]:
    """Vendor name -> policy, for every vendor with builds, in the order a machine with GPUs of several vendors
    is resolved for."""
    return {row.name: policy_of(row) for row in vendors.with_builds()}


def policy_of_kind(kind: str) -> VendorPolicy | None:
    row = vendors.of_kind(kind)
    return policy_of(row) if row is not None else None
