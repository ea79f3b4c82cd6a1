"""The plan's warning codes and the doctor's finding codes: one list each, enforced, documented, and each emitted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torch_install.doctor.checks import CODES, Finding
from torch_install.resolver.plan import WARNING_CODES, check_code

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "src" / "torch_install").rglob("*.py"))


def _documented(doc: str, heading: str) -> list[str]:
    """The codes in the first column of the table under ``heading`` (several codes may share a row)."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    return [code for cell in rows for code in re.findall(r"`([a-z0-9-]+)`", cell)]


def test_every_warning_code_is_documented_once_and_every_documented_code_exists() -> None:
    documented = _documented("plan-json.md", "## Warning codes")
    assert sorted(documented) == sorted(WARNING_CODES) and len(documented) == len(set(documented))


def test_the_documented_blocking_column_is_the_code_list() -> None:
    text = (ROOT / "docs" / "plan-json.md").read_text(encoding="utf-8").split("## Warning codes", 1)[1]
    blocking = {m[1] for m in re.finditer(r"^\| `([a-z-]+)` \| (yes|no) \|", text, re.M) if m[2] == "yes"}
    assert blocking == {code for code, blocks in WARNING_CODES.items() if blocks}


def test_every_finding_code_is_documented_and_every_documented_code_exists() -> None:
    documented = _documented("doctor-json.md", "## Finding codes")
    assert sorted(documented) == sorted(CODES) and len(documented) == len(set(documented))


@pytest.mark.parametrize("code", sorted(set(WARNING_CODES) | set(CODES)))
def test_every_code_is_emitted_somewhere(code: str) -> None:
    assert SOURCE.count(f'"{code}"') >= 2, f"{code} is listed but never emitted"  # the list, and an emitter


def test_an_unknown_code_is_a_bug_not_output() -> None:
    with pytest.raises(ValueError, match="unknown plan warning code 'driver-old'"):
        check_code("driver-old")
    with pytest.raises(ValueError, match="unknown doctor finding code 'no-torchs'"):
        Finding("no-torchs", "warning", "title").checked()  # every finding is checked as the doctor collects it
    with pytest.raises(ValueError, match="severity"):
        Finding("no-torch", "fatal", "title").checked()
