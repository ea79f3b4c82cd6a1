"""The chosen build as pins (``torch==2.9.1+cu128``): one rule for every place that keeps the build, the installer's
later steps (``steps.py``), the constraints file (``--format constraints``), a Dockerfile's ``PIP_CONSTRAINT``,
and the pin ``install --pin`` writes into an environment after installing (``kept_pins``).

The rule: each package of the torch family at its chosen version, then each requested package built against
torch that is installed with the build, at its chosen version (one whose version the installer chooses, or that
is left out, has no pin).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .plan import Plan
from .request import PACKAGES

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from .matrix import Matrix


def build_pins(plan: Plan, extras: Mapping[str, str] | None = None, index_only: bool = False) -> list[str]:
    """The chosen build's pins, by the rule above; ``extras``: the extras of a family member to write in its pin
    (``torch[opt-einsum]==2.9.1+cu128``); ``index_only``: only the packages built against torch that come from the
    build's own index (the others a later step names itself)."""
    if plan.choice is None:
        return []
    extras = extras or {}
    pins = [f"{name}{extras.get(name, '')}=={version}" for name, version in plan.choice.packages.items() if version]
    return pins + [f"{p.name}=={p.version}" for p in plan.choice.companions
                   if p.version and p.kind != "left-out" and (p.kind == "index" or not index_only)]


def render_constraints(plan: Plan) -> str:
    """A pip/uv constraints file keeping the chosen build: a comment, then one pin per line."""
    lines = build_pins(plan)
    if not lines or plan.choice is None:
        return ""
    head = (f"# torch-install: keeps torch {plan.choice.torch} ({plan.choice.variant}) installed; use with "
            "pip -c FILE, PIP_CONSTRAINT or UV_CONSTRAINT")
    return "\n".join([head, *lines]) + "\n"


def kept_pins(plan: Plan, installed: Mapping[str, str], matrix: Matrix | None = None) -> list[str]:
    """The pins that keep the plan's build once it is installed (``installed``: name -> version of the family and
    of every package built against torch in the environment): the build's pins at the versions installed, every
    other installed package built against torch, and each family member of the release that is not installed at
    the release's match (labelled unless the default index's wheel is this very build), so that a later install
    of it takes the matching build or none. Empty when the plan's torch is not what is installed (the run
    installed nothing)."""
    choice = plan.choice
    if choice is None or installed.get("torch") != choice.packages.get("torch"):
        return []
    pins = [f"{name}=={installed[name]}" for name in PACKAGES if name in installed]
    pins += [f"{name}=={version}" for name, version in sorted(installed.items()) if name not in PACKAGES]
    release = matrix.release(choice.torch) if matrix is not None and matrix.has_release(choice.torch) else None
    if release is not None and plan.request.channel == "stable":
        default_build = release.pypi.get(plan.machine.platform or "")
        for name, version in release.companions.items():
            if name in installed or name not in PACKAGES:
                continue
            labelled = choice.variant not in ("default", default_build) and matrix is not None and \
                matrix.companion_labelled(name, version)
            pins.append(f"{name}=={version}+{choice.variant}" if labelled else f"{name}=={version}")
    return pins


def unguarded(plan: Plan, pins: Iterable[str], matrix: Matrix | None = None) -> list[str]:
    """The pins of ``pins`` that the default index's other build of the same version satisfies too: a family
    member pinned without a local label, where the build comes from an index of its own and the default index's
    build of the release is another (the stable-ABI companions the PyTorch index publishes unlabelled, torchvision
    0.29.1 and torchaudio 2.11.1 on; a vendor index's unlabelled torch). A later ``pip install`` of it from the
    default index takes that build: only its ``version.py`` tells, which the doctor reads."""
    choice = plan.choice
    if choice is None or not choice.index_url or choice.variant == "default":
        return []
    release = matrix.release(choice.torch) if matrix is not None and matrix.has_release(choice.torch) else None
    if release is not None and release.pypi.get(plan.machine.platform or "") == choice.variant:
        return []  # the default index's wheel is this very build
    return [pin for pin in pins if "+" not in pin and pin.partition("==")[0] in PACKAGES]


# The names of the uv indexes torch-install writes begin so, and no others do: ``--merge`` and the pin of a uv project
# add, update and remove only those (a user's own index, "pytorch-cu124" as uv's guide names it, is never touched)
OWN_INDEX_PREFIX = "torch-install-"


def index_name(plan: Plan) -> str:
    """Name of the uv index entry of the chosen build's index: ``torch-install-cu128``,
    ``torch-install-nightly-cu128``; a vendor index's id after the prefix: ``torch-install-amd-stable``."""
    assert plan.choice is not None
    if plan.choice.vendor_index is not None:
        return f"{OWN_INDEX_PREFIX}{plan.choice.vendor_index.id}"
    channel = "" if plan.request.channel == "stable" else f"{plan.request.channel}-"
    return f"{OWN_INDEX_PREFIX}{channel}{plan.choice.variant}"
