"""What the resolver returns: the chosen build, why, what was rejected, and warnings with stable codes.

The JSON form (``Plan.to_dict``) is a documented contract: docs/plan-json.md.
"""

# NamedTuple value types, and no `from __future__ import annotations`: see docs/architecture.md, "Value types".
import shlex
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from ..hosts import insecure_host
from ..machine import Machine
from .commands import INSTALLERS, PRE_RELEASE_CHANNEL, installer_argv

DEFAULT_INDEX_BASE = "https://download.pytorch.org/whl"

# The plan's warning codes, the one list the code reads (extend, never rename; docs/plan-json.md documents each).
# True: the warning means the chosen build does not run, or cannot be installed, on the machine ("blocking"):
# a fleet does not count such a machine as served, and the doctor's fix avoids such a build.
WARNING_CODES: Mapping[str, bool] = MappingProxyType({
    "driver-too-old": True,
    "driver-unknown": False,
    "gpu-arch-unsupported": True,
    "mixed-gpus": False,
    "no-gpu-variant-for-version": True,
    "python-unsupported": True,
    "platform-unsupported": True,
    "rocm-override-needed": False,
    "integrated-gpu-only": False,
    "gpu-arch-unknown": False,
    "rocm-driver-window": False,
})


def check_code(code: str) -> str:
    """``code`` itself, or a ValueError: a warning code that is not in WARNING_CODES is a bug."""
    if code not in WARNING_CODES:
        raise ValueError(f"unknown plan warning code {code!r} (add it to WARNING_CODES and docs/plan-json.md)")
    return code


class Request(NamedTuple):
    """What the user asked for."""

    packages: tuple[str, ...] = ("torch",)  # PEP 508 requirement strings of the torch family, as given
    variant: str | None = None  # force one: "cu128", "cpu", "rocm6.4", "xpu"
    channel: str = "stable"  # stable | test | nightly
    index_base: str = DEFAULT_INDEX_BASE
    others: tuple[str, ...] = ()  # what rides along, for the user's own index: requirements, "-r FILE"
    installer_options: tuple[str, ...] = ()  # given after "--": passed to every installer step

    def to_dict(self) -> dict[str, Any]:
        return {"packages": list(self.packages), "variant": self.variant, "channel": self.channel,
                "index_base": self.index_base, "others": list(self.others),
                "installer_options": list(self.installer_options)}


class PlanWarning(NamedTuple):
    """One warning: its code (``WARNING_CODES``), one line, and what it is about: the chosen build ("choice"), or
    the newest matching release and why it was passed over ("newest"). Only a blocking code about the choice
    means the chosen build does not run or install here."""

    code: str
    message: str
    about: str = "choice"  # choice | newest

    @property
    def blocking(self) -> bool:
        return self.about == "choice" and WARNING_CODES[self.code]


class Rejection(NamedTuple):
    variant: str
    torch: str
    reason: str


class Choice(NamedTuple):
    variant: str  # index variant id: cu128, rocm6.4, xpu, cpu; "default" for the default index (macOS)
    torch: str  # "2.9.1"
    index_url: str | None  # None: the default index
    packages: Mapping[str, str] = MappingProxyType({})  # name -> exact version (with local label)


class Need(NamedTuple):
    """One change that would let the newest matching release run (on the GPU): what, the machine's value, the
    value needed, and the words for it ("Python ≥ 3.11")."""

    what: str  # python | nvidia_driver | rocm | glibc | macos | os | libc
    have: str | None
    want: str  # ">=3.11", "<=3.14", ">=580.65.06", "sm_75 or newer", "linux", "glibc"
    text: str


class Upgrade(NamedTuple):
    """What it would take to get the newest matching release on the machine's GPU: the changes (``needs``) and,
    where no change to this machine gets it onto the GPU, why not (``why_not``). ``gpu`` False: the needs get
    the release installed, not onto a GPU (a machine without a GPU to use, or a release without code for it)."""

    torch: str
    gpu: bool
    needs: tuple[Need, ...] = ()
    why_not: str | None = None  # what no change here lifts, after "torch X" ("has no ROCm build for …")

    def text(self) -> str:
        """One line: "torch 2.15.0 on the GPU needs Python ≥ 3.11 and NVIDIA driver ≥ 580.65.06"."""
        if not self.needs:
            return f"torch {self.torch} {self.why_not or 'does not fit this machine'}"
        where = f"torch {self.torch}" + (" on the GPU" if self.gpu else "")
        items = [n.text for n in self.needs]
        joined = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
        return f"{where} needs {joined}" + (f", and {self.why_not}" if self.why_not else "")

    def to_dict(self) -> dict[str, Any]:
        return {"torch": self.torch, "gpu": self.gpu, "why_not": self.why_not,
                "needs": [{"what": n.what, "from": n.have, "to": n.want, "text": n.text} for n in self.needs]}


class Plan(NamedTuple):
    machine: Machine
    request: Request
    choice: Choice | None
    gpu_accelerated: bool
    reasons: tuple[str, ...] = ()  # why this choice, one line each
    warnings: tuple[PlanWarning, ...] = ()
    rejected: tuple[Rejection, ...] = ()
    notes: tuple[str, ...] = ()  # caveats: facts the choice rests on that are inferred/unverified
    upgrade: Upgrade | None = None  # what would get the newest matching release (on the GPU); None: the choice is it

    @property
    def commands(self) -> dict[str, str]:
        """``{"pip": ..., "uv": ...}``: the ready command lines (none without a choice)."""
        return command_lines(self)

    def blocking_warnings(self) -> tuple[PlanWarning, ...]:
        """Warnings that mean the chosen build does not run (or cannot be installed) on the machine."""
        return tuple(w for w in self.warnings if w.blocking)

    def to_dict(self) -> dict[str, Any]:
        choice = None
        if self.choice:
            choice = {"variant": self.choice.variant, "torch": self.choice.torch,
                      "index_url": self.choice.index_url, "packages": dict(self.choice.packages)}
        return {
            "choice": choice,
            "gpu_accelerated": self.gpu_accelerated,
            "reasons": list(self.reasons),
            "warnings": [{"code": w.code, "message": w.message, "about": w.about, "blocking": w.blocking}
                         for w in self.warnings],
            "rejected": [{"variant": r.variant, "torch": r.torch, "reason": r.reason} for r in self.rejected],
            "notes": list(self.notes),
            "upgrade": self.upgrade.to_dict() if self.upgrade else None,
            "machine": self.machine.to_dict(),
            "request": self.request.to_dict(),
            "commands": dict(self.commands),
        }


# -- the plan as installer arguments: every command pins the exact version with its local label
# (``torch==2.9.1+cu128``), so an installer can neither keep an installed build of another flavour nor pull one
# from another index

def requirement_lines(plan: Plan) -> list[str]:
    """One pinned requirement per chosen package: ``name==version``; where the version is left to the installer (a
    pre-release channel), the requirement as the user gave it (``torch>=2.9``), else the bare name."""
    if plan.choice is None:
        return []
    packages = plan.choice.packages
    if all(packages.values()):  # every version chosen: packaging's parser is not needed (nor imported)
        return [f"{name}=={version}" for name, version in packages.items()]
    from packaging.requirements import InvalidRequirement, Requirement  # only for an open version

    given: dict[str, str] = {}
    for text in plan.request.packages:
        try:
            given.setdefault(Requirement(text).name.lower(), str(Requirement(text)))
        except InvalidRequirement:
            continue
    return [f"{name}=={version}" if version else given.get(name, name) for name, version in packages.items()]


def install_args(plan: Plan, installer: str = "pip") -> list[str]:
    """Arguments after ``pip install`` / ``uv pip install``: pins, pre-release switch, index."""
    args = requirement_lines(plan)
    if plan.request.channel == PRE_RELEASE_CHANNEL:
        args += ["--pre"] if installer == "pip" else ["--prerelease", "allow"]
    if plan.choice is not None and plan.choice.index_url:
        args += ["--index-url", plan.choice.index_url]
        trusted = insecure_host(plan.choice.index_url)  # a plain-http mirror the user allowed (--allow-insecure-index)
        if trusted:
            args += ["--trusted-host", trusted] if installer == "pip" else ["--allow-insecure-host", trusted]
    return args


def ride_along_args(plan: Plan) -> list[str]:
    """The second step's arguments when other packages ride along: them (``-r FILE`` kept), with the torch family
    pinned to the chosen build (extras as given) and no index option, so they come from the user's own index and
    the installed build satisfies the pins: the torch index never serves them, the default index never replaces
    the build. Empty when nothing rides along."""
    if plan.choice is None or not plan.request.others:
        return []
    from packaging.requirements import InvalidRequirement, Requirement

    extras: dict[str, str] = {}
    for text in plan.request.packages:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.extras:
            extras[req.name.lower()] = "[" + ",".join(sorted(req.extras)) + "]"
    pins = [f"{name}{extras.get(name, '')}=={version}" for name, version in plan.choice.packages.items() if version]
    return [*plan.request.others, *pins, *plan.request.installer_options]


def install_steps(plan: Plan, installer: str = "pip") -> list[list[str]]:
    """The arguments after ``pip install`` of each step: the chosen build from its index, then (when other
    packages ride along) the others from the user's index (``ride_along_args``)."""
    if plan.choice is None:
        return []
    first = [*install_args(plan, installer), *plan.request.installer_options]
    second = ride_along_args(plan)
    return [first, second] if second else [first]


def command_lines(plan: Plan) -> dict[str, str]:
    """Ready command lines ``{"pip": ..., "uv": ...}`` (shell-quoted, POSIX rules; two steps joined with
    ``&&``); empty without a choice."""
    if plan.choice is None:
        return {}
    return {installer: " && ".join(shlex.join(installer_argv(installer, "install", step))
                                   for step in install_steps(plan, installer)) for installer in INSTALLERS}
