"""``resolve(machine, request, matrix) -> Plan``: choose the torch release and wheel variant for a machine.

Pure: reads only its arguments. Order of decisions:

1. Parse the request (pip-style requirements for torch/torchvision/torchaudio, variant, channel, index base).
2. Platform: OS/arch with wheels, musl, Jetson (L4T), macOS; per release Python (incl. free-threaded), glibc and
   macOS minimum. The newest release matching the request is "the newest"; every reason it is out is a warning.
3. The GPUs: visible discrete ones (integrated only when there is no discrete one), of the first vendor in
   ``VENDOR_POLICIES`` order. Each vendor's row says which variants are its kind, which check decides usability
   and how the usable variants of a release are ordered. The newest release with a usable variant wins over a
   newer CPU-only one. GPUs of several architectures: the build for the most capable group, unless an equally new
   build serves them all; an older build that serves all is named as the alternative.
4. Otherwise the ``cpu`` index (never the default index's CUDA wheel), with warnings that say why.
5. When the choice is not the newest release on the GPU, ``Plan.upgrade`` says what change would get it.
"""

# NamedTuple value types, and no `from __future__ import annotations`: see docs/architecture.md, "Value types".
from collections.abc import Callable, Sequence

from ..drivers import rocm_for_amdgpu_driver
from ..errors import InputError
from ..machine import DRIVER_FROM_CUDA_VERSION, Gpu, Machine
from ..versions import numeric_key
from .matrix import Matrix, Release, version_key
from .plan import Choice, Need, Plan, PlanWarning, Rejection, Request, Upgrade, check_code
from .request import parse_request
from .rules import (
    POLICY_OF_KIND,
    ROCM_DRIVER_WINDOW,
    VENDOR_POLICIES,
    WEAK_CONFIDENCE,
    Blocker,
    VendorPolicy,
    Verdict,
    cubin_or_ptx,
    family_candidates,
    gates,
    hsa_override,
    rocm_distance,
)
from .variants import cuda_version, rocm_version, variant_kind

INTEGRATED_WORDS = {"amd": "it shares system memory with the CPU, and ROCm supports AMD's integrated GPUs at "
                           "community level only",
                    "intel": "it shares system memory with the CPU",
                    "nvidia": "it shares system memory with the CPU"}


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
        self.given = machine  # the machine as given, for the plan; ``machine`` is what the rules compare
        self.req = parse_request(request)
        self.platform = machine.platform or ""
        self.os = machine.os or ""
        self.warnings: list[PlanWarning] = []
        self.reasons: list[str] = []
        self.notes: list[str] = []
        self.rejected: list[Rejection] = []
        self.env: dict[str, str] = {}
        self.newest: Release | None = None  # the newest release matching the request
        self.needs: list[Need] = []  # what would get the newest on the GPU
        self.why_not: str | None = None  # why no change would
        self.passing: list[Release] = []  # the candidates: matching releases whose wheels install here
        self.gpu_wanted = False  # the machine has a GPU of a vendor with builds
        self.quiet: set[str] = set()  # starts of rule notes another note already explains
        self.with_code: dict[tuple[str, tuple[Gpu, ...]], tuple[Release, list[Verdict]] | None] = {}

    # -- plumbing -----------------------------------------------------------------------------------------
    def warn(self, code: str, message: str, about: str = "choice") -> None:
        """Add a warning (once); its code must be one of the plan's warning codes. ``about`` "newest": a reason the
        newest matching release was passed over, not a problem of the chosen build."""
        check_code(code)
        if not any(w.code == code and w.message == message for w in self.warnings):
            self.warnings.append(PlanWarning(code, message, about))

    def note(self, text: str) -> None:
        if text not in self.notes and not any(text.startswith(q) for q in self.quiet):
            self.notes.append(text)

    def need(self, need: Need | None) -> None:
        if need is not None and all(n.what != need.what for n in self.needs):
            self.needs.append(need)

    def block(self, blocker: Blocker, suffix: str = "") -> None:
        """A reason the newest release is out: its warning, and the change it asks for."""
        self.warn(blocker.code, blocker.reason + suffix, "newest")
        self.need(blocker.need)

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
        return Plan(machine=self.given, request=self.request, choice=choice, gpu_accelerated=bool(choice and gpu),
                    reasons=tuple(self.reasons), warnings=tuple(self.warnings), rejected=tuple(self.rejected),
                    notes=tuple(self.notes), upgrade=self.upgrade(release, bool(choice and gpu)))

    def upgrade(self, release: Release | None, gpu: bool) -> Upgrade | None:
        """What would get the newest matching release (on the GPU), when the choice is not that."""
        newest = self.newest
        if newest is None or self.request.channel != "stable":
            return None
        if release is not None and release.version == newest.version and (gpu or not self.gpu_wanted):
            return None
        if not self.needs and not self.why_not:
            return None
        return Upgrade(newest.version, self.gpu_wanted and not self.why_not, tuple(self.needs), self.why_not)

    def note_existence(self, release: Release, variant: str) -> None:
        """Say when the chosen wheel's existence (not just its facts) rests on weak data. A live index confirms
        what it lists, and the default index's macOS wheels are read from the default index itself."""
        if variant in ("default", "cpu") or self.matrix.provenance is not None:
            return  # every release has a cpu build: nothing a user could check or act on
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

    def wanted(self) -> list[Release]:
        """Releases matching the request, newest first (an InputError when none does); sets ``newest``."""
        wanted = [r for r in self.matrix.releases if self.matches(r)]
        if not wanted:
            asked = ", ".join(self.request.packages)
            known = f"{self.matrix.releases[-1].version}–{self.matrix.releases[0].version}"
            raise InputError(f"{asked}: no torch release in the compatibility matrix ({known}) matches")
        self.newest = wanted[0]
        return wanted

    def candidates(self) -> list[Release]:
        """Releases matching the request whose wheels install here, newest first; every reason the newest is
        out is a warning."""
        wanted = self.wanted()
        passing = [r for r in wanted if not self.gates(r)]
        if self.request.channel != "stable":
            passing = passing[:1]
        self.passing = passing
        newest = wanted[0]
        if not passing or version_key(newest.version) > version_key(passing[0].version):
            suffix = f"; newest release that installs here: {passing[0].version}" if passing else ""
            for blocker in self.gates(newest):
                self.block(blocker, suffix)
                self.rejected.append(Rejection("any", newest.version, blocker.reason))
        if not passing:
            anywhere = next((r for r in self.matrix.releases if not self.gates(r)), None)
            if anywhere:
                self.reasons.append(f"newest torch with wheels for this platform and Python: {anywhere.version}")
        return passing

    def gates(self, release: Release) -> list[Blocker]:
        """Every reason the release (with the requested companions) does not install here."""
        return gates(release, self.platform, self.machine, tuple(self.req.companions))

    # -- searching ------------------------------------------------------------------------------------------
    def verdicts(self, release: Release, policy: VendorPolicy, gpus: Sequence[Gpu]) -> list[Verdict]:
        devices = tuple(gpus)
        return [policy.check(self.matrix, release, v, self.platform, devices, self.machine)
                for v in policy.variants(release, self.platform)]

    def search(self, releases: Sequence[Release], policy: VendorPolicy, gpus: Sequence[Gpu]) -> _Search:
        """Walk ``releases`` newest first; the first with a usable variant of the vendor's kind for ``gpus`` wins,
        its variants ordered by the vendor's preference."""
        found = _Search()
        for release in releases:
            verdicts = self.verdicts(release, policy, gpus)
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

    def explain_newest(self, found: _Search, policy: VendorPolicy, gpus: Sequence[Gpu]) -> None:
        """When the choice is not the newest release on the GPU: each reason the newest release's builds do not
        run on these GPUs is its own warning (with the change that would lift it)."""
        newest = self.newest
        if newest is None or (found.release is not None and found.release.version == newest.version):
            return
        searched = {r.version: vs for r, vs in found.per_release}
        verdicts = searched.get(newest.version)
        if verdicts is None:
            verdicts = self.verdicts(newest, policy, gpus) if newest.variants(self.platform) else []
        chosen = found.release.version if found.release else self.gpu_release_elsewhere(policy, gpus)
        if not verdicts:
            weak = newest.variants_confidence in WEAK_CONFIDENCE
            known = (f" in this tool's data (its variant set is {newest.variants_confidence}: the index may have one; "
                     "--online reads it)") if weak else ""
            self.warn("no-gpu-variant-for-version", f"torch {newest.version} has no {policy.brand} GPU build "
                      f"({policy.build}) for {self.platform}{known}; newest release that uses the GPU: {chosen}",
                      "newest")
            self.why_not = self.why_not or f"has no {policy.build} build for {self.platform}"
            return
        driver_blocked = [v for v in verdicts if v.arch_ok and v.driver_needed]
        if driver_blocked:
            need = min((v.driver_needed for v in driver_blocked if v.driver_needed), key=numeric_key)
            message = (f"driver {self.machine.nvidia_driver} is too old for torch {newest.version} (its builds for "
                       f"this GPU need ≥ {need})")
            passed_over = [(r, v) for r, vs in found.per_release if r is not found.release and r is not newest
                           for v in vs if v.arch_ok and v.driver_needed]
            if passed_over:
                low_r, low_v = min(passed_over, key=lambda rv: numeric_key(rv[1].driver_needed or ""))
                if numeric_key(low_v.driver_needed or "") < numeric_key(need):
                    message += f"; ≥ {low_v.driver_needed} would enable torch {low_r.version}+{low_v.variant}"
            self.warn("driver-too-old", message, "newest")
            self.need(_driver_need(self.machine.nvidia_driver, need))
        elif not any(v.arch_ok for v in verdicts):
            unusable = sorted({g.label_with_arch for v in verdicts for g in v.unusable_gpus})
            self.warn("gpu-arch-unsupported", f"torch {newest.version} has no kernels for {', '.join(unusable)}; "
                                              f"newest release that runs on it: {chosen}", "newest")
            self.why_not = self.why_not or f"has no kernels for {', '.join(unusable)}"

    def newest_with_code(self, policy: VendorPolicy, gpus: Sequence[Gpu]) -> tuple[Release, list[Verdict]] | None:
        """The newest matching release (installable here or not) with code for ``gpus``, and its variants that
        have it; worked out once per vendor and GPU set (a decline asks twice)."""
        key = (policy.vendor, tuple(gpus))
        if key not in self.with_code:
            self.with_code[key] = None
            for release in self.wanted():
                verdicts = [v for v in self.verdicts(release, policy, gpus) if v.arch_ok]
                if verdicts:
                    self.with_code[key] = (release, verdicts)
                    break
        return self.with_code[key]

    def gpu_release_elsewhere(self, policy: VendorPolicy, gpus: Sequence[Gpu]) -> str:
        """For a machine where no matching release installs: the newest matching release with code for ``gpus``
        (its wheels do not install here either), or "none"."""
        found = self.newest_with_code(policy, gpus)
        return f"{found[0].version}, which does not install here either" if found else "none"

    def explain_driver_anywhere(self, gpus: Sequence[Gpu]) -> None:
        """For a machine where no matching release installs: whether the NVIDIA driver is below every build of
        the newest matching release that has kernels for ``gpus`` (a second reason, named on its own)."""
        driver = self.machine.nvidia_driver
        if not driver or "driver-too-old" in (w.code for w in self.warnings):  # the newest release's already said
            return
        found = self.newest_with_code(VENDOR_POLICIES["nvidia"], gpus)
        if found is None or not all(v.driver_needed for v in found[1]):
            return
        release, with_kernels = found
        need = min((v.driver_needed or "" for v in with_kernels), key=numeric_key)
        labels = ", ".join(g.label_with_arch for g in gpus)
        self.warn("driver-too-old", f"driver {driver} is below every CUDA build of torch {release.version} "
                                    f"with kernels for {labels} (needs ≥ {need})", "newest")
        if release is self.newest:
            self.need(_driver_need(driver, need))

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
        if m.os == "macos":
            return self.apple()
        if not any(r.variants(self.platform) for r in self.matrix.releases):
            self.warn("platform-unsupported", self.matrix.platform_notes.get(
                self.platform, f"no PyTorch wheels for {self.platform} on the PyTorch index"))
            return self.plan(None, None, False)
        musl = musl_of(m)
        if musl:
            return self.decline(Blocker("platform-unsupported", f"{musl}: PyTorch publishes no musllinux wheels; "
                                        "use a glibc-based system or image",
                                        Need("libc", "musl", "glibc", "a glibc-based system or image")))
        if self.jetson_module() is not None and not self.jetson_sbsa():
            return self.jetson_plan()
        if self.jetson_module() is not None:
            self.note(f"Jetson{f' L4T {m.jetson}' if m.jetson else ''} runs the SBSA CUDA stack: PyTorch's aarch64 "
                      f"CUDA builds apply ({self.matrix.jetson.get('conf', 'inferred')})")
            if m.nvidia_driver and "." in m.nvidia_driver:
                branch = m.nvidia_driver.split(".")[0]
                self.note(f"Jetson driver {m.nvidia_driver}: a Jetson's driver version follows its L4T release, not "
                          f"the desktop driver releases, so it is compared by its branch, {branch}")
                self.machine = m = m._replace(nvidia_driver=branch)
                self.quiet.add(f"driver {branch} is given as its branch")
        releases = self.candidates()
        if self.request.variant:
            return self.forced(releases) if releases else self.plan(None, None, False)
        pool = self.gpu_pool()
        vendors = [g.vendor for g in pool]
        if not pool and m.nvidia_driver:
            self.reasons.append(f"NVIDIA driver {m.nvidia_driver} present but no GPU listed: "
                                "choosing for an NVIDIA GPU of unknown model")
            pool, vendors = [Gpu("nvidia")], ["nvidia"]
        vendor = next((v for v in VENDOR_POLICIES if v in vendors), None)
        if vendor is None:
            if not releases:
                return self.plan(None, None, False)
            self.reasons.append("no GPU found: CPU build from the cpu index")
            return self.cpu(releases[0])
        gpus = [g for g in pool if g.vendor == vendor]
        self.gpu_wanted = True
        self.warn_other_vendors(pool, vendor)
        if not releases:  # declined for the platform: say too what the newest release needs for the GPU
            self.explain_newest(_Search(), VENDOR_POLICIES[vendor], gpus)
            if vendor == "nvidia":
                self.explain_driver_anywhere(gpus)
            return self.plan(None, None, False)
        return {"nvidia": self.nvidia, "amd": self.amd, "intel": self.intel}[vendor](releases, gpus)

    def decline(self, blocker: Blocker) -> Plan:
        """No build: ``blocker`` and every gate of the newest matching release."""
        self.block(blocker)
        newest = self.wanted()[0]
        for other in self.gates(newest):
            if other.code == "python-unsupported":
                self.block(other)
        return self.plan(None, None, False)

    def gpu_pool(self) -> list[Gpu]:
        """Visible GPUs that count: integrated ones only when no discrete GPU exists."""
        visible = list(self.machine.visible_gpus)
        discrete = [g for g in visible if g.integrated is not True]
        ignored = [g for g in visible if g.integrated is True] if discrete else []
        if ignored:
            self.reasons.append("integrated GPU ignored: " + ", ".join(g.label_with_arch for g in ignored))
        return discrete or visible

    def warn_other_vendors(self, pool: list[Gpu], vendor: str) -> None:
        """GPUs of another vendor than the one resolved for: a build uses one vendor's GPUs only."""
        others = [g for g in pool if g.vendor != vendor]
        if not others:
            return
        policy = VENDOR_POLICIES[vendor]
        kinds = sorted({VENDOR_POLICIES[g.vendor].build for g in others if g.vendor in VENDOR_POLICIES})
        needs = f"; {' and '.join(kinds)} builds for those need an environment of their own" if kinds else ""
        self.warn("mixed-gpus", f"GPUs of several vendors: the {policy.build} build uses the {policy.brand} GPUs "
                                f"only, not {', '.join(g.label_with_arch for g in others)}{needs}")

    def cpu(self, release: Release) -> Plan:
        """The CPU build of ``release``, or, when the data (an index listing only GPU builds of it) has none for the
        platform, of the newest matching release that has one: a pin is only planned if it is offered."""
        offered = release.variants(self.platform)
        if "cpu" in offered or "default" in offered:
            return self.plan(release, "cpu", False)
        older = next((r for r in self.passing if "cpu" in r.variants(self.platform)
                      and version_key(r.version) < version_key(release.version)), None)
        listed = f"only as {', '.join(offered)}" if offered else "without any build"
        if older is None:
            self.warn("platform-unsupported", f"torch {release.version} is listed for {self.platform} {listed}, with "
                                              "no CPU build, and no matching release has one")
            return self.plan(None, None, False)
        self.warn("platform-unsupported", f"torch {release.version} is listed for {self.platform} {listed}, with no "
                                          f"CPU build: the CPU build of torch {older.version} is chosen",
                  about="newest")
        self.why_not = self.why_not or f"has no CPU build for {self.platform}"
        return self.plan(older, "cpu", False)

    # -- the GPU search, shared by the vendors ------------------------------------------------------------------
    def vendor_search(self, policy: VendorPolicy, releases: list[Release], gpus: list[Gpu]
                      ) -> tuple[_Search, list[Gpu], _Search | None]:
        """(the search to use, the GPUs it does not serve, an older search that serves every GPU).

        GPUs of one architecture: one search. Of several: the newest build for every GPU, unless a group of GPUs
        of one architecture gets a newer build alone; then that group's (the most capable group on a tie), with
        the all-GPU build as the alternative."""
        found = self.search(releases, policy, gpus)
        groups = _arch_groups(gpus)
        if len(groups) < 2:
            return found, [], None
        best: tuple[tuple[int, ...], _Search, list[Gpu]] | None = None
        for members in groups.values():
            alone = self.search(releases, policy, members)
            if alone.release is None:
                continue
            rank = (*version_key(alone.release.version), _capability(members[0]), len(members))
            if best is None or rank > best[0]:
                best = (rank, alone, members)
        if best is None:
            return found, [], None
        _, alone, members = best
        assert alone.release is not None
        if found.release is not None and version_key(found.release.version) >= version_key(alone.release.version):
            return found, [], None
        return alone, [g for g in gpus if g not in members], found if found.release else None

    def gpu_plan(self, policy: VendorPolicy, gpus: list[Gpu], found: _Search, unserved: list[Gpu],
                 alternative: _Search | None, vendor_warnings: Callable[[], None] | None = None) -> Plan:
        """The plan of a usable build ``found`` for ``gpus``: reasons, notes, the newest release's blockers, the
        mixed-GPU warnings, the vendor's own warnings (``vendor_warnings``), the integrated-GPU warning."""
        assert found.release and found.verdict
        self.record(found)
        self.apply(found)
        if policy.vendor == "nvidia":
            self.note_verified_default(found)
        self.explain_newest(found, policy, gpus)
        if unserved:
            self.warn_unserved(policy, found, gpus, unserved, alternative)
        else:
            self.warn_unequal(policy, found, gpus)
        if vendor_warnings is not None:
            vendor_warnings()
        used = [g for g in gpus if g not in unserved]
        if used and all(g.integrated for g in used):
            self.warn("integrated-gpu-only", f"{', '.join(g.label_with_arch for g in used)} is an integrated GPU: "
                                             f"{INTEGRATED_WORDS[policy.vendor]}")
        return self.plan(found.release, found.verdict.variant, True)

    def warn_unserved(self, policy: VendorPolicy, found: _Search, gpus: list[Gpu], unserved: list[Gpu],
                      alternative: _Search | None) -> None:
        assert found.release and found.verdict
        keep = ",".join(self.device_indexes(policy.vendor, [g for g in gpus if g not in unserved]))
        build = f"torch {found.release.version}+{found.verdict.variant}"
        message = (f"no build runs on every GPU; {build} cannot use {', '.join(g.label_with_arch for g in unserved)}: "
                   f"hide it with {policy.select.format(keep)}")
        if alternative and alternative.release and alternative.verdict:
            older = _releases_between(self.matrix, alternative.release, found.release)
            message = (f"{build} (the newest for {', '.join(g.label_with_arch for g in gpus if g not in unserved)}) "
                       f"cannot use {', '.join(g.label_with_arch for g in unserved)}: hide it with "
                       f"{policy.select.format(keep)}; torch {alternative.release.version}+"
                       f"{alternative.verdict.variant} runs on every GPU ({older} release{'s' if older != 1 else ''} "
                       "older)")
        if policy.vendor == "amd":
            aliased = [g for g in unserved if g.gfx and self.matrix.gfx_aliases.get(g.gfx)]
            if aliased:
                target = self.matrix.gfx_aliases[aliased[0].gfx or ""][0]
                message += (f"; or keep both with a per-device override for {aliased[0].gfx} only: "
                            f"HSA_OVERRIDE_GFX_VERSION_<KFD node>={hsa_override(target)} (libhsakmt reads "
                            "HSA_OVERRIDE_GFX_VERSION_<node> before the global one; node numbers as in "
                            "/sys/class/kfd/kfd/topology/nodes, CPU nodes first)")
        self.warn("mixed-gpus", message)

    def warn_unequal(self, policy: VendorPolicy, found: _Search, gpus: list[Gpu]) -> None:
        """A build that runs on every NVIDIA GPU, but on some only by just-in-time compilation of PTX."""
        assert found.release and found.verdict
        arch = found.release.cuda_arch(found.verdict.variant, self.platform) if policy.kind == "cuda" else None
        if arch is None or len({g.sm for g in gpus}) < 2:
            return
        jit = [g for g in gpus if g.sm is not None and (how := cubin_or_ptx(arch, g.sm)) and how[0] == "ptx"]
        if jit and len(jit) < len(gpus):
            self.warn("mixed-gpus", f"torch {found.release.version}+{found.verdict.variant} runs "
                                    f"{', '.join(g.label_with_arch for g in jit)} only by just-in-time compilation "
                                    "of PTX (a slow first start, and no kernels tuned for it); the other GPUs run "
                                    "compiled kernels")

    def device_indexes(self, vendor: str, keep: list[Gpu]) -> list[str]:
        """The indexes (in PCI bus order, hidden GPUs counted) of the ``keep`` GPUs among the vendor's devices."""
        indexes, i = [], 0
        for g in self.machine.gpus:
            if g.vendor != vendor:
                continue
            for _ in range(g.count):
                if g in keep:
                    indexes.append(str(i))
                i += 1
        return indexes

    # -- NVIDIA -----------------------------------------------------------------------------------------------
    def nvidia(self, releases: list[Release], gpus: list[Gpu]) -> Plan:
        policy = VENDOR_POLICIES["nvidia"]
        source = self.machine.sources.get("nvidia_driver", "")
        if source.startswith(DRIVER_FROM_CUDA_VERSION):
            self.note(f"NVIDIA driver taken as {self.machine.nvidia_driver}, {source}: a newer driver may allow "
                      "newer builds")
        unknown = [g for g in gpus if g.sm is None]
        if unknown:
            names = ", ".join(g.label_with_arch for g in unknown)
            self.warn("gpu-arch-unknown", f"compute capability unknown for {names}: not checked against the builds' "
                      "arch lists")
        found, unserved, alternative = self.vendor_search(policy, releases, gpus)
        if found.verdict and found.release:
            return self.gpu_plan(policy, gpus, found, unserved, alternative, None if self.machine.nvidia_driver
                                 else lambda: self.warn_driver_unknown(found, releases, gpus))
        self.record(found)
        return self.no_gpu_variant(releases, found, policy, gpus)

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
        policy = VENDOR_POLICIES["amd"]
        if self.platform not in self.matrix.rocm_platforms:
            note = self.matrix.platform_notes.get(f"{self.platform}:amd")
            self.warn("platform-unsupported", note or f"PyTorch publishes ROCm wheels only for "
                                                      f"{', '.join(self.matrix.rocm_platforms)}: CPU build chosen")
            self.why_not = (f"has no ROCm build for {self.platform} (PyTorch publishes them for "
                            f"{', '.join(self.matrix.rocm_platforms)} only)")
            return self.cpu(releases[0])
        if self.machine.wsl and not self.machine.rocm:
            self.warn("platform-unsupported", self.matrix.platform_notes["wsl:amd"])
            if self.newest is not None and policy.variants(self.newest, self.platform):
                self.need(Need("rocm", None, "ROCm for WSL", "AMD's ROCm for WSL, whose runtime replaces the wheel's"))
            else:
                self.why_not = f"has no ROCm build for {self.platform}"
            return self.cpu(releases[0])
        unknown = [g for g in gpus if not g.gfx]
        if unknown:
            self.warn("gpu-arch-unknown", "gfx target unknown for " + ", ".join(g.label_with_arch for g in unknown)
                      + ": not checked against the builds' gfx lists")
        found, unserved, alternative = self.vendor_search(policy, releases, gpus)
        if not (found.verdict and found.release):
            self.record(found)
            return self.no_gpu_variant(releases, found, policy, gpus)
        release, verdict = found.release, found.verdict
        used = [g for g in gpus if g not in unserved]

        def amd_warnings() -> None:
            if verdict.env:
                override = verdict.env["HSA_OVERRIDE_GFX_VERSION"]
                needing = sorted({g.gfx or "" for g in used if g.gfx and g.gfx not in _gfx_list(found)})
                self.warn("rocm-override-needed",
                          f"{', '.join(needing)} is not built into {release.version}+{verdict.variant}: set "
                          f"HSA_OVERRIDE_GFX_VERSION={override} to run the code of the nearest built target")
            if self.machine.wsl:
                self.warn("platform-unsupported", self.matrix.platform_notes["wsl:amd-rocm"])
            self.warn_rocm_window(releases, release, verdict.variant, used)
            if not (self.machine.rocm or self.machine.amdgpu_driver):
                self.warn("driver-unknown", "amdgpu kernel driver and ROCm versions unknown: the ROCm build brings its "
                                            "own user space, but whether the kernel driver is within "
                                            f"±{ROCM_DRIVER_WINDOW} ROCm releases of it was not checked")

        return self.gpu_plan(policy, gpus, found, unserved, alternative, amd_warnings)

    def warn_rocm_window(self, releases: list[Release], release: Release, variant: str, gpus: list[Gpu]) -> None:
        """Warn when the chosen ROCm variant is more than ROCM_DRIVER_WINDOW ROCm releases from the machine's
        ROCm (the wheel brings its user space; the host's amdgpu kernel driver stays), naming the newest
        matching torch whose ROCm variant is inside the window. The choice itself is kept."""
        host, what = self.rocm_reference()
        distance = rocm_distance(self.matrix, host, variant) if host else None
        if distance is None or distance <= ROCM_DRIVER_WINDOW:
            return
        inside: tuple[Release, str] | None = None
        policy = VENDOR_POLICIES["amd"]
        for r in releases:
            near = [v.variant for v in self.verdicts(r, policy, gpus)
                    if (rocm_distance(self.matrix, host or "", v.variant) or 0) <= ROCM_DRIVER_WINDOW and v.usable]
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
        policy = VENDOR_POLICIES["intel"]
        integrated_only = all(g.integrated for g in gpus)
        found, unserved, alternative = self.vendor_search(policy, releases, gpus)
        if found.verdict and integrated_only and any(not g.family for g in found.verdict.unknown_arch):
            found = _Search(per_release=found.per_release)  # an unidentified iGPU is not taken for an XPU device
        if found.verdict and found.release:
            release = found.release
            unknown = [g for g in found.verdict.unknown_arch if not g.family]
            shared = [g for g in found.verdict.unknown_arch if g.family]  # a name several chip families share

            def intel_warnings() -> None:
                if unknown:
                    self.warn("gpu-arch-unknown", "Intel GPU family unknown for "
                              + ", ".join(g.label_with_arch for g in unknown)
                              + ": xpu chosen without checking its device list")
                built = set(release.xpu.families.get(self.os, ())) if release.xpu else set()
                for g in shared:
                    families = family_candidates(g.family or "")
                    has = ", ".join(f for f in families if f in built)
                    lacks = ", ".join(f for f in families if f not in built)
                    self.warn("gpu-arch-unknown", f"{g.label} is the name of several chips ({', '.join(families)}), "
                              f"and torch {release.version}+xpu builds for {has}, not {lacks}: the PCI id "
                              "(vendor:device, as detection reads it) tells which this is")
                if not any(g.driver for g in gpus):
                    self.warn("driver-unknown", "Intel GPU kernel driver unknown: the xpu build needs the i915 or xe "
                                                "driver and Intel's GPU compute runtime (Level Zero)")

            return self.gpu_plan(policy, gpus, found, unserved, alternative, intel_warnings)
        self.record(found)
        if integrated_only:
            self.warn("integrated-gpu-only", "the only GPU is an integrated "
                      + ", ".join(g.label_with_arch for g in gpus)
                      + ", which PyTorch's XPU builds do not support: CPU build chosen")
            self.gpu_wanted = False  # no GPU of this machine is one the builds use
            return self.cpu(releases[0])
        return self.no_gpu_variant(releases, found, policy, gpus)

    # -- no usable GPU variant ----------------------------------------------------------------------------------
    def no_gpu_variant(self, releases: list[Release], found: _Search, policy: VendorPolicy, gpus: list[Gpu]) -> Plan:
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
            outside = [r for r in self.matrix.releases
                       if not self.gates(r) and r not in releases]
            here = _index(self.matrix, chosen)
            outside.sort(key=lambda r: (abs(_index(self.matrix, r) - here), _index(self.matrix, r)))
            for r in outside:
                probe = self.search([r], policy, gpus)
                if probe.verdict:
                    nearest = (r, probe.verdict.variant)
                    break
        if nearest or self.req.pinned:
            parts = [f"torch {chosen.version} has no build that runs on {labels} here"]
            if nearest:
                parts.append(f"nearest release that would use the GPU: torch {nearest[0].version}+{nearest[1]}")
            if need:
                parts.append(f"upgrading the NVIDIA driver to ≥ {need} would enable {chosen.version}")
            elif policy.vendor == "nvidia" and first:
                parts.append("no driver upgrade helps: the builds have no kernels for this GPU")
            self.warn("no-gpu-variant-for-version", "; ".join(parts))
        if need:
            self.warn("driver-too-old", f"driver {driver} is below every CUDA build of torch {chosen.version} "
                                        f"that has kernels for {labels} (needs ≥ {need})")
            self.need(_driver_need(driver, need))
        elif first and not any(v.arch_ok for v in first):
            self.warn("gpu-arch-unsupported", f"torch {chosen.version} has no GPU build for {labels}")
            self.why_not = self.why_not or f"has no kernels for {labels}"
        elif not first:
            self.warn("gpu-arch-unsupported", f"torch {chosen.version} has no {policy.vendor} GPU build for "
                                              f"{self.platform}")
            self.why_not = self.why_not or f"has no {policy.build} build for {self.platform}"
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
                if not verdict.usable:  # GPUs of several architectures: the build for the most capable it serves
                    verdict = self.forced_for_some(policy, release, variant, gpus) or verdict
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

    def forced_for_some(self, policy: VendorPolicy, release: Release, variant: str, gpus: list[Gpu]
                        ) -> Verdict | None:
        """A requested variant that does not serve every GPU: its verdict for the most capable group of GPUs of one
        architecture it serves, with the mixed-gpus warning naming the others; None when it serves no group."""
        groups = _arch_groups(gpus)
        if len(groups) < 2:
            return None
        for members in sorted(groups.values(), key=lambda ms: _capability(ms[0]), reverse=True):
            verdict = policy.check(self.matrix, release, variant, self.platform, tuple(members), self.machine)
            if verdict.usable:
                found = _Search()
                found.release, found.verdict = release, verdict
                self.warn_unserved(policy, found, gpus, [g for g in gpus if g not in members], None)
                return verdict
        return None

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
        if self.platform != "macos_arm64":
            self.reasons.append("macOS: the default index's wheel (CPU)")
            return self.plan(releases[0], "default", False)
        self.gpu_wanted = True
        chosen = next((r for r in releases if self.mps_runs(r)), None)
        newest = releases[0]
        if chosen is not newest:
            need = newest.mps_macos[0] if newest.mps_macos else "?"
            text = (f"torch {newest.version}'s MPS backend needs macOS ≥ {need}, found {self.machine.os_version}"
                    + (f" ({newest.mps_macos[1]})" if newest.mps_macos and newest.mps_macos[1] in WEAK_CONFIDENCE
                       else ""))
            self.need(Need("macos", self.machine.os_version, f">={need}", f"macOS ≥ {need}"))
            if chosen is None:
                self.warn("platform-unsupported", f"{text}, and no matching release's MPS runs here: the build runs on "
                                                  "the CPU only")
                self.reasons.append("macOS: the default index's wheel (CPU only: MPS needs a newer macOS)")
                return self.plan(newest, "default", False)
            self.warn("platform-unsupported", f"{text}; newest release whose MPS runs here: {chosen.version}",
                      "newest")
        self.reasons.append("macOS: the default index's wheel (CPU + MPS on Apple silicon)")
        return self.plan(chosen, "default", True)

    def mps_runs(self, release: Release) -> bool:
        """Whether the release's MPS backend runs on the machine's macOS (unknown macOS or floor: assumed so)."""
        if not release.mps_macos or not self.machine.os_version:
            return True
        return numeric_key(self.machine.os_version) >= numeric_key(release.mps_macos[0])

    # -- Jetson -------------------------------------------------------------------------------------------------
    def jetson_module(self) -> str | None:
        """The Jetson module the machine is (an L4T release, or an NVIDIA GPU of a Jetson family), or None."""
        for g in self.machine.gpus:
            if g.vendor == "nvidia" and g.family and g.family.startswith("jetson-"):
                return g.family
        if self.machine.jetson:
            return "jetson"
        return None

    def jetson_sbsa(self) -> bool:
        """Jetson on the SBSA CUDA stack: an L4T release from ``sbsa_from_l4t`` (38) on, else (L4T unknown) a
        Jetson GPU from ``sbsa_from_sm`` (sm_110, Thor, which ships with L4T 38) on."""
        l4t = self.machine.jetson
        if l4t:
            return numeric_key(l4t) >= numeric_key(self.matrix.jetson.get("sbsa_from_l4t", "38"))
        from_sm = int(self.matrix.jetson.get("sbsa_from_sm", "110"))
        return any(g.sm is not None and g.sm >= from_sm for g in self.machine.gpus
                   if g.vendor == "nvidia" and (g.family or "").startswith("jetson-"))

    def jetson_plan(self) -> Plan:
        l4t = self.machine.jetson
        where = self.matrix.jetson.get("wheels", "NVIDIA's Jetson wheels")
        sbsa = self.matrix.jetson.get("sbsa_from_l4t", "38")
        if self.request.variant == "cpu":
            releases = self.candidates()
            self.reasons.append("variant cpu requested on Jetson")
            return self.cpu(releases[0]) if releases else self.plan(None, None, False)
        newest = self.wanted()[0]
        for v in VENDOR_POLICIES["nvidia"].variants(newest, self.platform):
            stack = f"Jetson L4T {l4t}" if l4t else "Jetson"
            self.rejected.append(Rejection(v, newest.version, f"{v} rejected: built for SBSA CUDA, not the "
                                                              f"{stack} driver stack"))
        self.gpu_wanted = True
        return self.decline(Blocker(
            "platform-unsupported", f"Jetson (L4T {l4t or 'unknown'}): PyTorch's index wheels do not run on the Jetson "
            f"driver stack; install {where} (or request variant cpu for a CPU-only build)",
            Need("os", f"L4T {l4t}" if l4t else "Jetson", f"L4T >={sbsa}",
                 f"L4T ≥ {sbsa} (JetPack 7, whose SBSA CUDA stack runs PyTorch's aarch64 builds; "
                 f"{self.matrix.jetson.get('conf', 'inferred')})")))


# Linux distributions built on musl only (os-release ID, as os_version starts); Void has a glibc edition too
MUSL_DISTRIBUTIONS = ("alpine", "chimera", "postmarketos", "adelie")


def musl_of(machine: Machine) -> str | None:
    """The machine's C library when it is musl ("musl libc 1.2.5", "musl libc of alpine 3.20"), else None. A
    profile that names a musl-only distribution ("alpine 3.20", "Alpine Linux v3.20") and no glibc is musl."""
    if machine.musl:
        return f"musl libc {machine.musl}"
    if not machine.glibc and (machine.os_version or "").lower().startswith(MUSL_DISTRIBUTIONS):
        return f"musl libc of {machine.os_version}"
    return None


def _arch_groups(gpus: Sequence[Gpu]) -> dict[str | None, list[Gpu]]:
    """The GPUs grouped by the architecture that decides which builds run them, in the order first seen."""
    groups: dict[str | None, list[Gpu]] = {}
    for gpu in gpus:
        groups.setdefault(gpu.arch, []).append(gpu)
    return groups


def _driver_need(driver: str | None, need: str) -> Need:
    """The change "NVIDIA driver ≥ X" an upgrade names."""
    return Need("nvidia_driver", driver, f">={need}", f"NVIDIA driver ≥ {need}")


def _gfx_list(found: _Search) -> tuple[str, ...]:
    assert found.release and found.verdict
    targets = found.release.gfx_targets(found.verdict.variant)
    return targets.gfx or () if targets else ()


def _capability(gpu: Gpu) -> int:
    """An order for "the most capable" GPU of one vendor: compute capability, gfx number, else 0."""
    if gpu.sm is not None:
        return gpu.sm
    return int(gpu.gfx[3:], 16) if gpu.gfx and all(c in "0123456789abcdef" for c in gpu.gfx[3:]) else 0


def _releases_between(matrix: Matrix, older: Release, newer: Release) -> int:
    return _index(matrix, older) - _index(matrix, newer)


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


__all__ = ["musl_of", "resolve"]
