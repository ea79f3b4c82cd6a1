"""Every kind of vendor hook (``vendors.Hook``). Each is declared by the module that calls it and registers itself
when that module is imported, so every module of the package is imported first."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import torch_install
from torch_install import vendors


def hook_kinds() -> tuple[vendors.Hook[Any], ...]:
    for module in pkgutil.walk_packages(torch_install.__path__, "torch_install."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    return tuple(vendors.HOOKS)
