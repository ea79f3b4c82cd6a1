"""Wheel-variant properties, provider overrides and PEP 825 label ordering on PyTorch's published metadata."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.errors import InputError
from torch_install.machine import Gpu, Machine
from torch_install.wheelnext import (
    dialect_of,
    index_variant,
    override_env,
    parse_variants,
    rank_variants,
    read_variants_text,
    supported_properties,
    x86_64_level,
)

FIXTURES = Path(__file__).parent / "fixtures" / "variants"


def load(name: str):
    return read_variants_text((FIXTURES / name).read_text(), name)


def machine(vendor: str = "nvidia", cuda: str | None = None, cc: str | None = None, gfx: str | None = None,
            rocm: str | None = None, family: str | None = None, os: str = "linux") -> Machine:
    return Machine(os=os, arch="x86_64", python="3.12", cuda_driver_api=cuda, rocm=rocm,
                   gpus=(Gpu(vendor=vendor, compute_capability=cc, gfx=gfx, family=family),))


def labels(vfile, m: Machine) -> list[str]:
    return [v.label for v in rank_variants(vfile, supported_properties(m), m).ranked]


# The same made-up machines variantlib 0.2.2 ranked offline on torch 2.10's JSON (reference E3).
@pytest.mark.parametrize("name", ["torch-2.10.0-variants.json", "torch-2.10.0-variants-v0.2.0.json"])
@pytest.mark.parametrize(("m", "expected"), [
    (machine(cuda="12.9", cc="8.9"), ["cuda12.8", "cuda12.6", "null"]),
    (machine(cuda="13.0", cc="9.0"), ["cuda13.0", "cuda12.8", "cuda12.6", "null"]),
    (machine(cuda="12.8", cc="12.0"), ["cuda12.8", "null"]),
    (machine(cuda="12.4", cc="6.1"), ["cuda12.6", "null"]),
    (machine("amd", gfx="gfx1100", rocm="7.1.0"), ["rocm7.1", "null"]),
    (machine("amd", gfx="gfx1100", rocm="7.2"), ["null"]),
    (machine("intel", family="battlemage"), ["xpu", "null"]),
    (Machine(os="linux", arch="x86_64"), ["null"]),
])
def test_torch_2_10_order_matches_variantlib(name, m, expected):
    assert labels(load(name), m) == expected


def test_enable_if_turns_amd_off_on_windows():
    vfile = load("torch-2.10.0-variants.json")
    m = machine("amd", gfx="gfx1100", rocm="7.1", os="windows")
    ranking = rank_variants(vfile, supported_properties(m), m)
    assert [v.label for v in ranking.ranked] == ["null"]
    assert "enable-if" in ranking.providers["amd"] and "false" in ranking.providers["amd"]


def test_torch_2_8_hash_null_label_ranks_last_and_lower_bound_is_exact():
    vfile = load("torch-2.8.0-variants.json")
    assert vfile.dialect == "0.0.2"
    assert labels(vfile, machine(cuda="12.8", cc="9.0")) == ["cu128", "cu126", "00000000"]
    ranking = rank_variants(vfile, supported_properties(machine(cuda="12.8", cc="9.0")), machine(cuda="12.8"))
    assert [v.label for v in ranking.incompatible] == ["cu129"]
    assert index_variant("00000000", vfile.variants["00000000"]) == "cpu"


def test_torch_2_9_xpu_and_rocm_6_4():
    vfile = load("torch-2.9.0-variants.json")
    assert labels(vfile, machine("intel", family="alchemist")) == ["xpu", "null"]
    assert labels(vfile, machine("amd", gfx="gfx942", rocm="6.4.1")) == ["rocm6.4", "null"]
    # lunar lake reports 20.4.4 first; torch 2.9 lists it, so it matches on the first value
    ranking = rank_variants(vfile, supported_properties(machine("intel", family="lnl")), machine("intel"))
    assert ranking.choice.matches[0].value == "20.4.4"


def test_pep825_metadata_without_providers_uses_builtin_lists():
    vfile = load("demo-1.0-variants.json")
    assert vfile.dialect == "0.1.1"
    ranking = rank_variants(vfile, supported_properties(machine(cuda="13.0", cc="9.0")), machine())
    assert ranking.choice.label == "cu12"
    assert ranking.choice.matches[0].key == (0, 0, 22)  # 13.0, 13, 12.20 … 12.0


def test_nvidia_value_order_is_the_providers():
    props = supported_properties(machine(cuda="12.7", cc="8.9"))
    lower = props.feature("nvidia", "cuda_version_lower_bound").values
    assert lower[:3] == ("12.7", "12.6", "12.5") and lower[7:10] == ("12.0", "12", "11.20") and lower[-1] == "11"
    upper = props.feature("nvidia", "cuda_version_upper_bound").values
    assert upper[:2] == ("15.20", "15.19") and upper[-1] == "12.8" and "12" not in upper and "15" in upper
    assert props.feature("nvidia", "sm_arch").values == tuple(f"8{n}_real" for n in range(9, -1, -1)) + ("80_virtual",)


def test_mixed_gpus_use_highest_sm_and_say_so():
    m = Machine(os="linux", arch="x86_64", cuda_driver_api="12.8",
                gpus=(Gpu("nvidia", compute_capability="7.5"), Gpu("nvidia", compute_capability="9.0")))
    props = supported_properties(m)
    assert props.feature("nvidia", "sm_arch").values == ("90_real", "90_virtual")
    assert any("also has 7.5" in n for n in props.notes)


def test_variant_property_lines_and_cpu_level():
    v2 = {"sse2", "cx16", "lahf_lm", "pni", "popcnt", "sse4_1", "sse4_2", "ssse3"}
    assert x86_64_level(v2) == 2
    assert x86_64_level(v2 - {"pni"}) == 1  # x86-64-v2 includes SSE3, which /proc/cpuinfo calls pni
    m = Machine(os="linux", arch="x86_64", gpus=(Gpu("amd", gfx="gfx942"),), rocm="6.4.1")
    lines = supported_properties(m, {"avx", "avx2"}).lines()
    assert lines == ["amd :: gfx_arch :: gfx942", "amd :: rocm_version :: 6.4", "x86_64 :: level :: v1"]


def test_override_env_for_each_vendor():
    assert dict(override_env(machine(cuda="12.4", cc="8.6")).variables) == {
        "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.4", "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "8.6"}
    amd = override_env(machine("amd", gfx="gfx1100"), "rocm7.1").variables
    assert amd["AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH"] == "gfx1100" == amd["ROCM_BOOTSTRAP_FORCE_GFX_ARCH"]
    assert amd["AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION"] == "7.1.0"
    intel = override_env(machine("intel", family="bmg")).variables
    assert intel == {"INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP": "20.1.0"}
    unknown_gpu = override_env(machine(cuda="12.4"))
    assert "NV_VARIANT_PROVIDER_FORCE_SM_ARCH" not in unknown_gpu.variables
    assert any("matches no CUDA variant" in n for n in unknown_gpu.notes)


@pytest.mark.parametrize(("schema", "dialect"), [
    ("https://variants-schema.wheelnext.dev/", "0.0.2"),
    ("https://variants-schema.wheelnext.dev/v0.0.3.json", "0.0.3"),
    ("https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json", "0.1.1"),
    ("https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json", "0.2.0"),
    ("https://example.org/v9.json", None),
])
def test_dialect_of(schema, dialect):
    assert dialect_of(schema) == dialect


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d.update({"$schema": "https://x/v9.json"}), "not a known variants metadata schema"),
    (lambda d: d["variants"].update({"Bad-Label": {}}), "does not match"),
    (lambda d: d["default-priorities"].update({"namespace": ["intel", "amd", "priority"]}), "'nvidia'"),
    (lambda d: d["variants"]["xpu"]["intel"].update({"device_ip": "20.1.0"}), "expected a list of strings"),
    (lambda d: d["providers"]["nvidia"].update({"static-properties": {}}), "unexpected key 'static-properties'"),
])
def test_bad_metadata_is_one_clear_error(mutate, message):
    data = json.loads((FIXTURES / "torch-2.10.0-variants.json").read_text())
    mutate(data)
    with pytest.raises(InputError, match=message):
        parse_variants(data, "x.json")


def test_index_variant_mapping():
    assert [index_variant(x) for x in ("cuda12.8", "cu126", "rocm7.1", "xpu", "null", "cu13")] == [
        "cu128", "cu126", "rocm7.1", "xpu", "cpu", None]


# NVIDIA driver 551.23 (a Windows release): CUDA 12.4 needs ≥ 551.61 on Windows but ≥ 550.54.15 on Linux.
@pytest.mark.parametrize(("os_name", "wsl", "cuda", "column"), [
    ("windows", None, "12.3", "windows"),
    ("linux", True, "12.3", "windows"),  # WSL: the driver is the Windows host's
    ("linux", None, "12.4", "linux"),
])
def test_driver_cuda_reads_the_table_column_of_the_profiles_os(os_name, wsl, cuda, column):
    m = Machine(os=os_name, arch="x86_64", wsl=wsl, nvidia_driver="551.23",
                gpus=(Gpu("nvidia", compute_capability="8.6"),))
    props = supported_properties(m)
    lower = [line for line in props.lines() if "cuda_version_lower_bound" in line]
    upper = [line for line in props.lines() if "cuda_version_upper_bound" in line]
    assert lower[:2] == [f"nvidia :: cuda_version_lower_bound :: {cuda}",
                         f"nvidia :: cuda_version_lower_bound :: 12.{int(cuda[-1]) - 1}"]
    assert upper[-1] == f"nvidia :: cuda_version_upper_bound :: 12.{int(cuda[-1]) + 1}"  # above the driver's
    assert props.notes == (f"nvidia: driver CUDA {cuda} inferred from driver 551.23 (newest toolkit whose {column} "
                           "driver it meets); NVML reports it exactly",)
    assert dict(override_env(m).variables) == {"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": cuda,
                                               "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "8.6"}
