"""How the benches start the command: the ``torch-install`` console script beside this interpreter, as a user runs
it (``python -m`` adds runpy's imports), or ``python -m torch_install`` where this interpreter has no such script."""

from __future__ import annotations

import sys
from pathlib import Path

_SCRIPT = Path(sys.executable).with_name("torch-install")
CLI = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "torch_install"]
