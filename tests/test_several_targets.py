"""Several --target profiles: every format answers every target (text and JSON each target's plan and what they
share, commands one block each, project files each target under its platform marker), and a Mac in the set is
one more target, never an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.cli import main

LINUX = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35", "nvidia_driver": "580.65.06",
         "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090"}]}
MAC = {"os": "macos", "arch": "arm64", "python": "3.12", "os_version": "14.5"}
WINDOWS = {"os": "windows", "arch": "x86_64", "python": "3.12"}


def targets(tmp_path: Path, *profiles: dict) -> list[str]:
    argv = []
    for i, profile in enumerate(profiles):
        path = tmp_path / f"target{i}.json"
        path.write_text(json.dumps(profile))
        argv += ["--target", str(path)]
    return argv


@pytest.mark.parametrize("fmt", ["text", "json", "pip", "uv", "url", "requirements", "constraints", "pyproject",
                                 "variant-env"])
def test_a_mac_beside_a_linux_gpu_box_gets_its_own_answer_in_every_format(fmt: str, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", *targets(tmp_path, LINUX, MAC), "torch", "numpy<2", "--format", fmt])
    out, err = capsys.readouterr()
    assert code == 0, err
    if fmt == "json":
        plans = json.loads(out)["targets"]
        assert [p["choice"]["variant"] for p in plans] == ["cu130", "default"]
    elif fmt == "pyproject":
        assert "pytorch-cu130" in out and "darwin" not in out  # the Mac takes the default index's build
    elif fmt in ("requirements", "constraints"):
        assert "torch==2.15.0+cu130 ; sys_platform == 'linux'" in out
        assert "torch==2.15.0 ; sys_platform == 'darwin'" in out and out.count("numpy<2") == 1
    elif fmt == "url":
        assert "https://download.pytorch.org/whl/cu130" in out and "# target 2" in out
    else:
        assert "cu130" in out and ("torch==2.15.0 " in out or "macos arm64" in out), out


def test_an_image_serves_the_linux_targets_and_says_which_it_left_out(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *targets(tmp_path, LINUX, MAC, WINDOWS), "--format", "dockerfile"]) == 0
    out, err = capsys.readouterr()
    assert "RUN python3 -m pip install --no-cache-dir torch==2.15.0+cu130" in out
    assert "target 2 (macos arm64): left out of the image" in err and "target 3 (windows x86_64): left out" in err


@pytest.mark.parametrize("profiles", [[MAC], [MAC, WINDOWS]])
def test_a_dockerfile_for_no_linux_target_is_one_line_exit_2(profiles: list[dict], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *targets(tmp_path, *profiles), "--format", "dockerfile"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip().splitlines()[-1].startswith("torch-install: error: --format dockerfile: ")


def test_a_gpu_box_and_a_laptop_each_get_their_build_and_the_shared_one_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *targets(tmp_path, LINUX, WINDOWS)]) == 0
    out = capsys.readouterr().out
    assert "Target 1: machine 1 (NVIDIA GeForce RTX 4090" in out and "variant cu130 (GPU)" in out
    assert "Target 2: machine 2 (no GPU)" in out and "variant cpu (CPU only)" in out
    assert "Shared:   torch 2.15.0, variant cpu" in out and "the GPU targets get their own build above" in out
    assert main(["plan", *targets(tmp_path, LINUX, WINDOWS), "--strict"]) == 1  # a CPU build shared by a GPU box
