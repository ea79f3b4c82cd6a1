"""`--format requirements --hashes` with real pip's --require-hashes: the file is accepted as it is when the
torch family is the whole install, and its comment states the limit (dependencies need hashes too) that real
pip then enforces."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest


def _wheel(directory: Path, version: str, requires: str = "") -> Path:
    dist_info = f"torch-{version.split('+')[0]}.dist-info"
    members = {"torch/__init__.py": f"__version__ = {version!r}\n".encode(),
               f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n{requires}".encode(),
               f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    path = directory / f"torch-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
        archive.writestr(f"{dist_info}/RECORD", "".join(f"{m},,\n" for m in members) + f"{dist_info}/RECORD,,\n")
    return path


@pytest.fixture
def python(tmp_path: Path) -> Path:
    path = tmp_path / "env"
    venv.EnvBuilder(with_pip=True).create(path)
    return path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@pytest.mark.parametrize("requires", ["", "Requires-Dist: filelock\n"], ids=["no dependency", "a dependency"])
def test_require_hashes_accepts_the_file_or_the_comment_says_why_not(httpserver, tmp_path: Path, python: Path,
                                                                      requires: str) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "PIP_CONFIG_FILE": os.devnull,
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "TORCH_INSTALL_DEFAULT_INDEX": "none",
           "TORCH_INSTALL_CACHE_DIR": str(tmp_path / "cache")}
    base = httpserver.url_for("/whl").rstrip("/")
    plan = [sys.executable, "-m", "torch_install", "plan", "--variant", "cpu", "--index-base", base, "--os", "linux",
            "--arch", "x86_64", "--python", ".".join(map(str, sys.version_info[:2])), "--format", "requirements"]
    pin = next(line for line in subprocess.run(plan, capture_output=True, text=True, env=env,
                                               check=True).stdout.splitlines() if line.startswith("torch=="))
    wheel = _wheel(tmp_path, pin.split("==")[1], requires)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    httpserver.expect_request(f"/whl/cpu/files/{wheel.name}").respond_with_data(wheel.read_bytes())
    httpserver.expect_request("/whl/cpu/torch/").respond_with_data(
        f'<a href="/whl/cpu/files/{wheel.name}#sha256={digest}">{wheel.name}</a>', content_type="text/html")
    if requires:  # the dependency is on the index too: what pip then lacks is only its hash
        dep = tmp_path / "filelock-3.0.0-py3-none-any.whl"
        with zipfile.ZipFile(dep, "w") as archive:
            archive.writestr("filelock/__init__.py", "")
            archive.writestr("filelock-3.0.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: filelock\n"
                             "Version: 3.0.0\n")
            archive.writestr("filelock-3.0.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\n"
                             "Root-Is-Purelib: true\nTag: py3-none-any\n")
            archive.writestr("filelock-3.0.0.dist-info/RECORD", "")
        httpserver.expect_request(f"/whl/cpu/files/{dep.name}").respond_with_data(dep.read_bytes())
        httpserver.expect_request("/whl/cpu/filelock/").respond_with_data(
            f'<a href="/whl/cpu/files/{dep.name}">{dep.name}</a>', content_type="text/html")
    done = subprocess.run([*plan, "--hashes"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(done.stdout)
    assert f"--hash=sha256:{digest}" in done.stdout
    assert "uv pip compile --generate-hashes" in done.stdout  # the limit, in the file itself
    installed = subprocess.run([str(python), "-m", "pip", "install", "--no-cache-dir", "--require-hashes", "-r",
                                str(requirements)], capture_output=True, text=True, env=env)
    if requires:  # real pip enforces what the comment says: the dependency has no hash in the file
        said = installed.stdout + installed.stderr
        assert installed.returncode != 0 and "In --require-hashes mode, all requirements must" in said, said
        assert "filelock" in said
    else:
        assert installed.returncode == 0, installed.stderr
