"""Which build an installed torch (or torchvision/torchaudio) is: its public version and index variant.

The reliable signals, in order: ``torch/version.py`` (``cuda``, ``hip``, ``xpu``, the ``+label`` of
``__version__``), then the dist-info's local label, then its ``Requires-Dist`` (nvidia-*/cuda-toolkit pins).
The distribution version alone is not enough: default-index wheels carry no label.
"""

from __future__ import annotations

import re

from .. import vendors
from ..environment.dists import Dist
from ..records import Record
from ..resolver.variants import is_index_variant, variant_kind, variant_of_build
from .inspect import Build, Installed

_CUDA_RUNTIME_PIN = re.compile(r"^nvidia-cuda-runtime(?:-cu[0-9]+)?\s*\(?==\s*([0-9]+)\.([0-9]+)", re.I)
_CUDA_TOOLKIT_PIN = re.compile(r"^cuda-toolkit(?:\[[^\]]*\])?\s*\(?==\s*([0-9]+)\.([0-9]+)", re.I)


class Flavour(Record):
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
        return f"{self.version}+{self.variant}" if is_index_variant(self.variant) else self.version


def _label_variant(label: str | None) -> str | None:
    return label if is_index_variant(label) else None


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
        return _from_version_py(public, build)
    if dist is not None:
        label = _label_variant(dist.local_label)
        if label:
            return Flavour("torch", public, label, f"{dist.directory_name}: version {dist.version}")
        from_requires = _from_requires(dist)
        if from_requires:
            return Flavour("torch", public, from_requires, f"{dist.directory_name}/METADATA: CUDA runtime requirement")
    return Flavour("torch", public, "unknown", "torch/version.py unreadable and the dist-info names no build")


def _from_version_py(public: str, build: Build) -> Flavour:
    """The build ``torch/version.py`` states: the field of a vendor's build (its registry row's ``version_field``:
    cuda, hip, xpu) that is set, the one of the ``__version__`` label's kind first; a label of that kind names the
    variant (rocm6.2.4, where hip says 6.2), else the field's version does; none set: CPU."""
    label = _label_variant(build.local_label)
    rows = [row for row in vendors.with_builds() if row.version_field and build.text(row.version_field)]
    rows.sort(key=lambda row: row.kind != variant_kind(label or ""))
    for row in rows:
        value = build.text(row.version_field or "") or ""
        derived = variant_of_build(row.build_variant or "", value) if row.build_variant else None
        if label and variant_kind(label) == row.kind and label != derived:
            return Flavour("torch", public, label, f"torch/version.py: __version__ = {build.version!r}")
        return Flavour("torch", public, derived or "unknown", f"torch/version.py: {row.version_field} = {value!r}")
    fields = ", ".join(f"{row.version_field} = None" for row in vendors.with_builds() if row.version_field)
    return Flavour("torch", public, "cpu", f"torch/version.py: {fields} (__version__ = {build.version!r})")


def companion_flavour(package: str, dist: Dist, build: Build | None) -> Flavour:
    """torchvision/torchaudio: the build label of the embedded ``__version__``, else of the dist-info."""
    if build is not None and build.problem is None and _label_variant(build.local_label):
        return Flavour(package, dist.public_version, build.local_label or "unknown",
                       f"{package}/version.py: __version__ = {build.version!r}")
    label = _label_variant(dist.local_label)
    if label:
        return Flavour(package, dist.public_version, label, f"{dist.directory_name}: version {dist.version}")
    return Flavour(package, dist.public_version, "unknown", f"{package} carries no build label")
