"""uv projects across platforms: `plan --format pyproject` with several --target writes one build per platform
(explicit indexes, sources with platform markers, the requires-python floor), and real `uv lock` resolves the
three-platform project against loopback indexes (the PyTorch index's variants and a default index)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.cli import main
from wheels import build_wheel, serve_wheels, uv_env

TARGETS = {
    "linux": {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35", "nvidia_driver": "580.82.07",
              "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090"}]},
    "macos": {"os": "macos", "arch": "arm64", "python": "3.12", "os_version": "14.5"},
    "windows": {"os": "windows", "arch": "x86_64", "python": "3.12"},
}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> subprocess.CompletedProcess[str]:
    """torch-install in this process: its exit code, stdout and stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["torch-install", *argv], code, out, err)


def _plan(capsys: pytest.CaptureFixture[str], tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    targets = []
    for name, profile in TARGETS.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(profile))
        targets += ["--target", str(path)]
    return _run(capsys, "plan", *targets, "--format", "pyproject", *flags)


def test_mixed_mac_and_linux_targets_give_one_build_per_platform(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    done = _plan(capsys, tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert 'requires-python = ">=3.11"' in out  # the floor of the chosen release: uv lock fails below it
    linux = "marker = \"sys_platform == 'linux' and platform_machine == 'x86_64'\" }"
    assert f'{{ index = "torch-install-cu130", {linux}' in out or "torch-install-cu132" in out
    assert "marker = \"sys_platform == 'win32' and platform_machine == 'AMD64'\"" in out
    assert "darwin" not in out  # macOS takes the default index's build: no source entry


@pytest.mark.slow
def test_uv_lock_resolves_the_three_platform_project(httpserver, capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not os.path.isfile(uv):
        pytest.skip("uv is part of the test extra")
    base = httpserver.url_for("/whl").rstrip("/")
    done = _plan(capsys, tmp_path, "--index-base", base)
    assert done.returncode == 0, done.stderr
    fragment = done.stdout
    torch = next(line for line in fragment.splitlines() if '"torch==' in line).strip().strip('",').split("==")[1]
    linux_index = next(line.split('"')[1] for line in fragment.splitlines()
                       if line.startswith('name = "torch-install-'))
    variant = linux_index.removeprefix("torch-install-")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    served = {f"/whl/{variant}": (f"{torch}+{variant}", "manylinux_2_28_x86_64"),
              "/whl/cpu": (f"{torch}+cpu", "win_amd64"), "/simple": (torch, "macosx_11_0_arm64")}
    for prefix, (version, platform) in served.items():
        serve_wheels(httpserver, prefix, [build_wheel(wheels, "torch", version, tag=f"py3-none-{platform}")])
    project = tmp_path / "project"
    project.mkdir()
    merged = fragment.replace("[project]\n", '[project]\nname = "demo"\nversion = "0.1.0"\n', 1)
    (project / "pyproject.toml").write_text(merged)
    env = uv_env(tmp_path, httpserver.url_for("/simple/"))
    locked = subprocess.run([uv, "lock"], cwd=project, capture_output=True, text=True, env=env)
    assert locked.returncode == 0, locked.stderr
    lock = (project / "uv.lock").read_text()
    assert f"{torch}+{variant}" in lock and f"{torch}+cpu" in lock and "macosx_11_0_arm64" in lock


USERS_PYPROJECT = """# our service
[project]
name = "demo"   # the distribution name
version = "0.1.0"
dependencies = [
    "numpy<2",  # pinned for the C extension
    "torch>=2.0",
]

[tool.ruff]
line-length = 100
"""


def test_merge_edits_only_the_build_s_entries_and_keeps_the_users_file(capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(USERS_PYPROJECT)
    done = _plan(capsys, tmp_path, "--merge", str(pyproject))
    assert done.returncode == 0, done.stderr
    text = pyproject.read_text()
    assert text.startswith("# our service\n[project]\nname = \"demo\"   # the distribution name\n")
    assert '"numpy<2",  # pinned for the C extension' in text and "[tool.ruff]\nline-length = 100" in text
    assert "torch>=2.0" not in text and '"torch==2.15.0"' in text and 'requires-python = ">=3.11"' in text
    assert "project.dependencies: torch==2.15.0 (replacing torch>=2.0)" in done.stderr
    import tomlkit

    document = tomlkit.parse(text).unwrap()
    assert [i["name"] for i in document["tool"]["uv"]["index"]] == ["torch-install-cu130", "torch-install-cpu"]
    before = text
    again = _plan(capsys, tmp_path, "--merge", str(pyproject))
    assert again.returncode == 0 and pyproject.read_text() == before  # merging twice changes nothing more


def test_two_targets_of_one_platform_get_their_shared_build_never_two_pins_under_one_marker(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    old = {**TARGETS["linux"], "nvidia_driver": "550.54.15", "gpus": [{"vendor": "nvidia", "name": "Tesla T4"}]}
    paths = []
    for name, profile in (("new", TARGETS["linux"]), ("old", old)):
        paths += ["--target", str(tmp_path / f"{name}.json")]
        (tmp_path / f"{name}.json").write_text(json.dumps(profile))
    done = _run(capsys, "plan", *paths, "--format", "pyproject")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count('"torch==') == 1 and "torch-install-cu126" in done.stdout and \
        "torch-install-cu130" not in done.stdout
    assert "share one platform" in done.stderr and "their shared build, torch 2.14.1+cu126" in done.stderr


@pytest.mark.slow
def test_uv_lock_resolves_a_merged_project_with_its_other_packages(httpserver, capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    base = httpserver.url_for("/whl").rstrip("/")
    project = tmp_path / "project"
    project.mkdir()
    with_vision = USERS_PYPROJECT.replace('"torch>=2.0",', '"torch>=2.0",\n    "torchvision",')
    (project / "pyproject.toml").write_text(with_vision)
    done = _plan(capsys, tmp_path, "--index-base", base, "--project", str(project), "--merge",
                 str(project / "pyproject.toml"))
    assert done.returncode == 0, done.stderr
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for prefix, label, platform in (("/whl/cu130", "+cu130", "manylinux_2_28_x86_64"),
                                    ("/whl/cpu", "+cpu", "win_amd64"), ("/simple", "", "macosx_11_0_arm64")):
        serve_wheels(httpserver, prefix, [
            build_wheel(wheels, "torch", f"2.15.0{label}", tag=f"py3-none-{platform}"),
            build_wheel(wheels, "torchvision", f"0.29.2{label if prefix == '/simple' else ''}",
                        requires=["torch==2.15.0"], tag=f"py3-none-{platform}"),
            *([build_wheel(wheels, "numpy", "1.26.4")] if prefix == "/simple" else [])])
    env = uv_env(tmp_path, httpserver.url_for("/simple/"))
    locked = subprocess.run([uv, "lock"], cwd=project, capture_output=True, text=True, env=env)
    assert locked.returncode == 0, locked.stderr + (project / "pyproject.toml").read_text()
    lock = (project / "uv.lock").read_text()
    assert "2.15.0+cu130" in lock and "2.15.0+cpu" in lock and 'name = "numpy"' in lock


@pytest.mark.slow
def test_uv_lock_resolves_the_two_linux_target_project(httpserver, tmp_path: Path) -> None:
    """Two x86_64 Linux boxes needing different builds share one marker: one build, which uv locks."""
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    old = {**TARGETS["linux"], "nvidia_driver": "550.54.15", "gpus": [{"vendor": "nvidia", "name": "Tesla T4"}]}
    paths = []
    for name, profile in (("new", TARGETS["linux"]), ("old", old)):
        paths += ["--target", str(tmp_path / f"{name}.json")]
        (tmp_path / f"{name}.json").write_text(json.dumps(profile))
    base = httpserver.url_for("/whl").rstrip("/")
    done = subprocess.run([sys.executable, "-m", "torch_install", "plan", *paths, "--format", "pyproject",
                           "--index-base", base], capture_output=True, text=True,
                          env={**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none"})
    assert done.returncode == 0, done.stderr
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    serve_wheels(httpserver, "/whl/cu126", [build_wheel(wheels, "torch", "2.14.1+cu126",
                                                        tag="py3-none-manylinux_2_28_x86_64")])
    serve_wheels(httpserver, "/simple", [build_wheel(wheels, "torch", "2.14.1", tag="py3-none-manylinux_2_28_x86_64")])
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        done.stdout.replace("[project]\n", '[project]\nname = "demo"\nversion = "0.1.0"\n', 1))
    env = uv_env(tmp_path, httpserver.url_for("/simple/"))
    locked = subprocess.run([uv, "lock"], cwd=project, capture_output=True, text=True, env=env)
    assert locked.returncode == 0, locked.stderr + done.stdout
    assert "2.14.1+cu126" in (project / "uv.lock").read_text()
