"""The dead-code check of CI: vulture over src/, held at zero findings.

Code that is called by name rather than by an import counts as used, and is read from where it is named, never
listed by hand: the hooks of the vendor registry (``vendors.py``: ``"module:name"``, read through each kind's
``vendors.Hook``), the renderer table of ``render/`` and the methods that the standard library calls (an
HTMLParser's ``handle_starttag``, a raw file's ``readinto`` …). Everything else must be referenced by code.

    python scripts/dead_code.py          # exit 1 and the findings when there is dead code
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIN_CONFIDENCE = 60
# Called by the standard library or by the import system, not by this code.
CALLED_BY_PYTHON = (
    "handle_starttag",  # html.parser.HTMLParser
    "seekable", "readable", "tell", "seek", "readinto",  # io.RawIOBase, for zipfile
    "__getattr__",  # a package's lazy attributes (PEP 562)
    "mtime",  # tarfile.TarInfo, read by tarfile when it writes the member
    "optionxform",  # configparser, its key normaliser
    "prereleases",  # the keyword of packaging's SpecifierSet.contains, which AnyVersion stands in for
    "__class_getitem__",  # Class[...], the vendor hooks' type parameter
)


def named_references() -> list[str]:
    """The names the code calls by name: the registry's hook fields and the code each row's hooks name (every kind
    of hook, as the modules that declare one register it), and the renderers."""
    sys.path.insert(0, str(ROOT / "src"))
    import importlib
    import pkgutil

    import torch_install
    from torch_install import vendors
    from torch_install.render import _RENDERERS

    for module in pkgutil.walk_packages(torch_install.__path__, "torch_install."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    hooks = {name for kind in vendors.HOOKS
             for name in (kind.field, *(kind.target(ref)[1] for row in vendors.VENDORS for ref in kind.refs(row)))}
    return sorted(hooks | {name for _, name in _RENDERERS.values()})


def main() -> int:
    names = [*named_references(), *CALLED_BY_PYTHON]
    with tempfile.TemporaryDirectory() as tmp:
        whitelist = Path(tmp) / "used_by_name.py"
        whitelist.write_text("".join(f"{name}  # noqa\n" for name in names), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "vulture", str(ROOT / "src"), str(whitelist),
                               "--min-confidence", str(MIN_CONFIDENCE)], capture_output=True, text=True)
    sys.stdout.write(done.stdout.replace(str(ROOT) + "/", ""))
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
