"""The doctor in a conda environment: what conda (mamba, pixi) installed, read from ``conda-meta/`` without
importing torch (``environment.conda_meta``), checked against the machine and conda-forge's builds
(``resolver.conda_forge``).

Each finding's fix is in the environment's own terms: the ``conda install --prefix … --channel conda-forge``
command that selects the right build by its build string (mamba takes the same arguments), or ``pixi add`` into
the manifest that made the prefix. The checks for a pip-installed torch stand aside when conda manages torch
(``conda_managed``): their facts (PyTorch's wheels' arch lists, pip's commands) are not conda-forge's.
"""

from __future__ import annotations

from ..environment.conda_meta import CondaPrefix, CondaRecord
from ..resolver.conda_forge import CondaChoice, choose, conda_specs, driver_cuda, install_command
from ..resolver.matrix import CudaArch
from ..resolver.plan import Request
from ..resolver.request import COMPANIONS
from ..resolver.rules import cubin_or_ptx
from .checks import Context, Finding, conda_managed


def conda_prefix(ctx: Context) -> CondaPrefix | None:
    return ctx.installed.conda


def conda_findings(ctx: Context) -> list[Finding]:
    """Every conda check's findings (``doctor.diagnose`` runs them after the common checks)."""
    return [f.checked() for check in CONDA_CHECKS for f in check(ctx)]


def _fix(ctx: Context, conda: CondaPrefix, choice: CondaChoice | None, extra: tuple[str, ...] = ()) -> str:
    """The command that puts the right build in (the machine's conda-forge choice), and what pixi users do."""
    if choice is None:
        return "no conda-forge build serves this machine: see `torch-install plan --format conda`"
    specs = [*(s for s in conda_specs(choice) if not s.startswith("python=")), *extra]
    command = install_command(specs, conda.prefix, conda.manager, conda.pixi_manifest)
    if conda.manager == "pixi":
        return command + (f" (and declare the platform's CUDA: {{ platform = \"{choice.subdir}\", cuda = "
                          f"\"{choice.declared_cuda}\" }}; then pixi install)" if choice.declared_cuda else "")
    return command + " (mamba: the same arguments)"


def _choice(ctx: Context, conda: CondaPrefix) -> CondaChoice | None:
    packages = ("torch", *(p for p in COMPANIONS if conda.get(p) is not None))
    return choose(ctx.machine, Request(packages=packages)).choice


def _record_line(record: CondaRecord) -> str:
    return f"{record.path}: {record.name} {record.version} build {record.build} ({record.channel or 'channel ?'})"


def check_conda_cpu_build_on_gpu_machine(ctx: Context) -> list[Finding]:
    conda = conda_prefix(ctx)
    pytorch = conda.get("pytorch") if conda else None
    if conda is None or pytorch is None or not pytorch.cpu or not conda_managed(ctx):
        return []
    choice = _choice(ctx, conda)
    if choice is None or not choice.gpu or choice.build.cuda is None:
        return []
    evidence = [_record_line(pytorch), *(f"GPU: {g.label_with_arch}" for g in ctx.machine.visible_gpus
                                         if g.vendor == "nvidia")]
    evidence += [f"conda-forge's build for this machine: pytorch {choice.build.version} {choice.build.label} "
                 f"({'; '.join(choice.reasons)})",
                 "a plain `pytorch` falls back to the CPU build whenever the CUDA one cannot be installed: where the "
                 "environment is made without a GPU in sight (a docker build, CI), set CONDA_OVERRIDE_CUDA there"]
    return [Finding("conda-cpu-build-on-gpu-machine", "error", "conda installed a CPU-only pytorch on a machine "
                    "with a GPU conda-forge's CUDA build runs", tuple(evidence), _fix(ctx, conda, choice))]


def check_conda_cuda_version_too_new(ctx: Context) -> list[Finding]:
    conda = conda_prefix(ctx)
    if conda is None or not conda_managed(ctx):
        return []
    have = driver_cuda(ctx.machine)
    if have is None:
        return []
    major = int(have.split(".")[0])
    evidence = []
    for record in (conda.get("cuda-version"), conda.get("pytorch")):
        if record is None:
            continue
        cuda = record.version if record.name == "cuda-version" else record.cuda
        if cuda and int(cuda.split(".")[0]) > major:
            evidence.append(f"{_record_line(record)}: needs a driver for CUDA {cuda.split('.')[0]}")
    if not evidence:
        return []
    evidence.append(f"the NVIDIA driver {ctx.machine.nvidia_driver or ''} runs CUDA {have}".replace("  ", " ")
                    + ctx.source("nvidia_driver" if ctx.machine.nvidia_driver else "cuda_driver_api"))
    return [Finding("conda-cuda-version-too-new", "error", f"the environment's CUDA is newer than the driver runs "
                    f"(CUDA {have})", tuple(evidence), _fix(ctx, conda, _choice(ctx, conda)))]


def _arch(arch_list: str) -> CudaArch | None:
    sm, ptx = [], []
    for part in arch_list.split(";"):
        number, _, suffix = part.strip().partition("+")
        major, _, minor = number.partition(".")
        if not (major.isdigit() and minor.isdigit()):
            return None
        sm.append(int(major) * 10 + int(minor))
        if suffix.upper() == "PTX":
            ptx.append(sm[-1])
    return CudaArch(sm=tuple(sm), ptx=tuple(ptx), confidence="recipe")


def check_conda_gpu_arch_not_in_build(ctx: Context) -> list[Finding]:
    conda = conda_prefix(ctx)
    pytorch = conda.get("pytorch") if conda else None
    if conda is None or pytorch is None or pytorch.cuda is None or not conda_managed(ctx):
        return []
    where, listed = conda.arch_script, conda.arch_list
    if listed is None:  # before 2.10.0 no activation script: the table's list for the build
        from ..resolver.conda_forge import builds

        known = next((b for b in builds() if b.version == pytorch.version and b.subdir == pytorch.subdir and
                      b.cuda == pytorch.cuda and (b.arm_variant == "tegra") == _tegra(conda)), None)
        where, listed = "the conda-forge table (recipe)", known.arch_list if known else None
    arch = _arch(listed) if listed else None
    if arch is None:
        return []
    jetson = ctx.machine.jetson is not None or any((g.family or "").startswith("jetson-") for g in ctx.machine.gpus)
    findings = []
    for gpu in ctx.machine.gpus_of("nvidia"):
        if not gpu.visible or gpu.sm is None:
            continue
        runs = cubin_or_ptx(arch, gpu.sm)
        if jetson and runs and runs[0] == "cubin" and runs[1] != gpu.sm:
            runs = None  # an sm_8x cubin of a lower minor is not counted on a Jetson (resolver/conda_forge.py)
        if runs is not None:
            continue
        evidence = (f"GPU {gpu.label}: compute capability {gpu.compute_capability} (sm_{gpu.sm})",
                    f"{where}: CF_TORCH_CUDA_ARCH_LIST={listed}", _record_line(pytorch))
        findings.append(Finding("conda-gpu-arch-not-in-build", "error", f"conda's pytorch build has no kernels for "
                                f"{gpu.label} (sm_{gpu.sm})", evidence, _fix(ctx, conda, _choice(ctx, conda))))
    return findings


def _tegra(conda: CondaPrefix) -> bool:
    variant = conda.get("arm-variant")
    return variant is not None and variant.build == "tegra"


def check_conda_companion_build(ctx: Context) -> list[Finding]:
    """A CPU torchvision (or torchaudio) next to a CUDA pytorch, or one built for another CUDA version: conda's
    solver picks CPU torchvision where nothing prefers the CUDA one, and torchvision needs pytorch's CUDA
    major.minor."""
    conda = conda_prefix(ctx)
    pytorch = conda.get("pytorch") if conda else None
    if conda is None or pytorch is None or not conda_managed(ctx):
        return []
    findings = []
    for package in COMPANIONS:
        record = conda.get(package)
        if record is None or (record.cpu and pytorch.cpu) or (record.cuda and record.cuda == pytorch.cuda):
            continue
        if not record.cpu and not record.cuda:
            continue  # a build string of another shape: nothing to compare
        what = "a CPU build" if record.cpu else f"built for CUDA {record.cuda}"
        against = "a CPU build" if pytorch.cpu else f"a CUDA {pytorch.cuda} build"
        evidence = (_record_line(record), _record_line(pytorch))
        pattern = f"cuda{pytorch.cuda.replace('.', '')}_*" if pytorch.cuda else "cpu_*"
        fix = install_command([f"pytorch={pytorch.version}={pytorch.build}", f"{package}=*={pattern}"],
                              conda.prefix, conda.manager, conda.pixi_manifest)
        findings.append(Finding("conda-companion-cpu-build" if record.cpu and pytorch.cuda else
                                "conda-companion-mismatch", "error", f"{package} is {what}, pytorch {against}",
                                evidence, fix + ("" if conda.manager == "pixi" else " (mamba: the same arguments)")))
    return findings


def check_pip_torch_over_conda_torch(ctx: Context) -> list[Finding]:
    conda = conda_prefix(ctx)
    pytorch = conda.get("pytorch") if conda else None
    dist = ctx.installed.dist("torch")
    if conda is None or pytorch is None or dist is None or conda_managed(ctx):
        return []
    from .fix import uninstall_command

    evidence = (_record_line(pytorch),
                f"{dist.path}: torch {dist.version}, installed by {dist.installer or 'an unknown installer'}",
                "`import torch` loads the pip copy; conda still lists its own and replaces files under it on its next "
                "change")
    choice = _choice(ctx, conda)
    fix = (f"remove pip's copy (`{uninstall_command(ctx.installed, ['torch'])}`), then put conda's back: "
           + _fix(ctx, conda, choice, ("--force-reinstall",) if conda.manager != "pixi" else ()))
    return [Finding("pip-torch-over-conda-torch", "error", f"a {dist.installer or 'pip'}-installed torch over "
                    "conda's pytorch", evidence, fix)]


CONDA_CHECKS = (check_pip_torch_over_conda_torch, check_conda_cpu_build_on_gpu_machine,
                check_conda_cuda_version_too_new, check_conda_gpu_arch_not_in_build, check_conda_companion_build)
