"""project/simple_yaml.py reads the block YAML conda and conda-smithy write as PyYAML does (every scalar kept as
the string it is written as), and names the line of anything it does not read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from torch_install.project.simple_yaml import MAX_DEPTH, YamlError, loads

CAPTURED = sorted(p for p in (Path(__file__).resolve().parents[1] / "scripts" / "reference" / "conda-forge").rglob(
    "*.yaml") if p.parent.name == ".ci_support")
DOCUMENTS = [
    "name: stats2\nchannels:\n  - javascript\ndependencies:\n  - python=3.9\n  - bokeh=2.4.2\n"
    "  - conda-forge::numpy=1.21.*\n  - nodejs=16.13.*\n  - flask\n  - pip\n  - pip:\n    - Flask-Testing\n",
    "---\nchannels: [conda-forge, 'nodefaults']  # flow\ndependencies:\n- python=3.12\n- pip:\n  - \"torch==2.1\"\n"
    "  - --index-url https://x/y\nvariables:\n  A: 'it''s'\n  B: \"tab\\tsep\"\nprefix: /opt/env\n",
    "a:\n  b:\n    - - x\n      - y\n    - c: d\n      e: []\n  f: {}\n",
]


def pyyaml_reads(text: str) -> Any:
    """PyYAML's safe reading of ``text``, through libyaml where PyYAML was built with it (the same reading, in C)."""
    import yaml  # PyYAML (the test extra) is the reference reader

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 (a safe loader)


def plain(value: Any) -> Any:
    """PyYAML's value with every scalar as the string it reads as (the reader keeps versions as strings)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"  # as written in these files
    return None if value is None else str(value)


@pytest.mark.parametrize("path", CAPTURED, ids=lambda p: p.name[:60])
def test_every_captured_variant_file_reads_as_pyyaml_reads_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert loads(text) == plain(pyyaml_reads(text))


@pytest.mark.parametrize("text", DOCUMENTS)
def test_environment_files_read_as_pyyaml_reads_them(text: str) -> None:
    assert loads(text) == plain(pyyaml_reads(text))


@pytest.mark.parametrize(("text", "line"), [
    ("a: 1\n  b: 2\n", 2), ("a:\n- x\n  - y\n", 3), ("a: &x 1\n", 1), ("a: |\n  text\n", 1), ("a: 1\na: 2\n", 2),
    ("a: 1\n---\nb: 2\n", 2), ("a: [x, [y]]\n", 1), ("a: 'open\n", 1), ("\ta: 1\n", 1), ("a: {b: 1}\n", 1)])
def test_what_it_does_not_read_names_its_line(text: str, line: int) -> None:
    with pytest.raises(YamlError) as raised:
        loads(text)
    assert raised.value.line == line


def test_nesting_is_bounded() -> None:
    deep = "".join(f"{'  ' * i}k{i}:\n" for i in range(MAX_DEPTH + 5)) + f"{'  ' * (MAX_DEPTH + 5)}v: 1\n"
    with pytest.raises(YamlError, match="nested more than"):
        loads(deep)
