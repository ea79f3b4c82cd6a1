"""What the resolver returns: the chosen build, why, what was rejected, and warnings with stable codes.

The JSON form (``Plan.to_dict``) is a documented contract: docs/plan-json.md.
"""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from ..index_url import DEFAULT_INDEX_BASE
from ..machine import Machine

# Stable warning codes: extend, never rename.
WARNING_CODES = (
    "driver-too-old",
    "driver-unknown",
    "gpu-arch-unsupported",
    "mixed-gpus",
    "no-gpu-variant-for-version",
    "python-unsupported",
    "platform-unsupported",
    "rocm-override-needed",
    "integrated-gpu-only",
    "gpu-arch-unknown",
    "rocm-driver-window",
)


class Request(NamedTuple):
    """What the user asked for."""

    packages: tuple[str, ...] = ("torch",)  # PEP 508 requirement strings, as given
    variant: str | None = None  # force one: "cu128", "cpu", "rocm6.4", "xpu"
    channel: str = "stable"  # stable | test | nightly
    index_base: str = DEFAULT_INDEX_BASE

    def to_dict(self) -> dict[str, Any]:
        return {"packages": list(self.packages), "variant": self.variant, "channel": self.channel,
                "index_base": self.index_base}


class PlanWarning(NamedTuple):
    code: str
    message: str


class Rejection(NamedTuple):
    variant: str
    torch: str
    reason: str


class Choice(NamedTuple):
    variant: str  # index variant id: cu128, rocm6.4, xpu, cpu; "default" for the default index (macOS)
    torch: str  # "2.9.1"
    index_url: str | None  # None: the default index
    packages: Mapping[str, str] = MappingProxyType({})  # name -> exact version (with local label)


class Plan(NamedTuple):
    machine: Machine
    request: Request
    choice: Choice | None
    gpu_accelerated: bool
    reasons: tuple[str, ...] = ()  # why this choice, one line each
    warnings: tuple[PlanWarning, ...] = ()
    rejected: tuple[Rejection, ...] = ()
    notes: tuple[str, ...] = ()  # caveats: facts the choice rests on that are inferred/unverified
    commands: Mapping[str, str] = MappingProxyType({})  # "pip", "uv" -> ready command line

    def warning_codes(self) -> tuple[str, ...]:
        return tuple(w.code for w in self.warnings)

    def to_dict(self) -> dict[str, Any]:
        choice = None
        if self.choice:
            choice = {"variant": self.choice.variant, "torch": self.choice.torch,
                      "index_url": self.choice.index_url, "packages": dict(self.choice.packages)}
        return {
            "choice": choice,
            "gpu_accelerated": self.gpu_accelerated,
            "reasons": list(self.reasons),
            "warnings": [{"code": w.code, "message": w.message} for w in self.warnings],
            "rejected": [{"variant": r.variant, "torch": r.torch, "reason": r.reason} for r in self.rejected],
            "notes": list(self.notes),
            "machine": self.machine.to_dict(),
            "request": self.request.to_dict(),
            "commands": dict(self.commands),
        }
