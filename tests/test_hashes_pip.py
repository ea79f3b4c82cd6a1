"""`--format requirements --hashes` with real pip's --require-hashes: the file is accepted as it is when the
torch family is the whole install, and its comment states the limit (dependencies need hashes too) that real
pip then enforces."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wheels import build_wheel, serve_wheels

pytestmark = pytest.mark.slow  # real pip, uv, venvs or processes


@pytest.fixture
def python(tmp_path: Path, make_venv) -> Path:
    return make_venv(tmp_path / "env")


@pytest.mark.parametrize("requires", [[], ["filelock"]], ids=["no dependency", "a dependency"])
def test_require_hashes_accepts_the_file_or_the_comment_says_why_not(httpserver, tmp_path: Path, python: Path,
                                                                      requires: list[str]) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "PIP_CONFIG_FILE": os.devnull,
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "TORCH_INSTALL_DEFAULT_INDEX": "none",
           "TORCH_INSTALL_CACHE_DIR": str(tmp_path / "cache")}
    base = httpserver.url_for("/whl").rstrip("/")
    plan = [sys.executable, "-m", "torch_install", "plan", "--variant", "cpu", "--index-base", base, "--os", "linux",
            "--arch", "x86_64", "--python", ".".join(map(str, sys.version_info[:2])), "--format", "requirements"]
    pin = next(line for line in subprocess.run(plan, capture_output=True, text=True, env=env,
                                               check=True).stdout.splitlines() if line.startswith("torch=="))
    wheel = build_wheel(tmp_path, "torch", pin.split("==")[1], requires=requires)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    # with a dependency, it is on the index too: what pip then lacks is only its pin and hash
    serve_wheels(httpserver, "/whl/cpu", [wheel, *([build_wheel(tmp_path, "filelock", "3.0.0")] if requires else [])])
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


def test_real_pip_refuses_a_hashed_lock_with_an_unhashed_line_as_the_product_says(
        tmp_path: Path, python: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A lock where one line has no --hash: real pip refuses the whole file; the product's plan says so, and its
    install refuses it before anything runs, with the same line named."""
    from torch_install.cli import main

    hashed = build_wheel(tmp_path, "alpha", "1.0")
    build_wheel(tmp_path, "beta", "1.0")  # on the page: what pip lacks is only its hash
    lock = tmp_path / "lock.txt"
    lock.write_text(f"alpha==1.0 --hash=sha256:{hashlib.sha256(hashed.read_bytes()).hexdigest()}\nbeta==1.0\n")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "PIP_CONFIG_FILE": os.devnull,
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    refused = subprocess.run([str(python), "-m", "pip", "install", "--no-index", "--find-links", str(tmp_path), "-r",
                              str(lock)], capture_output=True, text=True, env=env)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "beta==1.0" in said and "Hashes are required" in said, said
    assert main(["plan", "--variant", "cpu", "--os", "linux", "--arch", "x86_64", "-r", str(lock)]) == 0
    warned = capsys.readouterr().err
    assert "warning: [hash-missing]" in warned and "beta==1.0 (" in warned
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    assert main(["install", "--variant", "cpu", "--python", str(python), "-r", str(lock)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("torch-install: error: the hashed lock has 1 line without --hash (beta==1.0 (") and \
        "nothing was installed" in err
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format", "freeze"], capture_output=True, text=True,
                            env=env).stdout
    assert "alpha" not in listed and "torch" not in listed
