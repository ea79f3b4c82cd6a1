"""The uv workspace a project is in, as uv finds it: the nearest ``pyproject.toml`` at or above the project's
directory with a ``[tool.uv.workspace]`` whose ``members`` globs (less its ``exclude`` ones) take the project's
directory, or the project alone where none does. Its members are the packages a ``{ workspace = true }`` source
may name."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from ..resolver.request import canonical_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Load = Callable[[str], dict[str, Any]]  # a pyproject.toml read as plain data (pyproject.load_toml)
    Workspace = tuple[str, set[str]]  # what holds the members, the canonical names of the members


def workspace_members(path: str, document: dict[str, Any], load: Load) -> Workspace | None:
    """(what holds the members, the canonical names of the members) of the workspace the pyproject at ``path``
    is in (``load`` reads the others); None where a file uv would read cannot be read here (torch-install then
    takes the source as it is)."""
    project_dir = Path(os.path.abspath(path)).parent
    try:
        for root in (project_dir, *project_dir.parents):
            candidate = root / "pyproject.toml"
            if root != project_dir and not candidate.is_file():
                continue
            found = document if root == project_dir else load(str(candidate))
            tool = found.get("tool")
            uv = tool.get("uv") if isinstance(tool, dict) else None
            workspace = uv.get("workspace") if isinstance(uv, dict) else None
            if not isinstance(workspace, dict):
                continue
            directories = _matched(root, workspace.get("members")) - _matched(root, workspace.get("exclude"))
            if root != project_dir and project_dir not in directories:
                break  # a workspace that does not take the project: it stands alone
            names = {_name(load(str(d / "pyproject.toml"))) for d in directories if d != root}
            return str(candidate), {n for n in {*names, _name(found)} if n}
    except (InputError, OSError, ValueError):
        return None
    own = _name(document)
    return path, {own} if own else set()


def _matched(root: Path, patterns: Any) -> set[Path]:
    """The directories with a ``pyproject.toml`` that globs relative to ``root`` match."""
    import glob

    if not isinstance(patterns, list):
        return set()
    out: set[Path] = set()
    for pattern in patterns:
        if isinstance(pattern, str):
            out |= {Path(os.path.abspath(root / m)) for m in glob.glob(pattern, root_dir=root, recursive=True)
                    if (root / m / "pyproject.toml").is_file()}
    return out


def _name(document: dict[str, Any]) -> str | None:
    project = document.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    return canonical_name(name) if isinstance(name, str) else None
