"""The README's Windows AMD and Jetson examples are real output: the commands, run against loopback copies of the
vendors' indexes (vendor_index.py) on the sysroots they name, print exactly what it shows (the summary on stdout,
the warnings on stderr)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from servers import DirectoryServer
from torch_install.cli import main
from vendor_index import serve_indexes

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SHOWN = "127.0.0.1:8000"


def examples() -> list[tuple[str, str]]:
    section = README.read_text(encoding="utf-8").split("### AMD on Windows, Jetson", 1)[1].split("\n### ", 1)[0]
    block = section.split("```\n", 2)[1]
    found = re.findall(r"^\$ (torch-install [^\n]+)\n(.*?)(?=\n\n\$ |\Z)", block.rstrip("`\n"), re.M | re.S)
    return [(command, output.rstrip("\n")) for command, output in found]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DirectoryServer]:
    server = serve_indexes(tmp_path_factory.mktemp("vendor-indexes"))
    yield server
    server.close()


def test_the_readme_has_a_windows_amd_and_a_jetson_example() -> None:
    shown = [command for command, _ in examples()]
    assert len(shown) == 2 and "windows-rx7900xtx" in shown[0] and "jetson-orin" in shown[1]


@pytest.mark.parametrize(("command", "output"), examples(), ids=["windows-amd", "jetson"])
def test_each_example_prints_what_the_readme_shows(command: str, output: str, indexes: DirectoryServer,
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    here = f"127.0.0.1:{indexes.port}"
    assert main(command.replace(SHOWN, here).split()[1:]) == 0
    out, err = capsys.readouterr()
    lines = output.replace(SHOWN, here).splitlines()
    assert out.rstrip("\n").splitlines() == [line for line in lines if not line.startswith("torch-install: ")]
    assert err.rstrip("\n").splitlines() == [line for line in lines if line.startswith("torch-install: ")]
