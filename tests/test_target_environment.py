"""The environment install and doctor act on is the user's, chosen as uv chooses: --python, else $VIRTUAL_ENV,
else $CONDA_PREFIX, else ./.venv, else the running interpreter unless it is a pipx or uv tool environment (then
refused, naming the flags). Real venvs; torch-install runs as a child process from the source tree."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real pip, uv, venvs or processes

SRC = str(Path(__file__).resolve().parent.parent / "src")
# the source tree and its dependencies (packaging, requests), for a venv standing in for a tool's environment
DEPS = os.pathsep.join([SRC, sysconfig.get_paths()["purelib"]])
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout")


def _run(args: list[str], cwd: Path, python: str = sys.executable, path: str | None = None,
         **environ: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env.update(PYTHONPATH=DEPS, TORCH_INSTALL_DEFAULT_INDEX="none", **environ)
    if path is not None:
        env["PATH"] = path
    return subprocess.run([python, "-m", "torch_install", *args], cwd=cwd, capture_output=True, text=True, env=env)


def _dry_run_argv(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return shlex.split(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def with_pip(tmp_path_factory: pytest.TempPathFactory, make_venv) -> Path:
    return make_venv(tmp_path_factory.mktemp("a") / "env")


@posix_only
@pytest.mark.parametrize("how", ["VIRTUAL_ENV", "CONDA_PREFIX", "./.venv"])
def test_the_active_or_local_environment_is_the_target(tmp_path: Path, with_pip: Path, how: str) -> None:
    work = tmp_path / "project"
    work.mkdir()
    prefix = with_pip.parent.parent
    if how == "./.venv":
        (work / ".venv").symlink_to(prefix)
        done = _run(["install", "--dry-run", "--variant", "cpu"], work)
    else:
        done = _run(["install", "--dry-run", "--variant", "cpu"], work, **{how: str(prefix)})
    argv = _dry_run_argv(done)
    assert Path(argv[0]).parent.parent.resolve() == prefix.resolve() and argv[1:4] == ["-m", "pip", "install"]


@posix_only
def test_python_outranks_the_active_environment(tmp_path: Path, with_pip: Path, make_venv) -> None:
    other = make_venv(tmp_path / "other")
    done = _run(["install", "--dry-run", "--variant", "cpu", "--python", str(other)], tmp_path,
                VIRTUAL_ENV=str(with_pip.parent.parent))
    assert _dry_run_argv(done)[0] == str(other)


@posix_only
@pytest.mark.parametrize(("marker", "content", "tool"), [
    ("pipx_metadata.json", json.dumps({"main_package": {"package": "torch-install", "package_or_url": ".",
                                                        "apps": ["torch-install"]}, "python_version": "3.12",
                                       "venv_args": [], "injected_packages": {}, "pipx_metadata_version": "0.5"}),
     "pipx"),
    ("uv-receipt.toml", '[tool]\nrequirements = [{ name = "torch-install" }]\nentrypoints = [\n'
                        '    { name = "torch-install", install-path = "/home/u/.local/bin/torch-install" },\n]\n',
     "uv tool"),
])
def test_a_tool_environment_is_never_the_target(tmp_path: Path, marker: str, content: str, tool: str,
                                                make_venv) -> None:
    tool_python = make_venv(tmp_path / "tool-env", with_pip=False)
    (tmp_path / "tool-env" / marker).write_text(content)
    for command in (["install", "--dry-run", "--variant", "cpu"], ["doctor"]):
        done = _run(command, tmp_path, python=str(tool_python))
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.splitlines()
        assert f"runs in its own {tool} environment" in line and "--python PATH" in line
    env = make_venv(tmp_path / "user-env", with_pip=False)  # activated, it is the target
    done = _run(["doctor"], tmp_path, python=str(tool_python), VIRTUAL_ENV=str(env.parent.parent))
    assert done.returncode in (0, 1) and str(env.parent.parent) in done.stdout.splitlines()[0], done.stdout


@posix_only
def test_an_environment_without_pip_is_installed_into_with_uv(tmp_path: Path, make_venv) -> None:
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not os.path.isfile(uv):
        pytest.skip("uv is part of the test extra")
    bare = make_venv(tmp_path / "uv-made", with_pip=False)
    path = f"{Path(uv).parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    done = _run(["install", "--dry-run", "--variant", "cpu", "--python", str(bare)], tmp_path, path=path)
    argv = _dry_run_argv(done)
    assert argv[1:5] == ["pip", "install", "--python", str(bare)] and "has no pip; installing with uv" in done.stderr
    alone = _run(["install", "--variant", "cpu", "--python", str(bare), "--offline"], tmp_path, path="/nonexistent")
    assert alone.returncode == 3
    assert f"{bare} has no pip: add it with `{bare} -m ensurepip`, or use --installer uv" in alone.stderr


@posix_only
def test_a_named_environment_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    done = _run(["doctor"], tmp_path, VIRTUAL_ENV=str(tmp_path / "gone"))
    assert done.returncode == 2 and "$VIRTUAL_ENV=" in done.stderr and "no such environment" in done.stderr
