"""The README's project examples are real output: each ``torch-install plan`` of its "A project, not just torch"
section (a project with an extra, a labelled pin, a direct reference to a wheel, one that does not install here),
run on the machine it was written on (its glibc, 2.36, is the one field the examples take from this machine),
prints exactly what it shows, the warnings after the plan as a terminal shows them. (The section's install flow
runs real pip against a mirror: tests/test_project_install.py runs it.)"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from torch_install.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"
# the project the section's first example reads (the README says what it holds)
PYPROJECT = ('[project]\nname = "demo"\nversion = "0.1"\ndependencies = ["torch>=2.8", "torchvision", "transformers"]\n'
             '[project.optional-dependencies]\nspeed = ["xformers"]\n')


def examples() -> list[tuple[str, str]]:
    """(command, output) of each ``torch-install plan`` example in the section's code blocks."""
    section = README.read_text(encoding="utf-8").split("### A project, not just torch", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"^```\n(.*?)^```$", section, re.M | re.S)
    found = []
    for block in blocks:
        found += re.findall(r"^\$ (torch-install plan [^\n]+)\n(.*?)(?=\n\n\$ |\n\$ |\Z)", block, re.M | re.S)
    return [(command, output.rstrip("\n")) for command, output in found]


def test_the_section_shows_a_project_a_labelled_pin_and_a_direct_reference() -> None:
    commands = [c for c, _ in examples()]
    assert any("--project" in c for c in commands) and any("torch==2.9.1+cu128" in c for c in commands)
    assert sum("torch @ https://" in c for c in commands) == 2


@pytest.mark.parametrize(("command", "output"), examples(), ids=lambda v: v[:70])
def test_each_example_prints_what_the_readme_shows(command: str, output: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from torch_install.cli import targets

    here = targets.platform_here
    monkeypatch.setattr(targets, "platform_here", lambda args: here(args)._replace(glibc="2.36"))
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    monkeypatch.chdir(tmp_path)
    code = main(shlex.split(command)[1:])
    out, err = capsys.readouterr()
    assert code in (0, 4), err
    assert (out + err).rstrip("\n") == output
