"""``resolve(machine, request, matrix) -> Plan``: choose the torch release and wheel variant for a machine.

Pure: reads only its arguments. Order of decisions:

1. Parse the request (pip-style requirements for torch/torchvision/torchaudio, variant, channel, index base).
2. Platform gates: OS/arch with wheels, musl, Jetson (L4T), Intel Macs; per release Python (incl.
   free-threaded), glibc (manylinux tag) and macOS minimum.
3. Vendor rules (rules.py) on the visible GPUs (integrated ones ignored when a discrete one exists):
   the newest release matching the request that has a usable GPU variant wins over a newer CPU-only one;
   within a release NVIDIA prefers a driver-native variant, then the release default, then the newest CUDA.
4. Otherwise the ``cpu`` index (never the default index's CUDA wheel), with warnings that say why and what
   would help (driver upgrade, nearest release that uses the GPU, ``CUDA_VISIBLE_DEVICES``).
"""

from collections.abc import Sequence

from ..drivers import rocm_for_amdgpu_driver
from ..errors import InputError
from ..machine import Gpu, Machine
from ..versions import numeric_key
from .matrix import Matrix, Release, version_key
from .plan import Choice, Plan, PlanWarning, Rejection, Request, check_code
from .request import parse_request
from .rules import (
    POLICY_OF_KIND,
    ROCM_DRIVER_WINDOW,
    VENDOR_POLICIES,
    WEAK_CONFIDENCE,
    VendorPolicy,
    Verdict,
    check_rocm,
    glibc_gate,
    macos_gate,
    python_gate,
    rocm_distance,
)
from .variants import cuda_version, rocm_version, variant_kind


class _Search:
    """What walking releases for one GPU set found."""

    __slots__ = ("release", "verdict", "others", "per_release")

    def __init__(self, per_release: list[tuple[Release, list[Verdict]]] | None = None) -> None:
        self.release: Release | None = None
        self.verdict: Verdict | None = None
        self.others: list[Verdict] = []  # usable variants of the chosen release, not chosen
        self.per_release: list[tuple[Release, list[Verdict]]] = [] if per_release is None else per_release


class _Resolver:
    def __init__(self, machine: Machine, request: Request, matrix: Matrix) -> None:
        self.machine, self.request, self.matrix = machine, request, matrix
        self.req = parse_request(request)
        self.platform = machine.platform or ""
        self.os = machine.os or ""
        self.warnings: list[PlanWarning] = []
        self.reasons: list[str] = []
        self.notes: list[str] = []
        self.rejected: list[Rejection] = []
        self.env: dict[str, str] = {}

    # -- plumbing -----------------------------------------------------------------------------------------
    def warn(self, code: str, message: str) -> None:
        """Add a warning (once); its code must be one of the plan's warning codes."""
        check_code(code)
        if not any(w.code == code and w.message == message for w in self.warnings):
            self.warnings.append(PlanWarning(code, message))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def plan(self, release: Release | None, variant: str | None, gpu: bool) -> Plan:
        choice = self.choice(release, variant) if release and variant else None
        if choice and release and variant:
            self.reasons.insert(0, f"torch {release.version}, variant {variant}"
                                + (f" from {choice.index_url}" if choice.index_url else " from the default index"))
            self.note_existence(release, variant)
            if self.request.channel != "stable":
                self.note(f"{self.request.channel} channel: versions are not in the matrix; the variant follows the "
                          f"rules of torch {release.version} and the installer picks the newest build")
        for key, value in self.env.items():
            self.reasons.append(f"set {key}={value} before importing torch")
        return Plan(machine=self.machine, request=self.request, choice=choice, gpu_accelerated=bool(choice and gpu),
                    reasons=tuple(self.reasons), warnings=tuple(self.warnings), rejected=tuple(self.rejected),
                    notes=tuple(self.notes))

    def note_existence(self, release: Release, variant: str) -> None:
        """Say when the chosen wheel's existence (not just its facts) rests on weak data. A live index confirms
        what it lists, and the default index's macOS wheels are read from the default index itself."""
        if variant == "default" or self.matrix.provenance is not None:
            return
        build = f"torch {release.version}+{variant}"
        if variant in release.secondary:
            self.note(f"that {build} wheels exist rests on a secondary or inferred source only, not on PyTorch's "
                      "release matrix: the index may not have them")
        elif release.variants_confidence in ("inferred", "unverified", "assumed"):
            self.note(f"that {build} wheels exist is {release.variants_confidence}: the variant set of torch "
                      f"{release.version} is {release.variants_confidence}")

    def index_url(self, variant: str) -> str | None:
        base = self.request.index_base.rstrip("/")
        channel = self.matrix.channels.get(self.request.channel, self.request.channel)
        if variant == "default":
            if self.request.channel == "stable":
                return None
            variant = "cpu"  # pre-release macOS wheels live on the cpu index of the channel
        return "/".join(p for p in (base, channel, variant) if p)

    def choice(self, release: Release, variant: str) -> Choice:
        stable = self.request.channel == "stable"
        label = "" if variant == "default" else f"+{variant}"
        packages = {"torch": f"{release.version}{label}" if stable else ""}
        for name in self.req.companions:
            version = release.companions.get(name)
            if not stable or not version:
                packages[name] = ""
            else:
                packages[name] = version + (label if label and self.matrix.companion_labelled(name, version) else "")
        return Choice(variant=variant, torch=release.version, index_url=self.index_url(variant), packages=packages)

    # -- releases -----------------------------------------------------------------------------------------
    def matches(self, release: Release) -> bool:
        if self.request.channel != "stable":
            return True
        if not self.req.torch.contains(release.version, prereleases=True):
            return False
        for name, spec in self.req.companions.items():
            version = release.companions.get(name)
            if str(spec) and (not version or not spec.contains(version, prereleases=True)):
                return False
        return True

    def gate(self, release: Release) -> tuple[str, str] | None:
        """(warning code, reason) when the release has no wheel for this platform/Python/libc."""
        if not release.variants(self.platform):
            return "platform-unsupported", f"torch {release.version} has no wheels for {self.platform}"
        if reason := python_gate(release, self.platform, self.machine.python):
            return "python-unsupported", reason
        if reason := glibc_gate(release, self.platform, self.machine):
            return "platform-unsupported", reason
        if reason := macos_gate(release, self.platform, self.machine):
            return "platform-unsupported", reason
        return None

    def candidates(self) -> list[Release]:
        """Releases matching the request whose wheels install here, newest first; gate failures explained."""
        wanted = [r for r in self.matrix.releases if self.matches(r)]
        if not wanted:
            asked = ", ".join(self.request.packages)
            known = f"{self.matrix.releases[-1].version}–{self.matrix.releases[0].version}"
            raise InputError(f"{asked}: no torch release in the compatibility matrix ({known}) matches")
        passing = [r for r in wanted if not self.gate(r)]
        if self.request.channel != "stable":
            passing = passing[:1]
        newer_gated = [r for r in wanted if passing and _newer(r, passing[0])]
        blocked = newer_gated if passing else wanted
        for r in blocked[:1] if passing else blocked[:1]:
            code, reason = self.gate(r)  # type: ignore[misc]
            others = "" if not passing else f"; newest release that installs here: {passing[0].version}"
            self.warn(code, reason + others)
            self.rejected.append(Rejection("any", r.version, reason))
        if not passing:
            anywhere = next((r for r in self.matrix.releases if not self.gate(r)), None)
            if anywhere:
                self.reasons.append(f"newest torch with wheels for this platform and Python: {anywhere.version}")
        return passing

    # -- searching ------------------------------------------------------------------------------------------
    def search(self, releases: Sequence[Release], policy: VendorPolicy, gpus: Sequence[Gpu]) -> _Search:
        """Walk ``releases`` newest first; the first with a usable variant of the vendor's kind for ``gpus`` wins,
        its variants ordered by the vendor's preference."""
        found = _Search()
        devices = tuple(gpus)
        for release in releases:
            verdicts = [policy.check(self.matrix, release, v, self.platform, devices, self.machine)
                        for v in policy.variants(release, self.platform)]
            found.per_release.append((release, verdicts))
            usable = sorted((v for v in verdicts if v.usable), reverse=True,
                            key=lambda v: policy.preference(release, self.platform, v, self.machine))
            if usable:
                found.release, found.verdict, found.others = release, usable[0], usable[1:]
                return found
        return found

    def record(self, found: _Search) -> None:
        """Rejected: the considered variants of the chosen release and of newer releases."""
        for release, verdicts in found.per_release:
            for v in verdicts:
                if not v.usable:
                    self.rejected.append(Rejection(v.variant, release.version, v.reason))
        if found.verdict and found.release:
            for v in found.others:
                self.rejected.append(Rejection(v.variant, found.release.version,
                                               f"{v.variant} usable but {found.verdict.variant} preferred "
                                               f"({_preference(found.verdict, v)})"))

    def explain_newer(self, found: _Search, driver: str | None) -> None:
        """Warn when newer matching releases were passed over for the driver or the GPU architecture."""
        newer = [(r, vs) for r, vs in found.per_release if r is not found.release]
        driver_blocked = [(r, v) for r, vs in newer for v in vs if v.arch_ok and v.driver_needed]
        if driver_blocked:
            r, v = driver_blocked[0]
            need = min((x.driver_needed for rr, x in driver_blocked if rr is r), key=numeric_key)
            message = f"driver {driver} is too old for torch {r.version} (its builds for this GPU need ≥ {need})"
            low_r, low_v = min(driver_blocked, key=lambda rv: numeric_key(rv[1].driver_needed or ""))
            if numeric_key(low_v.driver_needed or "") < numeric_key(need):
                message += f"; ≥ {low_v.driver_needed} would enable torch {low_r.version}+{low_v.variant}"
            self.warn("driver-too-old", message)
        for r, vs in newer:
            if not vs:
                self.reasons.append(f"torch {r.version} has no build for this GPU vendor on {self.platform} "
                                    f"(variant set {r.variants_confidence})")
        arch_blocked = [r for r, vs in newer if vs and not any(v.arch_ok for v in vs)]
        if arch_blocked and not driver_blocked:
            r = arch_blocked[0]
            gpus = {g.label_with_arch for _, vs in newer for v in vs for g in v.unusable_gpus}
            chosen = found.release.version if found.release else "none"
            self.warn("gpu-arch-unsupported", f"torch {r.version} has no kernels for {', '.join(sorted(gpus))}; "
                                              f"newest release that runs on it: {chosen}")

    def apply(self, found: _Search) -> None:
        v = found.verdict
        assert v is not None
        self.reasons.append(v.reason)
        self.env.update(v.env)
        for n in v.notes:
            self.note(n)

    # -- entry ------------------------------------------------------------------------------------------------
    def run(self) -> Plan:
        m = self.machine
        if not m.os or not m.arch:
            raise InputError("machine profile: os and arch are needed to choose a wheel")
        if m.musl:
            self.warn("platform-unsupported", f"musl libc {m.musl}: PyTorch publishes no musllinux wheels; "
                                              "use a glibc-based system or image")
            return self.plan(None, None, False)
        if m.os == "macos":
            return self.apple()
        if not any(r.variants(self.platform) for r in self.matrix.releases):
            self.warn("platform-unsupported", self.matrix.platform_notes.get(
                self.platform, f"no PyTorch wheels for {self.platform} on the PyTorch index"))
            return self.plan(None, None, False)
        if self.jetson():
            return self.jetson_plan()
        releases = self.candidates()
        if not releases:
            return self.plan(None, None, False)
        if self.request.variant:
            return self.forced(releases)
        pool = self.gpu_pool()
        vendors = [g.vendor for g in pool]
        if not pool and self.machine.nvidia_driver:
            self.reasons.append(f"NVIDIA driver {self.machine.nvidia_driver} present but no GPU listed: "
                                "choosing for an NVIDIA GPU of unknown model")
            return self.nvidia(releases, [Gpu("nvidia")])
        for vendor in VENDOR_POLICIES:
            if vendor in vendors:
                return self.vendor_plan(vendor, releases, [g for g in pool if g.vendor == vendor])
        self.reasons.append("no GPU found: CPU build from the cpu index")
        return self.cpu(releases[0])

    def gpu_pool(self) -> list[Gpu]:
        """Visible GPUs that count: integrated ones only when no discrete GPU exists."""
        visible = list(self.machine.visible_gpus)
        discrete = [g for g in visible if g.integrated is not True]
        ignored = [g for g in visible if g.integrated is True] if discrete else []
        if ignored:
            self.reasons.append("integrated GPU ignored: " + ", ".join(g.label_with_arch for g in ignored))
        vendors = sorted({g.vendor for g in (discrete or visible)})
        if len(vendors) > 1:
            self.note(f"GPUs of several vendors ({', '.join(vendors)}): choosing for "
                      f"{next(v for v in (*VENDOR_POLICIES, 'apple') if v in vendors)}")
        return discrete or visible

    def cpu(self, release: Release) -> Plan:
        return self.plan(release, "cpu", False)

    # -- NVIDIA -----------------------------------------------------------------------------------------------
    def vendor_plan(self, vendor: str, releases: list[Release], gpus: list[Gpu]) -> Plan:
        """The plan for the visible GPUs of one vendor."""
        return {"nvidia": self.nvidia, "amd": self.amd, "intel": self.intel}[vendor](releases, gpus)

    def nvidia(self, releases: list[Release], gpus: list[Gpu]) -> Plan:
        driver = self.machine.nvidia_driver
        policy = VENDOR_POLICIES["nvidia"]
        unknown = [g for g in gpus if g.sm is None]
        if unknown:
            names = ", ".join(g.label_with_arch for g in unknown)
            self.warn("gpu-arch-unknown", f"compute capability unknown for {names}: not checked against the builds' "
                      "arch lists")
        found = self.search(releases, policy, gpus)
        mixed: list[Gpu] = []
        if not found.verdict and len({g.sm for g in gpus}) > 1:
            best = max(gpus, key=lambda g: g.sm if g.sm is not None else -1)
            strongest = [g for g in gpus if g.sm == best.sm]
            alone = self.search(releases, policy, strongest)
            if alone.verdict and alone.release:
                mixed = list(policy.check(self.matrix, alone.release, alone.verdict.variant, self.platform,
                                          tuple(gpus), self.machine).unusable_gpus)
                found = alone
        self.record(found)
        if found.verdict and found.release:
            self.apply(found)
            self.note_verified_default(found)
            self.explain_newer(found, driver)
            if mixed:
                self.warn_mixed(found, mixed)
            if not driver:
                self.warn_driver_unknown(found, releases, gpus)
            return self.plan(found.release, found.verdict.variant, True)
        return self.no_gpu_variant(releases, found, "nvidia", gpus)

    def note_verified_default(self, found: _Search) -> None:
        """The driver-native variant stays chosen; when its arch list is only inferred and the release default's
        is verified and also runs here, name the default as the verified alternative."""
        v, r = found.verdict, found.release
        assert v and r
        default = r.default_variant(self.platform)
        if not v.native or not default or v.variant == default:
            return
        chosen_arch, default_arch = r.cuda_arch(v.variant, self.platform), r.cuda_arch(default, self.platform)
        if not (chosen_arch and default_arch and chosen_arch.confidence in WEAK_CONFIDENCE
                and default_arch.confidence not in WEAK_CONFIDENCE):
            return
        if not any(o.variant == default for o in found.others):
            return
        self.note(f"{v.variant} is preferred because the driver runs it natively, but its arch list for torch "
                  f"{r.version} on {self.platform} is {chosen_arch.confidence}; the release default {default} has a "
                  f"{default_arch.confidence} arch list and also runs here: --variant {default}")

    def warn_mixed(self, found: _Search, unusable: list[Gpu]) -> None:
        indices, i = [], 0
        nvidia_visible = [g for g in self.machine.visible_gpus if g.vendor == "nvidia"]
        for g in nvidia_visible:
            for _ in range(g.count):
                if g not in unusable:
                    indices.append(str(i))
                i += 1
        assert found.release and found.verdict
        self.warn("mixed-gpus", f"no build runs on every GPU; torch {found.release.version}+{found.verdict.variant} "
                                f"cannot use {', '.join(g.label_with_arch for g in unusable)}: hide it with "
                                f"CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES={','.join(indices)}")

    def warn_driver_unknown(self, found: _Search, releases: list[Release], gpus: list[Gpu]) -> None:
        v, r = found.verdict, found.release
        assert v and r
        floor = self.matrix.cuda_floor(v.variant, self.os)
        chosen_major = (cuda_version(v.variant) or (0, 0))[0]
        message = (f"NVIDIA driver version unknown: chose {v.variant}, the default of torch {r.version}, "
                   f"which needs driver ≥ {floor}")
        policy = VENDOR_POLICIES["nvidia"]
        for release in releases:
            older = [x for x in policy.variants(release, self.platform)
                     if (cuda_version(x) or (99, 0))[0] < chosen_major]
            usable = [x for x in older
                      if policy.check(self.matrix, release, x, self.platform, tuple(gpus), self.machine).usable]
            if usable:
                alt = max(usable, key=lambda x: cuda_version(x) or (0, 0))
                message += (f"; with an older driver use torch {release.version}+{alt} "
                            f"(needs ≥ {self.matrix.cuda_floor(alt, self.os)})")
                break
        self.warn("driver-unknown", message)

    # -- AMD --------------------------------------------------------------------------------------------------
    def amd(self, releases: list[Release], gpus: list[Gpu]) -> Plan:
        if self.platform not in self.matrix.rocm_platforms:
            note = self.matrix.platform_notes.get(f"{self.platform}:amd")
            if note:
                self.warn("platform-unsupported", note)
            else:
                self.warn("platform-unsupported", f"PyTorch publishes ROCm wheels only for "
                                                  f"{', '.join(self.matrix.rocm_platforms)}: CPU build chosen")
            return self.cpu(releases[0])
        unknown = [g for g in gpus if not g.gfx]
        if unknown:
            self.warn("gpu-arch-unknown", "gfx target unknown for " + ", ".join(g.label_with_arch for g in unknown)
                      + ": not checked against the builds' gfx lists")
        found = self.search(releases, VENDOR_POLICIES["amd"], gpus)
        self.record(found)
        if found.verdict and found.release:
            self.apply(found)
            self.explain_newer(found, None)
            if found.verdict.env:
                override = found.verdict.env["HSA_OVERRIDE_GFX_VERSION"]
                self.warn("rocm-override-needed",
                          f"{', '.join(sorted({g.gfx or '' for g in gpus}))} is not built into "
                          f"{found.release.version}+{found.verdict.variant}: set HSA_OVERRIDE_GFX_VERSION={override} "
                          "to run the code of the nearest built target")
            self.warn_rocm_window(releases, found.release, found.verdict.variant, gpus)
            return self.plan(found.release, found.verdict.variant, True)
        return self.no_gpu_variant(releases, found, "amd", gpus)

    def warn_rocm_window(self, releases: list[Release], release: Release, variant: str, gpus: list[Gpu]) -> None:
        """Warn when the chosen ROCm variant is more than ROCM_DRIVER_WINDOW ROCm releases from the machine's
        ROCm (the wheel brings its user space; the host's amdgpu kernel driver stays), naming the newest
        matching torch whose ROCm variant is inside the window. The choice itself is kept."""
        host, what = self.rocm_reference()
        distance = rocm_distance(self.matrix, host, variant) if host else None
        if distance is None or distance <= ROCM_DRIVER_WINDOW:
            return
        inside: tuple[Release, str] | None = None
        for r in releases:
            near = [v for v in r.variants(self.platform) if variant_kind(v) == "rocm"
                    and (rocm_distance(self.matrix, host or "", v) or 0) <= ROCM_DRIVER_WINDOW
                    and check_rocm(self.matrix, r, v, tuple(gpus)).usable]
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
        self.warn("rocm-driver-window", message)

    def rocm_reference(self) -> tuple[str | None, str]:
        """The ROCm release the window is counted from, and its name for messages: the release the amdgpu kernel
        driver ships with when the driver table knows it (the ±2 rule is about the kernel driver), else the
        ROCm user space."""
        m = self.machine
        if m.amdgpu_driver:
            kernel = rocm_for_amdgpu_driver(m.amdgpu_driver)
            source = m.sources.get("amdgpu_driver")
            if kernel:
                return kernel.rocm, (f"amdgpu kernel driver {m.amdgpu_driver}{f' ({source})' if source else ''}, "
                                     f"which ships with ROCm {kernel.rocm} ({kernel.confidence}),")
            self.note(f"amdgpu kernel driver {m.amdgpu_driver}: the ROCm release it ships with is not in the "
                      "driver table, so the ROCm kernel-driver window is counted from the ROCm user space"
                      + ("" if m.rocm else " (unknown here: not checked)"))
        source = m.sources.get("rocm")
        return m.rocm, f"ROCm user space {m.rocm} on this machine{f' ({source})' if source else ''}"

    # -- Intel ------------------------------------------------------------------------------------------------
    def intel(self, releases: list[Release], gpus: list[Gpu]) -> Plan:
        integrated_only = all(g.integrated for g in gpus)
        found = self.search(releases, VENDOR_POLICIES["intel"], gpus)
        if found.verdict and found.verdict.unknown_arch and integrated_only:
            found = _Search(per_release=found.per_release)  # an unidentified iGPU is not taken for an XPU device
        self.record(found)
        if found.verdict and found.release:
            self.apply(found)
            self.explain_newer(found, None)
            if found.verdict.unknown_arch:
                self.warn("gpu-arch-unknown", "Intel GPU family unknown for "
                          + ", ".join(g.label_with_arch for g in found.verdict.unknown_arch)
                          + ": xpu chosen without checking its device list")
            return self.plan(found.release, "xpu", True)
        if integrated_only:
            self.warn("integrated-gpu-only", "the only GPU is an integrated "
                      + ", ".join(g.label_with_arch for g in gpus)
                      + ", which PyTorch's XPU builds do not support: CPU build chosen")
            return self.cpu(releases[0])
        return self.no_gpu_variant(releases, found, "intel", gpus)

    # -- no usable GPU variant ----------------------------------------------------------------------------------
    def no_gpu_variant(self, releases: list[Release], found: _Search, vendor: str, gpus: list[Gpu]) -> Plan:
        """CPU for the newest matching release, saying why and what would use the GPU."""
        chosen = releases[0]
        driver = self.machine.nvidia_driver
        labels = ", ".join(g.label_with_arch for g in gpus)
        first = next((vs for r, vs in found.per_release if r is chosen), [])
        upgrade = [v.driver_needed for v in first if v.arch_ok and v.driver_needed]
        need = min(upgrade, key=numeric_key) if upgrade else None
        # nearest release outside the request that would use the GPU
        nearest = None
        if self.req.pinned or self.req.companions:
            outside = [r for r in self.matrix.releases if not self.gate(r) and r not in releases]
            here = _index(self.matrix, chosen)
            outside.sort(key=lambda r: (abs(_index(self.matrix, r) - here), _index(self.matrix, r)))
            for r in outside:
                probe = self.search([r], VENDOR_POLICIES[vendor], gpus)
                if probe.verdict:
                    nearest = (r, probe.verdict.variant)
                    break
        if nearest or self.req.pinned:
            parts = [f"torch {chosen.version} has no build that runs on {labels} here"]
            if nearest:
                parts.append(f"nearest release that would use the GPU: torch {nearest[0].version}+{nearest[1]}")
            if need:
                parts.append(f"upgrading the NVIDIA driver to ≥ {need} would enable {chosen.version}")
            elif vendor == "nvidia" and first:
                parts.append("no driver upgrade helps: the builds have no kernels for this GPU")
            self.warn("no-gpu-variant-for-version", "; ".join(parts))
        if need:
            self.warn("driver-too-old", f"driver {driver} is below every CUDA build of torch {chosen.version} "
                                        f"that has kernels for {labels} (needs ≥ {need})")
        elif first and not any(v.arch_ok for v in first):
            self.warn("gpu-arch-unsupported", f"torch {chosen.version} has no GPU build for {labels}")
        elif not first:
            self.warn("gpu-arch-unsupported", f"torch {chosen.version} has no {vendor} GPU build for {self.platform}")
        self.reasons.append(f"no GPU build of torch {chosen.version} runs here: CPU build from the cpu index")
        return self.cpu(chosen)

    # -- forced variant ------------------------------------------------------------------------------------------
    def forced(self, releases: list[Release]) -> Plan:
        variant = self.request.variant or ""
        having = [r for r in releases if variant in r.variants(self.platform)]
        if not having:
            known = sorted({v for r in releases for v in r.variants(self.platform)})
            raise InputError(f"variant {variant} does not exist for {self.platform} in the matching torch releases "
                             f"(known: {', '.join(known)})")
        release = having[0]
        self.reasons.append(f"variant {variant} requested")
        pool = self.gpu_pool()
        verdict: Verdict | None = None
        policy = POLICY_OF_KIND.get(variant_kind(variant))
        if policy is not None:
            gpus = [g for g in pool if g.vendor == policy.vendor]
            if not gpus:
                self.warn("gpu-arch-unsupported", f"{variant} requested but no {policy.brand} GPU is visible")
            else:
                verdict = policy.check(self.matrix, release, variant, self.platform, tuple(gpus), self.machine)
                if policy.kind == "rocm":
                    self.warn_rocm_window(releases, release, variant, gpus)
        usable = bool(verdict and verdict.usable)
        if verdict:
            for n in verdict.notes:
                self.note(n)
            self.env.update(verdict.env)
            if verdict.usable:
                self.reasons.append(verdict.reason)
                if verdict.env:
                    self.warn("rocm-override-needed", f"set HSA_OVERRIDE_GFX_VERSION="
                                                      f"{verdict.env['HSA_OVERRIDE_GFX_VERSION']}")
            else:
                self.rejected.append(Rejection(variant, release.version, verdict.reason))
                code = "driver-too-old" if verdict.driver_needed else "gpu-arch-unsupported"
                self.warn(code, f"requested {release.version}+{variant} will not run on this GPU: {verdict.reason}")
            if policy is not None and policy.kind == "cuda" and not self.machine.nvidia_driver:
                self.warn("driver-unknown", f"NVIDIA driver version unknown: {variant} needs driver ≥ "
                                            f"{self.matrix.cuda_floor(variant, self.os)}")
        return self.plan(release, variant, usable)

    # -- Apple ------------------------------------------------------------------------------------------------
    def apple(self) -> Plan:
        if self.machine.rosetta:
            self.warn("platform-unsupported", "this Python runs under Rosetta (x86_64): use a native arm64 Python "
                                              "to get current torch releases with MPS")
        if self.platform == "macos_x86_64":
            intel_mac = [r for r in self.matrix.releases if r.variants("macos_x86_64")]
            newest = self.matrix.releases[0]
            if self.req.pinned and not any(self.matches(r) for r in intel_mac):
                self.warn("platform-unsupported", f"torch {intel_mac[0].version} is the last release with Intel "
                                                  "Mac (x86_64) wheels; the requested version has none")
                return self.plan(None, None, False)
            if self.matches(newest) and newest not in intel_mac:
                self.reasons.append(f"torch ≥ {_next_minor(intel_mac[0])} has no Intel Mac (x86_64) wheels: "
                                    f"{intel_mac[0].version} is the last")
        releases = self.candidates()
        if not releases:
            return self.plan(None, None, False)
        if self.request.variant and self.request.variant not in ("default", "cpu"):
            raise InputError(f"variant {self.request.variant} does not exist for {self.platform}: macOS wheels come "
                             "from the default index (variant default)")
        mps = self.platform == "macos_arm64"
        self.reasons.append("macOS: the default index's wheel" + (" (CPU + MPS on Apple silicon)" if mps else " (CPU)"))
        return self.plan(releases[0], "default", mps)

    # -- Jetson -------------------------------------------------------------------------------------------------
    def jetson(self) -> bool:
        if self.machine.jetson:
            return True
        return any("jetson" in (g.name or "").lower() for g in self.machine.gpus if g.vendor == "nvidia")

    def jetson_plan(self) -> Plan:
        l4t = self.machine.jetson
        sbsa_from = self.matrix.jetson.get("sbsa_from_l4t", "38")
        if l4t and numeric_key(l4t) >= numeric_key(sbsa_from):
            self.note(f"Jetson L4T {l4t} (≥ R{sbsa_from}) uses the SBSA CUDA stack: PyTorch's aarch64 CUDA builds "
                      f"apply ({self.matrix.jetson.get('conf', 'inferred')})")
            releases = self.candidates()
            if not releases:
                return self.plan(None, None, False)
            if self.request.variant:
                return self.forced(releases)
            return self.nvidia(releases, [g for g in self.gpu_pool() if g.vendor == "nvidia"])
        where = self.matrix.jetson.get("wheels", "NVIDIA's Jetson wheels")
        if self.request.variant == "cpu":
            releases = self.candidates()
            self.reasons.append("variant cpu requested on Jetson")
            return self.cpu(releases[0]) if releases else self.plan(None, None, False)
        for r in self.matrix.releases:
            if self.matches(r):
                for v in VENDOR_POLICIES["nvidia"].variants(r, self.platform):
                    stack = f"Jetson L4T {l4t}" if l4t else "Jetson"
                    self.rejected.append(Rejection(v, r.version, f"{v} rejected: built for SBSA CUDA, not the "
                                                                  f"{stack} driver stack"))
                break
        self.warn("platform-unsupported", f"Jetson (L4T {l4t or 'unknown'}): PyTorch's index wheels do not run on "
                                          f"the Jetson driver stack; install {where} "
                                          "(or request variant cpu for a CPU-only build)")
        return self.plan(None, None, False)


def _newer(a: Release, b: Release) -> bool:
    return version_key(a.version) > version_key(b.version)


def _index(matrix: Matrix, release: Release) -> int:
    return next(i for i, r in enumerate(matrix.releases) if r.version == release.version)


def _next_minor(release: Release) -> str:
    major, minor = release.version.split(".")[:2]
    return f"{major}.{int(minor) + 1}"


def _preference(chosen: Verdict, other: Verdict) -> str:
    if chosen.native and not other.native:
        return "the driver supports it natively"
    if cuda_version(chosen.variant) and cuda_version(other.variant):
        return "release default or newer CUDA"
    if chosen.env == {} and other.env:
        return "no override needed"
    return "newer"


def resolve(machine: Machine, request: Request, matrix: Matrix) -> Plan:
    """Choose torch release + wheel variant for ``machine``; see the module docstring for the rules."""
    return _Resolver(machine, request, matrix).run()


__all__ = ["resolve"]
