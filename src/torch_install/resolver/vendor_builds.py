"""Builds of torch that a GPU vendor publishes on an index of its own: AMD's ROCm wheel indexes (one multi-arch
index per release stream, the GPU chosen by a ``[device-gfxNNNN]`` extra) and the Jetson AI Lab index (one per
JetPack and CUDA). The facts are package data (``data/vendor-builds.json``, built by
``scripts/build_vendor_builds.py``; docs/vendor-builds.md); this module reads them into records and answers the
questions the resolver asks of them. A new vendor index is a row of that table (its vendor a row of
``vendors.py``); nothing here names a vendor.

    builds = load_vendor_builds()
    builds.indexes["amd-stable"].url                       # "https://stable.repo.amd.com/rocm/whl-next/"
    build = builds.of_vendor("amd", "windows_x86_64")[0]   # newest first
    build.packages["torch"], build.variant                 # "2.14.0+rocm10.1.0", "rocm10.1.0"
    build.targets["windows_x86_64"]["gfx1100"]             # "release-ready" (AMD's support level there)
    build.vendor_index.extra_for("gfx1100")                # "device-gfx1100"
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from ..package_data import load_json
from ..records import Record
from ..versions import numeric_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

_EMPTY: Mapping[str, Any] = MappingProxyType({})
TABLE = "resolver/data/vendor-builds.json"


class VendorIndex(Record):
    """One index a vendor publishes builds on, and how its builds are chosen."""

    id: str  # "amd-stable"
    vendor: str  # the vendors.py row: "amd", "nvidia"
    name: str  # in messages: "AMD's stable ROCm index (whl-next)"
    url: str
    channel: str = "stable"  # the request channel it serves: stable | nightly
    platforms: tuple[str, ...] = ()
    extra: str | None = None  # the extra that installs one device's code: "device-{arch}"
    all_extra: str | None = None  # the extra that installs every device's: "device-all"
    extra_packages: tuple[str, ...] = ()  # the packages that take the device extras: torch, torchvision
    runtime: tuple[str, ...] = ()  # distributions its builds bring along (names, or prefixes ending in "-")
    l4t: tuple[str, ...] = ()  # a Jetson index: the L4T majors its builds run on
    cuda: str | None = None  # the CUDA its builds are made with ("12.6")
    confidence: str = "unverified"  # of the index itself (its URL, what it serves)
    sources: tuple[str, ...] = ()
    note: str | None = None

    def extra_for(self, arch: str) -> str | None:
        """The extra that installs the code for one architecture ("device-gfx1100"), or None (no extras)."""
        return self.extra.replace("{arch}", arch) if self.extra else None


class VendorBuild(Record):
    """One build on a vendor index: its packages as the index names them, its Pythons and its targets."""

    vendor_index: VendorIndex
    variant: str  # the build's label as a variant id: "rocm10.1.0", "cu126"
    packages: Mapping[str, str]  # torch/torchvision/torchaudio -> version ("" on a pre-release channel)
    date: str
    confidence: str  # of the versions (that the index has them)
    sources: tuple[str, ...]
    python: Mapping[str, tuple[str, ...]]  # platform -> Python tags with wheels
    python_confidence: str
    targets: Mapping[str, Mapping[str, str | None]]  # platform -> architecture -> its vendor's support level
    targets_confidence: str
    targets_note: str | None = None
    needs: tuple[str, ...] = ()  # what the machine needs besides (libraries the wheels link, not declared)

    @property
    def torch(self) -> str:
        """The public torch version ("2.14.0"); "" on a pre-release channel, where the installer picks."""
        return self.packages.get("torch", "").split("+", 1)[0]



class SupportLevel(Record):
    id: str  # "release-ready"
    text: str  # "Release Ready"
    confidence: str  # what the level says of a build running there


class VendorBuilds(Record):
    """The vendors' indexes and their builds (newest first per index), the support levels (top first) and what
    to say where no build serves a vendor's GPU."""

    indexes: Mapping[str, VendorIndex]
    builds: tuple[VendorBuild, ...]
    support_levels: tuple[SupportLevel, ...] = ()
    declined: Mapping[str, str] = _EMPTY  # vendor -> the ways that remain
    l4t_cuda: Mapping[str, str] = _EMPTY  # L4T release prefix ("36.4", "35") -> the CUDA it ships
    sources: Mapping[str, str] = _EMPTY

    def of_vendor(self, vendor: str, platform: str, channel: str = "stable") -> list[VendorBuild]:
        """The vendor's builds for a platform on a channel, the newest torch first (a tie keeps the table's
        order: the newer stream first)."""
        found = [b for b in self.builds if b.vendor_index.vendor == vendor and b.vendor_index.channel == channel
                 and platform in b.targets]
        return sorted(found, key=lambda b: numeric_key(b.torch or "0"), reverse=True)

    def cuda_of_l4t(self, l4t: str) -> str | None:
        """The CUDA an L4T release ships ("36.4.3" -> "12.6"): the longest prefix the table knows, else None."""
        parts = l4t.split(".")
        for n in range(len(parts), 0, -1):
            found = self.l4t_cuda.get(".".join(parts[:n]))
            if found:
                return found
        return None

    def level(self, level_id: str | None) -> SupportLevel | None:
        return next((s for s in self.support_levels if s.id == level_id), None)

    def top_level(self) -> str | None:
        return self.support_levels[0].id if self.support_levels else None

    def with_urls(self, urls: Mapping[str, str]) -> VendorBuilds:
        """The same builds with some indexes at another URL (a mirror: index id -> URL)."""
        if not urls:
            return self
        moved = {i: (x._replace(url=urls[i]) if i in urls else x) for i, x in self.indexes.items()}
        return self._replace(indexes=MappingProxyType(moved),
                             builds=tuple(b._replace(vendor_index=moved[b.vendor_index.id]) for b in self.builds))

    def with_builds(self, index_id: str, builds: tuple[VendorBuild, ...]) -> VendorBuilds:
        """The table with one index's builds replaced (what a live index lists)."""
        kept = tuple(b for b in self.builds if b.vendor_index.id != index_id)
        return self._replace(builds=(*builds, *kept))


def vendor_builds_from_dict(data: Mapping[str, Any]) -> VendorBuilds:
    """Read the JSON form of data/vendor-builds.json."""
    indexes = {}
    for index_id, row in data["indexes"].items():
        indexes[index_id] = VendorIndex(
            id=index_id, vendor=row["vendor"], name=row["name"], url=row["url"], channel=row.get("channel", "stable"),
            platforms=tuple(row["platforms"]), extra=row.get("extra"), all_extra=row.get("all_extra"),
            extra_packages=tuple(row.get("extra_packages", ())), runtime=tuple(row.get("runtime", ())),
            l4t=tuple(row.get("l4t", ())), cuda=row.get("cuda"),
            confidence=row.get("conf", "unverified"), sources=tuple(row.get("src", ())), note=row.get("note"))
    builds = tuple(
        VendorBuild(vendor_index=indexes[row["index"]], variant=row["variant"],
                    packages=MappingProxyType(row["packages"]), date=row["date"], confidence=row["conf"],
                    sources=tuple(row["src"]),
                    python=MappingProxyType({p: tuple(v) for p, v in row["python"].items()}),
                    python_confidence=row["python_conf"],
                    targets=MappingProxyType({p: MappingProxyType(t) for p, t in row["targets"].items()}),
                    targets_confidence=row["targets_conf"], targets_note=row.get("targets_note"),
                    needs=tuple(row.get("needs", ())))
        for row in data["builds"])
    levels = tuple(SupportLevel(k, v["text"], v["conf"]) for k, v in data.get("support_levels", {}).items())
    return VendorBuilds(indexes=MappingProxyType(indexes), builds=builds, support_levels=levels,
                        declined=MappingProxyType(data.get("declined", {})),
                        l4t_cuda=MappingProxyType(data.get("l4t_cuda", {})),
                        sources=MappingProxyType(data.get("sources", {})))


@lru_cache(maxsize=1)
def load_vendor_builds() -> VendorBuilds:
    """The embedded table (read once per process)."""
    return vendor_builds_from_dict(load_json(TABLE))
