"""Facts about a Python interpreter, gathered by that interpreter itself.

Run as a script by another interpreter (``python -I interpreter_facts.py``) it prints one JSON object;
the doctor also calls ``collect()`` in its own process. Standard library only, no third-party imports,
and syntax that Python 3.6 still parses, so any interpreter a user points ``--python`` at can run it.
"""

import json
import os
import platform
import site
import sys


def _venv_includes_system_site() -> bool:
    """In a venv, the user site is only active with include-system-site-packages = true."""
    try:
        with open(os.path.join(sys.prefix, "pyvenv.cfg"), encoding="utf-8") as handle:
            for line in handle:
                key, _, value = line.partition("=")
                if key.strip().lower() == "include-system-site-packages":
                    return value.strip().lower() == "true"
    except OSError:
        pass
    return False


def _free_threaded() -> bool:
    if hasattr(sys, "abiflags"):  # POSIX: "t" marks a free-threaded build; avoids importing sysconfig
        return "t" in sys.abiflags
    import sysconfig

    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def collect() -> dict:
    """Version, platform, import path and site directories of the running interpreter."""
    base_prefix = getattr(sys, "base_prefix", sys.prefix)
    in_venv = sys.prefix != base_prefix
    try:
        site_packages = list(site.getsitepackages())
    except AttributeError:  # very old virtualenv's site.py
        site_packages = []
    try:
        user_site = site.getusersitepackages()
    except AttributeError:
        user_site = None
    return {
        "executable": sys.executable,
        "version": platform.python_version(),
        "implementation": sys.implementation.name,
        "free_threaded": _free_threaded(),
        "system": platform.system(),
        "machine": platform.machine(),
        "path": list(sys.path),
        "site_packages": site_packages,
        "user_site": user_site,
        "user_site_allowed": (not in_venv) or _venv_includes_system_site(),
        "prefix": sys.prefix,
        "base_prefix": base_prefix,
        "isolated": bool(sys.flags.isolated),
    }


if __name__ == "__main__":
    sys.stdout.write(json.dumps(collect()))
