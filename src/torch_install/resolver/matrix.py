"""The compatibility matrix: which torch releases exist, with which wheel variants, for which hardware.

``load_matrix()`` reads the embedded package data (``data/torch-matrix.json``, schema in docs/matrix.md) once
per process. A :class:`Matrix` is immutable; extend it with :meth:`Matrix.with_release` /
:meth:`Matrix.with_variant`, which return a new Matrix (e.g. for releases or variants found on a live index).

Queries, with the platform keys of ``Machine.platform`` (``linux_x86_64``, ``linux_aarch64``,
``windows_x86_64``, ``macos_arm64``, ``macos_x86_64``)::

    m = load_matrix()
    m.releases[0].version                                  # newest release, "2.15.0"
    m.release("2.9.1").variants("linux_x86_64")            # ["cpu", "cu126", "cu128", ...]
    m.cuda_arch("2.9.1+cu128", "linux_x86_64").sm          # (70, 75, 80, 86, 90, 100, 120)
    m.arch_targets("2.8.0+rocm6.4").arches                 # ("gfx900", ..., "gfx1201")
    m.cuda_floor("cu130", "linux")                         # "580.65.06"  (minor-version-compat floor)
    m.cuda_full_driver("cu130", "linux")                   # "580.65.06"  (driver of that toolkit's GA)

Every fact carries a ``confidence`` (verified, source-file, maintainer-statement, secondary, inferred,
unverified; facts added at run time use ``assumed``). A variant unknown to the data (``cu134``) inherits its
driver rules from its name: CUDA major 13 -> the 13.x floor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from types import MappingProxyType

from ..drivers import toolkit_ga_driver
from ..package_data import load_json
from ..records import Record
from ..versions import small_int
from .plan import DEFAULT_INDEX_BASE
from .variants import cuda_version, variant_kind, variant_order

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from .companion_facts import Package
    from .vendor_builds import VendorBuilds

ASSUMED = "assumed"
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@lru_cache(maxsize=1024)  # asked for every release a resolve or merge sorts (see resolver/variants.py)
def version_key(version: str) -> tuple[int, ...]:
    """Order torch release versions ("2.10.0" after "2.9.1"); a local label (+cu128) is ignored."""
    return tuple(n for x in version.split("+")[0].split(".") if (n := small_int(x)) is not None)


def split_label(version: str) -> tuple[str, str | None]:
    """ "2.9.1+cu128" -> ("2.9.1", "cu128"); "2.9.1" -> ("2.9.1", None)."""
    public, _, label = version.partition("+")
    return public, label or None


def os_of(platform: str) -> str:
    return platform.split("_", 1)[0]


class CudaArch(Record):
    """Compiled CUDA targets of one (release, platform, variant): cubins (``sm``, CC×10) and PTX."""

    sm: tuple[int, ...]
    ptx: tuple[int, ...] = ()
    confidence: str = "unverified"
    note: str | None = None


class ArchTargets(Record):
    """The GPU architectures compiled into one variant of a release, named as the vendor's ``arch_field`` names
    them: ROCm's gfx targets (``arches`` None: not known)."""

    arches: tuple[str, ...] | None
    confidence: str = "unverified"


class XpuSupport(Record):
    """Intel GPU device families one release builds ahead-of-time for, per OS ("linux", "windows")."""

    families: Mapping[str, tuple[str, ...]]
    confidence: str = "unverified"


class Release(Record):
    """One torch release and its wheels."""

    version: str
    date: str | None = None
    requires_python: str | None = None
    python: Mapping[str, tuple[str, ...]] = _EMPTY  # platform -> ("3.11", "3.13t", ...)
    glibc: Mapping[str, str] = _EMPTY  # linux platform -> minimum glibc of the wheels
    macos: Mapping[str, str] = _EMPTY  # macOS platform -> minimum macOS version
    variant_lists: Mapping[str, tuple[str, ...]] = _EMPTY  # platform -> index variants
    variants_confidence: str = "unverified"
    secondary: tuple[str, ...] = ()  # variants that rest on a secondary or inferred source only
    pypi: Mapping[str, str] = _EMPTY  # platform -> variant equal to the default index's wheel
    stable_cuda: str | None = None  # the release's default CUDA variant
    cuda: Mapping[str, Mapping[str, CudaArch]] = _EMPTY  # platform -> variant -> arch list
    targets: Mapping[str, ArchTargets] = _EMPTY  # variant -> compiled architectures (ROCm: gfx targets)
    xpu: XpuSupport | None = None
    companions: Mapping[str, str] = _EMPTY  # torchvision/torchaudio -> version matching this torch
    confidence: str = "verified"  # the release's existence
    macos_python: Mapping[str, Mapping[str, str]] = _EMPTY  # macOS platform -> Python -> a higher macOS floor
    mps_macos: tuple[str, str] | None = None  # (the macOS the MPS backend needs, confidence)
    companion_gaps: Mapping[str, Mapping[str, tuple[str, ...]]] = _EMPTY  # companion -> platform -> Pythons it lacks
    # companion -> platform -> Python ("*": any) -> the macOS its wheels need, where more than torch's need
    companion_macos: Mapping[str, Mapping[str, Mapping[str, str]]] = _EMPTY
    companion_python: Mapping[str, tuple[str, ...]] = _EMPTY  # companion -> Python patch releases it excludes

    def macos_floor(self, platform: str, python: str | None) -> str | None:
        """The macOS the wheel for this Python needs: some Python tags need more than the release's lowest."""
        return self.macos_python.get(platform, _EMPTY).get(python or "") or self.macos.get(platform)

    def variants(self, platform: str) -> list[str]:
        """Index variants for the platform (cpu first, then CUDA, ROCm, xpu); macOS: ["default"]."""
        return list(self.variant_lists.get(platform, ()))

    def cuda_arch(self, variant: str, platform: str) -> CudaArch | None:
        return self.cuda.get(platform, _EMPTY).get(variant)

    def arch_targets(self, variant: str) -> ArchTargets | None:
        return self.targets.get(variant)

    def python_tags(self, platform: str) -> tuple[str, ...]:
        return self.python.get(platform, ())

    def default_variant(self, platform: str) -> str | None:
        """The CUDA variant this release treats as default on the platform: the default index's build when
        it is CUDA, else the release's stable CUDA when the platform has it."""
        pypi = self.pypi.get(platform)
        if pypi and variant_kind(pypi) == "cuda":
            return pypi
        if self.stable_cuda and self.stable_cuda in self.variant_lists.get(platform, ()):
            return self.stable_cuda
        return None

    def with_variant(self, platform: str, variant: str, *, arch: CudaArch | None = None,
                     gfx: ArchTargets | None = None, confidence: str = ASSUMED) -> Release:
        """A copy listing ``variant`` on ``platform``. A CUDA variant without ``arch`` inherits the arch list
        of the newest CUDA variant of the same major on that platform (labelled ``confidence``); a ROCm
        variant without ``gfx`` inherits the newest ROCm variant's list."""
        return self.with_variants(platform, [(variant, arch, gfx)], confidence=confidence)

    def with_variants(self, platform: str, added: Iterable[tuple[str, CudaArch | None, ArchTargets | None]],
                      confidence: str = ASSUMED) -> Release:
        """A copy listing each ``(variant, arch, gfx)`` of ``added`` on ``platform``: what ``with_variant`` once
        per entry, in order, gives, built in one pass (a live index can add hundreds of variants)."""
        listed = set(self.variant_lists.get(platform, ()))
        grown = False
        known_cuda = self.cuda.get(platform, _EMPTY)
        cuda: dict[str, CudaArch] = {}  # added on the platform
        targets: dict[str, ArchTargets] = {}  # added
        for variant, arch, gfx in added:
            if variant not in listed:
                listed.add(variant)
                grown = True
            kind = variant_kind(variant)
            cv = cuda_version(variant)
            if cv and variant not in known_cuda and variant not in cuda:
                if arch is None:
                    major = cv[0]
                    same = [v for v in (*known_cuda, *cuda) if (cuda_version(v) or (0,))[0] == major]
                    if same:
                        newest = max(same, key=variant_order)
                        base = cuda.get(newest) or known_cuda[newest]
                        arch = CudaArch(base.sm, base.ptx, confidence, f"inherited from {newest}")
                if arch:
                    cuda[variant] = arch
            elif not cv and variant not in self.targets and variant not in targets:
                if gfx is None:  # the newest list of the same kind (ROCm's gfx targets), if the release has one
                    same = [v for v in (*self.targets, *targets) if variant_kind(v) == kind]
                    if same:
                        newest = max(same, key=variant_order)
                        gfx = ArchTargets((targets.get(newest) or self.targets[newest]).arches, confidence)
                if gfx is not None:
                    targets[variant] = gfx
        changes: dict[str, Any] = {}
        if grown:
            changes["variant_lists"] = MappingProxyType({**self.variant_lists,
                                                         platform: tuple(sorted(listed, key=variant_order))})
        if cuda:
            changes["cuda"] = MappingProxyType({**self.cuda, platform: MappingProxyType({**known_cuda, **cuda})})
        if targets:
            changes["targets"] = MappingProxyType({**self.targets, **targets})
        return self._replace(**changes) if changes else self


class DecoupledCompanion(Record):
    """A torchvision/torchaudio release that pins no one torch: the first torch it goes with, and its own wheels'
    facts, which decide where it installs beside a torch that is not its match."""

    torch_from: str
    python: Mapping[str, tuple[str, ...]] = _EMPTY  # platform -> CPython tags of its wheels; ("*",): a py3 wheel
    requires_python: str | None = None
    macos: Mapping[str, Mapping[str, str]] = _EMPTY  # macOS platform -> Python ("*": any) -> the macOS it needs
    variants: Mapping[str, tuple[str, ...]] = _EMPTY  # platform -> the index variants it is built for
    confidence: str = "verified"  # of torch_from
    variants_confidence: str = "unverified"


class DriverFloor(Record):
    """Minimum NVIDIA driver for a CUDA major under minor-version compatibility."""

    linux: str | None
    windows: str | None
    below: str | None  # drivers of this major stop before this branch (informational)
    confidence: str = "source-file"
    os_confidence: Mapping[str, str] = _EMPTY  # per-OS override ("windows": "inferred")

    def confidence_for(self, os: str) -> str:
        return self.os_confidence.get(os, self.confidence)

    def for_os(self, os: str) -> str | None:
        return self.windows if os == "windows" else self.linux


class GpuDriverFloor(Record):
    """Oldest NVIDIA driver that drives a GPU generation at all (whatever the CUDA build)."""

    driver: str
    arch: str  # "Blackwell"
    confidence: str = "secondary"


class GpuDriverLast(Record):
    """Newest NVIDIA driver branch that still drives the GPU generations up to a compute capability."""

    up_to_sm: int  # CC×10 of the newest GPU of those generations
    driver: str  # "470": the branch
    arch: str  # "Kepler"
    confidence: str = "secondary"


class Matrix(Record):
    """All releases (newest first) and the global rule data (driver floors, gfx aliases, XPU families).

    Immutable: ``matrix._replace(...)`` returns a changed copy. ``provenance`` is None for the embedded data;
    a matrix learnt from a live index holds there, per "version+variant" ("" for the whole index), the lines
    saying what was assumed."""

    releases: tuple[Release, ...]
    cuda_families: Mapping[str, DriverFloor] = _EMPTY  # "12" -> floor
    gpu_driver_floor: Mapping[str, GpuDriverFloor] = _EMPTY  # compute capability ("8.9") or its major ("12") -> floor
    gpu_driver_last: tuple[GpuDriverLast, ...] = ()  # oldest generations first
    gfx_aliases: Mapping[str, tuple[str, ...]] = _EMPTY  # "gfx1031" -> ("gfx1030",)
    gfx_aliases_confidence: str = "secondary"
    rocm_platforms: tuple[str, ...] = ("linux_x86_64",)
    jetson: Mapping[str, str] = _EMPTY
    index_base: str = DEFAULT_INDEX_BASE
    channels: Mapping[str, str] = _EMPTY  # stable -> "", test -> "test", nightly -> "nightly"
    pre_release_channels: tuple[str, ...] = ("nightly",)
    unlabelled_companions: Mapping[str, str] = _EMPTY  # "torchvision" -> first version without a variant label
    decoupled_companions: Mapping[str, Mapping[str, DecoupledCompanion]] = _EMPTY  # "torchaudio" -> {"2.11.0": …}
    platform_notes: Mapping[str, str] = _EMPTY  # "windows_arm64" / "windows_x86_64:amd" -> what to tell the user
    provenance: Mapping[str, tuple[str, ...]] | None = None
    packages: Mapping[str, Package] = _EMPTY  # packages built against one torch (companions.load_packages)
    vendor_builds: VendorBuilds | None = None  # builds on vendors' own indexes; None: the embedded table
    earlier: tuple[str, ...] = ()  # the releases before the oldest (versions only, newest first): planned assumed

    # -- releases ---------------------------------------------------------------------------------------
    def release(self, version: str) -> Release:
        """The release "2.9.1" (a local label like "+cu128" is ignored). KeyError names unknown versions."""
        public, _ = split_label(version)
        for release in self.releases:  # a few dozen releases: a scan costs less than keeping an index
            if release.version == public:
                return release
        raise KeyError(f"torch {public} is not in the compatibility matrix")

    def has_release(self, version: str) -> bool:
        public = split_label(version)[0]
        return any(r.version == public for r in self.releases)

    def cuda_arch(self, version: str, platform: str, variant: str | None = None) -> CudaArch | None:
        """Arch list of "2.9.1+cu128" (or version "2.9.1", variant "cu128") on a platform."""
        public, label = split_label(version)
        return self.release(public).cuda_arch(variant or label or "", platform)

    def arch_targets(self, version: str, variant: str | None = None) -> ArchTargets | None:
        """The compiled architectures (gfx targets) of "2.8.0+rocm6.4" (or version + variant)."""
        public, label = split_label(version)
        return self.release(public).arch_targets(variant or label or "")

    def companion_versions(self, name: str, release: Release) -> tuple[str, ...]:
        """The companion versions that go with ``release``: its own match first, then (newest first) each
        decoupled release of the companion (one that pins no one torch) published for it or before it."""
        own = release.companions.get(name)
        others = sorted((v for v, facts in self.decoupled_companions.get(name, {}).items()
                         if v != own and version_key(release.version) >= version_key(facts.torch_from)),
                        key=version_key, reverse=True)
        return (*((own,) if own else ()), *others)

    def knows_companion(self, name: str, spec: Any) -> bool:
        """Whether a companion version of the table (a release's own match or a decoupled release) is one
        ``spec`` (a SpecifierSet, AnyVersion or ExactRelease) allows; where none is, the version asked for is
        outside what the table knows of ``name``."""
        known = {r.companions.get(name) for r in self.releases} | set(self.decoupled_companions.get(name, {}))
        return any(v and spec.contains(v, prereleases=True) for v in known)

    def companion_labelled(self, name: str, version: str) -> bool:
        """Whether a companion build carries the variant's local label (stable-ABI builds have none)."""
        first = self.unlabelled_companions.get(name)
        return first is None or version_key(version) < version_key(first)

    # -- NVIDIA driver rules ----------------------------------------------------------------------------
    def cuda_family(self, variant: str) -> DriverFloor | None:
        cv = cuda_version(variant)
        return self.cuda_families.get(str(cv[0])) if cv else None

    def cuda_floor(self, variant: str, os: str) -> str | None:
        """Minimum driver that runs ``variant`` (minor-version compatibility of its CUDA major) on an OS
        ("linux"/"windows"). Variants unknown to the data inherit the floor of their major."""
        fam = self.cuda_family(variant)
        return fam.for_os(os) if fam else None

    def cuda_full_driver(self, variant: str, os: str) -> str | None:
        """Driver of the variant's toolkit GA (from the CUDA toolkit driver table): at or above it every CUDA
        feature works natively."""
        cv = cuda_version(variant)
        found = toolkit_ga_driver(cv[0], cv[1], os) if cv else None
        return found[0] if found else None

    def gpu_driver_floor_for(self, sm: int | None) -> GpuDriverFloor | None:
        """Oldest driver that drives a GPU of this compute capability (×10) at all: the row of that capability,
        else of the nearest lower one of the same major ("8.6" for 8.7), else of its major ("10" for 10.3)."""
        if sm is None:
            return None
        major, minor = divmod(sm, 10)
        for step in range(minor, -1, -1):
            if (found := self.gpu_driver_floor.get(f"{major}.{step}")) is not None:
                return found
        return self.gpu_driver_floor.get(str(major))

    def gpu_driver_last_for(self, sm: int | None) -> GpuDriverLast | None:
        """The newest driver branch that still drives a GPU of this compute capability (×10), or None (every
        current branch does)."""
        return next((row for row in self.gpu_driver_last if sm is not None and sm <= row.up_to_sm), None)

    # -- extension ----------------------------------------------------------------------------------------
    def with_release(self, release: Release) -> Matrix:
        """A new Matrix with ``release`` added (or replacing the release of the same version)."""
        kept = [r for r in self.releases if r.version != release.version] + [release]
        kept.sort(key=lambda r: version_key(r.version), reverse=True)
        return self._replace(releases=tuple(kept))

    def with_assumed_release(self, version: str, variant: str | None = None) -> Matrix:
        """A new Matrix holding release ``version``, older than the data's oldest or newer than its newest, with the
        facts of the nearest release it has, labelled ``assumed``: its builds (for an older one, only the CPU build
        and the build the default index's wheel is, which older releases had too), their CUDA and ROCm
        architectures; its Pythons, C library and macOS floors and its torchvision/torchaudio not known (so not
        checked: the installer finds the companions that go with it). ``variant``: the build a pin's local label
        names, listed wherever the nearest release has wheels."""
        older = version_key(version) < version_key(self.releases[-1].version)
        nearest = self.releases[-1] if older else self.releases[0]
        lists: dict[str, tuple[str, ...]] = {}
        for platform, variants in nearest.variant_lists.items():
            kept = [v for v in variants if not older or v in ("cpu", "default", nearest.pypi.get(platform))]
            lists[platform] = tuple(kept)
        cuda = {platform: MappingProxyType({v: arch._replace(confidence=ASSUMED, note=f"as torch {nearest.version}'s")
                                            for v, arch in by_variant.items() if v in lists.get(platform, ())})
                for platform, by_variant in nearest.cuda.items()}
        kept_all = {v for variants in lists.values() for v in variants}
        release = Release(
            version=version, confidence=ASSUMED, variants_confidence=ASSUMED,
            variant_lists=MappingProxyType(lists), cuda=MappingProxyType(cuda),
            targets=MappingProxyType({v: t._replace(confidence=ASSUMED) for v, t in nearest.targets.items()}),
            xpu=nearest.xpu._replace(confidence=ASSUMED) if nearest.xpu and "xpu" in kept_all else None,
            pypi=MappingProxyType({p: v for p, v in nearest.pypi.items() if v in lists.get(p, ())}),
            stable_cuda=nearest.stable_cuda if nearest.stable_cuda in kept_all else None,
            mps_macos=(nearest.mps_macos[0], ASSUMED) if nearest.mps_macos else None)
        kind = variant_kind(variant) if variant else None
        for platform in lists:  # where the nearest release has builds of the pin's kind
            if variant and any(variant_kind(v) == kind for v in nearest.variant_lists.get(platform, ())):
                release = release.with_variant(platform, variant)
        return self.with_release(release)

    def with_variant(self, version: str, platform: str, variant: str, **kwargs: Any) -> Matrix:
        """A new Matrix where release ``version`` lists ``variant`` on ``platform``; see Release.with_variant.
        An unknown release is created (confidence ``assumed``) with only that variant."""
        if self.has_release(version):
            base = self.release(version)
        else:
            base = Release(version=split_label(version)[0], confidence=ASSUMED, variants_confidence=ASSUMED)
        return self.with_release(base.with_variant(platform, variant, **kwargs))


def _freeze_release(d: dict[str, Any]) -> Release:
    xpu = d.get("xpu")
    return Release(
        version=d["v"],
        date=d.get("date"),
        requires_python=d.get("requires_python"),
        python=MappingProxyType({p: tuple(v) for p, v in d.get("python", {}).items()}),
        glibc=MappingProxyType(d.get("glibc", {})),
        macos=MappingProxyType(d.get("macos", {})),
        variant_lists=MappingProxyType({p: tuple(v) for p, v in d.get("variants", {}).items()}),
        variants_confidence=d.get("variants_conf", "unverified"),
        secondary=tuple(d.get("secondary", ())),
        pypi=MappingProxyType(d.get("pypi", {})),
        stable_cuda=d.get("stable_cuda"),
        cuda=MappingProxyType({
            p: MappingProxyType({v: CudaArch(tuple(a["sm"]), tuple(a.get("ptx", ())), a.get("conf", "unverified"),
                                             a.get("note")) for v, a in vs.items()})
            for p, vs in d.get("cuda", {}).items()}),
        targets=MappingProxyType({
            **{v: ArchTargets(tuple(r["gfx"]) if r.get("gfx") else None, r.get("conf", "unverified"))
               for v, r in d.get("rocm", {}).items()},
            **{v: ArchTargets(tuple(r["arches"]) if r.get("arches") else None, r.get("conf", "unverified"))
               for v, r in d.get("targets", {}).items()}}),
        xpu=XpuSupport(MappingProxyType({o: tuple(xpu.get(o, ())) for o in ("linux", "windows")}),
                       xpu.get("conf", "unverified")) if xpu else None,
        companions=MappingProxyType(d.get("companions", {})),
        macos_python=MappingProxyType({p: MappingProxyType(v) for p, v in d.get("macos_python", {}).items()}),
        mps_macos=(d["mps"]["macos"], d["mps"].get("conf", "unverified")) if d.get("mps") else None,
        companion_gaps=MappingProxyType({c: MappingProxyType({p: tuple(v) for p, v in by.items()})
                                         for c, by in d.get("companion_gaps", {}).items()}),
        companion_macos=MappingProxyType({c: MappingProxyType({p: MappingProxyType(v) for p, v in by.items()})
                                          for c, by in d.get("companion_macos", {}).items()}),
        companion_python=MappingProxyType({c: tuple(v) for c, v in d.get("companion_python", {}).items()}),
    )


def _decoupled(row: Mapping[str, Any]) -> DecoupledCompanion:
    return DecoupledCompanion(
        torch_from=row["torch_from"],
        python=MappingProxyType({p: tuple(v) for p, v in row.get("python", {}).items()}),
        requires_python=row.get("requires_python"),
        macos=MappingProxyType({p: MappingProxyType(v) for p, v in row.get("macos", {}).items()}),
        variants=MappingProxyType({p: tuple(v) for p, v in row.get("variants", {}).items()}),
        confidence=row.get("conf", "verified"), variants_confidence=row.get("variants_conf", "unverified"))


def matrix_from_dict(data: Mapping[str, Any]) -> Matrix:
    """Build a Matrix from the JSON form of data/torch-matrix.json."""
    cuda = data.get("cuda", {})
    families = {
        major: DriverFloor(f["floor"].get("linux"), f["floor"].get("windows"), f.get("below"), f.get("conf", ""),
                           MappingProxyType(f.get("floor_conf", {})))
        for major, f in cuda.get("families", {}).items()
    }
    return Matrix(
        releases=tuple(_freeze_release(r) for r in data["releases"]),
        cuda_families=MappingProxyType(families),
        gpu_driver_floor=MappingProxyType({major: GpuDriverFloor(f["driver"], f["arch"], f.get("conf", "secondary"))
                                           for major, f in cuda.get("gpu_driver_floor", {}).items()}),
        gpu_driver_last=tuple(GpuDriverLast(row["up_to_sm"], row["driver"], row["arch"], row.get("conf", "secondary"))
                              for row in sorted(cuda.get("gpu_driver_last", ()), key=lambda row: row["up_to_sm"])),
        gfx_aliases=MappingProxyType({k: tuple(v) for k, v in data.get("rocm", {}).get("aliases", {}).items()}),
        gfx_aliases_confidence=data.get("rocm", {}).get("aliases_conf", "secondary"),
        rocm_platforms=tuple(data.get("rocm", {}).get("platforms", ("linux_x86_64",))),
        jetson=MappingProxyType(data.get("jetson", {})),
        index_base=data.get("index", {}).get("base", DEFAULT_INDEX_BASE),
        channels=MappingProxyType(data.get("index", {}).get("channels", {"stable": "", "test": "test",
                                                                        "nightly": "nightly"})),
        pre_release_channels=tuple(data.get("index", {}).get("pre_release_channels", ("nightly",))),
        unlabelled_companions=MappingProxyType({name: row["unlabelled_from"] for name, row in
                                                data.get("companion_labels", {}).items()}),
        platform_notes=MappingProxyType(data.get("platform_notes", {})),
        earlier=tuple(data.get("earlier", ())),
        decoupled_companions=MappingProxyType({name: MappingProxyType({v: _decoupled(row) for v, row in rows.items()})
                                               for name, rows in data.get("decoupled_companions", {}).items()}),
    )


@lru_cache(maxsize=1)
def load_matrix() -> Matrix:
    """The embedded matrix (read once per process)."""
    return matrix_from_dict(load_json("resolver/data/torch-matrix.json"))
