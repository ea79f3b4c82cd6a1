"""The one command that fixes an install: the resolver's plan for this machine, as close to what is installed
as a good build allows.

Keeps the user's torch version when a build of it is as good for this machine as the newest plan (same GPU
acceleration, no extra warnings); otherwise takes the nearest release that is. Installs into the inspected
interpreter, and only the torch family packages already there.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable

from .. import vendors
from ..records import Record
from ..resolver.commands import installer_argv
from ..resolver.matrix import Matrix, version_key
from ..resolver.plan import Plan
from ..resolver.request import COMPANIONS, PACKAGES
from ..resolver.steps import install_args, reinstall_args
from ..resolver.variants import variant_kind
from .flavour import Flavour
from .inspect import Installed

CPU_SPACE_GB = 1.0  # rough free space a CPU reinstall needs (download and unpacked); a vendor's row has its own


class Fix(Record):
    plan: Plan
    command: str
    reason: str  # one line: which version and why
    flavour_change: bool
    space_needed_gb: float | None = None
    space_free_gb: float | None = None

    def to_dict(self) -> dict[str, object]:
        choice = self.plan.choice
        return {"command": self.command, "reason": self.reason, "flavour_change": self.flavour_change,
                "torch": choice.torch if choice else None, "variant": choice.variant if choice else None,
                "packages": dict(choice.packages) if choice else {}, "index_url": choice.index_url if choice else None,
                "space_needed_gb": self.space_needed_gb, "space_free_gb": self.space_free_gb}


def _bad(plan: Plan) -> set[str]:
    return {w.code for w in plan.blocking_warnings()}


def as_good(candidate: Plan, best: Plan) -> bool:
    """``candidate`` runs this machine as well as ``best``: a choice, the same acceleration, no new blockers."""
    if candidate.choice is None:
        return False
    if best.gpu_accelerated and not candidate.gpu_accelerated:
        return False
    return _bad(candidate) <= _bad(best)


def companions_installed(installed: Installed) -> tuple[str, ...]:
    return tuple(p for p in COMPANIONS if installed.dist(p) is not None)


def kept_companions(installed: Installed, matrix: Matrix, torch: str) -> tuple[str, ...]:
    """The installed companions as a fix that keeps torch ``torch`` asks for them: at the installed version where a
    plan may choose it to go with that release (``rules.companion_goes_with``, the plan's own rule), else by name."""
    from ..resolver.rules import companion_goes_with

    release = matrix.release(torch)
    asked = []
    for name in companions_installed(installed):
        dist = installed.dist(name)
        version = dist.public_version if dist is not None else ""
        asked.append(f"{name}=={version}" if version and companion_goes_with(matrix, release, name, version)
                     else name)
    return tuple(asked)


def choose_plan(plan_for: Callable[[tuple[str, ...]], Plan], matrix: Matrix, installed: Installed,
                torch: Flavour | None, built: tuple[str, ...] = ()) -> tuple[Plan, str]:
    """The plan to fix with, and a one-line reason; ``built``: installed packages built against torch the plan
    takes too (their builds are wrong, and the fix installs the builds that go with the chosen torch)."""
    companions = companions_installed(installed)
    best = plan_for(("torch", *companions, *built))
    if torch is None or not matrix.has_release(torch.version):
        return best, "the plan for this machine"
    pinned = plan_for((f"torch=={torch.version}", *kept_companions(installed, matrix, torch.version), *built))
    if pinned.choice is None and built:
        pinned = plan_for((f"torch=={torch.version}", *kept_companions(installed, matrix, torch.version)))
    if as_good(pinned, best):
        return pinned, f"keeps torch {torch.version}"
    order = sorted(matrix.releases, key=lambda r: (abs(_distance(matrix, r.version, torch.version)),
                                                   -_distance(matrix, r.version, torch.version)))
    for release in order:
        if release.version == torch.version:
            continue
        if best.choice and version_key(release.version) > version_key(best.choice.torch):
            continue
        candidate = plan_for((f"torch=={release.version}", *companions, *built))
        if as_good(candidate, best):
            return candidate, f"torch {torch.version} has no good build for this machine; nearest: {release.version}"
    if best.choice:
        return best, f"torch {torch.version} has no good build for this machine; newest that has: {best.choice.torch}"
    return best, "no build of torch runs here"


def _distance(matrix: Matrix, a: str, b: str) -> int:
    """Signed number of releases between two versions (positive: ``a`` is newer)."""
    order = [r.version for r in reversed(matrix.releases)]  # oldest first
    return order.index(a) - order.index(b) if a in order and b in order else 10**6


def uses_uv(installed: Installed) -> bool:
    """Whether the inspected environment is managed with uv: no pip in it, and torch (if any) installed by uv."""
    torch = installed.dist("torch")
    return installed.dist("pip") is None and (torch is None or torch.installer == "uv")


def installer_of(installed: Installed) -> str:
    """The installer for the inspected environment: uv in a pip-less uv environment, else pip."""
    return "uv" if uses_uv(installed) else "pip"


def install_command(plan: Plan, installed: Installed, force: bool) -> str:
    """pip (or uv, in a pip-less uv environment) installing into the inspected interpreter."""
    installer = installer_of(installed)
    force_flag = ("--reinstall" if installer == "uv" else "--force-reinstall") if force else None
    args = [*([force_flag] if force_flag else []), *install_args(plan, installer)]
    return shlex.join(installer_argv(installer, "install", args, installed.interpreter.executable or "python"))


def uninstall_command(installed: Installed, names: list[str]) -> str:
    """pip (or uv, in a pip-less uv environment) uninstalling ``names`` from the inspected interpreter."""
    installer = installer_of(installed)
    args = names if installer == "uv" else ["-y", *names]
    return shlex.join(installer_argv(installer, "uninstall", args, installed.interpreter.executable or "python"))


def reinstall_command(plan: Plan, installed: Installed, names: tuple[str, ...]) -> str | None:
    """pip (or uv) installing again, from where the plan's build comes, only ``names`` (installed at the wrong
    build), into the inspected interpreter; None when the plan has none of them."""
    installer = installer_of(installed)
    args = reinstall_args(plan, names, installer)
    if not args:
        return None
    return shlex.join(installer_argv(installer, "install", args, installed.interpreter.executable or "python"))


def _same_build(installed: Installed, torch: Flavour | None, plan: Plan) -> bool:
    choice = plan.choice
    if choice is None or torch is None:
        return False
    variant = "cpu" if choice.variant == "default" else choice.variant
    mine = "cpu" if torch.variant == "default" else torch.variant
    return mine == variant


def needs_force(installed: Installed, torch: Flavour | None, plan: Plan) -> bool:
    """A flavour change that pip would skip: a pinned version equal to an installed distribution version
    (pip ignores that the installed one is another build)."""
    if plan.choice is None or _same_build(installed, torch, plan):
        return False
    for name, version in plan.choice.packages.items():
        dist = installed.dist(name)
        if dist is not None and version and dist.version == version:
            return True
    return False


def free_space_gb(installed: Installed) -> float | None:
    """Free space where the packages go (the first site-packages directory), in GB (``shutil.disk_usage``'s
    figure: os.statvfs where there is one, so the doctor does not import shutil)."""
    for directory in (*installed.interpreter.site_packages, installed.interpreter.prefix):
        try:
            if hasattr(os, "statvfs"):
                found = os.statvfs(directory)
                return found.f_bavail * found.f_frsize / 1e9
            import shutil

            return shutil.disk_usage(directory).free / 1e9
        except (OSError, ValueError):
            continue
    return None


def build_fix(plan_for: Callable[[tuple[str, ...]], Plan], matrix: Matrix, installed: Installed,
              torch: Flavour | None, repair: bool = False, rebuild: tuple[str, ...] = ()) -> Fix | None:
    """The reinstall the findings call for. ``repair``: the install on disk is damaged, so the command must
    reinstall even where its dist-info already names the pinned version (pip would skip it as satisfied).
    ``rebuild``: packages installed at the wrong build; where torch itself is the plan's build, the command installs
    only them again, from where their right builds come (``reinstall_command``)."""
    built = tuple(f"{name}=={dist.public_version}" if (dist := installed.dist(name)) is not None else name
                  for name in rebuild if name not in PACKAGES)
    plan, reason = choose_plan(plan_for, matrix, installed, torch, built)
    if plan.choice is None:
        return None
    flavour_change = torch is not None and not _same_build(installed, torch, plan)
    dist = installed.dist("torch")
    keeps_torch = not flavour_change and not repair and dist is not None and \
        dist.version == plan.choice.packages.get("torch")
    command = reinstall_command(plan, installed, rebuild) if keeps_torch and rebuild else None
    if command is not None:
        reason = f"{reason}; installs again what is the wrong build: {', '.join(rebuild)}"
    else:
        force = repair or needs_force(installed, torch, plan) or any(
            (d := installed.dist(name)) is not None and d.version == plan.choice.packages.get(name)
            for name in rebuild)
        command = install_command(plan, installed, force)
    row = vendors.of_kind(variant_kind(plan.choice.variant))
    needed = row.space_gb if row is not None else CPU_SPACE_GB
    return Fix(plan, command, reason, flavour_change, needed, free_space_gb(installed))
