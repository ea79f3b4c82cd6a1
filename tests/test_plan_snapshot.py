"""Every plan and detect case of scripts/plan_snapshot.py prints what the committed snapshot holds
(``tests/fixtures/plan-snapshot/``), byte for byte. A change of behaviour that is meant refreshes it:

    python scripts/plan_snapshot.py tests/fixtures/plan-snapshot

and the snapshot's diff shows what changed, case by case."""

from __future__ import annotations

import difflib
from pathlib import Path

from script_modules import script

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "tests" / "fixtures" / "plan-snapshot"
REFRESH = "python scripts/plan_snapshot.py tests/fixtures/plan-snapshot"


def test_every_case_prints_what_the_snapshot_holds() -> None:
    now = script("plan_snapshot").outputs()
    held = {path.stem: path.read_text(encoding="utf-8") for path in SNAPSHOT.glob("*.txt")}
    changed = sorted(name for name in now.keys() & held.keys() if now[name] != held[name])
    new, gone = sorted(now.keys() - held.keys()), sorted(held.keys() - now.keys())
    report = [f"new cases: {new}", f"cases gone: {gone}", f"changed: {changed}"]
    for name in changed[:3]:
        report += list(difflib.unified_diff(held[name].splitlines(), now[name].splitlines(), f"snapshot/{name}",
                                            f"now/{name}", lineterm="", n=1))[:30]
    assert not (changed or new or gone), "\n".join([*report, f"a change meant refreshes the snapshot: {REFRESH}"])


def test_the_snapshot_covers_every_fixture_and_format() -> None:
    snapshot = script("plan_snapshot")
    names = set(snapshot.cases())
    sysroots = [p.name for p in snapshot.SYSROOTS.iterdir() if p.is_dir()]
    assert len(names) > 400 and all(f"plan-{s}-{f}" in names for s in sysroots for f in snapshot.PLAN_FORMATS)
