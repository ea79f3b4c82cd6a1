"""The request from everything a user names: requirements on the command line, ``-r``/``-c`` files, a
project's pyproject. The torch family's lines become ``Request.packages`` (resolved against the matrix); every
other requirement rides along as a :class:`~torch_install.resolver.plan.Wanted` with its origin."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

from ..display import excerpt
from ..errors import InputError
from ..resolver.plan import BuildSource, FileOption, RequirementsSource, Wanted
from ..resolver.request import PACKAGES
from ..versions import MAX_DIGITS, has_long_number

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..resolver.plan import Request
    from .bounds import ReadBudget
    from .requirements_file import Fetch, RequirementsFile

COMMAND_LINE = "command line"


class Gathered:
    """What the sources name, in order: family requirement texts, the rest, options of files, the files, notes."""

    def __init__(self) -> None:
        self.family: list[str] = []
        self.constraints: list[str] = []  # -c lines on the family: they limit its versions, request nothing
        self.others: list[Wanted] = []
        self.options: list[FileOption] = []
        self.files: list[RequirementsSource] = []
        self.notes: list[str] = []
        self.builds: list[BuildSource] = []  # the family's builds the project's configuration names
        self.index_urls: list[tuple[str, str]] = []  # (URL, what names it): the project's indexes, to be checked
        self.python: tuple[str, str] | None = None  # the Python an environment file makes its environment with
        self.conda: list[str] = []  # an environment.yml's other conda packages, as written
        self.includes: list[tuple[str, bool]] = []  # files the project's own list includes (-r, -c), read as given

    def add(self, wanted: Wanted) -> None:
        if wanted.name not in PACKAGES:
            self.others.append(wanted)
            return
        if wanted.editable:
            raise InputError(f"{wanted.origin}: -e {excerpt(wanted.text, 80)}: an editable {wanted.name}; "
                             f"torch-install chooses {wanted.name}'s wheel (give a version range or a wheel, or "
                             "install it yourself)")
        from ..resolver.references import could_be_reference, reference_of

        if could_be_reference(wanted.text):  # a wheel names its build; any other location is refused
            reference_of(wanted.text, wanted.origin)
        if wanted.hashes:
            self.notes.append(f"{wanted.origin}: the hashes of {wanted.name}'s line are for one build and not used "
                              "(the chosen build's come with --hashes)")
        (self.constraints if wanted.constraint else self.family).append(wanted.text)


def gather(packages: Sequence[str], requirement_files: Sequence[str] = (), constraint_files: Sequence[str] = (),
           project: str | None = None, extras: Sequence[str] = (), groups: Sequence[str] = (),
           environ: Mapping[str, str] = os.environ, fetch: Fetch | None = None) -> Gathered:
    """Read every source; an InputError names the first problem (file and line where there is one). ``fetch``: how
    a file named by URL is read (none: such a file is an InputError)."""
    found = Gathered()
    for text in packages:
        if has_long_number(text):  # in a version, not in a URL's digits (its hash, a token)
            from .requirement_name import versions_part

            if has_long_number(versions_part(text)):
                raise InputError(f"package {excerpt(text, 40)!r}…: a version number of more than {MAX_DIGITS} "
                                 "digits")
        name = _name_of_argument(text)
        found.add(Wanted(text=text.strip(), name=name, origin=COMMAND_LINE))
    budget: ReadBudget | None = None  # one for every file this command reads (a plain plan reads none)
    if project is not None:
        from .bounds import ReadBudget

        budget = ReadBudget()
        for wanted in _read_project(project, extras, groups, found, budget):
            found.add(wanted)
    elif extras or groups and not _names_a_pipfile_lock(requirement_files):
        raise InputError("--extra and --group select from a project's pyproject.toml (--group a Pipfile.lock's "
                         "categories too): give --project too")
    for path, constraint in [*((p, False) for p in requirement_files), *((p, True) for p in constraint_files),
                             *found.includes]:
        from .bounds import ReadBudget
        from .requirements_file import read_requirements

        budget = budget or ReadBudget()
        locked = _read_lock(path, constraint, groups, found, budget)  # a lock of its own format, read here
        parsed = locked if locked is not None else read_requirements(path, constraint, environ, budget, fetch)
        entries = parsed.entries
        family = [w for w in entries if w.name in PACKAGES]  # a lock's few, among thousands: one pass each
        dropped = _torch_build_lines(list(entries)) if family and not constraint else []
        if dropped:
            names = ", ".join(sorted({w.name or w.text for w in dropped}))
            lines = "1 line is" if len(dropped) == 1 else f"{len(dropped)} lines are"
            found.notes.append(f"{path}: {lines} its lock's own torch build's packages ({names}): "
                               "the chosen build brings its own")
        found.files.append(RequirementsSource(path, constraint, (constraint or not (family or dropped))
                                              and locked is None))  # a lock of its own is never handed on
        found.options += parsed.options
        found.notes += parsed.notes
        for wanted in family:
            found.add(wanted)
        others = [w for w in entries if w.name not in PACKAGES and w not in dropped]
        found.others += others
        if family and any(w.hashes for w in others):
            found.notes.append(f"{path} has --hash options: 'torch-install install -r {path}' installs its other "
                               "packages with them (the chosen build and what it needs come from its index, checked "
                               "with --hashes), and 'plan --format requirements --hashes' writes a file that keeps "
                               "them; a pip or uv command line cannot carry them")
    _read_local_projects(found, budget)
    if found.options:
        _index_options(found)
    return found


def _read_local_projects(found: Gathered, budget: ReadBudget | None) -> None:
    """Each local project among the other requirements (``.``, ``-e ./pkg``, ``./pkg[cuda]``, ``file:///…``):
    what its pyproject.toml requires of the torch family and of the packages built against one torch is read, as
    pip resolves it when it installs the project, and bounds the plan like the user's own requirements (its other
    requirements install with it)."""
    seen: set[str] = set()
    for wanted in list(found.others):
        local = _local_project(wanted.text, wanted.base)
        if local is None or wanted.constraint:
            continue
        directory, extras = local
        if directory in seen:
            continue
        seen.add(directory)
        shown = f"{wanted.origin}: {'-e ' if wanted.editable else ''}{wanted.text}"
        if not any(os.path.isfile(os.path.join(directory, f)) for f in ("pyproject.toml", "setup.cfg")):
            found.notes.append(f"{shown}: a local project without a pyproject.toml: what it requires of torch is not "
                               "read (its setup.py is not run)")
            continue
        from .bounds import ReadBudget
        from .pyproject import read_pyproject

        try:
            read = read_pyproject(directory, extras, (), budget or ReadBudget(), found.notes)
        except InputError as exc:
            found.notes.append(f"{shown}: a local project whose requirements were not read ({exc})")
            continue
        from ..resolver.companion_facts import table_names

        known = table_names()  # the packages built against one torch (xformers, vLLM …) bound it too
        family = [w for w in read if w.name in PACKAGES or w.name in known]
        for required in family:
            found.add(required)
        if family:
            found.notes.append(f"{shown}: a local project requiring {', '.join(w.text for w in family)} (its "
                               "pyproject.toml): the plan holds to it, as the installer does")


def _read_lock(path: str, constraint: bool, groups: Sequence[str], found: Gathered, budget: ReadBudget
               ) -> RequirementsFile | None:
    """A PEP 751 lock or a Pipfile.lock given with -r/-c, as its entries (``found`` gets its builds, notes and
    Python); None for a file in pip's format."""
    from .pipfile import is_pipfile_lock
    from .pylock import is_pylock
    from .requirements_file import RequirementsFile

    if is_pylock(path):
        from .pylock import read_pylock

        wanted, builds, notes = read_pylock(path, budget)
    elif is_pipfile_lock(path):
        from .pipfile import read_pipfile_lock

        lock = read_pipfile_lock(path, groups, budget)
        wanted, builds, notes = lock.wanted, lock.builds, lock.notes
        found.python = found.python or lock.python
    else:
        return None
    found.builds += builds
    found.notes += notes
    return RequirementsFile(path, constraint, tuple(w._replace(constraint=constraint) for w in wanted), ())


def _names_a_pipfile_lock(paths: Sequence[str]) -> bool:
    """Whether one of ``paths`` is a pipenv lock (whose categories --group chooses)."""
    from .pipfile import is_pipfile_lock

    return any(map(is_pipfile_lock, paths))


def _local_project(text: str, base: str | None) -> tuple[str, tuple[str, ...]] | None:
    """(directory, extras) of a requirement naming a local directory (a path, ``name @ file:…``, ``file:…``),
    as the installer finds it from ``base`` (None: the working directory); None for any other requirement."""
    location = text.split(";", 1)[0].strip()
    named = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*@\s*(.+)\Z", location)
    location = named[1].strip() if named else location
    extras: tuple[str, ...] = ()
    bracket = re.match(r"(.+?)\[([^\]]*)\]\Z", location)
    if bracket and not location.startswith("file:"):
        location, extras = bracket[1].strip(), tuple(e.strip() for e in bracket[2].split(",") if e.strip())
    from .requirements_file import local_path

    path = local_path(location)
    if path == location and not (location.startswith((".", "~")) or os.sep in location):
        return None
    location = path
    directory = os.path.abspath(os.path.join(base or os.curdir, os.path.expanduser(location)))
    return (directory, extras) if os.path.isdir(directory) else None


def _index_options(found: Gathered) -> None:
    """A note for each index option of the files: it serves the packages that ride along, not the chosen build
    (one of the PyTorch index that names another build is left out where the plan is made: ``builder.py``)."""
    from .uv_sources import variant_index

    for option in found.options:
        if option.option in ("--index-url", "--extra-index-url") and option.value and not variant_index(option.value):
            found.notes.append(f"{option.origin}: {option.option} {option.value}: the packages of your index come "
                               "from there; the chosen build comes from the PyTorch index (--index-base names a "
                               "mirror of it)")


def _read_project(project: str, extras: Sequence[str], groups: Sequence[str], found: Gathered,
                  budget: ReadBudget) -> list[Wanted]:
    """The requirements of ``--project``: a pyproject.toml (with its uv sources), else a pixi.toml or an
    environment.yml (conda_files), or a Pipfile (pipfile)."""
    from .conda_files import project_file

    notes = found.notes
    kind, path = project_file(project)
    if kind == "pyproject":
        from .pyproject import read_pyproject
        from .uv_sources import UvSources

        sources = UvSources()
        wanted = read_pyproject(path, extras, groups, budget, notes, sources)
        found.builds += sources.builds
        found.options += sources.options
        found.index_urls += sources.index_urls
        return wanted
    if kind == "pipfile":
        if extras:
            raise InputError(f"--extra selects a pyproject.toml's extras or a pixi.toml's features; {path} has "
                             "package categories (--group)")
        from .pipfile import read_pipfile

        pipfile = read_pipfile(path, groups, budget)
        notes += pipfile.notes
        found.builds += pipfile.builds
        found.options += pipfile.options
        found.index_urls += [(o.value or "", o.origin) for o in pipfile.options]
        found.python = pipfile.python
        return pipfile.wanted
    if groups:
        raise InputError(f"--group selects a pyproject.toml's dependency groups; {path} has none")
    from .conda_files import read_environment_yml, read_pixi

    if kind == "conda" and extras:
        raise InputError(f"--extra selects a pyproject.toml's extras or a pixi.toml's features; {path} has none")
    read = read_pixi(path, extras) if kind == "pixi" else read_environment_yml(path)
    notes += read.notes
    found.builds += read.builds
    found.python = read.python
    found.conda = read.conda
    found.includes += read.includes
    found.options += read.options
    return read.wanted


# The packages a torch build brings for itself: NVIDIA's CUDA libraries, triton, CUDA's Python packages (compiled
# when a lock is read)
_TORCH_BUILD = r"^(nvidia-.+|triton|pytorch-triton(-.+)?|cuda-(toolkit|bindings|pathfinder|python))$"
_TORCH_BUILD_STARTS = ("nvidia-", "triton", "pytorch-triton", "cuda-")  # where the pattern can match


def _torch_build_lines(entries: list[Wanted]) -> list[Wanted]:
    """The lines of a compiled lock that are its torch build's own: packages a torch build brings, which the
    lock's annotations (``# via torch``) say only the torch family (or other such packages) needs. A line without
    annotations is the user's own (``nvidia-ml-py``, ``triton``, ``cuda-python`` written by hand): it stays."""
    build = {w.name for w in entries if w.name and w.name.startswith(_TORCH_BUILD_STARTS)
             and re.match(_TORCH_BUILD, w.name)}
    owners = {*PACKAGES, *build}
    return [w for w in entries if w.name in build and not w.editable and w.via
            and all(parent.lower().replace("_", "-") in owners for parent in w.via)]


def _name_of_argument(text: str) -> str | None:
    """The canonical name of a requirement given on the command line (a bare name without packaging's parser)."""
    from ..resolver.request import NAME, canonical_name

    if re.match(rf"{NAME}\Z", text):
        return canonical_name(text)
    try:
        from .requirement_name import requirement_name

        return requirement_name(text.strip(), f"package {text!r}")
    except InputError as exc:
        hint = ' (installer options go after "--")' if " -" in text else ""
        raise InputError(str(exc).replace(f"package {text!r}: ", f"package {text!r}: not a valid requirement: ", 1)
                         + hint) from None


def request_of(found: Gathered, variant: str | None, channel: str, index_base: str,
               installer_options: Sequence[str] = ()) -> Request:
    from ..resolver.plan import DEFAULT_INDEX_BASE, Request
    from ..resolver.steps import torch_step_options

    notes = list(found.notes)
    named = [o for o in installer_options if o not in torch_step_options(installer_options)]
    if named:
        notes.append(f"{' '.join(named)} (after --): the packages from your index come from there; a build from "
                     "the PyTorch index still comes from the PyTorch index (--index-base names a mirror of it)")
    if found.builds and index_base == DEFAULT_INDEX_BASE:  # the index the project names for the build
        from .uv_sources import variant_index

        base, named_channel, _ = variant_index(found.builds[0].index_url) or (index_base, channel, "")
        index_base, channel = base, named_channel if channel == "stable" else channel
    return Request(packages=tuple(found.family) or ("torch",), variant=variant, channel=channel,
                   index_base=index_base, requirements=tuple(found.others), options=tuple(found.options),
                   files=tuple(found.files), constraints=tuple(found.constraints), notes=tuple(notes),
                   installer_options=tuple(installer_options), builds=tuple(found.builds), python=found.python,
                   conda=tuple(found.conda),
                   torch_implied=not found.family and not found.constraints)
