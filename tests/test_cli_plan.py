"""`torch-install plan` / `install` through cli.main and a real subprocess: flags, targets, formats, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.cli import main

ROOT = Path(__file__).resolve().parents[1]


def write_profile(tmp_path: Path, data: dict[str, object], name: str = "target.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, out: str, err: str, expected: str, exit_code: int = 2) -> None:
    assert code == exit_code
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert expected in err
    assert "Traceback" not in err


# --- bad input: one line, exit 2 ---------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "expected"), [
    (["plan", "--os", "macos", "--nvidia-driver", "550.54.15"], "macOS with NVIDIA driver 550.54.15 is contradictory"),
    (["plan", "--os", "windows", "--rocm", "6.4"], "windows with ROCm 6.4 is contradictory"),
    (["plan", "--os", "macos", "--rocm", "6.4"], "macos with ROCm 6.4 is contradictory"),
    (["plan", "--variant", "cu128", "--gpu", "RX 7900 XTX"],
     "--variant cu128 contradicts the target: it needs an NVIDIA GPU, the target has Radeon RX 7900 XTX"),
    (["plan", "--variant", "rocm6.4", "--os", "windows", "--gpu", "RX 7900 XTX"], "no ROCm builds for windows"),
    (["plan", "--variant", "rocm6.4", "--gpu", "RTX 4090"], "it needs an AMD GPU"),
    (["plan", "--variant", "xpu", "--os", "macos", "--gpu", "M2 Max"], "there are no XPU builds for macos"),
    (["plan", "--os", "linux", "--gpu", "M2 Max"], "linux with an Apple GPU"),
])
def test_contradictory_flags(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    assert_one_line_error(*run_main(capsys, *argv), expected)


def test_contradiction_inside_a_target_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = write_profile(tmp_path, {"os": "macos", "arch": "arm64", "python": "3.12", "nvidia_driver": "550.54.15"})
    assert_one_line_error(*run_main(capsys, "plan", "--target", target), "contradictory")


def test_flag_overrides_target_and_can_create_contradiction(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    target = write_profile(tmp_path, {"os": "linux", "arch": "x86_64", "python": "3.12", "rocm": "6.4.1",
                                      "gpus": [{"vendor": "amd", "name": "Radeon RX 7900 XTX"}]})
    assert_one_line_error(*run_main(capsys, "plan", "--target", target, "--os", "windows"),
                          "windows with ROCm 6.4.1 is contradictory")


@pytest.mark.parametrize(("argv", "expected"), [
    (["plan", "--gpu", "RTX 4099"], "unknown GPU name 'RTX 4099'; close matches: GeForce RTX 4090"),
    (["plan", "--nvidia-driver", "five-fifty"], "--nvidia-driver: 'five-fifty' is not a version"),
    (["plan", "--python", "3"], "--python: '3' is malformed"),
    (["plan", "--rocm", "6.x"], "--rocm: '6.x' is not a version"),
    (["plan", "--variant", "cuda12"], "--variant cuda12: not a variant id"),
    (["plan", "torch>>2.7"], "package 'torch>>2.7': not a valid requirement"),
    (["plan", "--index-base", "ftp://mirror.example/whl"], "--index-base 'ftp://mirror.example/whl': not an http(s)"),
    (["plan", "--index-base", "http://mirror.example/whl"], "plain http is refused"),
    (["plan", "--format", "yaml"], "--format yaml: not one of text, url, pip, uv, requirements, pyproject, json"),
    (["plan", "--target", "/nonexistent/target.json"], "/nonexistent/target.json: cannot read machine profile"),
    (["install", "--python", "/nonexistent/python"], "--python /nonexistent/python: no such file"),
])
def test_bad_input_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    assert_one_line_error(*run_main(capsys, *argv), expected)


def test_bad_target_field_names_file_and_key(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = write_profile(tmp_path, {"os": "linux", "gpu": []})
    code, out, err = run_main(capsys, "plan", "--target", target)
    assert code == 2 and out == ""
    assert f"{target}: gpu: unknown key" in err


def test_insecure_index_base_from_environment(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_INSTALL_INDEX_BASE", "http://mirror.example/whl")
    assert_one_line_error(*run_main(capsys, "plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12"),
                          "TORCH_INSTALL_INDEX_BASE 'http://mirror.example/whl': plain http is refused")


@pytest.mark.parametrize("argv", [["plan", "--os", "solaris"], ["plan", "--bogus"],
                                  ["install", "--installer", "conda"]])
def test_argparse_errors_are_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "error:" in err


def test_help_names_every_format() -> None:
    from torch_install.cli.plan import FORMAT_NAMES
    from torch_install.resolver.render import FORMATS

    assert [name.split(" ")[0] for name in FORMAT_NAMES.split(", ")] == list(FORMATS)


def test_several_targets_without_fleet_support(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    try:
        import torch_install.fleet  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("fleet support is installed")
    a = write_profile(tmp_path, {"os": "linux", "arch": "x86_64", "python": "3.12"}, "a.json")
    b = write_profile(tmp_path, {"os": "windows", "arch": "x86_64", "python": "3.12"}, "b.json")
    assert_one_line_error(*run_main(capsys, "plan", "--target", a, "--target", b), "several --target need fleet")


# --- a real subprocess -------------------------------------------------------------------------------------

def run_cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "torch_install", *argv], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, **(env or {})}, timeout=60, check=False)


def test_subprocess_contradiction_and_unknown_gpu() -> None:
    done = run_cli("--os", "macos", "--nvidia-driver", "550")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == ["torch-install: error: macOS with NVIDIA driver 550 is contradictory: "
                                        "there are no CUDA builds of PyTorch for macOS"]
    done = run_cli("plan", "--gpu", "Quadro Nonexistent 9")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "unknown GPU name 'Quadro Nonexistent 9'" in done.stderr


def test_subprocess_bad_flag() -> None:
    done = run_cli("plan", "--channel", "beta")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "invalid choice: 'beta'" in done.stderr
