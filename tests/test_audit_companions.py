"""scripts/audit_companions.py: the table of packages built against one torch agrees with the captured evidence, and
one changed fact of each class is reported."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from script_modules import script

ROOT = Path(__file__).resolve().parents[1]
TABLE = json.loads((ROOT / "src" / "torch_install" / "resolver" / "data" / "companions.json").read_text())
EVIDENCE = json.loads((ROOT / "scripts" / "reference" / "companions.json").read_text())


def audit_module() -> ModuleType:
    return script("audit_companions")


def release(table: dict[str, Any], name: str, version: str) -> dict[str, Any]:
    return next(r for r in table["packages"][name]["releases"] if r["version"] == version)


def test_the_table_agrees_with_the_evidence(capsys: pytest.CaptureFixture[str]) -> None:
    assert audit_module().main([]) == 0
    assert capsys.readouterr().out.startswith("0 disagreements over ")


def _drop(rows: list[dict[str, Any]], version: str) -> None:
    rows.remove(next(r for r in rows if r["version"] == version))


MUTATIONS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "a release left out": (lambda t: _drop(t["packages"]["vllm"]["releases"], "0.6.3"),
                           "vllm 0.6.3: on the default index, not in the table"),
    "a release that is not on the index": (
        lambda t: t["packages"]["xformers"]["releases"].insert(0, {"version": "0.0.36", "torch": "==2.11.0"}),
        "xformers 0.0.36: in the table, not a release"),
    "a declared torch changed": (lambda t: release(t, "xformers", "0.0.34").update(torch="==2.9.1"),
                                 "xformers 0.0.34: torch '==2.9.1' in the table, its Requires-Dist says '==2.10.0'"),
    "a declared torch for a release none of whose wheels was read": (
        lambda t: release(t, "xformers", "0.0.9").update(torch="==2.0.0"), "xformers 0.0.9: torch '==2.0.0'"),
    "a family pin changed": (lambda t: release(t, "vllm", "0.33.0")["family"].update(torchaudio="==2.11.1"),
                             "vllm 0.33.0: torchaudio '==2.11.1' in the table"),
    "a yanked flag dropped": (lambda t: release(t, "fbgemm-gpu", "1.4.2").pop("yanked"),
                              "fbgemm-gpu 1.4.2: yanked is False in the table, True on the default index"),
    "a yanked flag added": (lambda t: release(t, "vllm", "0.2.2").update(yanked=""), "vllm 0.2.2: yanked is True"),
    "a platform dropped": (lambda t: release(t, "xformers", "0.0.35").update(platforms=["linux_x86_64"]),
                           "xformers 0.0.35: platforms ['linux_x86_64'] in the table"),
    "a Python tag added": (lambda t: release(t, "xformers", "0.0.30")["pythons"].append("cp313"),
                           "xformers 0.0.30: Python tags"),
    "a Requires-Python changed": (lambda t: release(t, "vllm", "0.34.0").update(python=">=3.10"),
                                  "vllm 0.34.0: Requires-Python"),
    "a workflow's variant list labelled as observed": (
        lambda t: t["packages"]["xformers"]["labels"].update(variants="observed-wheel"),
        "xformers 0.0.35: its variants is labelled observed-wheel; its evidence makes it build-workflow"),
    "a branch's stable torch labelled as torchao's own source": (
        lambda t: release(t, "torchao", "0.10.0").pop("labels"),
        "torchao 0.10.0: its built_for is labelled source-file; its evidence makes it inferred"),
    "an uploaded variant dropped": (lambda t: release(t, "xformers", "0.0.35")["variants"].remove("cu130"),
                                    "xformers 0.0.35: variants"),
    "a release the workflow uploaded said to come from the user's index": (
        lambda t: release(t, "xformers", "0.0.28.post3").update({"from": "default"}),
        "xformers 0.0.28.post3: from the user's index in the table"),
    "torchao's built-for torch changed": (
        lambda t: release(t, "torchao", "0.14.1").update(built_for="==2.8.0"),
        "torchao 0.14.1: built for '==2.8.0' in the table, its sources say '==2.9.0'"),
    "torchao's variants changed": (lambda t: release(t, "torchao", "0.10.0")["variants"].append("cu128"),
                                   "torchao 0.10.0: variants"),
    "fbgemm-gpu loses a variant": (lambda t: release(t, "fbgemm-gpu", "1.6.0")["variants"].remove("cu130"),
                                   "fbgemm-gpu 1.6.0: variants"),
    "fbgemm-gpu's torch minor changed": (lambda t: release(t, "fbgemm-gpu", "1.5.0").update(built_for="==2.9.*"),
                                         "fbgemm-gpu 1.5.0: built for '==2.9.*'"),
    "an inferred fbgemm-gpu pairing labelled as stated": (
        lambda t: release(t, "fbgemm-gpu", "1.9.0").pop("labels"), "fbgemm-gpu 1.9.0: its torch is labelled"),
    "torchrec paired with another fbgemm-gpu": (lambda t: release(t, "torchrec", "1.6.0").update(built_for="==2.10.*"),
                                                "torchrec 1.6.0: built for"),
    "flash-attn loses its torch 2.8 builds": (
        lambda t: t["packages"]["flash-attn"]["build_sets"].__setitem__(
            0, [b for b in t["packages"]["flash-attn"]["build_sets"][0] if b[0] != "2.8"]),
        "flash-attn 2.8.3.post1: its publish.yml builds ('2.8'"),
    "flash-attn gains a build": (
        lambda t: t["packages"]["flash-attn"]["build_sets"][0].append(["2.9", "12", "TRUE", ["3.12"], "linux_x86_64"]),
        "flash-attn 2.8.3.post1: a wheel for ('2.9'"),
    "flash-attn's unknown wheels given builds": (lambda t: release(t, "flash-attn", "2.8.3.post2").pop("labels"),
                                                 "flash-attn 2.8.3.post2: no publish.yml at its tag"),
    "a PyG page dropped": (lambda t: t["packages"]["torch-scatter"]["builds"].pop("2.4"),
                           "torch-scatter torch 2.4: pages None in the table"),
    "a PyG page's variant changed": (lambda t: t["packages"]["pyg-lib"]["builds"]["2.12"]["linux"].append("cu128"),
                                     "pyg-lib torch 2.12: pages"),
    "a PyG source build where there is no sdist": (
        lambda t: t["packages"]["pyg-lib"].update(source_build="a compiler"),
        "pyg-lib: a source build is in the table"),
}


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_one_changed_fact_of_each_class_is_reported(mutation: str) -> None:
    change, expected = MUTATIONS[mutation]
    table = copy.deepcopy(TABLE)
    change(table)
    problems = audit_module().audit(table, EVIDENCE)
    assert any(expected in line for line in problems), (mutation, problems)


def test_the_evidence_changed_is_reported_too() -> None:
    """Both ways: a release the index gained, and a Requires-Dist it changed, are disagreements."""
    evidence = copy.deepcopy(EVIDENCE)
    evidence["default_index"]["torchao"]["releases"].insert(0, {
        "version": "0.19.0", "files": ["torchao-0.19.0-py3-none-any.whl"], "yanked": False, "yanked_reason": None,
        "requires_python": None, "metadata": "torchao-0.19.0-py3-none-any.whl", "requires": []})
    next(r for r in evidence["default_index"]["vllm"]["releases"] if r["version"] == "0.30.0")["requires"][0] = \
        "torch==2.12.0"
    problems = audit_module().audit(TABLE, evidence)
    assert "torchao 0.19.0: on the default index, not in the table" in problems
    assert any(line.startswith("vllm 0.30.0: torch '==2.13.0' in the table, its Requires-Dist says '==2.12.0'")
               for line in problems)
