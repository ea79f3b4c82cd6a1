"""A PDM project's ``[[tool.pdm.source]]`` and ``[tool.pdm.dev-dependencies]``, read as PDM reads them (its
documentation's source settings: the shapes written here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.cli import main

GPU = ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06", "--python", "3.12",
       "--offline", "--format", "json"]

PDM = """[project]
name = "app"
version = "0.1"
requires-python = ">=3.10"
dependencies = ["torch>=2.4", "torchvision", "requests"]

[[tool.pdm.source]]
name = "{name}"
url = "https://download.pytorch.org/whl/cu121"
verify_ssl = true
{include}

[tool.pdm.dev-dependencies]
test = ["pytest", "xformers==0.0.28.post1"]
"""


@pytest.mark.parametrize(("name", "include", "variant"), [
    ("pytorch", 'include_packages = ["torch", "torchvision"]', "cu121"),
    ("pytorch", 'include_packages = ["torch*"]', "cu121"),
    ("pypi", "", "cu121"),  # a source named pypi replaces the default index
    ("pytorch", "", "cu130")])  # searched beside the default index, as --extra-index-url: the machine's build
def test_a_pdm_source_that_serves_the_family_names_its_build(name: str, include: str, variant: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """PDM's documented source settings: a source named pypi replaces the default index, include_packages takes a
    package from that source only; any other source is searched beside the default one."""
    (tmp_path / "pyproject.toml").write_text(PDM.format(name=name, include=include))
    assert main(["plan", "--project", str(tmp_path), *GPU]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["choice"]["variant"] == variant
    assert variant != "cu130" or any("searched beside the default index" in n for n in found["notes"])


def test_pdm_dev_dependencies_are_groups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text(PDM.format(name="pytorch", include=""))
    assert main(["plan", "--project", str(tmp_path), "--group", "test", *GPU]) == 0
    assert json.loads(capsys.readouterr().out)["choice"]["torch"] == "2.4.1"  # xformers 0.0.28.post1's build
    assert main(["plan", "--project", str(tmp_path), "--group", "lint", *GPU]) == 2
    assert "--group lint: " in capsys.readouterr().err
