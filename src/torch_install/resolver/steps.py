"""The plan as installer steps: the arguments of each ``pip install`` / ``uv pip install`` that installs a plan,
and the ready command lines. Every step pins the exact version with its local label (``torch==2.9.1+cu128``), so an
installer can neither keep an installed build of another flavour nor pull one from another index.

The steps (docs/architecture.md, "Other packages: the installer steps"): the chosen build from its index, then what
rides along from the user's own index with the build pinned again, then what builds from source. Pure: what a step
reads from a file is written by ``environment/install.py``.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from ..hosts import insecure_host
from .commands import INSTALLERS, PRE_RELEASE_CHANNEL, installer_argv
from .plan import Plan, RequirementsSource, Wanted

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def requirement_lines(plan: Plan) -> list[str]:
    """The first step's requirements: one pin per chosen package of the torch family, ``name==version`` (with the
    extras the build installs with: ``torch[device-gfx1100]==2.14.0+rocm10.1.0``), then the requested packages built
    against torch that come from its index (``xformers==0.0.35``); where the version is left to the installer (a
    pre-release channel), the requirement as the user gave it (``torch>=2.9``)."""
    if plan.choice is None:
        return []
    packages = plan.choice.packages
    extras = build_extras(plan)
    from_index = [p.requirement for p in plan.choice.from_index()]
    references = plan.choice.references  # the user's own wheel of the build (torch @ URL): as given
    if all(packages.values()):  # every version chosen: packaging's parser is not needed (nor imported)
        return [references.get(name) or f"{name}{extras.get(name, '')}=={version}"
                for name, version in packages.items()] + from_index
    given = _family_requirements(plan)
    lines = []
    for name, version in packages.items():
        if name in references:
            lines.append(references[name])
        elif version:
            lines.append(f"{name}{extras.get(name, '')}=={version}")
        elif name in given:
            given[name].extras |= set(plan.choice.extras.get(name, ()))
            lines.append(str(given[name]))
        else:
            lines.append(f"{name}{extras.get(name, '')}")
    return lines + from_index


def build_extras(plan: Plan) -> dict[str, str]:
    """``{"torch": "[device-gfx1100]"}``: the extras the chosen build itself installs with (a vendor build's device
    extras, whose packages live on its index): its first step and the files that install it name them."""
    if plan.choice is None or not plan.choice.extras:
        return {}
    return {name: "[" + ",".join(extras) + "]" for name, extras in plan.choice.extras.items() if extras}


def _family_requirements(plan: Plan) -> dict[str, Any]:
    """The family requirements as given (packaging ``Requirement``s, by name; a name given twice keeps the first,
    with the extras of both), markers left out."""
    from packaging.requirements import InvalidRequirement, Requirement

    out: dict[str, Any] = {}
    for text in plan.request.packages:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        req.marker = None
        first = out.setdefault(req.name.lower().replace("_", "-"), req)
        first.extras |= req.extras
    return out


def family_extras(plan: Plan) -> dict[str, str]:
    """``{"torch": "[opt-einsum]"}``: the extras asked of the family (none for bare names, without parsing)."""
    if not any("[" in text for text in plan.request.packages):
        return {}
    return {name: "[" + ",".join(sorted(req.extras)) + "]" for name, req in _family_requirements(plan).items()
            if req.extras}


def install_args(plan: Plan, installer: str = "pip") -> list[str]:
    """Arguments after ``pip install`` / ``uv pip install``: pins, pre-release switch, index."""
    args = requirement_lines(plan)
    if plan.request.channel == PRE_RELEASE_CHANNEL:
        args += ["--pre"] if installer == "pip" else ["--prerelease", "allow"]
    if plan.choice is not None and plan.choice.index_url:
        # uv's --default-index: its --index-url loses to a UV_DEFAULT_INDEX the user exported
        args += ["--index-url" if installer == "pip" else "--default-index", plan.choice.index_url]
        trusted = insecure_host(plan.choice.index_url)  # a plain-http mirror the user allowed (--allow-insecure-index)
        if trusted:
            args += ["--trusted-host", trusted] if installer == "pip" else ["--allow-insecure-host", trusted]
    return args


def reinstall_args(plan: Plan, names: Sequence[str], installer: str = "pip") -> list[str]:
    """Arguments after ``pip install`` that install ``names`` of the plan again, and only them (``--no-deps``), each
    at the plan's version and from where its build comes (the build's index, its find-links page, its URL), over
    what is installed of them at any version (pip's ``--force-reinstall``, uv's ``--reinstall``): what replaces a
    build the installer would keep, since an installed version satisfies a pin whatever its build. Empty when the
    plan has none of them."""
    if plan.choice is None:
        return []
    wanted = set(names)
    family = [f"{name}=={version}" for name, version in plan.choice.packages.items() if name in wanted and version]
    picks = [p for p in plan.choice.companions if p.name in wanted and p.kind not in ("left-out", "source")]
    if not family and not picks:
        return []
    args = ["--force-reinstall" if installer == "pip" else "--reinstall", "--no-deps", *family,
            *(p.requirement for p in picks)]
    if plan.choice.index_url and (family or any(p.kind == "index" for p in picks)):
        args += ["--index-url" if installer == "pip" else "--default-index", plan.choice.index_url]
        trusted = insecure_host(plan.choice.index_url)
        if trusted:
            args += ["--trusted-host", trusted] if installer == "pip" else ["--allow-insecure-host", trusted]
    for url in dict.fromkeys(p.url for p in picks if p.url):
        args += ["--find-links", url]
    return args


class Inexpressible(ValueError):
    """What a command line cannot carry: the other packages' ``--hash`` options (one line naming the file)."""


def passthrough(plan: Plan) -> list[RequirementsSource]:
    """The -r/-c files given to the installer as they are: constraint files, and requirement files none of whose
    lines torch-install took over (torch lines, a lock's own torch build's packages)."""
    return [f for f in plan.request.files if f.passthrough]


def pins_for_ride_along(plan: Plan, with_extras: bool = True) -> list[str]:
    """The chosen build pinned in a later step: the family (with the extras asked of it, unless a constraints
    file is to hold them: it cannot) and the packages that came from its index, so nothing a later step installs
    can replace them."""
    from .pins import build_pins

    assert plan.choice is not None
    return build_pins(plan, family_extras(plan) if with_extras else None, index_only=True)


def ride_along_args(plan: Plan) -> list[str]:
    """The second step's arguments: what rides along (the other requirements as written, ``-r``/``-c`` files
    given as they are, the options of files whose lines are written out, the requested packages built against
    torch that come from elsewhere: the user's index, a find-links page, a wheel URL), then the chosen build
    pinned (``pins_for_ride_along``), and no index option of its own, so they come from the user's own index.
    Empty when nothing rides along. Inexpressible when a written-out line has ``--hash`` options."""
    if plan.choice is None:
        return []
    request = plan.request
    given = {f.path for f in passthrough(plan)}
    taken = {p.name for p in plan.choice.companions}
    args: list[str] = []
    for wanted in request.requirements:
        if wanted.file in given or wanted.constraint or wanted.name in taken:
            continue
        if wanted.hashes:
            raise Inexpressible(f"{wanted.origin}: {wanted.text} has --hash options, which a command line cannot "
                                "carry")
        args += ["-e", wanted.text] if wanted.editable else [wanted.text]
    options = file_options(plan, RIDE_ALONG_OPTIONS, given)
    files = [arg for source in passthrough(plan) if not source.constraint for arg in ("-r", source.path)]
    picked_args: list[str] = []
    for picked in plan.choice.companions:
        if picked.kind in ("default", "find-links", "url"):
            picked_args.append(picked.requirement)
            if picked.url:
                picked_args += ["--find-links", picked.url]
    if not (args or files or picked_args or family_extras(plan)):
        return []  # options and constraint files alone install nothing
    args += [*options, *files, *picked_args]
    constraints = [arg for source in passthrough(plan) if source.constraint for arg in ("-c", source.path)]
    return [*args, *constraints, *pins_for_ride_along(plan), *request.installer_options]


def unhashed(requirements: Sequence[Wanted]) -> list[Wanted]:
    """The requirements pip's hash-checking mode refuses: in a requirements file where another line has a
    ``--hash``, each line to install that has none (the torch family's lines aside: their build comes with its
    index's hashes); pip refuses the whole file for one of them."""
    from .request import PACKAGES

    files = {w.file for w in requirements if w.hashes and w.file}
    return [w for w in requirements if w.file in files and not w.hashes and not w.constraint
            and w.name not in PACKAGES and "#sha256=" not in w.text]


def named_lines(wanted: Sequence[Wanted], most: int = 3) -> str:
    """ "requests==2.32.3 (lock.txt:3), numpy (lock.txt:4), …": the first ``most`` requirements, where each is."""
    return ", ".join(f"{w.text} ({w.origin})" for w in wanted[:most]) + (", …" if len(wanted) > most else "")


# Options of a requirements file that carry over to the command of the packages riding along (the others --
# --require-hashes, --no-binary … -- only mean something beside the file's own lines), and those the chosen build's
# step takes too (an offline install from local wheels takes the build from them; an index names the others')
RIDE_ALONG_OPTIONS = ("--index-url", "--extra-index-url", "--no-index", "--find-links", "--trusted-host", "--pre",
                      "--prefer-binary", "--only-binary", "--no-binary")
BUILD_STEP_OPTIONS = ("--no-index", "--find-links", "--trusted-host")


def file_options(plan: Plan, names: Sequence[str], given: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The arguments of the options lines of the project's files named ``names``, each once (a file given to the
    installer as it is, in ``given``, carries its own)."""
    out: list[str] = []
    seen: set[tuple[str, str | None]] = set()
    for option in plan.request.options:
        if option.file not in given and option.option in names and (option.option, option.value) not in seen:
            seen.add((option.option, option.value))
            out += [option.option, *([option.value] if option.value is not None else [])]
    return out


def source_build_args(plan: Plan) -> list[str]:
    """The last step's arguments when a requested package builds from source: it, without build isolation (its
    build imports the installed torch), with the chosen build pinned."""
    if plan.choice is None:
        return []
    sources = [p.requirement for p in plan.choice.companions if p.kind == "source"]
    if not sources:
        return []
    return ["--no-build-isolation", *sources, *file_options(plan, RIDE_ALONG_OPTIONS), *pins_for_ride_along(plan),
            *plan.request.installer_options]


# installer options naming an index: the step of a build from the PyTorch index keeps its own (--find-links and
# --no-index stay: an offline install from local wheels takes the build from them too)
INDEX_OPTIONS = ("--index-url", "-i", "--extra-index-url", "--default-index", "--index")  # each takes a value


def torch_step_options(options: Sequence[str]) -> list[str]:
    """The options given after "--" that the chosen build's step takes: all but those naming an index."""
    out: list[str] = []
    skip = False
    for option in options:
        if skip:
            skip = False
            continue
        name = option.split("=", 1)[0]
        if name in INDEX_OPTIONS:
            skip = "=" not in option
            continue
        out.append(option)
    return out


def install_steps(plan: Plan, installer: str = "pip") -> list[list[str]]:
    """The arguments after ``pip install`` of each step: the chosen build from its index, then (when other
    packages ride along) the others from the user's index (``ride_along_args``), then what builds from source."""
    if plan.choice is None:
        return []
    options = plan.request.installer_options
    first = [*install_args(plan, installer), *file_options(plan, BUILD_STEP_OPTIONS),
             *(torch_step_options(options) if plan.choice.index_url else options)]
    return [step for step in (first, ride_along_args(plan), source_build_args(plan)) if step]


def command_lines(plan: Plan) -> dict[str, str]:
    """Ready command lines ``{"pip": ..., "uv": ...}`` (shell-quoted, POSIX rules; steps joined with ``&&``); empty
    without a choice, or when a command line cannot carry the project (``Inexpressible``: the plan's notes say
    what to run instead)."""
    if plan.choice is None:
        return {}
    try:
        return {installer: " && ".join(shlex.join(installer_argv(installer, "install", step))
                                       for step in install_steps(plan, installer)) for installer in INSTALLERS}
    except Inexpressible:
        return {}
