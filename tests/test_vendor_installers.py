"""The commands and files planned for vendor-hosted builds, resolved by real pip and uv against loopback copies of the
vendors' indexes (``vendor_index.py``: stub wheels named and shaped like AMD's multi-arch wheels and the Jetson AI
Lab's): the device extras pull exactly the GPU's device packages, the Jetson pins take the Jetson index's wheels,
and a uv project for a fleet of a Windows AMD desktop and a Jetson locks each platform's build."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from servers import DirectoryServer
from sysroot import FIXTURES
from torch_install.cli import main
from vendor_index import serve_indexes, write_index
from wheels import build_wheel

pytestmark = pytest.mark.slow
UV = str(Path(sys.executable).with_name("uv"))


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DirectoryServer]:
    server = serve_indexes(tmp_path_factory.mktemp("vendor-indexes"))
    yield server
    server.close()


def quiet_env(tmp_path: Path, server: DirectoryServer | None = None) -> dict[str, str]:
    """pip and uv without this machine's configuration (no find-links, no index of its own), no Python downloads;
    with ``server``, an empty loopback default index (for a project, whose file names no default index): nothing
    leaves the machine, nothing comes from anywhere else."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    default = {"UV_DEFAULT_INDEX": server.url("empty/")} if server else {}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "XDG_CONFIG_HOME": str(tmp_path / "config"), "UV_PYTHON_DOWNLOADS": "never",
            "UV_CACHE_DIR": str(tmp_path / "uv-cache"), **default}


def plan_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["plan", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def downloaded(directory: Path) -> dict[str, str]:
    """Distribution name -> version of the wheels pip downloaded."""
    out = {}
    for wheel in directory.glob("*.whl"):
        name, version = wheel.name.split("-")[:2]
        out[re.sub(r"[-_.]+", "-", name).lower()] = version
    return out


def amd_set(gfx: list[str], rocm: str = "10.1.0", torch: str = "2.14.0+rocm10.1.0",
            vision: str = "0.29.0a0+rocm10.1.0", audio: str = "2.11.0.3+rocm10.1.0") -> dict[str, str]:
    """What an AMD multi-arch install of torch, torchvision and torchaudio for these gfx targets is made of."""
    return {"torch": torch, "torchvision": vision, "torchaudio": audio, "rocm": rocm, "rocm-bootstrap": "1.0.0",
            "rocm-sdk-core": rocm, "rocm-sdk-libraries": rocm,
            **{f"amd-torch-device-{g}": torch for g in gfx}, **{f"amd-torchvision-device-{g}": vision for g in gfx},
            **{f"rocm-sdk-device-{g}": rocm for g in gfx}}


WINDOWS = [("windows-rx7900xtx", "3.12", ["gfx1100"]), ("windows-strix-halo", "3.13", ["gfx1151"])]


@pytest.mark.parametrize(("sysroot", "python", "gfx"), WINDOWS, ids=[w[0] for w in WINDOWS])
def test_windows_amd_pip_command_downloads_the_gpus_device_packages(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, indexes: DirectoryServer, sysroot: str, python: str,
        gfx: list[str]) -> None:
    plan = plan_json(capsys, "--sysroot", str(FIXTURES / sysroot), "torch", "torchvision", "torchaudio",
                     "--vendor-index", f"amd-stable={indexes.url('amd-stable/')}")
    assert plan["choice"]["extras"]["torch"] == [f"device-{g}" for g in gfx]
    argv = shlex.split(plan["commands"]["pip"])
    assert argv[:4] == ["python", "-m", "pip", "install"]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(tmp_path / "dl"), "--only-binary",
                    ":all:", "--platform", "win_amd64", "--python-version", python, *argv[4:]],
                   check=True, env=quiet_env(tmp_path), capture_output=True)
    assert downloaded(tmp_path / "dl") == amd_set(gfx)


def test_several_gpus_get_each_gpus_device_packages_and_no_others(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, indexes: DirectoryServer) -> None:
    profile = tmp_path / "two.json"
    profile.write_text(json.dumps({"os": "windows", "arch": "x86_64", "python": "3.12", "gpus": [
        {"vendor": "amd", "name": "AMD Radeon RX 7900 XTX", "gfx": "gfx1100"},
        {"vendor": "amd", "name": "AMD Radeon RX 9070 XT", "gfx": "gfx1201"}]}))
    plan = plan_json(capsys, "--target", str(profile), "torch", "torchvision", "torchaudio",
                     "--vendor-index", f"amd-stable={indexes.url('amd-stable/')}")
    assert {w["code"] for w in plan["warnings"]} >= {"vendor-support-level"}
    argv = shlex.split(plan["commands"]["pip"])
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(tmp_path / "dl"), "--only-binary",
                    ":all:", "--platform", "win_amd64", "--python-version", "3.12", *argv[4:]],
                   check=True, env=quiet_env(tmp_path), capture_output=True)
    assert downloaded(tmp_path / "dl") == amd_set(["gfx1100", "gfx1201"])


def test_windows_amd_requirements_file_compiles_with_uv_for_windows(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, indexes: DirectoryServer) -> None:
    assert main(["plan", "--sysroot", str(FIXTURES / "windows-rx7900xtx"), "torch", "torchvision", "torchaudio",
                 "--vendor-index", f"amd-stable={indexes.url('amd-stable/')}", "--format", "requirements"]) == 0
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(capsys.readouterr().out)
    out = subprocess.run([UV, "pip", "compile", str(requirements), "--python-platform", "x86_64-pc-windows-msvc",
                          "--python-version", "3.12", "--no-header", "--no-annotate"],
                         check=True, env=quiet_env(tmp_path), capture_output=True, text=True).stdout
    pins = dict(line.split("==", 1) for line in out.splitlines() if "==" in line and not line.startswith("#"))
    assert pins == amd_set(["gfx1100"])


def test_the_uv_command_line_resolves_the_same(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                               indexes: DirectoryServer) -> None:
    plan = plan_json(capsys, "--sysroot", str(FIXTURES / "windows-strix-halo"), "torch",
                     "--vendor-index", f"amd-stable={indexes.url('amd-stable/')}")
    argv = shlex.split(plan["commands"]["uv"])
    assert argv[:3] == ["uv", "pip", "install"]
    pins = [a for a in argv[3:] if "==" in a]
    options = [a for a in argv[3:] if a not in pins]
    (tmp_path / "in.txt").write_text("\n".join(pins) + "\n")
    out = subprocess.run([UV, "pip", "compile", str(tmp_path / "in.txt"), *options, "--python-platform",
                          "x86_64-pc-windows-msvc", "--python-version", "3.13", "--no-header", "--no-annotate"],
                         check=True, env=quiet_env(tmp_path), capture_output=True, text=True).stdout
    assert "amd-torch-device-gfx1151==2.14.0+rocm10.1.0" in out.splitlines()
    assert not [line for line in out.splitlines() if "device-gfx" in line and "gfx1151" not in line]


def test_jetson_orin_pins_take_the_jetson_indexs_wheels(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        indexes: DirectoryServer) -> None:
    plan = plan_json(capsys, "--sysroot", str(FIXTURES / "jetson-orin"), "torch", "torchvision", "torchaudio",
                     "--vendor-index", f"jetson-jp6-cu126={indexes.url('jetson-jp6-cu126')}")
    assert plan["choice"]["vendor_index"]["id"] == "jetson-jp6-cu126"
    argv = shlex.split(plan["commands"]["pip"])
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(tmp_path / "dl"), "--only-binary",
                    ":all:", "--platform", "linux_aarch64", "--python-version", "3.10", *argv[4:]],
                   check=True, env=quiet_env(tmp_path), capture_output=True)
    assert downloaded(tmp_path / "dl") == {"torch": "2.11.0", "torchvision": "0.26.0", "torchaudio": "2.10.0"}


def test_a_fleet_of_a_windows_amd_desktop_and_a_jetson_locks_each_platforms_build(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, indexes: DirectoryServer) -> None:
    (tmp_path / "win.json").write_text(json.dumps({"os": "windows", "arch": "x86_64", "python": "3.10", "gpus": [
        {"vendor": "amd", "name": "AMD Radeon RX 7900 XTX", "gfx": "gfx1100"}]}))
    (tmp_path / "orin.json").write_text(json.dumps({"os": "linux", "arch": "aarch64", "python": "3.10",
                                                    "glibc": "2.35", "jetson": "36.4.3", "gpus": [
        {"vendor": "nvidia", "name": "Jetson AGX Orin", "compute_capability": "8.7"}]}))
    assert main(["plan", "--target", str(tmp_path / "win.json"), "--target", str(tmp_path / "orin.json"), "torch",
                 "torchvision", "--vendor-index", f"amd-stable={indexes.url('amd-stable/')}", "--vendor-index",
                 f"jetson-jp6-cu126={indexes.url('jetson-jp6-cu126')}", "--format", "pyproject"]) == 0
    entries = capsys.readouterr().out
    assert "'tegra' in platform_release" not in entries  # no other Linux aarch64 machine to tell it from
    environments = ["sys_platform == 'win32' and platform_machine == 'AMD64'",
                    "sys_platform == 'linux' and platform_machine == 'aarch64'"]
    project = entries.replace("[project]", '[project]\nname = "fleet"\nversion = "0"', 1)
    project += f"\n\n[tool.uv]\nenvironments = {json.dumps(environments)}\n"
    (tmp_path / "pyproject.toml").write_text(project)
    done = subprocess.run([UV, "lock", "--directory", str(tmp_path), "--python", sys.executable],
                          env=quiet_env(tmp_path, indexes), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lock = (tmp_path / "uv.lock").read_text()
    assert 'name = "amd-torch-device-gfx1100"\nversion = "2.14.0+rocm10.1.0"' in lock
    assert f'version = "2.11.0"\nsource = {{ registry = "{indexes.url("jetson-jp6-cu126")}" }}' in lock


def test_a_fleet_of_a_jetson_and_an_aarch64_server_locks_each_by_platform_release(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, indexes: DirectoryServer) -> None:
    """A Jetson and another Linux aarch64 machine share sys_platform and platform_machine: the project tells them
    apart by 'tegra' in platform_release, and uv locks the Jetson's torch from the Jetson index, the server's from
    the PyTorch index (a loopback mirror of its cpu index here)."""
    (tmp_path / "orin.json").write_text(json.dumps({"os": "linux", "arch": "aarch64", "python": "3.10",
                                                    "glibc": "2.35", "jetson": "36.4.3", "gpus": [
        {"vendor": "nvidia", "name": "Jetson AGX Orin", "compute_capability": "8.7"}]}))
    (tmp_path / "server.json").write_text(json.dumps({"os": "linux", "arch": "aarch64", "python": "3.10",
                                                      "glibc": "2.35", "gpus": []}))
    server = plan_json(capsys, "--target", str(tmp_path / "server.json"), "torch")
    root = Path(indexes.root)
    cpu = build_wheel(root / "files", "torch", server["choice"]["packages"]["torch"],
                      tag="cp310-cp310-manylinux_2_28_aarch64")
    write_index(root, "pytorch/cpu", [cpu])
    argv = ["plan", "--target", str(tmp_path / "orin.json"), "--target", str(tmp_path / "server.json"), "torch",
            "--vendor-index", f"jetson-jp6-cu126={indexes.url('jetson-jp6-cu126')}", "--index-base",
            indexes.url("pytorch"), "--format", "pyproject"]
    assert main(argv) == 0
    entries = capsys.readouterr().out
    assert "and 'tegra' in platform_release" in entries and "and 'tegra' not in platform_release" in entries
    project = entries.replace("[project]", '[project]\nname = "fleet"\nversion = "0"', 1)
    project += ("\n\n[tool.uv]\nenvironments = [\"sys_platform == 'linux' and platform_machine == 'aarch64'\"]\n")
    (tmp_path / "pyproject.toml").write_text(project)
    done = subprocess.run([UV, "lock", "--directory", str(tmp_path), "--python", sys.executable],
                          env=quiet_env(tmp_path, indexes), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lock = (tmp_path / "uv.lock").read_text()
    assert f'version = "2.11.0"\nsource = {{ registry = "{indexes.url("jetson-jp6-cu126")}" }}' in lock
    version = server["choice"]["packages"]["torch"]
    assert f'version = "{version}"\nsource = {{ registry = "{indexes.url("pytorch/cpu")}" }}' in lock


def installed(python: Path) -> dict[str, str]:
    code = "import importlib.metadata as m, json; print(json.dumps({d.metadata['Name']: d.version for d in " \
           "m.distributions()}))"
    names = json.loads(subprocess.run([str(python), "-c", code], check=True, capture_output=True,
                                      text=True).stdout)
    return {re.sub(r"[-_.]+", "-", k).lower(): v for k, v in names.items()}


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_install_puts_amds_build_in_a_venv_and_the_doctor_knows_and_fixes_it(
        installer: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, indexes: DirectoryServer,
        make_venv, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from torch_install.cli import targets
    from torch_install.machine import Gpu, Machine

    python = make_venv(tmp_path / "env")
    for name, value in quiet_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PATH", f"{Path(UV).parent}{os.pathsep}{os.environ['PATH']}")
    host = f"{sys.version_info.major}.{sys.version_info.minor}"
    gfx1010 = Machine(os="linux", arch="x86_64", python=host, glibc="2.36", rocm="7.1.1",
                      gpus=(Gpu("amd", "AMD Radeon RX 5700 XT", gfx="gfx1010"),))
    monkeypatch.setattr(targets, "detect_here", lambda args: gfx1010)  # this machine, as if it had the GPU
    mirror = f"amd-stable={indexes.url('amd-stable/')}"
    assert main(["install", "--python", str(python), "--installer", installer, "torch", "torchvision",
                 "--vendor-index", mirror, "--pin"]) == 0
    pins = (python.parents[1] / "torch-install-constraints.txt").read_text()
    assert {"torch==2.14.0+rocm10.1.0", "torchvision==0.29.0a0+rocm10.1.0"} <= set(pins.splitlines())
    assert {k: v for k, v in installed(python).items() if k not in ("pip", "setuptools")} == {
        k: v for k, v in amd_set(["gfx1010"]).items() if k != "torchaudio"}
    capsys.readouterr()
    monkeypatch.delenv("PIP_CONFIG_FILE")  # the environment's pip.conf, which names the pin, is read from now on
    for name, gfx in (("gfx1010.json", "gfx1010"), ("gfx1100.json", "gfx1100")):
        (tmp_path / name).write_text(json.dumps({"os": "linux", "arch": "x86_64", "glibc": "2.36", "rocm": "7.1.1",
                                                 "gpus": [{"vendor": "amd", "name": "AMD Radeon", "gfx": gfx}]}))
    assert main(["doctor", "--python", str(python), "--target", str(tmp_path / "gfx1010.json")]) == 0
    assert "[vendor-build] torch is a build of AMD's stable ROCm index (whl-next)" in capsys.readouterr().out
    # the GPU changed: its device code is missing, and the fix installs it from AMD's index (the mirror)
    assert main(["doctor", "--python", str(python), "--target", str(tmp_path / "gfx1100.json"), "--fix", "--yes",
                 "--vendor-index", mirror]) == 0
    out = capsys.readouterr().out
    assert "[vendor-device-missing] the torch device code for AMD Radeon (gfx1100) is not installed" in out
    after = installed(python)
    assert after["amd-torch-device-gfx1100"] == "2.14.0+rocm10.1.0"
    assert after["rocm-sdk-device-gfx1100"] == "10.1.0" and after["torch"] == "2.14.0+rocm10.1.0"
