"""A project's requirements from its ``pyproject.toml``: PEP 621 ``[project] dependencies``, the
``optional-dependencies`` chosen with ``--extra``, and PEP 735 ``[dependency-groups]`` chosen with ``--group``
(``{include-group = "…"}`` followed). Every problem is an InputError naming the file and the table."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..errors import InputError
from ..resolver.plan import Wanted
from ..resolver.request import canonical_name
from .requirement_name import requirement_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

MAX_PYPROJECT = 4 * 1024 * 1024


def pyproject_path(directory: str) -> str:
    """``DIR/pyproject.toml`` (``directory`` may name the file itself)."""
    return directory if directory.endswith(".toml") else os.path.join(directory, "pyproject.toml")


def load_toml(path: str) -> dict[str, Any]:
    """The TOML document at ``path`` as plain data (tomllib, or tomlkit before Python 3.11)."""
    from ..probe import read_regular

    try:
        data = read_regular(path, MAX_PYPROJECT + 1)
    except OSError as exc:
        raise InputError(f"--project: {path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > MAX_PYPROJECT:
        raise InputError(f"--project: {path}: over {MAX_PYPROJECT >> 20} MiB, not a pyproject.toml")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"--project: {path}: not UTF-8 text") from None
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"--project: {path}: not valid TOML ({exc})") from None
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        document: dict[str, Any] = tomlkit.parse(text).unwrap()
    except TOMLKitError as exc:
        raise InputError(f"--project: {path}: not valid TOML ({exc})") from None
    return document


def read_pyproject(directory: str, extras: Sequence[str] = (), groups: Sequence[str] = ()) -> list[Wanted]:
    """The requirements of the project in ``directory``: its dependencies, the chosen extras' and groups'."""
    path = pyproject_path(directory)
    document = load_toml(path)
    project = document.get("project")
    if not isinstance(project, dict):
        raise InputError(f"--project: {path} has no [project] table (PEP 621)")
    wanted = _strings(path, "project.dependencies", project.get("dependencies", []))
    optional = project.get("optional-dependencies", {})
    if not isinstance(optional, dict):
        raise InputError(f"--project: {path}: project.optional-dependencies is not a table")
    by_name = {canonical_name(k): k for k in optional}
    for extra in extras:
        key = by_name.get(canonical_name(extra))
        if key is None:
            raise InputError(f"--extra {extra}: {path} defines no such extra (has: "
                             f"{', '.join(sorted(optional)) or 'none'})")
        wanted += _strings(path, f"project.optional-dependencies.{key}", optional[key])
    table = document.get("dependency-groups", {})
    if not isinstance(table, dict):
        raise InputError(f"--project: {path}: dependency-groups is not a table")
    for group in groups:
        wanted += _group(path, table, group, ())
    return wanted


def _strings(path: str, where: str, value: Any) -> list[Wanted]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"--project: {path}: {where} is not a list of requirement strings")
    origin = f"{path}: {where}"
    return [Wanted(text=v.strip(), name=requirement_name(v.strip(), f"{origin}[{i}]"), origin=f"{origin}[{i}]")
            for i, v in enumerate(value)]


def _group(path: str, table: dict[str, Any], group: str, chain: tuple[str, ...]) -> list[Wanted]:
    names = {canonical_name(k): k for k in table}
    key = names.get(canonical_name(group))
    if key is None:
        raise InputError(f"--group {group}: {path} defines no such dependency group (has: "
                         f"{', '.join(sorted(table)) or 'none'})")
    if key in chain:
        raise InputError(f"--project: {path}: dependency-groups include themselves ({' -> '.join([*chain, key])})")
    items = table[key]
    if not isinstance(items, list):
        raise InputError(f"--project: {path}: dependency-groups.{key} is not a list")
    wanted: list[Wanted] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            origin = f"{path}: dependency-groups.{key}[{i}]"
            wanted.append(Wanted(text=item.strip(), name=requirement_name(item.strip(), origin), origin=origin))
        elif isinstance(item, dict) and set(item) == {"include-group"} and isinstance(item["include-group"], str):
            wanted += _group(path, table, item["include-group"], (*chain, key))
        else:
            raise InputError(f"--project: {path}: dependency-groups.{key}[{i}] is neither a requirement nor "
                             "{include-group = \"…\"}")
    return wanted
