"""One machine, one answer: plan, install, the doctor's fix, a fleet and container mode choose the same torch
release and variant for the same completed machine, on every sysroot fixture and every profile example."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from sysroot import FIXTURES
from torch_install.cli import main, targets
from torch_install.detectors import detect
from torch_install.environment.interpreter import query_interpreter
from torch_install.machine import Machine, load_machine
from torch_install.machine_completion import complete_machine
from torch_install.probe import Probe

pytestmark = pytest.mark.slow  # a process per path

PROFILES = Path(__file__).parent / "fixtures" / "profiles"
SYSROOTS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
EXAMPLES = sorted(p.stem for p in PROFILES.glob("*.json"))


@pytest.fixture(scope="module")
def empty_venv(tmp_path_factory: pytest.TempPathFactory, make_venv) -> str:
    """A real venv without torch (the doctor's fix is then the plan for the machine)."""
    return str(make_venv(tmp_path_factory.mktemp("venv") / "env", with_pip=False))


def machine(kind: str, name: str, python: str) -> Machine:
    """The machine as the sysroot or profile gives it, running ``python`` (the interpreter install would use)."""
    found = detect(Probe(root=FIXTURES / name)) if kind == "sysroot" else load_machine(PROFILES / f"{name}.json")
    return found._replace(python=python)


def choice(data: dict | None) -> tuple[str, str] | None:
    return (data["torch"], data["variant"]) if data else None


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, _ = capsys.readouterr()
    return code, out


@pytest.mark.parametrize(("kind", "name"), [("sysroot", n) for n in SYSROOTS] + [("profile", n) for n in EXAMPLES])
def test_every_path_chooses_the_same_build(kind: str, name: str, tmp_path: Path, empty_venv: str,
                                           capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    python = query_interpreter(empty_venv).python
    given = machine(kind, name, python)
    profile = tmp_path / "machine.json"
    profile.write_text(given.to_json())

    _, out = run(capsys, "plan", "--offline", "--target", str(profile), "--format", "json")
    planned = choice(json.loads(out)["choice"])

    _, out = run(capsys, "plan", "--offline", "--for-container", "--target", str(profile), "--format", "json")
    assert choice(json.loads(out)["choice"]) == planned, "container mode"

    _, out = run(capsys, "plan", "--offline", "--target", str(profile), "--target", str(profile), "--format", "json")
    assert choice(json.loads(out)["choice"]) == planned, "fleet"

    _, out = run(capsys, "doctor", "--target", str(profile), "--python", empty_venv, "--json")
    fix = json.loads(out)["fix"]
    assert choice(fix if fix and fix["torch"] else None) == planned, "doctor's fix"

    here = query_interpreter(sys.executable)
    if (given.os, given.arch) == ("linux", here.machine) and sys.platform.startswith("linux"):
        monkeypatch.setattr(targets, "detect_here", lambda args: given)  # this machine is the fixture's
        code, out = run(capsys, "install", "--dry-run", "--offline", "--python", empty_venv)
        pin = re.search(r"torch==([0-9][^+\s']*)(?:\+([a-z0-9.]+))?", out)
        installed = (pin[1], pin[2] or "default") if pin and code == 0 else None
        assert installed == planned, "install"


def test_the_paths_are_compared_on_many_machines() -> None:
    completed = [complete_machine(detect(Probe(root=FIXTURES / n))) for n in SYSROOTS]
    assert len(SYSROOTS) >= 15 and len(EXAMPLES) >= 30
    assert sum(1 for m in completed if m.gpus) >= 12
