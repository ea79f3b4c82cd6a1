"""Facts about a Python interpreter, gathered by that interpreter itself.

Run as a script by another interpreter (``python -I -S interpreter_facts.py``) it prints one JSON object; the
running interpreter's own facts come from ``collect()`` in-process. Standard library only, and syntax that
Python 3.6 still parses, so any interpreter a user points ``--python`` at can run it.

Under ``-S`` the ``site`` module's start-up never runs, so no ``.pth`` file and no ``sitecustomize`` of the
inspected environment executes, and nothing they print reaches the answer. The import path that start-up would
build is worked out here instead, the way ``site`` does it: the virtual environment's prefix from ``pyvenv.cfg``,
its site-packages (and the base ones when ``include-system-site-packages`` is true), then the directory lines of
each ``.pth`` file (its ``import`` lines are not run).
"""

# Types are given in comments: annotations are syntax Python 3.6 does not have everywhere (``X | None``).
import os
import site
import sys
import sysconfig


def _venv_config():
    # type: () -> tuple[str | None, bool]
    """(venv prefix, include-system-site-packages) from the pyvenv.cfg next to the executable, else (None, True)."""
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    prefix = os.path.dirname(exe_dir)
    for conf in (os.path.join(exe_dir, "pyvenv.cfg"), os.path.join(prefix, "pyvenv.cfg")):
        if not os.path.isfile(conf):
            continue
        system_site = True
        try:
            with open(conf, encoding="utf-8") as handle:
                for line in handle:
                    key, _, value = line.partition("=")
                    if key.strip().lower() == "include-system-site-packages":
                        system_site = value.strip().lower() == "true"
        except OSError:
            pass
        return prefix, system_site
    return None, True


def _site_dirs(prefixes):
    # type: (list[str]) -> list[str]
    try:
        return list(site.getsitepackages(prefixes))
    except (AttributeError, TypeError):  # very old virtualenv's site.py
        return []


def _pth_dirs(site_dir, known):
    # type: (str, set[str]) -> list[str]
    """Directories the .pth files of ``site_dir`` add, in site's order (file names sorted; hidden ones and
    ``import`` lines skipped); existing directories only, each once."""
    try:
        names = sorted(n for n in os.listdir(site_dir) if n.endswith(".pth") and not n.startswith("."))
    except OSError:
        return []
    added = []
    for name in names:
        try:
            with open(os.path.join(site_dir, name), encoding="utf-8", errors="replace") as handle:
                lines = handle.read(1 << 20).splitlines()
        except OSError:
            continue
        for line in lines:
            if not line.strip() or line.startswith("#") or line.startswith(("import ", "import\t")):
                continue
            path = os.path.normpath(os.path.join(site_dir, line.rstrip()))
            if path not in known and os.path.isdir(path):
                known.add(path)
                added.append(path)
    return added


def _free_threaded():
    # type: () -> bool
    if hasattr(sys, "abiflags"):  # POSIX: "t" marks a free-threaded build
        return "t" in sys.abiflags
    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def _version():
    # type: () -> str
    """``platform.python_version()``, read from ``sys.version_info`` ("3.12.4", "3.14.0rc1")."""
    v = sys.version_info
    level = {"alpha": "a", "beta": "b", "candidate": "rc"}.get(v[3])
    return "{}.{}.{}".format(v[0], v[1], v[2]) + ("{}{}".format(level, v[4]) if level else "")  # noqa: UP032


def _uname():
    # type: () -> tuple[str, str]
    """(``platform.system()``, ``platform.machine()``); ``os.uname`` where there is one (platform costs more
    to import than the rest of this script)."""
    if hasattr(os, "uname"):
        name = os.uname()
        return name.sysname, name.machine
    import platform

    return platform.system(), platform.machine()


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def to_json(value):
    # type: (object) -> str
    """``json.dumps(value)`` for the values ``collect`` gives (None, bools, strings, lists, dicts), without
    importing json (whose import costs more than the rest of this script): every non-ASCII character escaped."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(to_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(to_json(str(k)) + ": " + to_json(v) for k, v in value.items()) + "}"
    out = []
    for char in str(value):
        code = ord(char)
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code > 0xFFFF:
            code -= 0x10000
            out.append("\\u{:04x}\\u{:04x}".format(0xD800 | (code >> 10), 0xDC00 | (code & 0x3FF)))  # noqa: UP032
        else:
            out.append("\\u{:04x}".format(code))  # noqa: UP032
    return '"' + "".join(out) + '"'


def collect():
    # type: () -> dict[str, object]
    """Version, platform, import path and site directories of the running interpreter."""
    no_site = bool(sys.flags.no_site)
    base_prefix = getattr(sys, "base_prefix", sys.prefix)
    prefix = sys.prefix
    system_site = True
    if no_site:  # site.venv() did not run: find the environment the way it would
        venv_prefix, system_site = _venv_config()
        prefix = venv_prefix or sys.prefix
    elif prefix != base_prefix:
        _, system_site = _venv_config()
    in_venv = prefix != base_prefix
    site_packages = _site_dirs([prefix]) + (_site_dirs([base_prefix]) if in_venv and system_site else [])
    path = list(sys.path)
    if no_site:
        known = set(os.path.normpath(p) for p in path)
        for directory in site_packages:
            if os.path.isdir(directory) and os.path.normpath(directory) not in known:
                known.add(os.path.normpath(directory))
                path.append(directory)
            path += _pth_dirs(directory, known)
    try:
        user_site = site.getusersitepackages()
    except AttributeError:
        user_site = None
    return {
        "executable": sys.executable,
        "version": _version(),
        "implementation": sys.implementation.name,
        "free_threaded": _free_threaded(),
        "system": _uname()[0],
        "machine": _uname()[1],
        "path": path,
        "site_packages": site_packages,
        "user_site": user_site,
        "user_site_allowed": (not in_venv) or system_site,
        "prefix": prefix,
        "base_prefix": base_prefix,
        "stdlib": sysconfig.get_path("stdlib"),
        "isolated": bool(sys.flags.isolated),
    }


if __name__ == "__main__":
    sys.stdout.write(to_json(collect()))
