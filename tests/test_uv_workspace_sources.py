"""A uv workspace member's sources and indexes, as uv takes them: the root's ``[tool.uv.sources]`` apply to the
member where its own name no source for the package, and the root's ``[[tool.uv.index]]`` with them; a member's
own source wins."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.project.pyproject import load_toml
from wheels import build_wheel, uv_env

GPU = ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06", "--python", "3.12",
       "--offline", "--format", "json"]
ROOT = """[project]
name = "root"
version = "0.1"
requires-python = ">=3.10"
dependencies = []

[tool.uv.workspace]
members = ["packages/*"]

[tool.uv.sources]
torch = {{ index = "pytorch-cu121" }}

[[tool.uv.index]]
name = "pytorch-cu121"
url = "{url}"
{extra}explicit = true
"""
MEMBER = """[project]
name = "app"
version = "0.1"
requires-python = ">=3.10"
dependencies = ["torch"]
{own}"""


def workspace(tmp_path: Path, url: str = "https://download.pytorch.org/whl/cu121", extra: str = "",
              own: str = "") -> Path:
    (tmp_path / "packages" / "app").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text(ROOT.format(url=url, extra=extra))
    (tmp_path / "packages" / "app" / "pyproject.toml").write_text(MEMBER.format(own=own))
    return tmp_path / "packages" / "app"


def test_the_roots_sources_and_indexes_name_a_members_build(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--project", str(workspace(tmp_path)), *GPU]) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["choice"]["torch"], found["choice"]["variant"]) == ("2.5.1", "cu121")
    assert any("a member of the uv workspace of" in n for n in found["notes"])


def test_a_members_own_source_wins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    own = ('\n[tool.uv.sources]\ntorch = { index = "pytorch-cu118" }\n\n[[tool.uv.index]]\nname = "pytorch-cu118"\n'
           'url = "https://download.pytorch.org/whl/cu118"\nexplicit = true\n')
    assert main(["plan", "--project", str(workspace(tmp_path, own=own)), *GPU]) == 0
    assert json.loads(capsys.readouterr().out)["choice"]["variant"] == "cu118"


def test_the_root_itself_is_read_as_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace(tmp_path)
    assert main(["plan", "--project", str(tmp_path), "torch", *GPU]) == 0
    found = json.loads(capsys.readouterr().out)
    assert not any("a member of the uv workspace" in n for n in found["notes"])


@pytest.mark.slow
def test_real_uv_takes_the_roots_index_for_a_members_torch(tmp_path: Path) -> None:
    """uv lock in the member's directory, the root's index a flat directory holding a cu121 wheel: the lock takes
    the member's torch from it, which is what the plan reads the root's PyTorch index source as."""
    flat = tmp_path / "flat"
    flat.mkdir()
    build_wheel(flat, "torch", "2.5.1+cu121")
    member = workspace(tmp_path / "ws", url=str(flat), extra='format = "flat"\n')
    elsewhere = tmp_path / "default"  # the default index: it has no torch
    elsewhere.mkdir()
    done = subprocess.run([str(Path(sys.executable).with_name("uv")), "lock", "--offline"], cwd=member,
                          env=uv_env(tmp_path, elsewhere.as_uri()), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    torch = next(p for p in load_toml(str(tmp_path / "ws" / "uv.lock"))["package"] if p["name"] == "torch")
    assert torch["version"] == "2.5.1+cu121" and "flat" in json.dumps(torch["source"])
