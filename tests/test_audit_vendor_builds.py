"""scripts/audit_vendor_builds.py: the shipped table agrees with the captured vendor statements, and one wrong fact of
each class the audit checks, put into a copy of the table, is reported."""

from __future__ import annotations

import copy
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("audit_vendor_builds", ROOT / "scripts/audit_vendor_builds.py")
assert SPEC and SPEC.loader
AUDIT = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(AUDIT)
TABLE = json.loads((ROOT / "src/torch_install/resolver/data/vendor-builds.json").read_text(encoding="utf-8"))
CAPTURED = ROOT / "scripts/reference/vendor"


def _build(data: dict[str, Any], index: str) -> dict[str, Any]:
    build: dict[str, Any] = next(b for b in data["builds"] if b["index"] == index)
    return build


MUTATIONS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "a gfx target AMD has no extra for": (
        lambda d: _build(d, "amd-stable")["targets"]["windows_x86_64"].update(gfx803="release-ready"),
        "gfx803 not among AMD's [device-*] extras"),
    "a support level AMD does not give": (
        lambda d: _build(d, "amd-stable")["targets"]["windows_x86_64"].update(gfx1201="release-ready"),
        "gfx1201 at release-ready, SUPPORTED_GPUS.md says build-passing"),
    "a nightly target AMD's Windows table lacks": (
        lambda d: _build(d, "amd-nightly")["targets"]["windows_x86_64"].pop("gfx1100"),
        "AMD's extras its OS table ticks"),
    "a Python the release builds do not make": (
        lambda d: _build(d, "amd-stable")["python"]["windows_x86_64"].append("3.9"), "Pythons"),
    "a torchvision AMD does not pair with the torch": (
        lambda d: _build(d, "amd-stable")["packages"].update(torchvision="0.28.0+rocm10.1.0"),
        "RELEASES.md pairs torch 2.14 with 0.29"),
    "the nightly's ROCm version": (lambda d: _build(d, "amd-nightly").update(variant="rocm7.14.0"),
                                   "the development branch is ROCm 10.1.0"),
    "the nightly index's URL": (lambda d: d["indexes"]["amd-nightly"].update(url="https://rocm.nightlies.amd.com/v2/"),
                                "RELEASES.md names https://rocm.nightlies.amd.com/whl-multi-arch/"),
    "a stable index off RFC0012's hosts": (
        lambda d: d["indexes"]["amd-stable"].update(url="https://stable.amd.example/rocm/whl-next/"),
        "no <stream>.repo.amd.com/rocm/<whl|whl-next>/ of RFC0012"),
    "a Jetson build with Orin's neighbours' arch list": (
        lambda d: _build(d, "jetson-jp6-cu126")["targets"]["linux_aarch64"].update({"8.6": None}),
        "JetPack builds for L4T 36 compile ['8.7']"),
    "the CUDA an L4T release ships": (lambda d: d["l4t_cuda"].update({"36.3": "12.6"}),
                                      "L4T 36.3: CUDA 12.6, jetson-containers says 12.4"),
    "a Jetson index off the project's layout": (
        lambda d: d["indexes"]["jetson-jp6-cu126"].update(url="https://pypi.jetson-ai-lab.dev/jp6/cu126"),
        "jetson-containers' layout gives https://pypi.jetson-ai-lab.io/jp6/cu126"),
}


def test_the_shipped_table_agrees_with_the_captured_statements() -> None:
    assert AUDIT.audit(TABLE, CAPTURED) == []


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_a_wrong_fact_is_reported_with_its_evidence(mutation: str) -> None:
    change, words = MUTATIONS[mutation]
    data = copy.deepcopy(TABLE)
    change(data)
    problems = AUDIT.audit(data, CAPTURED)
    assert any(words in line for line in problems), problems


def test_the_script_exits_1_on_a_disagreement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = copy.deepcopy(TABLE)
    data["l4t_cuda"]["36.2"] = "12.6"
    (tmp_path / "t.json").write_text(json.dumps(data))
    assert AUDIT.main(["--table", str(tmp_path / "t.json")]) == 1
    assert "L4T 36.2: CUDA 12.6, jetson-containers says 12.2" in capsys.readouterr().out
    assert AUDIT.main([]) == 0
