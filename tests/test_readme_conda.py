"""The README's pixi and conda examples are real output: the commands, run on the profiles it describes (an RTX
4090 Linux box with driver 560.35.03, an Apple-silicon Mac), print exactly what it shows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from torch_install.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"
PROFILES = {
    "linux.json": {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35", "nvidia_driver": "560.35.03",
                   "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090"}]},
    "mac.json": {"os": "macos", "arch": "arm64", "os_version": "14.5", "python": "3.12"},
}


def examples() -> list[tuple[str, str]]:
    """(command, output) of each ``--format pixi``/``conda`` example in the README."""
    section = README.read_text(encoding="utf-8").split("### conda, mamba and pixi", 1)[1].split("\n### ", 1)[0]
    block = section.split("```\n", 2)[1]
    found = re.findall(r"^\$ (torch-install [^\n]+)\n(.*?)(?=\n\n\$ |\Z)", block.rstrip("`\n"), re.M | re.S)
    return [(command, output.rstrip("\n")) for command, output in found]


def test_the_readme_has_a_pixi_and_a_conda_example() -> None:
    assert sorted(c.rsplit("--format ", 1)[1] for c, _ in examples()) == ["conda", "pixi"]


@pytest.mark.parametrize(("command", "output"), examples(), ids=lambda v: v[:60])
def test_each_example_prints_what_the_readme_shows(command: str, output: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    for name, profile in PROFILES.items():
        (tmp_path / name).write_text(json.dumps(profile), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(command.split()[1:]) == 0
    assert capsys.readouterr().out.rstrip("\n") == output
