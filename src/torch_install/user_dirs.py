"""The user's cache directory for torch-install, by the platform's convention, worked out here rather than with a
library (importing one costs ~20 ms on every ``--online`` plan).

``%LOCALAPPDATA%\\torch-install\\Cache`` on Windows, ``~/Library/Caches/torch-install`` on macOS,
``$XDG_CACHE_HOME/torch-install`` (an absolute path) or ``~/.cache/torch-install`` elsewhere. A ``$HOME`` that is
not an absolute path (``HOME=rel``) is not a home: the account's home is used, never the working directory.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping


def home(environ: Mapping[str, str] = os.environ) -> str:
    """``$HOME`` when it is an absolute path, else the account's home directory."""
    value = environ.get("HOME") or ""
    if os.path.isabs(value):
        return value
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):
        return os.path.expanduser("~") if os.path.isabs(os.path.expanduser("~")) else os.path.abspath(os.sep)


def cache_root(environ: Mapping[str, str] = os.environ, platform: str = sys.platform) -> str:
    """torch-install's directory in the user's cache (the index cache is its ``index``, locks its ``locks``)."""
    if platform == "win32":
        local = environ.get("LOCALAPPDATA") or os.path.join(environ.get("USERPROFILE") or home(environ), "AppData",
                                                            "Local")
        return os.path.join(local, "torch-install", "Cache")
    if platform == "darwin":
        return os.path.join(home(environ), "Library", "Caches", "torch-install")
    xdg = environ.get("XDG_CACHE_HOME", "")
    return os.path.join(xdg if os.path.isabs(xdg) else os.path.join(home(environ), ".cache"), "torch-install")
