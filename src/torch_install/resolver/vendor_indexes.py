"""The search's step for builds on a GPU vendor's own index (``vendor_builds.py``): where PyTorch's builds cannot
serve a vendor's GPU (AMD on Windows, a gfx target PyTorch's ROCm builds lack, a Jetson on its L4T stack), or
where the user asks for the vendor's build, the newest vendor build that installs here and has code for the GPUs.

A build has code for a GPU when its targets on the platform list the GPU's architecture (its vendor's
``arch_field``: a gfx target, a compute capability) exactly: a Jetson index lists what its builds compile, and an
sm_80 or sm_86 kernel is not taken to run on Orin's sm_87. Each served architecture is installed by its device
extra where the index has them (``torch[device-gfx1100]``); a GPU whose architecture is unknown takes the
all-devices extra. A target the vendor rates below its top support level is a ``vendor-support-level`` warning.
"""

from __future__ import annotations

from types import MappingProxyType

from ..machine import Gpu
from ..records import Record
from ..vendors import Vendor
from ..versions import numeric_key
from .matrix import Release, version_key
from .plan import Choice, Device, Plan, VendorSource
from .rules import Blocker, gates
from .vendor_builds import VendorBuild, VendorBuilds, load_vendor_builds

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from .search_state import Search

DISTRIBUTION = "vendor-index"
OS_NAMES = {"linux": "Linux", "windows": "Windows", "macos": "macOS"}
SETTLED = ("verified", "source-file", "maintainer-statement")  # what a choice may rest on without a note


class Fit(Record):
    """What one build has code for among the GPUs: (GPU, architecture, support level) each, the GPUs it has no
    code for, and those of unknown architecture."""

    build: VendorBuild
    served: tuple[tuple[Gpu, str, str | None], ...]
    unserved: tuple[Gpu, ...]
    unknown: tuple[Gpu, ...]


def as_release(build: VendorBuild) -> Release:
    """The build as a matrix release, so the common gates (its Pythons) read it."""
    return Release(version=build.torch or "nightly", date=build.date, python=build.python,
                   variant_lists=MappingProxyType({p: (build.variant,) for p in build.python}),
                   variants_confidence=build.confidence,
                   companions=MappingProxyType({k: v for k, v in build.packages.items() if k != "torch"}),
                   confidence=build.confidence)


def vendor_builds_of(search: Search) -> VendorBuilds:
    """The table the search reads (the matrix's, else the embedded one), at the mirrors the request names."""
    table = search.matrix.vendor_builds or load_vendor_builds()
    return table.with_urls(dict(search.request.vendor_indexes))


def fit_of(build: VendorBuild, platform: str, gpus: list[Gpu], field: str) -> Fit:
    targets = build.targets.get(platform, MappingProxyType({}))
    served, unserved, unknown = [], [], []
    for gpu in gpus:
        arch = getattr(gpu, field)
        if not arch:
            unknown.append(gpu)
        elif arch in targets:
            served.append((gpu, arch, targets[arch]))
        else:
            unserved.append(gpu)
    return Fit(build, tuple(served), tuple(unserved), tuple(unknown))


def keeps_out(search: Search, table: VendorBuilds, build: VendorBuild) -> Blocker | None:
    """Why the build does not install here for this request (None: it does): the request's versions, a
    requested companion it lacks, the packages built against torch (none has a build for a vendor index; one with
    no wheel for the platform at all is left out, and keeps out nothing), its Pythons, or, on a Jetson, the L4T
    release and CUDA its index is for."""
    index = build.vendor_index
    wanted = [name for name in search.plan.companions if name not in build.packages]
    if wanted:
        return Blocker("no-gpu-variant-for-version", f"{index.name} has no {', '.join(wanted)} for torch "
                                                     f"{build.torch or 'nightly'}")
    if build.torch and not search.req.torch.contains(build.packages["torch"], prereleases=True):
        return Blocker("no-gpu-variant-for-version", f"torch {build.torch} is not what was asked "
                                                     f"({search.req.torch})")
    for name, spec in (*search.req.companions.items(), *search.req.limits.items()):
        version = build.packages.get(name, "")
        if version and str(spec) and not spec.contains(version, prereleases=True):
            return Blocker("no-gpu-variant-for-version", f"{name} {version} is not what was asked ({spec})")
    bound = [b.text for b in search.bound if b.package.constrains_torch and not b.none_for(search.platform)]
    if bound:
        return Blocker("constrained-by", f"{', '.join(bound)} has no build for {index.name}")
    machine = search.machine
    if index.l4t and machine.jetson:
        major = machine.jetson.split(".")[0]
        if major not in index.l4t:
            return Blocker("platform-unsupported", f"{index.name} is for L4T {', '.join(index.l4t)}, not "
                                                   f"L4T {machine.jetson}")
        ships = table.cuda_of_l4t(machine.jetson)
        if index.cuda and ships and numeric_key(ships) != numeric_key(index.cuda):
            return Blocker("platform-unsupported", f"{index.name} is built with CUDA {index.cuda}; L4T "
                                                   f"{machine.jetson} ships CUDA {ships}")
    blockers = gates(as_release(build), search.platform, machine)
    if blockers:
        first = blockers[0]
        return first._replace(reason=first.reason.replace(f"torch {as_release(build).version} ",
                                                          f"torch {build.torch} from {index.name} ", 1))
    return None


def vendor_build_plan(search: Search, row: Vendor, gpus: list[Gpu], why: str,
                      newest: tuple[str, str] | None = None, variant: str | None = None) -> Plan | str:
    """The plan of the newest build on one of ``row``'s indexes that installs here and has code for the most of
    ``gpus``; else one line saying why none does (each build's reason is in the plan's rejected list). ``newest``:
    the warning code and words of why the newest matching release of PyTorch's index does not serve the GPUs, said
    when the vendor's build is older. ``variant``: only the builds of that variant (a forced one)."""
    table = vendor_builds_of(search)
    platform = search.platform
    fits: list[Fit] = []
    kept_out: list[Blocker] = []
    builds = [b for b in table.of_vendor(row.name, platform, search.request.channel)
              if variant is None or b.variant == variant]
    for build in builds:
        blocker = keeps_out(search, table, build)
        where = f"{build.variant} rejected: {build.vendor_index.name}"
        if blocker is not None:
            kept_out.append(blocker)
            search.plan.reject(build.variant, build.torch or search.request.channel, f"{where}: {blocker.reason}")
            continue
        fit = fit_of(build, platform, gpus, row.arch_field)
        if fit.served or fit.unknown:
            fits.append(fit)
            continue
        listed = " ".join(sorted(build.targets.get(platform, {})))
        search.plan.reject(build.variant, build.torch or search.request.channel,
                           f"{where}: no code for {', '.join(g.label_with_arch for g in gpus)} (builds {listed})")
    if fits:
        best = max(fits, key=lambda f: len(f.served) + len(f.unknown))  # a tie keeps the newest
        return _plan(search, table, row, best, why, newest)
    if not builds:
        return f"{row.brand} publishes no builds for {platform} on an index of its own in this tool's data"
    if len(kept_out) == len(builds):  # what the machine could change first, then what it cannot
        order = ("python-unsupported", "no-gpu-variant-for-version", "constrained-by", "platform-unsupported")
        return min(kept_out, key=lambda k: order.index(k.code) if k.code in order else len(order)).reason
    names = " and ".join(sorted({b.vendor_index.name for b in builds}))
    return f"the builds of {names} have no code for {', '.join(g.label_with_arch for g in gpus)}"


def choice_of(search: Search, fit: Fit) -> Choice:
    """The choice of a fitting build: its packages (torch and the requested companions) as its index names them,
    the device extras of the architectures it serves (the all-devices extra for a GPU of unknown architecture),
    which GPUs each serves, and the index it comes from."""
    build, index = fit.build, fit.build.vendor_index
    devices = []
    for arch in dict.fromkeys(arch for _, arch, _ in fit.served):
        level = next(lv for _, a, lv in fit.served if a == arch)
        devices.append(Device(index.extra_for(arch), arch, tuple(g.label for g, a, _ in fit.served if a == arch),
                              level))
    extras = [d.extra for d in devices if d.extra]
    if fit.unknown and index.all_extra:
        extras = [index.all_extra]
        devices.append(Device(index.all_extra, None, tuple(g.label for g in fit.unknown), None))
    names = ["torch", *(n for n in search.plan.companions if n != "torch")]
    return Choice(variant=build.variant, torch=build.torch, index_url=index.url,
                  packages=MappingProxyType({name: build.packages[name] for name in names}),
                  distribution=DISTRIBUTION,
                  vendor_index=VendorSource(index.id, index.vendor, index.name, index.channel, index.confidence),
                  extras=MappingProxyType({name: tuple(extras) for name in names
                                           if extras and name in index.extra_packages}),
                  devices=tuple(devices))


def _plan(search: Search, table: VendorBuilds, row: Vendor, fit: Fit, why: str, newest: tuple[str, str] | None
          ) -> Plan:
    build, index, plan = fit.build, fit.build.vendor_index, search.plan
    choice = choice_of(search, fit)
    plan.gpu_wanted = True
    plan.reasons.append(why)
    for device in choice.devices:
        rating = table.level(device.support)
        rated = f", {rating.text} on {OS_NAMES.get(search.os, search.os)}" if rating else ""
        served = [g for g, a, _ in fit.served if a == device.arch] if device.arch else list(fit.unknown)
        labels = ", ".join(g.label_with_arch if device.arch else f"{g.label} (architecture unknown)" for g in served)
        what = f"{device.extra} for" if device.extra else "kernels for"
        plan.reasons.append(f"{build.variant} from {index.name}: {what} {labels}{rated}")
    _warn(search, table, row, fit, choice)
    _notes(search, fit, list(choice.packages))
    if newest and plan.newest is not None and build.torch and \
            version_key(build.torch) < version_key(plan.newest.version):
        plan.warn(newest[0], f"{newest[1]}; the newest build on {index.name} that serves it: torch {build.torch}",
                  "newest")
    left_out = []  # requested packages built against torch with no wheel for the platform: named, left out
    for bound in search.bound:
        if bound.none_for(search.platform):
            why = bound.pick(as_release(build), build.variant, search.machine)[1]
            left_out.append(plan.leave_out(bound, why, f"{build.torch or search.request.channel}+{build.variant}"))
    return plan.finish(as_release(build), build.variant, True, choice=choice._replace(companions=tuple(left_out)))


def _warn(search: Search, table: VendorBuilds, row: Vendor, fit: Fit, choice: Choice) -> None:
    """The warnings about a chosen vendor build: a served target its vendor rates below its top level
    (``vendor-support-level``), GPUs it has no code for, GPUs of unknown architecture, a Jetson index chosen without
    the L4T release, an integrated GPU."""
    build, index, plan = fit.build, fit.build.vendor_index, search.plan
    top = table.level(table.top_level())
    where = OS_NAMES.get(search.os, search.os)
    for device in choice.devices:
        level = table.level(device.support)
        if level is not None and top is not None and level.id != top.id:
            plan.warn("vendor-support-level", f"{row.brand} rates {device.arch} ({', '.join(device.gpus)}) on "
                      f"{where} \"{level.text}\", below \"{top.text}\" ({level.confidence}: "
                      f"{_LEVEL_WORDS.get(level.id, 'not tested in its release process')})")
    if fit.unserved:
        labels = ", ".join(g.label_with_arch for g in fit.unserved)
        plan.warn("mixed-gpus", f"torch {build.torch or 'nightly'}+{build.variant} from {index.name} has no code for "
                                f"{labels}: those GPUs are not used")
    if fit.unknown:
        plan.warn("gpu-arch-unknown", f"{row.arch_word} unknown for {', '.join(g.label for g in fit.unknown)}: "
                                      + (f"{index.all_extra} installs the code of every device {index.name} has"
                                         if index.all_extra else "not checked against the build's targets"))
    if index.l4t and not search.machine.jetson:
        plan.warn("driver-unknown", f"L4T release unknown: {index.name} is for L4T {', '.join(index.l4t)}"
                                    + (f" (CUDA {index.cuda})" if index.cuda else "") + "; another JetPack takes "
                                    "another build (/etc/nv_tegra_release names the release: the jetson field of the "
                                    "profile)")
    used = [g for g, _, _ in fit.served] + list(fit.unknown)
    if used and all(g.integrated for g in used):
        plan.warn("integrated-gpu-only", f"{', '.join(g.label_with_arch for g in used)} is an integrated GPU: it "
                                         "shares system memory with the CPU")


_LEVEL_WORDS = {
    "sanity-tested": "some light testing, not its release process",
    "build-passing": "the packages install, but device enumeration, kernel launch or library loads may fail",
}


def _notes(search: Search, fit: Fit, names: list[str]) -> None:
    """What the choice rests on that its sources do not settle, and what the wheels need besides."""
    build, index = fit.build, fit.build.vendor_index
    plan = search.plan
    versions = ", ".join(f"{name} {build.packages[name]}" for name in names if build.packages.get(name))
    if build.confidence not in SETTLED and versions:
        plan.note(f"that {index.name} has {versions} is {build.confidence} ({build.date}): --online reads the "
                  "index")
    if index.confidence not in SETTLED:
        plan.note(f"that {index.url} is {index.name} is {index.confidence}" + (f": {index.note}" if index.note
                                                                                else ""))
    if build.targets_confidence not in SETTLED:
        plan.note(f"the targets of {build.variant} from {index.name} are {build.targets_confidence}"
                  + (f": {build.targets_note}" if build.targets_note else ""))
    if build.python_confidence not in SETTLED:
        plan.note(f"the Pythons of {build.variant} from {index.name} are {build.python_confidence}")
    for need in build.needs:
        plan.note(f"the wheels of {index.name} need {need}, which pip does not install")


def declined_text(search: Search, row: Vendor) -> str:
    """What remains for a vendor's GPU no build serves (the vendor table's words)."""
    return vendor_builds_of(search).declined.get(row.name, "")
