"""pyproject.toml files as their tools read them: a requirement on the project's own extras (``myproj[cuda]``
inside ``myproj``) is those extras' requirements, as pip and uv read it, each extra once, its marker kept, extras
that include each other named in one note; dependency groups follow ``include-group`` (a cycle is one line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.errors import InputError
from torch_install.project.pyproject import read_pyproject

LINUX = ["--os", "linux", "--arch", "x86_64", "--python", "3.12"]
RTX = [*LINUX, "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06"]

SELF = """
[project]
name = "My_Proj"
version = "0.1"
dependencies = ["numpy", "my-proj[torch] ; sys_platform == 'linux'"]

[project.optional-dependencies]
torch = ["torch>=2.6", "torchvision"]
cuda = ["my_proj[torch,extra]", "xformers"]
extra = ["my-proj[cuda]", "einops"]
all = ["my-proj[cuda,nope]"]

[dependency-groups]
test = ["pytest"]
dev = ["my-proj[all]", {include-group = "test"}, "my-proj"]
"""


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main(["plan", *argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_the_projects_own_extras_are_read_in_place_each_once(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(SELF)
    notes: list[str] = []
    wanted = read_pyproject(str(tmp_path), groups=["dev"], notes=notes)
    assert [w.text for w in wanted] == [
        "numpy", 'torch>=2.6; sys_platform == "linux"', 'torchvision; sys_platform == "linux"',
        "einops", "xformers", "pytest"]
    assert wanted[1].origin.endswith("project.optional-dependencies.torch[0]")
    path = tmp_path / "pyproject.toml"
    assert notes[0] == (f"{path}: my-proj[torch] ; sys_platform == 'linux', my-proj[all], my-proj[cuda,nope], "
                        "my_proj[torch,extra], my-proj[cuda] name the project's own extras: their requirements are "
                        "read in place")
    assert f"{path}: extras include each other (all -> cuda -> extra -> cuda): each is read once" in notes
    assert any("the project defines no extra nope (has: all, cuda, extra, torch)" in n for n in notes)
    assert any("dependency-groups.dev[2]: my-proj is the project itself" in n for n in notes)


def test_an_extra_chosen_with_extra_is_not_read_twice(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(SELF)
    wanted = read_pyproject(str(tmp_path), extras=["torch", "cuda"])
    assert [w.text for w in wanted] == ["numpy", "torch>=2.6", "torchvision", "einops", "xformers"]


def test_the_plan_installs_what_the_projects_own_extras_name(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text(SELF)
    p = plan(capsys, *RTX, "--project", str(tmp_path), "--extra", "cuda")
    assert p["choice"]["packages"] == {"torch": "2.15.0+cu130", "torchvision": "0.29.2"}
    assert [c["name"] for c in p["choice"]["companions"]] == ["xformers"]
    assert "my-proj" not in p["commands"]["pip"] and "my_proj" not in p["commands"]["pip"]
    assert p["request"]["others"] == ["numpy", "einops", "xformers"]
    windows = plan(capsys, "--os", "windows", "--arch", "x86_64", "--python", "3.12", "--project", str(tmp_path))
    assert windows["choice"]["packages"] == {"torch": "2.15.0+cpu"}  # the marked extra does not apply there


@pytest.mark.parametrize(("text", "message"), [
    ('[project]\nname = "x"\n[dependency-groups]\na = [{include-group = "b"}]\nb = [{include-group = "c"}]\n'
     'c = [{include-group = "a"}]\n', r"dependency-groups include themselves \(a -> b -> c -> a\)"),
    ('[project]\nname = "x"\n[project.optional-dependencies]\n'
     + "".join(f'e{i} = ["x[e{i + 1}]"]\n' for i in range(40)) + 'e40 = ["numpy"]\n',
     r"extras naming the project's own extras nest more than 32 deep \(e0 -> … -> e32\)"),
])
def test_a_cycle_or_a_chain_too_deep_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(InputError, match=message):
        read_pyproject(str(tmp_path), groups=["a"] if "dependency-groups" in text else [],
                       extras=["e0"] if "e0" in text else [])
