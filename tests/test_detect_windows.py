"""Windows detection: present display adapters, NVIDIA driver from the display driver file version, OS build."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lanes import robustness
from torch_install.detectors import detect
from torch_install.detectors.unknown import Unknown
from torch_install.detectors.windows import (
    CIM_COMMAND,
    PNPUTIL_COMMAND,
    Adapter,
    nvidia_driver_from_file_version,
    parse_cim_adapters,
    parse_pnputil,
)
from torch_install.probe import Probe, command_slug

SYSROOTS = Path(__file__).parent / "fixtures" / "sysroots"
CIM = command_slug(CIM_COMMAND)

PNPUTIL = """Microsoft PnP Utility

Instance ID:                PCI\\VEN_10DE&DEV_2504&SUBSYS_397D1462&REV_A1\\4&2c9c6a4&0&0008
Device Description:         NVIDIA GeForce RTX 3060
Class Name:                 Display
Class GUID:                 {4d36e968-e325-11ce-bfc1-08002be10318}
Manufacturer Name:          NVIDIA
Status:                     Started
Driver Name:                oem35.inf

Instance ID:                PCI\\VEN_10DE&DEV_1C03&SUBSYS_85AE1043&REV_A1\\4&1b8d7a3&0&0019
Device Description:         NVIDIA GeForce GTX 1060 6GB
Class Name:                 Display
Class GUID:                 {4d36e968-e325-11ce-bfc1-08002be10318}
Manufacturer Name:          NVIDIA
Status:                     Disconnected
Driver Name:                oem35.inf
"""


def test_rtx3060_machine() -> None:
    m = detect(Probe(SYSROOTS / "windows-rtx3060"))
    assert (m.os, m.os_version, m.nvidia_driver) == ("windows", "10.0.22631", "552.22")
    assert "31.0.15.5222" in m.sources["nvidia_driver"]
    assert m.cuda_driver_api == "12.4"  # 552.22 meets CUDA 12.4 (Windows ≥ 551.61), not 12.5 (≥ 555.85)
    assert "windows driver table" in m.sources["cuda_driver_api"]
    assert [(g.vendor, g.pci_id, g.compute_capability, g.family, g.integrated) for g in m.gpus] == [
        ("nvidia", "10de:2504", "8.6", None, False), ("intel", "8086:4680", None, "xe-lp", True)]


def test_pnputil_fallback_lists_present_devices(tmp_path: Path) -> None:
    root = tmp_path / "win"
    shutil.copytree(SYSROOTS / "windows-rtx3060", root)
    (root / "_commands" / CIM).unlink()
    (root / "_commands" / command_slug(PNPUTIL_COMMAND)).write_text(PNPUTIL)
    m = detect(Probe(root))
    assert [(g.name, g.compute_capability) for g in m.gpus] == [("NVIDIA GeForce RTX 3060", "8.6")]
    assert m.nvidia_driver is None  # pnputil gives no driver version
    assert any("Win32_VideoController" in n for n in m.notes)


def test_device_with_a_problem_is_not_visible(tmp_path: Path) -> None:
    rows = [{"Name": "NVIDIA GeForce RTX 3060", "PNPDeviceID": "PCI\\VEN_10DE&DEV_2504&SUBSYS_0\\4&0",
             "DriverVersion": "31.0.15.5222", "Status": "Error", "ConfigManagerErrorCode": 43}]
    root = tmp_path / "win"
    shutil.copytree(SYSROOTS / "windows-rtx3060", root)
    (root / "_commands" / CIM).write_text(json.dumps(rows))
    m = detect(Probe(root))
    assert m.gpus[0].visible is False
    assert any("device problem" in n for n in m.notes)


def test_single_object_json_and_software_adapters() -> None:
    one = json.dumps({"Name": "Microsoft Basic Display Adapter", "PNPDeviceID": "ROOT\\DISPLAY\\0000",
                      "DriverVersion": "10.0.22621.1", "Status": "OK", "ConfigManagerErrorCode": 0})
    assert parse_cim_adapters(one) == []
    arc = json.dumps({"Name": "Intel(R) Arc(TM) A770 Graphics", "PNPDeviceID": "PCI\\VEN_8086&DEV_56A0&SUBSYS_1\\3&1",
                      "DriverVersion": "32.0.101.6078", "Status": "OK", "ConfigManagerErrorCode": 0})
    assert parse_cim_adapters(arc) == [Adapter("Intel(R) Arc(TM) A770 Graphics", "8086", "56a0", "32.0.101.6078")]


@pytest.mark.parametrize(("file_version", "driver"), [("31.0.15.5222", "552.22"), ("32.0.15.6094", "560.94"),
                                                      ("31.0.15.2657", "526.57"), ("32.0.15.8088", "580.88"),
                                                      ("27.21.14.5671", "456.71")])
def test_nvidia_driver_from_file_version(file_version: str, driver: str) -> None:
    assert nvidia_driver_from_file_version(file_version) == driver


@pytest.mark.parametrize("bad", ["", "31.0.15", "a.b.c.d", "31.0.5.5222", "31.0.15.55222", None, "٣.0.15.5222"])
def test_bad_file_versions_are_unknown(bad: str | None) -> None:
    assert isinstance(nvidia_driver_from_file_version(bad), Unknown)


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]", "\x00\xff", "[{\"Name\": ", "\"string\""])
def test_bad_cim_output_is_unknown(text: str) -> None:
    assert isinstance(parse_cim_adapters(text), Unknown)


@pytest.mark.parametrize("text", ["", "Microsoft PnP Utility\n\nNo devices were found on the system.", "\x00"])
def test_bad_pnputil_output_is_unknown(text: str) -> None:
    assert isinstance(parse_pnputil(text), Unknown)


@robustness(100)
@given(st.text())
def test_windows_parsers_never_raise(text: str) -> None:
    for parser in (parse_cim_adapters, parse_pnputil, nvidia_driver_from_file_version):
        assert isinstance(parser(text), (list, str, Unknown))


def test_not_windows_runs_nothing() -> None:
    probe = Probe(SYSROOTS / "uhd620")
    detect(probe)
    assert CIM not in probe.accessed.commands
