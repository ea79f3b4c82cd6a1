"""Where no requirement names torch, pip and uv take the named packages' newest releases first and torch as they
need it: a package built against torch at its newest release the request allows decides torch, not the newest
torch that one of its old, open-ended releases would also take (vLLM 0.2.5 declares torch>=2.1.1 and was built
against 2.1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.cli import main
from wheels import build_wheel

GPU = ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06", "--python", "3.10",
       "--offline", "--format", "json"]


def plan(tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: str) -> dict:
    (tmp_path / "requirements.txt").write_text(lines)
    assert main(["plan", "-r", str(tmp_path / "requirements.txt"), *GPU]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_packages_newest_release_decides_torch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = plan(tmp_path, capsys, "vllm<=0.6.3\nnumpy\n")
    assert found["choice"]["torch"] == "2.4.0"  # vllm 0.6.3 requires torch==2.4.0
    assert "vllm==0.6.3" in found["commands"]["pip"]
    held = next(w for w in found["warnings"] if w["code"] == "constrained-by")
    assert held["message"].startswith("vllm<=0.6.3 (") and "at 0.6.3: the newest release the request allows goes " \
        "with torch 2.4.0, taken as pip and uv take a package's newest release first" in held["message"]


def test_a_torch_the_project_names_is_still_the_newest_that_fits(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """With torch named, the newest torch a requested package's release goes with is taken, as before."""
    named = plan(tmp_path, capsys, "torch\nvllm<=0.6.3\n")
    implied = plan(tmp_path, capsys, "vllm<=0.6.3\n")
    assert named["choice"]["torch"] != implied["choice"]["torch"] == "2.4.0"


@pytest.mark.slow
def test_real_pip_takes_the_packages_newest_release_first(tmp_path: Path) -> None:
    """pip's own resolver, over wheels with vLLM's declared requirements, takes the same pair the plan takes."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for version in ("2.4.0", "2.14.1"):
        build_wheel(wheels, "torch", version)
    build_wheel(wheels, "vllm", "0.6.3", requires=["torch==2.4.0"])
    build_wheel(wheels, "vllm", "0.2.5", requires=["torch>=2.1.1"])
    report = tmp_path / "report.json"
    subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--no-index", "--find-links",
                    str(wheels), "--report", str(report), "--ignore-installed", "vllm<=0.6.3"], check=True,
                   capture_output=True, timeout=120, env={"PIP_CONFIG_FILE": "/dev/null", "PATH": "/usr/bin:/bin"})
    installs = json.loads(report.read_text())["install"]
    chosen = {item["metadata"]["name"]: item["metadata"]["version"] for item in installs}
    assert chosen == {"vllm": "0.6.3", "torch": "2.4.0"}
