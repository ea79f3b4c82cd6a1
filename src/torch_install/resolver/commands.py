"""Installer command lines, built in one place: the argv of pip or uv acting on an interpreter. The plan's
``commands`` (part of the plan JSON, with the arguments of ``steps.install_args``), ``install``, the doctor's fixes
and the Dockerfile step all build their commands here.
"""

from __future__ import annotations

from collections.abc import Sequence

PRE_RELEASE_CHANNEL = "nightly"  # the channel whose builds are pre-releases: pip --pre, uv --prerelease allow
INSTALLERS = ("pip", "uv")


def installer_argv(installer: str, action: str, args: Sequence[str], python: str | None = None,
                   uv: str = "uv") -> list[str]:
    """``python -m pip ACTION ARGS`` for pip (``python`` defaults to the bare name), ``uv pip ACTION --python
    PYTHON ARGS`` for uv (no ``--python`` when none is given: uv finds the environment itself)."""
    if installer == "uv":
        return [uv, "pip", action, *(["--python", python] if python else []), *args]
    return [python or "python", "-m", "pip", action, *args]
