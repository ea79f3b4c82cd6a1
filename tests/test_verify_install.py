"""The plan checked by the installer's own resolver before anything runs, with real pip and real uv against
loopback indexes: a package outside the table that pins an older torch (``serve-kit`` requires torch==2.14.1,
which the offline plan cannot know) moves the plan to the build it allows before the first step; a conflict that
is not about the torch family stops the install in one line, with nothing installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wheels import build_wheel, installed_versions, installer_env, serve_wheels

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout")]


@pytest.fixture
def indexes(httpserver, tmp_path: Path) -> tuple[str, str]:
    """(the default-index stand-in's /simple URL, the PyTorch-index stand-in's /whl base)."""
    default, pytorch = tmp_path / "default", tmp_path / "pytorch"
    default.mkdir()
    pytorch.mkdir()
    filelock = build_wheel(default, "filelock", "3.20.0")
    serve_wheels(httpserver, "/simple", [
        filelock, build_wheel(default, "serve-kit", "1.0", requires=["torch==2.14.1"]),
        build_wheel(default, "numpy", "1.26.4"), build_wheel(default, "numpy", "2.1.0"),
        build_wheel(default, "needs-numpy2", "1.0", requires=["numpy>=2"]),
        build_wheel(default, "torch", "2.15.0", requires=["filelock"]),
        build_wheel(default, "torch", "2.14.1", requires=["filelock"])])
    serve_wheels(httpserver, "/whl/cpu", [
        filelock, build_wheel(pytorch, "torch", "2.15.0+cpu", requires=["filelock"]),
        build_wheel(pytorch, "torch", "2.14.1+cpu", requires=["filelock"])])
    return httpserver.url_for("/simple").rstrip("/") + "/", httpserver.url_for("/whl").rstrip("/")


def _torch_install(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "torch_install", *argv], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_a_package_that_pins_an_older_torch_moves_the_plan_before_anything_runs(
        indexes: tuple[str, str], tmp_path: Path, make_venv, installer: str) -> None:
    simple, base = indexes
    python = make_venv(tmp_path / "env", with_pip=installer == "pip")
    done = _torch_install(installer_env(tmp_path, simple), "install", "serve-kit", "--python", str(python),
                          "--variant", "cpu", "--index-base", base, "--installer", installer)
    assert done.returncode == 0, done.stderr + done.stdout
    moved = next(line for line in done.stderr.splitlines() if "the next candidate" in line)
    assert moved.startswith(f"torch-install: warning: {installer}'s resolver cannot install torch 2.15.0+cpu: ")
    assert "serve-kit" in moved and moved.endswith("the next candidate: torch 2.14.1+cpu (torch==2.14.1)")
    assert "torch 2.14.1, variant cpu" in done.stdout.splitlines()[0] or "torch 2.14.1" in done.stderr
    installed = installed_versions(python)
    assert installed["torch"] == "2.14.1+cpu" and installed["serve-kit"] == "1.0"


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_a_conflict_outside_the_family_stops_the_install_in_one_line(
        indexes: tuple[str, str], tmp_path: Path, make_venv, installer: str) -> None:
    simple, base = indexes
    python = make_venv(tmp_path / "env", with_pip=installer == "pip")
    done = _torch_install(installer_env(tmp_path, simple), "install", "needs-numpy2", "numpy<2", "--python",
                          str(python), "--variant", "cpu", "--index-base", base, "--installer", installer)
    assert done.returncode == 4, done.stderr + done.stdout
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith(f"torch-install: error: {installer}'s resolver cannot install the plan (torch "
                            "2.15.0+cpu): ") and "needs-numpy2" in error and "numpy" in error
    assert "torch" not in installed_versions(python)  # nothing ran
    assert done.stdout == ""  # no step was printed


def test_plan_verify_checks_with_pip_for_this_python(indexes: tuple[str, str], tmp_path: Path) -> None:
    simple, base = indexes
    done = _torch_install(installer_env(tmp_path, simple), "plan", "serve-kit", "--variant", "cpu", "--index-base",
                          base, "--verify", "--format", "pip")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"python -m pip install torch==2.14.1+cpu --index-url {base}/cpu")
    assert "pip's resolver cannot install torch 2.15.0+cpu" in done.stderr


def test_plan_verify_checks_a_target_with_uv(indexes: tuple[str, str], tmp_path: Path) -> None:
    simple, base = indexes
    done = _torch_install(installer_env(tmp_path, simple), "plan", "serve-kit", "--os", "linux", "--arch", "x86_64",
                          "--python", "3.12", "--index-base", base, "--verify", "--installer", "uv", "--format", "uv")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"uv pip install torch==2.14.1+cpu --default-index {base}/cpu")
    assert "uv's resolver cannot install torch 2.15.0+cpu" in done.stderr
