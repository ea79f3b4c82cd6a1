"""Which build an installed torch (or torchvision/torchaudio, or a package built against torch) is: its public
version and index variant.

The reliable signals, in order: ``<package>/version.py`` (``cuda``, ``hip``, ``xpu``, the ``+label`` of
``__version__``), then the dist-info's local label, then the URL ``direct_url.json`` names (its file's label, or the
variant directory of the index it lies in: ``…/whl/cu128/…``), then torch's ``Requires-Dist`` (nvidia-*/cuda-toolkit
pins). The distribution version alone is not enough: default-index wheels carry no label, and the PyTorch index's
stable-ABI companions (torchvision 0.29.1 on) none either, so the same version on the two indexes is two builds that
only ``version.py`` tells apart. A package built against torch (xformers, the PyG libraries, flash-attn) names its
build in its label (``+pt27cu118``, ``+cu12torch2.8cxx11abiTRUE``: ``resolver.companions.built_for_label``, the
reader the plan uses), and a pure wheel (``Tag: py3-none-any`` in its ``WHEEL``) has no build to match.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from .. import vendors
from ..environment.dists import Dist
from ..records import Record
from ..resolver.request import canonical_name
from ..resolver.variants import is_index_variant, variant_kind, variant_of_build, variant_of_cuda_pin
from ..resolver.vendor_builds import VendorBuild, VendorBuilds, load_vendor_builds
from .inspect import Build, Installed

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..resolver.companions import BuiltFor

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
        found = variant_of_cuda_pin(line)
        if found:
            return found
    return None


def url_label(url: str | None) -> str | None:
    """The local label of the wheel a URL names (``…/torch-2.8.0%2Bcu128-…whl`` -> "cu128"), else the variant of the
    PyTorch-index directory it lies in (``…/whl/cpu/torchvision-0.29.2-…whl`` -> "cpu"); None where it says neither."""
    if not url:
        return None
    from urllib.parse import unquote, urlsplit

    parts = unquote(urlsplit(url).path).split("/")
    found = re.match(r"^[^-]+-[^-+]+\+([^-]+)-", parts[-1])
    if found:
        return found[1].lower()
    return parts[-2].lower() if len(parts) > 1 and parts[-1].endswith(".whl") and is_index_variant(parts[-2]) \
        else None


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
        label = _label_variant(url_label(dist.direct_url))
        if label:
            return Flavour("torch", public, label, f"{dist.directory_name}/direct_url.json: {dist.direct_url}")
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
    label = _label_variant(url_label(dist.direct_url))
    if label:
        return Flavour(package, dist.public_version, label,
                       f"{dist.directory_name}/direct_url.json: {dist.direct_url}")
    return Flavour(package, dist.public_version, "unknown", f"{package} carries no build label")


def built_for(dist: Dist) -> tuple[BuiltFor, str] | None:
    """The build an installed package built against torch was made for, and where that was read: its version's
    local label, else the URL it was installed from; None for a pure wheel (no compiled part) or a package whose
    build nothing names."""
    from ..resolver.companions import built_for_label

    if dist.wheel_tags and all(tag.endswith("-none-any") for tag in dist.wheel_tags):
        return None
    if dist.local_label and (found := built_for_label(dist.local_label)) is not None:
        return found, f"{dist.directory_name}: version {dist.version}"
    label = url_label(dist.direct_url)
    if label and (found := built_for_label(label)) is not None:
        return found, f"{dist.directory_name}/direct_url.json: {dist.direct_url}"
    return None


# A Requires-Dist line under an extra: the distribution's name, and the extra
_EXTRA_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)[^;]*;.*\bextra\s*==\s*[\"']([^\"']+)[\"']")


class VendorInstall(Record):
    """An installed torch that is a build of a vendor's own index (a build of the vendor table), and the extras
    the family's METADATA offers: package -> extra -> the distributions it requires."""

    build: VendorBuild
    extras: Mapping[str, Mapping[str, tuple[str, ...]]]


def offered_extras(dist: Dist) -> Mapping[str, tuple[str, ...]]:
    """A distribution's extras, each with the distributions it requires (from its Requires-Dist lines)."""
    offered: dict[str, list[str]] = {}
    for line in dist.requires:
        found = _EXTRA_REQUIREMENT.match(line)
        if found:
            offered.setdefault(found[2], []).append(canonical_name(found[1]))
    return MappingProxyType({extra: tuple(names) for extra, names in offered.items()})


def vendor_install(installed: Installed, platform: str | None, table: VendorBuilds | None = None
                   ) -> VendorInstall | None:
    """The vendor build the installed torch is, or None. A build of an index with device extras is known by its
    version and by its METADATA offering the index's all-devices extra; one of an index without them (a Jetson
    index: unlabelled) by its version, where it brings no CUDA runtime of its own (the SBSA wheels of the same
    version do). A nightly build: its label starts with the nightly's variant."""
    dist = installed.dist("torch")
    if dist is None or not platform:
        return None
    extras = offered_extras(dist)
    for build in (table or load_vendor_builds()).builds:
        index = build.vendor_index
        if platform not in build.targets or (index.all_extra and index.all_extra not in extras):
            continue
        if build.torch and build.packages["torch"] != dist.version:
            continue
        if not build.torch and not (dist.local_label or "").startswith(build.variant):
            continue
        if not index.all_extra and _from_requires(dist):
            continue
        family = {name: offered_extras(d) for name in index.extra_packages if (d := installed.dist(name))}
        return VendorInstall(build, MappingProxyType(family))
    return None
