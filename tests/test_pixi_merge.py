"""--format pixi --merge pixi.toml: the build's entries merged into a user's pixi manifest, the rest of the file kept
as written; the result held to pixi's schema and solved by py-rattler for every platform it declares; merging
again changes nothing; a layout the merge cannot decide for is one line and exit 2, the file untouched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conda_channel import need_rattler, solve, virtual_packages, write_channel
from pixi_manifest import declared, manifest, pixi_specs, tables
from torch_install.cli import main

LINUX = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35", "nvidia_driver": "560.35.03",
         "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"}]}
MAC = {"os": "macos", "arch": "arm64", "python": "3.12", "os_version": "14.5"}
# the shape of pixi's own PyTorch guide manifest (docs/python/pytorch.md): conda-forge's selector package, the
# deprecated [system-requirements] table, a task and comments that are the user's
GUIDE = """\
# the project's manifest
[workspace]
name = "pytorch-conda-forge"
channels = ["conda-forge"]
platforms = ["linux-64", "osx-arm64"]

[system-requirements]
cuda = "12.0"

[dependencies]
python = ">=3.11"  # any current Python
pytorch-gpu = "*"
numpy = "*"

[tasks]
check = "python -c 'import torch; print(torch.cuda.is_available())'"
"""


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_channel(tmp_path_factory.mktemp("conda-forge"))


def merge(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *machines: dict[str, Any],
          packages: tuple[str, ...] = ("torch", "torchvision"), extra: tuple[str, ...] = (),
          name: str = "pixi.toml") -> tuple[int, str, str]:
    """Run the merge into a file holding ``text``: (exit code, the file after, stderr)."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    argv = ["plan", *packages, "--merge", str(path), *extra]
    for i, machine in enumerate(machines):
        (tmp_path / f"target{i}.json").write_text(json.dumps(machine))
        argv += ["--target", str(tmp_path / f"target{i}.json")]
    code = main(argv)
    after, err = path.read_text(encoding="utf-8"), capsys.readouterr().err
    if code == 0:  # merging again changes nothing
        assert main(argv) == 0 and "nothing to change" in capsys.readouterr().err
        assert path.read_text(encoding="utf-8") == after
    return code, after, err


def solves_everywhere(data: dict[str, Any], channel: Path) -> dict[str, str]:
    """platform name -> the pytorch build py-rattler solves for it, with the virtual packages it declares."""
    need_rattler()
    out = {}
    for platform in data["workspace"]["platforms"]:
        subdir, specs = pixi_specs(data, platform)
        have = declared(platform)
        solved = solve(channel, subdir, specs, virtual_packages(subdir, have["cuda"], glibc=have["glibc"],
                                                                 macos=have["macos"]))
        out[platform if isinstance(platform, str) else platform["name"]] = str(solved["pytorch"].build)
    return out


def test_the_guides_manifest_gets_each_platforms_build_and_keeps_the_rest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], channel: Path) -> None:
    code, after, err = merge(tmp_path, capsys, GUIDE, LINUX, MAC, extra=("--format", "pixi"))
    assert code == 0, err
    data = manifest(after)
    assert data["workspace"]["platforms"] == [{"name": "linux-64-cuda12", "platform": "linux-64", "cuda": "12.6"},
                                              "osx-arm64"]
    assert "system-requirements" not in data  # pixi refuses it beside a platform that declares CUDA
    assert data["workspace"]["requires-pixi"] == ">=0.71.0"
    assert data["dependencies"] == {"python": ">=3.11", "numpy": "*"}  # the user's python stays
    assert tables(data, "osx-arm64")["pytorch"] == {"version": "==2.13.0", "build": "cpu_*"}
    assert "pytorch-gpu" not in tables(data, "osx-arm64")  # it would select a CUDA build on the Mac
    builds = solves_everywhere(data, channel)
    assert builds["linux-64-cuda12"].startswith("cuda129_") and builds["osx-arm64"].startswith("cpu_")
    for kept in ("# the project's manifest\n", "python = \">=3.11\"  # any current Python\n", "[tasks]\n",
                 "check = \"python -c 'import torch; print(torch.cuda.is_available())'\"\n"):
        assert kept in after
    assert "system-requirements: moved onto the platforms" in err
    assert "pytorch-gpu (removed: it selects CUDA builds)" in err


def test_a_file_named_pixi_toml_takes_the_pixi_merge_without_format(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, after, err = merge(tmp_path, capsys, GUIDE, LINUX)
    assert code == 0, err
    data = manifest(after)
    linux = data["workspace"]["platforms"][0]
    assert tables(data, linux)["pytorch"] == {"version": "==2.13.0", "build": "cuda129_*"}
    assert tables(data, "osx-arm64") == {"python": ">=3.11", "pytorch-gpu": "*", "numpy": "*"}  # not a target


def test_another_platform_of_the_file_keeps_its_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         channel: Path) -> None:
    text = ('[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64", "win-64"]\n\n'
            '[dependencies]\npytorch = "2.12.*"\n')
    code, after, err = merge(tmp_path, capsys, text, LINUX, extra=("--format", "pixi"))
    assert code == 0, err
    data = manifest(after)
    assert data["workspace"]["platforms"][1] == "win-64" and data["dependencies"] == {"pytorch": "2.12.*"}
    assert tables(data, data["workspace"]["platforms"][0])["pytorch"] == {"version": "==2.13.0",
                                                                         "build": "cuda129_*"}
    assert tables(data, "win-64")["pytorch"] == "2.12.*"
    assert solves_everywhere(data, channel)["linux-64-cuda12"].startswith("cuda129_")


def test_conda_forge_after_another_channel_is_named_in_each_spec(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = '[workspace]\nchannels = ["nvidia"]\nplatforms = [\n  "linux-64",  # the server\n]\n'
    code, after, err = merge(tmp_path, capsys, text, LINUX, packages=("torch",), extra=("--format", "pixi"))
    assert code == 0, err
    data = manifest(after)
    assert data["workspace"]["channels"] == ["nvidia", "conda-forge"]
    assert data["dependencies"]["pytorch"]["channel"] == "conda-forge"
    assert data["dependencies"]["cuda-version"] == {"version": "12.9.*", "channel": "conda-forge"}
    assert "# the server" in after


def test_pytorch_index_wheels_replace_condas_pytorch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ('[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n[dependencies]\npython = "3.12.*"\n'
            'pytorch = "*"\n\n[pypi-dependencies]\ntransformers = ">=4"\n')
    code, after, err = merge(tmp_path, capsys, text, {**LINUX, "nvidia_driver": "580.82.07"},
                             packages=("torch", "transformers"),
                             extra=("--format", "pixi", "--torch-source", "pytorch-index"))
    assert code == 0, err
    data = manifest(after)
    assert "pytorch" not in data["dependencies"]
    torch = data["pypi-dependencies"]["torch"]
    assert torch["index"].startswith("https://download.pytorch.org/whl/cu13") and torch["version"].startswith("==2.")
    assert data["pypi-dependencies"]["transformers"] == ">=4"  # named already: not added again
    assert "pytorch (removed: torch comes from PyTorch's index)" in err


@pytest.mark.parametrize(("text", "message"), [
    ('[workspace]\nplatforms = ["linux-64"]\n\n[feature.gpu.dependencies]\npytorch-cpu = "*"\n',
     "feature.gpu.dependencies names pytorch-cpu: torch-install merges into the workspace's own tables"),
    ('[workspace]\nplatforms = ["linux-64", "linux-aarch64"]\n\n[target.linux.dependencies]\npytorch = "*"\n',
     "target.linux.dependencies names pytorch, and applies to linux-64-cuda12 and other platforms"),
    ('[workspace]\nplatforms = ["linux-64", "osx-arm64"]\n\n[pypi-dependencies]\ntorch = "*"\n',
     "pypi-dependencies.torch applies to every platform, and linux-64-cuda12 takes torch from conda-forge"),
    ('[project]\nplatforms = "linux-64"\n', "project.platforms is a string, not an array"),
    ('name = "x"\n', "no [workspace] table: not a pixi manifest"),
    ('[project]\nname = "x"\n\n[tool.pixi.workspace]\nplatforms = ["linux-64"]\n',
     "a pyproject.toml's [tool.pixi] tables are not merged"),
    ('[project]\nname = "x"\ndependencies = []\n', "no [workspace] table: not a pixi manifest"),
    ('[workspace]\nplatforms = ["linux-64"]\n\n[feature.gpu.system-requirements]\ncuda = "12"\n',
     "feature.gpu.system-requirements: pixi's deprecated form"),
])
def test_a_layout_the_merge_cannot_decide_for_is_one_line_and_exit_2(
        text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, after, err = merge(tmp_path, capsys, text, LINUX, extra=("--format", "pixi"))
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert after == text


def test_a_missing_file_is_exit_2_and_not_made(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "--format", "pixi", "--merge", str(tmp_path / "pixi.toml"), "--os", "macos",
                 "--arch", "arm64"])
    assert code == 2 and "no such file (--format pixi prints a manifest to start one)" in capsys.readouterr().err
    assert not (tmp_path / "pixi.toml").exists()


def test_the_line_ends_and_a_project_read_of_the_same_file_are_kept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = GUIDE.replace("\n", "\r\n")
    path = tmp_path / "pixi.toml"
    path.write_bytes(text.encode())
    (tmp_path / "linux.json").write_text(json.dumps(LINUX))
    argv = ["plan", "--project", str(path), "--merge", str(path), "--target", str(tmp_path / "linux.json")]
    assert main(argv) == 0, capsys.readouterr().err
    after = path.read_bytes()
    assert after.count(b"\r\n") == after.count(b"\n")
    assert main(argv) == 0 and "nothing to change" in capsys.readouterr().err
    assert path.read_bytes() == after


CPU = {"os": "linux", "arch": "x86_64", "python": "3.11", "glibc": "2.35", "gpus": []}
ORIN = {"os": "linux", "arch": "aarch64", "python": "3.10", "glibc": "2.35", "jetson": "36.4.3",
        "cuda_driver_api": "12.6", "gpus": [{"vendor": "nvidia", "name": "Jetson AGX Orin", "compute_capability": "8.7",
                                             "family": "jetson-orin", "integrated": True}]}


@pytest.mark.parametrize(("machines", "extra"), [
    ((LINUX,), ()), ((MAC,), ()), ((LINUX, MAC), ()), ((LINUX, {**LINUX, "nvidia_driver": "580.82.07"}, CPU), ()),
    ((ORIN, CPU), ()), ((LINUX, MAC), ("--torch-source", "pytorch-index")),
], ids=["linux", "mac", "linux+mac", "three-linux", "orin+cpu", "pytorch-index"])
def test_what_format_pixi_writes_is_what_the_merge_keeps(machines: tuple[dict[str, Any], ...], extra: tuple[str, ...],
                                                         tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The merge and --format pixi make the same decisions: a manifest --format pixi wrote needs no change."""
    argv = ["plan", "torch", "torchvision", "--format", "pixi", *extra]
    for i, machine in enumerate(machines):
        (tmp_path / f"target{i}.json").write_text(json.dumps(machine))
        argv += ["--target", str(tmp_path / f"target{i}.json")]
    assert main(argv) == 0
    written = capsys.readouterr().out
    (tmp_path / "pixi.toml").write_text(written, encoding="utf-8")
    assert main([*argv, "--merge", str(tmp_path / "pixi.toml")]) == 0
    assert "nothing to change" in capsys.readouterr().err
    assert (tmp_path / "pixi.toml").read_text(encoding="utf-8") == written
    bare = "[workspace]\nchannels = [\"conda-forge\"]\n"  # from a manifest without platforms: the same tables
    code, after, err = merge(tmp_path, capsys, bare, *machines, extra=("--format", "pixi", *extra))
    assert code == 0, err
    assert manifest(after) == manifest(written)
