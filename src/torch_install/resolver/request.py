"""What the user asked for, checked: pip-style requirements for torch and its companions, a variant, a channel,
an index base. Every problem is an InputError that names the value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from .. import vendors
from ..errors import InputError
from ..records import Record
from ..versions import plain_release_key, release_part
from .variants import is_variant, variant_kind

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:  # the CLI reads CHANNELS at start-up, without loading the plan types
    from typing import TypeAlias

    from packaging.specifiers import SpecifierSet

    from ..machine import Machine
    from .matrix import Matrix
    from .plan import Request
    from .references import WheelReference

    Versions: TypeAlias = "SpecifierSet | AnyVersion | ExactRelease"  # what a requirement asks of a version

PACKAGES = ("torch", "torchvision", "torchaudio")  # the torch family, resolved against the matrix
COMPANIONS = PACKAGES[1:]  # the family but torch
CHANNELS = ("stable", "test", "nightly")


def canonical_name(name: str) -> str:
    """A project name as PEP 503 compares it: 'Torch_Vision' -> 'torch-vision'."""
    if name.isascii() and name.isalnum():  # most names ("torch", "numpy"): nothing to replace
        return name.lower()
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


class AnyVersion:
    """The empty specifier: every version matches. It stands in for ``SpecifierSet()`` so that the common
    request (bare names) never imports ``packaging.requirements`` (about 27 ms, measured: bench/bench_plan.py)."""

    def contains(self, version: str, prereleases: bool | None = None) -> bool:
        return True

    def __str__(self) -> str:
        return ""


ANY = AnyVersion()
# A project name as PEP 508 spells it: the one pattern of the fast paths that read a name without packaging
# (packaging also reads a trailing "_": such a name is left to it). Blanks around it are spaces and tabs only.
NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_BARE_NAME = rf"[ \t]*{NAME}[ \t]*\Z"
# A pinned release, with a local label or without: "torch==2.9.1", "torch == 2.9.1+cu128"
_LABEL = r"[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*"
_EXACT_RELEASE = (rf"[ \t]*({NAME})[ \t]*==[ \t]*([0-9]{{1,9}}(?:\.[0-9]{{1,9}}){{0,4}})(?:\+({_LABEL}))?[ \t]*\Z")


# A pre-, post- or development release written as PEP 440 normalizes it (no epoch, no other spelling)
_SUFFIXED_RELEASE = (r"[0-9]+(?:\.[0-9]+)*"
                     r"(?:(?:a|b|rc)[0-9]+(?:\.post[0-9]+)?(?:\.dev[0-9]+)?|\.post[0-9]+(?:\.dev[0-9]+)?|\.dev[0-9]+)")


class ExactRelease:
    """``==2.9.1``: the specifier of a pinned release (the doctor's fixes plan with one), read without packaging.
    A version that is not a plain release (a pre-release, a post-release) is left to packaging's rule."""

    def __init__(self, release: str) -> None:
        self.release = release
        self._key = plain_release_key(release)

    def contains(self, version: str, prereleases: bool | None = None) -> bool:
        public = version.split("+", 1)[0]  # PEP 440: a local label matches a pin that has none
        if public and release_part(public) == public:  # a plain release: 2.9.1
            return plain_release_key(public) == self._key
        if re.fullmatch(_SUFFIXED_RELEASE, public):  # 0.6.6.post1, 2.10.0rc1: never a plain release
            return False
        from packaging.specifiers import SpecifierSet

        return SpecifierSet(f"=={self.release}").contains(version, prereleases=prereleases)

    def __str__(self) -> str:
        return f"=={self.release}"


class Pin(Record):
    """A requirement that names one build of a package: a pinned release whose local label names the variant
    (``torch==2.9.1+cu128``, ``torchvision===0.24.1+cpu``), or a direct reference to a wheel (``torch @ URL``,
    ``references.py``). The plan installs that build where it runs, and says what would run where it does not."""

    text: str  # the requirement as given
    name: str
    release: str  # its public version: "2.9.1"
    variant: str  # the variant its label names: "cu128"; "" for a wheel without a label (the default index's build)
    reference: WheelReference | None = None  # the wheel a direct reference names
    configured: bool = False  # named by the project's configuration (``Request.builds``), not a requirement
    packaged: str = ""  # a label naming the variant with more after it: "cu117.with.pypi.cudnn" (PEP 440's spelling)

    @property
    def shown(self) -> str:
        """The pin in messages: as given, a direct reference by its file name ("torch @ …/torch-2.7.1+cu128-…whl",
        no host, no credentials)."""
        if self.reference is None:
            return self.text
        from .references import shown

        return shown(self.name, self.reference.location)


class ParsedRequest(Record):
    torch: Versions
    companions: Mapping[str, Versions]  # requested companion -> its specifier (may be empty; labels read off)
    pinned: bool  # the user constrained the torch version
    limits: Mapping[str, SpecifierSet] = {}  # -c constraints on companions not requested
    pins: tuple[Pin, ...] = ()  # the requirements that name one build, every one naming the same variant
    channel: str | None = None  # the channel a pre-release (test) or development (nightly) pin implies
    pre_release_of: str | None = None  # the final release such a pin comes before ("2.10.0" for 2.10.0rc1)

    @property
    def variant(self) -> str | None:
        """The variant the pins name (None: they name none)."""
        return self.pins[0].variant if self.pins else None


def _labelled_pin(text: str, name: str, release: str, label: str, reference: WheelReference | None = None) -> Pin:
    """The pin of the build a local label names (PEP 440 spells it lower-case, "." between its parts; a variant
    with more parts after it, ``cu117.with.pypi.cudnn``, names that variant's build, ``packaged`` otherwise); an
    InputError when it names none."""
    variant = re.sub(r"[-_]", ".", label.lower())
    build, _, flavour = variant.partition(".")
    if not is_variant(variant) and flavour and is_variant(build):  # "cu117.with.pypi.cudnn": a cu117 build
        return Pin(text.strip(), name, release, build, reference, packaged=variant)
    if not is_variant(variant):
        raise InputError(f"{text.strip()}: the local label {label!r} names no wheel variant (like cpu, cu128, "
                         "rocm6.4, xpu): a pin of the torch family names the build it wants with it")
    return Pin(text.strip(), name, release, variant, reference)


def plain_requirement(text: str) -> tuple[str, AnyVersion | ExactRelease, str | None] | None:
    """(canonical name, specifier, local label or None) of a requirement that is a bare name ("xformers") or a
    pinned release ("torch==2.9.1", "torch==2.9.1+cu128"), read without packaging; None for any other (packaging
    reads it)."""
    if (text.isascii() and text.isalnum()) or re.match(_BARE_NAME, text):
        return canonical_name(text), ANY, None
    if exact := re.match(_EXACT_RELEASE, text):
        return canonical_name(exact[1]), ExactRelease(exact[2]), exact[3]
    return None


def _plain_request(texts: tuple[str, ...]) -> tuple[dict[str, Versions], list[Pin]] | None:
    """Each requirement's name and specifier, and the pins with a local label, when every one is a bare name or a
    pinned release, given once; else None (packaging reads them)."""
    out: dict[str, Versions] = {}
    pins: list[Pin] = []
    for text in texts:
        plain = plain_requirement(text)
        if plain is None:
            return None
        name, spec, label = plain
        if label and isinstance(spec, ExactRelease):
            pins.append(_labelled_pin(text, name, spec.release, label))
        if name in out:
            return None  # two requirements on one name: packaging combines them
        out[name] = spec
    return out, pins


def _read_specifier(text: str, name: str, specifier: SpecifierSet, pins: list[Pin],
                    pre: list[tuple[str, str, str]]) -> SpecifierSet:
    """``specifier`` as the search compares it with the matrix's releases, which carry no local label: a pinned
    release's label (``==2.9.1+cu128``, ``===2.9.1+cu128``) is read off into a :class:`Pin`; a pinned pre-release
    or development release is noted in ``pre`` (name, the version, the release it comes before)."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    kept = []
    for item in specifier:
        if item.operator in ("==", "===") and not item.version.endswith(".*"):
            try:
                version = Version(item.version)
            except InvalidVersion:  # "===foo": arbitrary equality with a string no release is
                kept.append(str(item))
                continue
            if version.is_prerelease or version.is_devrelease:
                pre.append((name, version.public, version.base_version))
            if version.local:
                pins.append(_labelled_pin(text, name, version.public, version.local))
                kept.append(f"{item.operator}{version.public}")
                continue
        kept.append(str(item))
    return SpecifierSet(",".join(kept)) if len(kept) != len(specifier) or pins else specifier


def one_build(pins: Sequence[Pin], forced: str | None) -> str | None:
    """The variant the pins name (None: none); an InputError when they name two, or another than ``--variant``."""
    for pin in pins[1:]:
        if pin.variant != pins[0].variant:
            raise InputError(f"{pins[0].text} and {pin.text} name two builds ({pins[0].variant}, {pin.variant}): "
                             "one environment takes one build of the torch family")
    if pins and forced and pins[0].variant != forced:
        raise InputError(f"--variant {forced} and {pins[0].text} name two builds ({forced}, {pins[0].variant})")
    return pins[0].variant if pins else None


def _implied_channel(pre: list[tuple[str, str, str]], request: Request) -> tuple[str | None, str | None]:
    """(the channel, the release it comes before) a pinned pre-release of the family implies: a development
    release (``2.16.0.dev20260101``) the nightly channel, a release candidate (``2.16.0rc1``) the test channel,
    as pip takes a pinned pre-release; (None, None) without one or with a channel given."""
    if not pre or request.channel != "stable":
        return None, None
    dev = next((p for p in pre if ".dev" in p[1]), None)
    base = (dev or pre[0])[2]
    return ("nightly" if dev else "test"), base


def parse_request(request: Request, machine: Machine | None = None) -> ParsedRequest:
    """Validate a Request; every problem is an InputError naming the offending value. Requirements whose marker
    is false on ``machine`` do not apply to it."""
    if request.channel not in CHANNELS:
        raise InputError(f"channel {request.channel!r} is not one of {', '.join(CHANNELS)}")
    if request.variant is not None and not is_variant(request.variant):
        raise InputError(f"variant {request.variant!r} is not a wheel variant (like cu128, rocm6.4, xpu, cpu)")
    base = request.index_base or ""
    if not base.startswith(("https://", "http://")):
        raise InputError(f"index base {base!r} is not an http(s) URL")
    texts = tuple(applying(request.packages, machine)) or ("torch",)
    constraints = tuple(applying(request.constraints, machine))
    plain = _plain_request(texts) if not constraints else None
    if plain is not None:  # the common cases (bare names, a pinned release), without packaging
        named, pins = plain
        pins += _configured(request, machine)
        unknown = sorted(set(named) - set(PACKAGES))
        if unknown:
            raise InputError(f"package {unknown[0]!r}: only {', '.join(PACKAGES)} are resolved against the wheel "
                             "matrix")
        wanted = named.get("torch", ANY)
        return ParsedRequest(torch=wanted, companions={n: named[n] for n in COMPANIONS if n in named},
                             pinned=bool(str(wanted)), pins=tuple(pins))
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import SpecifierSet

    specs: dict[str, SpecifierSet] = {}
    limits: dict[str, SpecifierSet] = {}
    found: list[Pin] = []
    pre: list[tuple[str, str, str]] = []
    for text, into in [*((t, specs) for t in texts), *((t, limits) for t in constraints)]:
        reference = _reference(text, into is limits)
        try:
            req = Requirement(f"{reference.name}=={reference.version}" if reference else text)
        except InvalidRequirement as exc:
            raise InputError(f"package {text!r} is not a valid requirement: {exc}") from None
        name = canonical_name(req.name)
        if name not in PACKAGES:
            raise InputError(f"package {text!r}: only {', '.join(PACKAGES)} are resolved against the wheel matrix")
        if reference is not None:
            found.append(_labelled_pin(text, name, reference.public, reference.label, reference) if reference.label
                         else Pin(text.strip(), name, reference.public, "", reference))
            spec = _read_specifier(text, name, SpecifierSet(f"=={reference.public}"), [], pre)
            into[name] = into[name] & spec if name in into else spec
            continue
        spec = _read_specifier(text, name, req.specifier, found, pre)
        into[name] = into[name] & spec if name in into else spec
    for name, spec in list(limits.items()):  # a constraint on a requested package narrows its own specifier
        if name in specs or name == "torch":
            specs[name] = specs[name] & spec if name in specs else spec
            del limits[name]
    torch: Versions = specs.pop("torch", ANY)
    found += _configured(request, machine)
    channel, before = _implied_channel(pre, request)
    return ParsedRequest(torch=torch, companions=specs, pinned=bool(str(torch)), limits=limits,
                         pins=tuple(found), channel=channel, pre_release_of=before)


def _configured(request: Request, machine: Machine | None) -> list[Pin]:
    """The pins of the builds the project's configuration names (``Request.builds``) whose marker holds on
    ``machine``."""
    if not request.builds:
        return []
    from ..markers import applies

    return [Pin(b.text, b.name, "", b.variant, configured=True) for b in request.builds
            if machine is None or (b.marker is None or applies(f"x ; {b.marker}", machine, b.text))
            and not any(applies(f"x ; {m}", machine, b.text) for m in b.unless) and _runs_cuda(machine, b.cuda)]


def _runs_cuda(machine: Machine, cuda: str) -> bool:
    """Whether the newest CUDA the machine's NVIDIA driver runs ("0" without a driver) is in the range ``cuda``
    (a pixi platform's ``cuda = "12"`` is ``>=12``)."""
    if not cuda:
        return True
    from packaging.specifiers import SpecifierSet

    from ..drivers import cuda_for_driver

    found = "0"
    if machine.cuda_driver_api:
        found = machine.cuda_driver_api
    elif machine.nvidia_driver:
        found = (cuda_for_driver(machine.nvidia_driver, machine.os) or ("0",))[0]
    return SpecifierSet(cuda).contains(found)


def _reference(text: str, constraint: bool) -> WheelReference | None:
    """The wheel a family requirement refers to (``torch @ URL``, a path), or None for a version range."""
    from .references import could_be_reference, reference_of

    if not could_be_reference(text):
        return None
    found = reference_of(text)
    if found is not None and constraint:
        raise InputError(f"-c {found.requirement}: a constraint cannot be a URL or path (pip refuses it too)")
    return found


def applying(texts: tuple[str, ...], machine: Machine | None) -> list[str]:
    """The requirements whose marker (if any) holds on ``machine`` (all of them without a machine)."""
    if machine is None or not any(";" in t for t in texts):
        return list(texts)
    from ..markers import applies

    return [t for t in texts if applies(t, machine)]


def check_consistent(machine: Machine, variant: str | None, matrix: Matrix) -> None:
    """A profile value no machine can have, or a forced variant the target cannot use: an InputError naming it.
    (What exists in the world, however odd, is planned for, with warnings: a Mac with an NVIDIA driver, Linux on
    an Apple GPU.)"""
    if machine.os == "macos" and machine.rocm:  # Windows has ROCm (AMD's HIP SDK); macOS has none
        raise InputError(f"macOS with ROCm {machine.rocm}: AMD publishes no ROCm for macOS (leave the ROCm version "
                         "out, or give the target's OS)")
    row = vendors.of_kind(variant_kind(variant)) if variant else None
    if row is None:
        return
    os_ = machine.os
    from .vendor_builds import load_vendor_builds

    vendor = matrix.vendor_builds or load_vendor_builds()  # a variant only a vendor's own index has
    on_vendor_index = any(b.variant == variant and any(p.startswith(f"{os_}_") for p in b.targets)
                          for b in vendor.builds)
    if os_ and not on_vendor_index and not any(variant_kind(v) == row.kind for r in matrix.releases
                                               for p, vs in r.variant_lists.items() if p.startswith(f"{os_}_")
                                               for v in vs):
        elsewhere = dict(row.elsewhere).get(os_)
        raise InputError(f"--variant {variant}: the PyTorch index has no {row.build} builds for {os_}"
                         + (f" ({elsewhere})" if elsewhere else ""))
    if machine.gpus and not machine.gpus_of(row.name):
        names = ", ".join(g.label for g in machine.gpus)
        raise InputError(f"--variant {variant} contradicts the target: it needs an {row.brand} GPU, the target has "
                         f"{names}")
