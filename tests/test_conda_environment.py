"""End to end in a real environment that conda's records say conda made (a virtual environment holding the
prefix's conda-meta/, activation script and site-packages of tests/conda_prefixes.py): `doctor --python` finds
conda's CPU build and the CPU torchvision next to a CUDA pytorch, and `install --python` stops before pip."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conda_prefixes import SITE, write_prefix

pytestmark = pytest.mark.slow
GPU = {"TORCH_INSTALL_CUDA_ARCH": "8.9", "TORCH_INSTALL_NVIDIA_DRIVER": "560.35.03"}  # an RTX 4090-like GPU


def conda_venv(tmp_path: Path, make_venv, case: str) -> Path:
    python = make_venv(tmp_path / "env")
    prefix = write_prefix(tmp_path / "made", case)
    root = python.parent.parent
    site = next(root.glob("lib/python3*/site-packages"))
    shutil.copytree(prefix / "conda-meta", root / "conda-meta")
    if (prefix / "etc").exists():
        shutil.copytree(prefix / "etc", root / "etc")
    for entry in (prefix / SITE).iterdir():
        shutil.copytree(entry, site / entry.name)
    return python


def torch_install(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "torch_install", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    import os

    return {**{k: v for k, v in os.environ.items() if not k.startswith(("TORCH_INSTALL_", "CONDA_", "VIRTUAL_ENV"))},
            **GPU}


@pytest.mark.parametrize(("case", "code"), [("cpu-build", "conda-cpu-build-on-gpu-machine"),
                                            ("torchvision-cpu-next-to-cuda", "conda-companion-cpu-build")])
def test_doctor_finds_the_wrong_conda_build(case: str, code: str, tmp_path: Path, make_venv,
                                           environ: dict[str, str]) -> None:
    python = conda_venv(tmp_path, make_venv, case)
    done = torch_install("doctor", "--python", str(python), "--json", env=environ)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert code in [f["code"] for f in report["findings"]]
    assert report["conda"]["records"] and report["torch"]["installer"] == "conda"
    fix = next(f["fix"] for f in report["findings"] if f["code"] == code)
    assert fix.startswith(f"conda install --prefix {python.parent.parent} --channel conda-forge")


def test_install_stops_before_pip(tmp_path: Path, make_venv, environ: dict[str, str]) -> None:
    python = conda_venv(tmp_path, make_venv, "cpu-build")
    done = torch_install("install", "--python", str(python), env=environ)
    assert done.returncode == 3 and "conda manages torch here" in done.stderr
    assert "'pytorch=2.13.0=cuda129_*' cuda-version=12.9" in done.stderr
    site = next(python.parent.parent.glob("lib/python3*/site-packages"))
    assert [p.name for p in site.glob("torch-*.dist-info")] == ["torch-2.13.0.dist-info"]  # pip never ran


def test_installer_pip_replaces_condas_torch_knowingly_and_the_doctor_says_so(
        tmp_path: Path, make_venv, environ: dict[str, str], httpserver: object) -> None:
    """--installer pip over conda's torch: pip installs (from a loopback copy of PyTorch's index), and the doctor
    then names the pip torch over conda's pytorch, with conda's command to put conda's back."""
    from wheels import build_wheel

    python = conda_venv(tmp_path, make_venv, "cuda129-healthy")
    base = httpserver.url_for("/whl").rstrip("/")  # type: ignore[attr-defined]
    common = ["install", "--python", str(python), "--variant", "cpu", "--index-base", base, "torch"]
    env = {**environ, "PIP_CONFIG_FILE": "/dev/null", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    dry = torch_install(*common, "--installer", "pip", "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    version = next(w for w in dry.stdout.split() if w.startswith("torch==")).split("==")[1]
    wheel = build_wheel(tmp_path, "torch", version)
    httpserver.expect_request(f"/whl/cpu/{wheel.name}").respond_with_data(  # type: ignore[attr-defined]
        wheel.read_bytes(), content_type="application/octet-stream")
    page = f'<!DOCTYPE html><html><body><a href="/whl/cpu/{wheel.name}">{wheel.name}</a></body></html>'
    httpserver.expect_request("/whl/cpu/torch/").respond_with_data(page, content_type="text/html")  # type: ignore[attr-defined]
    stopped = torch_install(*common, env=env)
    assert stopped.returncode == 3 and "conda manages torch here" in stopped.stderr  # without the flag: never
    done = torch_install(*common, "--installer", "pip", env=env)
    assert done.returncode == 0, done.stderr
    site = next(python.parent.parent.glob("lib/python3*/site-packages"))
    assert [p.name for p in site.glob("torch-*.dist-info")] == [f"torch-{version}.dist-info"]
    report = json.loads(torch_install("doctor", "--python", str(python), "--json", env=env).stdout)
    found = next(f for f in report["findings"] if f["code"] == "pip-torch-over-conda-torch")
    assert "conda install --prefix" in found["fix"] and "--force-reinstall" in found["fix"]
