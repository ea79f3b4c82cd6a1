"""The family a package requires, installed as a new user would: ``torch-install install vllm==0.34.0`` with real
pip and real uv, loopback indexes only. vLLM (on the user's index) requires torch==2.14.0, torchvision==0.29.0 and
torchaudio==2.11.0; the user's index also has its CUDA builds of those. The family must come from the PyTorch
index's CPU build, in the build's own step."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wheels import build_wheel, serve_wheels

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout")]

FAMILY = ["torch==2.14.0", "torchvision==0.29.0", "torchaudio==2.11.0"]


@pytest.fixture
def indexes(httpserver, tmp_path: Path) -> tuple[str, str]:
    """(the default-index stand-in's /simple URL, the PyTorch-index stand-in's /whl base)."""
    default, pytorch = tmp_path / "default", tmp_path / "pytorch"
    default.mkdir()
    pytorch.mkdir()
    shared = [build_wheel(default, "filelock", "3.20.0"), build_wheel(default, "numpy", "2.1.0")]
    cuda = "cuda = '13.0'\n"
    serve_wheels(httpserver, "/simple", [
        *shared, build_wheel(default, "vllm", "0.34.0", requires=[*FAMILY, "numpy"]),
        build_wheel(default, "torch", "2.14.0", requires=["filelock"], version_py=cuda),
        build_wheel(default, "torchvision", "0.29.0", requires=["torch==2.14.0", "numpy"], version_py=cuda),
        build_wheel(default, "torchaudio", "2.11.0", requires=["torch"], version_py=cuda)])
    serve_wheels(httpserver, "/whl/cpu", [
        *shared, build_wheel(pytorch, "torch", "2.14.0+cpu", requires=["filelock"]),
        build_wheel(pytorch, "torchvision", "0.29.0+cpu", requires=["torch==2.14.0", "numpy"]),
        build_wheel(pytorch, "torchaudio", "2.11.0+cpu", requires=["torch==2.14.0"])])
    return httpserver.url_for("/simple").rstrip("/") + "/", httpserver.url_for("/whl").rstrip("/")


def _env(tmp_path: Path, simple: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "VIRTUAL_ENV"))}
    return {**env, "HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
            "XDG_CONFIG_DIRS": str(tmp_path / "xdg"), "PIP_INDEX_URL": simple, "UV_DEFAULT_INDEX": simple,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1", "UV_NO_CACHE": "1", "TORCH_INSTALL_DEFAULT_INDEX": "none",
            "TORCH_INSTALL_CACHE_DIR": str(tmp_path / "cache"),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])}  # uv of the venv


def _installed(python: Path) -> dict[str, str]:
    code = "import importlib.metadata as m; print('\\n'.join(f'{d.name}=={d.version}' for d in m.distributions()))"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout
    return dict(line.split("==", 1) for line in out.split())


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_the_family_vllm_requires_comes_from_the_builds_index_in_its_step(
        indexes: tuple[str, str], tmp_path: Path, make_venv, installer: str) -> None:
    simple, base = indexes
    python = make_venv(tmp_path / "env", with_pip=installer == "pip")
    done = subprocess.run([sys.executable, "-m", "torch_install", "install", "vllm==0.34.0", "--python", str(python),
                           "--variant", "cpu", "--index-base", base, "--installer", installer],
                          capture_output=True, text=True, env=_env(tmp_path, simple), cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    build = next(line for line in done.stdout.splitlines() if f"--index-url {base}/cpu" in line
                 or f"--default-index {base}/cpu" in line)
    assert "torchvision==0.29.0+cpu torchaudio==2.11.0+cpu" in build  # the build's own step
    installed = _installed(python)
    assert installed["torch"] == "2.14.0+cpu" and installed["vllm"] == "0.34.0"
    assert installed["torchvision"] == "0.29.0+cpu" and installed["torchaudio"] == "2.11.0+cpu"
