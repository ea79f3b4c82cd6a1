"""The machine profile: validation (errors name field and file, exit 2 via the CLI), round trip, fill_platform."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sysroot import FIXTURES
from torch_install.cli import main
from torch_install.detectors import detect
from torch_install.errors import InputError
from torch_install.machine import Gpu, Machine, fill_platform, load_machine, machine_from_dict
from torch_install.probe import Probe


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_detected_profiles_round_trip(fixture: str) -> None:
    machine = detect(Probe(root=FIXTURES / fixture))
    again = machine_from_dict(json.loads(machine.to_json()))
    assert again == machine


@pytest.mark.parametrize("data, problem", [
    ({"os": "beos"}, "os: 'beos' is not one of linux, windows, macos"),
    ({"python": "3.12.x"}, "python: '3.12.x' is malformed"),
    ({"nvidia_driver": "latest"}, 'nvidia_driver: \'latest\' is not a version like "550.54.15"'),
    ({"gpus": [{"vendor": "nvidia", "compute_capability": "sm_89"}]},
     "gpus[0].compute_capability: 'sm_89' is malformed"),
    ({"gpus": [{"name": "RTX 4090"}]}, "gpus[0].vendor: required"),
    ({"gpus": [{"vendor": "nvidia", "count": 0}]}, "gpus[0].count: must be at least 1"),
    ({"gpu": []}, "gpu: unknown key"),
    ({"wsl": "yes"}, "wsl: expected true or false"),
    ({"schema": 2}, "schema: version 2 is not supported"),
    ({"nvidia_driver": "99999999999999999999999.1"}, "nvidia_driver: '99999999999999999999999.1' is not plausible, "
                                                     "expected an NVIDIA driver major from 100 to 999"),
    ({"nvidia_driver": "55.54"}, "nvidia_driver: '55.54' is not plausible"),
    ({"nvidia_driver": "550.54" + "9" * 5000}, "nvidia_driver: '550.5499"),
    ({"rocm": "999.0"}, "rocm: '999.0' is not plausible, expected a ROCm major from 1 to 99"),
    ({"rocm": "0.9"}, "rocm: '0.9' is not plausible"),
    ({"cuda_driver_api": "120.8"}, "cuda_driver_api: '120.8' is not plausible, expected a CUDA major from 1 to 99"),
    ({"glibc": "3.1"}, "glibc: '3.1' is not plausible, expected glibc 2.x"),
    ({"glibc": "2.1234567"}, "glibc: '2.1234567' is not plausible"),
])
def test_validation_names_the_field_and_the_file(data: dict, problem: str) -> None:
    with pytest.raises(InputError) as err:
        machine_from_dict(data, origin="box.json")
    assert str(err.value).startswith("box.json: ") and problem in str(err.value)


@pytest.mark.parametrize("data", [{"nvidia_driver": "100.0"}, {"nvidia_driver": "999.99.99"}, {"rocm": "7.14.0"},
                                  {"rocm": "10.0"}, {"cuda_driver_api": "13.2"}, {"glibc": "2.17"}])
def test_plausible_versions_at_the_bounds_are_accepted(data: dict) -> None:
    assert machine_from_dict(data).to_dict()[next(iter(data))] == next(iter(data.values()))


def test_all_problems_are_reported_together() -> None:
    with pytest.raises(InputError) as err:
        machine_from_dict({"os": "beos", "arch": "sparc"}, origin="p.json")
    assert len(str(err.value).splitlines()) == 2


@pytest.mark.parametrize("content, message", [
    ("{not json", "p.json: not valid JSON (line 1 column 2"),
    ("[1, 2]", "p.json: a machine profile must be a JSON object"),
    ('{"arch": "mips"}', "p.json: arch: 'mips' is not one of"),
    (b"\xff\xfe\x00garbage", "p.json: cannot read machine profile"),
])
def test_corrupt_profile_is_one_line_and_exit_2(tmp_path: Path, capsys, monkeypatch, content, message) -> None:
    monkeypatch.chdir(tmp_path)
    path = Path("p.json")
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    code = main(["detect", "--target", "p.json"])
    out = capsys.readouterr()
    assert code == 2 and out.out == ""
    assert out.err.splitlines() == [f"torch-install: error: {out.err.split('error: ', 1)[1].strip()}"]
    assert message in out.err


def test_missing_profile_file(capsys) -> None:
    assert main(["detect", "--target", "/nonexistent/p.json"]) == 2
    assert "/nonexistent/p.json: cannot read machine profile" in capsys.readouterr().err


def test_target_profile_is_shown_with_assumed_platform(tmp_path: Path, capsys) -> None:
    path = tmp_path / "node.json"
    path.write_text(json.dumps({"gpus": [{"vendor": "nvidia", "name": "NVIDIA A100", "compute_capability": "8.0",
                                          "count": 2}], "nvidia_driver": "550.54.15"}))
    code = main(["detect", "--target", str(path), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["gpus"][0]["count"] == 2
    assert set(data["assumed"]) <= {"os", "arch", "python", "glibc"} and "os" in data["assumed"]
    assert "cuda_driver_api" not in data  # hardware facts are never filled in


def test_load_machine_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"os": "linux", "gpus": [{"vendor": "amd", "gfx": "gfx1100"}]}')
    assert load_machine(path) == Machine(os="linux", gpus=(Gpu(vendor="amd", gfx="gfx1100"),))


def test_fill_platform_takes_platform_never_hardware() -> None:
    host = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", nvidia_driver="550.54.15",
                   gpus=(Gpu(vendor="nvidia", compute_capability="9.0"),))
    filled = fill_platform(Machine(python="3.11"), host)
    assert (filled.os, filled.arch, filled.python, filled.glibc) == ("linux", "x86_64", "3.11", "2.35")
    assert filled.assumed == ("os", "arch", "glibc")
    assert filled.nvidia_driver is None and filled.gpus == ()


def test_fill_platform_skips_glibc_for_another_os() -> None:
    host = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35")
    filled = fill_platform(Machine(os="windows"), host)
    assert filled.glibc is None and "glibc" not in filled.assumed
    assert fill_platform(host, host) is host


def test_sm_property() -> None:
    assert Gpu(vendor="nvidia", compute_capability="12.0").sm == 120
    assert Gpu(vendor="nvidia").sm is None


@pytest.mark.parametrize(("given", "python", "full"), [
    ("3.14.1", "3.14", "3.14.1"), ("3.13.1t", "3.13t", "3.13.1"), ("3.15.0rc1", "3.15", "3.15.0rc1"),
    ("3.12", "3.12", None)])
def test_a_python_with_its_patch_release_keeps_it(given: str, python: str, full: str | None) -> None:
    machine = machine_from_dict({"python": given})
    assert (machine.python, machine.python_full) == (python, full)
    assert machine_from_dict(json.loads(machine.to_json())) == machine


def test_detection_records_the_patch_release_and_markers_read_it(tmp_path) -> None:
    from torch_install.markers import environment

    (tmp_path / "_host.json").write_text(json.dumps({"system": "Linux", "machine": "x86_64",
                                                     "python_version": "3.14.1", "libc": "glibc 2.39"}))
    machine = detect(Probe(root=tmp_path))
    assert (machine.python, machine.python_full) == ("3.14", "3.14.1")
    assert environment(machine)["python_full_version"] == "3.14.1"


def test_a_target_that_states_another_python_does_not_keep_this_ones_patch(tmp_path) -> None:
    from torch_install.machine import fill_platform

    host = Machine(os="linux", arch="x86_64", python="3.11", python_full="3.11.7", glibc="2.36")
    assert fill_platform(Machine(os="linux", python="3.12"), host).python_full is None
    assert fill_platform(Machine(os="linux"), host).python_full == "3.11.7"
