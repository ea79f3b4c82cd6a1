"""pip's configuration files, as pip reads them: where they are and what an option is set to.

Read, never run: pip itself is not imported (it may not be installed, and importing it costs time).
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Mapping
from pathlib import Path


def pip_config_files(environ: Mapping[str, str], prefix: str | None = None) -> list[Path]:
    """pip's configuration files, lowest priority first (pip's own order: site-wide, user, the environment's own,
    ``PIP_CONFIG_FILE``). ``prefix``: the environment (default ``$VIRTUAL_ENV``)."""
    dirs = [d for d in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep) if d]
    files = [*(Path(d) / "pip" / "pip.conf" for d in reversed(dirs)), Path("/etc/pip.conf")]
    home = Path(environ.get("HOME", "~")).expanduser()
    config_home = Path(environ.get("XDG_CONFIG_HOME", home / ".config"))
    files += [home / ".pip" / "pip.conf", config_home / "pip" / "pip.conf"]
    if environ.get("APPDATA"):
        files.append(Path(environ["APPDATA"]) / "pip" / "pip.ini")
    prefix = prefix or environ.get("VIRTUAL_ENV")
    if prefix:
        files.append(Path(prefix) / ("pip.ini" if os.name == "nt" else "pip.conf"))
    if environ.get("PIP_CONFIG_FILE"):
        files.append(Path(environ["PIP_CONFIG_FILE"]))
    return files


def configured(option: str, environ: Mapping[str, str], files: list[Path] | None = None) -> str | None:
    """The value pip install would take for ``option`` from its configuration files ([install] wins over
    [global], a later file over an earlier one); None when no file sets it. Unreadable files are skipped."""
    found = None
    for path in pip_config_files(environ) if files is None else files:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            if not path.is_file() or not parser.read(path, encoding="utf-8"):
                continue
        except (OSError, configparser.Error, UnicodeDecodeError):
            continue
        for section in ("global", "install"):
            if parser.has_option(section, option):
                found = parser.get(section, option).strip() or found
    return found
