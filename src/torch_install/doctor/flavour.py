"""Which build an installed torch (or torchvision/torchaudio) is: its public version and index variant.

The reliable signals, in order: ``torch/version.py`` (``cuda``, ``hip``, ``xpu``, the ``+label`` of
``__version__``), then the dist-info's local label, then its ``Requires-Dist`` (nvidia-*/cuda-toolkit pins).
The distribution version alone is not enough: default-index wheels carry no label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..environment.dists import Dist
from ..resolver.variants import cuda_variant, variant_kind
from .inspect import Build, Installed

_CUDA_RUNTIME_PIN = re.compile(r"^nvidia-cuda-runtime(?:-cu[0-9]+)?\s*\(?==\s*([0-9]+)\.([0-9]+)", re.I)
_CUDA_TOOLKIT_PIN = re.compile(r"^cuda-toolkit(?:\[[^\]]*\])?\s*\(?==\s*([0-9]+)\.([0-9]+)", re.I)


@dataclass(frozen=True)
class Flavour:
    """An installed package's build: ``variant`` is cu128, rocm6.4, xpu, cpu or unknown."""

    package: str
    version: str  # public version, "2.8.0"
    variant: str
    evidence: str  # where the variant came from, one line

    @property
    def kind(self) -> str:
        return variant_kind(self.variant)

    @property
    def pinned(self) -> str:
        """``2.8.0+cu128``: the version with the variant as local label (when it is one)."""
        return f"{self.version}+{self.variant}" if self.kind in ("cuda", "rocm", "xpu", "cpu") else self.version


def _label_variant(label: str | None) -> str | None:
    if not label:
        return None
    return label if variant_kind(label) in ("cuda", "rocm", "xpu", "cpu") else None


def _from_requires(dist: Dist) -> str | None:
    for line in dist.requires:
        if "extra ==" in line:
            continue
        match = _CUDA_RUNTIME_PIN.match(line.strip()) or _CUDA_TOOLKIT_PIN.match(line.strip())
        if match:
            return f"cu{match[1]}{match[2]}"
    return None


def torch_flavour(installed: Installed) -> Flavour | None:
    """The torch that ``import torch`` would load, or None when there is none."""
    dist = installed.dist("torch")
    build = installed.builds.get("torch")
    if dist is None and build is None:
        return None
    public = (build.version if build and build.version else dist.version if dist else "0").partition("+")[0]
    if build is not None and build.problem is None:
        if build.text("hip"):
            label = _label_variant(build.local_label)
            if label and label.startswith("rocm"):
                return Flavour("torch", public, label, f"torch/version.py: __version__ = {build.version!r}")
            hip = build.text("hip") or ""
            major_minor = ".".join(hip.split(".")[:2])
            return Flavour("torch", public, f"rocm{major_minor}", f"torch/version.py: hip = {hip!r}")
        if build.text("cuda"):
            variant = cuda_variant(build.text("cuda") or "") or "unknown"
            return Flavour("torch", public, variant, f"torch/version.py: cuda = {build.text('cuda')!r}")
        if build.text("xpu"):
            return Flavour("torch", public, "xpu", f"torch/version.py: xpu = {build.text('xpu')!r}")
        return Flavour("torch", public, "cpu", "torch/version.py: cuda = None, hip = None, xpu = None "
                                               f"(__version__ = {build.version!r})")
    if dist is not None:
        label = _label_variant(dist.local_label)
        if label:
            return Flavour("torch", public, label, f"{dist.directory_name}: version {dist.version}")
        from_requires = _from_requires(dist)
        if from_requires:
            return Flavour("torch", public, from_requires, f"{dist.directory_name}/METADATA: CUDA runtime requirement")
    return Flavour("torch", public, "unknown", "torch/version.py unreadable and the dist-info names no build")


def companion_flavour(package: str, dist: Dist, build: Build | None) -> Flavour:
    """torchvision/torchaudio: the build label of the embedded ``__version__``, else of the dist-info."""
    if build is not None and build.problem is None and _label_variant(build.local_label):
        return Flavour(package, dist.public_version, build.local_label or "unknown",
                       f"{package}/version.py: __version__ = {build.version!r}")
    label = _label_variant(dist.local_label)
    if label:
        return Flavour(package, dist.public_version, label, f"{dist.directory_name}: version {dist.version}")
    return Flavour(package, dist.public_version, "unknown", f"{package} carries no build label")
