"""`install` in a conda environment whose torch conda installed: it never puts a pip torch over it unasked. It
stops (a dry run warns) naming conda-forge's build for this machine as a conda command, and --installer pip
replaces it knowingly."""

from __future__ import annotations

from pathlib import Path

import pytest

from conda_prefixes import SITE, pip_torch, write_prefix
from torch_install.cli import common, main
from torch_install.environment.interpreter import Interpreter

FLAGS: list[str] = []  # install resolves for this machine

def conda_env(tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    prefix = write_prefix(tmp_path, case)
    site = str(prefix / SITE)
    found = Interpreter(executable=str(prefix / "bin" / "python"), version="3.12.7", system="Linux",
                        machine="x86_64", path=(site,), site_packages=(site,), prefix=str(prefix),
                        base_prefix=str(prefix))
    monkeypatch.setattr(common, "target_interpreter", lambda python: found)
    return prefix


def test_install_stops_and_names_the_conda_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    prefix = conda_env(tmp_path, "cpu-build", monkeypatch)
    code = main(["install", *FLAGS])
    err = capsys.readouterr().err
    assert code == 3
    assert "conda manages torch here: pytorch 2.13.0 build cpu_mkl_py312_" in err
    assert f"conda install --prefix {prefix} --channel conda-forge 'pytorch=2.13.0=" in err  # this machine's build
    assert "add --installer pip" in err


def test_a_dry_run_warns_and_prints_the_pip_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    conda_env(tmp_path, "cuda129-healthy", monkeypatch)
    code = main(["install", "--dry-run", *FLAGS])
    out, err = capsys.readouterr()
    assert code == 0 and "conda manages torch here" in err and "-m pip install torch==" in out


def test_installer_pip_replaces_it_knowingly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    conda_env(tmp_path, "cuda129-healthy", monkeypatch)
    code = main(["install", "--dry-run", "--installer", "pip", *FLAGS])
    out, err = capsys.readouterr()
    assert code == 0 and "conda manages torch" not in err and "-m pip install torch==" in out


def test_a_pip_torch_already_over_condas_is_not_condas_to_keep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    prefix = conda_env(tmp_path, "cuda129-healthy", monkeypatch)
    pip_torch(prefix, "2.15.0+cu130")
    code = main(["install", "--dry-run", *FLAGS])
    assert code == 0 and "conda manages torch" not in capsys.readouterr().err
