"""Intel detection: family from the PCI id, integrated or discrete, i915/xe bound or not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lanes import robustness
from torch_install.detectors import detect
from torch_install.detectors.intel import family_of
from torch_install.detectors.unknown import Unknown
from torch_install.package_data import load_json
from torch_install.probe import Probe

SYSROOTS = Path(__file__).parent / "fixtures" / "sysroots"
FAMILIES = {"alchemist", "battlemage", "ponte-vecchio", "meteor-lake", "arrow-lake", "lunar-lake", "panther-lake",
            "nova-lake", "crescent-island", "xe-lp", "gen11", "gen9", "gen8", "gen7"}


def test_arc_a770_with_raptor_lake_igpu() -> None:
    m = detect(Probe(SYSROOTS / "arc-a770"))
    assert [(g.pci_id, g.family, g.integrated, g.name, g.driver) for g in m.gpus] == [
        ("8086:a780", "xe-lp", True, "Intel UHD Graphics 770", "i915"),
        ("8086:56a0", "alchemist", False, "Intel Arc A770", "i915")]
    assert not [n for n in m.notes if "Intel" in n]


def test_uhd620_only_is_gen9_integrated() -> None:
    m = detect(Probe(SYSROOTS / "uhd620"))
    assert [(g.family, g.integrated, g.name) for g in m.gpus] == [("gen9", True, "Intel UHD Graphics 620")]


@pytest.mark.parametrize("driver", [None, "vfio-pci"])
def test_missing_gpu_driver_is_noted(tmp_path: Path, driver: str | None) -> None:
    root = tmp_path / "arc"
    shutil.copytree(SYSROOTS / "arc-a770", root, symlinks=True)
    link = root / "sys/bus/pci/devices/0000:03:00.0/driver"
    link.unlink()
    if driver:
        link.symlink_to(f"../../../../bus/pci/drivers/{driver}")
    m = detect(Probe(root))
    assert m.gpus[1].family == "alchemist"
    assert any("8086:56a0" in n and "XPU needs i915 or xe" in n for n in m.notes)


@pytest.mark.parametrize(("device", "family", "integrated"), [
    ("56a0", "alchemist", False), ("e20b", "battlemage", False), ("0bd5", "ponte-vecchio", False),
    ("7d55", "meteor-lake", True), ("7d51", "arrow-lake", True), ("64a0", "lunar-lake", True),
    ("b080", "panther-lake", True), ("a7a0", "xe-lp", True), ("9a49", "xe-lp", True), ("4905", "xe-lp", False),
    ("8a52", "gen11", True), ("3e92", "gen9", True), ("5917", "gen9", True), ("56c0", "alchemist", False)])
def test_family_table(device: str, family: str, integrated: bool) -> None:
    entry = family_of(device)
    assert (entry["family"], entry["integrated"]) == (family, integrated)


def test_table_families_are_the_documented_set_and_cite_sources() -> None:
    table = load_json("detectors/data/intel-pci.json")
    assert {e["family"] for e in table["devices"].values()} == FAMILIES
    assert set(table["families"]) == FAMILIES
    assert table["_sources"]


def test_unknown_device_is_unknown_with_reason() -> None:
    result = family_of("ffff")
    assert isinstance(result, Unknown) and "8086:ffff" in result.reason


def test_unknown_device_on_the_bus_is_a_note(tmp_path: Path) -> None:
    root = tmp_path / "u"
    shutil.copytree(SYSROOTS / "uhd620", root, symlinks=True)
    (root / "sys/bus/pci/devices/0000:00:02.0/device").write_text("0xffff\n")
    m = detect(Probe(root))
    assert m.gpus[0].family is None
    assert any("8086:ffff" in n for n in m.notes)


@robustness(100)
@given(st.one_of(st.text(), st.none()))
def test_family_of_never_raises(text: str | None) -> None:
    assert isinstance(family_of(text), (dict, Unknown))

