"""The GPU marketing-name table: gpu_from_name, complete_gpu, and the table's own consistency."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_install.detectors.names import complete_gpu, gpu_from_name, lookup_gpu_name, name_key
from torch_install.errors import InputError
from torch_install.machine import Gpu, machine_from_dict
from torch_install.package_data import load_json

NVIDIA = [("RTX 4090", "8.9"), ("GeForce GTX 1080 Ti", "6.1"), ("H100", "9.0"), ("A100", "8.0"), ("V100", "7.0"),
          ("K80", "3.7"), ("GTX 750 Ti", "5.0"), ("RTX 5090", "12.0"), ("RTX 3060", "8.6"), ("GH200", "9.0"),
          ("B200", "10.0"), ("DGX Spark", "12.1"), ("GB10", "12.1"), ("T4", "7.5"),
          ("GTX 980", "5.2"), ("P100", "6.0"), ("L40S", "8.9"), ("B300", "10.3"),
          ("NVIDIA GeForce RTX 4060 Laptop GPU", "8.9"), ("NVIDIA H100 80GB HBM3", "9.0"), ("rtx4090", "8.9"),
          ("A10", "8.6"), ("RTX PRO 6000 Blackwell", "12.0"), ("RTX 6000 Ada", "8.9")]
AMD = [("MI300X", "gfx942", False), ("MI210", "gfx90a", False), ("RX 7900 XTX", "gfx1100", False),
       ("RX 6700 XT", "gfx1031", False), ("RX 9070 XT", "gfx1201", False), ("Radeon 780M", "gfx1103", True),
       ("Strix Halo", "gfx1151", True), ("Radeon 8060S", "gfx1151", True), ("MI355X", "gfx950", False),
       ("AMD Radeon RX 7800 XT", "gfx1101", False), ("Radeon VII", "gfx906", False), ("MI100", "gfx908", False)]
FAMILY = [("Arc A770", "intel", "alchemist", False), ("Arc B580", "intel", "battlemage", False),
          ("Lunar Lake", "intel", "lunar-lake", True), ("Arc 140V", "intel", "lunar-lake", True),
          ("UHD 620", "intel", "gen9", True), ("Intel(R) UHD Graphics 620", "intel", "gen9", True),
          ("Iris Xe", "intel", "xe-lp", True), ("Data Center GPU Max 1550", "intel", "ponte-vecchio", False),
          ("Apple M2", "apple", "m2", True), ("M3 Max", "apple", "m3", True),
          # names several chips share: the families stay alternatives
          ("Intel(R) Arc(TM) Graphics", "intel", "meteor-lake|arrow-lake", True),
          ("Intel(R) UHD Graphics", "intel", "gen9|gen11|xe-lp", True),
          ("Arc Graphics (Meteor Lake)", "intel", "meteor-lake", True)]
# As people and tools write them: nvidia-smi, lspci (with and without -nn), Windows, torch.cuda.get_device_name()
# on a Jetson, jtop, and hand-typed
AS_WRITTEN = [
    ("TeslaP40", "nvidia", "sm_61"), ("Tesla P40", "nvidia", "sm_61"), ("NVIDIA Tesla P40 24GB", "nvidia", "sm_61"),
    ("geforcertx3090", "nvidia", "sm_86"), ("GA102 [GeForce RTX 3090]", "nvidia", "sm_86"),
    ("NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)", "nvidia", "sm_86"),
    ("NVIDIA Corporation AD102 [GeForce RTX 4090] [10de:2684] (rev a1)", "nvidia", "sm_89"),
    ("AMDRadeonRX7900XTX", "amd", "gfx1100"),
    ("Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 XT/7900 XTX] (rev c8)", "amd", "gfx1100"),
    ("Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]", "amd", "gfx1030"),
    ("Orin (nvgpu)", "nvidia", "sm_87"), ("Orin", "nvidia", "sm_87"), ("NVIDIA Tegra X1", "nvidia", "sm_53"),
    ("Xavier", "nvidia", "sm_72"), ("NVIDIA Thor", "nvidia", "sm_110"), ("Jetson AGX Orin", "nvidia", "sm_87"),
    ("AMD Radeon R9 Nano", "amd", "gfx803"),  # not the Jetson Nano
]
JETSON = [("Jetson AGX Orin", "8.7", "jetson-orin"), ("Orin (nvgpu)", "8.7", "jetson-orin"),
          ("Jetson Orin Nano", "8.7", "jetson-orin"), ("Jetson Thor", "11.0", "jetson-thor"),
          ("Jetson Xavier NX", "7.2", "jetson-xavier"), ("Jetson TX2", "6.2", "jetson-tx2"),
          ("Jetson Nano", "5.3", "jetson-tx1"), ("NVIDIA Tegra X1", "5.3", "jetson-tx1")]


@pytest.mark.parametrize(("name", "cc"), NVIDIA)
def test_nvidia_names(name: str, cc: str) -> None:
    gpu = gpu_from_name(name)
    assert (gpu.vendor, gpu.compute_capability, gpu.integrated) == ("nvidia", cc, False)


@pytest.mark.parametrize(("name", "vendor", "arch"), AS_WRITTEN)
def test_names_as_written(name: str, vendor: str, arch: str) -> None:
    gpu = gpu_from_name(name)
    assert (gpu.vendor, gpu.arch) == (vendor, arch)


@pytest.mark.parametrize(("name", "cc", "family"), JETSON)
def test_jetson_names_are_integrated_gpus_of_a_jetson_family(name: str, cc: str, family: str) -> None:
    gpu = gpu_from_name(name)
    assert (gpu.vendor, gpu.compute_capability, gpu.family, gpu.integrated) == ("nvidia", cc, family, True)


def test_models_that_disagree_are_not_guessed() -> None:
    assert lookup_gpu_name("GeForce RTX 3090/4090") is None  # sm_86 and sm_89: no one answer


@pytest.mark.parametrize(("name", "gfx", "integrated"), AMD)
def test_amd_names(name: str, gfx: str, integrated: bool) -> None:
    gpu = gpu_from_name(name)
    assert (gpu.vendor, gpu.gfx, gpu.integrated) == ("amd", gfx, integrated)


@pytest.mark.parametrize(("name", "vendor", "family", "integrated"), FAMILY)
def test_family_names(name: str, vendor: str, family: str, integrated: bool) -> None:
    gpu = gpu_from_name(name)
    assert (gpu.vendor, gpu.family, gpu.integrated) == (vendor, family, integrated)


@pytest.mark.parametrize("name", ["rtx 4090", "RTX-4090", "  GeForce  RTX 4090 ", "NVIDIA GeForce RTX 4090"])
def test_spellings_are_one_gpu(name: str) -> None:
    assert gpu_from_name(name).name == "GeForce RTX 4090"


def test_unknown_name_lists_close_matches() -> None:
    with pytest.raises(InputError, match=r"unknown GPU name 'RTX 4900'; close matches: .*GeForce RTX 4090"):
        gpu_from_name("RTX 4900")


@pytest.mark.parametrize("name", ["", "   ", "NVIDIA", "GeForce Graphics"])
def test_empty_names_are_input_errors(name: str) -> None:
    with pytest.raises(InputError, match="names no GPU model"):
        gpu_from_name(name)


@given(st.text())
def test_random_names_raise_only_input_error(name: str) -> None:
    try:
        assert isinstance(gpu_from_name(name), Gpu)
    except InputError as err:
        assert str(err)


def test_complete_gpu_fills_only_missing_fields() -> None:
    assert complete_gpu(Gpu(vendor="nvidia", name="RTX 4090")).compute_capability == "8.9"
    kept = complete_gpu(Gpu(vendor="amd", name="RX 7900 XTX", gfx="gfx1101"))
    assert (kept.gfx, kept.integrated) == ("gfx1101", False)
    assert complete_gpu(Gpu(vendor="intel", name="Arc B580")).family == "battlemage"


def test_complete_gpu_unknown_name() -> None:
    gpu = Gpu(vendor="nvidia", name="Mystery 9000")
    assert complete_gpu(gpu) == gpu
    with pytest.raises(InputError, match="Mystery 9000"):
        complete_gpu(gpu, strict=True)


def test_complete_gpu_vendor_contradiction() -> None:
    with pytest.raises(InputError, match="is a nvidia GPU"):
        complete_gpu(Gpu(vendor="amd", name="RTX 4090"))


def test_complete_gpu_of_a_profile_gpu() -> None:
    machine = machine_from_dict({"os": "linux", "gpus": [{"vendor": "nvidia", "name": "H100", "count": 8}]})
    gpu = complete_gpu(machine.gpus[0])
    assert (gpu.compute_capability, gpu.count) == ("9.0", 8)


def test_table_keys_do_not_collide_across_gpus() -> None:
    seen: dict[str, tuple] = {}
    for entry in load_json("detectors/data/gpu-names.json")["gpus"]:
        arch = (entry["vendor"], entry.get("compute_capability"), entry.get("gfx"), entry.get("family"))
        for spelling in (entry["name"], *entry.get("aliases", ())):
            key = name_key(spelling)
            assert key, spelling
            assert seen.setdefault(key, arch) == arch, f"{spelling!r} collides with another GPU"


def test_table_entries_validate_as_profile_gpus_and_cite_sources() -> None:
    table = load_json("detectors/data/gpu-names.json")
    gpus = [{k: v for k, v in e.items() if k not in ("aliases", "source", "note")} for e in table["gpus"]]
    machine_from_dict({"gpus": gpus})  # raises on any malformed compute capability / gfx / vendor
    assert all(e["source"] in table["_sources"] for e in table["gpus"])


def test_jetson_compute_capabilities_are_jetson_only() -> None:
    """The Jetson table's claim, which completion relies on: no other GPU has a Jetson's compute capability."""
    jetson = {m["compute_capability"] for m in load_json("detectors/data/jetson.json")["modules"]}
    others = {e.get("compute_capability") for e in load_json("detectors/data/gpu-names.json")["gpus"]}
    assert jetson and not jetson & others
    pci_chips = {chip for chip, cc in load_json("detectors/data/nvidia-pci.json")["chips"].items() if cc in jetson}
    assert pci_chips == {"GM20B", "GP10B", "GV10B", "GA10B", "GB10B"}  # the Tegra chips of those modules


def test_every_generation_is_covered() -> None:
    ccs = {e.get("compute_capability") for e in load_json("detectors/data/gpu-names.json")["gpus"]}
    ccs |= {m["compute_capability"] for m in load_json("detectors/data/jetson.json")["modules"]}
    assert {"3.7", "5.0", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.3",
            "11.0", "12.0", "12.1"} <= ccs
    gfx = {e.get("gfx") for e in load_json("detectors/data/gpu-names.json")["gpus"]}
    assert {"gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1102",
            "gfx1103", "gfx1150", "gfx1151", "gfx1200", "gfx1201"} <= gfx


def test_lookup_is_none_for_unknown() -> None:
    assert lookup_gpu_name("Voodoo 5 6000") is None


@pytest.mark.parametrize(("name", "arch"), [
    ("CMP 100-210", "7.0"), ("CMP 100-100", "6.0"), ("Quadro M2200 Mobile", "5.2"),  # pci.ids' bracketed names
    ("AMD Ryzen 9 8945HS w/ Radeon 780M Graphics", "gfx1103"),  # an APU by its CPU model and GPU
    ("AMD Ryzen 7 7840U with Radeon Graphics", "gfx1103"),  # by its CPU model alone
    ("AMD Ryzen 5 5600G with Radeon Graphics", "gfx90c"), ("AMD Ryzen AI 9 HX 370 w/ Radeon 890M", "gfx1150"),
    ("AMD Ryzen AI 7 350 w/ Radeon 860M", "gfx1152"), ("AMD RYZEN AI MAX+ 395 w/ Radeon 8060S", "gfx1151"),
    ("AMD Ryzen 9 7950X 16-Core Processor", "gfx1036"),
    ("p4d.24xlarge", "8.0"), ("g6e.xlarge", "8.9"), ("a3-highgpu-8g", "9.0"), ("Standard_NC24ads_A100_v4", "8.0"),
    ("Navi 31", "gfx1100")])
def test_names_the_world_uses_find_their_architecture(name: str, arch: str) -> None:
    gpu = gpu_from_name(name)
    assert arch in (gpu.compute_capability, gpu.gfx), gpu


def test_a_product_name_two_architectures_share_is_not_guessed() -> None:
    """pci.ids names Picasso (gfx902) and Cezanne (gfx90c) parts "Radeon Vega Mobile Series"."""
    with pytest.raises(InputError):
        gpu_from_name("Radeon Vega Mobile Series")


def test_the_pci_tables_are_what_the_generator_makes_of_the_recorded_pci_ids() -> None:
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "scripts"))
    import build_pci_tables

    nvidia, amd = build_pci_tables.build(build_pci_tables.EXCERPT.read_text(encoding="utf-8"))
    data = root / "src" / "torch_install" / "detectors" / "data"
    assert build_pci_tables.render(nvidia) == (data / "nvidia-pci.json").read_text(encoding="utf-8")
    assert build_pci_tables.render(amd) == (data / "amd-pci.json").read_text(encoding="utf-8")
    assert "version 2026.08.22" in nvidia["about"] and nvidia["devices"]["1676"][0] == "GM204"  # pci.ids: GM204GLM
    assert {d: nvidia["devices"][d][0] for d in ("15c2", "1d83", "1dc1", "1d84", "1df4")} == {
        "15c2": "GP100", "1d83": "GV100", "1dc1": "GV100", "1d84": "GV100", "1df4": "GV100"}
    assert "gfx" not in amd["devices"]["1902"]  # Krackan2: no source gives its target
    assert not any("Audio" in v[1] for v in nvidia["devices"].values() if len(v) == 2)


def test_the_name_keys_file_is_what_the_generator_makes_of_the_tables() -> None:
    """A row edit of gpu-names.json, jetson.json or a PCI table fails here until ``python scripts/build_name_keys.py``
    writes the keys again."""
    from script_modules import script

    build = script("build_name_keys")
    assert build.OUT.read_text(encoding="utf-8") == build.render(), "run: python scripts/build_name_keys.py"


def test_a_name_is_looked_up_by_its_shipped_key_and_the_tables_agree() -> None:
    from torch_install.detectors import names

    shipped = names._shipped_keys()
    assert shipped == names.key_rows() and len(shipped) > 900
    rows = names._key_rows(0)  # the tables as read
    for key, (vendor, name, fields) in list(rows.items())[::37]:
        found = lookup_gpu_name(name)
        assert found is not None and (found.vendor, found.name) == (vendor, name), key
        assert all(getattr(found, f) == fields.get(f) for f in ("compute_capability", "gfx", "family", "integrated"))


def test_a_vendor_added_at_run_time_has_its_names_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """While the registry is not as shipped, the keys are worked out from the tables it names, not read from the
    shipped file."""
    from torch_install import vendors
    from torch_install.detectors import names

    monkeypatch.setattr(names, "_shipped_keys", lambda: {})  # never read once the registry changed
    monkeypatch.setattr(vendors, "generation", vendors.generation + 1)
    try:
        assert lookup_gpu_name("RTX 4090") == Gpu(vendor="nvidia", name="GeForce RTX 4090", compute_capability="8.9",
                                                  integrated=False)
    finally:
        names._key_rows.cache_clear()  # this generation's registry was the shipped one: not another test's


def _key_by_regular_expressions(name: str, drop: frozenset[str] = frozenset()) -> str:
    """The matching key as the rule states it, word by word with regular expressions (what ``name_key`` reads by
    string operations)."""
    import re

    from torch_install.detectors.names import _BRAND_WORDS, _NOISE, _unglue

    text = re.sub(_NOISE, " ", name.lower()).replace("max-q", "maxq").replace("advanced micro devices", " ")
    words = [_unglue(w) for w in re.split(r"[^0-9a-z]+", text)]
    return "".join(w for w in words if w and w not in _BRAND_WORDS and w not in drop
                   and not re.match(r"^[0-9]+gb$|^hbm[0-9]*e?$", w))


NAME_PARTS = st.sampled_from(["NVIDIA", "GeForce", "RTX", "4090", " ", "-", "(R)", "(tm)", "®", "™", "24GB", "gb",
                              "HBM", "hbm2e", "hbme", "hbmee", "Max-Q", "Laptop", "Advanced Micro Devices", "[", "]",
                              "/", "É", "İ", "٤", "x", "TeslaP40", "0gb", "1e", "\t", "\n", "_", "."])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(NAME_PARTS, st.text(max_size=4)), max_size=8).map("".join), st.booleans())
def test_the_key_of_a_name_is_the_rules_key(name: str, form_factor: bool) -> None:
    from torch_install.detectors.names import _FORM_FACTOR_WORDS

    drop = _FORM_FACTOR_WORDS if form_factor else frozenset()
    assert name_key(name, drop) == _key_by_regular_expressions(name, drop)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(st.lists(st.one_of(NAME_PARTS, st.text(max_size=4)), max_size=10).map("".join), st.booleans())
def test_the_key_of_any_name_is_the_rules_key(name: str, form_factor: bool) -> None:
    from torch_install.detectors.names import _FORM_FACTOR_WORDS

    drop = _FORM_FACTOR_WORDS if form_factor else frozenset()
    assert name_key(name, drop) == _key_by_regular_expressions(name, drop)
