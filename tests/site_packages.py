"""Site-packages fixtures made by real pip: wheels built here (``wheels.build_wheel``) in the layouts of the indexes
they stand for, installed with ``pip install --no-deps --target`` as a user's pip would install them, so every
dist-info file (``METADATA``, ``WHEEL``, ``INSTALLER``, ``RECORD``, ``REQUESTED``, ``direct_url.json``) is pip's own.

``python tests/site_packages.py`` writes the committed cases under ``tests/fixtures/site-packages/`` (those named
in ``CASES``; the other cases there are older). Each case is one mix of builds the doctor must tell apart:

- ``cpu-2.15.0-torchvision-cu132``: the PyTorch index's CPU torch 2.15.0, and the default index's torchvision
  0.29.2, its CUDA 13.2 build (stable-ABI companions carry no label on either index: only version.py says);
- ``cpu-2.7.1-pyg-cu118``: CPU torch 2.7.1 with the PyG libraries of the CUDA 11.8 find-links page (``+pt27cu118``);
- ``cpu-2.8.0-xformers-cu128-url``: CPU torch 2.8.0 with an unlabelled xformers installed from its URL on the
  PyTorch index's cu128 directory (``direct_url.json`` is what names its build);
- ``cpu-2.13.0-torchaudio-2.11.0``: CPU torch 2.13.0 with torchaudio 2.11.0, a decoupled release a plan chooses
  with it (vLLM's requirements pin it).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from wheels import build_wheel

FIXTURES = Path(__file__).parent / "fixtures" / "site-packages"
# The directory the wheels are installed from: fixed, so that direct_url.json's URL is the same on every run.
SOURCE = Path(tempfile.gettempdir()) / "torch-install-fixture-indexes"
TAG = "cp311-cp311-manylinux_2_28_x86_64"


def _torch_version_py(version: str, cuda: str | None) -> str:
    return (f"from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n"
            f"__version__ = '{version}'\ndebug = False\ncuda: Optional[str] = {cuda!r}\n"
            f"# example value: the release commit of torch {version} is not recorded in this fixture\n"
            f"git_version = '{'0' * 40}'\nhip: Optional[str] = None\nxpu: Optional[str] = None\n")


def _companion_version_py(version: str, cuda: str | None) -> str:
    return (f"__version__ = '{version}'\n# example value: the release commit is not recorded in this fixture\n"
            f"git_version = '{'0' * 40}'\ncuda = {cuda!r}\n")


def _torch(where: Path, version: str) -> Path:
    return build_wheel(where, "torch", version, tag=TAG, requires=["filelock", "typing-extensions>=4.10.0"],
                       version_py=_torch_version_py(version, None))


# (case, [(index directory, wheel builder arguments, how pip installs it: "index" or "url")])
CASES: dict[str, list[tuple[str, dict[str, object], str]]] = {
    "cpu-2.15.0-torchvision-cu132": [
        ("whl/cpu", {"name": "torch", "version": "2.15.0+cpu", "torch": True}, "index"),
        ("simple/torchvision", {"name": "torchvision", "version": "0.29.2", "tag": "py3-none-manylinux_2_28_x86_64",
                                "requires": ["numpy", "torch>=2.14.0", "pillow!=8.3.*,>=5.3.0"],
                                "version_py": _companion_version_py("0.29.2+cu132", "13.2")}, "index"),
    ],
    "cpu-2.7.1-pyg-cu118": [
        ("whl/cpu", {"name": "torch", "version": "2.7.1+cpu", "torch": True}, "index"),
        ("pyg/torch-2.7.0+cu118", {"name": "torch_scatter", "version": "2.1.2+pt27cu118", "tag": TAG}, "index"),
        ("pyg/torch-2.7.0+cu118", {"name": "torch_sparse", "version": "0.6.18+pt27cu118", "tag": TAG,
                                   "requires": ["scipy"]}, "index"),
    ],
    "cpu-2.8.0-xformers-cu128-url": [
        ("whl/cpu", {"name": "torch", "version": "2.8.0+cpu", "torch": True}, "index"),
        ("whl/cu128", {"name": "xformers", "version": "0.0.32.post2", "tag": "cp39-abi3-manylinux_2_28_x86_64",
                       "requires": ["numpy", "torch==2.8.0"]}, "url"),
    ],
    "cpu-2.13.0-torchaudio-2.11.0": [
        ("whl/cpu", {"name": "torch", "version": "2.13.0+cpu", "torch": True}, "index"),
        ("whl/cpu", {"name": "torchaudio", "version": "2.11.0+cpu", "tag": "cp311-cp311-manylinux_2_28_x86_64",
                     "version_py": _companion_version_py("2.11.0+cpu", None)}, "index"),
    ],
}


def _pip_env() -> dict[str, str]:
    """pip with no configuration of this machine's (no pip.conf, no PIP_* variable)."""
    import os

    return {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "PIP_CONFIG_FILE": os.devnull}


def build_case(case: str, target: Path) -> None:
    """Install the case's wheels into ``target`` with real pip (no dependencies, no index but the files)."""
    shutil.rmtree(SOURCE, ignore_errors=True)
    for directory, spec, how in CASES[case]:
        where = SOURCE / directory
        where.mkdir(parents=True, exist_ok=True)
        spec = dict(spec)
        if spec.pop("torch", False):
            wheel = _torch(where, str(spec["version"]))
        else:
            wheel = build_wheel(where, str(spec.pop("name")), str(spec.pop("version")), **spec)  # type: ignore[arg-type]
        source = wheel.as_uri() if how == "url" else wheel.name.split("-")[0].replace("_", "-") + "==" + \
            wheel.name.split("-")[1]
        argv = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(target),
                "--disable-pip-version-check", "--no-compile",
                *(["--find-links", str(where)] if how == "index" else []), source]
        subprocess.run(argv, check=True, env=_pip_env())
    shutil.rmtree(target / "bin", ignore_errors=True)  # scripts of --target: not what the doctor reads


def main() -> None:
    for case in CASES:
        target = FIXTURES / case
        shutil.rmtree(target, ignore_errors=True)
        build_case(case, target)
        print(f"wrote {target}")


if __name__ == "__main__":
    main()
