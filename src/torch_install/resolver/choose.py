"""``resolve(machine, request, matrix) -> Plan``: choose the torch release and wheel variant for a machine.

Pure: reads only its arguments. The search, in the order ``Search.run`` takes its steps:

1. The request: pip-style requirements for torch/torchvision/torchaudio, variant, channel, index base; a profile
   value no machine has, or a forced variant the target cannot use, is an input error (``check_consistent``).
2. The platform: an OS and architecture are needed; macOS has rules of its own (``platforms.apple``); a platform
   without wheels is declined.
3. The C library and the driver stack: musl is declined; a Jetson on its own L4T stack is declined for the
   index's wheels, one on the SBSA stack compares its driver by branch (``platforms``).
4. The candidates: releases matching the request whose wheels install here (Python, free-threading, glibc, macOS,
   the requested companions), newest first. The newest matching release is "the newest"; every reason it is out
   is a warning.
5. A forced ``--variant``, or the build the pins' local labels name (``torch==2.9.1+cu128``): the newest
   candidate that has it, checked against the GPUs of its vendor; a pinned build that does not exist or run here
   is a blocker naming what the request without its labels plans.
6. The GPUs: the visible discrete ones (integrated only when there is no discrete one); a GPU a vendor's rules
   can infer although none is listed (an NVIDIA driver alone); then the first vendor, in the registry's order
   (``vendors.py``), with builds. None: the newest candidate's CPU build.
7. The vendor's plan: its rules' first steps (``vendor_rules.py``), then the walk: the newest release with a
   usable variant of the vendor's kind wins over a newer CPU-only one, the usable variants of a release ordered by
   the vendor's preference. GPUs of several architectures: the build for the most capable group, unless an
   equally new build serves them all; an older build that serves all is named as the alternative. No usable build:
   the CPU build, with warnings that say why (never the default index's CUDA wheel).
8. When the choice is not the newest release on the GPU, ``Plan.upgrade`` says what change would get it.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

from .. import vendors
from ..errors import InputError
from ..machine import Gpu, Machine
from ..versions import numeric_key, release_part, specifier_allows
from .builder import PlanBuilder
from .matrix import ASSUMED, Matrix, Release, version_key
from .plan import Plan, Request
from .platforms import apple, libc_and_driver_stack
from .references import why_not_here
from .request import AnyVersion, ExactRelease, Pin, check_consistent, one_build, parse_request
from .rules import (
    WEAK_CONFIDENCE,
    Blocker,
    VendorPolicy,
    Verdict,
    Walk,
    companion_blocker,
    companion_candidates,
    driver_need,
    driver_of,
    gates,
    policy_of_kind,
    vendor_policies,
)
from .variants import cuda_version, variant_kind
from .vendor_indexes import vendor_build_plan
from .vendor_rules import VendorRules

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from .companion_facts import Pick
    from .companions import Bound
    from .plan import Wanted


class PlanRules(vendors.Protocol):
    """A vendor's own steps and warnings (its row's ``plan_rules``): a ``VendorRules`` class, made for its policy."""

    def __call__(self, policy: VendorPolicy) -> VendorRules: ...


PLAN_RULES: vendors.Hook[PlanRules] = vendors.Hook("plan_rules", PlanRules, "torch_install.resolver")


class Search:
    """One resolve: the machine the rules compare, the matrix, the request, and the plan being written."""

    def __init__(self, machine: Machine, request: Request, matrix: Matrix, labels: bool = True) -> None:
        self.req = parse_request(request, machine)  # step 1
        if self.req.channel:  # a pinned pre-release: the channel that has it, as pip takes it
            request = request._replace(channel=self.req.channel, notes=(*request.notes, (
                f"{', '.join(request.packages)}: a {'development' if self.req.channel == 'nightly' else 'pre-'}"
                f"release, from the {self.req.channel} channel")))
        self.known = matrix.releases[-1].version, matrix.releases[0].version  # the data's own oldest and newest
        self.assumed = self.pinned_outside(request, matrix)  # a pinned release the data does not reach
        if self.assumed is not None:
            label = next((p.variant for p in self.req.pins if p.name == "torch" and p.variant), None)
            matrix = matrix.with_assumed_release(self.assumed, label)
        self.machine, self.request, self.matrix = machine, request, matrix
        self.bound: list[Bound] = []  # requested packages built against one torch
        if matrix.packages:
            from .companions import bound_requirements

            family = MappingProxyType(dict(self.req.companions))
            self.bound = [b._replace(family=family)
                          for b in bound_requirements(request.requirements, machine, matrix.packages)]
        self.strict = True  # what a package was built for holds (a preference: ``resolve`` drops it if need be)
        self.labels = labels  # the builds local labels name hold (the plan without them says what would run)
        self.pins = [*(self.default_build(p) for p in self.req.pins),
                     *(Pin(b.text, b.package.name, b.exact or "", b.label.variant) for b in self.bound
                       if b.label is not None and b.label.variant)] if labels else []
        if not labels:
            self.bound = [b._replace(label=None) for b in self.bound]
        self.variant = one_build(self.pins, request.variant) or request.variant
        self.plan = PlanBuilder(machine, request, matrix, self.req.companions)
        self.plan.picker = self.picks
        self.platform = machine.platform or ""
        self.os = machine.os or ""
        self.passing: list[Release] = []  # the candidates: matching releases whose wheels install here
        self.with_code: dict[tuple[str, tuple[Gpu, ...]], tuple[Release, list[Verdict]] | None] = {}

    def pinned_outside(self, request: Request, matrix: Matrix) -> str | None:
        """The release an exact torch pin names (``==1.13.1``, ``==2.16.0+cu130``, a wheel's) when it is older than
        the data's oldest or newer than its newest; None for any other request."""
        if self.req.channel or request.channel != "stable" or not matrix.releases:
            return None
        torch = self.req.torch
        exact = [torch.release] if isinstance(torch, ExactRelease) else [] if isinstance(torch, AnyVersion) else [
            spec.version.split("+", 1)[0] for spec in torch
            if spec.operator in ("==", "===") and "*" not in spec.version]
        version = next((v for v in exact if release_part(v) == v and torch.contains(v, prereleases=True)), None)
        if version is None or matrix.has_release(version):
            return None
        key = version_key(version)
        inside = version_key(matrix.releases[-1].version) <= key <= version_key(matrix.releases[0].version)
        return None if inside else version

    def warn_assumed(self) -> None:
        """The warning of a release planned on assumed facts (``pinned_outside``)."""
        version = self.assumed or ""
        older = version_key(version) < version_key(self.known[0])
        like = self.matrix.releases[-2 if older else 1].version if len(self.matrix.releases) > 1 else ""
        labelled = any(p.variant for p in self.pins)  # torch's own label or a package's that names its build
        known = "–".join(self.known)
        self.plan.warn("release-unknown", f"torch {version} is {'older' if older else 'newer'} than the releases "
                                          f"of the compatibility matrix ({known}): planned with the facts of "
                                          f"torch {like}, assumed (which builds it has, for which Pythons and GPUs, "
                                          "is not checked here; the installer finds its torchvision and torchaudio)"
                       + ("" if labelled or not older else f"; a local label names the build to take "
                                                           f"(torch=={version}+cpu, +cu116 …)")
                       + ("; --online reads the index's" if not older and self.matrix.provenance is None else ""))

    def default_build(self, pin: Pin) -> Pin:
        """A wheel without a local label (the default index's file) is the variant the default index's build of
        its release is on this platform (the release's ``pypi``: cu126, cpu; macOS: default)."""
        if pin.variant or not self.matrix.has_release(pin.release):
            return pin
        platform = self.machine.platform or ""
        own = self.matrix.release(pin.release).pypi.get(platform)
        return pin._replace(variant=own or ("default" if self.machine.os == "macos" else "cpu"))

    # -- the steps ------------------------------------------------------------------------------------------
    def run(self) -> Plan:
        """The plan (the steps of the module docstring); a direct reference's wheel installs its package."""
        plan = self.steps()
        references = {p.name: p.reference for p in self.pins if p.reference is not None}
        if not references or plan.choice is None:
            return plan
        packages = {name: references[name].version if name in references else version
                    for name, version in plan.choice.packages.items()}
        return plan._replace(choice=plan.choice._replace(packages=packages, references={
            name: r.requirement for name, r in references.items() if name in packages}))

    def steps(self) -> Plan:
        m = self.machine
        check_consistent(m, self.request.variant, self.matrix)  # step 1 (the request is parsed in __init__)
        if self.assumed is not None:
            self.warn_assumed()
        for pin in self.pins:  # "+cu117.with.pypi.cudnn": the variant's build, packaged otherwise
            if pin.packaged:
                self.plan.note(f"{pin.text}: the {pin.variant} build, packaged another way ({pin.packaged}); planned "
                               f"as the PyTorch index's {pin.variant} build of the same release")
        self.warn_unknown_requirements()
        self.warn_unhashed()
        for pin in self.pins:  # a direct reference's wheel that does not install here
            why = why_not_here(pin.reference, m) if pin.reference is not None else None
            if why is not None:
                self.plan.warn(why[0], f"{pin.shown}: {why[1]}" + self.would_run())
                return self.plan.finish(None, None, False)
        if not m.os or not m.arch:  # step 2
            raise InputError("machine profile: os and arch are needed to choose a wheel")
        if m.os == "macos":
            return apple(self)
        if not any(r.variants(self.platform) for r in self.matrix.releases):
            self.plan.warn("platform-unsupported", self.matrix.platform_notes.get(
                self.platform, f"no PyTorch wheels for {self.platform} on the PyTorch index"))
            return self.plan.finish(None, None, False)
        early = libc_and_driver_stack(self)  # step 3
        if early is not None:
            return early
        releases = self.candidates()  # step 4
        if self.variant:  # step 5
            return self.forced(releases) if releases else self.plan.finish(None, None, False)
        pool = self.gpu_pool()  # step 6
        policies = vendor_policies()
        if not pool:
            for candidate in policies.values():
                inferred = self.rules(candidate).unlisted_gpu(self)
                if inferred is not None:
                    pool = [inferred]
                    break
        self.warn_unserved_vendors(pool)
        policy = next((p for p in policies.values() if any(g.vendor == p.vendor for g in pool)), None)
        if policy is None:
            if not releases:
                return self.plan.finish(None, None, False)
            self.plan.reasons.append("no GPU found: CPU build from the cpu index")
            return self.cpu(releases[0])
        gpus = [g for g in pool if g.vendor == policy.vendor]
        self.plan.gpu_wanted = True
        self.warn_other_vendors(pool, policy)
        rules = self.rules(policy)
        if not releases and self.plan.newest is None:  # a release only the vendor's own index has
            found = vendor_build_plan(self, policy.row, gpus, f"torch {self.req.torch}: on {policy.brand}'s own "
                                      "index only")
            if not isinstance(found, str):
                return found
            self.plan.warn("no-gpu-variant-for-version", f"torch {self.req.torch} is not on the PyTorch index, and "
                                                         f"{found}")
            return self.plan.finish(None, None, False)
        if not releases:  # declined for the platform: say too what the newest release needs for the GPU
            self.explain_newest(Walk(), policy, gpus)
            rules.declined(self, gpus)
            return self.plan.finish(None, None, False)
        return self.vendor_plan(policy, rules, releases, gpus)  # step 7

    def rules(self, policy: VendorPolicy) -> VendorRules:
        """The vendor's own steps and warnings: the class its registry row names."""
        return PLAN_RULES.load(policy.row)(policy)

    # -- releases -------------------------------------------------------------------------------------------
    def matches(self, release: Release, bound: bool = True) -> bool:
        """Whether the release is one the request allows (with ``bound``, its packages built against torch too)."""
        if self.request.channel != "stable":  # a pinned pre-release follows the rules of the release it precedes
            before = self.req.pre_release_of
            return before is None or version_key(release.version) == version_key(before) \
                or not any(version_key(r.version) == version_key(before) for r in self.matrix.releases)
        if bound and not all(b.allows(release.version, self.platform, self.strict) for b in self.bound
                             if b.constrains_torch):
            return False
        if not self.req.torch.contains(release.version, prereleases=True):
            return False
        for name, spec in (*self.req.companions.items(), *self.req.limits.items()):
            versions = self.matrix.companion_versions(name, release)
            if str(spec) and (versions or release.confidence != ASSUMED) and self.matrix.knows_companion(name, spec) \
                    and not any(spec.contains(v, prereleases=True) for v in versions):
                return False  # (an assumed release's companions, or a version outside the table, are not known:
                # the installer finds them)
        return True

    def wanted(self) -> list[Release]:
        """Releases matching the request, newest first (an InputError when none does); sets ``newest``. When a
        requested package built against torch holds torch back, a constrained-by warning names it."""
        open_ = [r for r in self.matrix.releases if self.matches(r, bound=False)]
        wanted = [r for r in open_ if self.matches(r)] if self.bound else open_
        asked = ", ".join([*self.request.packages, *(b.text for b in self.bound)])
        if self.request.constraints:  # -c lines and pip's configured constraints bound the family too: say them
            asked += f" (constraints: {', '.join(self.request.constraints)})"
        if not open_ and self.vendor_has_it():  # a release only a vendor's own index has: its builds decide
            self.plan.newest = None
            return []
        if not wanted and self.earlier_release() is not None:  # one before the data's oldest fits: assumed
            wanted = [self.matrix.releases[-1]]
            open_ = open_ or wanted
        if not wanted:
            known = f"{self.matrix.releases[-1].version}–{self.matrix.releases[0].version}"
            holding = [b for b in self.bound if b.constrains_torch] if open_ else []
            if holding:
                raise InputError(f"{asked}: no torch release in the compatibility matrix ({known}) fits them all: "
                                 + "; ".join(f"{b.text} needs {b.needs(self.strict)}" for b in holding))
            raise InputError(f"{asked}: no torch release in the compatibility matrix ({known}) matches"
                             + self.newer_hint())
        if self.request.torch_implied and len(wanted) > 1 and any(b.constrains_torch for b in self.bound):
            wanted = self.by_newest_packages(wanted)
        if wanted[0] is not open_[0]:
            for b in self.bound:
                if b.constrains_torch and not b.allows(open_[0].version, self.platform, self.strict):
                    own = next((r for r in open_ if b.allows(r.version, self.platform, self.strict)), wanted[0])
                    self.plan.warn("constrained-by", f"{b.text} ({b.origin}) needs {b.needs(self.strict)}: "
                                                     f"torch {own.version} is the newest release it allows (not "
                                                     f"{open_[0].version})", "newest")
        self.plan.newest = wanted[0]
        return wanted

    def by_newest_packages(self, wanted: list[Release]) -> list[Release]:
        """``wanted`` ordered as pip and uv decide where no requirement names torch: the requested packages built
        against torch first, each at its newest release that goes with a torch release here, then torch (the
        newest torch for them). Where that holds torch back from the newest a package's older release would take,
        a constrained-by warning says so."""
        bound = [b for b in self.bound if b.constrains_torch]
        newest = {r.version: [b.newest_for(r.version, self.platform, self.strict) for b in bound] for r in wanted}

        def key(release: Release) -> tuple[tuple[int, ...], tuple[int, ...]]:
            return tuple(b.newness(v) for b, v in zip(bound, newest[release.version], strict=True)), \
                version_key(release.version)

        ordered = sorted(wanted, key=key, reverse=True)
        if ordered[0] is not wanted[0]:
            held = [f"{b.text} ({b.origin}) at {v.version}" for b, v, before in
                    zip(bound, newest[ordered[0].version], newest[wanted[0].version], strict=True)
                    if v is not None and v is not before]
            self.plan.warn("constrained-by", f"{', '.join(held)}: the newest release{'s' if len(held) > 1 else ''} "
                                             f"the request allows go{'' if len(held) > 1 else 'es'} with torch "
                                             f"{ordered[0].version}, taken as pip and uv take a package's newest "
                                             f"release first where the project names no torch (not "
                                             f"{wanted[0].version}, which only older releases go with)", "newest")
        return ordered

    def earlier_release(self) -> str | None:
        """Where no release of the data fits: the newest torch release before its oldest (``Matrix.earlier``) that
        the request and every package built against torch allow, added to the matrix on assumed facts as an old
        pin is (``pinned_outside``), with its warning; None when none does."""
        if self.assumed is not None or self.request.channel != "stable":
            return None
        fits = (v for v in self.matrix.earlier if self.req.torch.contains(v, prereleases=True)
                and all(b.allows(v, self.platform, self.strict) for b in self.bound if b.constrains_torch))
        version = next(fits, None)
        if version is None:
            return None
        label = next((p.variant for p in sorted(self.pins, key=lambda p: p.name != "torch") if p.variant), None)
        self.assumed, self.matrix = version, self.matrix.with_assumed_release(version, label)
        self.plan.matrix = self.matrix
        self.warn_assumed()
        return version

    def vendor_has_it(self) -> bool:
        """Whether the own index of a vendor whose GPU the machine has holds a torch release (with the requested
        companions' versions) that the request allows for this platform, where the PyTorch index's releases have
        none."""
        from .vendor_indexes import vendor_builds_of

        if any(b.package.constrains_torch and not b.none_for(self.platform) for b in self.bound):  # no vendor
            # index has builds of those (one with no wheel for the platform is left out: it decides nothing)
            return False
        owners = {g.vendor for g in self.machine.visible_gpus}
        specs = (*self.req.companions.items(), *self.req.limits.items())
        return any(b.torch and self.req.torch.contains(b.packages["torch"], prereleases=True)
                   and all(not str(spec) or spec.contains(b.packages.get(name) or "0", prereleases=True)
                           for name, spec in specs)
                   for b in vendor_builds_of(self).builds
                   if self.platform in b.targets and b.vendor_index.vendor in owners)

    def newer_hint(self) -> str:
        """When the request allows releases newer than the matrix's newest: where to find them."""
        newest = self.matrix.releases[0].version.split("+")[0].split(".")
        later = [f"{newest[0]}.{int(newest[1]) + 1}.0", f"{int(newest[0]) + 1}.0.0"]
        if self.matrix.provenance is None and any(self.req.torch.contains(v, prereleases=True) for v in later):
            return "; a newer release may be on the index: --online reads it"
        return ""  # a matrix learnt from the index: that is what it has

    def candidates(self) -> list[Release]:
        """Releases matching the request whose wheels install here, newest first; every reason the newest is
        out is a warning."""
        wanted = self.wanted()
        if not wanted:  # only a vendor's index has the release asked for
            self.passing = []
            return []
        passing = [r for r in wanted if not self.gates(r)]
        if self.request.channel != "stable":
            passing = passing[:1]
        self.passing = passing
        newest = wanted[0]
        if not passing or version_key(newest.version) > version_key(passing[0].version):
            suffix = f"; newest release that installs here: {passing[0].version}" if passing else ""
            for blocker in self.gates(newest):
                self.plan.block(blocker, suffix)
                self.plan.reject("any", newest.version, blocker.reason)
        if not passing:
            anywhere = next((r for r in self.matrix.releases if not self.gates(r)), None)
            if anywhere:
                self.plan.reasons.append(f"newest torch with wheels for this platform and Python: {anywhere.version}")
        return passing

    def gates(self, release: Release) -> list[Blocker]:
        """Every reason the release (with the requested companions) does not install here: a companion is out
        when none of the versions the request allows with the release has a wheel here (the first one's reason)."""
        found = gates(release, self.platform, self.machine)
        for name, spec in self.req.companions.items():
            blockers = [companion_blocker(self.matrix, release, name, v, self.platform, self.machine)
                        for v in companion_candidates(self.matrix, release, name, spec)]
            if blockers and all(blockers):
                found.append(blockers[0])  # type: ignore[arg-type]  # all() holds: none is None
        return found

    def companion_without(self, release: Release, variant: str) -> str | None:
        """Why a requested companion has no build of ``variant`` to go with ``release`` (the first allowed
        version's reason), or None."""
        for name, spec in self.req.companions.items():
            blockers = [companion_blocker(self.matrix, release, name, v, self.platform, self.machine, variant)
                        for v in companion_candidates(self.matrix, release, name, spec)]
            if blockers and all(blockers) and blockers[0] is not None:
                return blockers[0].reason
        return None

    def decline(self, blocker: Blocker) -> Plan:
        """No build: ``blocker`` and every gate of the newest matching release."""
        self.plan.block(blocker)
        for newest in self.wanted()[:1]:
            for other in self.gates(newest):
                if other.code == "python-unsupported":
                    self.plan.block(other)
        return self.plan.finish(None, None, False)

    def cpu(self, release: Release) -> Plan:
        """The CPU build of ``release``, or, when the data (an index listing only GPU builds of it) has none for the
        platform, of the newest matching release that has one: a pin is only planned if it is offered."""
        offered = release.variants(self.platform)
        if "cpu" in offered or "default" in offered:
            return self.plan.finish(release, "cpu", False)
        older = next((r for r in self.passing if "cpu" in r.variants(self.platform)
                      and version_key(r.version) < version_key(release.version)), None)
        listed = f"only as {', '.join(offered)}" if offered else "without any build"
        if older is None:
            self.plan.warn("platform-unsupported", f"torch {release.version} is listed for {self.platform} {listed}, "
                                                   "with no CPU build, and no matching release has one")
            return self.plan.finish(None, None, False)
        self.plan.warn("platform-unsupported", f"torch {release.version} is listed for {self.platform} {listed}, with "
                                               f"no CPU build: the CPU build of torch {older.version} is chosen",
                       about="newest")
        self.plan.why_not = self.plan.why_not or f"has no CPU build for {self.platform}"
        return self.plan.finish(older, "cpu", False)

    # -- the GPUs -------------------------------------------------------------------------------------------
    def gpu_pool(self) -> list[Gpu]:
        """Visible GPUs that count: integrated ones only when no discrete GPU exists."""
        visible = list(self.machine.visible_gpus)
        discrete = [g for g in visible if g.integrated is not True]
        ignored = [g for g in visible if g.integrated is True] if discrete else []
        if ignored:
            self.plan.reasons.append("integrated GPU ignored: " + ", ".join(g.label_with_arch for g in ignored))
        return discrete or visible

    def warn_unserved_vendors(self, pool: list[Gpu]) -> None:
        """GPUs of a vendor without builds on the PyTorch index (an Apple GPU under Linux): no build uses them."""
        unserved = [g for g in pool if (row := vendors.vendor(g.vendor)) is not None and row.kind is None]
        if unserved and len(unserved) == len(pool):
            labels = ", ".join(g.label_with_arch for g in unserved)
            self.plan.warn("integrated-gpu-only", f"{labels} has no PyTorch backend on {self.os} (PyTorch uses Apple "
                                                  "GPUs through MPS, on macOS only): CPU build chosen")

    def warn_other_vendors(self, pool: list[Gpu], policy: VendorPolicy) -> None:
        """GPUs of another vendor than the one resolved for: a build uses one vendor's GPUs only."""
        others = [g for g in pool if g.vendor != policy.vendor]
        if not others:
            return
        policies = vendor_policies()
        kinds = sorted({policies[g.vendor].build for g in others if g.vendor in policies})
        needs = f"; {' and '.join(kinds)} builds for those need an environment of their own" if kinds else ""
        self.plan.warn("mixed-gpus", f"GPUs of several vendors: the {policy.build} build uses the {policy.brand} GPUs "
                                     f"only, not {', '.join(g.label_with_arch for g in others)}{needs}")

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

    # -- the walk -------------------------------------------------------------------------------------------
    def verdicts(self, release: Release, policy: VendorPolicy, gpus: Sequence[Gpu]) -> list[Verdict]:
        devices = tuple(gpus)
        verdicts = [policy.check(self.matrix, release, v, self.platform, devices, self.machine)
                    for v in policy.variants(release, self.platform)]
        for verdict in verdicts:  # a requested companion and package built against torch need the variant's build
            if verdict.usable and self.req.companions and (why := self.companion_without(release, verdict.variant)):
                verdict.usable = False
                verdict.reason = f"{verdict.variant} rejected: {why}"
            for b in self.bound:
                if verdict.usable and b.constrains_torch and not b.none_for(self.platform):
                    found, why = b.pick(release, verdict.variant, self.machine, self.strict)
                    if found is not None:  # the family members it requires need the variant's build too
                        why = self.plan.family_without(found, release, verdict.variant) or ""
                    if found is None or why:
                        verdict.usable = False
                        verdict.reason = f"{verdict.variant} rejected: {why}"
        return verdicts

    def picks(self, release: Release, variant: str) -> tuple[Pick, ...]:
        """How each requested package built against torch installs with the chosen build (its warnings said)."""
        chosen: list[Pick] = []
        for b in self.bound:
            found, why = b.pick(release, variant, self.machine, self.strict)
            if found is None:
                chosen.append(self.plan.leave_out(b, why, f"{release.version}+{variant}"))
                continue
            if found.warning:
                self.plan.warn(*found.warning)
            facts = next((r for r in b.package.releases if r.version == found.version), None)
            if facts is not None and facts.confidence in ("inferred", "unverified"):
                self.plan.note(f"that {b.package.name} {found.version} goes with torch {release.version} "
                               f"({facts.torch or facts.built_for}) is {facts.confidence}: docs/companions.md says "
                               "from what")
            if facts is not None and facts.built_for and not facts.torch and \
                    not specifier_allows(facts.built_for, release.version):
                self.plan.warn("built-for-another-torch", f"{b.text} ({b.origin}): {b.package.name} {found.version} is "
                                                          f"built for torch{facts.built_for} and declares no torch "
                                                          f"requirement: with torch {release.version} its compiled "
                                                          "parts may not load (its Python code does)")
            if facts is not None and facts.yanked is not None:
                why = f" ({facts.yanked})" if facts.yanked else ""
                self.plan.warn("constrained-by", f"{b.text} ({b.origin}): {b.package.name} {found.version} is yanked "
                                                 f"on the default index{why}: pip takes it only because it is pinned "
                                                 "exactly")
            default = release.pypi.get(self.platform)
            built_default = b.package.default_build or (facts is not None and facts.default_build)
            if built_default and default and variant != default and variant not in ("cpu", "default"):
                self.plan.warn("constrained-by", f"{b.text}: {b.package.name} {found.version} is built against the "
                                                 f"default index's torch {release.version} ({default}); the {variant} "
                                                 "build chosen for this machine may not load its kernels")
            chosen.append(found)
        return tuple(chosen)

    def walk(self, releases: Sequence[Release], policy: VendorPolicy, gpus: Sequence[Gpu]) -> Walk:
        """Walk ``releases`` newest first; the first with a usable variant of the vendor's kind for ``gpus`` wins,
        its variants ordered by the vendor's preference."""
        found = Walk()
        for release in releases:
            verdicts = self.verdicts(release, policy, gpus)
            found.per_release.append((release, verdicts))
            usable = sorted((v for v in verdicts if v.usable), reverse=True,
                            key=lambda v: policy.preference(release, self.platform, v, self.machine))
            if usable:
                found.release, found.verdict, found.others = release, usable[0], usable[1:]
                return found
        return found

    def record(self, found: Walk) -> None:
        """Rejected: the considered variants of the chosen release and of newer releases."""
        for release, verdicts in found.per_release:
            for v in verdicts:
                if not v.usable:
                    self.plan.reject(v.variant, release.version, v.reason)
        if found.verdict and found.release:
            for v in found.others:
                self.plan.reject(v.variant, found.release.version, f"{v.variant} usable but {found.verdict.variant} "
                                                                   f"preferred ({_preference(found.verdict, v)})")

    def vendor_search(self, policy: VendorPolicy, releases: list[Release], gpus: list[Gpu]
                      ) -> tuple[Walk, list[Gpu], Walk | None]:
        """(the walk to use, the GPUs it does not serve, an older walk that serves every GPU).

        GPUs of one architecture: one walk. Of several: the newest build for every GPU, unless a group of GPUs
        of one architecture gets a newer build alone; then that group's (the most capable group on a tie), with
        the all-GPU build as the alternative."""
        found = self.walk(releases, policy, gpus)
        groups = _arch_groups(gpus)
        if len(groups) < 2:
            return found, [], None
        best: tuple[tuple[int, ...], Walk, list[Gpu]] | None = None
        for members in groups.values():
            alone = self.walk(releases, policy, members)
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

    def vendor_plan(self, policy: VendorPolicy, rules: VendorRules, releases: list[Release], gpus: list[Gpu]
                    ) -> Plan:
        """Step 7: the vendor's first steps, the walk, then its plan: a GPU build, or the CPU build with why."""
        early = rules.before(self, releases, gpus)
        if early is not None:
            return early
        found, unserved, alternative = self.vendor_search(policy, releases, gpus)
        found = rules.accept(self, found, gpus)
        if found.verdict and found.release:
            return self.gpu_plan(policy, rules, gpus, found, unserved, alternative, releases)
        self.record(found)
        return rules.without_build(self, releases, found, gpus) or self.no_gpu_variant(releases, found, policy, gpus)

    def gpu_plan(self, policy: VendorPolicy, rules: VendorRules, gpus: list[Gpu], found: Walk,
                 unserved: list[Gpu], alternative: Walk | None, releases: list[Release]) -> Plan:
        """The plan of a usable build ``found`` for ``gpus``: reasons, notes, the newest release's blockers, the
        mixed-GPU warnings, the vendor's own warnings, the integrated-GPU warning."""
        assert found.release and found.verdict
        self.record(found)
        self.apply(found)
        rules.chosen(self, found)
        self.explain_newest(found, policy, gpus)
        if unserved:
            self.warn_unserved(policy, rules, found, gpus, unserved, alternative)
        else:
            rules.unequal(self, found, gpus)
        used = [g for g in gpus if g not in unserved]
        rules.after(self, releases, found, gpus, used)
        if used and all(g.integrated for g in used):
            self.plan.warn("integrated-gpu-only", f"{', '.join(g.label_with_arch for g in used)} is an integrated GPU: "
                                                  f"{policy.row.integrated}")
        return self.plan.finish(found.release, found.verdict.variant, True)

    def apply(self, found: Walk) -> None:
        v = found.verdict
        assert v is not None
        self.plan.reasons.append(v.reason)
        self.plan.env.update(v.env)
        for n in v.notes:
            self.plan.note(n)

    def warn_unserved(self, policy: VendorPolicy, rules: VendorRules, found: Walk, gpus: list[Gpu],
                      unserved: list[Gpu], alternative: Walk | None) -> None:
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
        self.plan.warn("mixed-gpus", message + rules.keep_both(self, unserved))

    def explain_newest(self, found: Walk, policy: VendorPolicy, gpus: Sequence[Gpu]) -> None:
        """When the choice is not the newest release on the GPU: each reason the newest release's builds do not
        run on these GPUs is its own warning (with the change that would lift it)."""
        newest = self.plan.newest
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
            self.plan.warn("no-gpu-variant-for-version", f"torch {newest.version} has no {policy.brand} GPU build "
                           f"({policy.build}) for {self.platform}{known}; newest release that uses the GPU: {chosen}",
                           "newest")
            self.plan.why_not = self.plan.why_not or f"has no {policy.build} build for {self.platform}"
            return
        driver_blocked = [v for v in verdicts if v.arch_ok and v.driver_needed]
        if driver_blocked:
            need = min((v.driver_needed for v in driver_blocked if v.driver_needed), key=numeric_key)
            driver = driver_of(self.machine, policy.row)
            message = (f"driver {driver} is too old for torch {newest.version} (its builds for "
                       f"this GPU need ≥ {need})")
            passed_over = [(r, v) for r, vs in found.per_release if r is not found.release and r is not newest
                           for v in vs if v.arch_ok and v.driver_needed]
            if passed_over:
                low_r, low_v = min(passed_over, key=lambda rv: numeric_key(rv[1].driver_needed or ""))
                if numeric_key(low_v.driver_needed or "") < numeric_key(need):
                    message += f"; ≥ {low_v.driver_needed} would enable torch {low_r.version}+{low_v.variant}"
            self.plan.warn("driver-too-old", message, "newest")
            self.plan.need(driver_need(driver, need, policy.row))
        elif not any(v.arch_ok for v in verdicts):
            unusable = sorted({g.label_with_arch for v in verdicts for g in v.unusable_gpus})
            self.plan.warn("gpu-arch-unsupported", f"torch {newest.version} has no kernels for {', '.join(unusable)}; "
                                                   f"newest release that runs on it: {chosen}", "newest")
            self.plan.why_not = self.plan.why_not or f"has no kernels for {', '.join(unusable)}"

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

    def no_gpu_variant(self, releases: list[Release], found: Walk, policy: VendorPolicy, gpus: list[Gpu]) -> Plan:
        """CPU for the newest matching release, saying why and what would use the GPU."""
        chosen = releases[0]
        driver = driver_of(self.machine, policy.row)
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
                probe = self.walk([r], policy, gpus)
                if probe.verdict:
                    nearest = (r, probe.verdict.variant)
                    break
        if nearest or self.req.pinned:
            parts = [f"torch {chosen.version} has no build that runs on {labels} here"]
            if nearest:
                parts.append(f"nearest release that would use the GPU: torch {nearest[0].version}+{nearest[1]}")
            if need:
                parts.append(f"upgrading the {policy.brand} driver to ≥ {need} would enable {chosen.version}")
            elif first and (hint := self.rules(policy).no_driver_helps()):
                parts.append(hint)
            self.plan.warn("no-gpu-variant-for-version", "; ".join(parts))
        if need:
            self.plan.warn("driver-too-old", f"driver {driver} is below every {policy.build} build of torch "
                                             f"{chosen.version} that has kernels for {labels} (needs ≥ {need})")
            self.plan.need(driver_need(driver, need, policy.row))
        elif first and not any(v.arch_ok for v in first):
            self.plan.warn("gpu-arch-unsupported", f"torch {chosen.version} has no GPU build for {labels}")
            self.plan.why_not = self.plan.why_not or f"has no kernels for {labels}"
        elif not first:
            self.plan.warn("gpu-arch-unsupported", f"torch {chosen.version} has no {policy.brand} GPU build for "
                                                   f"{self.platform}")
            self.plan.why_not = self.plan.why_not or f"has no {policy.build} build for {self.platform}"
        self.plan.reasons.append(f"no GPU build of torch {chosen.version} runs here: CPU build from the cpu index")
        return self.cpu(chosen)

    # -- a forced variant (step 5) --------------------------------------------------------------------------
    def forced(self, releases: list[Release]) -> Plan:
        variant = self.variant or ""
        pinned = not self.request.variant  # the build the pins' local labels name, not --variant
        having = [r for r in releases if variant in r.variants(self.platform)]
        if not having and (vendor := self.forced_vendor(variant)) is not None:
            return vendor
        if not having:
            known = sorted({v for r in releases for v in r.variants(self.platform)})
            if pinned:
                self.plan.warn("platform-unsupported", f"{self.pinned()}: torch {releases[0].version} has no {variant} "
                                                       f"build for {self.platform} (its builds: {', '.join(known)})"
                               + self.would_run())
                return self.plan.finish(None, None, False)
            raise InputError(f"variant {variant} does not exist for {self.platform} in the matching torch releases "
                             f"(known: {', '.join(known)})")
        fits = [r for r in having if not self.companion_without(r, variant)]  # a requested companion's build too
        release = (fits or having)[0]
        if not fits and (why := self.companion_without(release, variant)):
            self.plan.warn("constrained-by", f"requested {release.version}+{variant}: {why}")
        self.plan.reasons.append(f"the {variant} build, as {self.pinned()} name{'s' if len(self.pins) == 1 else ''} it"
                                 if pinned
                                 else f"variant {variant} requested")
        pool = self.gpu_pool()
        verdict: Verdict | None = None
        policy = policy_of_kind(variant_kind(variant))
        rules = self.rules(policy) if policy is not None else None
        if policy is not None and rules is not None:
            gpus = [g for g in pool if g.vendor == policy.vendor]
            if not gpus:
                self.plan.warn("gpu-arch-unsupported", f"the {variant} build {self.pinned()} names uses an "
                                                       f"{policy.brand} GPU, and none is visible{self.would_run()}"
                               if pinned else f"{variant} requested but no {policy.brand} GPU is visible")
            else:
                verdict = policy.check(self.matrix, release, variant, self.platform, tuple(gpus), self.machine)
                if not verdict.usable:  # GPUs of several architectures: the build for the most capable it serves
                    verdict = self.forced_for_some(policy, rules, release, variant, gpus) or verdict
                rules.forced(self, releases, release, variant, gpus)
        usable = bool(verdict and verdict.usable)
        if verdict:
            for n in verdict.notes:
                self.plan.note(n)
            self.plan.env.update(verdict.env)
            if verdict.usable:
                self.plan.reasons.append(verdict.reason)
                if verdict.env:
                    self.plan.warn("rocm-override-needed",
                                   "set " + " ".join(f"{k}={v}" for k, v in verdict.env.items()))
            else:
                self.plan.reject(variant, release.version, verdict.reason)
                code = "driver-too-old" if verdict.driver_needed else "gpu-arch-unsupported"
                self.plan.warn(code, f"requested {release.version}+{variant} will not run on this GPU: "
                                     f"{verdict.reason}" + (self.would_run() if pinned else ""))
        elif pinned and policy is None and self.gpu_pool():
            self.plan.reasons.append(f"the {variant} build does not use the GPU" + self.would_run())
            if rules is not None:
                rules.forced_checked(self, variant)
        return self.plan.finish(release, variant, usable)

    def forced_vendor(self, variant: str) -> Plan | None:
        """A variant (forced, or named by the pins' local labels) that only a vendor's own index has: that index's
        build for the GPUs; None when no vendor build has the variant for this platform."""
        from .vendor_indexes import vendor_builds_of

        builds = [b for b in vendor_builds_of(self).builds if b.variant == variant and self.platform in b.targets]
        row = vendors.vendor(builds[0].vendor_index.vendor) if builds else None
        if row is None:
            return None
        gpus = [g for g in self.gpu_pool() if g.vendor == row.name]
        found = vendor_build_plan(self, row, gpus, f"the {variant} build, from {builds[0].vendor_index.name}, as "
                                  + (f"{self.pinned()} name it" if not self.request.variant else "requested"),
                                  variant=variant)
        if isinstance(found, str):
            self.plan.warn("gpu-arch-unsupported", f"{variant} requested: {found}")
            return self.plan.finish(None, None, False)
        return found

    def pinned(self) -> str:
        """The pins that name the build, in words."""
        return ", ".join(dict.fromkeys(p.shown for p in self.pins))  # one index may name the whole family's build

    def would_run(self) -> str:
        """What the request without its local labels plans here, in words ("; torch 2.9.1+cu126 runs here: ask for
        torch==2.9.1"), or "" when that plans nothing."""
        try:
            other = Search(self.machine, self.request, self.matrix, labels=False).run()
        except InputError:
            return ""
        if other.choice is None:
            return "; no other build of the request runs here either"
        build = f"torch {other.choice.torch}+{other.choice.variant}" if other.choice.variant != "default" \
            else f"torch {other.choice.torch} (the default index's wheel)"
        where = "on the GPU" if other.gpu_accelerated else "on the CPU"
        if any(p.reference for p in self.pins):
            return f"; {build} runs here {where}: ask for " + ", ".join(
                f"{p.name}=={p.release}" for p in self.pins if p.reference) + " instead of the wheel to get it"
        if any(p.configured for p in self.pins):
            return f"; {build} runs here {where}: the project's configuration without " + ", ".join(
                dict.fromkeys(p.shown for p in self.pins if p.configured)) + " gets it"
        return f"; {build} runs here {where}: leave the local labels out to get it"

    def warn_unknown_requirements(self) -> None:
        """One warning naming the requested packages whose needs of torch are not known: not in the table of
        packages built against torch (nor read from the user's index); none of them adds a constraint."""
        from .request import PACKAGES

        known = self.matrix.packages
        family = _needed_by(self.request.requirements, set(PACKAGES))
        names = list(dict.fromkeys(w.name for w in self.request.requirements if w.name and not w.editable
                                   and not w.constraint and w.name not in family and w.name not in known))
        if not names:
            return
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        online = self.matrix.provenance is not None
        self.plan.warn("requirement-unknown", f"what {shown} need{'s' if len(names) == 1 else ''} of torch is not "
                       "known here (not in the table of packages built against torch" + (
                           ", nor read from your index)" if online else ")")
                       + ": no constraint is added for " + ("it" if len(names) == 1 else "them")
                       + ("" if online else f"; --online reads {'its' if len(names) == 1 else 'their'} metadata from "
                                            "your index"))

    def warn_unhashed(self) -> None:
        """One warning per requirements file with ``--hash`` options and lines without: pip's hash-checking mode,
        which one hash turns on, refuses the whole file."""
        if not any(w.hashes for w in self.request.requirements):
            return
        from .steps import named_lines, unhashed

        missing = unhashed(self.request.requirements)
        for file in dict.fromkeys(w.file for w in missing):
            lines = [w for w in missing if w.file == file]
            have = f"{named_lines(lines)} has" if len(lines) == 1 else f"{len(lines)} lines have ({named_lines(lines)})"
            self.plan.warn("hash-missing", f"{file} has --hash options, and {have} none: pip's hash-checking mode, "
                                           "which one hash turns on, refuses the whole file (install refuses it before "
                                           "anything runs); give each its hash, as pip-compile or uv pip compile "
                                           "--generate-hashes writes them")

    def forced_for_some(self, policy: VendorPolicy, rules: VendorRules, release: Release, variant: str,
                        gpus: list[Gpu]) -> Verdict | None:
        """A requested variant that does not serve every GPU: its verdict for the most capable group of GPUs of one
        architecture it serves, with the mixed-gpus warning naming the others; None when it serves no group."""
        groups = _arch_groups(gpus)
        if len(groups) < 2:
            return None
        for members in sorted(groups.values(), key=lambda ms: _capability(ms[0]), reverse=True):
            verdict = policy.check(self.matrix, release, variant, self.platform, tuple(members), self.machine)
            if verdict.usable:
                found = Walk()
                found.release, found.verdict = release, verdict
                self.warn_unserved(policy, rules, found, gpus, [g for g in gpus if g not in members], None)
                return verdict
        return None


def _arch_groups(gpus: Sequence[Gpu]) -> dict[str | None, list[Gpu]]:
    """The GPUs grouped by the architecture that decides which builds run them, in the order first seen."""
    groups: dict[str | None, list[Gpu]] = {}
    for gpu in gpus:
        groups.setdefault(gpu.arch, []).append(gpu)
    return groups


def _capability(gpu: Gpu) -> int:
    """An order for "the most capable" GPU of one vendor: compute capability, gfx number, else 0."""
    if gpu.sm is not None:
        return gpu.sm
    return int(gpu.gfx[3:], 16) if gpu.gfx and all(c in "0123456789abcdef" for c in gpu.gfx[3:]) else 0


def _releases_between(matrix: Matrix, older: Release, newer: Release) -> int:
    return _index(matrix, older) - _index(matrix, newer)


def _index(matrix: Matrix, release: Release) -> int:
    return next(i for i, r in enumerate(matrix.releases) if r.version == release.version)


def _preference(chosen: Verdict, other: Verdict) -> str:
    if chosen.native and not other.native:
        return "the driver supports it natively"
    if cuda_version(chosen.variant) and cuda_version(other.variant):
        return "release default or newer CUDA"
    if chosen.env == {} and other.env:
        return "no override needed"
    return "newer"


def _needed_by(requirements: Sequence[Wanted], names: set[str]) -> set[str]:
    """``names`` and the requirements a compiled lock says only they need (``# via torch``, ``# via sympy`` where
    sympy is torch's), transitively: what the torch family needs, not what needs torch."""
    found = set(names)
    growing = True
    while growing:
        more = {w.name for w in requirements if w.name and w.via and w.name not in found
                and all(v.lower().replace("_", "-") in found for v in w.via)}
        found |= more
        growing = bool(more)
    return found


def resolve(machine: Machine, request: Request, matrix: Matrix) -> Plan:
    """Choose torch release + wheel variant for ``machine``; see the module docstring for the steps.

    What a requested package was built for without declaring it is a preference: the plan that honours it is
    taken unless it has no build, or none on a GPU the plan without it uses; then that plan, whose warnings say
    which package meets another torch (``built-for-another-torch``)."""
    search = Search(machine, request, matrix)
    if not any(b.preference() for b in search.bound):
        return search.run()
    try:
        preferred: Plan | None = search.run()
    except InputError:
        preferred = None
    if preferred is not None and preferred.choice is not None and preferred.gpu_accelerated:
        return preferred
    loose = Search(machine, request, matrix)
    loose.strict = False
    other = loose.run()
    if preferred is not None and preferred.choice is not None and not other.gpu_accelerated:
        return preferred
    return other


__all__ = ["Search", "resolve"]
