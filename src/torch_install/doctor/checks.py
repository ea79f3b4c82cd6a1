"""The doctor's checks: each a small function from a :class:`Context` to findings with a stable code.

A finding names what is wrong (``title``), why the doctor thinks so (``evidence``, each line with its
source) and what fixes it (``fix``). A fix of :data:`INSTALL_FIX` means "the install command of the plan
for this machine"; ``doctor.diagnose`` fills it in. Release facts (driver floors, arch and gfx lists,
companion versions) come from the compatibility matrix, never from this module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from functools import cached_property

from .. import vendors
from ..environment.dists import Dist, record_paths
from ..machine import Machine
from ..markers import simple_marker
from ..package_data import load_json
from ..project.requirement_name import NAME_AND_EXTRAS
from ..records import Record
from ..resolver.matrix import Matrix
from ..resolver.request import COMPANIONS, PACKAGES, canonical_name
from ..resolver.rules import companion_goes_with, hsa_override, runs_on
from ..resolver.variants import cuda_version
from ..versions import numeric_key, release_part
from ..wheel_tags import wheel_abis, wheel_glibc
from .fix import uninstall_command
from .flavour import Flavour, VendorInstall, built_for, companion_flavour, torch_flavour, vendor_install
from .inspect import Installed

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..probe import Probe
    from ..resolver.plan import Plan

SEVERITIES = ("error", "warning", "info")
INSTALL_FIX = "<install>"  # placeholder: the plan's install command

# The doctor's finding codes, the one list the code reads (extend, never rename; docs/doctor-json.md documents
# each, and a Finding with another code is a bug).
CODES = (
    "no-torch", "broken-install", "cpu-build-on-gpu-machine", "cuda-build-driver-too-old", "gpu-arch-not-in-build",
    "rocm-gfx-not-in-build", "companion-mismatch", "duplicate-torch-install", "nvidia-libs-shadowed",
    "visible-devices-hide-all", "python-unsupported", "glibc-too-old", "rosetta-python", "driver-library-mismatch",
    "wsl-gpu-driver-missing", "xpu-runtime-missing", "cuda-wheel-on-cpu-machine", "orphaned-cuda-libraries",
    "disk-space-low", "import-torch-failed", "import-torch-crashed", "import-torch-hung", "gpu-unavailable-at-runtime",
    "kernel-failed", "nvidia-libs-missing", "nvidia-libs-stale-major",
    "cuda-compat-forward", "install-guard-missing", "install-guard-stale",
    "conda-cpu-build-on-gpu-machine", "conda-cuda-version-too-new", "conda-gpu-arch-not-in-build",
    "conda-companion-cpu-build", "conda-companion-mismatch", "pip-torch-over-conda-torch",
    "vendor-build", "vendor-device-missing", "vendor-build-expected",
)

# Linux directories where the driver's user-space libraries (libcuda, NVML, Level Zero) live.
DRIVER_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                   "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib")
# CUDA libraries the pip nvidia-* packages provide; a copy earlier on the loader path can win.
CUDA_LIBS = re.compile(r"^lib(cudnn|cublas|cublasLt|nvJitLink|nvrtc|cudart|cusparse|cusparseLt|cufft|curand|"
                       r"cusolver|nccl|cupti|nvToolsExt|cufile)(_[a-z_]+)?\.so(\.[0-9]+)*$")


class Finding(Record):
    code: str  # one of CODES (``checked`` says so)
    severity: str  # error | warning | info
    title: str
    evidence: tuple[str, ...] = ()
    fix: str | None = None  # a command, an instruction, or INSTALL_FIX
    rebuild: tuple[str, ...] = ()  # packages whose installed build is the wrong one: the fix installs them again,
    # the same version included (pip and uv keep an installed version whatever its build)
    uninstall: str | None = None  # the uninstall command the doctor built, which ``--fix`` runs (``fix`` may say
    # more: what to do after it)

    def checked(self) -> Finding:
        """Itself, or ValueError for a code or severity the contract does not have."""
        if self.code not in CODES:
            raise ValueError(f"unknown doctor finding code {self.code!r} (add it to CODES and docs/doctor-json.md)")
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown finding severity {self.severity!r}")
        return self

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code, "severity": self.severity, "title": self.title,
                "evidence": list(self.evidence), "fix": self.fix}


class Context:
    """Everything the checks look at. ``probe`` reads the machine's files and environment (this host or a
    --sysroot tree); it is None for a --target profile, whose files the doctor cannot see."""

    def __init__(self, machine: Machine, installed: Installed, matrix: Matrix, probe: Probe | None = None,
                 environ: Mapping[str, str] | None = None,
                 plan_for: Callable[[tuple[str, ...]], Plan] | None = None) -> None:
        self.machine, self.installed, self.matrix, self.probe = machine, installed, matrix, probe
        self.environ: Mapping[str, str] = environ if environ is not None else {}
        self.plan_for = plan_for  # packages -> plan for this machine

    @cached_property
    def torch(self) -> Flavour | None:
        return torch_flavour(self.installed)

    @cached_property
    def vendor_install(self) -> VendorInstall | None:
        """The vendor build (a build of a vendor's own index) the installed torch is, or None."""
        return vendor_install(self.installed, self.machine.platform, self.matrix.vendor_builds)

    @cached_property
    def plan(self) -> Plan | None:
        """The plan for this machine with no version pinned: what a fresh install would get."""
        return self.plan_for(("torch",)) if self.plan_for else None

    @cached_property
    def torch_cuda_pins(self) -> list[LibraryPin]:
        """torch's pins on nvidia-*/cuda-toolkit packages for the inspected interpreter (``cuda_library_pins``)."""
        dist = self.installed.dist("torch")
        return cuda_library_pins(self.installed, dist) if dist is not None else []

    @property
    def os(self) -> str | None:
        return self.machine.os

    def env(self, name: str) -> str | None:
        return self.environ.get(name)

    def source(self, field_name: str) -> str:
        where = self.machine.sources.get(field_name)
        return f" (from {where})" if where else ""


def _conf(confidence: str) -> str:
    return "" if confidence == "verified" else f" [{confidence}]"


# --- install state ----------------------------------------------------------------------------------

def check_no_torch(ctx: Context) -> list[Finding]:
    if ctx.installed.dist("torch") or "torch" in ctx.installed.packages:
        return []
    where = ", ".join(ctx.installed.interpreter.site_packages) or ctx.installed.interpreter.prefix
    evidence = [f"no torch distribution or package on the import path of {ctx.installed.interpreter.executable}",
                f"site-packages: {where}"]
    plan = ctx.plan
    if plan is not None and plan.choice is not None:
        evidence.append(f"plan for this machine: torch {plan.choice.torch} ({plan.choice.variant})")
    return [Finding("no-torch", "warning", "PyTorch is not installed in this environment", tuple(evidence),
                    INSTALL_FIX)]


def check_broken_install(ctx: Context) -> list[Finding]:
    findings: list[Finding] = []
    for package in PACKAGES:
        dist = ctx.installed.dist(package)
        evidence: list[str] = []
        if dist is not None:
            evidence += [f"{dist.path}: {problem}" for problem in dist.problems]
            if dist.kind != "egg-link" and package not in ctx.installed.packages:
                evidence.append(f"{dist.path} is installed but no {package}/ package with __init__.py is on the path "
                                "(half-deleted)")
        elif package in ctx.installed.packages:
            evidence.append(f"{ctx.installed.packages[package]} exists but no {package} dist-info describes it")
        build = ctx.installed.builds.get(package)
        if build is not None and build.problem:
            evidence.append(f"{build.path}: {build.problem}")
        if evidence:
            findings.append(Finding("broken-install", "error", f"the {package} install is damaged", tuple(evidence),
                                    INSTALL_FIX))
    return findings


def check_duplicate_torch_install(ctx: Context) -> list[Finding]:
    installed = ctx.installed
    dists = installed.all_named("torch")
    evidence: list[str] = []
    severity = "warning"
    if len(dists) > 1:
        severity = "error"
        evidence += [f"{d.path} (version {d.version}, installer {d.installer or 'unknown'})" for d in dists]
        evidence.append(f"`import torch` loads {installed.packages.get('torch', 'nothing')}; "
                        "pip and uv see a different subset")
        user = installed.interpreter.user_site
        if user and any(d.location == user for d in dists):
            evidence.append(f"a copy in the user site {user} shadows the environment's own")
    elif dists and "torch" in installed.packages:
        package_dir = installed.packages["torch"]
        if dists[0].kind != "egg-link" and not package_dir.startswith(dists[0].location):
            severity = "error"
            evidence.append(f"`import torch` loads {package_dir}, but the installed distribution is {dists[0].path}")
    evidence += [f"{path}: left over from an interrupted uninstall" for path in installed.leftovers]
    if not evidence:
        return []
    fix = (f"remove the extra copies (`{uninstall_command(installed, ['torch'])}` removes the first one on the path; "
           "delete '~'-prefixed leftovers), then run: " + INSTALL_FIX)
    return [Finding("duplicate-torch-install", severity, "more than one PyTorch install is visible", tuple(evidence),
                    fix)]


# a Requires-Dist line on torch itself: "torch==2.9.1", "torch (==2.11.0)", "torch>=2.14.0; extra == 'x'"
_TORCH_REQUIREMENT = re.compile(r"^\s*torch\s*(?:\[[^\]]*\])?\s*\(?\s*(?P<spec>[<>=!~][^;()]*?)?\s*\)?\s*"
                                r"(?:;(?P<marker>.*))?$", re.IGNORECASE)


def check_companion_mismatch(ctx: Context) -> list[Finding]:
    torch = ctx.torch
    if torch is None or conda_managed(ctx):
        return []
    findings: list[Finding] = []
    for package in COMPANIONS:
        dist = ctx.installed.dist(package)
        if dist is None or dist.kind == "egg-link":
            continue
        companion = companion_flavour(package, dist, ctx.installed.builds.get(package))
        evidence: list[str] = []
        for line in dist.requires:  # only the lines on torch are read (packaging's requirement parser is not needed)
            found = _TORCH_REQUIREMENT.match(line)
            if not found or "extra" in (found["marker"] or ""):
                continue
            if (found["spec"] or "").replace(" ", "") == "==" + torch.version.split("+")[0]:
                continue  # the common case, settled without packaging's specifiers
            from packaging.specifiers import InvalidSpecifier, SpecifierSet
            from packaging.version import InvalidVersion, Version

            installed = ctx.installed.dist("torch")  # its local label too: a pin may name it (+rocm10.1.0)
            try:
                ok = SpecifierSet(found["spec"]).contains(Version(installed.version if installed else torch.version),
                                                          prereleases=True)
            except (InvalidSpecifier, InvalidVersion):
                continue
            if not ok:
                evidence.append(f"{package} {dist.version} requires torch{found['spec'].replace(' ', '')} but torch is "
                                f"{torch.version}")
        if not evidence and not any("torch" in r.split(";")[0].lower() for r in dist.requires) and \
                ctx.matrix.has_release(torch.version):
            release = ctx.matrix.release(torch.version)
            if not companion_goes_with(ctx.matrix, release, package, companion.version):
                expected = " or ".join(ctx.matrix.companion_versions(package, release))
                evidence.append(f"torch {torch.version} goes with {package} {expected}; found {companion.version}")
        flavour_problem = _flavour_clash(torch, companion)
        if flavour_problem:
            evidence.append(flavour_problem)
        if evidence:
            evidence.append(f"torch build: {torch.evidence}")
            findings.append(Finding("companion-mismatch", "error", f"{package} does not match the installed torch",
                                    tuple(evidence), INSTALL_FIX, (package,) if flavour_problem else ()))
    return findings + _built_mismatches(ctx, torch)


def _built_mismatches(ctx: Context, torch: Flavour) -> list[Finding]:
    """Packages built against torch (the table's: xformers, the PyG libraries, flash-attn …) whose build names
    another torch minor or another variant than the installed torch's (``flavour.built_for``)."""
    from ..resolver.companion_facts import load_packages

    table = load_packages()
    findings = []
    for dist in ctx.installed.dists:
        if dist.name not in table or dist.kind != "dist-info" or ctx.installed.dist(dist.name) is not dist:
            continue
        found = built_for(dist)
        if found is None:
            continue
        built, where = found
        evidence = []
        if built.torch and ".".join(torch.version.split(".")[:2]) != built.torch:
            evidence.append(f"{dist.name} {dist.version} was built for torch {built.torch} ({where}); torch is "
                            f"{torch.version}")
        if built.variant:
            clash = _flavour_clash(torch, Flavour(dist.name, dist.public_version, built.variant, where))
            evidence += [clash] if clash else []
        elif built.cuda is not None and torch.kind != "unknown" and \
                (cuda_version(torch.variant) or (None,))[0] != built.cuda:
            evidence.append(f"{dist.name} was built for CUDA {built.cuda}, torch is a {torch.variant} build ({where})")
        if evidence:
            evidence.append(f"torch build: {torch.evidence}")
            findings.append(Finding("companion-mismatch", "error", f"{dist.name} does not match the installed torch",
                                    tuple(evidence), INSTALL_FIX, (dist.name,)))
    return findings


def _flavour_clash(torch: Flavour, companion: Flavour) -> str | None:
    """Local labels that specifiers (and `pip check`) ignore: cpu vs cuda, or another CUDA major."""
    if companion.kind == "unknown" or torch.kind == "unknown":
        return None
    if companion.kind != torch.kind:
        return (f"{companion.package} is a {companion.variant} build, torch a {torch.variant} build "
                f"({companion.evidence})")
    if torch.kind == "cuda":
        tv, cv = cuda_version(torch.variant), cuda_version(companion.variant)
        if tv and cv and tv != cv:
            return (f"{companion.package} was built for {companion.variant}, torch for {torch.variant} "
                    f"({companion.evidence})")
    if torch.kind == "rocm" and torch.variant != companion.variant:
        return f"{companion.package} was built for {companion.variant}, torch for {torch.variant}"
    return None


# --- does the build fit the hardware ----------------------------------------------------------------

def _gpu_accelerated_plan(ctx: Context) -> bool:
    plan = ctx.plan
    if plan is not None:
        return bool(plan.gpu_accelerated)
    return any(g.vendor in {row.name for row in vendors.with_builds()} for g in ctx.machine.visible_gpus)


def conda_managed(ctx: Context) -> bool:
    """conda (mamba, pixi) installed the torch ``import torch`` loads: the prefix has conda's pytorch record, and
    torch's dist-info (if any) does not say pip or uv. doctor/conda.py judges such a torch with conda-forge's facts;
    the checks here, whose facts are PyTorch's wheels' and whose fixes are pip's, stand aside."""
    conda = ctx.installed.conda
    if conda is None or conda.get("pytorch") is None:
        return False
    dist = ctx.installed.dist("torch")
    return dist is None or (dist.installer or "conda").strip().lower() not in ("pip", "uv")


def check_cpu_build_on_gpu_machine(ctx: Context) -> list[Finding]:
    torch = ctx.torch
    if torch is None or torch.kind != "cpu" or ctx.os == "macos" or conda_managed(ctx) or \
            not _gpu_accelerated_plan(ctx):
        return []
    with_builds = {row.name for row in vendors.with_builds()}
    gpus = [g for g in ctx.machine.visible_gpus if g.vendor in with_builds]
    evidence = [f"torch {torch.version} is a CPU-only build: {torch.evidence}"]
    evidence += [f"GPU: {g.label}" + (f" × {g.count}" if g.count > 1 else "") for g in gpus]
    if ctx.machine.nvidia_driver:
        evidence.append(f"NVIDIA driver {ctx.machine.nvidia_driver}{ctx.source('nvidia_driver')}")
    dist = ctx.installed.dist("torch")
    if dist and dist.installer:
        evidence.append(f"installed by {dist.installer} ({dist.path}/INSTALLER)")
    plan = ctx.plan
    if plan is not None and plan.choice is not None:
        evidence.append(f"the plan for this machine is GPU-accelerated (torch {plan.choice.torch}, "
                        f"{plan.choice.variant})")
    return [Finding("cpu-build-on-gpu-machine", "error", "the installed PyTorch is a CPU-only build on a machine "
                    "with a usable GPU", tuple(evidence), INSTALL_FIX)]


def check_cuda_build_driver_too_old(ctx: Context) -> list[Finding]:
    torch = ctx.torch
    if conda_managed(ctx) or torch is None or torch.kind != "cuda" or ctx.os not in ("linux", "windows"):
        return []
    driver = ctx.machine.nvidia_driver
    cv = cuda_version(torch.variant)
    evidence = [f"torch {torch.version} is a CUDA {cv[0]}.{cv[1]} build: {torch.evidence}"] if cv else []
    too_old = False
    if driver:
        floor = ctx.matrix.cuda_floor(torch.variant, ctx.os)
        family = ctx.matrix.cuda_family(torch.variant)
        if floor and re.match(r"^[0-9]", floor) and numeric_key(driver) < numeric_key(floor):
            too_old = True
            evidence.append(f"CUDA {cv[0] if cv else '?'}.x needs NVIDIA driver ≥ {floor} on {ctx.os}"
                            f"{_conf(family.confidence) if family else ''}")
            evidence.append(f"driver {driver}{ctx.source('nvidia_driver')}")
    api = ctx.machine.cuda_driver_api
    if not too_old and api and cv and int(api.split(".")[0]) < cv[0]:
        too_old = True
        evidence.append(f"the driver supports CUDA up to {api}{ctx.source('cuda_driver_api')}")
    if not too_old:
        return []
    return [Finding("cuda-build-driver-too-old", "error", f"the NVIDIA driver is too old for this CUDA "
                    f"{cv[0] if cv else ''}.x build of torch", tuple(evidence),
                    INSTALL_FIX)]


def check_gpu_arch_not_in_build(ctx: Context) -> list[Finding]:
    torch = ctx.torch
    platform = ctx.machine.platform
    if conda_managed(ctx) or torch is None or torch.kind != "cuda" or platform is None or \
            not ctx.matrix.has_release(torch.version):
        return []
    arch = ctx.matrix.cuda_arch(torch.version, platform, torch.variant)
    if arch is None:
        return []
    findings = []
    for gpu in ctx.machine.gpus_of("nvidia"):
        if not gpu.visible or gpu.sm is None or runs_on(arch, gpu.sm) is not None:
            continue
        sm_list = " ".join(f"sm_{s}" for s in arch.sm)
        ptx = " ".join(f"compute_{p}" for p in arch.ptx) or "no PTX"
        evidence = (f"GPU {gpu.label}: compute capability {gpu.compute_capability} (sm_{gpu.sm})",
                    f"torch {torch.version}+{torch.variant} on {platform} carries {sm_list}; {ptx}"
                    f"{_conf(arch.confidence)}",
                    f"torch build: {torch.evidence}")
        findings.append(Finding("gpu-arch-not-in-build", "error", f"this torch build has no kernels for "
                                f"{gpu.label} (sm_{gpu.sm})", evidence, INSTALL_FIX))
    return findings


def check_rocm_gfx_not_in_build(ctx: Context) -> list[Finding]:
    torch = ctx.torch
    if torch is None or torch.kind != "rocm" or not ctx.matrix.has_release(torch.version):
        return []
    targets = ctx.matrix.arch_targets(torch.version, torch.variant)
    if targets is None or targets.arches is None:
        return []
    override = ctx.env("HSA_OVERRIDE_GFX_VERSION")
    findings = []
    for gpu in ctx.machine.gpus_of("amd"):
        if not gpu.visible or not gpu.gfx or gpu.gfx in targets.arches:
            continue
        aliases = [a for a in ctx.matrix.gfx_aliases.get(gpu.gfx, ()) if a in targets.arches]
        evidence = [f"GPU {gpu.label}: {gpu.gfx}",
                    f"torch {torch.version}+{torch.variant} carries {' '.join(targets.arches)}"
                    f"{_conf(targets.confidence)}"]
        if aliases:
            value = hsa_override(aliases[0])
            evidence.append(f"{gpu.gfx} runs {aliases[0]} code when told to{_conf(ctx.matrix.gfx_aliases_confidence)}")
            if override == value:
                findings.append(Finding("rocm-gfx-not-in-build", "info", f"{gpu.gfx} runs this build through "
                                        f"HSA_OVERRIDE_GFX_VERSION={override}", tuple(evidence)))
                continue
            if override:
                evidence.append(f"HSA_OVERRIDE_GFX_VERSION is set to {override!r}, not {value}")
            findings.append(Finding("rocm-gfx-not-in-build", "error", f"this torch build has no code for {gpu.gfx}; "
                                    "it runs with an override", tuple(evidence),
                                    f"export HSA_OVERRIDE_GFX_VERSION={value}"))
        else:
            findings.append(Finding("rocm-gfx-not-in-build", "error", f"this torch build has no code for {gpu.gfx}",
                                    tuple(evidence), INSTALL_FIX))
    return findings


def check_cuda_wheel_on_cpu_machine(ctx: Context) -> list[Finding]:
    torch = ctx.torch
    if torch is None or not ctx.machine.gpus_known or ctx.os == "macos":
        return []
    if any(g.vendor == "nvidia" for g in ctx.machine.gpus):
        return []
    runtimes = [d for d in _runtime_dists(ctx.installed)]
    size = sum(d.record_size() or 0 for d in runtimes)
    names = ", ".join(d.name for d in runtimes)
    if torch.kind == "cuda":
        evidence = [f"torch {torch.version} is a {torch.variant} build: {torch.evidence}",
                    "no NVIDIA GPU on this machine" + (f" (GPUs: {', '.join(g.label for g in ctx.machine.gpus)})"
                                                       if ctx.machine.gpus else "")]
        if runtimes:
            evidence.append(f"{len(runtimes)} CUDA runtime packages, {size / 1e9:.1f} GB: {names}")
        return [Finding("cuda-wheel-on-cpu-machine", "warning", "a CUDA build of torch on a machine without an "
                        "NVIDIA GPU", tuple(evidence), INSTALL_FIX)]
    if torch.kind in ("cpu", "rocm", "xpu") and runtimes and any(d.name.startswith("nvidia-") for d in runtimes):
        uninstall = uninstall_command(ctx.installed, [d.name for d in runtimes])
        return [Finding("orphaned-cuda-libraries", "info", f"CUDA libraries no installed torch uses "
                        f"({size / 1e9:.1f} GB)", (f"torch is a {torch.variant} build; installed: {names}",),
                        uninstall, uninstall=uninstall)]
    return []


def _runtime_dists(installed: Installed) -> list[Dist]:
    """The CUDA runtime distributions (NVIDIA's registry row's ``runtime_prefixes``) installed, first of each name."""
    prefixes = vendors.NVIDIA.runtime_prefixes
    return [d for d in installed.dists if d.name.startswith(prefixes) and d.kind == "dist-info"
            and installed.dist(d.name) is d]


# --- platform ---------------------------------------------------------------------------------------

def check_python_unsupported(ctx: Context) -> list[Finding]:
    interp = ctx.installed.interpreter
    dist = ctx.installed.dist("torch")
    evidence: list[str] = []
    if dist is not None:
        wanted = f"cp{''.join(interp.version.split('.')[:2])}{'t' if interp.free_threaded else ''}"
        abis = wheel_abis(dist.wheel_tags)
        if abis and interp.implementation == "cpython" and not abis & {wanted, "abi3", "none"}:
            evidence.append(f"{dist.path}/WHEEL: Tag {', '.join(dist.wheel_tags)}; this interpreter is {wanted} "
                            f"(Python {interp.version}{', free-threaded' if interp.free_threaded else ''})")
    plan = ctx.plan
    if plan is not None:
        # a reason the newest release was passed over is not one when a build of another was chosen
        evidence += [w.message for w in plan.warnings if w.code == "python-unsupported"
                     and (w.about == "choice" or plan.choice is None)]
    if not evidence:
        return []
    return [Finding("python-unsupported", "error", f"Python {interp.python} has no matching torch build here",
                    tuple(evidence), "use a Python that torch publishes wheels for (see the evidence), then: "
                    + INSTALL_FIX)]


def check_glibc_too_old(ctx: Context) -> list[Finding]:
    if ctx.os != "linux":
        return []
    evidence: list[str] = []
    if ctx.machine.musl:
        evidence.append(f"this is a musl system (musl {ctx.machine.musl}); torch publishes glibc (manylinux) "
                        "wheels only")
    dist = ctx.installed.dist("torch")
    needed = wheel_glibc(dist.wheel_tags) if dist else None
    newest = ctx.matrix.releases[0].glibc.get(ctx.machine.platform or "") or "2.28"
    glibc = ctx.machine.glibc
    if dist and needed and glibc and numeric_key(glibc) < numeric_key(needed):
        evidence.append(f"{dist.path}/WHEEL: {', '.join(dist.wheel_tags)} needs glibc ≥ {needed}")
        evidence.append(f"glibc {glibc}{ctx.source('glibc')}")
    if not evidence:
        return []
    return [Finding("glibc-too-old", "error", "the C library is too old for the installed torch", tuple(evidence),
                    f"use a distribution with glibc ≥ {newest} (or a manylinux_{newest.replace('.', '_')}-compatible "
                    "container), then: " + INSTALL_FIX)]


def check_rosetta_python(ctx: Context) -> list[Finding]:
    interp = ctx.installed.interpreter
    if ctx.os != "macos":
        return []
    translated = ctx.machine.rosetta or (interp.machine == "x86_64" and ctx.machine.arch in ("arm64", "aarch64"))
    if not translated:
        return []
    last = next((r.version for r in ctx.matrix.releases if r.variants("macos_x86_64")), None)
    evidence = [f"{interp.executable} is an x86_64 Python (platform.machine() = {interp.machine!r})",
                "the Mac has Apple silicon" + ctx.source("rosetta"),
                f"macOS x86_64 torch stopped at {last or 'an old release'} and has no MPS"]
    return [Finding("rosetta-python", "error", "this Python runs under Rosetta on Apple silicon", tuple(evidence),
                    "install an arm64 Python (python.org universal2 installer, `uv python install`, or arm64 "
                    "Homebrew in /opt/homebrew), recreate the environment, then: " + INSTALL_FIX)]


# --- the machine's runtime (files and environment variables) ----------------------------------------

def check_visible_devices_hide_all(ctx: Context) -> list[Finding]:
    """A device-selection variable (a vendor's ``visibility`` in vendors.py) that keeps no device, where that
    vendor's GPUs or build are: the rule detection applies too."""
    torch = ctx.torch
    findings = []
    for name in vendors.selection_variables():
        value = ctx.env(name)
        if value is None:
            continue
        kind = torch.kind if torch is not None else None
        readers = [(row, selector) for row, selector in vendors.selectors_of(name)
                   if any(g.vendor == row.name for g in ctx.machine.gpus) or kind == row.kind]
        if not any(vendors.hides_every_device(value, selector) for _, selector in readers):
            continue
        runtimes = "/".join(dict.fromkeys(row.build for row, _ in readers))
        findings.append(Finding("visible-devices-hide-all", "error", f"{name} hides every GPU from torch",
                                (f"{name}={value!r} in the environment",
                                 f"an empty list or a first entry of -1 makes the {runtimes} runtime see no device"),
                                f"unset {name}"))
    return findings


def _library_versions(probe: Probe, stem: str) -> dict[str, str]:
    """``libcuda.so.550.54.15``-style files in the driver library dirs: version -> path."""
    found: dict[str, str] = {}
    for directory in DRIVER_LIB_DIRS:
        for name in probe.listdir(directory):
            if name.startswith(stem + ".so.") and re.fullmatch(r"[0-9]+\.[0-9]+(\.[0-9]+)?", name[len(stem) + 4:]):
                found.setdefault(name[len(stem) + 4:], f"{directory}/{name}")
    return found


def _kernel_module_version(probe: Probe) -> tuple[str, str] | None:
    """The loaded NVIDIA kernel module's version and the file it was read from, read as detection reads it."""
    from ..detectors.nvidia import MODULE_VERSION, PROC_VERSION, parse_driver_version, parse_proc_version

    version = parse_driver_version(probe.read_text(MODULE_VERSION, 256))
    if version:
        return version, MODULE_VERSION
    version = parse_proc_version(probe.read_text(PROC_VERSION, 4096))
    return (version, PROC_VERSION) if version else None


def check_driver_library_mismatch(ctx: Context) -> list[Finding]:
    if ctx.probe is None or ctx.os != "linux" or ctx.machine.wsl:
        return []
    kernel = _kernel_module_version(ctx.probe)
    if kernel is None:
        return []
    user = {**_library_versions(ctx.probe, "libnvidia-ml"), **_library_versions(ctx.probe, "libcuda")}
    if not user or kernel[0] in user:
        return []
    evidence = [f"kernel module {kernel[0]} ({kernel[1]})"]
    evidence += [f"user-space library {version} ({path})" for version, path in sorted(user.items())]
    evidence.append("NVML and CUDA refuse to start: 'Driver/library version mismatch'")
    return [Finding("driver-library-mismatch", "error", "the loaded NVIDIA kernel module and the installed driver "
                    "libraries differ (driver upgraded without a reboot)", tuple(evidence),
                    "reboot (or reload the nvidia kernel modules) so the new driver is the one running")]


def check_nvidia_libs_shadowed(ctx: Context) -> list[Finding]:
    torch = ctx.torch
    if ctx.probe is None or ctx.os != "linux" or torch is None or torch.kind != "cuda":
        return []
    findings = []
    value = ctx.env("LD_LIBRARY_PATH") or ""
    shadowing: list[str] = []
    stubs: list[str] = []
    for directory in [d for d in value.split(":") if d]:
        names = ctx.probe.listdir(directory)
        libs = [n for n in names if CUDA_LIBS.match(n)]
        if libs:
            shadowing.append(f"{directory}: {', '.join(libs[:6])}{' …' if len(libs) > 6 else ''}")
        if any(n.startswith("libcuda.so") for n in names) and directory.rstrip("/").endswith("stubs"):
            stubs.append(f"{directory}/libcuda.so is the CUDA toolkit's link-time stub")
    preload = ctx.env("LD_PRELOAD") or ""
    preloaded = [p for p in re.split(r"[ :]", preload) if CUDA_LIBS.match(p.rsplit("/", 1)[-1])]
    if stubs:
        findings.append(Finding("nvidia-libs-shadowed", "error", "a stub libcuda is on LD_LIBRARY_PATH",
                                tuple(stubs) + (f"LD_LIBRARY_PATH={value}", "CUDA then fails with "
                                                "CUDA_ERROR_STUB_LIBRARY (34)"),
                                "remove the …/stubs directory from LD_LIBRARY_PATH"))
    if shadowing or preloaded:
        evidence = [f"LD_LIBRARY_PATH entry {s}" for s in shadowing] + [f"LD_PRELOAD: {p}" for p in preloaded]
        evidence.append(f"torch {torch.version} ({torch.variant}) ships its CUDA libraries as pip nvidia-* packages; "
                        "the dynamic loader searches LD_LIBRARY_PATH first")
        findings.append(Finding("nvidia-libs-shadowed", "warning", "system CUDA libraries on LD_LIBRARY_PATH can "
                                "shadow the ones torch was built with", tuple(evidence),
                                "remove the CUDA directories from LD_LIBRARY_PATH (and LD_PRELOAD) for this "
                                "environment, e.g. `unset LD_LIBRARY_PATH`"))
    return findings


# --- the pip CUDA libraries (nvidia-* / cuda-toolkit wheels) ----------------------------------------

# Shared libraries of the nvidia-* wheels as RECORD lists them: nvidia/<component>/lib/lib*.so*
_WHEEL_SHARED_LIB = re.compile(r"^nvidia/[^/]+/lib/[^/]+\.so(\.[0-9]+)*$")
_LIBRARY_PIN_PREFIXES = ("nvidia-", "cuda-toolkit")
_PYTHON_IMPLEMENTATIONS = {"cpython": "CPython", "pypy": "PyPy"}


def _marker_environment(installed: Installed) -> dict[str, str]:
    """PEP 508 marker values of the inspected interpreter (not of the one running the doctor)."""
    interp = installed.interpreter
    system = interp.system
    return {"platform_system": system, "platform_machine": interp.machine,
            "sys_platform": {"Linux": "linux", "Windows": "win32", "Darwin": "darwin"}.get(system, system.lower()),
            "os_name": "nt" if system == "Windows" else "posix",
            "python_version": ".".join(interp.version.split(".")[:2]), "python_full_version": interp.version,
            "implementation_name": interp.implementation,
            "platform_python_implementation": _PYTHON_IMPLEMENTATIONS.get(interp.implementation,
                                                                          interp.implementation),
            "extra": ""}


class LibraryPin(Record):
    """One of torch's ``Requires-Dist`` on a CUDA library package (nvidia-*, cuda-toolkit)."""

    name: str  # canonical
    specifier: str  # as packaging writes it: "==12.8.93", "<=13.1.1.3,>=13.1.0.3"

    def allows(self, version: str) -> bool:
        """Whether the installed ``version`` is one the pin allows."""
        if self.specifier == "==" + version:  # torch's exact pins, settled without packaging
            return True
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
        from packaging.version import InvalidVersion, Version

        try:
            return SpecifierSet(self.specifier).contains(Version(version), prereleases=True)
        except (InvalidSpecifier, InvalidVersion):
            return False


def cuda_library_pins(installed: Installed, dist: Dist) -> list[LibraryPin]:
    """``dist``'s ``Requires-Dist`` on nvidia-*/cuda-toolkit packages whose markers hold for the inspected
    interpreter (extras excluded). torch's own lines (an exact pin, a platform marker) are read without packaging."""
    environment = _marker_environment(installed)
    pins = []
    for line in dist.requires:
        if not line.lstrip().lower().startswith(("nvidia", "cuda")):
            continue
        read, pin = _own_pin(line, environment)
        if not read:
            pin = _library_pin(line, environment)
        if pin is not None:
            pins.append(pin)
    return pins


def _own_pin(line: str, environment: dict[str, str]) -> tuple[bool, LibraryPin | None]:
    """(read, pin) of a line in torch's own shape, ``nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux"``,
    read without packaging; the pin is None for another package or a marker that does not hold. ``read`` is False
    for a line of any other shape, which packaging reads."""
    found = re.match(NAME_AND_EXTRAS, line)
    if found is None:
        return False, None
    spec, semicolon, marker = (part.strip(" \t") for part in found[2].partition(";"))
    release = spec.removeprefix("==").lstrip(" \t")
    if not spec.startswith("==") or not release or release_part(release) != release or (semicolon and not marker):
        return False, None
    holds = simple_marker(marker, environment) if marker else True
    if holds is None:
        return False, None
    name = canonical_name(found[1])
    return True, LibraryPin(name, f"=={release}") if holds and name.startswith(_LIBRARY_PIN_PREFIXES) else None


def _library_pin(line: str, environment: dict[str, str]) -> LibraryPin | None:
    """A ``Requires-Dist`` line read by packaging: the library pin it is, or None (another package, a marker that
    does not hold, a line that is not a requirement)."""
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(line)
    except InvalidRequirement:
        return None
    if not canonical_name(req.name).startswith(_LIBRARY_PIN_PREFIXES):
        return None
    try:
        if req.marker is not None and not req.marker.evaluate(environment):
            return None
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return None
    return LibraryPin(canonical_name(req.name), str(req.specifier))


def wheel_shared_libraries(dist: Dist) -> tuple[str, ...]:
    """The ``nvidia/<component>/lib/*.so*`` paths ``dist``'s RECORD lists, relative to its location."""
    if dist.kind != "dist-info":
        return ()
    return tuple(p for p in record_paths(dist.path) or () if _WHEEL_SHARED_LIB.match(p))


def check_nvidia_libs_missing(ctx: Context) -> list[Finding]:
    """A CUDA torch whose pinned nvidia-*/cuda-toolkit packages are absent, at another version, or installed
    with their shared libraries gone from disk: `import torch` then fails to load libcudnn, libcublas …"""
    torch = ctx.torch
    dist = ctx.installed.dist("torch")
    if torch is None or torch.kind != "cuda" or dist is None or dist.kind != "dist-info":
        return []
    evidence: list[str] = []
    for library in ctx.torch_cuda_pins:
        pin = f"{library.name}{library.specifier}"
        have = ctx.installed.dist(library.name)
        if have is None:
            evidence.append(f"{dist.directory_name}/METADATA requires {pin}: not installed")
            continue
        if not library.allows(have.version):
            evidence.append(f"{dist.directory_name}/METADATA requires {pin}: {have.version} is installed ({have.path})")
            continue
        listed = wheel_shared_libraries(have)
        missing = [path for path in listed if not os.path.isfile(os.path.join(have.location, path))]
        if missing:
            shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
            evidence.append(f"{have.directory_name}/RECORD lists {len(listed)} shared libraries, {len(missing)} "
                            f"missing on disk: {shown}")
    if not evidence:
        return []
    evidence.append(f"torch build: {torch.evidence}")
    evidence.append("torch loads its CUDA libraries from these packages; one missing fails `import torch` "
                    "(\"libcudnn.so.9: cannot open shared object file\")")
    return [Finding("nvidia-libs-missing", "error", "CUDA libraries this torch build needs are missing or at "
                    "another version", tuple(evidence), INSTALL_FIX)]


# nvidia-* packages without a -cuNN suffix are the CUDA 13 generation (cuda-toolkit's components).
_UNSUFFIXED_CU13 = re.compile(r"^nvidia-(cublas|cuda-cupti|cuda-nvrtc|cuda-runtime|cuda-nvcc|cuda-crt|cudnn|cufft|"
                              r"cufile|curand|cusolver|cusparse|cusparselt|nccl|nvjitlink|nvshmem|nvtx|nvvm)$")


def cuda_major_of(name: str) -> int | None:
    """The CUDA major an nvidia-* package belongs to: nvidia-cudnn-cu12 -> 12, nvidia-cublas -> 13."""
    match = re.search(r"-cu([0-9]+)$", name)
    if match:
        return int(match[1])
    return 13 if _UNSUFFIXED_CU13.match(name) else None


def check_nvidia_libs_stale_major(ctx: Context) -> list[Finding]:
    """nvidia-* packages of another CUDA major than torch's, left by an upgrade or downgrade across majors
    (their names differ, so pip never removes them)."""
    torch = ctx.torch
    dist = ctx.installed.dist("torch")
    if torch is None or dist is None or (cv := cuda_version(torch.variant)) is None:
        return []
    required = {library.name for library in ctx.torch_cuda_pins}
    libraries = [d for d in _runtime_dists(ctx.installed) if d.name.startswith("nvidia-")]
    stale = [d for d in libraries if cuda_major_of(d.name) not in (None, cv[0]) and d.name not in required]
    if not stale:
        return []
    kept = [d for d in libraries if d not in stale]
    evidence = [f"torch {torch.version} is a CUDA {cv[0]} build: {torch.evidence}"]
    evidence += [f"{d.name} {d.version} (CUDA {cuda_major_of(d.name)}, {d.path}) is not required by torch"
                 for d in stale]
    owners = {path: d.name for d in kept for path in wheel_shared_libraries(d)}
    shared = [(d.name, owners[path], path) for d in stale for path in wheel_shared_libraries(d) if path in owners]
    fix = uninstall = uninstall_command(ctx.installed, [d.name for d in stale])
    if shared:
        evidence += [f"{old} and {new} both install {path}" for old, new, path in shared[:3]]
        evidence.append("uninstalling the leftover deletes those files of the package torch uses")
        fix += ", then reinstall torch's own CUDA libraries: " + INSTALL_FIX
    majors = "/".join(sorted({str(cuda_major_of(d.name)) for d in stale}))
    return [Finding("nvidia-libs-stale-major", "warning", f"CUDA {majors} libraries left next to a CUDA {cv[0]} "
                    "torch", tuple(evidence), fix, uninstall=uninstall)]


def datacenter_gpu(name: str | None) -> bool | None:
    """From an NVIDIA GPU's marketing name: True for a datacenter part (Tesla, A100, H100, L4, T4 …), False for
    a GeForce/TITAN/Quadro/RTX workstation part, None when the name says neither
    (``detectors/data/nvidia-product-lines.json``)."""
    if not name:
        return None
    lines = load_json("detectors/data/nvidia-product-lines.json")
    if lines["server_edition"] in name.lower():
        return True
    if re.search(lines["consumer"], name, re.I):
        return False
    return True if re.search(lines["datacenter"], name, re.I) else None


def _loader_path_entries(probe: Probe, environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(directory, where it is named) for LD_LIBRARY_PATH and every /etc/ld.so.conf.d/*.conf line."""
    entries = [(d, "LD_LIBRARY_PATH") for d in (environ.get("LD_LIBRARY_PATH") or "").split(":") if d]
    for conf in sorted(probe.listdir("/etc/ld.so.conf.d")):
        if not conf.endswith(".conf"):
            continue  # ld.so.conf includes /etc/ld.so.conf.d/*.conf only
        text = probe.read_text(f"/etc/ld.so.conf.d/{conf}", 65536) or ""
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("/"):
                entries.append((line, f"/etc/ld.so.conf.d/{conf}"))
    return entries


def check_cuda_compat_forward(ctx: Context) -> list[Finding]:
    """A cuda-compat libcuda (``…/compat/libcuda.so.<ver>``) on the loader path, newer than the kernel module,
    on a GPU that is not a datacenter part: CUDA fails with error 804."""
    torch = ctx.torch
    gpus = [g for g in ctx.machine.gpus_of("nvidia") if g.visible]
    if ctx.probe is None or ctx.os != "linux" or ctx.machine.wsl or torch is None or torch.kind != "cuda" or not gpus:
        return []
    kernel = _kernel_module_version(ctx.probe)
    if kernel is None:
        return []
    classes = [(g, datacenter_gpu(g.name)) for g in gpus]
    if all(is_datacenter for _, is_datacenter in classes):
        return []
    consumer = [g for g, is_datacenter in classes if is_datacenter is False]
    findings = []
    for directory, where in _loader_path_entries(ctx.probe, ctx.environ):
        if "compat" not in directory.rstrip("/").split("/"):
            continue
        versions = [name[len("libcuda.so."):] for name in ctx.probe.listdir(directory)
                    if re.fullmatch(r"libcuda\.so\.[0-9]+\.[0-9]+(\.[0-9]+)?", name)]
        newer = [v for v in versions if numeric_key(v) > numeric_key(kernel[0])]
        if not newer:
            continue
        evidence = [f"{directory}/libcuda.so.{max(newer, key=numeric_key)} (forward-compatibility libcuda) is on "
                    f"the loader path through {where}",
                    f"kernel module {kernel[0]} ({kernel[1]})"]
        if consumer:
            evidence += [f"GPU {g.label} is not a datacenter GPU (by its name)" for g in consumer]
        else:
            evidence += [f"GPU {g.label}: datacenter or not is unknown from its name" for g, _ in classes]
        evidence.append("forward compatibility works on datacenter GPUs only; elsewhere CUDA fails with "
                        "'Error 804: forward compatibility was attempted on non supported HW'")
        fix = (f"remove {directory} from LD_LIBRARY_PATH" if where == "LD_LIBRARY_PATH"
               else f"remove the line {directory} from {where}, then run `ldconfig`")
        findings.append(Finding("cuda-compat-forward", "error" if consumer else "warning",
                                "a CUDA forward-compatibility libcuda is on the loader path of a GPU that cannot use "
                                "it", tuple(evidence), fix))
    return findings


def check_wsl_gpu_driver_missing(ctx: Context) -> list[Finding]:
    torch = ctx.torch
    if ctx.probe is None or not ctx.machine.wsl or torch is None or torch.kind != "cuda":
        return []
    evidence = []
    if not ctx.probe.exists("/dev/dxg"):
        evidence.append("/dev/dxg is missing: this WSL has no GPU paravirtualization (WSL 1, or an old WSL 2 kernel)")
    wsl_libs = ctx.probe.listdir("/usr/lib/wsl/lib")
    if not any(n.startswith("libcuda.so") for n in wsl_libs):
        evidence.append("/usr/lib/wsl/lib has no libcuda.so: the Windows NVIDIA driver does not provide CUDA to WSL")
    if not evidence:
        return []
    return [Finding("wsl-gpu-driver-missing", "error", "WSL cannot reach the GPU", tuple(evidence),
                    "install or update the NVIDIA driver on Windows (not inside WSL), run `wsl --update`, "
                    "then `wsl --shutdown`")]


def check_xpu_runtime_missing(ctx: Context) -> list[Finding]:
    torch = ctx.torch
    if torch is None or torch.kind != "xpu" or ctx.os != "linux":
        return []
    evidence = []
    intel = [g for g in ctx.machine.gpus_of("intel")]
    if ctx.machine.gpus_known and not intel:
        evidence.append("no Intel GPU on this machine")
    bound = [g for g in intel if g.driver in ("i915", "xe")]
    if intel and not bound and any(g.driver for g in intel):
        evidence.append("Intel GPU bound to " + ", ".join(sorted({g.driver or '?' for g in intel}))
                        + ", not i915/xe")
    if ctx.probe is not None:
        if not any(n.startswith("libze_loader.so") for d in DRIVER_LIB_DIRS for n in ctx.probe.listdir(d)):
            evidence.append("libze_loader.so.1 (Level Zero loader) is not installed")
        if not any(n.startswith("renderD") for n in ctx.probe.listdir("/dev/dri")):
            evidence.append("no /dev/dri/renderD* node")
    if not evidence:
        return []
    return [Finding("xpu-runtime-missing", "error", "the Intel GPU runtime that XPU builds of torch need is "
                    "missing", tuple([f"torch {torch.version} is an XPU build: {torch.evidence}"] + evidence),
                    "install the Intel GPU driver stack (kernel i915/xe, Level Zero loader, compute runtime) "
                    "and add the user to the 'render' group")]


def check_install_guard(ctx: Context) -> list[Finding]:
    """The pin that keeps the chosen build (``torch-install install --pin``): stale or not in force, or missing
    where a later plain install would replace a build from the PyTorch index."""
    from ..environment.pin import constraints_path, pin_setting, pinned_versions, stale_pins

    interp = ctx.installed.interpreter
    prefix = interp.prefix
    if not prefix or not interp.in_venv:
        return []
    pins = pinned_versions(prefix)
    installed = {name: dist.version for name in (*PACKAGES, *(pins or ()))
                 if (dist := ctx.installed.dist(name)) is not None and dist.kind == "dist-info"}
    torch = installed.get("torch")
    if torch is None:
        return []
    repin = f"torch-install install --pin --python {interp.executable}"
    if pins is None:
        if "+" not in torch:
            return []
        return [Finding("install-guard-missing", "info", "nothing keeps this torch build installed",
                        (f"torch {torch} comes from an index of its own (its local label says which build); a later "
                         "`pip install` of a package that depends on torch can replace it with the default index's "
                         "build",), repin)]
    evidence = [f"{constraints_path(prefix)} pins {p}" for p in stale_pins(pins, installed)]
    in_force, setting = pin_setting(prefix, ctx.environ)
    if not in_force:
        evidence.append(f"{constraints_path(prefix)} is not named by the constraint pip takes"
                        + (f" ({setting.where}: {setting.value})" if setting else " (none is set)"))
    if not evidence:
        return []
    return [Finding("install-guard-stale", "warning", "the pin keeping the torch build is stale or not in force",
                    tuple(evidence), repin)]


# --- a vendor's own build ------------------------------------------------------------------------------

def check_vendor_build(ctx: Context) -> list[Finding]:
    """A build of a vendor's own index (AMD's, the Jetson AI Lab's): said, with its runtime packages; each GPU of
    the vendor whose device extra the build lacks, or whose device packages are not installed, is an error. A GPU
    build that is not the vendor's where the machine needs the vendor's (PyTorch's SBSA wheel on a Jetson's L4T
    stack) is an error too."""
    found = ctx.vendor_install
    if found is None:
        return _vendor_build_expected(ctx)
    build, index = found.build, found.build.vendor_index
    runtime = [f"{d.name} {d.version}" for d in ctx.installed.dists if any(
        d.name == r or (r.endswith("-") and d.name.startswith(r)) for r in index.runtime)]
    dist = ctx.installed.dist("torch")
    findings = [Finding("vendor-build", "info", f"torch is a build of {index.name}",
                        (f"torch {dist.version if dist else build.packages['torch']}: {index.url} ({build.variant})",
                         *([f"its runtime packages: {', '.join(runtime)}"] if runtime else [])))]
    row = vendors.vendor(index.vendor)
    platform = ctx.machine.platform or ""
    for gpu in (g for g in ctx.machine.visible_gpus if row is not None and g.vendor == row.name):
        arch = getattr(gpu, row.arch_field) if row else None
        if not arch:
            continue
        extra = index.extra_for(arch)
        if extra is None:  # an index without device extras: its build's targets
            if arch not in build.targets.get(platform, {}):
                findings.append(Finding("vendor-device-missing", "error", f"this torch build has no code for "
                                        f"{gpu.label_with_arch}", (f"{index.name}'s {build.variant} builds "
                                        f"{' '.join(sorted(build.targets.get(platform, {})))}",), INSTALL_FIX))
            continue
        for package, offered in found.extras.items():
            wanted = offered.get(extra)
            if wanted is None:
                findings.append(Finding("vendor-device-missing", "error", f"this {package} build has no {extra} "
                                        f"extra for {gpu.label_with_arch}", (f"{package}'s METADATA offers "
                                        f"{', '.join(sorted(offered))}",), INSTALL_FIX))
            elif missing := [name for name in wanted if ctx.installed.dist(name) is None]:
                findings.append(Finding("vendor-device-missing", "error", f"the {package} device code for "
                                        f"{gpu.label_with_arch} is not installed", (f"{package}[{extra}] requires "
                                        f"{', '.join(wanted)}; not installed: {', '.join(missing)}",), INSTALL_FIX))
    return findings


def _vendor_build_expected(ctx: Context) -> list[Finding]:
    torch, plan = ctx.torch, ctx.plan
    if torch is None or torch.kind in ("cpu", "unknown", "default") or plan is None or plan.choice is None:
        return []
    source = plan.choice.vendor_index
    if source is None or not plan.gpu_accelerated:
        return []
    return [Finding("vendor-build-expected", "error", f"this torch build does not run here: {source.name}'s does",
                    (f"torch {torch.pinned}: {torch.evidence}", *(r for r in plan.reasons[1:3])), INSTALL_FIX)]


class Check(vendors.Protocol):
    """A doctor check: the findings about the environment and machine of ``ctx``."""

    def __call__(self, ctx: Context) -> list[Finding]: ...


VENDOR_CHECKS: vendors.Hook[Check] = vendors.Hook("doctor_checks", Check, "torch_install.doctor")  # a row's own
# The checks every environment gets; each vendor's own (its registry row's ``doctor_checks``) run between the
# first group and the second.
CHECKS: tuple[Check, ...] = (
    check_no_torch,
    check_broken_install,
    check_duplicate_torch_install,
    check_python_unsupported,
    check_glibc_too_old,
    check_rosetta_python,
    check_cpu_build_on_gpu_machine,
    check_vendor_build,
)
LATER_CHECKS: tuple[Check, ...] = (
    check_companion_mismatch,
    check_visible_devices_hide_all,
    check_install_guard,
)


def all_checks() -> tuple[Check, ...]:
    """Every check, in the order they run: the common ones, then each vendor's, then the later common ones (a
    conda environment's own checks, doctor/conda.py, run after them: ``doctor.diagnose``)."""
    own = tuple(check for row in vendors.VENDORS for check in VENDOR_CHECKS.load_all(row))
    return (*CHECKS, *own, *LATER_CHECKS)


def run_checks(ctx: Context) -> list[Finding]:
    """Every check, in order; errors first, then warnings, then info."""
    findings = [f.checked() for check in all_checks() for f in check(ctx)]
    return sorted(findings, key=lambda f: SEVERITIES.index(f.severity))
