"""The facts about packages built against one torch (xformers, vLLM, torchao, fbgemm-gpu, torchrec, flash-attn,
the PyG libraries): every release, the torch each declares and the one it was built for, the builds each has,
its Pythons, whether it is yanked, and where its builds come from. Matching them to a chosen build is
``companions.py``.

The facts are the embedded table (``data/companions.json``, built by scripts/build_companions.py from the
default index's metadata and each package's own build files) and, with ``--online``, what a package's metadata on
the user's index declares (``index/requirements.py``). Where a package's build comes from (``kind``, which a
release may override with ``source`` "default"):

- ``index``: the PyTorch index, per variant (xformers, torchao, fbgemm-gpu, torchrec): installed from the chosen
  build's index with torch; each release declares some torch versions (or was built for one) and has builds for
  some variants.
- ``default``: the user's own index (vLLM), with the torch it declares.
- ``find-links``: a find-links page per torch minor and variant (the PyG libraries).
- ``release-wheel``: prebuilt wheels at a URL per torch minor, CUDA major, Python and C++ ABI (flash-attn).

A package constrains torch when no build of it installs with another torch: ``index`` and ``default`` packages
by their declared requirements and their builds (what a release was built for without declaring it is a
preference), and the others when no source build exists. Otherwise, without a prebuilt wheel for the chosen
build, it builds from source (the plan's ``builds-from-source`` warning names the toolchain).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from types import MappingProxyType

from ..records import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

_EMPTY: Mapping[str, Any] = MappingProxyType({})
HARD_KINDS = ("index", "default")


class WheelBuild(Record):
    """One prebuilt wheel set of a ``release-wheel`` release: for a torch minor, CUDA tag, C++ ABI, platform."""

    torch: str  # "2.8"
    cuda: str  # the CUDA part of the wheel's name: "12" (a major), or "122" (major and minor)
    cxx11abi: str  # "TRUE" | "FALSE"
    pythons: tuple[str, ...]
    platform: str


class CompanionRelease(Record):
    """One release of a package: the torch it declares and the one it was built for, the variants and platforms
    it has builds for, its Python tags, and whether it is yanked."""

    version: str
    torch: str | None  # its declared torch requirement, a specifier ("==2.10.0", ">=2.11.0"; "": none); None: not
    # known (no wheel of it was read, or it is not in the table)
    variants: tuple[str, ...] | None = None  # ``index``: the variants with a build; None: every one of its torch
    platforms: tuple[str, ...] = ()  # platform keys with wheels; empty: any
    family: Mapping[str, str] = _EMPTY  # what it requires of torchvision/torchaudio: "==0.29.0"
    builds: tuple[WheelBuild, ...] = ()  # ``release-wheel``
    confidence: str = "verified"  # of the torch it goes with: its requirement's or, without one, its build's label
    built_for: str = ""  # the torch its compiled parts were built for, where no requirement declares it (a
    # preference: it still installs with another torch, whose plan warns)
    pythons: tuple[str, ...] = ()  # its wheels' Python tags ("cp310", "cp39-abi3", "py3"); empty: not known
    requires_python: str = ""
    source: str = ""  # "default": only on the user's index (not per variant on the PyTorch index); "": the package's
    default_build: bool = False  # built against the default index's torch build of the release it needs
    yanked: str | None = None  # the reason it was yanked (PEP 592; "" without one); None: not yanked
    cuda_map: Mapping[str, str] = _EMPTY  # release-wheel: the CUDA (x.y) its setup.py takes for a CUDA major
    builds_known: bool = True  # release-wheel: whether its prebuilt wheels are known


class Package(Record):
    """A package built against one torch, and where its builds come from."""

    name: str
    kind: str  # index | default | find-links | release-wheel
    releases: tuple[CompanionRelease, ...] = ()  # newest first
    url: str | None = None  # find-links page or wheel URL template
    pages: Mapping[str, Mapping[str, tuple[str, ...]]] = _EMPTY  # find-links: torch minor -> os -> variants
    source_build: str | None = None  # what a source build needs; None: there is none to fall back to
    default_build: bool = False  # built against the default index's torch build of the release it needs
    elsewhere: str | None = None  # "default": on platforms without an index build, a pure wheel of the user's index
    cxx11abi_from: str | None = None  # release-wheel: the torch minor from which torch's own wheels use the C++11 ABI
    confidence: str = "verified"
    sources: tuple[str, ...] = ()
    complete: bool = True  # every release of the package is here (else: those older than its oldest are unknown)
    needs_nothing: bool = False  # read from the user's index: its releases declare nothing of torch

    @property
    def constrains_torch(self) -> bool:
        return self.kind in HARD_KINDS or self.source_build is None


class Pick(Record):
    """How a requested package is installed with a chosen build."""

    name: str
    version: str | None  # None: what the page or the source build gives
    kind: str  # index | default | find-links | url | source | left-out (no build installs here: not installed)
    requirement: str  # as the installer takes it: "xformers==0.0.35", "flash-attn @ https://…"
    url: str | None = None  # the find-links page
    warning: tuple[str, str] | None = None  # (plan warning code, message)


def load_packages() -> Mapping[str, Package]:
    """The embedded table (read once per process)."""
    return _load()


@lru_cache(maxsize=1)
def table_names() -> frozenset[str]:
    """The names of the embedded table's packages, read from the small file its generator writes beside it: a
    request whose other packages are none of them need not read the table."""
    from ..package_data import load_json

    return frozenset(load_json("resolver/data/companion-names.json")["names"])


@lru_cache(maxsize=1)
def _load() -> Mapping[str, Package]:
    from ..package_data import load_json

    return packages_from_dict(load_json("resolver/data/companions.json"))


class _Table(Mapping[str, Package]):
    """The table's packages by name, each made from its JSON the first time it is asked for: a plan whose other
    packages are not in the table makes none."""

    def __init__(self, entries: Mapping[str, Any]) -> None:
        self._entries = entries
        self._made: dict[str, Package] = {}

    def __getitem__(self, name: str) -> Package:
        made = self._made.get(name)
        if made is None:
            made = self._made[name] = _package(name, self._entries[name])
        return made

    def __contains__(self, name: object) -> bool:  # Mapping's own asks __getitem__ and catches its KeyError
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def packages_from_dict(data: Mapping[str, Any]) -> Mapping[str, Package]:
    return _Table(data["packages"])


_LABEL_CONFIDENCE = {"requires-dist": "verified", "observed-wheel": "verified", "source-file": "source-file",
                     "build-workflow": "build-workflow", "maintainer-statement": "maintainer-statement",
                     "inferred": "inferred", "unknown": "unverified"}


def _release(entry: Mapping[str, Any], labels: Mapping[str, str], sets: list[Any]) -> CompanionRelease:
    own = {**labels, **entry.get("labels", {})}
    torch = entry.get("torch")
    fact = "torch" if torch else "built_for" if entry.get("built_for") else "torch"
    builds = entry.get("builds", ())
    if isinstance(builds, int):
        builds = sets[builds]
    return CompanionRelease(
        version=entry["version"], torch=torch,
        variants=tuple(entry["variants"]) if entry.get("variants") is not None else None,
        platforms=tuple(entry.get("platforms", ())), family=MappingProxyType(dict(entry.get("family", {}))),
        builds=tuple(WheelBuild(b[0], b[1], b[2], tuple(b[3]), b[4]) for b in builds),
        confidence=_LABEL_CONFIDENCE.get(own.get(fact, ""), "verified"), built_for=entry.get("built_for", ""),
        pythons=tuple(entry.get("pythons", ())), requires_python=entry.get("python", ""),
        source=entry.get("from", ""), default_build=bool(entry.get("default_build")), yanked=entry.get("yanked"),
        cuda_map=MappingProxyType(dict(entry.get("cuda_map", {}))), builds_known=own.get("builds") != "unknown")


def _package(name: str, entry: Mapping[str, Any]) -> Package:
    labels = entry.get("labels", {})
    sets = entry.get("build_sets", [])
    releases = tuple(_release(r, labels, sets) for r in entry.get("releases", ()))
    pages = {minor: MappingProxyType({os: tuple(vs) for os, vs in per_os.items()})
             for minor, per_os in entry.get("builds", {}).items()} if entry["from"] == "find-links" else {}
    return Package(name=name, kind=entry["from"], releases=releases, url=entry.get("url"),
                   pages=MappingProxyType(pages), source_build=entry.get("source_build"),
                   default_build=bool(entry.get("default_build")), elsewhere=entry.get("elsewhere"),
                   cxx11abi_from=entry.get("cxx11abi_from"),
                   confidence=_LABEL_CONFIDENCE.get(labels.get("builds", ""), "verified"),
                   sources=tuple(entry.get("src", ())))
