"""A PEP 751 lock (``pylock.toml``, ``pylock.<name>.toml``: what ``uv pip compile -o pylock.toml``, ``uv export``
and ``pip lock`` write), given with ``-r``: each ``[[packages]]`` entry a pinned requirement under its ``marker``,
with the sha256 hashes of its wheels and sdist (so it installs as a hashed lock does), a ``vcs``, ``archive`` or
``directory`` entry the direct reference it is. The torch family's version names its build by its local label
(``2.7.1+cu126``), else by the PyTorch index its ``index`` is; the lock's own torch build's packages go with
the build, as a compiled lock's do. The file is never handed to an installer (older pip does not read it)."""

from __future__ import annotations

import os
import re

from ..errors import InputError
from ..resolver.plan import BuildSource, Wanted
from ..resolver.request import PACKAGES, canonical_name
from .bounds import ReadBudget
from .requirement_name import requirement_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


# The CUDA runtime wheels and triton a torch build requires (its METADATA's Requires-Dist): a lock without
# annotations has them only for torch (nvidia-ml-py, cuda-python and the like are other packages' and stay)
_TORCH_RUNTIME = (r"nvidia-[a-z-]+-cu1[0-9]|nvidia-[a-z-]+-cu13|nvidia-(nccl|nvtx|nvjitlink|cusparselt|cufile|nvshmem)"
                  r"-[a-z0-9-]+|triton|pytorch-triton(-[a-z]+)?")


def is_pylock(path: str) -> bool:
    """Whether ``path`` is named as PEP 751 names a lock file."""
    return re.fullmatch(r"pylock(\.[^.]+)?\.toml", os.path.basename(path)) is not None


def read_pylock(path: str, budget: ReadBudget) -> tuple[list[Wanted], list[BuildSource], list[str]]:
    """(requirements, the family's builds its indexes name, notes) of the lock at ``path``."""
    from .pyproject import load_toml
    from .uv_sources import variant_index

    document = load_toml(path, budget)
    version = document.get("lock-version")
    if not isinstance(version, str) or not version.startswith("1."):
        raise InputError(f"{path}: lock-version {version!r}: not a PEP 751 lock of version 1")
    packages = document.get("packages", [])
    if not isinstance(packages, list):
        raise InputError(f"{path}: packages is not an array of [[packages]] tables")
    wanted: list[Wanted] = []
    builds: list[BuildSource] = []
    has_torch = any(isinstance(e, dict) and canonical_name(str(e.get("name", ""))) == "torch" for e in packages)
    for i, entry in enumerate(packages):
        origin = f"{path}: packages[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise InputError(f"{origin} is not a table with a name")
        name = canonical_name(entry["name"])
        marker = entry.get("marker")
        if marker is not None and not isinstance(marker, str):
            raise InputError(f"{origin}.marker is not a string")
        where = f" ; {marker}" if marker else ""
        text = _requirement(entry, origin) + where
        hashes = _hashes(entry, origin)
        via = ("torch",) if has_torch and re.fullmatch(_TORCH_RUNTIME, name) else ()  # what torch's build needs
        wanted.append(Wanted(text=text, name=requirement_name(text, origin), origin=origin, hashes=hashes,
                             editable=bool(isinstance(entry.get("directory"), dict)
                                           and entry["directory"].get("editable")), via=via, file=path))
        index = entry.get("index")
        if name in PACKAGES and isinstance(index, str) and "+" not in str(entry.get("version", "")):
            found = variant_index(index)
            if found is not None:
                builds.append(BuildSource(name, found[2], index, f"{path} [[packages]] {name} from {index}",
                                          marker or None))
    notes = [f"{path}: a PEP 751 lock ({len(wanted)} packages): each installs as locked, with its hashes; the file "
             "itself is not handed to the installer"]
    return wanted, builds, notes


def _requirement(entry: dict[str, Any], origin: str) -> str:
    """The entry as a PEP 508 requirement: pinned to its version, or the location it names."""
    name = entry["name"]
    vcs, archive, directory = entry.get("vcs"), entry.get("archive"), entry.get("directory")
    if isinstance(vcs, dict) and isinstance(vcs.get("url"), str):
        commit = vcs.get("commit-id") or vcs.get("requested-revision")
        sub = f"#subdirectory={vcs['subdirectory']}" if isinstance(vcs.get("subdirectory"), str) else ""
        return f"{name} @ {vcs.get('type', 'git')}+{vcs['url']}{f'@{commit}' if commit else ''}{sub}"
    if isinstance(archive, dict) and isinstance(archive.get("url"), str):
        return f"{name} @ {archive['url']}"
    if isinstance(directory, dict) and isinstance(directory.get("path"), str):
        return directory["path"]
    version = entry.get("version")
    if not isinstance(version, str):
        raise InputError(f"{origin}: {name} has neither a version nor a vcs, archive or directory table")
    return f"{name}=={version}"


def _hashes(entry: dict[str, Any], origin: str) -> tuple[str, ...]:
    """The sha256 hashes of the entry's wheels, sdist and archive, as ``--hash`` takes them."""
    files = [*(entry.get("wheels") or []), *([entry["sdist"]] if isinstance(entry.get("sdist"), dict) else []),
             *([entry["archive"]] if isinstance(entry.get("archive"), dict) else [])]
    out = []
    for file in files:
        hashes = file.get("hashes") if isinstance(file, dict) else None
        if not isinstance(hashes, dict):
            raise InputError(f"{origin}: a file without a hashes table")
        if isinstance(hashes.get("sha256"), str):
            out.append(f"sha256:{hashes['sha256']}")
    return tuple(dict.fromkeys(out))
