"""A pyproject whose dependencies its build backend makes (``dynamic``): setuptools' ``{file = […]}`` entries read
as setuptools reads them, the plan bound by what they require; one the backend computes is a note, never read as
"no dependencies" silently; ``--merge`` does not make dynamic dependencies static."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.project.pyproject import read_pyproject

RTX = ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06", "--python", "3.12"]

SETUPTOOLS = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "dyn-proj"
version = "0.1"
dynamic = ["dependencies", "optional-dependencies"]

[tool.setuptools]
py-modules = []

[tool.setuptools.dynamic]
dependencies = {{file = {deps}}}
optional-dependencies.vision = {{ file = ["requirements/vision.txt"] }}
"""

REQUIREMENTS = """# runtime
torch>=2.4,<2.7  # the CUDA build is chosen at install time
numpy>=1.26 ; python_version >= "3.10"

einops
"""


def project(tmp_path: Path, deps: str = '["requirements.txt"]', requirements: str = REQUIREMENTS) -> Path:
    (tmp_path / "pyproject.toml").write_text(SETUPTOOLS.format(deps=deps))
    (tmp_path / "requirements.txt").write_text(requirements)
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "vision.txt").write_text("torchvision==0.20.1\n")
    return tmp_path


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main(["plan", *argv, *RTX, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("deps", ['["requirements.txt"]', '"requirements.txt"'])
def test_dependencies_in_a_file_setuptools_reads_bound_the_plan(deps: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    found = plan(capsys, "--project", str(project(tmp_path, deps)))
    assert found["choice"]["torch"] == "2.6.0"  # the newest release torch>=2.4,<2.7 allows
    assert "einops" in found["commands"]["pip"] and "numpy>=1.26" in found["commands"]["pip"]
    assert any("dynamic dependencies are read from requirements.txt" in n for n in found["notes"])


HATCH = """[build-system]
requires = ["hatchling", "hatch-requirements-txt"]
build-backend = "hatchling.build"

[project]
name = "dyn-proj"
version = "0.1"
dynamic = ["dependencies", "optional-dependencies"]

[tool.hatch.metadata.hooks.requirements_txt]
{files}

[tool.hatch.metadata.hooks.requirements_txt.optional-dependencies]
vision = ["requirements/vision.txt"]
"""


@pytest.mark.parametrize("files", ['files = ["requirements.txt"]', 'filename = "requirements.txt"', ""])
def test_the_hatch_plugins_files_bound_the_plan(files: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """hatch-requirements-txt: ``files``, the older ``filename``, requirements.txt when it names neither."""
    project(tmp_path)
    (tmp_path / "pyproject.toml").write_text(HATCH.format(files=files))
    found = plan(capsys, "--project", str(tmp_path), "--extra", "vision")
    assert (found["choice"]["torch"], found["choice"]["packages"]["torchvision"].split("+")[0]) == ("2.5.1",
                                                                                                   "0.20.1")
    assert "einops" in found["commands"]["pip"]
    assert any("[tool.hatch.metadata.hooks.requirements_txt] names them" in n for n in found["notes"])


def test_a_dynamic_extra_is_chosen_with_extra(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = plan(capsys, "--project", str(project(tmp_path)), "--extra", "vision")
    assert (found["choice"]["torch"], found["choice"]["packages"]["torchvision"].split("+")[0]) == ("2.5.1",
                                                                                                   "0.20.1")
    assert main(["plan", "--project", str(tmp_path), "--extra", "audio", *RTX]) == 2
    assert "defines no such extra (has: vision)" in capsys.readouterr().err


def test_the_projects_own_dynamic_extra_is_read_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project(tmp_path, requirements="dyn-proj[vision]\n")
    assert plan(capsys, "--project", str(tmp_path))["choice"]["torch"] == "2.5.1"


@pytest.mark.parametrize(("requirements", "message"), [
    ("-r other.txt\ntorch\n", r"tool\.setuptools\.dynamic\.dependencies: requirements\.txt:1: -r is a pip option"),
    ("torch==" + "9" * 40 + "\n", r"requirements\.txt:1.*a version number of more than"),
    ("torch >= \n", r"requirements\.txt:1")])
def test_a_line_setuptools_refuses_is_one_line_naming_it(requirements: str, message: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import re

    assert main(["plan", "--project", str(project(tmp_path, requirements=requirements)), *RTX]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err
    assert re.search(message, err), err


def test_a_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--project", str(project(tmp_path, '["reqs/missing.txt"]')), *RTX]) == 2
    assert "tool.setuptools.dynamic.dependencies: reqs/missing.txt: cannot read" in capsys.readouterr().err


def test_dependencies_a_backend_computes_are_a_note_not_an_empty_list(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["hatchling"]\nbuild-backend = '
                                             '"hatchling.build"\n[project]\nname = "x"\nversion = "0"\n'
                                             'dynamic = ["dependencies"]\n')
    found = plan(capsys, "--project", str(tmp_path))
    assert any("its dependencies are dynamic, made by its build backend: not read here" in n for n in found["notes"])


def test_merge_does_not_make_dynamic_dependencies_static(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (project(tmp_path) / "pyproject.toml").read_bytes()
    assert main(["plan", "--project", str(tmp_path), *RTX, "--format", "pyproject", "--merge",
                 str(tmp_path / "pyproject.toml")]) == 2
    assert "project.dependencies is dynamic" in capsys.readouterr().err
    assert (tmp_path / "pyproject.toml").read_bytes() == before


@pytest.mark.slow
def test_the_requirements_read_are_those_setuptools_writes_in_the_metadata(tmp_path: Path) -> None:
    """Real setuptools builds the project's metadata (its PEP 517 hook, in a process of its own); every
    Requires-Dist it writes is a requirement read here, and no other."""
    from packaging.requirements import Requirement

    project(tmp_path, requirements=REQUIREMENTS + "pillow[jpeg] @ https://h.example/pillow-11.0-py3-none-any.whl\n"
                                                  "\tscipy  # tab before it\n")
    out = tmp_path / "meta"
    out.mkdir()
    subprocess.run([sys.executable, "-c", "import sys, setuptools.build_meta as b; "
                                          "print(b.prepare_metadata_for_build_wheel(sys.argv[1]))", str(out)],
                   cwd=tmp_path, check=True, capture_output=True, timeout=120)
    metadata = next(out.glob("*.dist-info")) / "METADATA"
    written = sorted(str(Requirement(line.split(": ", 1)[1])) for line in metadata.read_text().splitlines()
                     if line.startswith("Requires-Dist: ") and "extra ==" not in line)
    read = sorted(str(Requirement(w.text)) for w in read_pyproject(str(tmp_path)))
    assert read == written and len(read) == 5
