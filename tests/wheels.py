"""Wheels for the tests that install with real pip and uv: built here with zipfile in the wheel format (PEP 427:
METADATA, WHEEL, a RECORD of sha256 digests and sizes), and served from a loopback PEP 503 index."""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


def record_row(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(directory: Path, name: str, version: str, extra: dict[str, bytes] | None = None, *,
                requires: Sequence[str] = (), tag: str = "py3-none-any", files: int = 0, package: str | None = None,
                version_py: str | None = None, extras: Sequence[str] = ()) -> Path:
    """``{name}-{version}-{tag}.whl`` whose package (``package``, default the name) records its own version.

    ``requires``: Requires-Dist lines; ``extras``: Provides-Extra lines; ``files``: that many padding modules (a wide
    install window); ``extra``: more members, as they are; ``version_py``: the package's ``version.py``."""
    dist = name.replace("-", "_")
    package = package or dist
    dist_info = f"{dist}-{version}.dist-info"
    members = {f"{package}/__init__.py": f"__version__ = {version!r}\n".encode(),
               **({f"{package}/version.py": version_py.encode()} if version_py is not None else {}),
               **{f"{package}/pad/m{i}.py": b"#\n" * 20 for i in range(files)},
               **(extra or {}),
               f"{dist_info}/METADATA": "".join([f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
                                                 *(f"Provides-Extra: {e}\n" for e in extras),
                                                 *(f"Requires-Dist: {r}\n" for r in requires)]).encode(),
               f"{dist_info}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: test-build\nRoot-Is-Purelib: "
                                      f"{'true' if tag.endswith('-none-any') else 'false'}\nTag: {tag}\n").encode()}
    record = "\n".join([record_row(n, d) for n, d in members.items()] + [f"{dist_info}/RECORD,,", ""])
    path = directory / f"{dist}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for member, data in members.items():
            wheel.writestr(member, data)
        wheel.writestr(f"{dist_info}/RECORD", record)
    return path


def serve_wheels(httpserver: Any, prefix: str, wheels: Iterable[Path]) -> None:
    """Serve ``{prefix}/{project}/`` pages (with ``#sha256=`` fragments) and the wheel files under
    ``{prefix}/files/``; a page it does not serve is 404, as on an index."""
    httpserver.no_handler_status_code = 404
    projects: dict[str, list[Path]] = {}
    for wheel in wheels:
        projects.setdefault(re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower(), []).append(wheel)
        httpserver.expect_request(f"{prefix}/files/{wheel.name}").respond_with_data(wheel.read_bytes())
    for project, files in projects.items():
        links = "".join(f'<a href="{prefix}/files/{w.name}#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}">'
                        f"{w.name}</a>\n" for w in files)
        httpserver.expect_request(f"{prefix}/{project}/").respond_with_data(links, content_type="text/html")


def uv_env(tmp_path: Path, default_index: str) -> dict[str, str]:
    """The environment of a test's uv: none of the machine's uv or pip settings, ``default_index`` as the default
    index, a cache of the test's, this interpreter, no download, no configuration file."""
    import os
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_", "VIRTUAL_ENV"))}
    env.update(UV_DEFAULT_INDEX=default_index, UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON=sys.executable,
               UV_PYTHON_DOWNLOADS="never", UV_NO_CONFIG="1")
    return env


def installer_env(tmp_path: Path, default_index: str) -> dict[str, str]:
    """The environment of a test's torch-install run with real pip or uv: none of the machine's pip or uv settings
    or configuration files, ``default_index`` as both installers' index, no uv cache, the test's own cache, and
    this interpreter's directory first on PATH (its uv)."""
    import os
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "VIRTUAL_ENV"))}
    return {**env, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
            "XDG_CONFIG_DIRS": str(tmp_path / "xdg"), "PIP_INDEX_URL": default_index,
            "UV_DEFAULT_INDEX": default_index, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "UV_NO_CACHE": "1",
            "TORCH_INSTALL_DEFAULT_INDEX": "none", "TORCH_INSTALL_CACHE_DIR": str(tmp_path / "cache"),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])}


def installed_versions(python: Path) -> dict[str, str]:
    """name -> version of every distribution the interpreter ``python`` sees."""
    import subprocess

    code = "import importlib.metadata as m; print('\\n'.join(f'{d.name}=={d.version}' for d in m.distributions()))"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout
    return dict(line.split("==", 1) for line in out.split())
