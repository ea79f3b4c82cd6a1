"""Each vendor's own steps and warnings in the search: the hooks a registry row names (``plan_rules``), so the
search itself dispatches by no vendor's name.

``VendorRules`` is what a vendor without rules of its own gets: its architecture, when unknown, is said to be
unchecked, and nothing more. ``CudaRules`` (NVIDIA), ``RocmRules`` (AMD) and ``XpuRules`` (Intel) add their
driver, override and device-family rules. Each hook writes to the search's plan (``search.plan``); those that
can decide return a Plan, the others return nothing.
"""

from __future__ import annotations

import itertools

from ..drivers import rocm_for_amdgpu_driver
from ..machine import DRIVER_FROM_CUDA_VERSION, Gpu
from ..versions import numeric_key
from .matrix import CudaArch, Release, version_key
from .plan import Need, Plan
from .rules import (
    ROCM_DRIVER_WINDOW,
    WEAK_CONFIDENCE,
    VendorPolicy,
    Walk,
    cubin_or_ptx,
    driver_beyond_last,
    driver_need,
    family_candidates,
    hsa_override,
    possible_capabilities,
    rocm_distance,
    sm_text,
)
from .variants import cuda_version, rocm_version
from .vendor_indexes import declined_text, vendor_build_plan

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from .search_state import Search


class VendorRules:
    """The rules every vendor's builds follow; a vendor's class adds its own."""

    def __init__(self, policy: VendorPolicy) -> None:
        self.policy = policy
        self.row = policy.row

    def unlisted_gpu(self, search: Search) -> Gpu | None:
        """A GPU of this vendor the machine has although its profile lists none (its driver alone), or None."""
        return None

    def before(self, search: Search, releases: list[Release], gpus: list[Gpu]) -> Plan | None:
        """Before the walk: the vendor's own conditions (a Plan when one decides), and GPUs of unknown
        architecture (not checked against the builds' lists)."""
        unknown = [g for g in gpus if not getattr(g, self.row.arch_field)]
        if unknown:
            search.plan.warn("gpu-arch-unknown", f"{self.row.arch_word} unknown for "
                             f"{', '.join(g.label_with_arch for g in unknown)}: not checked against the builds' "
                             f"{self.row.list_word}s")
        return None

    def accept(self, search: Search, found: Walk, gpus: list[Gpu]) -> Walk:
        """The walk's result as the vendor takes it (a build it would not trust is dropped)."""
        return found

    def chosen(self, search: Search, found: Walk) -> None:
        """Notes on the chosen build."""

    def unequal(self, search: Search, found: Walk, gpus: list[Gpu]) -> None:
        """A build that runs on every GPU, but on some of them less well."""

    def keep_both(self, search: Search, unserved: list[Gpu]) -> str:
        """More advice for GPUs the chosen build cannot use, after "hide it with …" (or "")."""
        return ""

    def after(self, search: Search, releases: list[Release], found: Walk, gpus: list[Gpu],
              used: list[Gpu]) -> None:
        """The vendor's warnings about the chosen GPU build ``found`` for the ``used`` GPUs."""

    def without_build(self, search: Search, releases: list[Release], found: Walk, gpus: list[Gpu]
                      ) -> Plan | None:
        """No build of the vendor's runs: a plan of the vendor's own, or None for the common CPU plan."""
        return None

    def no_driver_helps(self) -> str | None:
        """What to add when no build of a pinned release runs on the GPU and no driver would change that."""
        return None

    def declined(self, search: Search, gpus: list[Gpu]) -> None:
        """No matching release installs here at all: what else the newest one would need for the GPUs."""

    def forced(self, search: Search, releases: list[Release], release: Release, variant: str,
               gpus: list[Gpu]) -> None:
        """A forced variant of this vendor, checked against ``gpus``: the vendor's warnings about it."""

    def forced_checked(self, search: Search, variant: str) -> None:
        """After the forced variant's verdict: what was not checked."""


def older_build(search: Search, policy: VendorPolicy, gpus: list[Gpu], found: Walk, missing: list[int]) -> str:
    """", which torch 2.14.1+cu126 serves": another usable build of the release, else the newest of an older
    matching release, that serves every ``missing`` target ("" when none does)."""
    assert found.release is not None
    older = (r for r in search.matrix.releases
             if version_key(r.version) < version_key(found.release.version) and search.matches(r))
    same = ((found.release, v) for v in found.others)  # the same release's other usable builds first
    earlier = ((r, v) for r in older for v in search.verdicts(r, policy, gpus) if v.usable)
    for release, verdict in itertools.chain(same, earlier):  # lazily: stops at the first that serves them
        if len(serves(release.cuda_arch(verdict.variant, search.platform), missing)) == len(missing):
            return f", which torch {release.version}+{verdict.variant} serves"
    return ""


def serves(arch: CudaArch | None, targets: list[int]) -> list[int]:
    """The compute capabilities of ``targets`` a build with this arch list runs (by cubin or PTX)."""
    return [sm for sm in targets if arch is not None and cubin_or_ptx(arch, sm) is not None]


class CudaRules(VendorRules):
    """NVIDIA: the driver decides which CUDA builds run; PTX runs newer GPUs by just-in-time compilation."""

    def unlisted_gpu(self, search: Search) -> Gpu | None:
        driver = search.machine.nvidia_driver
        if not driver:
            return None
        search.plan.reasons.append(f"NVIDIA driver {driver} present but no GPU listed: choosing for an NVIDIA GPU "
                                   "of unknown model")
        return Gpu("nvidia")

    def before(self, search: Search, releases: list[Release], gpus: list[Gpu]) -> Plan | None:
        source = search.machine.sources.get("nvidia_driver", "")
        if source.startswith(DRIVER_FROM_CUDA_VERSION):
            search.plan.note(f"NVIDIA driver taken as {search.machine.nvidia_driver}, {source}: a newer driver may "
                             "allow newer builds")
        driver = search.machine.nvidia_driver
        stranded = [(g, last) for g in gpus if (last := driver_beyond_last(search.matrix, driver, g.sm))]
        if stranded and len(stranded) == len(gpus) and releases:
            oldest = min((last for _, last in stranded), key=lambda last: int(last.driver))
            names = "; ".join(f"{g.label_with_arch}, as R{last.driver} is the last driver branch for {last.arch}"
                              for g, last in stranded)
            search.plan.warn("driver-too-new", f"driver {driver} no longer drives {names}: no build can use the GPU "
                                               f"with it; a driver of branch R{oldest.driver} or older would")
            search.plan.why_not = f"driver {driver} no longer drives the GPU"
            search.plan.reasons.append(f"driver {driver} drives none of the GPUs: CPU build from the cpu index")
            return search.cpu(releases[0])
        return super().before(search, releases, gpus)

    def accept(self, search: Search, found: Walk, gpus: list[Gpu]) -> Walk:
        """A GPU of unknown compute capability: of the chosen release's usable variants, the one whose arch list
        serves the most of the generations the driver can drive (not silently the narrowest); a note says what
        the choice rests on and how to settle it."""
        unknown = [g for g in gpus if g.sm is None]
        if not unknown or found.verdict is None or found.release is None:
            return found
        release, platform = found.release, search.platform
        possible = possible_capabilities(search.matrix, search.machine.nvidia_driver, platform)
        if not possible:
            return found

        chosen = found.verdict
        served = {v.variant: serves(release.cuda_arch(v.variant, platform), possible) for v in [chosen, *found.others]}
        best = max([chosen, *found.others], key=lambda v: len(served[v.variant]))  # a tie keeps the chosen
        if len(served[best.variant]) > len(served[chosen.variant]):
            found.others = [chosen, *(o for o in found.others if o is not best)]
            found.verdict = best
        names = ", ".join(g.label_with_arch for g in unknown)
        covers = served[found.verdict.variant]
        missing = [sm for sm in possible if sm not in covers]
        span = f"{sm_text(min(possible))}–{sm_text(max(possible))}"
        driver = search.machine.nvidia_driver
        why = f"driver {driver} drives" if driver else "NVIDIA's builds target"
        text = (f"compute capability of {names} unknown: {why} {span}; {release.version}+{found.verdict.variant} "
                f"serves {len(covers)} of those {len(possible)} targets"
                + (f" (not {', '.join(sm_text(m) for m in missing)}"
                   f"{older_build(search, self.policy, gpus, found, missing)})" if missing else "")
                + (f", more than {chosen.variant}" if found.verdict is not chosen else "")
                + "; state it to settle the choice: compute_capability in the profile or --gpu NAME "
                "('nvidia-smi --query-gpu=compute_cap --format=csv,noheader' prints it)")
        search.plan.note(text)
        return found

    def keep_both(self, search: Search, unserved: list[Gpu]) -> str:
        """Why the driver itself keeps a GPU out: its branch is newer than the last for the GPU's generation."""
        driver = search.machine.nvidia_driver
        stranded = [(g, last) for g in unserved if (last := driver_beyond_last(search.matrix, driver, g.sm))]
        return "".join(f"; driver {driver} no longer drives {g.label_with_arch} (R{last.driver} is the last driver "
                       f"branch for {last.arch})" for g, last in stranded)

    def chosen(self, search: Search, found: Walk) -> None:
        """The driver-native variant stays chosen; when its arch list is only inferred and the release default's
        is verified and also runs here, name the default as the verified alternative."""
        v, r = found.verdict, found.release
        assert v and r
        default = r.default_variant(search.platform)
        if not v.native or not default or v.variant == default:
            return
        chosen_arch, default_arch = r.cuda_arch(v.variant, search.platform), r.cuda_arch(default, search.platform)
        if not (chosen_arch and default_arch and chosen_arch.confidence in WEAK_CONFIDENCE
                and default_arch.confidence not in WEAK_CONFIDENCE):
            return
        if not any(o.variant == default for o in found.others):
            return
        search.plan.note(f"{v.variant} is preferred because the driver runs it natively, but its arch list for torch "
                         f"{r.version} on {search.platform} is {chosen_arch.confidence}; the release default {default} "
                         f"has a {default_arch.confidence} arch list and also runs here: --variant {default}")

    def unequal(self, search: Search, found: Walk, gpus: list[Gpu]) -> None:
        """A build that runs on every NVIDIA GPU, but on some only by just-in-time compilation of PTX."""
        assert found.release and found.verdict
        arch = found.release.cuda_arch(found.verdict.variant, search.platform)
        if arch is None or len({g.sm for g in gpus}) < 2:
            return
        jit = [g for g in gpus if g.sm is not None and (how := cubin_or_ptx(arch, g.sm)) and how[0] == "ptx"]
        if jit and len(jit) < len(gpus):
            search.plan.warn("mixed-gpus", f"torch {found.release.version}+{found.verdict.variant} runs "
                                           f"{', '.join(g.label_with_arch for g in jit)} only by just-in-time "
                                           "compilation of PTX (a slow first start, and no kernels tuned for it); "
                                           "the other GPUs run compiled kernels")

    def after(self, search: Search, releases: list[Release], found: Walk, gpus: list[Gpu],
              used: list[Gpu]) -> None:
        self.jetson_kernels(search, found, used)
        if search.machine.nvidia_driver:
            return
        v, r = found.verdict, found.release
        assert v and r
        floor = search.matrix.cuda_floor(v.variant, search.os)
        chosen_major = (cuda_version(v.variant) or (0, 0))[0]
        message = (f"NVIDIA driver version unknown: chose {v.variant}, the default of torch {r.version}, "
                   f"which needs driver ≥ {floor}")
        for release in releases:
            older = [x for x in self.policy.variants(release, search.platform)
                     if (cuda_version(x) or (99, 0))[0] < chosen_major]
            usable = [x for x in older if self.policy.check(search.matrix, release, x, search.platform, tuple(gpus),
                                                            search.machine).usable]
            if usable:
                alt = max(usable, key=lambda x: cuda_version(x) or (0, 0))
                message += (f"; with an older driver use torch {release.version}+{alt} "
                            f"(needs ≥ {search.matrix.cuda_floor(alt, search.os)})")
                break
        search.plan.warn("driver-unknown", message)

    def jetson_kernels(self, search: Search, found: Walk, used: list[Gpu]) -> None:
        """A Jetson GPU the chosen build serves only by the kernels of a lower minor (Orin's sm_87 by sm_80): on a
        Jetson that is not established (conda-forge's aarch64 CUDA 13 build failed on AGX Orin with only 8.0 and
        8.6 kernels, until it added 8.7), so it is said, not assumed."""
        v, r = found.verdict, found.release
        assert v and r
        arch = r.cuda_arch(v.variant, search.platform)
        if arch is None:
            return
        for gpu in used:
            if gpu.sm is None or not (gpu.family or "").startswith("jetson-"):
                continue
            how = cubin_or_ptx(arch, gpu.sm)
            if how and how[0] == "cubin" and how[1] != gpu.sm:
                search.plan.warn("gpu-arch-unknown", f"{gpu.label_with_arch} gets the {sm_text(how[1])} kernels of "
                                 f"torch {r.version}+{v.variant}, which lists no {sm_text(gpu.sm)}: that they run on "
                                 "a Jetson is not established (conda-forge's aarch64 CUDA 13 build failed on AGX Orin "
                                 "with only sm_80 and sm_86 kernels, until it added 8.7); inferred")

    def no_driver_helps(self) -> str | None:
        return "no driver upgrade helps: the builds have no kernels for this GPU"

    def declined(self, search: Search, gpus: list[Gpu]) -> None:
        """Whether the NVIDIA driver is below every build of the newest matching release that has kernels for
        ``gpus`` (a second reason, named on its own)."""
        driver = search.machine.nvidia_driver
        if not driver or "driver-too-old" in (w.code for w in search.plan.warnings):  # the newest's already said
            return
        found = search.newest_with_code(self.policy, gpus)
        if found is None or not all(v.driver_needed for v in found[1]):
            return
        release, with_kernels = found
        need = min((v.driver_needed or "" for v in with_kernels), key=numeric_key)
        labels = ", ".join(g.label_with_arch for g in gpus)
        search.plan.warn("driver-too-old", f"driver {driver} is below every CUDA build of torch {release.version} "
                                           f"with kernels for {labels} (needs ≥ {need})", "newest")
        if release is search.plan.newest:
            search.plan.need(driver_need(driver, need))

    def forced_checked(self, search: Search, variant: str) -> None:
        if not search.machine.nvidia_driver:
            search.plan.warn("driver-unknown", f"NVIDIA driver version unknown: {variant} needs driver ≥ "
                                               f"{search.matrix.cuda_floor(variant, search.os)}")


class RocmRules(VendorRules):
    """AMD: ROCm wheels for some platforms only; gfx aliases run with an override; the kernel driver's window."""

    def before(self, search: Search, releases: list[Release], gpus: list[Gpu]) -> Plan | None:
        plan, matrix, platform = search.plan, search.matrix, search.platform
        if platform not in matrix.rocm_platforms:
            plan.why_not = (f"has no ROCm build for {platform} (PyTorch publishes them for "
                            f"{', '.join(matrix.rocm_platforms)} only)")
            newest = ("no-gpu-variant-for-version", f"torch {plan.newest.version} has no ROCm build for {platform} "
                      "on the PyTorch index") if plan.newest else None
            found = vendor_build_plan(search, self.row, gpus, f"PyTorch publishes no ROCm wheels for {platform}: "
                                      f"{self.row.brand}'s own build", newest)
            if not isinstance(found, str):
                return found
            note = matrix.platform_notes.get(f"{platform}:amd")
            if "no code for" in found:  # the vendor's builds exist here, but not for this GPU
                note = (f"PyTorch publishes no ROCm wheels for {platform}, and {found}: CPU build chosen; "
                        + declined_text(search, self.row))
            plan.warn("platform-unsupported", note or f"PyTorch publishes ROCm wheels only for "
                                                      f"{', '.join(matrix.rocm_platforms)}: CPU build chosen")
            return search.cpu(releases[0])
        if search.machine.wsl and not search.machine.rocm:
            plan.warn("platform-unsupported", matrix.platform_notes["wsl:amd"])
            if plan.newest is not None and self.policy.variants(plan.newest, platform):
                plan.need(Need("rocm", None, "ROCm for WSL", "AMD's ROCm for WSL, whose runtime replaces the wheel's"))
            else:
                plan.why_not = f"has no ROCm build for {platform}"
            return search.cpu(releases[0])
        if search.request.vendor_build:
            found = vendor_build_plan(search, self.row, gpus, f"{self.row.brand}'s own build was asked for "
                                      "(--vendor-build)")
            if not isinstance(found, str):
                return found
            plan.note(f"--vendor-build: {found}; PyTorch's own build is chosen")
        return super().before(search, releases, gpus)

    def without_build(self, search: Search, releases: list[Release], found: Walk, gpus: list[Gpu]
                      ) -> Plan | None:
        """No ROCm build of the PyTorch index has code for the GPUs: the vendor's own build, where one has."""
        labels = ", ".join(g.label_with_arch for g in gpus)
        newest = search.plan.newest
        why_not = search.plan.why_not
        search.plan.why_not = why_not or f"has no kernels for {labels}"
        words = (("gpu-arch-unsupported", f"torch {newest.version} has no ROCm build on the PyTorch index with code "
                  f"for {labels}") if newest else None)
        vendor = vendor_build_plan(search, self.row, gpus, f"no ROCm build on the PyTorch index has code for {labels}: "
                                   f"{self.row.brand}'s own build", words)
        if isinstance(vendor, str):
            search.plan.why_not = why_not
            return None
        return vendor

    def keep_both(self, search: Search, unserved: list[Gpu]) -> str:
        aliased = [g for g in unserved if g.gfx and search.matrix.gfx_aliases.get(g.gfx)]
        if not aliased:
            return ""
        target = search.matrix.gfx_aliases[aliased[0].gfx or ""][0]
        return (f"; or keep both with a per-device override for {aliased[0].gfx} only: "
                f"HSA_OVERRIDE_GFX_VERSION_<KFD node>={hsa_override(target)} (libhsakmt reads "
                "HSA_OVERRIDE_GFX_VERSION_<node> before the global one; node numbers as in "
                "/sys/class/kfd/kfd/topology/nodes, CPU nodes first)")

    def after(self, search: Search, releases: list[Release], found: Walk, gpus: list[Gpu],
              used: list[Gpu]) -> None:
        release, verdict = found.release, found.verdict
        assert release and verdict
        if verdict.env:
            override = verdict.env["HSA_OVERRIDE_GFX_VERSION"]
            targets = release.arch_targets(verdict.variant)
            built = targets.arches or () if targets else ()
            needing = sorted({g.gfx or "" for g in used if g.gfx and g.gfx not in built})
            search.plan.warn("rocm-override-needed",
                             f"{', '.join(needing)} is not built into {release.version}+{verdict.variant}: set "
                             f"HSA_OVERRIDE_GFX_VERSION={override} to run the code of the nearest built target")
        if search.machine.wsl:
            search.plan.warn("platform-unsupported", search.matrix.platform_notes["wsl:amd-rocm"])
        self.driver_window(search, releases, release, verdict.variant, used)
        if not (search.machine.rocm or search.machine.amdgpu_driver):
            search.plan.warn("driver-unknown", "amdgpu kernel driver and ROCm versions unknown: the ROCm build brings "
                                               "its own user space, but whether the kernel driver is within "
                                               f"±{ROCM_DRIVER_WINDOW} ROCm releases of it was not checked")

    def forced(self, search: Search, releases: list[Release], release: Release, variant: str,
               gpus: list[Gpu]) -> None:
        self.driver_window(search, releases, release, variant, gpus)

    def driver_window(self, search: Search, releases: list[Release], release: Release, variant: str,
                      gpus: list[Gpu]) -> None:
        """Warn when the chosen ROCm variant is more than ROCM_DRIVER_WINDOW ROCm releases from the machine's
        ROCm (the wheel brings its user space; the host's amdgpu kernel driver stays), naming the newest
        matching torch whose ROCm variant is inside the window. The choice itself is kept."""
        host, what = self.rocm_reference(search)
        distance = rocm_distance(search.matrix, host, variant) if host else None
        if distance is None or distance <= ROCM_DRIVER_WINDOW:
            return
        inside: tuple[Release, str] | None = None
        for r in releases:
            near = [v.variant for v in search.verdicts(r, self.policy, gpus)
                    if (rocm_distance(search.matrix, host or "", v.variant) or 0) <= ROCM_DRIVER_WINDOW and v.usable]
            if near:
                inside = (r, max(near, key=lambda v: rocm_version(v) or ()))
                break
        message = (f"{what} is {distance} ROCm releases from "
                   f"{release.version}+{variant}: the wheel brings its own ROCm user space, but AMD tests the amdgpu "
                   f"kernel driver only with user space within ±{ROCM_DRIVER_WINDOW} releases, so this pairing is "
                   "untested; ")
        if inside:
            message += (f"the newest torch whose ROCm variant is inside the window is {inside[0].version} "
                        f"(torch=={inside[0].version} --variant {inside[1]}), or update the amdgpu driver")
        else:
            message += "no matching torch release has a ROCm variant inside the window: update the amdgpu driver"
        search.plan.warn("rocm-driver-window", message)

    def rocm_reference(self, search: Search) -> tuple[str | None, str]:
        """The ROCm release the window is counted from, and its name for messages: the release the amdgpu kernel
        driver ships with when the driver table knows it (the ±2 rule is about the kernel driver), else the
        ROCm user space."""
        m = search.machine
        if m.amdgpu_driver:
            kernel = rocm_for_amdgpu_driver(m.amdgpu_driver)
            source = m.sources.get("amdgpu_driver")
            if kernel:
                return kernel.rocm, (f"amdgpu kernel driver {m.amdgpu_driver}{f' ({source})' if source else ''}, "
                                     f"which ships with ROCm {kernel.rocm} ({kernel.confidence}),")
            search.plan.note(f"amdgpu kernel driver {m.amdgpu_driver}: the ROCm release it ships with is not in the "
                             "driver table, so the ROCm kernel-driver window is counted from the ROCm user space"
                             + ("" if m.rocm else " (unknown here: not checked)"))
        source = m.sources.get("rocm")
        return m.rocm, f"ROCm user space {m.rocm} on this machine{f' ({source})' if source else ''}"


class XpuRules(VendorRules):
    """Intel: XPU builds name the device families they build for; an unidentified integrated GPU is not trusted."""

    def before(self, search: Search, releases: list[Release], gpus: list[Gpu]) -> Plan | None:
        return None  # an unknown family is said after the walk, only of the GPUs a chosen build would use

    def accept(self, search: Search, found: Walk, gpus: list[Gpu]) -> Walk:
        if found.verdict and all(g.integrated for g in gpus) and any(not g.family for g in found.verdict.unknown_arch):
            return Walk(per_release=found.per_release)  # an unidentified iGPU is not taken for an XPU device
        return found

    def after(self, search: Search, releases: list[Release], found: Walk, gpus: list[Gpu],
              used: list[Gpu]) -> None:
        release, verdict = found.release, found.verdict
        assert release and verdict
        unknown = [g for g in verdict.unknown_arch if not g.family]
        shared = [g for g in verdict.unknown_arch if g.family]  # a name several chip families share
        if unknown:
            search.plan.warn("gpu-arch-unknown", "Intel GPU family unknown for "
                             + ", ".join(g.label_with_arch for g in unknown) + ": xpu chosen without checking its "
                             "device list")
        built = set(release.xpu.families.get(search.os, ())) if release.xpu else set()
        for g in shared:
            families = family_candidates(g.family or "")
            has = ", ".join(f for f in families if f in built)
            lacks = ", ".join(f for f in families if f not in built)
            search.plan.warn("gpu-arch-unknown", f"{g.label} is the name of several chips ({', '.join(families)}), "
                             f"and torch {release.version}+xpu builds for {has}, not {lacks}: the PCI id "
                             "(vendor:device, as detection reads it) tells which this is")
        if not any(g.driver for g in gpus):
            search.plan.warn("driver-unknown", "Intel GPU kernel driver unknown: the xpu build needs the i915 or xe "
                                               "driver and Intel's GPU compute runtime (Level Zero)")

    def without_build(self, search: Search, releases: list[Release], found: Walk, gpus: list[Gpu]
                      ) -> Plan | None:
        if not all(g.integrated for g in gpus):
            return None
        search.plan.warn("integrated-gpu-only", "the only GPU is an integrated "
                         + ", ".join(g.label_with_arch for g in gpus)
                         + ", which PyTorch's XPU builds do not support: CPU build chosen")
        search.plan.gpu_wanted = False  # no GPU of this machine is one the builds use
        return search.cpu(releases[0])
