"""resolve() on AMD (ROCm gfx lists, override aliases, Windows) and Intel (XPU families, iGPUs)."""

from __future__ import annotations

import pytest

from resolve_cases import (
    LINUX,
    WINDOWS,
    amd,
    check,
    check_index_build,
    intel,
    plan_for,
    rejected,
    warning,
    warning_codes,
)
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

# 2.15.0 has no ROCm build in the test matrix, and these machines report neither ROCm nor the amdgpu driver
NEWEST_NOT_ROCM = {"no-gpu-variant-for-version", "driver-unknown"}

CASES = [
    ("mi300x", Machine(**LINUX, gpus=(MI300X,)), (), "2.14.1", "rocm7.14", NEWEST_NOT_ROCM),
    ("mi210", Machine(**LINUX, gpus=(MI210,)), (), "2.14.1", "rocm7.14", NEWEST_NOT_ROCM),
    ("mi210-2.3", Machine(**LINUX, gpus=(MI210,)), ("torch==2.3.1",), "2.3.1", "rocm6.0", {"driver-unknown"}),
    ("rx7900xtx", Machine(**LINUX, gpus=(RX7900XTX,)), (), "2.14.1", "rocm7.14", NEWEST_NOT_ROCM),
    ("rx6700xt", Machine(**LINUX, gpus=(RX6700XT,)), (), "2.14.1", "rocm7.14",
     {"no-gpu-variant-for-version", "rocm-override-needed", "driver-unknown"}),
    ("780m-2.14", Machine(**LINUX, gpus=(R780M,)), (), "2.14.1", "rocm7.14",
     {"no-gpu-variant-for-version", "driver-unknown", "integrated-gpu-only"}),
    ("780m-2.13", Machine(**LINUX, gpus=(R780M,)), ("torch<2.14",), "2.13.0", "rocm7.2",
     {"rocm-override-needed", "driver-unknown", "integrated-gpu-only"}),
    ("rx9070xt", Machine(**LINUX, gpus=(RX9070XT,)), (), "2.14.1", "rocm7.14", NEWEST_NOT_ROCM),
    ("rx9070xt-2.6", Machine(**LINUX, gpus=(RX9070XT,)), ("torch==2.6.0",), "2.6.0", "cpu",
     {"no-gpu-variant-for-version", "gpu-arch-unsupported"}),
    ("a770-linux", Machine(**LINUX, gpus=(A770,)), (), "2.15.0", "xpu", {"driver-unknown"}),
    ("a770-windows", Machine(**WINDOWS, gpus=(A770,)), (), "2.15.0", "xpu", {"driver-unknown"}),
    ("b580", Machine(**LINUX, gpus=(B580,)), (), "2.15.0", "xpu", {"driver-unknown"}),
    ("b580-2.6", Machine(**LINUX, gpus=(B580,)), ("torch==2.6.0",), "2.6.0", "cpu",
     {"no-gpu-variant-for-version", "gpu-arch-unsupported"}),
    ("lunar-lake", Machine(**WINDOWS, gpus=(LUNAR,)), (), "2.15.0", "xpu", {"driver-unknown", "integrated-gpu-only"}),
    ("uhd620", Machine(**LINUX, gpus=(UHD620,)), (), "2.15.0", "cpu", {"integrated-gpu-only"}),
    ("a770-2.4", Machine(**LINUX, gpus=(A770,)), ("torch==2.4.1",), "2.4.1", "cpu",
     {"no-gpu-variant-for-version", "gpu-arch-unsupported"}),
]


@pytest.mark.parametrize(("machine", "packages", "torch", "variant", "codes"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_choice_and_warnings(machine, packages, torch, variant, codes):
    check_index_build(plan_for(machine, *packages), torch, variant, codes)


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
    assert warning(plan, "no-gpu-variant-for-version") == (
        "torch 2.15.0 has no AMD GPU build (ROCm) for linux_x86_64 in this tool's data (its variant set is "
        "inferred: the index may have one; --online reads it); newest release that uses the GPU: 2.14.1")
    assert plan.upgrade is not None and plan.upgrade.torch == "2.15.0" and plan.upgrade.needs == ()


def test_amd_on_windows_outside_amds_table_explains_what_remains():
    plan = plan_for(Machine(**WINDOWS, gpus=(amd("AMD Radeon RX 580", "gfx803"),)))
    message = warning(plan, "platform-unsupported")
    assert "no ROCm wheels for windows_x86_64" in message and "have no code for AMD Radeon RX 580 (gfx803)" in message
    assert all(way in message for way in ("ZLUDA", "torch-directml", "WSL2"))
    assert plan.gpu_accelerated is False


def test_unknown_gfx_warns_and_does_not_reject():
    plan = plan_for(Machine(**LINUX, gpus=(amd("AMD Radeon Graphics", None),)))
    check(plan, "2.14.1", "rocm7.14", {"gpu-arch-unknown", "no-gpu-variant-for-version", "driver-unknown"})


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


# -- ROCm kernel-driver window (AMD tests the amdgpu driver with user space within ±2 ROCm releases) ----------

def test_rocm_variant_far_from_the_machines_rocm_keeps_the_choice_and_names_one_inside_the_window():
    machine = Machine(**LINUX, rocm="6.2.4", sources={"rocm": "/opt/rocm/.info/version"}, gpus=(RX7900XTX,))
    plan = plan_for(machine)
    check(plan, "2.14.1", "rocm7.14", {"no-gpu-variant-for-version", "rocm-driver-window"})
    message = warning(plan, "rocm-driver-window")
    assert message.startswith("ROCm user space 6.2.4 on this machine (/opt/rocm/.info/version) is 6 ROCm releases from "
                              "2.14.1+rocm7.14")
    assert "±2 releases" in message
    assert "newest torch whose ROCm variant is inside the window is 2.9.1 (torch==2.9.1 --variant rocm6.4)" in message


@pytest.mark.parametrize("rocm", ["7.1.0", "7.2", "7.14.0"])
def test_rocm_variant_within_two_releases_of_the_machine_raises_no_window_warning(rocm):
    check(plan_for(Machine(**LINUX, rocm=rocm, gpus=(RX7900XTX,))), "2.14.1", "rocm7.14",
          {"no-gpu-variant-for-version"})


def test_unknown_machine_rocm_raises_no_window_warning():
    plan = plan_for(Machine(**LINUX, gpus=(RX7900XTX,)))
    check(plan, "2.14.1", "rocm7.14", {"no-gpu-variant-for-version", "driver-unknown"})
    assert "rocm-driver-window" not in warning_codes(plan)


def test_forced_rocm_variant_outside_the_window_is_kept_with_the_warning():
    machine = Machine(**LINUX, rocm="7.14.0", gpus=(MI210,))
    plan = plan_for(machine, variant="rocm6.3")
    check(plan, "2.9.1", "rocm6.3", {"rocm-driver-window"})
    message = warning(plan, "rocm-driver-window")
    assert "is 5 ROCm releases from 2.9.1+rocm6.3" in message
    assert "(torch==2.14.1 --variant rocm7.14)" in message


def test_window_warning_without_any_release_inside_it():
    plan = plan_for(Machine(**LINUX, rocm="5.7.1", gpus=(RX7900XTX,)), "torch>=2.12")
    check(plan, "2.14.1", "rocm7.14", {"no-gpu-variant-for-version", "rocm-driver-window"})
    assert warning(plan, "rocm-driver-window").endswith(
        "no matching torch release has a ROCm variant inside the window: update the amdgpu driver")
