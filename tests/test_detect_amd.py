"""AMD detection on captured sysroots (KFD topology, PCI table, ROCm version, command fallbacks)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lanes import robustness
from torch_install.detectors import detect
from torch_install.detectors.amd import (
    KfdNode,
    gfx_name,
    parse_agent_enumerator,
    parse_kfd_properties,
    parse_rocminfo,
)
from torch_install.detectors.rocm import parse_rocm_version
from torch_install.detectors.unknown import Unknown
from torch_install.probe import Probe, command_slug

SYSROOTS = Path(__file__).parent / "fixtures" / "sysroots"
KFD = "sys/class/kfd/kfd/topology"


def machine(name: str):
    return detect(Probe(SYSROOTS / name))


def copy_of(name: str, tmp_path: Path) -> Path:
    root = tmp_path / name
    shutil.copytree(SYSROOTS / name, root, symlinks=True)
    return root


@pytest.mark.parametrize(("version", "gfx"), [(90402, "gfx942"), (90010, "gfx90a"), (110501, "gfx1151"),
                                              (100306, "gfx1036"), (110000, "gfx1100"), (120001, "gfx1201"),
                                              (90012, "gfx90c"), (90000, "gfx900")])
def test_gfx_name_decodes_target_version(version: int, gfx: str) -> None:
    assert gfx_name(version) == gfx


def test_mi300x_eight_gpus_gfx942_matched_to_pci_slots() -> None:
    m = machine("mi300x")
    assert len(m.gpus) == 1
    gpu = m.gpus[0]
    assert (gpu.vendor, gpu.gfx, gpu.count, gpu.integrated, gpu.pci_id) == ("amd", "gfx942", 8, False, "1002:74a1")
    assert gpu.name == "AMD Instinct MI300X"
    assert gpu.driver == "amdgpu"
    assert m.rocm == "6.4.1"
    assert m.sources["rocm"] == "/opt/rocm/.info/version"
    assert m.sources["gpus[0].gfx"].endswith("nodes/2/properties")


def test_rx7900xtx_discrete_and_raphael_igpu_without_rocm() -> None:
    m = machine("rx7900xtx")
    assert [(g.pci_id, g.gfx, g.integrated) for g in m.gpus] == [
        ("1002:744c", "gfx1100", False), ("1002:164e", "gfx1036", True)]
    assert m.rocm is None


def test_strix_halo_is_integrated_gfx1151_and_rocm_path_wins() -> None:
    m = machine("strix-halo")
    assert [(g.gfx, g.integrated, g.pci_id) for g in m.gpus] == [("gfx1151", True, "1002:1586")]
    assert "8060S" in (m.gpus[0].name or "")
    assert m.rocm == "7.1.1"
    assert m.sources["rocm"] == "/opt/rocm-7.1.1/.info/version"


def test_without_kfd_the_pci_table_gives_gfx(tmp_path: Path) -> None:
    root = copy_of("rx7900xtx", tmp_path)
    shutil.rmtree(root / KFD)
    m = detect(Probe(root))
    assert [(g.gfx, g.integrated) for g in m.gpus] == [("gfx1100", False), ("gfx1036", True)]
    assert m.sources["gpus[0].gfx"] == "amd-pci.json (744c)"


def test_kfd_without_pci_adds_the_gpu(tmp_path: Path) -> None:
    root = copy_of("strix-halo", tmp_path)
    shutil.rmtree(root / "sys/bus")
    m = detect(Probe(root))
    assert [(g.vendor, g.gfx, g.pci_id, g.integrated) for g in m.gpus] == [("amd", "gfx1151", "1002:1586", True)]


def test_unknown_device_without_kfd_and_rocm_tools_fallback(tmp_path: Path) -> None:
    root = copy_of("strix-halo", tmp_path)
    shutil.rmtree(root / KFD)
    (root / "sys/bus/pci/devices/0000:c5:00.0/device").write_text("0x15ff\n")  # not in the table
    (root / "_commands").mkdir()
    (root / "_commands" / command_slug(["rocm_agent_enumerator"])).write_text("gfx000\ngfx1151\n")
    m = detect(Probe(root))
    assert m.gpus[0].gfx == "gfx1151"
    assert m.sources["gpus[0].gfx"] == "rocm_agent_enumerator"


def test_rocminfo_used_when_enumerator_fails(tmp_path: Path) -> None:
    root = copy_of("strix-halo", tmp_path)
    shutil.rmtree(root / KFD)
    (root / "sys/bus/pci/devices/0000:c5:00.0/device").write_text("0x15ff\n")
    (root / "_commands").mkdir()
    (root / "_commands" / command_slug(["rocminfo"])).write_text(ROCMINFO)
    m = detect(Probe(root))
    assert (m.gpus[0].gfx, m.gpus[0].name) == ("gfx1151", "AMD Radeon Graphics")
    assert any("rocm_agent_enumerator" in n for n in m.notes)


def test_no_rocm_install_means_no_command_is_run(tmp_path: Path) -> None:
    root = copy_of("rx7900xtx", tmp_path)
    shutil.rmtree(root / KFD)
    (root / "sys/bus/pci/devices/0000:03:00.0/device").write_text("0x15ff\n")
    probe = Probe(root)
    detect(probe)
    assert "rocm_agent_enumerator" not in probe.accessed.commands


def test_hsa_override_is_noted() -> None:
    m = detect(Probe(SYSROOTS / "rx7900xtx", env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}))
    assert any("HSA_OVERRIDE_GFX_VERSION=11.0.0" in n for n in m.notes)


def test_cpu_node_is_skipped_and_gpu_node_located() -> None:
    cpu = (SYSROOTS / "mi300x" / KFD / "nodes/0/properties").read_text()
    gpu = (SYSROOTS / "mi300x" / KFD / "nodes/9/properties").read_text()
    assert parse_kfd_properties(cpu) is None
    assert parse_kfd_properties(gpu) == KfdNode("?", "gfx942", 0x74A1, "0000:e5:00.0")


ROCMINFO = """ROCk module version 6.12.12 is loaded
=====================
HSA System Attributes
=====================
Runtime Version:         1.18
System Timestamp Freq.:  1000.000000MHz
==========
HSA Agents
==========
*******
Agent 1
*******
  Name:                    AMD RYZEN AI MAX+ 395 w/ Radeon 8060S
  Uuid:                    CPU-XX
  Marketing Name:          AMD RYZEN AI MAX+ 395 w/ Radeon 8060S
  Vendor Name:             CPU
  Device Type:             CPU
*******
Agent 2
*******
  Name:                    gfx1151
  Uuid:                    GPU-XX
  Marketing Name:          AMD Radeon Graphics
  Vendor Name:             AMD
  Device Type:             GPU
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx1151
*** Done ***
"""


def test_parse_rocminfo_keeps_gpu_agents_only() -> None:
    assert parse_rocminfo(ROCMINFO) == [("gfx1151", "AMD Radeon Graphics")]


@pytest.mark.parametrize(("text", "expected"),
                         [("6.4.1-120\n", "6.4.1"), ("7.1.1", "7.1.1"), ("6.2.0-66~22.04\n", "6.2.0")])
def test_parse_rocm_version(text: str, expected: str) -> None:
    assert parse_rocm_version(text) == expected


PARSERS = [parse_kfd_properties, parse_rocm_version, parse_agent_enumerator, parse_rocminfo]


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("text", ["", "\x00\x01\xff\xfe", "gfx_target_version 9040", "Agent 1\n  Name: gfx",
                                  "gfx_target_version 99999999999\nsimd_count 4", "vendor_id 4098\n"])
def test_parsers_answer_unknown_for_bad_input(parser, text: str) -> None:
    result = parser(text)
    assert isinstance(result, Unknown) and result.reason


@robustness(100)
@given(st.text())
def test_parsers_never_raise_on_random_text(text: str) -> None:
    for parser in PARSERS:
        result = parser(text)
        assert result is None or isinstance(result, (Unknown, KfdNode, str, list))


@robustness(100)
@given(st.binary())
def test_kfd_parser_never_raises_on_binary(data: bytes) -> None:
    result = parse_kfd_properties(data.decode("utf-8", "replace"))
    assert result is None or isinstance(result, (Unknown, KfdNode))


def test_truncated_kfd_file_is_a_note_not_a_crash(tmp_path: Path) -> None:
    root = copy_of("mi300x", tmp_path)
    props = root / KFD / "nodes/2/properties"
    props.write_text(props.read_text()[:40])
    m = detect(Probe(root))
    assert any("KFD node 2" in n for n in m.notes)
    assert (m.gpus[0].gfx, m.gpus[0].count) == ("gfx942", 8)  # the PCI table still names the truncated node's GPU
