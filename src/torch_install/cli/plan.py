"""`torch-install plan` (the default command) and `torch-install install`."""

from __future__ import annotations

import argparse
import os

from ..errors import EXIT_NO_BUILD, EXIT_OK, EXIT_WARNINGS, InputError
from ..resolver.request import CHANNELS
from . import common, targets

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..machine import Machine
    from ..project.requirements_file import Fetch
    from ..resolver.matrix import Matrix
    from ..resolver.plan import Plan, Request

def add_request_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("packages", nargs="*", metavar="PKG",
                        help='requirements like pip\'s: "torch>=2.7" torchvision torchaudio (default: torch); other '
                             'packages ("numpy<2", xformers, transformers) are planned with it; installer options '
                             'go after "--"')
    parser.add_argument("-r", "--requirement", metavar="FILE", action="append", default=[],
                        help="a requirements file in pip's format (a compiled lock too; a PEP 751 pylock.toml, "
                             "pipenv's Pipfile.lock): its torch lines are resolved, the rest planned with them")
    parser.add_argument("-c", "--constraint", metavar="FILE", action="append", default=[],
                        help="a constraints file in pip's format: it limits versions, torch's included")
    parser.add_argument("--project", metavar="DIR", nargs="?", const=".",
                        help="the project in DIR (default: here): its pyproject.toml (PEP 621, poetry, PDM, uv, "
                             "setuptools' setup.cfg), else pixi.toml, environment.yml or Pipfile; or that file")
    parser.add_argument("--extra", metavar="NAME", action="append", default=[],
                        help="with --project: add an extra's optional dependencies")
    parser.add_argument("--group", metavar="NAME", action="append", default=[],
                        help="with --project: add a dependency group (PEP 735, poetry's, PDM's, a Pipfile's "
                             "category; dev: [dev-packages], uv's dev-dependencies)")
    parser.add_argument("--variant", metavar="ID", help="force a variant: cu128, rocm6.4, xpu, cpu …")
    parser.add_argument("--channel", choices=CHANNELS, default="stable", help="release channel (default stable)")
    parser.add_argument("--vendor-build", action="store_true",
                        help="the GPU vendor's own build (AMD's ROCm index) first, where one serves the GPU; without "
                             "it PyTorch's own build is chosen where it serves")
    common.add_index_options(parser)
    parser.add_argument("--vendor-index", metavar="ID=URL", action="append", default=[],
                        help="a mirror of a vendor's index (amd-stable=URL, jetson-jp6-cu126=URL …; also "
                             "$TORCH_INSTALL_VENDOR_INDEX, space-separated)")


def register(sub: argparse._SubParsersAction) -> None:
    plan = sub.add_parser("plan", help="print the PyTorch build for this (or a target) machine, and why",
                          description="Resolve the newest PyTorch build that runs on the machine and explain the "
                                      "choice. Exit code 0 when a build is chosen (warnings too, unless --strict), "
                                      "4 when no build fits.")
    add_request_options(plan)
    plan.add_argument("--format", default="text", metavar="FORMAT", help=f"output format: {_format_names()}")
    plan.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
    plan.add_argument("--indent", type=_indent, metavar="N",
                      help="with --format json: indent by N spaces (default: 2 for one target; one line for several "
                           "targets, whose answer can be large)")
    plan.add_argument("--strict", action="store_true", help="exit 1 when the plan has warnings")
    plan.add_argument("--hashes", action="store_true",
                      help="with --format requirements: add --hash=sha256: options read from the index")
    plan.add_argument("--torch-source", metavar="SOURCE",
                      help="with --format conda or pixi: take torch from conda-forge or pytorch-index (default: "
                           "the one whose build serves the machine best; the file says which and why)")
    plan.add_argument("--merge", metavar="FILE",
                      help="merge the build's entries into FILE, edited in place with a TOML editor (its comments "
                           "and formatting kept; only the torch build's entries change): a pyproject.toml, or with "
                           "--format pixi (or a file named pixi.toml) a pixi manifest")
    plan.add_argument("--verify", action="store_true",
                      help="check the whole plan with the installer's own resolver against your indexes, as install "
                           "does before it runs anything (pip install --dry-run --report, uv pip compile): where it "
                           "fails, the next candidate build, or the conflict in one line (exit 4)")
    plan.add_argument("--installer", choices=("pip", "uv"),
                      help="with --verify: whose resolver checks (default: pip of this Python for this machine, uv "
                           "when this Python has no pip; uv for a --target, with its Python and platform)")
    targets.add_target_options(plan)
    targets.add_sysroot_option(plan)
    plan.add_argument("--for-container", action=argparse.BooleanOptionalAction, default=None,
                      help="resolve for a container image: never use build-host hardware; target from --target/"
                           "flags or base-image hints (default: on in a container with no GPU device)")
    plan.set_defaults(func=run)


def request_from_args(args: argparse.Namespace, prefix: str | None = None) -> Request:
    """The Request: every requirement the command line, the -r/-c files and the project name, checked (an
    InputError names the file and line), with the variant, channel and index base. ``prefix``: the environment
    whose pip configuration is read (default ``$VIRTUAL_ENV``), as its own pip reads it."""
    from ..index.urls import check_index_url, index_base_from, redact_url, transport_allowed, vendor_mirrors
    from ..project.gather import gather, request_of
    from ..resolver.variants import is_variant

    fetch = None if getattr(args, "offline", False) else _fetcher()
    configured, where = _pip_constraints(args, prefix, fetch)
    found = gather(args.packages, args.requirement, [*args.constraint, *configured], args.project, args.extra,
                   args.group, fetch=fetch)
    if configured:
        found.notes.append(f"pip's configured constraints ({where}): {', '.join(configured)} bound the choice, and "
                           "each step is given them")
    if args.variant is not None and not is_variant(args.variant):
        raise InputError(f"--variant {args.variant!r}: not a variant id like cu128, rocm6.4, xpu or cpu")
    base = index_base_from(args.index_base, allow_insecure=args.allow_insecure_index)
    request = request_of(found, args.variant, args.channel, base, getattr(args, "installer_options", ()) or ())
    for build in request.builds:  # an index the project names for the build: as --index-base would be checked
        check_index_url(build.index_url, allow_insecure=args.allow_insecure_index, what=build.text)
    for url, what in found.index_urls:  # the project's other indexes: plain http as --index-base has it
        if url.lower().startswith("http://") and not transport_allowed(url, args.allow_insecure_index):
            raise InputError(f"{what}: url {redact_url(url)!r}: plain http is refused (use https, or "
                             "--allow-insecure-index)")
    mirrors = vendor_mirrors(args.vendor_index, allow_insecure=args.allow_insecure_index)
    return request._replace(vendor_build=args.vendor_build, vendor_indexes=mirrors) \
        if args.vendor_build or mirrors else request


def _environment_python(args: argparse.Namespace, machines: list[Machine], request: Request
                        ) -> tuple[list[Machine], Request]:
    """Each machine as planned for the Python of the project's environment file (``machine.environment_python``),
    its note added for one target."""
    from ..machine import environment_python

    assert request.python is not None
    described = targets.describes_target(args)
    found = [environment_python(m, request.python, bool(args.python) or (described and "python" not in m.assumed))
             for m in machines]
    notes = tuple(note for _, note in found[:1] if note) if len(found) == 1 else ()
    return [m for m, _ in found], request._replace(notes=(*request.notes, *notes))


def _fetcher() -> Fetch:
    """Files named by URL, fetched as ``index/client.fetch_file`` fetches (https, size cap, time limits), each once
    a command."""
    fetched: dict[str, bytes] = {}

    def fetch(url: str) -> bytes:  # the client and the size bound load only when a URL is read
        from ..index.client import fetch_file
        from ..project.bounds import MAX_FILE

        if url not in fetched:
            fetched[url] = fetch_file(url, MAX_FILE)
        return fetched[url]

    return fetch


def _pip_constraints(args: argparse.Namespace, prefix: str | None, fetch: Fetch | None
                     ) -> tuple[list[str], str]:
    """The constraint files pip reads of its own accord here (``PIP_CONSTRAINT``, pip.conf's ``constraint``), for a
    plan of this machine (not of a --target profile, an image, a captured tree or another OS or architecture):
    they bound the choice as ``-c`` would. One that cannot be read is one warning (pip would refuse to install with
    it); so is one named by URL that is not fetched (--offline) or cannot be, naming it as not applied.
    torch-install's own pin is left out: an install replaces it."""
    if not _plans_this_machine(args):
        return [], ""
    from ..environment.pip_config import configured_constraints
    from ..project.requirements_file import local_path

    files, where = configured_constraints(os.environ, prefix)
    files = [local_path(f) for f in files]
    if files:
        from ..environment.pin import CONSTRAINTS_FILE

        files = [f for f in files if os.path.basename(f) != CONSTRAINTS_FILE]
    readable = [f for f in files if os.path.isfile(f) or _fetched(f, where, fetch)]
    for missing in (f for f in files if f not in readable and not _is_url(f)):
        common.warn(f"pip's configured constraint file {missing} ({where}) cannot be read: not used (pip refuses to "
                    "install while it is missing)")
    return readable, where


def _is_url(text: str) -> bool:
    import re

    from ..project.requirement_name import URL

    return bool(re.match(URL, text))


def _fetched(url: str, where: str, fetch: Fetch | None) -> bool:
    """Whether the constraint file pip would fetch from ``url`` is read here; a warning naming it when not."""
    if not _is_url(url):
        return False
    from ..errors import EnvironmentFailure

    if fetch is None:
        common.warn(f"pip's configured constraint file {url} ({where}) is not fetched with --offline: not applied "
                    "to the plan (pip fetches it when it installs)")
        return False
    try:
        fetch(url)
    except (InputError, EnvironmentFailure) as exc:
        common.warn(f"pip's configured constraint file {url} ({where}) cannot be read ({exc}): not applied to the "
                    "plan")
        return False
    return True


def _plans_this_machine(args: argparse.Namespace) -> bool:
    """Whether the plan is for this machine's own Python environments: no --target, --for-container or --sysroot,
    and an --os or --arch given only as this machine's."""
    if getattr(args, "target", None) or getattr(args, "for_container", None) or getattr(args, "sysroot", None):
        return False
    if not (getattr(args, "os", None) or getattr(args, "arch", None)):
        return True
    here, asked = targets.platform_here(args), targets.target_flag_values(args)
    return all(asked.get(name) in (None, getattr(here, name)) for name in ("os", "arch"))


def _indent(text: str) -> int:
    """``--indent N``: a number of spaces, 0 to 16."""
    if not text.isdigit() or int(text) > 16:
        raise argparse.ArgumentTypeError(f"expected a number of spaces from 0 to 16, not {text!r}")
    return int(text)


def _format_names() -> str:
    from ..render import FORMATS

    return ", ".join(f"{name} (default)" if name == "text" else name for name in FORMATS)


def resolve_plan(machine: Machine, request: Request, matrix: Matrix) -> Plan:
    from ..resolver.choose import resolve

    return resolve(machine, request, matrix)


def run(args: argparse.Namespace) -> int:
    from ..render import FORMATS, render

    if args.format not in FORMATS:
        raise InputError(f"--format {args.format}: not one of {', '.join(FORMATS)}")
    if args.hashes and args.format != "requirements":
        raise InputError("--hashes goes with --format requirements")
    if getattr(args, "indent", None) is not None and args.format != "json":
        raise InputError("--indent goes with --format json")
    if args.merge and args.format == "text" and os.path.basename(args.merge) == "pixi.toml":
        args.format = "pixi"  # a pixi manifest takes --format pixi's entries
    if args.merge and args.format not in ("text", "pyproject", "pixi"):
        raise InputError(f"--merge writes pyproject or pixi entries; it does not go with --format {args.format}")
    if args.torch_source is not None and args.format not in CONDA_FORMATS:
        raise InputError(f"--torch-source goes with --format conda or pixi, not {args.format}")
    request = request_from_args(args)
    targets.target_flag_values(args)  # malformed flags are errors whichever way the target is built
    machines = targets.machines(args, request.variant, container=True)
    if request.python is not None:  # the Python conda or pixi makes the environment with
        machines, request = _environment_python(args, machines, request)
    if len(machines) > 1 and args.format == "dockerfile":
        machines = _image_targets(machines)
    if args.verify and (args.format in CONDA_FORMATS or len(machines) > 1):
        raise InputError("--verify checks one target's plan with pip or uv; it does not go with several targets or "
                         f"--format {args.format}" if len(machines) <= 1 else "--verify checks one target's plan")
    if args.format in CONDA_FORMATS:
        return _run_conda(args, machines, request)
    if len(machines) > 1:
        return _run_fleet(args, machines, request)
    machine = machines[0]
    matrix = common.matrix_for(args, machine, request)
    plan = resolve_plan(machine, request, matrix)
    if args.verify:
        plan = _verified(args, plan, machine, matrix)
    if matrix.provenance is not None:  # learnt from a live index: say what its choice rests on
        from ..index.merge import with_index_notes

        plan = with_index_notes(plan, matrix)
    if args.merge:
        for line in _warning_lines(plan):
            common.warn(line)
        _write_pyproject(args, [plan], [matrix])
    elif args.hashes:
        from ..render.project import render_requirements

        common.write(render_requirements(plan, _hashes(args, plan)))
    elif args.format == "text":  # the summary on stdout; warnings on stderr, where a script or a RUN step shows them
        from ..render.plan import render_text, warning_lines

        common.write(render_text(plan, with_warnings=False, every_rejection=args.verbose))
        for line in warning_lines(plan):
            common.warn(line)
    elif getattr(args, "indent", None) is not None:  # --format json, indented as asked
        from ..render.json_text import indented
        from ..render.plan import plan_document

        common.write(indented(plan_document(plan), args.indent))
    else:
        common.write(render(plan, args.format))
    return exit_code(plan.choice is not None, bool(plan.warnings), args.strict)


CONDA_FORMATS = ("conda", "pixi")


def _verified(args: argparse.Namespace, plan: Plan, machine: Machine, matrix: Matrix) -> Plan:
    """``--verify``: the plan the installer's own resolver can install (``cli/verify.py``), for this machine's
    Python with pip, or for the target's Python and platform with uv."""
    import importlib.util
    import shutil
    import sys
    import tempfile

    from ..environment import verify
    from ..wheel_tags import target_key
    from .verify import verified_plan

    here = target_key(machine).startswith("here:")  # this Python and platform
    installer = args.installer or ("pip" if here and importlib.util.find_spec("pip") else "uv")
    uv = shutil.which("uv") or "uv"
    if installer == "pip" and not here:
        common.warn(f"the plan was not checked: pip checks for this Python ({sys.executable}), and the plan is for "
                    f"{machine.platform} with Python {machine.python}: --installer uv checks for the target")
        return plan
    target = verify.uv_target(machine) if installer == "uv" else []
    with tempfile.TemporaryDirectory(prefix="torch-install-") as scratch:
        return verified_plan(plan, machine, matrix, installer, lambda p: verify.check(
            p, sys.executable, installer, scratch, uv=uv, target=target, isolated=True))


def _run_conda(args: argparse.Namespace, machines: list[Machine], request: Request) -> int:
    """--format conda / pixi, for one target or several: each target's plan, and the file that takes torch from
    conda-forge or PyTorch's index for each (render/conda.py); warnings on stderr, prefixed by the platform when
    there are several targets."""
    from ..render.conda import render_conda_platforms, render_pixi_platforms, targets

    plans = [resolve_plan(m, request, common.matrix_for(args, m, request)) for m in machines]
    found, lines = targets(plans, args.torch_source)
    for target in found:  # a build from PyTorch's index: the plan's own warnings
        if target.source == "pytorch-index":
            for line in _warning_lines(target.plan):
                common.warn(f"{target.plan.machine.platform}: {line}" if len(plans) > 1 else line)
    for line in lines:
        common.warn(line)
    if args.merge:
        from ..render.pixi_merge import merge_pixi

        for line in merge_pixi(args.merge, plans, args.torch_source) or [
                "nothing to change: it holds the build's entries already"]:
            common.say(f"torch-install: {args.merge}: {line}")
    else:
        render = render_pixi_platforms if args.format == "pixi" else render_conda_platforms
        common.write(render(plans, args.torch_source))
    if not found:
        return EXIT_NO_BUILD
    return exit_code(True, bool(lines) or any(t.plan.warnings for t in found if t.source == "pytorch-index"),
                     args.strict)


def _image_targets(machines: list[Machine]) -> list[Machine]:
    """The targets one image serves: the Linux ones (a warning for each left out; none is an input error)."""
    from ..render.container import image_platform

    linux = [m for m in machines if image_platform(m)]
    if not linux:
        raise InputError("--format dockerfile: no target is a Linux machine, and a Dockerfile's RUN lines run "
                         "in a Linux image")
    for i, machine in enumerate(machines):
        if machine not in linux:
            common.warn(f"target {i + 1} ({machine.os} {machine.arch or ''}): left out of the image, whose RUN "
                        "lines run on Linux".replace(" )", ")"))
    return linux


def exit_code(chosen: bool, warnings: bool, strict: bool) -> int:
    """0 for a choice (with warnings too, unless ``strict``: then 1), 4 when no build fits."""
    if not chosen:
        return EXIT_NO_BUILD
    return EXIT_WARNINGS if strict and warnings else EXIT_OK


def _run_fleet(args: argparse.Namespace, machines: list[Machine], request: Request) -> int:
    """Several --target profiles, every format answering every target (torch_install.fleet): text and JSON each
    target's plan and the build they share; pip, uv, url and variant-env a block each; a Dockerfile the shared
    build; requirements, constraints and pyproject (and --merge) each target under its platform marker."""
    from functools import partial

    from .. import fleet

    resolves = fleet.SharedResolves()  # the targets of one profile share its matrix and plans
    matrices = [resolves.matrix(m, request, partial(common.matrix_for, args, m, request)) for m in machines]
    own = [resolves(m, request, matrix) for m, matrix in zip(machines, matrices, strict=True)]
    result = fleet.resolve_fleet(machines, request, matrices[0], resolves, own)
    if args.format in ("pyproject", "requirements", "constraints") or args.merge:
        plans, lines = fleet.per_platform(result, request, matrices[0], resolves)
        for plan in plans:
            for line in _warning_lines(plan):
                common.warn(f"{plan.machine.platform}: {line}")
        for line in lines:
            common.warn(line)
        if args.format == "pyproject" or args.merge:
            _write_pyproject(args, plans, matrices)
        else:
            from ..render.project import render_platforms

            hashes = [_hashes(args, plan) for plan in plans] if args.hashes else []
            common.write(render_platforms(plans, args.format, hashes))
        if any(p.choice is None for p in plans):
            return EXIT_NO_BUILD
        return exit_code(True, any(p.warnings for p in plans) or bool(lines), args.strict)
    from ..render.fleet import render_fleet

    common.write(render_fleet(result, args.format, getattr(args, "indent", None)))
    if args.format == "text":
        for i, plan in enumerate(result.own):
            for line in _warning_lines(plan):
                common.warn(f"target {i + 1}: {line}")
    return int(fleet.exit_code(result, getattr(args, "strict", False), shared=args.format == "dockerfile"))


def _warning_lines(plan: Plan) -> list[str]:
    from ..render.plan import warning_lines

    return warning_lines(plan)


def _hashes(args: argparse.Namespace, plan: Plan) -> dict[str, list[str]]:
    from ..index.hashes import plan_hashes

    return plan_hashes(plan, plan.machine, offline=args.offline, allow_insecure=args.allow_insecure_index)


def _write_pyproject(args: argparse.Namespace, plans: list[Plan], matrices: list[Matrix]) -> None:
    """The pyproject entries of ``plans`` (and the requires-python floor their releases need), printed, or with
    --merge merged into the file."""
    from ..render.merge import merge_pyproject
    from ..render.project import render_pyproject_platforms, requires_python_floor

    floor = requires_python_floor(plans, matrices)
    if args.merge:
        for line in merge_pyproject(args.merge, plans, floor, args.project, args.extra, args.group) or [
                "nothing to change: it holds the build's entries already"]:
            common.say(f"torch-install: {args.merge}: {line}")
        return
    common.write(render_pyproject_platforms(plans, floor))
