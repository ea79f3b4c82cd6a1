"""The platforms with rules of their own: macOS (the default index's wheels, MPS by macOS version, Intel Macs
and Rosetta), Linux on musl (no wheels) and Jetson (its L4T driver stack, or the SBSA stack from JetPack 7).

Each rule is a function of the search (``choose.Search``): it writes to the search's plan and returns the Plan
when it decides one, else None.
"""

from __future__ import annotations

from .. import vendors
from ..errors import InputError
from ..machine import Gpu, Machine
from ..versions import numeric_key
from .matrix import Release
from .plan import Need, Plan
from .rules import WEAK_CONFIDENCE, Blocker, policy_of
from .vendor_indexes import vendor_build_plan

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from .search_state import Search

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


def libc_and_driver_stack(search: Search) -> Plan | None:
    """Step 3 of the search: musl is declined; a Jetson on its own L4T stack is declined for the index's wheels;
    one on the SBSA stack is noted, its driver compared by branch (the search's machine is changed for that)."""
    m = search.machine
    musl = musl_of(m)
    if musl:
        return search.decline(Blocker("platform-unsupported", f"{musl}: PyTorch publishes no musllinux wheels; "
                                      "use a glibc-based system or image",
                                      Need("libc", "musl", "glibc", "a glibc-based system or image")))
    if jetson_module(m) is None:
        return None
    if not jetson_sbsa(search):
        return jetson_plan(search)
    search.plan.note(f"Jetson{f' L4T {m.jetson}' if m.jetson else ''} runs the SBSA CUDA stack: PyTorch's aarch64 "
                     f"CUDA builds apply ({search.matrix.jetson.get('conf', 'inferred')})")
    if m.nvidia_driver and "." in m.nvidia_driver:
        branch = m.nvidia_driver.split(".")[0]
        search.plan.note(f"Jetson driver {m.nvidia_driver}: a Jetson's driver version follows its L4T release, not "
                         f"the desktop driver releases, so it is compared by its branch, {branch}")
        search.machine = m._replace(nvidia_driver=branch)
        search.plan.quiet.add(f"driver {branch} is given as its branch")
    return None


# -- Jetson -------------------------------------------------------------------------------------------------

def jetson_module(machine: Machine) -> str | None:
    """The Jetson module the machine is (an L4T release, or an NVIDIA GPU of a Jetson family), or None."""
    for g in machine.gpus:
        if g.vendor == "nvidia" and g.family and g.family.startswith("jetson-"):
            return g.family
    if machine.jetson:
        return "jetson"
    return None


def jetson_sbsa(search: Search) -> bool:
    """Jetson on the SBSA CUDA stack: an L4T release from ``sbsa_from_l4t`` (38) on, else (L4T unknown) a
    Jetson GPU from ``sbsa_from_sm`` (sm_110, Thor, which ships with L4T 38) on."""
    l4t = search.machine.jetson
    if l4t:
        return numeric_key(l4t) >= numeric_key(search.matrix.jetson.get("sbsa_from_l4t", "38"))
    from_sm = int(search.matrix.jetson.get("sbsa_from_sm", "110"))
    return any(g.sm is not None and g.sm >= from_sm for g in search.machine.gpus
               if g.vendor == "nvidia" and (g.family or "").startswith("jetson-"))


def jetson_plan(search: Search) -> Plan:
    """A Jetson on its L4T stack: none of the PyTorch index's builds; the build on the Jetson index of its JetPack
    and CUDA where one installs here (a CPU build when asked for), else what it would take."""
    l4t = search.machine.jetson
    where = search.matrix.jetson.get("wheels", "NVIDIA's Jetson wheels")
    sbsa = search.matrix.jetson.get("sbsa_from_l4t", "38")
    if search.variant == "cpu":
        releases = search.candidates()
        search.plan.reasons.append("variant cpu requested on Jetson")
        return search.cpu(releases[0]) if releases else search.plan.finish(None, None, False)
    wanted = search.wanted()[:1]  # none: a release only a vendor's index has
    nvidia = vendors.vendor("nvidia")  # Jetson modules are NVIDIA's
    assert nvidia is not None
    stack = f"Jetson L4T {l4t}" if l4t else "Jetson"
    for newest in wanted:
        for v in policy_of(nvidia).variants(newest, search.platform):
            search.plan.reject(v, newest.version, f"{v} rejected: built for SBSA CUDA, not the {stack} driver stack")
    search.plan.gpu_wanted = True
    stack_blocker = Blocker(
        "platform-unsupported", f"Jetson (L4T {l4t or 'unknown'}): PyTorch's index wheels do not run on the Jetson "
        "driver stack",
        Need("os", f"L4T {l4t}" if l4t else "Jetson", f"L4T >={sbsa}",
             f"L4T ≥ {sbsa} (JetPack 7, whose SBSA CUDA stack runs PyTorch's aarch64 builds; "
             f"{search.matrix.jetson.get('conf', 'inferred')})"))
    gpus = [g for g in search.machine.visible_gpus if g.vendor == "nvidia"] or [Gpu("nvidia", "Jetson GPU",
                                                                                   integrated=True)]
    for blocker in (b for newest in wanted for b in search.gates(newest)):  # what else keeps the newest out
        if blocker.code == "python-unsupported":
            search.plan.block(blocker)
    search.plan.need(stack_blocker.need)
    found = vendor_build_plan(search, nvidia, gpus, f"{stack} runs its own CUDA stack, which PyTorch's index "
                              "wheels do not run on: a Jetson build of its JetPack",
                              (stack_blocker.code, stack_blocker.reason))
    if not isinstance(found, str):
        return found
    return search.decline(stack_blocker._replace(
        reason=f"{stack_blocker.reason}; {found}: install {where} (or request variant cpu for a CPU-only build)"))


# -- macOS --------------------------------------------------------------------------------------------------

def apple(search: Search) -> Plan:
    """macOS: the default index's wheel; MPS on Apple silicon when the release's MPS runs on its macOS version."""
    plan, machine, matrix = search.plan, search.machine, search.matrix
    if machine.rosetta:
        plan.warn("platform-unsupported", "this Python runs under Rosetta (x86_64): use a native arm64 Python "
                                          "to get current torch releases with MPS")
    foreign = [g.label_with_arch for g in machine.visible_gpus if (row := vendors.vendor(g.vendor)) and row.kind]
    if machine.nvidia_driver and not machine.gpus_of("nvidia"):
        foreign.append(f"NVIDIA driver {machine.nvidia_driver}")
    if foreign:  # a Mac Pro's card, an eGPU, NVIDIA's web driver of macOS 10.13: no macOS build of torch uses it
        plan.warn("gpu-arch-unsupported", f"{', '.join(foreign)}: no PyTorch build for macOS uses NVIDIA, AMD or "
                                          "Intel GPUs; the default index's build runs on the CPU (and MPS on Apple "
                                          "silicon)")
    if search.platform == "macos_x86_64":
        intel_mac = [r for r in matrix.releases if r.variants("macos_x86_64")]
        newest = matrix.releases[0]
        if search.req.pinned and not any(search.matches(r) for r in intel_mac):
            plan.warn("platform-unsupported", f"torch {intel_mac[0].version} is the last release with Intel "
                                              "Mac (x86_64) wheels; the requested version has none")
            return plan.finish(None, None, False)
        if search.matches(newest) and newest not in intel_mac:
            plan.reasons.append(f"torch ≥ {_next_minor(intel_mac[0])} has no Intel Mac (x86_64) wheels: "
                                f"{intel_mac[0].version} is the last")
    releases = search.candidates()
    if not releases:
        return plan.finish(None, None, False)
    if search.variant and search.variant not in ("default", "cpu") and not search.request.variant:  # a pin's label
        plan.warn("platform-unsupported", f"{search.pinned()}: macOS has no {search.variant} build of torch"
                                          + search.would_run())
        return plan.finish(None, None, False)
    if search.variant and search.variant not in ("default", "cpu"):
        raise InputError(f"variant {search.variant} does not exist for {search.platform}: macOS wheels come "
                         "from the default index (variant default)")
    if search.platform != "macos_arm64":
        plan.reasons.append("macOS: the default index's wheel (CPU)")
        return plan.finish(releases[0], "default", False)
    plan.gpu_wanted = True
    chosen = next((r for r in releases if mps_runs(machine, r)), None)
    newest = releases[0]
    if chosen is not newest:
        need = newest.mps_macos[0] if newest.mps_macos else "?"
        text = (f"torch {newest.version}'s MPS backend needs macOS ≥ {need}, found {machine.os_version}"
                + (f" ({newest.mps_macos[1]})" if newest.mps_macos and newest.mps_macos[1] in WEAK_CONFIDENCE
                   else ""))
        plan.need(Need("macos", machine.os_version, f">={need}", f"macOS ≥ {need}"))
        if chosen is None:
            plan.warn("platform-unsupported", f"{text}, and no matching release's MPS runs here: the build runs on "
                                              "the CPU only")
            plan.reasons.append("macOS: the default index's wheel (CPU only: MPS needs a newer macOS)")
            return plan.finish(newest, "default", False)
        plan.warn("platform-unsupported", f"{text}; newest release whose MPS runs here: {chosen.version}", "newest")
    plan.reasons.append("macOS: the default index's wheel (CPU + MPS on Apple silicon)")
    return plan.finish(chosen, "default", True)


def mps_runs(machine: Machine, release: Release) -> bool:
    """Whether the release's MPS backend runs on the machine's macOS (unknown macOS or floor: assumed so)."""
    if not release.mps_macos or not machine.os_version:
        return True
    return numeric_key(machine.os_version) >= numeric_key(release.mps_macos[0])


def _next_minor(release: Release) -> str:
    major, minor = release.version.split(".")[:2]
    return f"{major}.{int(minor) + 1}"
