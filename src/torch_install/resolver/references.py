"""A direct reference to a wheel file: ``torch @ https://…/torch-2.7.1%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl``,
pip's bare URL or path of one, ``name @ file:///…``. It is the user's choice of build: its file name (PEP 427, read by
packaging, URL-decoded) says the project, the release, the local label (the variant, or what a package built
against torch was built for) and the tags of the machines it installs on; the plan takes that build, keeps the
reference in its commands, and says so where it does not run. Pure: nothing is fetched here (what the wheel's
METADATA declares is read online, ``index/requirements.py``)."""

from __future__ import annotations

import re

from ..errors import InputError
from ..records import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..machine import Machine

_URL = r"^[A-Za-z][A-Za-z0-9+.-]*://"  # matched through re's cache


class WheelReference(Record):
    """What a direct reference to a wheel names."""

    requirement: str  # as a command installs it, marker left out: "torch @ https://…whl", "./wheels/x.whl"
    name: str  # canonical project name
    version: str  # the wheel's version as PEP 440 normalises it, local label kept: "2.7.1+cu128"
    tags: tuple[str, ...]  # its tags: "cp312-cp312-manylinux_2_28_x86_64"
    location: str  # the URL or path

    @property
    def public(self) -> str:
        return self.version.split("+", 1)[0]

    @property
    def label(self) -> str | None:
        return self.version.split("+", 1)[1] if "+" in self.version else None

    @property
    def url(self) -> str | None:
        """The location when it is a URL a client fetches (http, https), else None (a path, ``file:``)."""
        return self.location if self.location.startswith(("https://", "http://")) else None


def could_be_reference(text: str) -> bool:
    """Whether ``text`` may be a URL or path rather than a version range (cheap: no parsing)."""
    head = text.split(";", 1)[0]
    return "://" in head or " @ " in head or "@ " in head or head.strip().startswith((".", "/", "~")) \
        or head.strip().endswith(".whl")


def reference_of(text: str, origin: str = "") -> WheelReference | None:
    """The wheel ``text`` refers to; None when ``text`` is a version range, not a location; an InputError naming
    ``origin`` when it is a location that is not a wheel file (a source tree, an sdist, a VCS URL) or names
    another project than its file."""
    if not could_be_reference(text):
        return None
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    where = f"{origin}: " if origin else ""
    head = text.split(" ;", 1)[0].split("; ", 1)[0].strip() if ";" in text else text.strip()
    named: str | None = None
    extras = ""
    try:
        req = Requirement(text)
    except InvalidRequirement:
        location = head
    else:
        if req.url is None:
            return None
        named, location = canonicalize_name(req.name), req.url
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    file = _file_name(location)
    try:
        name, version, _, tags = parse_wheel_filename(file)
    except InvalidWheelFilename:
        # (the output streams mask any credentials of the URL: display.OutputStream)
        raise InputError(f"{where}{text.strip()[:120]!r}: not a wheel file ({file[:80] or 'no file'}"
                         "): torch-install reads the build a wheel's file name says; a source tree, an sdist or a "
                         "VCS URL of this package it does not read (install it yourself, or give a wheel)") from None
    if named is not None and named != canonicalize_name(name):
        raise InputError(f"{where}{text.strip()[:120]!r}: the requirement names {named}, the wheel "
                         f"{file!r} is {canonicalize_name(name)}'s")
    name = canonicalize_name(name)
    requirement = f"{name}{extras} @ {location}" if named is not None or re.match(_URL, location) else location
    return WheelReference(requirement, name, str(version), tuple(sorted(str(t) for t in tags)), location)


def why_not_here(reference: WheelReference, machine: Machine) -> tuple[str, str] | None:
    """(warning code, why) when the wheel does not install on ``machine`` by its tags: its platform
    (platform-unsupported) or its Python (python-unsupported); None when it installs, or the machine's platform is
    not known."""
    from ..profile_tags import profile_tags

    if not machine.os or not machine.arch:
        return None
    target = profile_tags(machine)
    platforms = {t.rsplit("-", 1)[1] for t in reference.tags}
    if not platforms & target.platforms and "any" not in platforms:
        return "platform-unsupported", f"the wheel is built for {', '.join(sorted(platforms))}, not {machine.platform}"
    if target.tags is not None and not set(reference.tags) & target.tags:
        pythons = sorted({"-".join(t.split("-")[:2]) for t in reference.tags})
        return "python-unsupported", f"the wheel is built for {', '.join(pythons)}, not Python {machine.python}"
    return None


def _file_name(location: str) -> str:
    """The file a URL or path names, percent-decoded: its path's last part, without query or fragment."""
    path = location.split("#", 1)[0].split("?", 1)[0] if re.match(_URL, location) else location.split("#", 1)[0]
    if re.match(_URL, path):
        path = path.split("://", 1)[1].partition("/")[2]  # the host (and its credentials) is no part of it
    return re.sub("%([0-9A-Fa-f]{2})", lambda m: chr(int(m[1], 16)), path.replace("\\", "/").rsplit("/", 1)[-1])


def shown(name: str, location: str) -> str:
    """A direct reference in a message: by its file name ("torch @ …/torch-2.7.1+cu128-…whl"), no host, no
    credentials."""
    return f"{name} @ …/{_file_name(location)}"


def shown_requirements(texts: tuple[str, ...] | list[str]) -> list[str]:
    """Requirements in a message, each direct reference by its file name (``shown``)."""
    out = []
    for text in texts:
        found = reference_of(text) if could_be_reference(text) else None
        out.append(shown(found.name, found.location) if found is not None else text)
    return out
