"""What the plan writes for a project of each kind read back as input: ``--format requirements`` of a Pipfile, a
setup.cfg, a pyproject of dynamic dependencies, a poetry or PDM project with a PyTorch index source, a uv
project with constraint dependencies, and a conda environment including a requirements file gives, read with
``-r``, the same build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.cli import main

GPU = ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06", "--python", "3.12",
       "--offline"]
PROJECTS = {
    "Pipfile": {"Pipfile": '[[source]]\nurl = "https://download.pytorch.org/whl/cu121"\nverify_ssl = true\n'
                           'name = "pytorch"\n\n[packages]\ntorch = "*"\nxformers = "*"\n'},
    "setup.cfg": {"setup.cfg": "[options]\ninstall_requires =\n    torch>=2.4,<2.6\n    einops\n"},
    "dynamic": {"pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndynamic = ["dependencies"]\n'
                                  '[tool.setuptools.dynamic]\ndependencies = {file = ["req.txt"]}\n',
                "req.txt": "torch==2.6.0\nnumpy\n"},
    "poetry": {"pyproject.toml": '[tool.poetry]\nname = "x"\nversion = "0"\n[tool.poetry.dependencies]\n'
                                 'python = ">=3.10"\ntorch = { version = "^2.4", source = "cu118" }\n'
                                 '[[tool.poetry.source]]\nname = "cu118"\nurl = "https://download.pytorch.org/whl/cu118"\n'
                                 'priority = "explicit"\n'},
    "pdm": {"pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["torch", "torchvision"]\n'
                              '[[tool.pdm.source]]\nname = "pypi"\nurl = "https://download.pytorch.org/whl/cu126"\n'},
    "uv": {"pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["torch>=2.4"]\n'
                             '[tool.uv]\nconstraint-dependencies = ["torch<2.6"]\n'},
    "environment.yml": {"environment.yml": "name: x\ndependencies:\n  - python=3.12\n  - pip\n  - pip:\n"
                                           "    - -r req.txt\n", "req.txt": "torch==2.5.1+cu124\n"},
}

NAMED = {"Pipfile": "cu121", "poetry": "cu118", "pdm": "cu126", "environment.yml": "cu124"}


def plan(argv: list[str], capsys: pytest.CaptureFixture[str], fmt: str = "json") -> str:
    assert main(["plan", *argv, *GPU, "--format", fmt]) in (0, 4)
    return capsys.readouterr().out


@pytest.mark.parametrize("kind", sorted(PROJECTS))
def test_the_requirements_a_project_plans_read_back_to_its_build(kind: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in PROJECTS[kind].items():
        (tmp_path / name).write_text(text)
    project = str(tmp_path / "environment.yml") if kind == "environment.yml" else str(tmp_path)
    first = json.loads(plan(["--project", project], capsys))["choice"]
    (tmp_path / "back.txt").write_text(plan(["--project", project], capsys, "requirements"))
    again = json.loads(plan(["-r", str(tmp_path / "back.txt")], capsys))["choice"]
    assert (again["torch"], again["variant"], again["index_url"]) == (first["torch"], first["variant"],
                                                                      first["index_url"])
    assert first["variant"] == NAMED.get(kind, first["variant"])  # a build the project names is the one taken
