"""A uv project's ``[tool.uv] constraint-dependencies`` and ``override-dependencies``: on the torch family they
decide the torch as ``uv lock`` does (a constraint bounds it; an override replaces the project's own requirement);
on other packages they are uv's, and an override replaces the project's own requirement of its package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.project.pyproject import load_toml
from wheels import build_wheel, uv_env

CPU = ["--os", "linux", "--arch", "x86_64", "--python", "3.12", "--offline", "--format", "json"]

PROJECT = """[project]
name = "app"
version = "0.1"
requires-python = ">=3.10"
dependencies = [{dependencies}]

[tool.uv]
{settings}
"""


def plan(tmp_path: Path, capsys: pytest.CaptureFixture[str], dependencies: str, settings: str) -> dict:
    (tmp_path / "pyproject.toml").write_text(PROJECT.format(dependencies=dependencies, settings=settings))
    assert main(["plan", "--project", str(tmp_path), *CPU]) == 0
    return json.loads(capsys.readouterr().out)


CASES = [
    ('"torch>=2.4"', 'constraint-dependencies = ["torch<2.6"]', "2.5.1"),
    ('"torch>=2.4"', 'constraint-dependencies = ["torch!=2.5.1,<2.6", "numpy<2"]', "2.5.0"),
    ('"torch>=2.5"', 'override-dependencies = ["torch==2.4.1"]', "2.4.1"),  # replaces the project's own
    ('"torch"', 'override-dependencies = ["torch==2.4.1 ; sys_platform != \'win32\'"]', "2.4.1"),
]


@pytest.mark.parametrize(("dependencies", "settings", "torch"), CASES)
def test_the_family_is_constrained_and_overridden_as_uv_lock_does(
        dependencies: str, settings: str, torch: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert plan(tmp_path, capsys, dependencies, settings)["choice"]["torch"] == torch


def test_an_override_of_another_package_replaces_the_projects_requirement(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A common use: xformers has no wheel for a platform, and an impossible marker drops it for uv; it no longer
    holds torch to the release its build needs (xformers 0.0.28.post1: torch 2.4.1)."""
    found = plan(tmp_path, capsys, '"torch", "xformers==0.0.28.post1"',
                 "override-dependencies = [\"xformers ; python_version >= '99'\"]")
    assert found["choice"]["torch"] != "2.4.1"
    assert "xformers==0.0.28.post1" not in found["commands"]["pip"]
    assert any("override-dependencies: xformers ; python_version >= '99' is uv's to apply" in n
               for n in found["notes"])


def test_a_setting_that_is_not_a_list_of_requirements_is_one_line(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text(PROJECT.format(dependencies='"torch"',
                                                            settings='constraint-dependencies = "torch<2.6"'))
    assert main(["plan", "--project", str(tmp_path), *CPU]) == 2
    assert "tool.uv.constraint-dependencies is not a list of requirement strings" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize(("dependencies", "settings", "torch"), CASES)
def test_real_uv_lock_takes_the_same_torch(dependencies: str, settings: str, torch: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """uv lock, offline over wheels of the releases named here (pure ones: the lock is for every platform), takes
    the torch the plan takes."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for version in ("2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.1"):
        build_wheel(wheels, "torch", version)
    build_wheel(wheels, "numpy", "1.26.4")
    project = tmp_path / "app"
    project.mkdir()
    (project / "pyproject.toml").write_text(PROJECT.format(dependencies=dependencies, settings=settings))
    uv = Path(sys.executable).with_name("uv")
    locked = subprocess.run([str(uv), "lock", "--offline", "--no-index", "--find-links", str(wheels)], cwd=project,
                            env=uv_env(tmp_path, wheels.as_uri()), capture_output=True, text=True, timeout=120)
    assert locked.returncode == 0, locked.stderr
    versions = {p["version"] for p in load_toml(str(project / "uv.lock"))["package"]
                if p["name"] == "torch"}
    assert versions == {torch}, versions
    assert plan(project, capsys, dependencies, settings)["choice"]["torch"] == torch


@pytest.mark.parametrize("groups", ["", '\n[dependency-groups]\ndev = ["numpy<2"]\n'])
def test_uvs_own_dev_dependencies_are_the_dev_group(groups: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """uv joins [tool.uv] dev-dependencies to the dev group: --group dev reads them (and PEP 735's dev too)."""
    (tmp_path / "pyproject.toml").write_text(PROJECT.format(dependencies='"torch"', settings='dev-dependencies = '
                                                            '["xformers==0.0.28.post1"]') + groups)
    assert main(["plan", "--project", str(tmp_path), "--group", "dev", *CPU]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["choice"]["torch"] == "2.4.1"  # xformers 0.0.28.post1's build
    assert ("numpy<2" in found["commands"]["pip"]) == bool(groups)
