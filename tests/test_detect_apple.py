"""macOS detection: Apple silicon GPU, the real macOS version behind "10.16", Rosetta."""

from __future__ import annotations

import json
import plistlib
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lanes import robustness
from torch_install.detectors import detect
from torch_install.detectors.apple import SYSTEM_VERSION, parse_chip, parse_system_version, parse_translated
from torch_install.detectors.unknown import Unknown
from torch_install.probe import Probe, command_slug

SYSROOTS = Path(__file__).parent / "fixtures" / "sysroots"
TRANSLATED = command_slug(["sysctl", "-n", "sysctl.proc_translated"])


def mac(tmp_path: Path, **host: str) -> Path:
    root = tmp_path / "mac"
    shutil.copytree(SYSROOTS / "macos-m2", root)
    facts = json.loads((root / "_host.json").read_text())
    facts.update(host)
    (root / "_host.json").write_text(json.dumps(facts))
    return root


def test_m2_reads_the_real_version_behind_10_16() -> None:
    m = detect(Probe(SYSROOTS / "macos-m2"))
    assert (m.os, m.os_version, m.arch, m.rosetta) == ("macos", "14.5", "arm64", False)
    assert m.sources["os_version"] == SYSTEM_VERSION
    assert [(g.vendor, g.name, g.family, g.integrated) for g in m.gpus] == [("apple", "Apple M2", "m2", True)]
    assert not m.notes


def test_rosetta_python_is_detected_and_explained(tmp_path: Path) -> None:
    root = mac(tmp_path, machine="x86_64")
    (root / "_commands" / TRANSLATED).write_text("1\n")
    m = detect(Probe(root))
    assert m.rosetta is True
    assert m.gpus[0].family == "m2"
    assert any("Rosetta" in n for n in m.notes)


def test_intel_mac_has_no_apple_gpu(tmp_path: Path) -> None:
    root = mac(tmp_path, machine="x86_64")
    (root / "_commands" / (TRANSLATED + ".rc")).write_text("1")  # "unknown oid" on Intel Macs
    m = detect(Probe(root))
    assert m.rosetta is False
    assert m.gpus == ()
    assert any("Intel Mac" in n for n in m.notes)


def test_missing_plist_and_10_16_leaves_version_unknown(tmp_path: Path) -> None:
    root = mac(tmp_path)
    (root / SYSTEM_VERSION.lstrip("/")).unlink()
    m = detect(Probe(root))
    assert m.os_version is None
    assert any("10.16" in n for n in m.notes)


def test_old_macos_has_no_mps(tmp_path: Path) -> None:
    root = mac(tmp_path)
    (root / SYSTEM_VERSION.lstrip("/")).write_bytes(plistlib.dumps({"ProductVersion": "12.1"}, fmt=plistlib.FMT_BINARY))
    m = detect(Probe(root))
    assert m.os_version == "12.1"
    assert any("MPS is unavailable" in n for n in m.notes)


def test_not_on_macos_nothing_is_run() -> None:
    probe = Probe(SYSROOTS / "uhd620")
    detect(probe)
    assert not [c for c in probe.accessed.commands if c.startswith("sysctl")]


@pytest.mark.parametrize(("text", "expected"), [("Apple M2", ("Apple M2", "m2")),
                                                ("Apple M3 Max\n", ("Apple M3 Max", "m3"))])
def test_parse_chip(text: str, expected: tuple[str, str]) -> None:
    assert parse_chip(text) == expected


@pytest.mark.parametrize("data", [b"", b"\x00\xff", b"<plist><dict><key>ProductVersion</key>", b"bplist00\x01",
                                  plistlib.dumps({"ProductVersion": 14}), plistlib.dumps([1, 2])])
def test_bad_plists_are_unknown(data: bytes) -> None:
    result = parse_system_version(data)
    assert isinstance(result, Unknown) and result.reason


@pytest.mark.parametrize("text", ["", "2", "\x00", "Intel(R) Core(TM) i9"])
def test_bad_sysctl_output_is_unknown(text: str) -> None:
    assert isinstance(parse_translated(text), Unknown)
    assert isinstance(parse_chip(text), Unknown)


@robustness(100)
@given(st.binary())
def test_plist_parser_never_raises(data: bytes) -> None:
    assert isinstance(parse_system_version(data), (str, Unknown))


@robustness(100)
@given(st.text())
def test_sysctl_parsers_never_raise(text: str) -> None:
    assert isinstance(parse_translated(text), (bool, Unknown))
    assert isinstance(parse_chip(text), (tuple, Unknown))
