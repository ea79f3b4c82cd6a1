"""The attack as a test: scripts/attack_rerun.py's classes of hostile input, run on a bounded budget of processes
and seconds, find no traceback, no internal error, no hang, no data lost, no secret printed, and no run past a
bounded peak memory. The classes: project input (includes, long lines, TOML), credentials of every alphabet,
capture tar headers, output that cannot be written, capture archives, credentials in every channel, narrow
encodings, the TOML forms of ``tool.uv`` that ``--merge`` meets (the README's merge flow run twice among them),
special files as ``--merge`` targets and inputs, and pip.conf spellings under ``install --pin`` (real pip)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLASSES = ("project_input", "redaction_alphabets", "tar_headers", "unwritable_output", "captures", "credentials",
           "encodings", "toml_forms", "special_files", "pin_configurations")
MAX_RSS_KIB = 400 * 1024  # a 64 MiB capture at most is read into memory; real runs stay under 100 MiB


@pytest.mark.slow
def test_the_attack_finds_nothing(tmp_path: Path) -> None:
    figures = tmp_path / "figures.json"
    argv = [sys.executable, str(ROOT / "scripts" / "attack_rerun.py"), "--quick", "--max-runs", "700",
            "--budget-seconds", "600", "--json", str(figures), *(f"--only={name}" for name in CLASSES)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(figures.read_text())["classes"]
    total = rows.pop("total")
    assert len(rows) >= len(CLASSES) - 1 and all(row["inputs"] > 0 for row in rows.values()), rows
    findings = {k: total[k] for k in ("tracebacks", "internal", "hangs", "data lost", "secrets")}
    assert findings == dict.fromkeys(findings, 0), (findings, done.stderr[-3000:])
    assert total["max RSS KiB"] < MAX_RSS_KIB, total
