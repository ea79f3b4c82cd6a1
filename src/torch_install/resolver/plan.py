"""What the resolver returns: the chosen build, why, what was rejected, and warnings with stable codes.

The JSON form (``Plan.to_dict``) is a documented contract: docs/plan-json.md.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from ..hosts import insecure_host
from ..machine import Machine
from ..records import Record
from .commands import INSTALLERS, PRE_RELEASE_CHANNEL, installer_argv

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from .companion_facts import Pick

DEFAULT_INDEX_BASE = "https://download.pytorch.org/whl"

# The plan's warning codes, the one list the code reads (extend, never rename; docs/plan-json.md documents each).
# True: the warning means the chosen build does not run, or cannot be installed, on the machine ("blocking"):
# a fleet does not count such a machine as served, and the doctor's fix avoids such a build.
WARNING_CODES: Mapping[str, bool] = MappingProxyType({
    "driver-too-old": True,
    "driver-unknown": False,
    "gpu-arch-unsupported": True,
    "mixed-gpus": False,
    "no-gpu-variant-for-version": True,
    "python-unsupported": True,
    "platform-unsupported": True,
    "rocm-override-needed": False,
    "integrated-gpu-only": False,
    "gpu-arch-unknown": False,
    "rocm-driver-window": False,
    "constrained-by": False,
    "builds-from-source": False,
})


def check_code(code: str) -> str:
    """``code`` itself, or a ValueError: a warning code that is not in WARNING_CODES is a bug."""
    if code not in WARNING_CODES:
        raise ValueError(f"unknown plan warning code {code!r} (add it to WARNING_CODES and docs/plan-json.md)")
    return code


class Wanted(Record):
    """One requirement of the project other than the torch family's, as the user wrote it, and where from."""

    text: str  # as written, without per-line options: "numpy<2", "xformers==0.0.32.post2", "./pkg", a URL
    name: str | None  # the canonical project name; None for a path or URL that names none
    origin: str  # "command line", "requirements.txt:12", "pyproject.toml: project.dependencies"
    hashes: tuple[str, ...] = ()  # its --hash options ("sha256:…")
    editable: bool = False  # -e
    constraint: bool = False  # from a -c file: limits versions, installs nothing
    via: tuple[str, ...] = ()  # the packages a compiled lock says need it ("# via torch")
    file: str | None = None  # the -r/-c file given on the command line it comes from (itself or by an include)


class FileOption(Record):
    """An options line of a requirements file (``--extra-index-url URL``): honoured for the packages that ride
    along, never for the torch family, whose index torch-install chooses."""

    option: str  # the long form: "--extra-index-url"
    value: str | None
    origin: str  # "requirements.txt:3"
    file: str | None = None  # the -r/-c file given on the command line it comes from


class RequirementsSource(Record):
    """A ``-r``/``-c`` file the user gave."""

    path: str
    constraint: bool = False
    passthrough: bool = True  # given to the installer as it is (else its lines are written out one by one)


class Request(Record):
    """What the user asked for."""

    packages: tuple[str, ...] = ("torch",)  # PEP 508 requirement strings of the torch family, as given
    variant: str | None = None  # force one: "cu128", "cpu", "rocm6.4", "xpu"
    channel: str = "stable"  # stable | test | nightly
    index_base: str = DEFAULT_INDEX_BASE
    requirements: tuple[Wanted, ...] = ()  # everything else the project asks for, in order
    options: tuple[FileOption, ...] = ()  # options lines of the requirements files
    files: tuple[RequirementsSource, ...] = ()  # the -r/-c files given
    constraints: tuple[str, ...] = ()  # -c lines on the torch family: they limit its versions
    notes: tuple[str, ...] = ()  # what reading the sources found worth saying
    installer_options: tuple[str, ...] = ()  # given after "--": passed to every installer step

    @property
    def others(self) -> tuple[str, ...]:
        """The requirements that ride along, as written."""
        return tuple(w.text for w in self.requirements if not w.constraint)

    def to_dict(self) -> dict[str, Any]:
        return {"packages": list(self.packages), "variant": self.variant, "channel": self.channel,
                "index_base": self.index_base, "others": list(self.others),
                "requirements": [{"requirement": w.text, "name": w.name, "origin": w.origin, "editable": w.editable,
                                  "constraint": w.constraint, "hashes": len(w.hashes)} for w in self.requirements],
                "files": [{"path": f.path, "constraint": f.constraint, "passthrough": f.passthrough}
                          for f in self.files], "constraints": list(self.constraints),
                "installer_options": list(self.installer_options)}


class PlanWarning(Record):
    """One warning: its code (``WARNING_CODES``), one line, and what it is about: the chosen build ("choice"), or
    the newest matching release and why it was passed over ("newest"). Only a blocking code about the choice
    means the chosen build does not run or install here."""

    code: str
    message: str
    about: str = "choice"  # choice | newest

    @property
    def blocking(self) -> bool:
        return self.about == "choice" and WARNING_CODES[self.code]


class Rejection(Record):
    variant: str
    torch: str
    reason: str


class Choice(Record):
    variant: str  # index variant id: cu128, rocm6.4, xpu, cpu; "default" for the default index (macOS)
    torch: str  # "2.9.1"
    index_url: str | None  # None: the default index
    packages: Mapping[str, str] = MappingProxyType({})  # name -> exact version (with local label)
    companions: tuple[Pick, ...] = ()  # requested packages built against torch, and where their builds come from

    def from_index(self) -> tuple[Pick, ...]:
        """The companions installed from the chosen build's index, with torch."""
        return tuple(p for p in self.companions if p.kind == "index")


class Need(Record):
    """One change that would let the newest matching release run (on the GPU): what, the machine's value, the
    value needed, and the words for it ("Python ≥ 3.11")."""

    what: str  # python | nvidia_driver | rocm | glibc | macos | os | libc
    have: str | None
    want: str  # ">=3.11", "<=3.14", ">=580.65.06", "sm_75 or newer", "linux", "glibc"
    text: str


class Upgrade(Record):
    """What it would take to get the newest matching release on the machine's GPU: the changes (``needs``) and,
    where no change to this machine gets it onto the GPU, why not (``why_not``). ``gpu`` False: the needs get
    the release installed, not onto a GPU (a machine without a GPU to use, or a release without code for it)."""

    torch: str
    gpu: bool
    needs: tuple[Need, ...] = ()
    why_not: str | None = None  # what no change here lifts, after "torch X" ("has no ROCm build for …")

    def text(self) -> str:
        """One line: "torch 2.15.0 on the GPU needs Python ≥ 3.11 and NVIDIA driver ≥ 580.65.06"."""
        if not self.needs:
            return f"torch {self.torch} {self.why_not or 'does not fit this machine'}"
        where = f"torch {self.torch}" + (" on the GPU" if self.gpu else "")
        items = [n.text for n in self.needs]
        joined = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
        return f"{where} needs {joined}" + (f", and {self.why_not}" if self.why_not else "")

    def to_dict(self) -> dict[str, Any]:
        return {"torch": self.torch, "gpu": self.gpu, "why_not": self.why_not,
                "needs": [{"what": n.what, "from": n.have, "to": n.want, "text": n.text} for n in self.needs]}


class Plan(Record):
    machine: Machine
    request: Request
    choice: Choice | None
    gpu_accelerated: bool
    reasons: tuple[str, ...] = ()  # why this choice, one line each
    warnings: tuple[PlanWarning, ...] = ()
    rejected: tuple[Rejection, ...] = ()
    notes: tuple[str, ...] = ()  # caveats: facts the choice rests on that are inferred/unverified
    upgrade: Upgrade | None = None  # what would get the newest matching release (on the GPU); None: the choice is it

    @property
    def commands(self) -> dict[str, str]:
        """``{"pip": ..., "uv": ...}``: the ready command lines (none without a choice)."""
        return command_lines(self)

    def blocking_warnings(self) -> tuple[PlanWarning, ...]:
        """Warnings that mean the chosen build does not run (or cannot be installed) on the machine."""
        return tuple(w for w in self.warnings if w.blocking)

    def to_dict(self) -> dict[str, Any]:
        choice = None
        if self.choice:
            choice = {"variant": self.choice.variant, "torch": self.choice.torch,
                      "index_url": self.choice.index_url, "packages": dict(self.choice.packages),
                      "companions": [{"name": p.name, "version": p.version, "from": p.kind,
                                      "requirement": p.requirement, "url": p.url} for p in self.choice.companions]}
        return {
            "choice": choice,
            "gpu_accelerated": self.gpu_accelerated,
            "reasons": list(self.reasons),
            "warnings": [{"code": w.code, "message": w.message, "about": w.about, "blocking": w.blocking}
                         for w in self.warnings],
            "rejected": [{"variant": r.variant, "torch": r.torch, "reason": r.reason} for r in self.rejected],
            "notes": list(self.notes),
            "upgrade": self.upgrade.to_dict() if self.upgrade else None,
            "machine": self.machine.to_dict(),
            "request": self.request.to_dict(),
            "commands": dict(self.commands),
        }


# -- the plan as installer arguments: every command pins the exact version with its local label
# (``torch==2.9.1+cu128``), so an installer can neither keep an installed build of another flavour nor pull one
# from another index

def requirement_lines(plan: Plan) -> list[str]:
    """The first step's requirements: one pin per chosen package of the torch family, ``name==version``, then the
    requested packages built against torch that come from its index (``xformers==0.0.35``); where the version is
    left to the installer (a pre-release channel), the requirement as the user gave it (``torch>=2.9``)."""
    if plan.choice is None:
        return []
    packages = plan.choice.packages
    from_index = [p.requirement for p in plan.choice.from_index()]
    if all(packages.values()):  # every version chosen: packaging's parser is not needed (nor imported)
        return [f"{name}=={version}" for name, version in packages.items()] + from_index
    given = {name: str(req) for name, req in _family_requirements(plan).items()}
    return [f"{name}=={version}" if version else given.get(name, name) for name, version in packages.items()] + \
        from_index


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
    assert plan.choice is not None
    extras = family_extras(plan) if with_extras else {}
    pins = [f"{name}{extras.get(name, '')}=={version}" for name, version in plan.choice.packages.items() if version]
    return pins + [p.requirement for p in plan.choice.from_index()]


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
    for option in request.options:
        if option.file not in given and option.option in RIDE_ALONG_OPTIONS:
            args += [option.option, *([option.value] if option.value is not None else [])]
    for source in passthrough(plan):
        args += ["-c" if source.constraint else "-r", source.path]
    for picked in plan.choice.companions:
        if picked.kind in ("default", "find-links", "url"):
            args.append(picked.requirement)
            if picked.url:
                args += ["--find-links", picked.url]
    if not args and not family_extras(plan):
        return []
    return [*args, *pins_for_ride_along(plan), *request.installer_options]


# Options of a requirements file that carry over to the command of the packages riding along (the others --
# --require-hashes, --no-binary … -- only mean something beside the file's own lines)
RIDE_ALONG_OPTIONS = ("--index-url", "--extra-index-url", "--no-index", "--find-links", "--trusted-host", "--pre",
                      "--prefer-binary", "--only-binary", "--no-binary")


def ride_along_files(plan: Plan) -> tuple[str, str]:
    """What rides along as files an installer reads, for where a command line cannot carry it (``--hash``
    options): (a requirements file: every line written out with its hashes and its file's options, the files given
    as they are (``-r``/``-c`` with absolute paths), the requested packages from elsewhere; a constraints file:
    the chosen build's pins, which need no hash there)."""
    import os

    if plan.choice is None:
        return "", ""
    request = plan.request
    given = {f.path for f in passthrough(plan)}
    taken = {p.name for p in plan.choice.companions}
    lines = [f"{option.option}{f' {option.value}' if option.value is not None else ''}" for option in request.options
             if option.file not in given]
    for wanted in request.requirements:
        if wanted.file in given or wanted.constraint or wanted.name in taken:
            continue
        text = f"-e {wanted.text}" if wanted.editable else wanted.text
        lines.append(" ".join([text, *(f"--hash={h}" for h in wanted.hashes)]))
    lines += [f"{'-c' if f.constraint else '-r'} {os.path.abspath(f.path)}" for f in passthrough(plan)]
    for picked in plan.choice.companions:
        if picked.kind in ("default", "find-links", "url"):
            lines.append(picked.requirement)
            if picked.url:
                lines.append(f"--find-links {picked.url}")
    lines += [f"{name}{extras}" for name, extras in family_extras(plan).items()]  # versions: the constraints
    return "\n".join(lines) + "\n", "\n".join(pins_for_ride_along(plan, with_extras=False)) + "\n"


def source_build_args(plan: Plan) -> list[str]:
    """The last step's arguments when a requested package builds from source: it, without build isolation (its
    build imports the installed torch), with the chosen build pinned."""
    if plan.choice is None:
        return []
    sources = [p.requirement for p in plan.choice.companions if p.kind == "source"]
    if not sources:
        return []
    return ["--no-build-isolation", *sources, *pins_for_ride_along(plan), *plan.request.installer_options]


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
    first = [*install_args(plan, installer), *(torch_step_options(options) if plan.choice.index_url else options)]
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
