"""A project installed as a new user would: a lock compiled by real ``uv pip compile --generate-hashes`` against a
default-index stand-in, installed by ``torch-install install -r`` with real pip and with real uv, loopback
indexes only. The chosen build comes from the PyTorch-index stand-in, the lock's other packages with their hashes
from the user's index, and the lock's own torch build's packages (nvidia-*) are not installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wheels import build_wheel, installed_versions, installer_env, serve_wheels

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout")]

DEPENDENCIES = [("filelock", "3.20.0", ()), ("sympy", "1.14.0", ("mpmath<1.4,>=1.1.0",)), ("mpmath", "1.3.0", ()),
                ("numpy", "1.26.4", ()), ("numpy", "2.1.0", ()), ("pillow", "11.3.0", ())]


@pytest.fixture
def indexes(httpserver, tmp_path: Path) -> tuple[str, str]:
    """(the default-index stand-in's /simple URL, the PyTorch-index stand-in's /whl base)."""
    default, pytorch = tmp_path / "default", tmp_path / "pytorch"
    default.mkdir()
    pytorch.mkdir()
    shared = [build_wheel(default, name, version, requires=requires) for name, version, requires in DEPENDENCIES]
    serve_wheels(httpserver, "/simple", [
        *shared, build_wheel(default, "torch", "2.9.1", requires=["filelock", "sympy>=1.13.3",
                                                                   "nvidia-cublas-cu12==12.8.4.1"]),
        build_wheel(default, "torchvision", "0.24.1", requires=["numpy", "torch==2.9.1", "pillow"]),
        build_wheel(default, "nvidia-cublas-cu12", "12.8.4.1"), build_wheel(default, "requests", "2.32.5")])
    serve_wheels(httpserver, "/whl/cpu", [
        *shared, build_wheel(pytorch, "torch", "2.9.1+cpu", requires=["filelock", "sympy>=1.13.3"]),
        build_wheel(pytorch, "torchvision", "0.24.1+cpu", requires=["numpy", "torch==2.9.1", "pillow"])])
    serve_wheels(httpserver, "/whl/cu126", [
        *shared, build_wheel(pytorch, "torch", "2.9.1+cu126", requires=["filelock", "sympy>=1.13.3",
                                                                        "nvidia-cublas-cu12==12.6.4.1"]),
        build_wheel(pytorch, "torchvision", "0.24.1+cu126", requires=["numpy", "torch==2.9.1", "pillow"]),
        build_wheel(pytorch, "nvidia-cublas-cu12", "12.6.4.1")])
    return httpserver.url_for("/simple").rstrip("/") + "/", httpserver.url_for("/whl").rstrip("/")


def _compiled_lock(tmp_path: Path, env: dict[str, str], name: str = "requirements.txt") -> Path:
    """The project's lock, as real uv compiles it: a hashed requirements file, or a PEP 751 ``pylock.toml``."""
    uv = str(Path(sys.executable).parent / "uv")
    (tmp_path / "requirements.in").write_text("torch==2.9.1\ntorchvision\nnumpy<2\nrequests\n")
    subprocess.run([uv, "pip", "compile", "requirements.in", "--generate-hashes", "-o", name, "--quiet"],
                   cwd=tmp_path, env=env, check=True)
    lock = tmp_path / name
    assert "sha256" in lock.read_text() and "nvidia-cublas-cu12" in lock.read_text()
    return lock


@pytest.mark.parametrize(("installer", "name"), [("pip", "requirements.txt"), ("uv", "requirements.txt"),
                                               ("pip", "pylock.toml")])
def test_a_uv_compiled_lock_installs_the_chosen_build_and_the_rest_with_its_hashes(
        indexes: tuple[str, str], tmp_path: Path, make_venv, installer: str, name: str) -> None:
    simple, base = indexes
    env = installer_env(tmp_path, simple)
    lock = _compiled_lock(tmp_path, env, name)
    python = make_venv(tmp_path / "env", with_pip=installer == "pip")
    done = subprocess.run([sys.executable, "-m", "torch_install", "install", "-r", str(lock), "--python", str(python),
                           "--variant", "cpu", "--index-base", base, "--installer", installer],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    installed = installed_versions(python)
    assert installed["torch"] == "2.9.1+cpu" and installed["torchvision"] == "0.24.1+cpu"
    assert installed["numpy"] == "1.26.4" and installed["pillow"] == "11.3.0" and installed["sympy"] == "1.14.0"
    assert installed["requests"] == "2.32.5"
    assert "nvidia-cublas-cu12" not in installed  # the lock's own torch build's package: not for this build
    assert "chosen-build.txt, which the command reads" in done.stderr


@pytest.mark.parametrize("installer", ["pip", "uv"])
@pytest.mark.parametrize("package", ["requests", "filelock"])
def test_a_tampered_hash_in_the_lock_is_refused_by_the_installer(indexes: tuple[str, str], tmp_path: Path,
                                                                 make_venv, installer: str, package: str) -> None:
    """Every package of the lock keeps its hash, torch's own dependencies (filelock) too: the build's step
    installs the family alone (``--no-deps``), and the lock's packages come in the next step with their hashes."""
    simple, base = indexes
    env = installer_env(tmp_path, simple)
    lock = _compiled_lock(tmp_path, env)
    text = lock.read_text().splitlines()
    at = next(i for i, line in enumerate(text) if line.startswith(f"{package}==")) + 1
    text[at] = "    --hash=sha256:" + "0" * 64 + (" \\" if text[at].endswith("\\") else "")
    lock.write_text("\n".join(text) + "\n")
    python = make_venv(tmp_path / "env", with_pip=installer == "pip")
    done = subprocess.run([sys.executable, "-m", "torch_install", "install", "-r", str(lock), "--python", str(python),
                           "--variant", "cpu", "--index-base", base, "--installer", installer],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 3, done.stderr + done.stdout
    assert package not in installed_versions(python)
    said = done.stdout + done.stderr
    assert ("THESE PACKAGES DO NOT MATCH THE HASHES" if installer == "pip" else "Hash mismatch") in said
    assert "step 2 of 2 failed; step 1 had installed the chosen build (torch 2.9.1+cpu" in done.stderr
    assert set(installed_versions(python)) - {"pip", "setuptools"} == {"torch", "torchvision"}  # the family alone


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_the_builds_step_installs_the_family_with_the_indexs_hashes(indexes: tuple[str, str], tmp_path: Path,
                                                                    make_venv, installer: str) -> None:
    """The installer's resolver says what the build brings: the family (and, for another build than the lock's,
    what it needs that the lock does not pin) installs with the index's own hashes, ``--no-deps``; the lock's
    packages install with theirs."""
    simple, base = indexes
    env = installer_env(tmp_path, simple)
    lock = _compiled_lock(tmp_path, env)
    python = make_venv(tmp_path / "env", with_pip=installer == "pip")
    done = subprocess.run([sys.executable, "-m", "torch_install", "install", "-r", str(lock), "--python", str(python),
                           "--variant", "cu126", "--index-base", base, "--installer", installer],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    build, rest = done.stdout.splitlines()[:2]
    assert "--no-deps --require-hashes" in build and rest.endswith("--require-hashes")
    files = done.stderr.split("build-files.txt, which the command reads:\n", 1)[1]
    listed = [line.split(" ")[0] for line in files.splitlines()[:3]]
    assert listed == ["torch==2.9.1+cu126", "torchvision==0.24.1+cu126", "nvidia-cublas-cu12==12.6.4.1"]
    assert all(" --hash=sha256:" in line for line in files.splitlines()[:3])
    installed = installed_versions(python)
    assert installed["torch"] == "2.9.1+cu126" and installed["nvidia-cublas-cu12"] == "12.6.4.1"
    assert installed["filelock"] == "3.20.0" and installed["requests"] == "2.32.5"


def test_without_the_check_the_lock_still_installs_with_its_hashes(indexes: tuple[str, str], tmp_path: Path,
                                                                   make_venv) -> None:
    """``--no-verify``: the build's step is the family alone, unhashed, ``--no-deps``; the lock's packages with
    their hashes; then the build again, the lock's versions as constraints, which brings only what the lock does
    not pin (the cu126 build's CUDA library)."""
    simple, base = indexes
    env = installer_env(tmp_path, simple)
    lock = _compiled_lock(tmp_path, env)
    python = make_venv(tmp_path / "env")
    done = subprocess.run([sys.executable, "-m", "torch_install", "install", "-r", str(lock), "--python", str(python),
                           "--variant", "cu126", "--index-base", base, "--no-verify"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    steps = [line for line in done.stdout.splitlines() if " -m pip install " in line][:3]
    assert steps[0].endswith(f"install torch==2.9.1+cu126 torchvision==0.24.1+cu126 --no-deps --index-url {base}/cu126")
    assert steps[1].endswith("--require-hashes") and "locked-versions.txt" in steps[2]
    assert "Successfully installed filelock-3.20.0" in done.stdout  # with its hash, in the lock's step
    installed = installed_versions(python)
    assert installed["nvidia-cublas-cu12"] == "12.6.4.1" and installed["numpy"] == "1.26.4"
