"""Node Feature Discovery labels for cluster nodes."""

from __future__ import annotations

from resolve_cases import TEST_MATRIX
from torch_install.machine import Gpu, Machine
from torch_install.render.nfd import nfd_labels, nfd_lines
from torch_install.resolver.plan import Choice, Plan, Request

H100_NODE = Machine(os="linux", arch="x86_64", nvidia_driver="570.124.06", cuda_driver_api="12.8",
                    gpus=(Gpu("nvidia", name="NVIDIA H100 80GB HBM3", compute_capability="9.0", count=8),))
MI300_NODE = Machine(os="linux", arch="x86_64", rocm="6.4.1", gpus=(Gpu("amd", gfx="gfx942", count=8),))


def plan_for(machine: Machine, variant: str, torch: str) -> Plan:
    choice = Choice(variant, torch, f"https://download.pytorch.org/whl/{variant}", {"torch": f"{torch}+{variant}"})
    return Plan(machine, Request(), choice, gpu_accelerated=True)


def test_nvidia_node_feature_file():
    assert nfd_lines(H100_NODE, plan_for(H100_NODE, "cu128", "2.10.0")).splitlines() == [
        "# torch-install node labels (Node Feature Discovery feature file)",
        "torch-install.io/variant=cu128",
        "torch-install.io/torch=2.10.0",
        "torch-install.io/cuda-driver-max=12.8",
        "torch-install.io/nvidia-driver=570.124.06",
        "torch-install.io/gpu-arch=sm_90",
        "torch-install.io/gpu-vendor=nvidia",
    ]


def test_rocm_node_labels():
    assert nfd_labels(MI300_NODE, plan_for(MI300_NODE, "rocm6.4", "2.9.1")) == {
        "variant": "rocm6.4", "torch": "2.9.1", "rocm-gfx": "gfx942", "rocm": "6.4.1", "gpu-vendor": "amd"}


def test_mixed_node_gets_lowest_arch_and_driver_cuda_inferred():
    node = Machine(nvidia_driver="550.54.15", gpus=(Gpu("nvidia", compute_capability="8.9"),
                                                    Gpu("nvidia", compute_capability="7.5")))
    labels = nfd_labels(node)
    assert labels["gpu-arch"] == "sm_75" and labels["cuda-driver-max"] == "12.4" and "variant" not in labels


def test_cpu_node_has_only_the_resolved_build():
    node = Machine(os="linux", arch="aarch64")
    assert nfd_labels(node, plan_for(node, "cpu", "2.15.0")) == {"variant": "cpu", "torch": "2.15.0"}


def test_fleet_finds_the_build_that_runs_everywhere_and_names_the_breaking_node():
    from torch_install.fleet import exit_code, resolve_fleet
    from torch_install.render.fleet import render_fleet

    pascal = Machine(os="linux", arch="x86_64", python="3.12", nvidia_driver="550.54.15",
                     gpus=(Gpu("nvidia", compute_capability="6.1"),))
    hopper = Machine(os="linux", arch="x86_64", python="3.12", nvidia_driver="580.95.05",
                     gpus=(Gpu("nvidia", compute_capability="9.0"),))
    result = resolve_fleet([pascal, hopper], Request(), TEST_MATRIX)
    assert (result.choice.torch, result.choice.variant) == ("2.14.1", "cu126")
    broken = result.candidates[0]
    assert (broken.torch, broken.variant) == ("2.15.0", "cu130") and [p.machine for p in broken.problems] == [0]
    assert "driver-too-old" in broken.problems[0].reason
    assert "Breaks:   torch 2.15.0 cu130 on machine 1" in render_fleet(result, "text")
    assert [(p.choice.torch, p.choice.variant) for p in result.own] == [("2.14.1", "cu126"), ("2.15.0", "cu130")]
    assert exit_code(result) == 0
    assert exit_code(result, strict=True) == 1  # the Pascal target's own plan says the newest needs a newer driver


def test_a_fleet_without_a_common_build_exits_4():
    from torch_install.fleet import exit_code, resolve_fleet

    musl = Machine(os="linux", arch="x86_64", python="3.12", musl="1.2.5")
    result = resolve_fleet([musl, Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35")], Request(),
                           TEST_MATRIX)
    assert result.choice is None and exit_code(result) == 4
