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

from wheels import build_wheel, installed_versions, installer_env, serve_wheels

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


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_the_family_vllm_requires_comes_from_the_builds_index_in_its_step(
        indexes: tuple[str, str], tmp_path: Path, make_venv, installer: str) -> None:
    simple, base = indexes
    python = make_venv(tmp_path / "env", with_pip=installer == "pip")
    done = subprocess.run([sys.executable, "-m", "torch_install", "install", "vllm==0.34.0", "--python", str(python),
                           "--variant", "cpu", "--index-base", base, "--installer", installer],
                          capture_output=True, text=True, env=installer_env(tmp_path, simple), cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    build = next(line for line in done.stdout.splitlines() if f"--index-url {base}/cpu" in line
                 or f"--default-index {base}/cpu" in line)
    assert "torchvision==0.29.0+cpu torchaudio==2.11.0+cpu" in build  # the build's own step
    installed = installed_versions(python)
    assert installed["torch"] == "2.14.0+cpu" and installed["vllm"] == "0.34.0"
    assert installed["torchvision"] == "0.29.0+cpu" and installed["torchaudio"] == "2.11.0+cpu"


@pytest.mark.parametrize(("installer", "checked"), [("pip", True), ("uv", True), ("uv", False)])
def test_a_hashed_lock_of_vllm_keeps_every_hash_and_the_builds_family(
        indexes: tuple[str, str], tmp_path: Path, make_venv, installer: str, checked: bool) -> None:
    """A lock compiled by real ``uv pip compile --generate-hashes`` against the default index (its torch and family
    the default index's builds): the family comes from the build's index in its own step, with the index's hashes;
    vLLM, which depends on torch, and the rest come with the lock's hashes, and a tampered one stops the install."""
    simple, base = indexes
    env = installer_env(tmp_path, simple)
    (tmp_path / "requirements.in").write_text("vllm==0.34.0\n")
    subprocess.run([str(Path(sys.executable).parent / "uv"), "pip", "compile", "requirements.in", "--generate-hashes",
                    "-o", "requirements.txt", "--quiet"], cwd=tmp_path, env=env, check=True)
    lock = tmp_path / "requirements.txt"
    python = make_venv(tmp_path / "env", with_pip=installer == "pip")
    argv = [sys.executable, "-m", "torch_install", "install", "-r", str(lock), "--python", str(python), "--variant",
            "cpu", "--index-base", base, "--installer", installer, *([] if checked else ["--no-verify"])]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    if checked:
        files = done.stderr.split("build-files.txt, which the command reads:\n", 1)[1].splitlines()[:3]
        assert [line.split(" ")[0] for line in files] == ["torch==2.14.0+cpu", "torchvision==0.29.0+cpu",
                                                          "torchaudio==2.11.0+cpu"]
    else:  # without the check uv verifies the lock's hashes without requiring one of the installed torch
        assert "--no-deps" in done.stdout.splitlines()[0] and "locked-versions.txt" in done.stdout
    lock_step = done.stderr.split("requirements.txt, which the command reads:\n", 1)[1]
    vllm = next(line for line in lock_step.splitlines() if line.startswith("vllm==0.34.0"))
    assert "--hash=sha256:" in vllm  # the lock's own hash of it
    installed = installed_versions(python)
    assert installed["torchvision"] == "0.29.0+cpu" and installed["torchaudio"] == "2.11.0+cpu"
    assert installed["vllm"] == "0.34.0" and installed["numpy"] == "2.1.0"
