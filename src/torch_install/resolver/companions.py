"""Matching requested packages built against one torch to a torch build: which release of each goes with it, how
it installs (from the build's index, the user's index, a find-links page, a wheel URL, or a source build), and
which torch releases a package allows at all. The facts are ``companion_facts.py``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..records import Record
from .companion_facts import HARD_KINDS, Package, Pick
from .variants import cuda_version

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from packaging.specifiers import SpecifierSet

    from ..machine import Machine
    from .matrix import Release
    from .request import AnyVersion


def _minor_key(minor: str) -> tuple[int, ...]:
    return tuple(int(x) for x in minor.split(".") if x.isdigit())


def _minor(version: str) -> str:
    return ".".join(version.split("+")[0].split(".")[:2])


def _contains(spec: str, version: str) -> bool:
    if not spec:
        return True
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(spec).contains(version.split("+")[0], prereleases=True)
    except InvalidSpecifier:
        return False


def torch_allows(package: Package, wanted: SpecifierSet | AnyVersion, torch: str, platform: str) -> bool:
    """Whether some release of ``package`` the user's specifier allows goes with ``torch`` (any variant) on
    ``platform``. A package with no wheels for the platform at all allows any: it cannot be installed there, and
    the plan says so instead of moving torch for it."""
    if package.kind in ("find-links", "release-wheel"):
        return _prebuilt_minor(package, wanted, torch)
    here = [r for r in package.releases if not r.platforms or platform in r.platforms or package.elsewhere]
    return not here or any(wanted.contains(r.version, prereleases=True) and _contains(r.torch, torch) for r in here)


def _prebuilt_minor(package: Package, wanted: SpecifierSet | AnyVersion, torch: str) -> bool:
    minor = _minor(torch)
    if package.kind == "find-links":
        return minor in package.pages
    return any(wanted.contains(r.version, prereleases=True) and any(b.torch == minor for b in r.builds)
               for r in package.releases)


def torch_needs(package: Package, wanted: SpecifierSet | AnyVersion) -> str:
    """What the package (as the user asks for it) needs of torch, in words: "torch==2.8.0", "torch 2.11–2.13"."""
    if package.kind == "find-links":
        minors = sorted(package.pages, key=_minor_key)
        return f"torch {minors[0]}–{minors[-1]}" if len(minors) > 1 else f"torch {minors[0]}" if minors else "torch"
    if package.kind == "release-wheel":
        minors = sorted({b.torch for r in package.releases if wanted.contains(r.version, prereleases=True)
                         for b in r.builds}, key=_minor_key)
        return f"torch {minors[0]}–{minors[-1]}" if minors else "torch"
    specs = list(dict.fromkeys(r.torch for r in package.releases if wanted.contains(r.version, prereleases=True)))
    return "torch" + (specs[0] if len(specs) == 1 else " " + " or ".join(specs[:3]) + (" …" if len(specs) > 3 else ""))


def pick(package: Package, wanted: SpecifierSet | AnyVersion, requirement: str, release: Release, variant: str,
         machine: Machine) -> tuple[Pick | None, str]:
    """How ``package`` installs with ``release`` ``variant`` on ``machine``: (the pick, "") or (None, why not)."""
    if package.kind in HARD_KINDS:
        return _pick_release(package, wanted, release, variant, machine)
    if package.kind == "find-links":
        return _pick_page(package, requirement, release, variant, machine)
    return _pick_wheel(package, wanted, requirement, release, variant, machine)


def _pick_release(package: Package, wanted: SpecifierSet | AnyVersion, release: Release, variant: str,
                  machine: Machine) -> tuple[Pick | None, str]:
    platform = machine.platform or ""
    why = f"no release of {package.name} the request allows"
    everywhere = sorted({p for r in package.releases for p in r.platforms})
    if everywhere and platform not in everywhere and not package.elsewhere:
        return None, f"{package.name} has no wheels for {platform} (its wheels: {', '.join(everywhere)})"
    for r in package.releases:
        if not wanted.contains(r.version, prereleases=True):
            continue
        if not _contains(r.torch, release.version):
            why = f"{package.name} {r.version} needs torch{r.torch}" if why.startswith("no release") else why
            continue
        if r.platforms and platform not in r.platforms:
            if package.elsewhere == "default":
                return Pick(package.name, r.version, "default", f"{package.name}=={r.version}"), ""
            why = f"{package.name} {r.version} has no wheels for {platform} (its wheels: {', '.join(r.platforms)})"
            continue
        if package.kind == "index" and variant not in ("cpu", "default") and r.variants is not None \
                and variant not in r.variants:
            why = (f"{package.name} {r.version} has no {variant} build on the PyTorch index (its builds: "
                   f"{', '.join(r.variants)})")
            continue
        if package.kind == "index" and variant in ("cpu", "default") and r.variants is not None \
                and "cpu" not in r.variants:
            return Pick(package.name, r.version, "default", f"{package.name}=={r.version}", warning=(
                "constrained-by", f"{package.name} has no CPU build on the PyTorch index: {package.name} "
                                  f"{r.version} comes from your index, built for CUDA (its kernels need an NVIDIA "
                                  "GPU)")), ""
        if package.kind == "index" and variant == "default":  # macOS: the default index's wheel
            return Pick(package.name, r.version, "default", f"{package.name}=={r.version}"), ""
        return Pick(package.name, r.version, package.kind, f"{package.name}=={r.version}"), ""
    return None, why


def _page_variant(variant: str) -> str:
    return "cpu" if variant in ("default", "cpu") else variant


def _pick_page(package: Package, requirement: str, release: Release, variant: str, machine: Machine
               ) -> tuple[Pick | None, str]:
    minor = _minor(release.version)
    page_variant = _page_variant(variant)
    offered = package.pages.get(minor, {}).get(machine.os or "", ())
    if page_variant in offered and package.url:
        url = package.url.format(torch=f"{minor}.0", variant=page_variant)
        return Pick(package.name, None, "find-links", requirement, url=url), ""
    have = ", ".join(f"{m} ({', '.join(package.pages[m].get(machine.os or '', ())) or 'none'})"
                     for m in sorted(package.pages, key=_minor_key))
    why = (f"{package.name} has no wheel for torch {minor}+{page_variant} on {machine.os} (its find-links pages: "
           f"torch {have})")
    if package.source_build is None:
        return None, why
    prebuilt = [m for m in package.pages if package.pages[m].get(machine.os or "")]
    return _source_pick(package, requirement, why, prebuilt), ""


def _source_pick(package: Package, requirement: str, why: str, prebuilt: list[str]) -> Pick:
    """A source build, its warning naming the toolchain and the newest torch minor a prebuilt wheel covers."""
    newest = max(prebuilt, key=_minor_key) if prebuilt else ""
    hint = f"; or take its prebuilt wheel with an older torch: ask for 'torch=={newest}.*'" if newest else ""
    return Pick(package.name, None, "source", requirement, warning=(
        "builds-from-source", f"{why}: it builds from source, which needs {package.source_build}{hint}"))


def _pick_wheel(package: Package, wanted: SpecifierSet | AnyVersion, requirement: str, release: Release,
                variant: str, machine: Machine) -> tuple[Pick | None, str]:
    minor = _minor(release.version)
    cuda = cuda_version(variant)
    python = "cp" + (machine.python or "").rstrip("t").replace(".", "")
    abi = "TRUE" if package.cxx11abi_from and _minor_key(minor) >= _minor_key(package.cxx11abi_from) else "FALSE"
    platform = machine.platform or ""
    for r in package.releases:
        if not wanted.contains(r.version, prereleases=True):
            continue
        for b in r.builds:
            if cuda and b.torch == minor and b.cuda == str(cuda[0]) and b.cxx11abi == abi and b.platform == platform \
                    and python[2:] in (p.replace(".", "") for p in b.pythons) and package.url:
                url = package.url.format(version=r.version, cuda=b.cuda, torch=b.torch, cxx11abi=abi, python=python,
                                         platform=platform)
                return Pick(package.name, r.version, "url", f"{package.name} @ {url}"), ""
    minors = sorted({b.torch for r in package.releases for b in r.builds}, key=_minor_key)
    target = f"torch {minor}+{variant}, Python {machine.python}, {platform}"
    why = (f"{package.name} publishes no prebuilt wheel for {target} (its wheels: CUDA builds for torch "
           f"{minors[0]}–{minors[-1]} on Linux)" if minors else f"{package.name} publishes no prebuilt wheel")
    if package.source_build is None:
        return None, why
    fitting = [b.torch for r in package.releases if wanted.contains(r.version, prereleases=True) for b in r.builds
               if cuda and b.platform == platform
               and python[2:] in (p.replace(".", "") for p in b.pythons)]
    return _source_pick(package, requirement, why, fitting), ""


class Bound(Record):
    """A requested package the table knows: the user's requirement, its specifier, the package's facts; and what
    the search asks of it (so a plan without such packages never loads this module)."""

    text: str
    origin: str
    spec: SpecifierSet | AnyVersion
    package: Package

    def allows(self, torch: str, platform: str) -> bool:
        """``torch_allows`` for this requirement."""
        return torch_allows(self.package, self.spec, torch, platform)

    def needs(self) -> str:
        """``torch_needs`` for this requirement."""
        return torch_needs(self.package, self.spec)

    def pick(self, release: Release, variant: str, machine: Machine) -> tuple[Pick | None, str]:
        """``pick`` for this requirement."""
        return pick(self.package, self.spec, self.text, release, variant, machine)

    def left_out(self) -> Pick:
        """The pick of a requirement that cannot be installed with the chosen build."""
        return Pick(self.package.name, None, "left-out", self.text)


def bound_requirements(requirements: tuple[Any, ...], machine: Machine | None,
                       packages: Mapping[str, Package]) -> list[Bound]:
    """The requirements (``resolver.plan.Wanted``) that name a package of ``packages`` and apply on ``machine``,
    each with the user's specifier (a ``-c`` constraint on it narrows it)."""
    wanted = [w for w in requirements if w.name in packages]
    if not wanted:
        return []
    from packaging.requirements import InvalidRequirement, Requirement

    from ..markers import applies

    specs: dict[str, Any] = {}
    texts: dict[str, tuple[str, str]] = {}
    for w in wanted:
        if w.editable or machine is not None and not applies(w.text, machine, w.origin):
            continue
        try:
            req = Requirement(w.text)
        except InvalidRequirement:
            continue  # a URL or path: installed as given, not chosen
        if req.url:
            continue
        specs[w.name] = specs[w.name] & req.specifier if w.name in specs else req.specifier
        if not w.constraint:
            texts.setdefault(w.name, (w.text, w.origin))
    return [Bound(texts[name][0], texts[name][1], specs[name], packages[name]) for name in texts]
