"""`torch-install plan` / `install` through cli.main and a real subprocess: flags, targets, formats, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.environment.interpreter import query_interpreter

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
    (["plan", "--os", "macos", "--rocm", "6.4"], "macOS with ROCm 6.4: AMD publishes no ROCm for macOS"),
    (["plan", "--variant", "cu128", "--gpu", "RX 7900 XTX"],
     "--variant cu128 contradicts the target: it needs an NVIDIA GPU, the target has Radeon RX 7900 XTX"),
    (["plan", "--variant", "rocm6.4", "--os", "windows", "--gpu", "RX 7900 XTX"],
     "the PyTorch index has no ROCm builds for windows (AMD's own"),
    (["plan", "--variant", "rocm6.4", "--gpu", "RTX 4090"], "it needs an AMD GPU"),
    (["plan", "--variant", "xpu", "--os", "macos", "--gpu", "M2 Max"], "the PyTorch index has no XPU builds for macos"),
])
def test_impossible_input_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    assert_one_line_error(*run_main(capsys, *argv), expected)


def test_impossible_value_inside_a_target_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = write_profile(tmp_path, {"os": "macos", "arch": "arm64", "python": "3.12", "rocm": "6.4.1"})
    assert_one_line_error(*run_main(capsys, "plan", "--target", target), "AMD publishes no ROCm for macOS")


@pytest.mark.parametrize(("argv", "variant", "gpu", "code", "said"), [
    # NVIDIA's web driver of macOS 10.13 (387.10.10.x) on a Mac Pro: real, and no torch release uses it
    (["--os", "macos", "--arch", "x86_64", "--python", "3.12", "--nvidia-driver", "387.10.10"], "default", False,
     "gpu-arch-unsupported", "NVIDIA driver 387.10.10: no PyTorch build for macOS uses NVIDIA, AMD or Intel GPUs"),
    (["--os", "macos", "--arch", "arm64", "--python", "3.12", "--gpu", "M2", "--gpu", "RTX 4090"], "default", True,
     "gpu-arch-unsupported", "GeForce RTX 4090 (sm_89): no PyTorch build for macOS uses"),
    # Asahi Linux on an Apple silicon Mac
    (["--os", "linux", "--arch", "aarch64", "--python", "3.12", "--gpu", "M2 Max"], "cpu", False,
     "integrated-gpu-only", "Apple M2 Max (m2) has no PyTorch backend on linux"),
])
def test_machines_that_exist_are_planned_with_a_warning(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                        variant: str, gpu: bool, code: str, said: str) -> None:
    status, out, _ = run_main(capsys, "plan", *argv, "--format", "json")
    plan = json.loads(out)
    assert status == 0 and plan["choice"]["variant"] == variant and plan["gpu_accelerated"] is gpu
    assert any(w["code"] == code and said in w["message"] for w in plan["warnings"]), plan["warnings"]


def test_flag_overrides_target_and_can_create_contradiction(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    target = write_profile(tmp_path, {"os": "linux", "arch": "x86_64", "python": "3.12", "rocm": "6.4.1",
                                      "gpus": [{"vendor": "amd", "name": "Radeon RX 7900 XTX"}]})
    assert_one_line_error(*run_main(capsys, "plan", "--target", target, "--os", "macos"),
                          "macOS with ROCm 6.4.1: AMD publishes no ROCm for macOS")


@pytest.mark.parametrize(("argv", "expected"), [
    (["plan", "--gpu", "RTX 4099"], "unknown GPU name 'RTX 4099'; close matches: GeForce RTX 4090"),
    (["plan", "--nvidia-driver", "five-fifty"], "--nvidia-driver: 'five-fifty' is not a version"),
    (["plan", "--python", "3"], "--python: '3' is malformed"),
    (["plan", "--rocm", "6.x"], "--rocm: '6.x' is not a version"),
    (["plan", "--rocm", "999.0"], "--rocm: '999.0' is not plausible, expected a ROCm major from 1 to 99"),
    (["plan", "--nvidia-driver", "99999999999999999999999.1"],
     "--nvidia-driver: '99999999999999999999999.1' is not plausible, expected an NVIDIA driver major from 100 to 999"),
    (["plan", "--variant", "cuda12"], "--variant 'cuda12': not a variant id"),
    (["plan", "torch>>2.7"], "package 'torch>>2.7': not a valid requirement"),
    (["plan", "torch --index-url https://mirror.example/simple"],  # one argument, as pip refuses it too
     "package 'torch --index-url https://mirror.example/simple': not a valid requirement: 'torch --index-url "
     "https://mirror.example/simple' is not a requirement (Expected semicolon (after name with no version specifier) "
     'or end) (installer options go after "--")'),
    (["plan", "--index-base", "ftp://mirror.example/whl"], "--index-base 'ftp://mirror.example/whl': not an http(s)"),
    (["plan", "--index-base", "http://mirror.example/whl"], "plain http is refused"),
    (["plan", "--format", "yaml"],
     "--format yaml: not one of text, url, pip, uv, requirements, constraints, pyproject, json"),
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


def test_one_index_base_policy_for_plan_and_matrix(capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from torch_install.index import urls as index_url
    from torch_install.resolver import load_matrix
    from torch_install.resolver.plan import Request

    assert Request().index_base == load_matrix().index_base == index_url.DEFAULT_INDEX_BASE
    monkeypatch.setenv("TORCH_INSTALL_INDEX_BASE", " https://mirror.example/whl/ ")
    code, out, _ = run_main(capsys, "plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--format", "url")
    assert (code, out) == (0, "https://mirror.example/whl/cpu\n")
    code, out, _ = run_main(capsys, "plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--format", "url",
                            "--index-base", "http://127.0.0.1:8080/whl/")
    assert (code, out) == (0, "http://127.0.0.1:8080/whl/cpu\n")


def test_empty_variant_is_named_in_the_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert_one_line_error(*run_main(capsys, "plan", "--variant", ""), "--variant '': not a variant id")


@pytest.mark.parametrize("argv", [["plan", "--os", "solaris"], ["plan", "--bogus"],
                                  ["install", "--installer", "conda"]])
def test_argparse_errors_are_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "error:" in err


def test_help_names_every_format() -> None:
    from torch_install.cli.plan import _format_names
    from torch_install.render import FORMATS

    assert [name.split(" ")[0] for name in _format_names().split(", ")] == list(FORMATS)


def test_several_targets_resolve_one_build_for_the_fleet(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a = write_profile(tmp_path, {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35",
                                 "nvidia_driver": "550.54.15", "gpus": [{"vendor": "nvidia", "name": "RTX 4090"}]},
                      "a.json")
    b = write_profile(tmp_path, {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35",
                                 "nvidia_driver": "580.95.05", "gpus": [{"vendor": "nvidia", "name": "GTX 1080"}]},
                      "b.json")
    code, out, err = run_main(capsys, "plan", "--target", a, "--target", b, "--format", "json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert (data["choice"]["torch"], data["choice"]["variant"]) == ("2.14.1", "cu126")  # the newest for both
    assert len(data["plans"]) == 2
    code, out, _ = run_main(capsys, "plan", "--target", a, "--target", b, "--format", "pip")
    assert out.strip().endswith("torch==2.14.1+cu126 --index-url https://download.pytorch.org/whl/cu126")


# --- a real subprocess -------------------------------------------------------------------------------------

def run_cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "torch_install", *argv], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, **(env or {})}, timeout=60, check=False)


@pytest.mark.slow
def test_subprocess_contradiction_and_unknown_gpu() -> None:
    done = run_cli("--os", "macos", "--rocm", "6.4")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == ["torch-install: error: macOS with ROCm 6.4: AMD publishes no ROCm for macOS "
                                        "(leave the ROCm version out, or give the target's OS)"]
    done = run_cli("plan", "--gpu", "Quadro Nonexistent 9")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "unknown GPU name 'Quadro Nonexistent 9'" in done.stderr


@pytest.mark.slow
def test_subprocess_bad_flag() -> None:
    done = run_cli("plan", "--channel", "beta")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "invalid choice: 'beta'" in done.stderr


# --- end to end: a fixed profile through the real resolver, exact lines per format ---------------------------

RTX_4090 = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.39", "nvidia_driver": "570.133.07",
            "gpus": [{"vendor": "nvidia", "name": "GeForce RTX 4090", "pci_id": "10de:2684",
                      "compute_capability": "8.9"}]}
CU128 = "https://download.pytorch.org/whl/cu128"
PINS = ["torch==2.9.1+cu128", "torchvision==0.24.1+cu128"]


def plan_for(capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str, *extra: str) -> tuple[int, str, str]:
    target = write_profile(tmp_path, RTX_4090)
    return run_main(capsys, "plan", "torch==2.9.1", "torchvision", "--target", target, "--no-for-container",
                    "--format", fmt, *extra)


@pytest.mark.parametrize(("fmt", "expected"), [
    ("url", [CU128]),
    ("pip", [f"python -m pip install {' '.join(PINS)} --index-url {CU128}"]),
    ("uv", [f"uv pip install {' '.join(PINS)} --default-index {CU128}"]),
    ("requirements", ["# cu128 build of torch 2.9.1 for linux x86_64 (glibc 2.39); Python 3.12; GeForce RTX 4090 "
                      "(sm 8.9); NVIDIA driver 570.133.07", f"--index-url {CU128}", *PINS]),
    ("pyproject", ["# Merge into pyproject.toml", "# (or let torch-install do it: --merge pyproject.toml)",
                   "[project]", "dependencies = [", *(f'  "{p}",' for p in PINS), "]",
                   "", "[[tool.uv.index]]", 'name = "torch-install-cu128"', f'url = "{CU128}"', "explicit = true", "",
                   "[tool.uv.sources]", 'torch = { index = "torch-install-cu128" }',
                   'torchvision = { index = "torch-install-cu128" }']),
])
def test_formats_for_a_fixed_profile(capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str,
                                     expected: list[str]) -> None:
    code, out, err = plan_for(capsys, tmp_path, fmt)
    assert (code, err) == (0, "")
    assert out.splitlines() == expected


def test_text_format_for_a_fixed_profile(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = plan_for(capsys, tmp_path, "text")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "Machine:  linux x86_64 (glibc 2.39); Python 3.12; GeForce RTX 4090 (sm 8.9); " \
                       "NVIDIA driver 570.133.07"
    assert lines[1] == f"Choice:   torch 2.9.1, variant cu128 (GPU), from {CU128}"
    assert any(line.startswith("Why:      ") and "driver 570.133.07" in line for line in lines)
    assert any(line.startswith("Rejected: cu130 torch 2.9.1: needs driver") for line in lines)
    assert lines[-1] == f"Command:  python -m pip install {' '.join(PINS)} --index-url {CU128}"
    assert not any(line.startswith("Warning:") for line in lines)


def test_json_for_a_fixed_profile(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = plan_for(capsys, tmp_path, "json")
    data = json.loads(out)
    assert code == 0
    assert data["choice"] == {"variant": "cu128", "torch": "2.9.1", "index_url": CU128,
                              "packages": {"torch": "2.9.1+cu128", "torchvision": "0.24.1+cu128"}, "companions": [],
                              "distribution": "pytorch-index", "vendor_index": None, "extras": {}, "devices": []}
    assert data["gpu_accelerated"] is True and data["warnings"] == []
    assert data["commands"]["pip"] == f"python -m pip install {' '.join(PINS)} --index-url {CU128}"
    assert {"variant": "cu130", "torch": "2.9.1"}.items() <= data["rejected"][0].items()
    assert data["request"]["packages"] == ["torch==2.9.1", "torchvision"]
    assert data["machine"]["nvidia_driver"] == "570.133.07"


def test_warnings_exit_0_unless_strict_and_flags_override_the_target(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    target = write_profile(tmp_path, RTX_4090)
    argv = ("plan", "--target", target, "--no-for-container", "--nvidia-driver", "470.82.01", "--format", "json")
    code, out, _ = run_main(capsys, *argv)
    data = json.loads(out)
    assert code == 0  # a build was chosen: a script or Dockerfile goes on
    assert run_main(capsys, *argv, "--strict")[0] == 1
    assert data["machine"]["nvidia_driver"] == "470.82.01"
    assert "driver-too-old" in [w["code"] for w in data["warnings"]]


def test_gpu_flags_describe_a_machine_and_platform_is_assumed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(capsys, "plan", "--gpu", "RTX 4090", "--gpu", "RTX 4090", "--nvidia-driver", "580.95.05",
                            "--os", "linux", "--arch", "x86_64", "--no-for-container", "--format", "json")
    machine = json.loads(out)["machine"]
    assert machine["gpus"] == [{"vendor": "nvidia", "name": "GeForce RTX 4090", "compute_capability": "8.9",
                                "integrated": False, "count": 2}]
    assert "python" in machine["assumed"] and "os" not in machine["assumed"]
    assert code in (0, 1)


def test_forced_variant_and_nightly_channel(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = plan_for(capsys, tmp_path, "json", "--variant", "cpu")
    data = json.loads(out)
    assert data["choice"]["variant"] == "cpu"
    assert data["choice"]["packages"]["torch"] == "2.9.1+cpu"
    assert data["gpu_accelerated"] is False


@pytest.mark.slow
def test_subprocess_plan_json() -> None:
    profile = json.dumps(RTX_4090)
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        handle.write(profile)
    try:
        done = run_cli("torch==2.9.1", "--target", handle.name, "--no-for-container", "--format", "json")
    finally:
        os.unlink(handle.name)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["commands"]["uv"] == f"uv pip install torch==2.9.1+cu128 --default-index {CU128}"


# --- install through the CLI --------------------------------------------------------------------------------

@pytest.mark.slow
def test_install_dry_run_prints_the_command_for_another_interpreter(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path, make_venv) -> None:
    python = make_venv(tmp_path / "env")
    code, out, _ = run_main(capsys, "install", "--python", str(python), "--variant", "cpu", "--dry-run")
    import shlex

    argv = shlex.split(out)
    assert code == 0 and len(out.splitlines()) == 1
    assert argv[1:4] == ["-m", "pip", "install"] and Path(argv[0]).parent == python.parent
    assert argv[4].startswith("torch==") and argv[4].endswith("+cpu")
    assert argv[-2] == "--index-url" and argv[-1].endswith("/whl/cpu")


@pytest.mark.slow
def test_install_names_what_it_leaves_out_of_the_commands(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                          make_venv) -> None:
    """A requirements file's page for another build is left out of install's commands, as plan leaves it out, and
    install says so as plan does."""
    python = make_venv(tmp_path / "env")
    file = tmp_path / "requirements.txt"
    file.write_text("-f https://data.pyg.org/whl/torch-2.7.0+cu118.html\ntorch==2.7.1\ntorch_scatter\n")
    code, out, err = run_main(capsys, "install", "--python", str(python), "--variant", "cpu", "--dry-run",
                              "--offline", "-r", str(file))
    assert code == 0 and "cu118" not in out
    assert f"Note:     {file}:1: --find-links https://data.pyg.org/whl/torch-2.7.0+cu118.html is where the builds " \
           "for torch 2.7+cu118 are, not those for torch 2.7.1+cpu: left out of the commands" in err.splitlines()


@pytest.mark.slow
def test_install_refuses_an_externally_managed_python(capsys: pytest.CaptureFixture[str]) -> None:

    candidates = [p for p in ("/usr/bin/python3",) if Path(p).is_file()]
    managed = [p for p in candidates if query_interpreter(p).externally_managed]
    if not managed:
        pytest.skip("no externally managed Python on this machine")
    code, out, err = run_main(capsys, "install", "--python", managed[0], "--variant", "cpu")
    assert code == 3 and out == ""
    assert "externally managed" in err.splitlines()[0]
    assert "torch-install: error:   python3 -m venv .venv" in err


def test_text_mode_writes_the_warnings_on_stderr_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    """A choice with warnings: the summary on stdout, each warning one stderr line; 0 (a Dockerfile RUN goes on)."""
    code = main(["plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--gpu", "rtx 4090"])
    out, err = capsys.readouterr()
    assert code == 0 and "Choice:" in out and "Warning:" not in out
    assert "torch-install: warning: [driver-unknown] NVIDIA driver version unknown" in err
    assert main(["plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--gpu", "rtx 4090",
                 "--strict"]) == 1


def test_a_hashed_locks_find_links_and_no_index_reach_the_builds_step(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A lock's ``--no-index``/``--find-links`` lines reach the build's own step as they reach plan's command."""
    lock = tmp_path / "requirements.txt"
    digest = "sha256:" + "0" * 64
    lock.write_text(f"--no-index\n--find-links {tmp_path}/wheels\ntorch==2.9.1 --hash={digest}\n"
                    f"filelock==3.20.0 --hash={digest}\n")
    assert main(["install", "--dry-run", "--offline", "--variant", "cpu", "-r", str(lock)]) == 0
    steps = [line for line in capsys.readouterr().out.splitlines() if " install " in line]
    assert "--no-deps" in steps[0] and f"--no-index --find-links {tmp_path}/wheels" in steps[0]


@pytest.mark.slow
def test_install_into_another_environment_reads_its_pip_configuration_not_the_active_ones(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, make_venv, monkeypatch: pytest.MonkeyPatch) -> None:
    """With $VIRTUAL_ENV naming one venv and --python another, the constraint in force is the one the target's own
    pip reads (its prefix's pip.conf), as real pip of the target says."""
    active, target = make_venv(tmp_path / "active"), make_venv(tmp_path / "target")
    for python, pin in ((active, "torch==2.5.1"), (target, "torch==2.4.1")):
        prefix = python.parent.parent
        (prefix / "mine.txt").write_text(pin + "\n")
        (prefix / "pip.conf").write_text(f"[install]\nconstraint = {prefix / 'mine.txt'}\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("VIRTUAL_ENV", str(active.parent.parent))
    real = subprocess.run([str(target), "-m", "pip", "config", "get", "install.constraint"], capture_output=True,
                          text=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert real.stdout.strip() == str(target.parent.parent / "mine.txt"), real.stderr
    code, out, err = run_main(capsys, "install", "--python", str(target), "--variant", "cpu", "--dry-run",
                              "--offline")
    assert code == 0, err
    assert "torch==2.4.1+cpu" in out and "2.5.1" not in out + err
    assert f"({target.parent.parent / 'pip.conf'} [install])" in err
