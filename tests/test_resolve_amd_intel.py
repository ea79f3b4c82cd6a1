"""resolve() on AMD (ROCm gfx lists, override aliases, Windows) and Intel (XPU families, iGPUs)."""

from __future__ import annotations

import pytest

from resolve_cases import LINUX, WINDOWS, amd, check, intel, plan_for, rejected, warning
from torch_install.machine import Machine

MI300X = amd("AMD Instinct MI300X", "gfx942", count=8)
MI210 = amd("AMD Instinct MI210", "gfx90a")
RX7900XTX = amd("AMD Radeon RX 7900 XTX", "gfx1100")
RX6700XT = amd("AMD Radeon RX 6700 XT", "gfx1031")
R780M = amd("AMD Radeon 780M", "gfx1103", integrated=True)
RX9070XT = amd("AMD Radeon RX 9070 XT", "gfx1201")
A770 = intel("Intel Arc A770 Graphics", "alchemist", False)
B580 = intel("Intel Arc B580 Graphics", "battlemage", False)
LUNAR = intel("Intel Arc 140V GPU", "lunar-lake", True)
UHD620 = intel("Intel UHD Graphics 620", "gen9", True)

CASES = [
    ("mi300x", Machine(**LINUX, gpus=(MI300X,)), (), "2.14.1", "rocm7.14", set()),
    ("mi210", Machine(**LINUX, gpus=(MI210,)), (), "2.14.1", "rocm7.14", set()),
    ("mi210-2.3", Machine(**LINUX, gpus=(MI210,)), ("torch==2.3.1",), "2.3.1", "rocm6.0", set()),
    ("rx7900xtx", Machine(**LINUX, gpus=(RX7900XTX,)), (), "2.14.1", "rocm7.14", set()),
    ("rx6700xt", Machine(**LINUX, gpus=(RX6700XT,)), (), "2.14.1", "rocm7.14", {"rocm-override-needed"}),
    ("780m-2.14", Machine(**LINUX, gpus=(R780M,)), (), "2.14.1", "rocm7.14", set()),
    ("780m-2.13", Machine(**LINUX, gpus=(R780M,)), ("torch<2.14",), "2.13.0", "rocm7.2", {"rocm-override-needed"}),
    ("rx9070xt", Machine(**LINUX, gpus=(RX9070XT,)), (), "2.14.1", "rocm7.14", set()),
    ("rx9070xt-2.6", Machine(**LINUX, gpus=(RX9070XT,)), ("torch==2.6.0",), "2.6.0", "cpu",
     {"no-gpu-variant-for-version", "gpu-arch-unsupported"}),
    ("amd-windows", Machine(**WINDOWS, gpus=(RX7900XTX,)), (), "2.15.0", "cpu", {"platform-unsupported"}),
    ("a770-linux", Machine(**LINUX, gpus=(A770,)), (), "2.15.0", "xpu", set()),
    ("a770-windows", Machine(**WINDOWS, gpus=(A770,)), (), "2.15.0", "xpu", set()),
    ("b580", Machine(**LINUX, gpus=(B580,)), (), "2.15.0", "xpu", set()),
    ("b580-2.6", Machine(**LINUX, gpus=(B580,)), ("torch==2.6.0",), "2.6.0", "cpu",
     {"no-gpu-variant-for-version", "gpu-arch-unsupported"}),
    ("lunar-lake", Machine(**WINDOWS, gpus=(LUNAR,)), (), "2.15.0", "xpu", set()),
    ("uhd620", Machine(**LINUX, gpus=(UHD620,)), (), "2.15.0", "cpu", {"integrated-gpu-only"}),
    ("a770-2.4", Machine(**LINUX, gpus=(A770,)), ("torch==2.4.1",), "2.4.1", "cpu",
     {"no-gpu-variant-for-version", "gpu-arch-unsupported"}),
]


@pytest.mark.parametrize(("machine", "packages", "torch", "variant", "codes"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_choice_and_warnings(machine, packages, torch, variant, codes):
    plan = plan_for(machine, *packages)
    check(plan, torch, variant, codes)
    assert plan.gpu_accelerated is (variant != "cpu")
    assert plan.choice.index_url == f"https://download.pytorch.org/whl/{variant}"


def test_alias_override_value_and_reason():
    plan = plan_for(Machine(**LINUX, gpus=(RX6700XT,)))
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in warning(plan, "rocm-override-needed")
    assert "set HSA_OVERRIDE_GFX_VERSION=10.3.0 before importing torch" in plan.reasons


def test_gfx1103_before_it_was_built_aliases_to_gfx1100():
    plan = plan_for(Machine(**LINUX, gpus=(R780M,)), "torch<2.14")
    assert "HSA_OVERRIDE_GFX_VERSION=11.0.0" in warning(plan, "rocm-override-needed")


def test_unbuilt_gfx_rejection_lists_the_targets():
    plan = plan_for(Machine(**LINUX, gpus=(RX9070XT,)), "torch==2.6.0")
    reason = rejected(plan, "2.6.0", "rocm6.2.4")
    assert reason.startswith("rocm6.2.4 rejected: no code for AMD Radeon RX 9070 XT (gfx1201)")
    assert "gfx1100" in reason
    assert "2.7" in warning(plan, "no-gpu-variant-for-version")


def test_release_without_known_rocm_set_falls_back_with_a_reason():
    plan = plan_for(Machine(**LINUX, gpus=(MI300X,)))
    assert any("torch 2.15.0 has no build for this GPU vendor" in r for r in plan.reasons)


def test_amd_on_windows_explains_directml():
    plan = plan_for(Machine(**WINDOWS, gpus=(RX7900XTX,)))
    message = warning(plan, "platform-unsupported")
    assert "no ROCm wheels for Windows" in message and "torch-directml" in message
    assert plan.gpu_accelerated is False


def test_unknown_gfx_warns_and_does_not_reject():
    plan = plan_for(Machine(**LINUX, gpus=(amd("AMD Radeon Graphics", None),)))
    check(plan, "2.14.1", "rocm7.14", {"gpu-arch-unknown"})


def test_xpu_family_missing_from_release_is_rejected_with_reason():
    plan = plan_for(Machine(**LINUX, gpus=(B580,)), "torch==2.6.0")
    assert "not Intel Arc B580 Graphics (battlemage)" in rejected(plan, "2.6.0", "xpu")


def test_older_igpu_is_not_an_xpu_device():
    plan = plan_for(Machine(**WINDOWS, gpus=(UHD620,)))
    assert "UHD Graphics 620" in warning(plan, "integrated-gpu-only")
    assert plan.choice.index_url == "https://download.pytorch.org/whl/cpu"


def test_discrete_nvidia_wins_over_intel_igpu():
    from resolve_cases import nvidia

    machine = Machine(**LINUX, nvidia_driver="580.95.05",
                      gpus=(UHD620, nvidia("NVIDIA GeForce RTX 4090", "8.9")))
    check(plan_for(machine), "2.15.0", "cu130", set())
