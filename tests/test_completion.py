"""The one completion step: a GPU given by PCI id or by name gets its architecture from the shipped tables, on every
front end, with the source of each filled fact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.machine import Gpu, Machine
from torch_install.machine_completion import complete_machine

LINUX = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}


@pytest.mark.parametrize(("gpu", "expected"), [
    (Gpu("nvidia", pci_id="10de:1b80"), {"name": "NVIDIA GeForce GTX 1080", "compute_capability": "6.1"}),
    (Gpu("nvidia", pci_id="10de:2330"), {"compute_capability": "9.0"}),
    (Gpu("amd", pci_id="1002:744c"), {"gfx": "gfx1100", "integrated": False}),
    (Gpu("intel", pci_id="8086:56a0"), {"family": "alchemist", "integrated": False}),
    (Gpu("intel", pci_id="8086:5917"), {"family": "gen9", "integrated": True}),
    (Gpu("nvidia", name="Tesla T4"), {"compute_capability": "7.5"}),
    (Gpu("amd", name="Radeon RX 6700 XT"), {"gfx": "gfx1031"}),
])
def test_a_gpu_by_pci_id_or_name_gets_its_architecture(gpu: Gpu, expected: dict[str, object]) -> None:
    completed = complete_machine(Machine(**LINUX, gpus=(gpu,)))
    assert {k: getattr(completed.gpus[0], k) for k in expected} == expected
    assert all(f"gpus[0].{k}" in completed.sources for k in expected)


def test_given_facts_are_kept_and_the_source_says_which_table() -> None:
    given = Gpu("nvidia", name="My renamed card", pci_id="10de:2684", compute_capability="8.9")
    completed = complete_machine(Machine(**LINUX, gpus=(given,), sources={"gpus[0].compute_capability": "NVML"}))
    assert completed.gpus[0].name == "My renamed card" and completed.sources["gpus[0].compute_capability"] == "NVML"
    by_pci = complete_machine(Machine(**LINUX, gpus=(Gpu("nvidia", pci_id="10de:1b80"),)))
    assert by_pci.sources["gpus[0].compute_capability"] == "PCI id table: 10de:1b80 is GP104 (sm_61)"


def test_an_unknown_gpu_stays_unknown() -> None:
    machine = Machine(**LINUX, gpus=(Gpu("nvidia", pci_id="10de:ffff"), Gpu("amd", name="Radeon Nonexistent")))
    assert complete_machine(machine) == machine


def _profile(tmp_path: Path, gpus: list[dict[str, object]], **fields: object) -> str:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({**LINUX, "nvidia_driver": "580.95.05", "gpus": gpus, **fields}))
    return str(path)


def test_plan_for_a_gpu_given_only_by_pci_id_picks_a_build_with_its_kernels(tmp_path: Path, capsys) -> None:
    target = _profile(tmp_path, [{"vendor": "nvidia", "pci_id": "10de:1b80"}])
    assert main(["plan", "--target", target, "--format", "json"]) in (0, 1)
    plan = json.loads(capsys.readouterr().out)
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.14.1", "cu126")  # 2.15 has no sm_61
    assert plan["machine"]["gpus"][0]["compute_capability"] == "6.1"


@pytest.mark.slow
def test_doctor_with_a_target_completes_the_gpu_and_sees_the_missing_kernels(tmp_path: Path, capsys) -> None:
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("")
    (site / "torch" / "version.py").write_text("__version__ = '2.8.0+cu128'\ncuda = '12.8'\nhip = None\n")
    dist = site / "torch-2.8.0+cu128.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0+cu128\n")
    (dist / "RECORD").write_text("")
    facts = tmp_path / "python"
    facts.write_text("#!/bin/sh\necho '" + json.dumps({
        "executable": str(facts), "version": "3.12.4", "implementation": "cpython", "system": "Linux",
        "machine": "x86_64", "path": [str(site)], "site_packages": [str(site)], "prefix": str(tmp_path),
        "base_prefix": "/usr", "isolated": True}) + "'\n")
    facts.chmod(0o755)
    target = _profile(tmp_path, [{"vendor": "nvidia", "name": "GeForce GTX 1080"}])
    code = main(["doctor", "--python", str(facts), "--target", target, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and "gpu-arch-not-in-build" in [f["code"] for f in report["findings"]]
    assert "torch==2.8.0+cu126" in report["fix"]["command"]
