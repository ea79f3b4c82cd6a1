"""The default index: the one the user's installer would use for a plain ``pip install torch``.

In order: ``PIP_INDEX_URL``, pip's configuration files (``PIP_CONFIG_FILE``, the site, user and virtual
environment ``pip.conf``/``pip.ini``, ``index-url`` under ``[install]`` or ``[global]``), uv's ``UV_DEFAULT_INDEX``
and ``UV_INDEX_URL``; else the public index pip itself defaults to (read from pip, so this module names no
registry). The URL is a PEP 503/691 simple-API root ending in ``/``.
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Mapping
from pathlib import Path


def _pip_config_files(environ: Mapping[str, str]) -> list[Path]:
    """pip's configuration files, lowest priority first (pip's own order: site-wide, user, virtualenv, env)."""
    files = [Path("/etc/xdg/pip/pip.conf"), Path("/etc/pip.conf")]
    home = Path(environ.get("HOME", "~")).expanduser()
    config_home = Path(environ.get("XDG_CONFIG_HOME", home / ".config"))
    files += [home / ".pip" / "pip.conf", config_home / "pip" / "pip.conf"]
    if environ.get("APPDATA"):
        files.append(Path(environ["APPDATA"]) / "pip" / "pip.ini")
    if environ.get("VIRTUAL_ENV"):
        files.append(Path(environ["VIRTUAL_ENV"]) / ("pip.ini" if os.name == "nt" else "pip.conf"))
    if environ.get("PIP_CONFIG_FILE"):
        files.append(Path(environ["PIP_CONFIG_FILE"]))
    return files


def _from_pip_config(environ: Mapping[str, str]) -> str | None:
    found = None
    for path in _pip_config_files(environ):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            if not path.is_file() or not parser.read(path, encoding="utf-8"):
                continue
        except (OSError, configparser.Error, UnicodeDecodeError):
            continue
        for section in ("global", "install"):  # [install] wins over [global] for pip install
            if parser.has_option(section, "index-url"):
                found = parser.get(section, "index-url").strip() or found
    return found


def _pips_own_default() -> str | None:
    try:
        from pip._internal.models.index import PyPI  # pip's public default, as pip itself has it
    except ImportError:
        return None
    url = getattr(PyPI, "simple_url", None)
    return url if isinstance(url, str) else None


def default_index_url(environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """(simple-API root URL ending in "/", where it was configured), or None when none is known."""
    env = os.environ if environ is None else environ
    candidates = [(env.get("PIP_INDEX_URL"), "PIP_INDEX_URL"), (_from_pip_config(env), "pip configuration"),
                  (env.get("UV_DEFAULT_INDEX"), "UV_DEFAULT_INDEX"), (env.get("UV_INDEX_URL"), "UV_INDEX_URL")]
    for url, where in candidates:
        if url and url.strip():
            return url.strip().rstrip("/") + "/", where
    own = _pips_own_default()
    return (own.rstrip("/") + "/", "pip's default") if own else None
