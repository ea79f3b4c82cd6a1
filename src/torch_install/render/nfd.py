"""Node Feature Discovery labels (``detect --format nfd``): a node's facts and the build resolved for it, as the lines
of an NFD feature file (``/etc/kubernetes/node-feature-discovery/features.d/torch-install``) that a scheduler
matches pods against."""

from __future__ import annotations

import re

from ..machine import Machine

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..resolver.plan import Plan

LABEL_PREFIX = "torch-install.io"
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def nfd_labels(machine: Machine, plan: Plan | None = None) -> dict[str, str]:
    """Label name -> value for a node: the resolved variant, driver CUDA, NVIDIA arch, AMD gfx target.

    A node with several GPU models gets the lowest NVIDIA architecture (a pod may land on any of its GPUs).
    """
    from ..wheelnext.properties import driver_cuda

    labels: dict[str, str] = {}
    if plan is not None and plan.choice is not None:
        labels["variant"] = plan.choice.variant
        labels["torch"] = plan.choice.torch.split("+")[0]
    cuda = driver_cuda(machine)
    if cuda:
        labels["cuda-driver-max"] = f"{cuda[0]}.{cuda[1]}"
    if machine.nvidia_driver:
        labels["nvidia-driver"] = machine.nvidia_driver
    sms = sorted(g.sm for g in machine.visible_gpus if g.vendor == "nvidia" and g.sm is not None)
    if sms:
        labels["gpu-arch"] = f"sm_{sms[0]}"
    gfx = [g.gfx for g in machine.visible_gpus if g.vendor == "amd" and g.gfx]
    if gfx:
        labels["rocm-gfx"] = sorted(gfx)[0]
    if machine.rocm:
        labels["rocm"] = machine.rocm
    vendors = sorted({g.vendor for g in machine.visible_gpus})
    if vendors:
        labels["gpu-vendor"] = vendors[0] if len(vendors) == 1 else "mixed"
    return {k: v for k, v in labels.items() if _LABEL_VALUE.fullmatch(v) and len(v) <= 63}


def nfd_lines(machine: Machine, plan: Plan | None = None) -> str:
    """An NFD feature file (``/etc/kubernetes/node-feature-discovery/features.d/torch-install``)."""
    header = "# torch-install node labels (Node Feature Discovery feature file)"
    return "\n".join([header] + [f"{LABEL_PREFIX}/{k}={v}" for k, v in nfd_labels(machine, plan).items()])
