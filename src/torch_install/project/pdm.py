"""A PDM project's ``[[tool.pdm.source]]`` and ``[tool.pdm.dev-dependencies]``, read as PDM reads them. A source
searches beside the default index (as ``--extra-index-url`` does) unless it is named ``pypi`` (it replaces the
default index) or its ``include_packages`` names a package (that package is searched there only, globs allowed):
such a source laid out as the PyTorch index's names the build of the family packages it serves, as a uv source
does. The others are notes. ``dev-dependencies`` are groups, chosen with ``--group`` (as
``[dependency-groups]``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InputError
from ..resolver.plan import BuildSource, Wanted
from ..resolver.request import PACKAGES, canonical_name
from .requirement_name import requirement_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def pdm_builds(path: str, document: dict[str, Any], notes: list[str]) -> list[BuildSource]:
    """The family's builds the project's PDM sources name."""
    from fnmatch import fnmatchcase

    from .uv_sources import variant_index

    listed = _pdm(document).get("source", [])
    if not isinstance(listed, list):
        raise InputError(f"--project: {path}: tool.pdm.source is not an array of [[tool.pdm.source]] tables")
    builds: list[BuildSource] = []
    for i, source in enumerate(listed):
        where = f"tool.pdm.source[{i}]"
        if not isinstance(source, dict) or not isinstance(source.get("url"), str):
            raise InputError(f"--project: {path}: {where} is not a table with a url")
        include = source.get("include_packages", [])
        if not isinstance(include, list) or not all(isinstance(p, str) for p in include):
            raise InputError(f"--project: {path}: {where}.include_packages is not a list of package names")
        found = variant_index(source["url"]) if source.get("type", "index") == "index" else None
        name = str(source.get("name", ""))
        served = [p for p in PACKAGES if str(name).lower() == "pypi"
                  or any(fnmatchcase(p, canonical_name(pattern)) or fnmatchcase(p, pattern) for pattern in include)]
        if found is None or not served:
            if found is not None:
                notes.append(f"{path}: {where} ({name}): searched beside the default index, as --extra-index-url: "
                             "the plan chooses the build for the machine (include_packages = [\"torch\"] takes "
                             "torch from it only)")
            continue
        why = "it replaces the default index" if name.lower() == "pypi" else "its include_packages"
        builds += [BuildSource(p, found[2], source["url"], f"[[tool.pdm.source]] {name} ({why})") for p in served]
    return builds


def pdm_groups(path: str, document: dict[str, Any], groups: Sequence[str]) -> tuple[list[Wanted], list[str]]:
    """The requirements of the chosen groups PDM's ``dev-dependencies`` defines, and the groups it does not."""
    table = _pdm(document).get("dev-dependencies", {})
    if not isinstance(table, dict):
        raise InputError(f"--project: {path}: tool.pdm.dev-dependencies is not a table")
    names = {canonical_name(k): k for k in table}
    wanted: list[Wanted] = []
    left = []
    for group in groups:
        key = names.get(canonical_name(group))
        if key is None:
            left.append(group)
            continue
        items = table[key]
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise InputError(f"--project: {path}: tool.pdm.dev-dependencies.{key} is not a list of requirement "
                             "strings")
        for i, item in enumerate(items):
            origin = f"{path}: tool.pdm.dev-dependencies.{key}[{i}]"
            text = item.strip()
            editable = text.startswith("-e ")
            text = text[3:].strip() if editable else text
            wanted.append(Wanted(text=text, name=requirement_name(text, origin), origin=origin, editable=editable))
    return wanted, left


def _pdm(document: dict[str, Any]) -> dict[str, Any]:
    tool = document.get("tool")
    pdm = tool.get("pdm") if isinstance(tool, dict) else None
    return pdm if isinstance(pdm, dict) else {}
