"""`doctor --fix` runs the fix for the inspected environment: asks first (--yes for scripts), refuses a PEP 668
Python, runs the command through the guarded installer and checks again. Real pip, a real venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wheels import build_wheel

pytestmark = pytest.mark.slow  # real pip, uv, venvs or processes

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout")


VERSION_PY = """from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']
__version__ = '{version}'
debug = False
cuda: Optional[str] = None
git_version = 'd38164a545b4a4e4e0cf73ce67173f70574890b6'
hip: Optional[str] = None
xpu: Optional[str] = None
"""  # torch 2.9's torch/version.py of a CPU wheel, as its build writes it


@pytest.fixture
def env(tmp_path: Path, make_venv) -> tuple[Path, dict[str, str], Path]:
    """A venv with a CPU torch and an orphaned nvidia-cublas-cu12; pip's environment; a CPU target profile."""
    python = make_venv(tmp_path / "env")
    pip_env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))},
               "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1",
               "TORCH_INSTALL_DEFAULT_INDEX": "none"}
    wheels = [build_wheel(tmp_path, "torch", "2.9.1+cpu", version_py=VERSION_PY.format(version="2.9.1+cpu")),
              build_wheel(tmp_path, "nvidia-cublas-cu12", "12.8.4.1", package="nvidia/cublas")]
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", *map(str, wheels)], env=pip_env,
                   check=True)
    profile = tmp_path / "cpu.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.11", "glibc": "2.35", "gpus": []}))
    return python, pip_env, profile


def _doctor(python: Path, pip_env: dict[str, str], profile: Path, *flags: str,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "torch_install", "doctor", "--python", str(python), "--target",
                           str(profile), *flags], capture_output=True, text=True, env=pip_env, input=stdin)


@posix_only
def test_fix_with_yes_runs_the_cleanup_and_checks_again(env: tuple[Path, dict[str, str], Path]) -> None:
    python, pip_env, profile = env
    before = _doctor(python, pip_env, profile)
    assert "[orphaned-cuda-libraries]" in before.stdout
    done = _doctor(python, pip_env, profile, "--fix", "--yes")
    assert done.returncode == 0, done.stderr
    assert f"torch-install: running {python} -m pip uninstall -y nvidia-cublas-cu12" in done.stderr
    after = done.stdout.split("After the fix:", 1)[1]
    assert "[orphaned-cuda-libraries]" not in after
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format", "json"], capture_output=True, text=True,
                            env=pip_env, check=True).stdout
    assert "nvidia-cublas-cu12" not in listed and '"torch"' in listed


@posix_only
def test_fix_asks_first_and_needs_yes_without_a_terminal(env: tuple[Path, dict[str, str], Path]) -> None:
    python, pip_env, profile = env
    done = _doctor(python, pip_env, profile, "--fix", stdin="y\n")  # stdin is a pipe, not a terminal
    assert done.returncode == 2 and "give --yes to run the fix without asking" in done.stderr
    listed = subprocess.run([str(python), "-m", "pip", "list"], capture_output=True, text=True, env=pip_env).stdout
    assert "nvidia-cublas-cu12" in listed  # nothing ran


def test_fix_refuses_an_externally_managed_python(tmp_path: Path) -> None:
    system = "/usr/bin/python3"
    marker = subprocess.run([system, "-c", "import sysconfig, os; print(os.path.isfile(os.path.join("
                             "sysconfig.get_paths()['stdlib'], 'EXTERNALLY-MANAGED')))"],
                            capture_output=True, text=True) if os.path.exists(system) else None
    if marker is None or marker.stdout.strip() != "True":
        pytest.skip("no externally managed system Python here")
    profile = tmp_path / "cpu.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.11", "glibc": "2.35", "gpus": []}))
    done = subprocess.run([sys.executable, "-m", "torch_install", "doctor", "--python", system, "--target",
                           str(profile), "--fix", "--yes"], capture_output=True, text=True,
                          env={**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none"})
    if "nothing to run" in done.stderr:
        pytest.skip("the system Python here needs no fix")
    assert done.returncode == 3 and "externally managed (PEP 668)" in done.stderr


def test_the_free_space_is_what_shutil_reports(tmp_path: Path) -> None:
    import shutil

    from doctor_cases import interpreter
    from torch_install.doctor.fix import free_space_gb
    from torch_install.doctor.inspect import inspect_environment

    installed = inspect_environment(interpreter(tmp_path))
    found = free_space_gb(installed)
    assert found is not None and abs(found - shutil.disk_usage(tmp_path).free / 1e9) < 0.5
    gone = installed._replace(interpreter=installed.interpreter._replace(site_packages=(str(tmp_path / "no"),),
                                                                         prefix=str(tmp_path / "none")))
    assert free_space_gb(gone) is None
