"""Matching requested packages built against one torch to a torch build: which release of each goes with it, how
it installs (from the build's index, the user's index, a find-links page, a wheel URL, or a source build), and
which torch releases a package allows at all. The facts are ``companion_facts.py``.

What is a constraint: a release's declared torch requirement (Requires-Dist), and a build that does not exist for
the variant (no upload to the PyTorch index, no find-links page, no wheel for the platform or Python). What a
release was built for without declaring it (``built_for``: torchao, fbgemm-gpu) is a preference: the search
asks for it first (``strict``) and takes another torch when the request or the machine rules it out, and the plan
says so. A version the table does not know (newer than its capture, or a release whose needs were never read) adds
no constraint: its pick says so (``requirement-unknown``). A yanked release is taken only when pinned exactly (PEP
592). A local label (``torch-scatter==2.1.2+pt23cu121``, ``flash-attn==2.7.4.post1+cu12torch2.6cxx11abiFALSE``,
``xformers==0.0.28.post3+cu124``) names the torch and the variant the build was made for, and holds the plan to
them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from ..errors import InputError
from ..records import Record
from ..versions import specifier_allows
from .companion_facts import HARD_KINDS, CompanionRelease, Package, Pick
from .variants import cuda_version, is_variant

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from packaging.specifiers import SpecifierSet

    from ..machine import Machine
    from .matrix import Release
    from .references import WheelReference
    from .request import AnyVersion, ExactRelease, Versions


def _minor_key(minor: str) -> tuple[int, ...]:
    return tuple(int(x) for x in minor.split(".") if x.isdigit())


def _minor(version: str) -> str:
    return ".".join(version.split("+")[0].split(".")[:2])


@lru_cache(maxsize=4096)
def _contains(spec: str, version: str) -> bool:
    if not spec:
        return True
    try:
        return specifier_allows(spec, version.split("+")[0])
    except ValueError:  # packaging's InvalidSpecifier: a declared requirement no installer reads allows nothing
        return False


class BuiltFor(Record):
    """What a local label of a package built against torch names: the torch minor, the variant (or only the CUDA
    major) and the C++ ABI its build was made for; each None where the label does not say."""

    torch: str | None = None
    variant: str | None = None
    cuda: int | None = None
    cxx11abi: str | None = None

    def words(self) -> str:
        """"torch 2.3+cu121", "torch 2.6, CUDA 12"."""
        parts = [f"torch {self.torch}" + (f"+{self.variant}" if self.variant else "") if self.torch else
                 self.variant or ""]
        if self.cuda is not None and not self.variant:
            parts.append(f"CUDA {self.cuda}")
        return ", ".join(p for p in parts if p)


def built_for_label(label: str) -> BuiltFor | None:
    """The build a local label names (PEP 440's normal form: lower-case, "." between parts): ``pt23cu121`` (the
    PyG libraries: torch 2.3, cu121), ``cu12torch2.6cxx11abifalse`` (flash-attn: CUDA 12, torch 2.6, the old ABI),
    ``cu124`` / ``rocm6.1`` / ``cpu`` (a variant). None: a label this does not read."""
    label = label.lower()
    if is_variant(label):
        return BuiltFor(variant=label)
    found = re.fullmatch(r"pt([0-9])([0-9]+)(cpu|cu[0-9]+|rocm[0-9.]+)?", label)
    if found:
        return BuiltFor(torch=f"{found[1]}.{found[2]}", variant=found[3] if found[3] and is_variant(found[3]) else None)
    found = re.fullmatch(r"cu([0-9]+)torch([0-9]+\.[0-9]+)cxx11abi(true|false)", label)
    if found:
        return BuiltFor(torch=found[2], cuda=int(found[1][:2]) if len(found[1]) > 2 else int(found[1]),
                        cxx11abi=found[3].upper())
    return None


def python_fits(release: CompanionRelease, python: str | None) -> bool:
    """Whether a release has a wheel (or allows, by its Requires-Python) the Python ``python`` ("3.12", "3.13t");
    an unknown Python or release fits."""
    return _python_fits(release.requires_python, release.pythons, python)


@lru_cache(maxsize=4096)  # the search asks it of every release for every torch it tries; releases share their tags
def _python_fits(requires_python: str, pythons: tuple[str, ...], python: str | None) -> bool:
    if not python or not re.fullmatch(r"[0-9]+\.[0-9]+t?", python):
        return True
    free = python.endswith("t")
    number = tuple(int(x) for x in python.rstrip("t").split("."))
    if requires_python and not _contains(requires_python, ".".join(map(str, number))):
        return False
    if not pythons:
        return True
    for tag in pythons:
        found = re.fullmatch(r"(cp|py)([0-9])([0-9]*)(t?)(-abi3)?", tag)
        if not found:
            continue
        wanted = (int(found[2]), int(found[3])) if found[3] else (int(found[2]),)
        if found[1] == "py" or found[5]:  # py3, py39, cp39-abi3: that Python and newer (abi3: not free-threaded)
            if number[:len(wanted)] >= wanted and number[0] == wanted[0] and not (found[5] and free):
                return True
        elif number == wanted and free == bool(found[4]):
            return True
    return False


class Bound(Record):
    """A requested package the table knows: the user's requirement, its specifier (a local label read off into
    ``label``), the package's facts, the machine's Python; and what the search asks of it (so a plan without such
    packages never loads this module)."""

    text: str
    origin: str
    spec: SpecifierSet | AnyVersion | ExactRelease
    package: Package
    python: str | None = None
    exact: str | None = None  # the version the requirement pins (a yanked release is taken only so)
    label: BuiltFor | None = None  # the build the requirement's local label names
    label_unread: bool = False  # it has a local label this does not read
    matching: tuple[CompanionRelease, ...] = ()  # ``allowed(package, spec, exact)``, worked out once
    family: Mapping[str, Any] = MappingProxyType({})  # the request's torchvision/torchaudio specifiers
    reference: WheelReference | None = None  # the user's own wheel of it (``name @ URL``): installed as given

    @property
    def constrains_torch(self) -> bool:
        """Whether the requirement can move torch: the package's kind does, or its local label names a torch."""
        return self.package.constrains_torch or (self.label is not None and self.label.torch is not None)

    # -- the releases the requirement asks for ----------------------------------------------------------------
    def releases(self) -> tuple[CompanionRelease, ...]:
        """The table's releases the requirement allows, newest first; a yanked one only when pinned exactly."""
        return self.matching

    def yanked_only(self) -> list[str]:
        """The yanked releases the requirement allows when it allows no other (pip takes none of them)."""
        if self.releases():
            return []
        return [r.version for r in self.package.releases if r.yanked is not None
                and self.spec.contains(r.version, prereleases=True)]

    def known(self) -> list[CompanionRelease]:
        """Those whose needs are known (a wheel of them was read)."""
        return [r for r in self.matching if r.torch is not None]

    def unknown(self) -> bool:
        """Whether what the requirement needs of torch is not known: no release of the table it allows has known
        needs (a version newer than the table, a release without a wheel, a local label this does not read), or
        the package's releases were read only in part and it does not pin one of them."""
        if self.label_unread:
            return True
        if self.yanked_only() or self.package.kind in ("find-links", "release-wheel") and not self.package.releases:
            return False  # its pages decide, whatever the version
        if not self.known():
            return True
        return not self.package.complete and self.exact is None

    def unknown_why(self) -> str:
        """Why its needs are unknown, in words."""
        if self.label_unread:
            return "its local label names no build this tool reads"
        if not self.package.complete:
            return "only its newest releases were read from your index"
        if self.releases():
            return "no wheel of it was read (only its source is on the default index)"
        return (f"the table of packages built against torch ({self.package.name}'s releases up to "
                f"{self.package.releases[0].version}) does not hold it" if self.package.releases else
                "the table does not hold it")

    # -- what the search asks ---------------------------------------------------------------------------------
    def allows(self, torch: str, platform: str, strict: bool = True) -> bool:
        """Whether some release of the package the requirement allows goes with ``torch`` (any variant) on
        ``platform``; with ``strict``, also with the torch it was built for. A package with no wheels for the
        platform at all allows any: it cannot be installed there, and the plan says so instead of moving torch
        for it. Unknown needs allow any torch."""
        if self.label is not None and self.label.torch:  # "+pt113cu117": built for that torch, as it says
            return _minor(torch) == self.label.torch
        package = self.package
        if package.kind in ("find-links", "release-wheel"):
            return self._prebuilt_minor(torch)
        if self.yanked_only():
            return False  # pip takes none of them
        strict = strict and self.preference()
        if self.unknown() and not any(self._fits(r, torch, strict) for r in self.known()):
            return True
        here = [r for r in self.known() if (not r.platforms or platform in r.platforms or package.elsewhere
                                            or r.source == "default") and python_fits(r, self.python)]
        return not here or any(self._fits(r, torch, strict) for r in here)

    def newest_for(self, torch: str, platform: str, strict: bool = True) -> CompanionRelease | None:
        """The newest release the requirement allows that goes with ``torch`` on ``platform`` (``allows``'s rule);
        None when none does or its needs are not known (it does not order the releases then)."""
        if self.label is not None or self.package.kind in ("find-links", "release-wheel") or self.unknown():
            return None
        strict = strict and self.preference()
        here = (r for r in self.known() if (not r.platforms or platform in r.platforms or self.package.elsewhere
                                            or r.source == "default") and python_fits(r, self.python))
        return next((r for r in here if self._fits(r, torch, strict)), None)

    def newness(self, release: CompanionRelease | None) -> int:
        """How new ``release`` is among those the requirement allows (the table's order, newest first): larger is
        newer; 0 for None."""
        return len(self.matching) - self.matching.index(release) if release is not None else 0

    def _fits(self, release: CompanionRelease, torch: str, strict: bool) -> bool:
        """Whether the release goes with ``torch`` and the request's torchvision/torchaudio: by its declared
        requirements and, ``strict``, by the torch it was built for (a release whose build is not known does not
        count then)."""
        return _contains(release.torch or "", torch) and not self.family_clash(release) \
            and (not strict or bool(release.built_for) and _contains(release.built_for, torch))

    def family_clash(self, release: CompanionRelease) -> str:
        """A torchvision/torchaudio pin of the release that the request's own specifier for it rules out, in
        words ("torchvision==0.29.0"), or ""."""
        for name, pinned in release.family.items():
            asked = self.family.get(name)
            if asked is not None and str(asked) and pinned.startswith("==") \
                    and not asked.contains(pinned[2:], prereleases=True):
                return f"{name}{pinned}"
        return ""

    def _prebuilt_minor(self, torch: str) -> bool:
        minor = _minor(torch)
        if self.package.kind == "find-links":
            return minor in self.package.pages
        return any(b.torch == minor for r in self.releases() for b in r.builds) \
            or any(not r.builds_known for r in self.releases())

    def none_for(self, platform: str) -> bool:
        """Whether no release of the package has a wheel for ``platform`` (vLLM on Windows): it cannot be
        installed there with any build, so it moves neither torch nor the variant (the plan leaves it out)."""
        package = self.package
        if package.kind not in HARD_KINDS or package.elsewhere:
            return False
        everywhere = {p for r in package.releases for p in r.platforms}
        return bool(everywhere) and platform not in everywhere \
            and not any(r.source == "default" and not r.platforms for r in package.releases)

    def preference(self) -> bool:
        """Whether the requirement's releases are built for one torch without declaring it (a preference)."""
        return any(r.built_for and not r.torch for r in self.known())

    def needs(self, strict: bool = True) -> str:
        """What the package (as the user asks for it) needs of torch, in words: "torch==2.8.0", "torch 2.11–2.13"."""
        package = self.package
        if self.label is not None and self.label.torch:
            return f"torch {self.label.torch}.* (its build: {self.label.words()})"
        if package.kind == "find-links":
            minors = sorted(package.pages, key=_minor_key)
            return f"torch {minors[0]}–{minors[-1]}" if len(minors) > 1 else f"torch {minors[0]}" if minors else \
                "a torch it has a page for"
        if package.kind == "release-wheel":
            minors = sorted({b.torch for r in self.releases() for b in r.builds}, key=_minor_key)
            return f"torch {minors[0]}–{minors[-1]}" if minors else "a torch it has a prebuilt wheel for"
        if yanked := self.yanked_only():
            return (f"a release that is not yanked ({', '.join(yanked)} {'is' if len(yanked) == 1 else 'are'}: pip "
                    f"takes a yanked release only when pinned exactly, {package.name}=={yanked[0]})")
        specs = list(dict.fromkeys(",".join(filter(None, (r.torch, r.built_for if strict else "")))
                                   for r in self.known()))
        specs = [s for s in specs if s]
        clashes = list(dict.fromkeys(c for r in self.known() if (c := self.family_clash(r))))
        family = (f", with {' or '.join(clashes[:3])}{' …' if len(clashes) > 3 else ''}, which the request's "
                  "own pin rules out") if clashes else ""
        if not specs:
            return "no torch it declares" + family
        return "torch" + (specs[0] if len(specs) == 1 else " " + " or ".join(specs[:3]) + (" …" if len(specs) > 3
                                                                                          else "")) + family

    def pick(self, release: Release, variant: str, machine: Machine, strict: bool = True) -> tuple[Pick | None, str]:
        """How the package installs with ``release`` ``variant`` on ``machine``: (the pick, "") or (None, why not).
        A direct reference's wheel is the build: what the table says of its release holds, and it installs from
        its URL where its tags fit the machine."""
        found, why = self._pick(release, variant, machine, strict)
        reference = self.reference
        if reference is None or found is None or found.kind == "left-out":
            return found, why
        from .references import why_not_here

        wrong = why_not_here(reference, machine)
        if wrong is not None:
            return None, f"{self.text}: {wrong[1]}"
        cuda = cuda_version(variant)
        if self.label is not None and self.label.cuda is not None and (cuda is None or cuda[0] != self.label.cuda):
            return None, f"{self.text} is the build for {self.label.words()}"
        return found._replace(kind="url", version=reference.public, requirement=reference.requirement, url=None,
                              warning=None if found.kind == "source" else found.warning), ""

    def _pick(self, release: Release, variant: str, machine: Machine, strict: bool) -> tuple[Pick | None, str]:
        if self.package.kind in HARD_KINDS:
            return self._pick_release(release, variant, machine, strict and self.preference())
        if self.package.kind == "find-links":
            return self._pick_page(release, variant, machine)
        return self._pick_wheel(release, variant, machine)

    def left_out(self) -> Pick:
        """The pick of a requirement that cannot be installed with the chosen build."""
        return Pick(self.package.name, None, "left-out", self.text)

    def unknown_pick(self) -> Pick:
        """A requirement whose needs are unknown: installed as written from the user's index, with the warning."""
        return Pick(self.package.name, None, "default", self.text, warning=(
            "requirement-unknown", f"{self.text} ({self.origin}): what it needs of torch is not known here "
                                   f"({self.unknown_why()}): no constraint is added for it; --online reads its "
                                   "metadata from your index"))

    # -- the kinds --------------------------------------------------------------------------------------------
    def _pick_release(self, release: Release, variant: str, machine: Machine, strict: bool
                      ) -> tuple[Pick | None, str]:
        package = self.package
        platform = machine.platform or ""
        if self.none_for(platform):
            everywhere = sorted({p for r in package.releases for p in r.platforms})
            return None, f"{package.name} has no wheels for {platform} (its wheels: {', '.join(everywhere)})"
        if self.unknown() and not self.known():
            return self.unknown_pick(), ""
        wanted_variant = self.label.variant if self.label else None
        reasons: list[str] = []  # why each release the request allows does not go with this build
        for r in self.known():
            if not _contains(r.torch or "", release.version):
                reasons.append(f"{package.name} {r.version} needs torch{r.torch}")
            elif clash := self.family_clash(r):
                reasons.append(f"{package.name} {r.version} needs {clash}, which the request rules out")
            elif strict and not self._fits(r, release.version, True):
                reasons.append(f"{package.name} {r.version} is built for " + (f"torch{r.built_for}" if r.built_for
                                                                               else "a torch not recorded"))
            elif not python_fits(r, machine.python):
                reasons.append(f"{package.name} {r.version} has no wheel for Python {machine.python}")
            elif r.platforms and platform not in r.platforms and package.elsewhere != "default":
                reasons.append(f"{package.name} {r.version} has no wheels for {platform} (its wheels: "
                               f"{', '.join(r.platforms)})")
            elif r.platforms and platform not in r.platforms or r.source == "default" or package.kind == "default" \
                    or variant == "default":  # the user's index (macOS: the default index's wheel)
                return Pick(package.name, r.version, "default", f"{package.name}=={r.version}"), ""
            elif wanted_variant and variant != wanted_variant:
                reasons.append(f"{self.text} is the {wanted_variant} build")
            elif variant != "cpu" and r.variants is not None and variant not in r.variants:
                reasons.append(f"{package.name} {r.version} has no {variant} build on the PyTorch index (its "
                               f"builds: {', '.join(r.variants)})")
            elif variant == "cpu" and r.variants is not None and "cpu" not in r.variants:
                return Pick(package.name, r.version, "default", f"{package.name}=={r.version}", warning=(
                    "constrained-by", f"{package.name} has no CPU build on the PyTorch index: {package.name} "
                                      f"{r.version} comes from your index, built for CUDA (its kernels need an NVIDIA "
                                      "GPU)")), ""
            else:
                return Pick(package.name, r.version, package.kind, f"{package.name}=={r.version}"), ""
        if self.unknown():  # only its newest releases were read: an older one may go with this torch
            return self.unknown_pick(), ""
        return None, reasons[0] if reasons else f"{self.text} needs {self.needs(strict)}"

    def _pick_page(self, release: Release, variant: str, machine: Machine) -> tuple[Pick | None, str]:
        package = self.package
        minor = _minor(release.version)
        page_variant = "cpu" if variant in ("default", "cpu") else variant
        offered = package.pages.get(minor, {}).get(machine.os or "", ())
        label = self.label
        wrong = label is not None and ((label.torch and label.torch != minor)
                                       or (label.variant and label.variant != page_variant))
        if page_variant in offered and package.url and not wrong:
            url = package.url.format(torch=f"{minor}.0", variant=page_variant)
            return Pick(package.name, None, "find-links", self.text, url=url), ""
        if wrong and label is not None:
            return None, f"{self.text} is the build for {label.words()}"
        if label is not None and label.torch == minor and label.variant == page_variant and package.url \
                and minor not in package.pages:  # a page the table does not list, which the pin's label names
            url = package.url.format(torch=f"{minor}.0", variant=page_variant)
            return Pick(package.name, None, "find-links", self.text, url=url, warning=(
                "release-unknown", f"{self.text}: {package.name}'s page for torch {minor}+{page_variant} is not in "
                                   f"the table; assumed at {url}, as its label names that build")), ""
        have = ", ".join(f"{m} ({', '.join(package.pages[m].get(machine.os or '', ())) or 'none'})"
                         for m in sorted(package.pages, key=_minor_key))
        why = (f"{package.name} has no wheel for torch {minor}+{page_variant} on {machine.os} (its find-links pages: "
               f"torch {have})")
        if package.source_build is None:
            return None, why
        prebuilt = [m for m in package.pages if package.pages[m].get(machine.os or "")]
        return self._source_pick(why, prebuilt), ""

    def _source_pick(self, why: str, prebuilt: list[str]) -> Pick:
        """A source build, its warning naming the toolchain and the newest torch minor a prebuilt wheel covers."""
        newest = max(prebuilt, key=_minor_key) if prebuilt else ""
        hint = f"; or take its prebuilt wheel with an older torch: ask for 'torch=={newest}.*'" if newest else ""
        return Pick(self.package.name, None, "source", self.text, warning=(
            "builds-from-source", f"{why}: it builds from source, which needs {self.package.source_build}{hint}"))

    def _pick_wheel(self, release: Release, variant: str, machine: Machine) -> tuple[Pick | None, str]:
        package = self.package
        minor = _minor(release.version)
        cuda = cuda_version(variant)
        python = "cp" + (machine.python or "").rstrip("t").replace(".", "")
        abi = "TRUE" if package.cxx11abi_from and _minor_key(minor) >= _minor_key(package.cxx11abi_from) else "FALSE"
        platform = machine.platform or ""
        label = self.label
        for r in self.releases():
            tag = _cuda_tag(r, cuda) if cuda else None
            for b in r.builds:
                if tag and b.torch == minor and b.cuda == tag and b.cxx11abi == (label and label.cxx11abi or abi) \
                        and b.platform == platform and python[2:] in (p.replace(".", "") for p in b.pythons) \
                        and package.url and (label is None or label.cuda is None or _tag_major(b.cuda) == label.cuda):
                    url = package.url.format(version=r.version, cuda=b.cuda, torch=b.torch, cxx11abi=b.cxx11abi,
                                             python=python, platform=platform)
                    return Pick(package.name, r.version, "url", f"{package.name} @ {url}"), ""
        if label is not None and label.torch and label.torch != minor:
            return None, f"{self.text} is the build for {label.words()}"
        minors = sorted({b.torch for r in package.releases for b in r.builds}, key=_minor_key)
        target = f"torch {minor}+{variant}, Python {machine.python}, {platform}"
        newest = next(iter(self.releases()), None)
        if newest is not None and not newest.builds_known:
            why = (f"the prebuilt wheels of {package.name} {newest.version} are not known (the release is newer than "
                   "the repository copy the table was read from)")
        elif minors:
            why = (f"{package.name} publishes no prebuilt wheel for {target} (its wheels: CUDA builds for torch "
                   f"{minors[0]}–{minors[-1]} on Linux)")
        else:
            why = f"{package.name} publishes no prebuilt wheel"
        if package.source_build is None:
            return None, why
        fitting = [b.torch for r in self.releases() for b in r.builds
                   if cuda and b.platform == platform and python[2:] in (p.replace(".", "") for p in b.pythons)]
        return self._source_pick(why, fitting), ""


def _tag_major(tag: str) -> int:
    """The CUDA major of a wheel's CUDA tag: "12" -> 12, "122" -> 12, "118" -> 11."""
    return int(tag[:2]) if len(tag) > 2 else int(tag)


def _cuda_tag(release: CompanionRelease, cuda: tuple[int, int]) -> str:
    """The CUDA tag of the prebuilt wheel a release's setup.py takes for torch's CUDA ``cuda``: its CUDA major
    mapped to one CUDA (``cuda_map``), named by the major alone or by major and minor, as its builds are."""
    mapped = release.cuda_map.get(str(cuda[0]), f"{cuda[0]}.{cuda[1]}")
    major, minor = mapped.split(".")[:2]
    major_only = any(len(b.cuda) <= 2 for b in release.builds)
    return major if major_only else major + minor


def build_of_url(url: str, packages: Mapping[str, Package], index_base: str) -> BuiltFor | None:
    """The build a URL of a requirements file's option names: a table package's find-links page for one torch and
    variant (``…/torch-2.7.0+cu118.html``: torch 2.7, cu118), or one variant's index of the PyTorch index
    (``{index_base}/cu118``: cu118); None for any other URL."""
    url = url.rstrip("/")
    base = index_base.rstrip("/")
    if base and url.startswith(base + "/"):
        rest = url[len(base) + 1:].split("/")
        variant = rest[-1].lower()
        return BuiltFor(variant=variant) if is_variant(variant) and len(rest) <= 2 else None
    for name in packages:
        template = packages[name].url if packages[name].kind == "find-links" else None
        if not template:
            continue
        pattern = re.escape(template).replace(re.escape("{torch}"), r"(?P<torch>[0-9]+(?:\.[0-9]+)*)").replace(
            re.escape("{variant}"), r"(?P<variant>[A-Za-z0-9.]+)")
        found = re.fullmatch(pattern, url)
        if found:
            return BuiltFor(torch=_minor(found["torch"]), variant=found["variant"].lower())
    return None


def _both(first: Any, second: Any) -> Any:
    """The specifier two requirements on one package make together (a ``-c`` constraint beside a requirement)."""
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(str(first)) & SpecifierSet(str(second))


def read_label(spec: Any) -> tuple[Any, str | None, BuiltFor | None, bool]:
    """(the specifier with a pinned release's local label read off, the version it pins exactly, the build the
    label names, whether it has a label this does not read)."""
    from .request import AnyVersion, ExactRelease

    if isinstance(spec, AnyVersion):
        return spec, None, None, False
    if isinstance(spec, ExactRelease):  # a plain release, no label: what packaging reads of "==2.9.1" too
        return spec, spec.release, None, False
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    kept, exact, label, unread = [], None, None, False
    for item in spec:
        if item.operator in ("==", "===") and not item.version.endswith(".*"):
            try:
                version = Version(item.version)
            except InvalidVersion:
                kept.append(str(item))
                continue
            exact = version.public
            if version.local:
                label = built_for_label(version.local)
                unread = label is None
                kept.append(f"=={version.public}")
                continue
        kept.append(str(item))
    return (SpecifierSet(",".join(kept)) if label or unread else spec), exact, label, unread


def bound_requirements(requirements: tuple[Any, ...], machine: Machine | None,
                       packages: Mapping[str, Package]) -> list[Bound]:
    """The requirements (``resolver.plan.Wanted``) that name a package of ``packages`` and apply on ``machine``,
    each with the user's specifier (a ``-c`` constraint on it narrows it)."""
    wanted = [w for w in requirements if w.name in packages and not packages[w.name].needs_nothing]
    if not wanted:
        return []
    from ..markers import applies
    from .references import reference_of, shown
    from .request import plain_requirement

    specs: dict[str, Any] = {}
    texts: dict[str, tuple[str, str]] = {}
    references: dict[str, WheelReference] = {}
    spec: Versions
    for w in wanted:
        if w.editable or machine is not None and not applies(w.text, machine, w.origin):
            continue
        plain = plain_requirement(w.text)
        if plain is not None and plain[2] is None:  # "xformers", "xformers==0.0.29": read without packaging
            spec = plain[1]
        else:
            from packaging.requirements import InvalidRequirement, Requirement
            from packaging.specifiers import SpecifierSet

            try:
                req = Requirement(w.text)
            except InvalidRequirement:
                req = None  # a bare URL or path
            if req is None or req.url:  # a wheel's file name says its release (and what its label says it is for)
                try:
                    reference = reference_of(w.text, w.origin)
                except InputError:
                    reference = None
                if reference is None or w.constraint:
                    continue  # a source tree, an sdist, a VCS URL: installed as given, not chosen
                references[w.name] = reference
                spec = SpecifierSet(f"=={reference.version}")
            else:
                spec = req.specifier
        specs[w.name] = _both(specs[w.name], spec) if w.name in specs else spec
        if not w.constraint:
            texts.setdefault(w.name, (w.text, w.origin))
    python = machine.python if machine is not None else None
    bound = []
    for name in texts:
        spec, exact, label, unread = read_label(specs[name])
        if name in references and unread:  # the user's own build: its label need name nothing this reads
            from packaging.specifiers import SpecifierSet

            spec, unread = SpecifierSet(f"=={references[name].public}"), False
        matching = tuple(r for r in packages[name].releases if spec.contains(r.version, prereleases=True)
                         and (r.yanked is None or r.version == exact))
        reference = references.get(name)
        text = shown(name, reference.location) if reference is not None else texts[name][0]
        bound.append(Bound(text, texts[name][1], spec, packages[name], python, exact, label, unread, matching,
                           reference=reference))
    return bound
