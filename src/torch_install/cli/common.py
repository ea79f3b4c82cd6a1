"""Options and helpers shared by several sub-commands: output, the index options, the matrix to resolve with."""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..environment.interpreter import Interpreter
    from ..machine import Machine
    from ..resolver.matrix import Matrix
    from ..resolver.plan import Request


def write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


QUIET = False  # -q: warnings and notes are not printed


def warn(text: str) -> None:
    """One warning line on stderr (none with -q)."""
    if not QUIET:
        sys.stderr.write(f"torch-install: warning: {text}\n")


def say(line: str) -> None:
    """A line for the person at the terminal, on stderr (none with -q)."""
    if not QUIET:
        sys.stderr.write(line + "\n")


def add_index_options(parser: argparse.ArgumentParser) -> None:
    """Where the release/variant data comes from: embedded (default) or a live index."""
    parser.add_argument("--index-base", metavar="URL",
                        help="PyTorch wheel index base (mirrors); default https://download.pytorch.org/whl "
                             "or $TORCH_INSTALL_INDEX_BASE")
    parser.add_argument("--online", action="store_true",
                        help="learn releases and variants from the live index: a page read in the last hour "
                             "($TORCH_INSTALL_INDEX_TTL seconds) is used without asking the index, an older one "
                             "is checked with it; TORCH_INSTALL_INDEX_TTL=0 checks every time")
    parser.add_argument("--offline", action="store_true", help="never touch the network")
    parser.add_argument("--allow-insecure-index", action="store_true",
                        help="allow a plain-http index base that is not loopback")


def matrix_for(args: argparse.Namespace, machine: Machine, request: Request | None = None,
               prefix: str | None = None) -> Matrix:
    """The compatibility matrix to resolve with: embedded, extended from the live index with --online
    (with --offline too: cached index data only); with the table of packages built against torch when the
    request names other packages. A failed index read falls back with one warning line. ``prefix``: the
    environment whose pip configuration names the default index (default ``$VIRTUAL_ENV``)."""
    from ..resolver.matrix import load_matrix

    matrix = load_matrix()
    if request is not None and request.requirements:
        from ..resolver.companion_facts import load_packages, table_names

        if not table_names().isdisjoint(wanted.name for wanted in request.requirements):  # else never asked
            matrix = matrix._replace(packages=load_packages())
    if not getattr(args, "online", False):
        return matrix
    from ..index.learn import online_matrix
    from ..index.urls import index_base_from

    insecure = bool(getattr(args, "allow_insecure_index", False))
    base = index_base_from(getattr(args, "index_base", None), allow_insecure=insecure)
    offline = bool(getattr(args, "offline", False))
    result = online_matrix(matrix, machine, base, channel=getattr(args, "channel", None) or "stable",
                           offline=offline, allow_insecure=insecure, prefix=prefix)
    if result.warning:
        warn(result.warning)
    matrix = with_vendor_builds(result.matrix, machine, request, offline, insecure) if request else result.matrix
    if request is not None and request.requirements:
        return with_learnt_packages(matrix, machine, request, offline, insecure, prefix)
    return matrix


def with_vendor_builds(matrix: Matrix, machine: Machine, request: Request, offline: bool, insecure: bool) -> Matrix:
    """``matrix`` with what the vendor indexes for this machine's GPUs list now (``index/vendor.py``); an index
    that cannot be read is one warning."""
    from ..index.vendor import indexes_for, learn_vendor_builds
    from ..resolver.vendor_builds import load_vendor_builds

    table = matrix.vendor_builds or load_vendor_builds()
    if not indexes_for(table, machine, request.channel):  # no GPU a vendor's own index has builds for
        return matrix
    learnt, warnings = learn_vendor_builds(table, machine, request, offline=offline, allow_insecure=insecure)
    for line in warnings:
        warn(line)
    return matrix._replace(vendor_builds=learnt)


def with_learnt_packages(matrix: Matrix, machine: Machine, request: Request, offline: bool, insecure: bool,
                         prefix: str | None = None) -> Matrix:
    """``matrix`` with what the requested packages the table does not know declare of torch, and the table's
    packages' releases it does not hold, read from the user's own index (``index/requirements.py``); an index
    that cannot be read is one warning."""
    from ..errors import EnvironmentFailure, InputError
    from ..index.default_index import default_index_url
    from ..index.requirements import learn_packages

    found = default_index_url(prefix=prefix)
    if found is None:
        return matrix
    root, where = found
    try:
        from ..index.client import make_client
        from ..index.urls import check_index_url

        client = make_client(check_index_url(root, insecure, what=where), offline, insecure)
        learnt, warnings = learn_packages(request.requirements, machine, client, matrix.packages,
                                          [r.version for r in matrix.releases])
    except (EnvironmentFailure, InputError) as exc:
        warn(f"what the other packages need of torch was not read from your index ({exc})")
        return matrix
    for line in warnings:
        warn(line)
    return matrix._replace(packages={**matrix.packages, **learnt}) if learnt else matrix


def target_interpreter(python: str | None) -> Interpreter:
    """The environment install and doctor act on (interpreter.target_environment): --python, $VIRTUAL_ENV,
    $CONDA_PREFIX, ./.venv, else this interpreter unless it is a tool's isolated environment."""
    import os

    from ..environment.interpreter import query_interpreter, target_environment, this_interpreter

    path, _ = target_environment(python, os.environ, os.getcwd(), sys.prefix)
    return query_interpreter(path) if path is not None else this_interpreter()


def add_lock_timeout_option(parser: argparse.ArgumentParser, when: str = "") -> None:
    """``--lock-timeout SECONDS``: how long to wait for the environment's lock (``when``: "with --fix: ")."""
    parser.add_argument("--lock-timeout", metavar="SECONDS", type=seconds, default=None,
                        help=f"{when}how long to wait for another torch-install installing into the same environment "
                             "(default 600; 0: refuse at once)")


def seconds(value: str) -> float:
    """An argparse type: a number of seconds from 0 to a day."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 86400:  # nan fails this too
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds from 0 to 86400")
    return seconds
