"""Inspect a Python environment's PyTorch install without importing torch.

Reads what the interpreter would import (its import path, from ``interpreter``), each torch-family
distribution's dist-info (``METADATA``, ``WHEEL``, ``INSTALLER``, ``RECORD``) and ``<package>/version.py``
parsed with ``ast``; nothing from the environment's packages is imported or executed.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from types import MappingProxyType

from .. import vendors
from ..environment.conda_meta import CondaPrefix, read_prefix
from ..environment.dists import Dist, egg_link, metadata_directory, read_dist, read_file
from ..environment.interpreter import Interpreter
from ..records import Record
from ..resolver.request import PACKAGES, canonical_name

# Distributions the doctor reads (normalized names): the torch family, the installers, and the runtimes each
# vendor's builds bring (its registry row's ``runtime_prefixes``, a vendor index's ``runtime``).
OTHER_DISTRIBUTIONS = ("pytorch-triton", "pip", "uv")
VERSION_PY_FIELDS = ("__version__", "debug", "git_version", "rocm")  # and each vendor's version_field


def _wanted(name: str) -> bool:
    from ..resolver.companion_facts import table_names
    from ..resolver.vendor_builds import load_vendor_builds

    prefixes = tuple(p for row in vendors.VENDORS for p in row.runtime_prefixes)
    vendor = {r for index in load_vendor_builds().indexes.values() for r in index.runtime}  # names, "prefix-"
    return (name in PACKAGES or name in OTHER_DISTRIBUTIONS or name in table_names() or name.startswith(prefixes)
            or name in vendor or name.startswith(tuple(r for r in vendor if r.endswith("-"))))


def _version_py_fields() -> tuple[str, ...]:
    return (*VERSION_PY_FIELDS, *(row.version_field for row in vendors.VENDORS if row.version_field))


class Build(Record):
    """A package's ``version.py`` (torch, torchvision, torchaudio), read with ``ast``."""

    package: str
    path: str
    fields: Mapping[str, str | bool | None] = MappingProxyType({})
    problem: str | None = None  # "syntax error at line 3", "unreadable"

    @property
    def version(self) -> str | None:
        value = self.fields.get("__version__")
        return value if isinstance(value, str) else None

    def text(self, name: str) -> str | None:
        value = self.fields.get(name)
        return value if isinstance(value, str) and value else None

    @property
    def local_label(self) -> str | None:
        return (self.version or "").partition("+")[2] or None


class Installed(Record):
    """What an environment holds, as seen without importing torch."""

    interpreter: Interpreter
    dists: tuple[Dist, ...] = ()  # torch family, triton, cuda/nvidia/intel runtimes, pip, uv: path order
    builds: Mapping[str, Build] = MappingProxyType({})  # package -> version.py `import` would find
    packages: Mapping[str, str] = MappingProxyType({})  # package -> directory `import` would find
    leftovers: tuple[str, ...] = ()  # "~orch" directories from interrupted uninstalls
    conda: CondaPrefix | None = None  # what conda (mamba, pixi) installed, when the prefix is a conda environment

    def all_named(self, name: str) -> tuple[Dist, ...]:
        return tuple(d for d in self.dists if d.name == name)

    def dist(self, name: str) -> Dist | None:
        """The first distribution of that name on the path (the one pip reports), or None."""
        return next((d for d in self.dists if d.name == name), None)


# --- version.py ------------------------------------------------------------------------------------

MAX_VERSION_PY = 64 * 1024  # torch's is under 1 KiB


def read_version_py(package: str, path: str) -> Build:
    """Literal top-level assignments of ``version.py`` (``cuda: Optional[str] = '12.8'`` included)."""
    text, why = read_file(path)
    if text is None:
        return Build(package, path, problem=why)
    if len(text) > MAX_VERSION_PY:
        return Build(package, path, problem=f"is {len(text)} characters, over the {MAX_VERSION_PY} a version.py has")
    import warnings

    try:
        with warnings.catch_warnings():  # a damaged file's "invalid decimal literal" is its problem, said below
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        return Build(package, path, problem=f"not valid Python (syntax error{f' at line {line}' if line else ''})")
    except (RecursionError, MemoryError):  # an expression nested past the parser's limits
        return Build(package, path, problem="nested too deeply to be a version.py")
    values: dict[str, str | bool | None] = {}
    fields = _version_py_fields()
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if (isinstance(target, ast.Name) and target.id in fields and isinstance(value, ast.Constant)
                and (value.value is None or isinstance(value.value, (str, bool)))):
            values[target.id] = value.value
    if not isinstance(values.get("__version__"), str):
        return Build(package, path, values, problem="has no __version__ string")
    return Build(package, path, values)


def _scan_location(location: str) -> tuple[list[Dist], list[str], list[str]]:
    """Dists of interest, top-level package dirs and '~' leftovers in one sys.path entry."""
    try:
        names = sorted(os.listdir(location))
    except OSError:
        return [], [], []
    dists: list[Dist] = []
    leftovers: list[str] = []
    for entry in names:
        if entry.startswith("~"):
            if canonical_name(entry[1:]).startswith(("orch", "rchvision", "rchaudio")):
                leftovers.append(os.path.join(location, entry))
            continue
        if entry.endswith(".egg-link"):
            name = canonical_name(entry[: -len(".egg-link")])
            if _wanted(name):
                dists.append(egg_link(os.path.join(location, entry), location, name))
            continue
        found = metadata_directory(entry)
        if not found:
            continue
        name = canonical_name(found[0])
        if _wanted(name):
            dists.append(read_dist(os.path.join(location, entry), location, name, found[1], found[2]))
    return dists, names, leftovers


def inspect_environment(interpreter: Interpreter) -> Installed:
    """Walk the interpreter's import path: dists of interest, version.py of the family, leftovers."""
    dists: list[Dist] = []
    leftovers: list[str] = []
    packages: dict[str, str] = {}
    for location in interpreter.path:
        if not os.path.isdir(location):
            continue
        found, names, left = _scan_location(location)
        dists += found
        leftovers += left
        for package in PACKAGES:
            if package not in packages and package in names and os.path.isfile(
                    os.path.join(location, package, "__init__.py")):
                packages[package] = os.path.join(location, package)
    builds = {package: read_version_py(package, os.path.join(directory, "version.py"))
              for package, directory in packages.items()}
    conda = read_prefix(interpreter.prefix) if interpreter.prefix else None
    return Installed(interpreter=interpreter, dists=tuple(dists), builds=builds, packages=packages,
                     leftovers=tuple(leftovers), conda=conda)
