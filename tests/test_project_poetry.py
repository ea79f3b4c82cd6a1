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
    with pytest.raises(InputError, match=r"has no \[project\] table \(PEP 621\), \[tool.poetry.dependencies\] nor "
                                         "setup.cfg beside it"):
        read_pyproject(str(tmp_path))


SOURCED = """[tool.poetry]
name = "gpu-app"
version = "0.1.0"
description = ""
authors = ["A <a@example.org>"]

[tool.poetry.dependencies]
python = ">=3.10,<3.13"
{torch}
numpy = "^1.26"

[[tool.poetry.source]]
name = "pytorch-cu121"
url = "https://download.pytorch.org/whl/cu121"
priority = "{priority}"
"""
GPU = ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06", "--python", "3.12"]
MAC = ["--os", "macos", "--arch", "arm64", "--python", "3.12"]


def poetry_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, machine: list[str]) -> dict:
    (tmp_path / "pyproject.toml").write_text(text)
    code = main(["plan", "--project", str(tmp_path), *machine, "--offline", "--format", "json"])
    out, err = capsys.readouterr()
    found = json.loads(out)
    assert code == (4 if any(w["blocking"] for w in found["warnings"]) else 0), err  # 4: the plan does not run
    return found


@pytest.mark.parametrize(("torch", "priority", "machine", "variant"), [
    ('torch = { version = "^2.4", source = "pytorch-cu121" }', "explicit", GPU, "cu121"),
    ('torch = { version = "^2.4", source = "pytorch-cu121" }', "explicit", MAC, None),  # none for macOS: said
    ('torch = [\n  { version = "^2.4", source = "pytorch-cu121", markers = "sys_platform == \'linux\'" },\n'
     '  { version = "^2.4", source = "pypi", markers = "sys_platform == \'darwin\'" },\n]', "explicit", GPU, "cu121"),
    ('torch = [\n  { version = "^2.4", source = "pytorch-cu121", markers = "sys_platform == \'linux\'" },\n'
     '  { version = "^2.4", source = "pypi", markers = "sys_platform == \'darwin\'" },\n]', "explicit", MAC,
     "default"),
    ('torch = { version = "^2.4", platform = "linux", source = "pytorch-cu121" }', "explicit", MAC, "default"),
    ('torch = "^2.4"', "primary", GPU, "cu121"),  # poetry searches a primary source first, for every package
    ('torch = "^2.4"', "supplemental", GPU, "cu130"),  # only where the default index has no torch: the machine's
    ('torch = "^2.4"', "explicit", GPU, "cu130")])
def test_a_poetry_source_of_the_pytorch_index_names_the_build(
        torch: str, priority: str, machine: list[str], variant: str | None, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    found = poetry_plan(tmp_path, capsys, SOURCED.format(torch=torch, priority=priority), machine)
    if variant is None:  # a build that does not run here is the user's to change: named, with what would run
        message = next(w["message"] for w in found["warnings"] if w["blocking"])
        assert found["choice"] is None and "macOS has no cu121 build of torch" in message
        assert message.endswith('the project\'s configuration without [tool.poetry.dependencies] torch = '
                                '{ source = "pytorch-cu121" } gets it')
        return
    assert found["choice"]["variant"] == variant
    if variant == "cu121":
        assert found["choice"]["torch"] == "2.5.1"  # the newest release with a cu121 build
        assert found["choice"]["index_url"] == "https://download.pytorch.org/whl/cu121"


def test_poetry_2_reads_a_source_for_a_project_table_dependency(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    text = ('[project]\nname = "gpu-app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
            'dependencies = ["torch>=2.4", "numpy"]\n\n'
            '[tool.poetry.dependencies]\ntorch = { source = "pytorch-cu121" }\n\n'
            '[[tool.poetry.source]]\nname = "pytorch-cu121"\nurl = "https://download.pytorch.org/whl/cu121"\n'
            'priority = "explicit"\n')
    found = poetry_plan(tmp_path, capsys, text, GPU)
    assert (found["choice"]["torch"], found["choice"]["variant"]) == ("2.5.1", "cu121")


@pytest.mark.parametrize(("url", "why"), [
    ("https://mirror.example.org/simple", "whose URL names no build of the PyTorch index"),
    ("https://download.pytorch.org/whl/cu121", None)])
def test_a_source_is_a_note_where_its_url_names_no_build(url: str, why: str | None, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    text = SOURCED.format(torch='torch = { version = "^2.4", source = "mirror" }', priority="explicit").replace(
        'name = "pytorch-cu121"', 'name = "mirror"').replace("https://download.pytorch.org/whl/cu121", url)
    found = poetry_plan(tmp_path, capsys, text, GPU)
    assert found["choice"]["variant"] == ("cu130" if why else "cu121")
    assert any(why in n for n in found["notes"]) if why else True


def test_a_source_no_table_defines_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text(SOURCED.format(torch='torch = { version = "^2.4", source = "cu118" }',
                                                            priority="explicit"))
    assert main(["plan", "--project", str(tmp_path), *GPU, "--offline"]) == 2
    err = capsys.readouterr().err
    assert "tool.poetry.dependencies.torch: source 'cu118' is no [[tool.poetry.source]] (has: pytorch-cu121)" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("legacy", "variant"), [("default = true", "cu121"), ("secondary = true", "cu130"),
                                                 ("", "cu121")])  # no priority: primary
def test_poetrys_older_source_flags_are_read_as_their_priorities(legacy: str, variant: str, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Before priorities (poetry < 1.5): ``default = true`` is the default source, ``secondary = true`` a
    supplemental one; a source with neither is primary."""
    text = SOURCED.format(torch='torch = "^2.4"', priority="").replace('priority = ""', legacy)
    assert poetry_plan(tmp_path, capsys, text, GPU)["choice"]["variant"] == variant
