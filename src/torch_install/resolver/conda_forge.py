"""conda-forge's pytorch: which of its builds serves a machine (``choose``), from the conda-forge table
(``resolver/data/conda-forge.json``, made by ``scripts/build_conda_forge.py`` from the feedstock's recipes).

conda-forge is a distribution of its own: one ``pytorch`` package per release whose build string names the build
(``cuda129_mkl_py312_h…_302``, ``cpu_generic_…``), a run dependency on the ``__cuda`` virtual package for CUDA
builds, ``cuda-version X.Y`` pairing (it requires only ``__cuda >= X``: a 12.x driver runs every 12.x build), an
arch list per build, and a Jetson Orin build selected by ``arm-variant=*=tegra``. The choice is a build-string
glob (``cuda129_*``) and the selector packages that keep the solver on it: a plain ``pytorch`` falls back to the
CPU build whenever the CUDA one cannot be installed, and ``torchvision`` has no build-number preference at all.

Pure, like the rest of the resolver: the machine and the request in, a ``CondaChoice`` out.
"""

from __future__ import annotations

from functools import cache

from ..drivers import cuda_for_driver
from ..machine import Machine
from ..package_data import load_json
from ..records import Record
from ..versions import numeric_key
from .matrix import CudaArch
from .request import COMPANIONS
from .rules import cubin_or_ptx
from .variants import cuda_version

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from .plan import Plan, Request

TABLE = "resolver/data/conda-forge.json"
CHANNEL = "conda-forge"
# conda subdir of each matrix platform key (Machine.platform)
SUBDIRS = {"linux_x86_64": "linux-64", "linux_aarch64": "linux-aarch64", "windows_x86_64": "win-64",
           "macos_x86_64": "osx-64", "macos_arm64": "osx-arm64"}
SOURCES = ("conda-forge", "pytorch-index")  # where --format conda/pixi take torch from
TEGRA_CUBIN = ("an sm_8x cubin of a lower minor is not counted for a Jetson's sm_87 (conda-forge's CUDA 13 aarch64 "
               "build with sm_80/sm_86 cubins failed on AGX Orin until sm_87 was added; inferred)")


class CondaBuild(Record):
    """One pytorch build of the table: a release on a subdir, with its CUDA version (None: CPU)."""

    version: str
    subdir: str
    cuda: str | None
    arm_variant: str | None
    number: int
    python: tuple[str, ...]
    glibc: str | None
    macos: str | None
    arch: CudaArch | None
    arch_list: str | None
    mps: bool = False  # Apple's GPU through MPS (the osx-arm64 build, whose recipe test asserts it)

    @property
    def build_glob(self) -> str:
        """The build-string glob that selects this build's kind: ``cuda129_*``, ``cpu_*``."""
        return f"cuda{self.cuda.replace('.', '')}_*" if self.cuda else "cpu_*"

    @property
    def label(self) -> str:
        if self.cuda:
            return f"CUDA {self.cuda}" + (f" {self.arm_variant}" if self.arm_variant == "tegra" else "")
        return "CPU and MPS" if self.mps else "CPU"


class CondaChoice(Record):
    """The conda-forge build for one machine, and the MatchSpecs' parts that select it."""

    subdir: str
    build: CondaBuild
    python: str | None  # the Python the environment gets ("3.12"), None when the machine's is not known
    gpu: bool  # the build runs on the machine's GPU
    declared_cuda: str | None  # the __cuda the platform declares (the driver's CUDA, else the build's)
    companions: tuple[tuple[str, str], ...] = ()  # (torchvision, its build glob) for each requested companion
    reasons: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # facts the choice rests on that are inferred

    @property
    def cuda_version(self) -> str | None:
        """The ``cuda-version`` to pin (the build's CUDA ``major.minor``)."""
        return self.build.cuda

    @property
    def arm_variant(self) -> str | None:
        return self.build.arm_variant


class CondaAnswer(Record):
    """``choose``'s answer: the choice, or None with why not (one line each)."""

    choice: CondaChoice | None
    why_not: tuple[str, ...] = ()


@cache
def load_table() -> dict[str, Any]:
    table: dict[str, Any] = load_json(TABLE)
    return table


def _arch(entry: dict[str, Any] | None) -> CudaArch | None:
    if entry is None:
        return None
    return CudaArch(sm=tuple(entry["sm"]), ptx=tuple(entry["ptx"]), confidence="recipe")


@cache
def builds() -> tuple[CondaBuild, ...]:
    """Every pytorch build of the table, newest release first, in the table's order within one."""
    out = []
    for release in load_table()["pytorch"]:
        for b in release["builds"]:
            out.append(CondaBuild(release["version"], b["subdir"], b["cuda"], b["arm_variant"],
                                  b["number"], tuple(b["python"]), b["floor"].get("glibc"), b["floor"].get("macos"),
                                  _arch(b["arches"]), b["arches"]["list"] if b["arches"] else None,
                                  release["mps"] and b["subdir"] == "osx-arm64"))
    return tuple(out)


def subdir_of(machine: Machine) -> str | None:
    """The conda subdir of a machine (``linux-64``), None for a platform conda-forge has no pytorch for."""
    return SUBDIRS.get(machine.platform or "")


def driver_cuda(machine: Machine) -> str | None:
    """The newest CUDA ``major.minor`` the machine's NVIDIA driver runs: what ``__cuda`` is on it."""
    if machine.cuda_driver_api:
        return ".".join(machine.cuda_driver_api.split(".")[:2])
    if machine.nvidia_driver:
        found = cuda_for_driver(machine.nvidia_driver, "windows" if machine.os == "windows" or machine.wsl else
                                "linux")
        return found[0] if found else None
    return None


def _jetson(machine: Machine) -> str | None:
    """``tegra`` for a Jetson on JetPack 6 and older (L4T < 38), ``sbsa`` for one on the SBSA stack, else None."""
    gpus = [g for g in machine.gpus if g.vendor == "nvidia" and (g.family or "").startswith("jetson-")]
    if not machine.jetson and not gpus:
        return None
    if machine.jetson:
        return "sbsa" if numeric_key(machine.jetson) >= (38,) else "tegra"
    return "sbsa" if any((g.sm or 0) >= 110 for g in gpus) else "tegra"


def _runs(build: CondaBuild, sm: int, jetson: bool) -> str | None:
    """How the build runs a GPU of compute capability ``sm``: "its sm_86 kernels", "its PTX", or None."""
    if build.arch is None:
        return None
    if jetson:
        exact = sm in build.arch.sm
        ptx = [p for p in build.arch.ptx if p <= sm]
        return f"its sm_{sm} kernels" if exact else (f"its compute_{max(ptx)} PTX" if ptx else None)
    found = cubin_or_ptx(build.arch, sm)
    if found is None:
        return None
    return f"its sm_{found[1]} kernels" if found[0] == "cubin" else f"its compute_{found[1]} PTX"


def _python(build: CondaBuild, machine: Machine) -> tuple[str | None, str | None]:
    """The Python to pin, and a warning when the machine's cannot be had."""
    wanted = machine.python
    if not wanted:
        return None, None
    base = wanted.removesuffix("t")
    if wanted.endswith("t"):
        return (base if base in build.python else build.python[-1],
                f"conda-forge's pytorch has no free-threaded build: the environment gets Python "
                f"{base if base in build.python else build.python[-1]}, not {wanted}")
    if base in build.python:
        return base, None
    return build.python[-1], (f"conda-forge's pytorch {build.version} is built for Python {', '.join(build.python)}:"
                              f" the environment gets Python {build.python[-1]}, not {wanted}")


def _floor_problem(build: CondaBuild, machine: Machine) -> str | None:
    if build.glibc and machine.glibc and numeric_key(machine.glibc) < numeric_key(build.glibc):
        return f"needs glibc ≥ {build.glibc}, the machine has {machine.glibc}"
    if build.macos and machine.os == "macos" and machine.os_version and \
            numeric_key(machine.os_version) < numeric_key(build.macos):
        return f"needs macOS ≥ {build.macos}, the machine has {machine.os_version}"
    return None


def _companion_builds(package: str, build: CondaBuild) -> tuple[str | None, str | None]:
    """(the companion's build glob for ``build``, or None with why not; a note when it rests on inference)."""
    entry = load_table()[package]
    minor = ".".join(build.version.split(".")[:2])
    if numeric_key(minor) > numeric_key(entry["pytorch"]):
        return None, (f"conda-forge's newest {package} ({entry['version']}) is built against pytorch "
                      f"{entry['pytorch']}")
    kinds = {(b["subdir"], b["cuda"], b["arm_variant"]) for b in entry["builds"]}
    if build.subdir not in {kind[0] for kind in kinds}:
        return None, f"conda-forge has no {package} for {build.subdir}"
    if minor != entry["pytorch"]:
        return build.build_glob, (f"{package} builds for pytorch {minor} are older than the table's "
                                  f"({entry['version']}): that they carry the same CUDA variants is inferred")
    if (build.subdir, build.cuda, build.arm_variant) not in kinds and (build.subdir, build.cuda, None) not in kinds:
        return None, f"conda-forge's {package} {entry['version']} has no {build.label} build for {build.subdir}"
    return build.build_glob, None


def choose(machine: Machine, request: Request) -> CondaAnswer:
    """The newest conda-forge pytorch release the request allows whose build runs on the machine's NVIDIA GPUs
    (the newest CUDA version whose driver, arch list and C library floor fit), else its CPU build; with every
    requested companion (torchvision, torchaudio) built for it."""
    from .request import parse_request

    subdir = subdir_of(machine)
    if subdir is None:
        return CondaAnswer(None, (f"conda-forge publishes no pytorch for {machine.platform or 'this platform'}",))
    parsed = parse_request(request, machine)
    wanted = [p for p in COMPANIONS if p in parsed.companions]
    nvidia = [g for g in machine.visible_gpus if g.vendor == "nvidia" and not g.integrated or
              (g.vendor == "nvidia" and (g.family or "").startswith("jetson-"))]
    named = next((p for p in parsed.pins if p.variant), None)  # a build the project names: its CUDA, or the CPU
    if named is not None and named.variant == "cpu":
        nvidia = []
    jetson = _jetson(machine)
    have_cuda = driver_cuda(machine)
    rejected: list[str] = []
    candidates = [b for b in builds() if b.subdir == subdir and parsed.torch.contains(b.version, prereleases=True)]
    if not candidates:
        known = sorted({b.version for b in builds()}, key=numeric_key, reverse=True)
        return CondaAnswer(None, (f"no conda-forge pytorch release for {subdir} matches torch{parsed.torch or ''} "
                                  f"(the table has {', '.join(known)})",))
    cpu_choice: CondaChoice | None = None
    for version in sorted({b.version for b in candidates}, key=numeric_key, reverse=True):
        release = [b for b in candidates if b.version == version]
        if nvidia and jetson != "tegra":
            release = [b for b in release if b.arm_variant != "tegra"]
        if jetson == "tegra":
            release = [b for b in release if b.cuda is None or b.arm_variant == "tegra"]
        if named is not None and (pinned := cuda_version(named.variant)) is not None:
            release = [b for b in release if b.cuda is None or _of_cuda(b.cuda, pinned)]
        gpu = _gpu_build(release, machine, nvidia, jetson, have_cuda, rejected, wanted) if nvidia else None
        if gpu is not None:
            build, reasons, notes = gpu
            if named is not None:
                reasons = (f"a CUDA {build.cuda} build, as {named.shown} names CUDA {named.variant[2:-1]}."
                           f"{named.variant[-1]} (conda-forge's builds for it and older CUDA "
                           f"{named.variant[2:-1]} releases run with it)", *reasons)
            companions, companion_notes, _ = _companions(wanted, build)
            return CondaAnswer(_choice(machine, subdir, build, True, companions, reasons,
                                       (*notes, *companion_notes), have_cuda))
        if cpu_choice is None:
            cpu = next((b for b in release if b.cuda is None and _floor_problem(b, machine) is None), None)
            companions, companion_notes, missing = _companions(wanted, cpu) if cpu else ((), (), None)
            if cpu is not None and missing:
                rejected.append(f"pytorch {version} CPU: {missing}")
            elif cpu is not None:
                why = "no NVIDIA GPU: conda-forge's CPU build" if not nvidia else \
                    "no conda-forge CUDA build runs this GPU: the CPU build"
                if cpu.mps and not machine.rosetta:
                    why = "conda-forge's osx-arm64 build runs on the Apple GPU through MPS (its recipe tests it)"
                cpu_choice = _choice(machine, subdir, cpu, cpu.mps and not machine.rosetta, companions, (why,),
                                     companion_notes, None)
                if not nvidia:
                    break
    if cpu_choice is not None:
        return CondaAnswer(cpu_choice._replace(warnings=(*cpu_choice.warnings, *rejected[:3])) if nvidia else
                           cpu_choice)
    return CondaAnswer(None, tuple(rejected) or (f"no conda-forge pytorch build fits {subdir}",))


def _of_cuda(cuda: str, pinned: tuple[int, int]) -> bool:
    """Whether a build for CUDA ``cuda`` ("12.6") runs in an environment of CUDA ``pinned``: the same major version,
    no newer (a conda CUDA 12 package built for 12.x runs with any cuda-version from 12.x on)."""
    major, _, minor = cuda.partition(".")
    return int(major) == pinned[0] and int(minor or 0) <= pinned[1]


def _companions(wanted: list[str], build: CondaBuild) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...],
                                                              str | None]:
    out, notes = [], []
    for package in wanted:
        pattern, why = _companion_builds(package, build)
        if pattern is None:
            return (), (), why
        out.append((package, pattern))
        if why:
            notes.append(why)
    return tuple(out), tuple(notes), None


def _gpu_build(release: list[CondaBuild], machine: Machine, nvidia: list[Any], jetson: str | None,
               have_cuda: str | None, rejected: list[str], wanted: list[str]
               ) -> tuple[CondaBuild, tuple[str, ...], tuple[str, ...]] | None:
    """The release's newest CUDA build that runs every NVIDIA GPU with the machine's driver and C library."""
    seen: set[tuple[str | None, str | None]] = set()
    cuda_builds = sorted((b for b in release if b.cuda), key=lambda b: (numeric_key(b.cuda or "0"), b.number),
                         reverse=True)
    for build in cuda_builds:
        if (build.cuda, build.arm_variant) in seen:
            continue  # one verdict per CUDA version (the BLAS flavours share their arch list)
        seen.add((build.cuda, build.arm_variant))
        label = f"pytorch {build.version} {build.label}"
        cuda_major = int((build.cuda or "0").split(".")[0])
        if have_cuda and int(have_cuda.split(".")[0]) < cuda_major:
            rejected.append(f"{label}: needs a driver for CUDA {cuda_major}, the driver runs CUDA {have_cuda}")
            continue
        floor = _floor_problem(build, machine)
        if floor:
            rejected.append(f"{label}: {floor}")
            continue
        runs = []
        for gpu in nvidia:
            if gpu.sm is None:
                runs.append(f"{gpu.label}: architecture not known, assumed to run it")
                continue
            how = _runs(build, gpu.sm, jetson is not None)
            if how is None:
                rejected.append(f"{label}: no kernels for {gpu.label_with_arch} (its arch list: {build.arch_list})")
                break
            runs.append(f"{gpu.arch} runs {how}")
        else:
            missing = _companions(wanted, build)[2]
            if missing:
                rejected.append(f"{label}: {missing}")
                continue
            reasons = [f"conda-forge's {build.label} build: " + "; ".join(runs)]
            notes = []
            if have_cuda:
                reasons.append(f"driver runs CUDA {have_cuda}; cuda-version {build.cuda} needs a CUDA {cuda_major} "
                               "driver (minor-version compatibility)")
            else:
                notes.append(f"the NVIDIA driver is not known: the CUDA {build.cuda} build needs one for CUDA "
                             f"{cuda_major}")
            if jetson:
                notes.append(TEGRA_CUBIN)
            return build, tuple(reasons), tuple(notes)
    return None


def _choice(machine: Machine, subdir: str, build: CondaBuild, gpu: bool, companions: tuple[tuple[str, str], ...],
            reasons: tuple[str, ...], notes: tuple[str, ...], have_cuda: str | None) -> CondaChoice:
    python, python_warning = _python(build, machine)
    notes = (*notes, *(["the build's C library floor rests on conda-forge's compilers' run exports (inferred)"]
                       if build.glibc or build.macos else []))
    return CondaChoice(subdir=subdir, build=build, python=python, gpu=gpu,
                       declared_cuda=(have_cuda or build.cuda) if gpu else None, companions=companions,
                       reasons=reasons, warnings=(python_warning,) if python_warning else (), notes=notes)


def conda_specs(choice: CondaChoice) -> list[str]:
    """The MatchSpecs (conda's ``name=version=build`` form) that install the chosen build and keep it."""
    build = choice.build
    specs = [f"python={choice.python}"] if choice.python else []
    specs.append(f"pytorch={build.version}={build.build_glob}")
    specs += [f"{name}=*={pattern}" for name, pattern in choice.companions]
    if build.cuda:
        specs.append(f"cuda-version={build.cuda}")
    if build.arm_variant:
        specs.append(f"arm-variant=*={build.arm_variant}")
    return specs


def install_command(specs: list[str], prefix: str, manager: str = "conda", manifest: str | None = None) -> str:
    """The command that installs ``specs`` into the environment at ``prefix``: conda's (mamba takes the same
    arguments), or pixi's ``add`` into the manifest that made it."""
    import shlex

    if manager == "pixi":
        return shlex.join(["pixi", "add", *(["--manifest-path", manifest] if manifest else []), *specs])
    return shlex.join(["conda", "install", "--prefix", prefix, "--channel", CHANNEL, *specs])


def preferred_source(plan: Plan, answer: CondaAnswer) -> tuple[str, str]:
    """Where a conda or pixi file takes torch from when the user did not say (``SOURCES``), and why: the wheel a
    direct reference names, where the request has one (pip installs it as given); conda-forge's build when it runs
    the machine as well as PyTorch's index's plan does (the file's other conda packages come from the same channel,
    and a lock solves on every platform), else PyTorch's index."""
    choice = answer.choice
    if plan.choice is not None and plan.choice.references:  # the user's own wheel: pip installs it as given
        return "pytorch-index", f"the wheel {', '.join(plan.choice.references)} names is the build asked for"
    if choice is None:
        return "pytorch-index", "conda-forge has no build here: " + "; ".join(answer.why_not[:1])
    if plan.gpu_accelerated and not choice.gpu:
        return "pytorch-index", "PyTorch's index has a build for this GPU, conda-forge's builds do not run it"
    return "conda-forge", ("conda-forge's build runs here, and conda packages that depend on pytorch come from the "
                           "same channel")
