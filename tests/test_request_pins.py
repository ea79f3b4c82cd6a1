"""A pin means what pip means: a local label names the build (honoured where it runs, a blocker naming what would
run where it does not), a pinned pre-release takes the channel that has it, ``===`` and wildcards read as
packaging reads them; and every format the product writes reads back to the same plan."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.cli import main

ROOT = Path(__file__).resolve().parents[1]
PY = ["--python", "3.12"]
MACHINES = {  # every vendor, several platforms
    "nvidia-linux": ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06"],
    "nvidia-old-driver": ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "550.54.15"],
    "nvidia-windows": ["--os", "windows", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.88"],
    "amd-linux": ["--os", "linux", "--arch", "x86_64", "--gpu", "MI300X", "--rocm", "6.4"],
    "intel-linux": ["--os", "linux", "--arch", "x86_64", "--gpu", "Arc B580"],
    "intel-windows": ["--os", "windows", "--arch", "x86_64", "--gpu", "Arc B580"],
    "cpu-linux": ["--os", "linux", "--arch", "x86_64"],
    "cpu-aarch64": ["--os", "linux", "--arch", "aarch64"],
    "cpu-windows": ["--os", "windows", "--arch", "x86_64"],
    "macos": ["--os", "macos", "--arch", "arm64"],
}
REQUESTS = {"family": ["torch", "torchvision", "numpy"], "older": ["torch<2.10", "torchaudio", "numpy"],
            "xformers": ["torch", "xformers", "numpy"], "family alone": ["torch", "torchvision"],
            "older than the matrix": ["torch==1.13.1", "torchvision", "numpy"],
            "newer than the matrix": ["torch==2.16.0", "torchaudio"]}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = run(capsys, "plan", *argv, "--format", "json")
    assert code in (0, 4), err
    return json.loads(out)


def build(p: dict) -> tuple | None:
    """The build a plan chose: torch, variant, index, packages, and the companions it installs (one left out of
    the commands is not in what they write, so not in what reads back)."""
    c = p["choice"]
    return (c["torch"], c["variant"], c["index_url"], c["packages"],
            [(x["name"], x["version"], x["from"]) for x in c["companions"] if x["from"] != "left-out"]) if c else None


def requirements_of(command: str) -> list[str]:
    """The requirements a pip or uv command line installs, each once, in its steps' order (options left out)."""
    found: dict[str, str] = {}
    for step in command.split(" && "):
        words = shlex.split(step)
        rest = words[words.index("install") + 1:]
        skip = False
        for word in rest:
            if skip or word.startswith("-"):
                skip = word in ("--index-url", "--default-index", "--extra-index-url", "--find-links", "-f",
                                "--python") and not skip
                continue
            found.setdefault(word.split("=")[0].split("<")[0].split(">")[0].split(" @")[0], word)
    return list(found.values())


@pytest.mark.parametrize("request_name", REQUESTS)
@pytest.mark.parametrize("machine", MACHINES)
def test_every_format_the_product_writes_reads_back_to_the_same_plan(
        machine: str, request_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = [*MACHINES[machine], *PY]
    asked = REQUESTS[request_name]
    first = plan(capsys, *target, *asked)
    if first["choice"] is None:
        pytest.skip("no build to write")  # a vendor without this release on the platform: nothing is written
    expected = build(first)
    readings: dict[str, list[str]] = {}
    for fmt in ("requirements", "constraints", "pyproject"):
        code, out, err = run(capsys, "plan", *target, *asked, "--format", fmt)
        assert code == 0, err
        (tmp_path / fmt).mkdir()
        name = "pyproject.toml" if fmt == "pyproject" else f"{fmt}.txt"
        (tmp_path / fmt / name).write_text(out)
        readings[fmt] = {"requirements": ["-r", str(tmp_path / fmt / name)],
                         "constraints": [*asked, "-c", str(tmp_path / fmt / name)],
                         "pyproject": ["--project", str(tmp_path / fmt)]}[fmt]
    for installer in ("pip", "uv"):
        readings[installer] = requirements_of(first["commands"][installer])
    steps = first["commands"]["pip"].count(" && ")
    for fmt, argv in readings.items():
        again = plan(capsys, *target, *argv)
        assert build(again) == expected, (fmt, argv)
        assert again["commands"]["pip"].count(" && ") == steps, (fmt, again["commands"]["pip"])  # no step more


@pytest.mark.parametrize(("argv", "torch", "variant", "gpu"), [
    ([*MACHINES["nvidia-linux"], "torch==2.9.1+cu128"], "2.9.1", "cu128", True),
    ([*MACHINES["nvidia-linux"], "torch==2.9.1+cu126", "torchvision==0.24.1+cu126"], "2.9.1", "cu126", True),
    ([*MACHINES["nvidia-linux"], "torch==2.5.1+cpu"], "2.5.1", "cpu", False),
    ([*MACHINES["cpu-linux"], "torch==2.5.1+cpu"], "2.5.1", "cpu", False),
    ([*MACHINES["cpu-linux"], "Torch == 2.6.0+CPU"], "2.6.0", "cpu", False),
    ([*MACHINES["nvidia-linux"], "torch===2.8.0+cu128"], "2.8.0", "cu128", True),
    ([*MACHINES["cpu-linux"], "torchvision==0.24.1+cpu"], "2.9.1", "cpu", False),
    ([*MACHINES["amd-linux"], "torch==2.9.1+rocm6.4"], "2.9.1", "rocm6.4", True),
])
def test_a_local_label_names_the_build_the_plan_installs(argv: list[str], torch: str, variant: str, gpu: bool,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *argv, *PY)
    assert (p["choice"]["torch"], p["choice"]["variant"], p["gpu_accelerated"]) == (torch, variant, gpu)
    assert not [w for w in p["warnings"] if w["blocking"]]
    assert f"torch=={torch}+{variant}" in p["commands"]["pip"]


@pytest.mark.parametrize(("argv", "code", "runs"), [
    ([*MACHINES["cpu-linux"], "torch==2.9.1+cu128"], "gpu-arch-unsupported", "torch 2.9.1+cpu runs here on the CPU"),
    ([*MACHINES["nvidia-linux"], "torch==2.9.1+rocm6.4"], "gpu-arch-unsupported",
     "torch 2.9.1+cu128 runs here on the GPU"),
    ([*MACHINES["nvidia-linux"], "torch==2.9.1+cu999"], "platform-unsupported", "torch 2.9.1+cu128 runs here"),
    ([*MACHINES["cpu-windows"], "torch==2.9.1+rocm6.4"], "platform-unsupported", "torch 2.9.1+cpu runs here"),
    ([*MACHINES["macos"], "torch==2.9.1+cu128"], "platform-unsupported",
     "torch 2.9.1 (the default index's wheel) runs here"),
])
def test_a_labelled_build_that_does_not_run_is_a_blocker_naming_what_would(
        argv: list[str], code: str, runs: str, capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *argv, *PY)
    blockers = [w for w in p["warnings"] if w["code"] == code and w["about"] == "choice"]
    assert blockers and blockers[0]["blocking"] and runs in blockers[0]["message"], p["warnings"]
    assert all("no torch release" not in w["message"] for w in p["warnings"])


@pytest.mark.parametrize(("argv", "expected"), [
    (["torch==2.9.1+cu128", "torchvision==0.24.1+cpu"],
     "torch==2.9.1+cu128 and torchvision==0.24.1+cpu name two builds (cu128, cpu)"),
    (["torch==2.9.1+cu128", "--variant", "cpu"], "--variant cpu and torch==2.9.1+cu128 name two builds"),
    (["torch==2.9.1+git1234"], "torch==2.9.1+git1234: the local label 'git1234' names no wheel variant"),
])
def test_labels_that_cannot_be_one_build_are_one_input_error(argv: list[str], expected: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "plan", *MACHINES["cpu-linux"], *PY, *argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and expected in err, err


@pytest.mark.parametrize(("pin", "channel", "index"), [
    ("torch==2.16.0rc1", "test", "https://download.pytorch.org/whl/test/cpu"),
    ("torch==2.10.0rc2", "test", "https://download.pytorch.org/whl/test/cpu"),
    ("torch==2.16.0.dev20260101", "nightly", "https://download.pytorch.org/whl/nightly/cpu"),
])
def test_a_pinned_pre_release_comes_from_the_channel_that_has_it(pin: str, channel: str, index: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *MACHINES["cpu-linux"], *PY, pin)
    assert p["request"]["channel"] == channel and p["choice"]["index_url"] == index
    assert pin in p["commands"]["pip"] and any(channel in n for n in p["notes"])


def test_a_release_candidates_rules_are_those_of_its_release(capsys: pytest.CaptureFixture[str]) -> None:
    """torch 2.10.0rc2 on an sm_60 GPU: the rules of 2.10.0 (whose CUDA 12.6 build still has sm_60 kernels)."""
    p = plan(capsys, *MACHINES["cpu-linux"], *PY, "torch==2.10.0rc2", "--variant", "cu126")
    assert p["choice"]["torch"] == "2.10.0"


@pytest.mark.parametrize(("pin", "torch"), [("torch==2.8.*", "2.8.0"), ("torch===2.7.1", "2.7.1"),
                                            ("torch~=2.6.0", "2.6.0"), ("torch>=2.4,<2.5,!=2.4.1", "2.4.0")])
def test_specifiers_read_as_packaging_reads_them(pin: str, torch: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert plan(capsys, *MACHINES["cpu-linux"], *PY, pin)["choice"]["torch"] == torch


@pytest.mark.slow
def test_the_console_script_reads_back_its_own_requirements_and_constraints(tmp_path: Path) -> None:
    """The installed command, as a user runs it: its --format requirements and constraints read back with -r and
    -c, and a labelled pin on the command line, each exit 0."""
    env = {**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none"}
    target = ["--os", "linux", "--arch", "x86_64", "--python", "3.12"]

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "torch_install", "plan", *target, *argv], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=60, check=False)

    (tmp_path / "req.txt").write_text(cli("--format", "requirements").stdout)
    (tmp_path / "con.txt").write_text(cli("--format", "constraints").stdout)
    for argv in (["-r", "req.txt"], ["-c", "con.txt"], ["torch==2.15.0+cpu"]):
        done = cli(*argv)
        assert done.returncode == 0, (argv, done.stderr)
        assert "torch==2.15.0+cpu" in done.stdout


@pytest.mark.parametrize("pin", ["torch==2.0.1+cu117.with.pypi.cudnn", "torch @ https://download.pytorch.org/whl/"
                                 "cu117_pypi_cudnn/torch-2.0.1%2Bcu117.with.pypi.cudnn-cp39-cp39-linux_x86_64.whl"])
def test_a_label_with_parts_after_its_variant_names_that_variants_build(
        pin: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The PyTorch index published torch 1.13 and 2.0 as ``+cu117.with.pypi.cudnn`` too (cuDNN from the default
    index): the cu117 build; a pin is planned as the index's cu117 build and says so, a wheel is installed as given."""
    found = plan(capsys, *MACHINES["nvidia-linux"], "--python", "3.9", pin)
    assert (found["choice"]["torch"], found["choice"]["variant"]) == ("2.0.1", "cu117")
    if "@" in pin:
        assert found["choice"]["references"]["torch"] == pin
    else:
        assert any(n.startswith(f"{pin}: the cu117 build, packaged another way") for n in found["notes"])
