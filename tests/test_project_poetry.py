"""A poetry project's pyproject.toml (no [project] table): its dependencies, extras and groups read as poetry
reads them, each version constraint as the PEP 440 range poetry's dependency specification gives it (the
marker-poetry-2025-06 case of the corpus is one such real project)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from torch_install.cli import main
from torch_install.errors import InputError
from torch_install.project.poetry import pep440
from torch_install.project.pyproject import read_pyproject

PROFILE = Path(__file__).parent / "fixtures" / "projects-corpus" / "profiles" / "linux-cuda-py312.json"


@pytest.mark.parametrize(("poetry", "inside", "outside"), [
    ("^1.2.3", ["1.2.3", "1.9"], ["1.2.2", "2.0.0"]),
    ("^1.2", ["1.2.0", "1.99"], ["1.1.9", "2.0"]),
    ("^0.2.3", ["0.2.3", "0.2.9"], ["0.3.0"]),
    ("^0.0.3", ["0.0.3"], ["0.0.4"]),
    ("^0.0", ["0.0.9"], ["0.1.0"]),
    ("^0", ["0.9"], ["1.0"]),
    ("~1.2.3", ["1.2.9"], ["1.3.0", "1.2.2"]),
    ("~1.2", ["1.2.0", "1.2.9"], ["1.3"]),
    ("~1", ["1.9"], ["2.0"]),
    ("1.2.*", ["1.2.7"], ["1.3.0"]),
    ("*", ["0.1", "99"], []),
    ("2.1.0", ["2.1.0"], ["2.1.1"]),
    (">= 1.2, < 1.5", ["1.4"], ["1.5", "1.1"]),
    (">=1.2 <1.5", ["1.4"], ["1.5"]),
    ("~=2.2", ["2.9"], ["3.0"]),
])
def test_a_poetry_constraint_allows_the_versions_poetry_allows(poetry: str, inside: list[str],
                                                                outside: list[str]) -> None:
    spec = pep440(poetry)
    assert spec is not None
    assert all(SpecifierSet(spec).contains(v) for v in inside), spec
    assert not any(SpecifierSet(spec).contains(v) for v in outside), spec


def test_several_ranges_are_no_one_specifier() -> None:
    assert pep440("^1.0 || ^2.0") is None


POETRY = """
[tool.poetry]
name = "demo"
version = "0.1.0"

[tool.poetry.dependencies]
python = "^3.10"
torch = "^2.7.0"
numpy = { version = "~1.26", markers = "sys_platform == 'linux'" }
xformers = { version = "0.0.30", optional = true, python = ">=3.9" }
detectron2 = { git = "https://github.com/facebookresearch/detectron2.git", rev = "v0.6" }
both = [{ version = "^1.0", platform = "linux" }, { version = "^2.0", platform = "darwin" }]
odd = "^1.0 || ^2.0"

[tool.poetry.extras]
fast = ["xformers"]

[tool.poetry.group.dev.dependencies]
pytest = "^8.0"
"""


def test_dependencies_optional_packages_and_groups_are_read_as_poetry_reads_them(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(POETRY)
    notes: list[str] = []
    got = {w.text for w in read_pyproject(str(tmp_path), notes=notes)}
    assert got == {"torch>=2.7.0,<3", "numpy>=1.26,<1.27 ; (sys_platform == 'linux')",
                   "detectron2 @ git+https://github.com/facebookresearch/detectron2.git@v0.6",
                   "both>=1.0,<2 ; sys_platform == 'linux'", "both>=2.0,<3 ; sys_platform == 'darwin'", "odd"}
    assert all(Requirement(t) for t in got)
    assert notes[0].endswith("read as poetry reads it ([tool.poetry.dependencies], its extras and groups; ^ and ~ "
                             "as poetry's ranges); the project itself is poetry's to install (poetry install)")
    assert any("'^1.0 || ^2.0' is several ranges" in n for n in notes)
    extra = {w.text for w in read_pyproject(str(tmp_path), extras=["fast"], groups=["dev"])} - got
    assert extra == {"xformers==0.0.30 ; python_full_version >= '3.9'", "pytest>=8.0,<9"}


@pytest.mark.parametrize(("argv", "message"), [
    (["--extra", "gpu"], "--extra gpu: {path} defines no such extra in [tool.poetry.extras] (has: fast)"),
    (["--group", "docs"], "--group docs: {path} defines no such poetry group (has: dev)"),
])
def test_an_extra_or_group_poetry_does_not_define_is_one_line(tmp_path: Path, argv: list[str],
                                                             message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(POETRY)
    extras, groups = (argv[1:], []) if argv[0] == "--extra" else ([], argv[1:])
    with pytest.raises(InputError) as raised:
        read_pyproject(str(tmp_path), extras=extras, groups=groups)
    assert str(raised.value) == message.format(path=tmp_path / "pyproject.toml")


def test_a_poetry_projects_torch_range_bounds_the_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text(POETRY.replace('"^2.7.0"', '"~2.7.0"'))
    assert main(["plan", "--project", str(tmp_path), "--offline", "--target", str(PROFILE), "--format",
                 "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["choice"]["torch"].startswith("2.7.")


def test_a_pyproject_of_neither_kind_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    with pytest.raises(InputError, match=r"has no \[project\] table \(PEP 621\) nor \[tool.poetry.dependencies\]"):
        read_pyproject(str(tmp_path))
