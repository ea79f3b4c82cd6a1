"""A setuptools project's declarative setup.cfg, read as setuptools reads it where no pyproject.toml [project]
table says the dependencies: alone, beside a pyproject.toml of [build-system] only, or as a local project to
install; what setup.py would add is not read (it is not run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.project.pyproject import read_pyproject

CPU = ["--os", "linux", "--arch", "x86_64", "--python", "3.10", "--offline", "--format", "json"]
SETUP_CFG = """[metadata]
name = oldproj
version = 0.1

[options]
py_modules =
python_requires = >=3.8
install_requires =
    torch>=1.12,<2.3  # the last release tested
    numpy; python_version >= "3.9"
    # a comment line
    einops

[options.extras_require]
cuda =
    xformers==0.0.22
dev = pytest; flake8
"""


def project(tmp_path: Path, pyproject: str | None) -> Path:
    (tmp_path / "setup.cfg").write_text(SETUP_CFG)
    (tmp_path / "setup.py").write_text("raise SystemExit('never run')\n")
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    return tmp_path


@pytest.mark.parametrize("pyproject", [None, '[build-system]\nrequires = ["setuptools"]\nbuild-backend = '
                                             '"setuptools.build_meta"\n\n[tool.black]\nline-length = 100\n'])
def test_install_requires_bound_the_plan(pyproject: str | None, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--project", str(project(tmp_path, pyproject)), *CPU]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["choice"]["torch"] == "2.2.2"  # the newest release torch>=1.12,<2.3 allows
    assert "einops" in found["commands"]["pip"] and "never run" not in json.dumps(found)
    assert any("setup.cfg: read as setuptools reads it" in n for n in found["notes"])


def test_an_extra_is_chosen_and_a_one_line_value_split_at_semicolons(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--project", str(project(tmp_path, None)), "--extra", "cuda", "--extra", "dev", *CPU]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["choice"]["torch"] == "2.0.1"  # xformers 0.0.22's build
    assert "pytest flake8" in found["commands"]["pip"]
    assert main(["plan", "--project", str(tmp_path), "--extra", "rocm", *CPU]) == 2
    assert "defines no such extra (has: cuda, dev)" in capsys.readouterr().err


def test_a_local_setuptools_project_bounds_the_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pkg").mkdir()
    project(tmp_path / "pkg", None)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "req.txt").write_text("-e ./pkg\n")
    assert main(["plan", "-r", "req.txt", *CPU]) == 0
    assert json.loads(capsys.readouterr().out)["choice"]["torch"] == "2.2.2"


@pytest.mark.slow
def test_the_requirements_read_are_those_setuptools_writes(tmp_path: Path) -> None:
    """Real setuptools builds the metadata (its PEP 517 hook, in a process of its own, setup.py a plain setup());
    every Requires-Dist it writes is a requirement read here, and no other."""
    from packaging.requirements import Requirement

    project(tmp_path, None)
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    out = tmp_path / "meta"
    out.mkdir()
    subprocess.run([sys.executable, "-c", "import sys, setuptools.build_meta as b; "
                                          "print(b.prepare_metadata_for_build_wheel(sys.argv[1]))", str(out)],
                   cwd=tmp_path, check=True, capture_output=True, timeout=120)
    metadata = (next(out.glob("*.dist-info")) / "METADATA").read_text()
    for extras in ((), ("cuda", "dev")):
        written = sorted(str(Requirement(line.split(": ", 1)[1])) for line in metadata.splitlines()
                         if line.startswith("Requires-Dist: ") and
                         ("extra ==" not in line or any(f'extra == "{e}"' in line for e in extras)))
        read = sorted(str(Requirement(w.text)) for w in read_pyproject(str(tmp_path), extras))
        assert [r.split(" ; extra")[0].split("; extra")[0] for r in written] == read, (written, read)


@pytest.mark.parametrize("pyproject", [None, '[build-system]\nrequires = ["setuptools"]\n'])
def test_a_project_of_setup_py_alone_is_planned_with_a_note(pyproject: str | None, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "setup.py").write_text("raise SystemExit('never run')\n")
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    assert main(["plan", "--project", str(tmp_path), *CPU]) == 0
    found = json.loads(capsys.readouterr().out)
    assert main(["plan", *CPU]) == 0
    assert found["choice"] == json.loads(capsys.readouterr().out)["choice"]  # as if no project were named
    assert any("the project's requirements are in its code, which is not run" in n for n in found["notes"])
