"""The doctor: is the PyTorch in an environment right for this machine, and if not, why and what fixes it.

``diagnose`` = machine profile + installed environment (read without importing torch) + matrix → findings,
each with evidence and a fix; the fix that reinstalls is the resolver's plan for the machine, rendered as one
command for the inspected interpreter. The JSON form is documented in docs/doctor-json.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from .. import vendors
from ..records import Record
from ..resolver.choose import resolve
from ..resolver.plan import Plan, Request
from .checks import INSTALL_FIX, SEVERITIES, Context, Finding, run_checks
from .conda import conda_findings
from .fix import Fix, build_fix
from .flavour import Flavour
from .inspect import Installed

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..machine import Machine
    from ..probe import Probe
    from ..resolver.matrix import Matrix
    from .runtime import RuntimeReport

JSON_SCHEMA = 1
# Findings that mean the files on disk are damaged: the fix must reinstall even the same version.
REPAIR_CODES = ("broken-install", "import-torch-failed", "import-torch-crashed", "nvidia-libs-missing")

# Environment variables that change what torch sees or installs (reported when set), besides every vendor's
# device-selection variables (vendors.py).
REPORTED_ENV = (
    "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA",
    "NVIDIA_DISABLE_REQUIRE", "CUDA_VERSION", "LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME", "CUDA_PATH",
    "CUDA_MODULE_LOADING", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
    "TORCH_CUDA_ARCH_LIST", "HSA_OVERRIDE_GFX_VERSION", "ROCM_PATH",
    "ROCM_HOME", "ONEAPI_DEVICE_SELECTOR", "PYTHONPATH", "PYTHONNOUSERSITE", "VIRTUAL_ENV",
    "CONDA_PREFIX", "CONDA_OVERRIDE_CUDA", "CONDA_OVERRIDE_CUDA_ARCH", "UV_CUDA_DRIVER_VERSION",
    "UV_AMD_GPU_ARCHITECTURE", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL",
    "UV_TORCH_BACKEND", "SYSTEM_VERSION_COMPAT",
)


class Report(Record):
    machine: Machine
    installed: Installed
    torch: Flavour | None
    findings: tuple[Finding, ...]
    fix: Fix | None = None
    runtime: RuntimeReport | None = None
    environment: Mapping[str, str] = MappingProxyType({})

    @property
    def hardware_known(self) -> bool:
        """False for a target profile that does not state its GPUs."""
        return self.machine.gpus_known

    @property
    def problems(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity in ("error", "warning"))

    @property
    def healthy(self) -> bool:
        return not self.problems

    @property
    def exit_code(self) -> int:
        return 0 if self.healthy else 1

    def to_dict(self) -> dict[str, object]:
        interp = self.installed.interpreter
        torch = None
        if self.torch is not None:
            dist = self.installed.dist("torch")
            torch = {"version": self.torch.version, "variant": self.torch.variant, "evidence": self.torch.evidence,
                     "dist_info": dist.path if dist else None, "installer": dist.installer if dist else None,
                     "package": self.installed.packages.get("torch")}
        return {
            "schema": JSON_SCHEMA,
            "healthy": self.healthy,
            "exit_code": self.exit_code,
            "python": {"executable": interp.executable, "version": interp.version, "python": interp.python,
                       "implementation": interp.implementation, "machine": interp.machine,
                       "prefix": interp.prefix, "venv": interp.in_venv,
                       "site_packages": list(interp.site_packages),
                       "user_site": interp.user_site if interp.user_site_active else None},
            "torch": torch,
            "packages": [{"name": d.name, "version": d.version, "path": d.path, "installer": d.installer,
                          "wheel_tags": list(d.wheel_tags)} for d in self.installed.dists],
            "conda": _conda_dict(self.installed),
            "findings": [f.to_dict() for f in self.findings],
            "fix": self.fix.to_dict() if self.fix else None,
            "runtime": self.runtime.to_dict() if self.runtime else None,
            "environment": dict(self.environment),
            "machine": self.machine.to_dict(),
        }


def _conda_dict(installed: Installed) -> dict[str, object] | None:
    """What conda installed of PyTorch in the prefix (conda-meta records), None outside a conda environment."""
    conda = installed.conda
    if conda is None:
        return None
    return {"prefix": conda.prefix, "manager": conda.manager, "manifest": conda.pixi_manifest,
            "arch_list": conda.arch_list, "problems": list(conda.problems),
            "records": [{"name": r.name, "version": r.version, "build": r.build, "build_number": r.build_number,
                         "channel": r.channel,
                         "subdir": r.subdir, "path": r.path} for r in conda.records.values()]}


def diagnose(machine: Machine, installed: Installed, matrix: Matrix, *, probe: Probe | None = None,
             environ: Mapping[str, str] | None = None,
             plan_for: Callable[[tuple[str, ...]], Plan] | None = None,
             import_torch_timeout: float | None = None, index_base: str | None = None,
             vendor_indexes: tuple[tuple[str, str], ...] = ()) -> Report:
    """Run every check; fill in the fix. ``import_torch_timeout`` set: also import torch in a child process.

    ``machine.python`` is replaced by the inspected interpreter's Python. ``plan_for`` maps requirement
    strings to the plan for this machine (default: the resolver with the given matrix).
    """
    environ = dict(environ if environ is not None else (probe.environ if probe is not None else {}))
    machine = machine._replace(python=installed.interpreter.python, python_full=installed.interpreter.python_full)
    if plan_for is None:  # a vendor's build installed: its fix keeps to the vendor's index
        from .flavour import vendor_install

        plan_for = default_planner(machine, matrix, index_base,
                                   vendor_build=vendor_install(installed, machine.platform,
                                                               matrix.vendor_builds) is not None,
                                   vendor_indexes=vendor_indexes)
    ctx = Context(machine=machine, installed=installed, matrix=matrix, probe=probe, environ=environ,
                  plan_for=plan_for)
    findings = run_checks(ctx) + conda_findings(ctx)
    runtime = None
    if import_torch_timeout is not None and ctx.torch is not None:
        from .runtime import import_torch

        mps = vendors.vendor("apple") if machine.platform == "macos_arm64" else None
        row = vendors.of_kind(ctx.torch.kind) or mps
        expect_gpu = row is not None and row.runtime_device is not None  # a build whose device torch should see
        runtime = import_torch(installed.interpreter.executable, environ, expect_gpu, import_torch_timeout)
        findings += list(runtime.findings)
    fix = None
    if any(f.fix and INSTALL_FIX in f.fix for f in findings):
        # leftovers sharing files with torch's own libraries: their uninstall damages those, so reinstall forced
        repair = any(f.code in REPAIR_CODES or (f.code == "nvidia-libs-stale-major" and INSTALL_FIX in (f.fix or ""))
                     for f in findings)
        rebuild = tuple(dict.fromkeys(name for f in findings for name in f.rebuild))
        fix = build_fix(plan_for, matrix, installed, ctx.torch, repair=repair, rebuild=rebuild)
        findings = _fill_fix(findings, fix)
        findings += _disk_findings(fix)
    reported = {name: environ[name] for name in (*vendors.selection_variables(), *REPORTED_ENV) if name in environ}
    findings = sorted(findings, key=lambda f: SEVERITIES.index(f.severity))
    return Report(machine, installed, ctx.torch, tuple(findings), fix, runtime, reported)


def _fill_fix(findings: list[Finding], fix: Fix | None) -> list[Finding]:
    text = fix.command if fix else "no PyTorch build runs on this machine (see `torch-install plan` for why)"
    return [f._replace(fix=f.fix.replace(INSTALL_FIX, text)) if f.fix and INSTALL_FIX in f.fix else f
            for f in findings]


def _disk_findings(fix: Fix | None) -> list[Finding]:
    if fix is None or not fix.space_needed_gb or fix.space_free_gb is None:
        return []
    if fix.space_free_gb >= fix.space_needed_gb:
        return []
    return [Finding("disk-space-low", "warning", "not enough free disk space for the fix",
                    (f"{fix.space_free_gb:.1f} GB free where the packages go; a {fix.plan.choice.variant} install "
                     f"needs about {fix.space_needed_gb:.0f} GB (estimate)",) if fix.plan.choice else (),
                    "free some space (e.g. `python -m pip cache purge`) before running the fix")]


def default_planner(machine: Machine, matrix: Matrix, index_base: str | None = None, vendor_build: bool = False,
                    vendor_indexes: tuple[tuple[str, str], ...] = ()) -> Callable[[tuple[str, ...]], Plan]:
    """Requirement strings -> the resolver's plan for ``machine`` (memoized), on ``index_base`` (a mirror) when
    given; with ``vendor_build``, the vendor's own build first where one serves the GPU, at the mirrors of
    ``vendor_indexes``."""
    import re

    from ..resolver.plan import Wanted
    from ..resolver.request import PACKAGES, canonical_name

    cache: dict[tuple[str, ...], Plan] = {}
    def plan_for(packages: tuple[str, ...]) -> Plan:
        if packages not in cache:  # the family's requirements, then packages built against torch ("torch-scatter")
            names = [canonical_name(found[0]) if (found := re.match(r"[A-Za-z0-9._-]+", p)) else p for p in packages]
            family = tuple(p for p, name in zip(packages, names, strict=True) if name in PACKAGES)
            others = tuple(Wanted(p, name, "installed") for p, name in zip(packages, names, strict=True)
                           if name not in PACKAGES)
            request = Request(packages=family, requirements=others, vendor_build=vendor_build,
                              vendor_indexes=vendor_indexes)
            request = request._replace(index_base=index_base) if index_base else request
            if others and not matrix.packages:  # the table of packages built against torch, which they are in
                from ..resolver.companion_facts import load_packages

                cache[packages] = resolve(machine, request, matrix._replace(packages=load_packages()))
            else:
                cache[packages] = resolve(machine, request, matrix)
        return cache[packages]

    return plan_for
