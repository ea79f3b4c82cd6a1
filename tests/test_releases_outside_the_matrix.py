"""A pinned torch release the compatibility matrix does not reach (older than its oldest, newer than its newest) is
planned on the facts of the nearest release it has, labelled assumed, from every file a project writes it in; a
release inside its range that it does not list does not exist, and stays an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.resolver.matrix import load_matrix

RTX = ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06"]
MATRIX = load_matrix()
OLDEST, NEWEST = MATRIX.releases[-1], MATRIX.releases[0]


def plan(capsys: pytest.CaptureFixture[str], *argv: str, python: str = "3.10") -> dict:
    code = main(["plan", *RTX, "--python", python, *argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def codes(found: dict) -> list[str]:
    return [w["code"] for w in found["warnings"]]


@pytest.mark.parametrize("where", ["command line", "requirements", "pyproject", "environment.yml", "pixi"])
@pytest.mark.parametrize(("pin", "variant"), [
    ("torch==1.13.1+cu117", "cu117"), ("torch==1.13.1+cpu", "cpu"),
    ("torch==1.13.1", OLDEST.pypi["linux_x86_64"]),  # the build the default index's wheel is, as older releases had
    ("torch==1.12.1+cu116", "cu116")])
def test_an_older_pin_is_planned_on_assumed_facts_from_every_file(
        pin: str, variant: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.txt").write_text(f"{pin}\nnumpy\n")
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\nversion = "0"\ndependencies = ["{pin}"]\n')
    (tmp_path / "environment.yml").write_text(f"name: x\ndependencies:\n  - python=3.10\n  - pip\n  - pip:\n"
                                              f"    - {pin}\n")
    version = pin.split("==")[1]
    (tmp_path / "pixi.toml").write_text('[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n'
                                        f'[pypi-dependencies]\ntorch = "=={version}"\n')
    argv = {"command line": [pin], "requirements": ["-r", "r.txt"], "pyproject": ["--project", "."],
            "environment.yml": ["--project", "environment.yml"], "pixi": ["--project", "pixi.toml"]}[where]
    found = plan(capsys, *argv)
    assert (found["choice"]["torch"], found["choice"]["variant"]) == (version.split("+")[0], variant)
    assert found["choice"]["index_url"].endswith(f"/whl/{variant}")
    assert "release-unknown" in codes(found) and not any(w["blocking"] for w in found["warnings"])
    message = next(w["message"] for w in found["warnings"] if w["code"] == "release-unknown")
    assert f"older than the releases of the compatibility matrix ({OLDEST.version}–{NEWEST.version})" in message
    assert variant == "cpu" or any(f"{version.split('+')[0]}+{variant}" in note and "assumed" in note
                                   for note in found["notes"])  # its CUDA architectures: the nearest's


def test_a_newer_pin_is_planned_as_the_newest_release_would_be(capsys: pytest.CaptureFixture[str]) -> None:
    later = f"{NEWEST.version.split('.')[0]}.{int(NEWEST.version.split('.')[1]) + 1}.0"
    found = plan(capsys, f"torch=={later}", python="3.12")
    newest = plan(capsys, f"torch=={NEWEST.version}", python="3.12")
    assert found["choice"]["torch"] == later
    assert (found["choice"]["variant"], found["gpu_accelerated"]) == (newest["choice"]["variant"],
                                                                    newest["gpu_accelerated"])
    message = next(w["message"] for w in found["warnings"] if w["code"] == "release-unknown")
    assert "newer than the releases" in message and "--online reads the index's" in message


def test_a_release_inside_the_range_that_the_matrix_does_not_list_is_an_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    listed = {r.version for r in MATRIX.releases}
    missing = next(f"2.{minor}.{patch}" for minor in range(20) for patch in range(1, 9)
                   if f"2.{minor}.{patch - 1}" in listed and f"2.{minor}.{patch}" not in listed)
    assert main(["plan", *RTX, f"torch=={missing}"]) == 2
    assert "no torch release in the compatibility matrix" in capsys.readouterr().err


def test_a_pyg_build_for_an_older_torch_takes_the_page_its_label_names(capsys: pytest.CaptureFixture[str]) -> None:
    found = plan(capsys, "torch==1.13.1", "torch-scatter==2.1.0+pt113cu117")
    assert (found["choice"]["torch"], found["choice"]["variant"]) == ("1.13.1", "cu117")
    scatter = next(c for c in found["choice"]["companions"] if c["name"] == "torch-scatter")
    assert "torch-1.13.0+cu117.html" in found["commands"]["pip"] and scatter["from"] == "find-links"
    assert codes(found).count("release-unknown") == 2


@pytest.mark.parametrize(("asked", "torch", "variant"), [
    (["torch<2"], "1.13.1", OLDEST.pypi["linux_x86_64"]),  # the newest earlier release the default index lists
    (["torch>=1.10,<1.13", "torchvision"], "1.12.1", OLDEST.pypi["linux_x86_64"]),
    (["torch~=1.9.0"], "1.9.1", OLDEST.pypi["linux_x86_64"]),
    (["torch", "torch-scatter==2.1.1+pt113cu117"], "1.13.1", "cu117"),  # the package's build decides torch's
    (["torch-sparse==0.6.15+pt112cu116"], "1.12.1", "cu116"),
    (["xformers==0.0.16"], "1.13.1", OLDEST.pypi["linux_x86_64"])])  # the table: its build needs ==1.13.1
def test_a_range_only_earlier_releases_meet_takes_the_newest_of_them(
        asked: list[str], torch: str, variant: str, capsys: pytest.CaptureFixture[str]) -> None:
    found = plan(capsys, *asked)
    assert (found["choice"]["torch"], found["choice"]["variant"]) == (torch, variant)
    assert found["choice"]["index_url"].endswith(f"/whl/{variant}")
    message = next(w["message"] for w in found["warnings"] if w["code"] == "release-unknown")
    assert message.startswith(f"torch {torch} is older than the releases of the compatibility matrix")
    assert f"torch=={torch}+{variant}" in found["commands"]["pip"]
    assert not any("packaged another way" in n for n in found["notes"])  # a PyG label is its own way of naming it


def test_a_range_no_release_meets_stays_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert MATRIX.earlier[-1] == "1.0.0"  # the default index lists no release before it
    assert main(["plan", *RTX, "torch<1"]) == 2
    assert "torch<1: no torch release in the compatibility matrix" in capsys.readouterr().err


def test_a_wheel_of_an_older_release_is_its_own_build(capsys: pytest.CaptureFixture[str]) -> None:
    wheel = "https://h.example/whl/cu116/torch-1.13.1%2Bcu116-cp310-cp310-linux_x86_64.whl"
    found = plan(capsys, f"torch @ {wheel}")
    assert (found["choice"]["torch"], found["choice"]["variant"]) == ("1.13.1", "cu116")
    assert found["choice"]["references"]["torch"] == f"torch @ {wheel}"


def test_an_older_rocm_pin_is_judged_on_the_nearest_releases_gfx_targets(capsys: pytest.CaptureFixture[str]) -> None:
    """A ROCm build an older pin's label names is not in the nearest release's builds: its gfx targets are the
    nearest's ROCm build's, assumed, so a GPU is judged on them rather than on nothing."""
    code = main(["plan", "--os", "linux", "--arch", "x86_64", "--gpu", "MI300X", "--rocm", "6.4", "--python", "3.10",
                 "torch==1.13.1+rocm5.2", "--format", "json"])
    found = json.loads(capsys.readouterr().out)
    assert code == 0 and found["choice"]["variant"] == "rocm5.2"
    assert any(n == "gfx list of 1.13.1+rocm5.2 is assumed" for n in found["notes"]), found["notes"]
    message = next(w["message"] for w in found["warnings"] if w["code"] == "gpu-arch-unsupported")
    assert "gfx942" in message and "is not known" not in message
