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
        assert "torch-install-cu130" in out and "darwin" not in out  # the Mac takes the default index's build
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


# ---- targets of one profile share their work -------------------------------------------------------------------

PROFILES = [{**LINUX, "nvidia_driver": driver, "gpus": [{"vendor": "nvidia", "name": name}]}
            for name in ("NVIDIA GeForce RTX 4090", "Tesla V100", "GeForce GTX 1080") for driver in ("550.54.15",
                                                                                                  "580.65.06")]


def expanded(items: list[dict]) -> list[dict]:
    """A fleet answer's plans with each ``{"same_as": N}`` read as the plan it names."""
    out: list[dict] = []
    for item in items:
        out.append(out[item["same_as"]] if "same_as" in item else item)
    return out


def reasons(candidate: dict) -> dict[int, str]:
    """machine -> why the candidate breaks it, a ``{"machine": M, "same_as": N}`` read as machine N's."""
    found: dict[int, str] = {}
    for problem in candidate["problems"]:
        found[problem["machine"]] = found[problem["same_as"]] if "same_as" in problem else problem["reason"]
    return found


def test_the_targets_of_one_profile_are_resolved_once_each_build(monkeypatch: pytest.MonkeyPatch) -> None:
    from torch_install import fleet
    from torch_install.machine import machine_from_dict
    from torch_install.machine_completion import complete_machine
    from torch_install.resolver.choose import resolve
    from torch_install.resolver.matrix import load_matrix
    from torch_install.resolver.plan import Request

    made: list[tuple] = []

    def counting(machine, request, matrix):  # noqa: ANN001, ANN202
        made.append((machine.nvidia_driver, machine.gpus[0].name, request.variant))
        return resolve(machine, request, matrix)

    machines = [complete_machine(machine_from_dict(PROFILES[i % 6])) for i in range(20)]
    result = fleet.resolve_fleet(machines, Request(), load_matrix(), fleet.SharedResolves(counting))
    assert len(made) == len(set(made)) == 6 * len(result.candidates) + 6  # each profile: its own, then each build
    alone = fleet.resolve_fleet(machines, Request(), load_matrix(), resolve)  # nothing shared
    assert [p.to_dict() for p in result.own] == [p.to_dict() for p in alone.own]
    assert [p.to_dict() for p in result.plans] == [p.to_dict() for p in alone.plans]
    assert result.candidates == alone.candidates


def test_the_json_answer_grows_with_the_distinct_profiles_and_reads_as_every_targets(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answers = {}
    for count in (6, 30):
        assert main(["plan", *targets(tmp_path, *(PROFILES[i % 6] for i in range(count))), "--format", "json"]) == 0
        text = capsys.readouterr().out
        answers[count] = json.loads(text)
        assert text.count("\n") <= 1  # one line, unless --indent
    six, thirty = answers[6], answers[30]
    assert len(json.dumps(thirty)) < 1.1 * len(json.dumps(six))
    assert [t["machine"] for t in expanded(thirty["targets"])] == [six["targets"][i % 6]["machine"] for i in range(30)]
    for key in ("targets", "plans"):
        assert expanded(thirty[key]) == [six[key][i % 6] for i in range(30)]
        assert all("same_as" not in entry for entry in thirty[key][:6])
    assert [c["torch"] for c in thirty["candidates"]] == [c["torch"] for c in six["candidates"]]
    for many, few in zip(thirty["candidates"], six["candidates"], strict=True):
        assert reasons(many) == {m: reasons(few)[m % 6] for m in range(30) if m % 6 in reasons(few)}
    assert any(reasons(c) for c in six["candidates"])
    assert main(["plan", *targets(tmp_path, *PROFILES[:2], PROFILES[0]), "--format", "json", "--indent", "2"]) == 0
    indented = capsys.readouterr().out
    assert indented.startswith('{\n  "choice": ') and json.loads(indented)["targets"][2] == {"same_as": 0}


def test_indent_goes_with_json_and_indents_one_target_as_asked(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    one = targets(tmp_path, LINUX)
    assert main(["plan", *one, "--format", "json"]) == 0
    default = capsys.readouterr().out
    assert main(["plan", *one, "--format", "json", "--indent", "4"]) == 0
    four = capsys.readouterr().out
    assert json.loads(four) == json.loads(default) and four.startswith('{\n    "') and default.startswith('{\n  "')
    assert main(["plan", *one, "--indent", "2"]) == 2
    assert "--indent goes with --format json" in capsys.readouterr().err
