"""resolve() on NVIDIA machines: driver floors, arch lists, release fallback, mixed GPUs, unknown driver."""

from __future__ import annotations

import pytest

from resolve_cases import ARM, LINUX, WINDOWS, check, check_index_build, nvidia, plan_for, rejected, warning
from torch_install.machine import Machine
from torch_install.resolver.steps import command_lines

H100 = nvidia("NVIDIA H100 80GB HBM3", "9.0")
H200 = nvidia("NVIDIA H200", "9.0", count=8)
RTX4090 = nvidia("NVIDIA GeForce RTX 4090", "8.9")
RTX5090 = nvidia("NVIDIA GeForce RTX 5090", "12.0")
GTX1080 = nvidia("NVIDIA GeForce GTX 1080", "6.1")
GTX1080TI = nvidia("NVIDIA GeForce GTX 1080 Ti", "6.1")
GTX750TI = nvidia("NVIDIA GeForce GTX 750 Ti", "5.0")
V100 = nvidia("Tesla V100-SXM2-32GB", "7.0")
K80 = nvidia("Tesla K80", "3.7", count=2)
RTX3060 = nvidia("NVIDIA GeForce RTX 3060", "8.6")

# (id, machine, packages, torch, variant, warning codes)
CASES = [
    ("h100-550", Machine(**LINUX, nvidia_driver="550.54.15", gpus=(H100,)), (), "2.14.1", "cu126",
     {"driver-too-old"}),
    ("h100-580", Machine(**LINUX, nvidia_driver="580.95.05", gpus=(H100,)), (), "2.15.0", "cu130", set()),
    ("h200-595", Machine(**LINUX, nvidia_driver="595.58.03", gpus=(H200,)), (), "2.15.0", "cu132", set()),
    ("h200-550", Machine(**LINUX, nvidia_driver="550.163.01", gpus=(H200,)), (), "2.14.1", "cu126",
     {"driver-too-old"}),
    ("rtx4090-580", Machine(**LINUX, nvidia_driver="580.95.05", gpus=(RTX4090,)), (), "2.15.0", "cu130", set()),
    ("rtx5090-560", Machine(**LINUX, nvidia_driver="560.35.03", gpus=(RTX5090,)), (), "2.15.0", "cpu",
     {"driver-too-old"}),
    ("rtx5090-570", Machine(**LINUX, nvidia_driver="570.133.07", gpus=(RTX5090,)), (), "2.13.0", "cu129",
     {"driver-too-old"}),
    ("gtx1080-580", Machine(**LINUX, nvidia_driver="580.95.05", gpus=(GTX1080,)), (), "2.14.1", "cu126",
     {"gpu-arch-unsupported"}),
    ("gtx1080ti-580", Machine(**LINUX, nvidia_driver="580.65.06", gpus=(GTX1080TI,)), (), "2.14.1", "cu126",
     {"gpu-arch-unsupported"}),
    ("gtx750ti-535", Machine(**LINUX, nvidia_driver="535.183.01", gpus=(GTX750TI,)), (), "2.14.1", "cu126",
     {"gpu-arch-unsupported"}),
    ("v100-2.10", Machine(**LINUX, nvidia_driver="570.133.07", gpus=(V100,)), ("torch==2.10.0",), "2.10.0",
     "cu128", set()),
    ("v100-2.11", Machine(**LINUX, nvidia_driver="570.133.07", gpus=(V100,)), ("torch==2.11.0",), "2.11.0",
     "cu126", set()),
    ("k80-470", Machine(**LINUX, nvidia_driver="470.256.02", gpus=(K80,)), (), "2.7.1", "cu118",
     {"gpu-arch-unsupported"}),
    ("gh200", Machine(**ARM, nvidia_driver="580.95.05", gpus=(nvidia("NVIDIA GH200 480GB", "9.0"),)), (), "2.15.0",
     "cu130", set()),
    ("dgx-spark", Machine(**ARM, nvidia_driver="580.95.05",
                          gpus=(nvidia("NVIDIA GB10", "12.1", integrated=True),)), (), "2.15.0", "cu130",
     {"integrated-gpu-only"}),
    ("win-3060-528.24", Machine(**WINDOWS, nvidia_driver="528.24", gpus=(RTX3060,)), (), "2.7.1", "cu118",
     {"driver-too-old"}),
    ("win-3060-531", Machine(**WINDOWS, nvidia_driver="531.79", gpus=(RTX3060,)), (), "2.14.1", "cu126",
     {"driver-too-old"}),
    ("win-3060-581", Machine(**WINDOWS, nvidia_driver="581.57", gpus=(RTX3060,)), (), "2.15.0", "cu130", set()),
]


@pytest.mark.parametrize(("machine", "packages", "torch", "variant", "codes"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_choice_and_warnings(machine, packages, torch, variant, codes):
    check_index_build(plan_for(machine, *packages), torch, variant, codes)


def test_driver_floor_rejection_reads_needs_found():
    plan = plan_for(Machine(**LINUX, nvidia_driver="550.54.15", gpus=(H100,)))
    assert rejected(plan, "2.15.0", "cu130") == "cu130 rejected: needs driver ≥ 580.65.06, found 550.54.15"
    assert "580.65.06" in warning(plan, "driver-too-old")
    assert any("minor-version compatibility" in r for r in plan.reasons)


def test_ada_runs_sm86_cubins():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(RTX4090,)), "torch==2.9.1")
    check(plan, "2.9.1", "cu128", set())
    assert "cu128: sm_89 runs its sm_86 kernels; driver 580.95.05 runs CUDA 12.8 natively" in plan.reasons


def test_pascal_rejection_names_the_gpu_and_the_builds():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(GTX1080,)))
    reason = rejected(plan, "2.15.0", "cu132")
    assert "GeForce GTX 1080 (sm_61)" in reason and "sm_75" in reason and "sm_50" not in reason


def test_blackwell_needs_r570():
    plan = plan_for(Machine(**LINUX, nvidia_driver="560.35.03", gpus=(RTX5090,)))
    assert "needs driver ≥ 570" in rejected(plan, "2.13.0", "cu129")
    assert command_lines(plan)["pip"].endswith("--index-url https://download.pytorch.org/whl/cpu")


def test_volta_dropped_from_cu128_in_2_11():
    plan = plan_for(Machine(**LINUX, nvidia_driver="570.133.07", gpus=(V100,)), "torch==2.11.0")
    assert "no kernels for Tesla V100-SXM2-32GB (sm_70)" in rejected(plan, "2.11.0", "cu128")


def test_windows_12x_floor_is_528_33():
    plan = plan_for(Machine(**WINDOWS, nvidia_driver="528.24", gpus=(RTX3060,)))
    assert rejected(plan, "2.14.1", "cu126") == "cu126 rejected: needs driver ≥ 528.33, found 528.24"
    assert "≥ 528.33 would enable torch 2.14.1+cu126" in warning(plan, "driver-too-old")


def test_native_driver_preferred_over_release_default():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(H100,)))
    assert "cu130 preferred (the driver supports it natively)" in rejected(plan, "2.15.0", "cu132")


def test_pinned_version_without_gpu_build_names_nearest_release_and_driver():
    plan = plan_for(Machine(**LINUX, nvidia_driver="550.54.15", gpus=(H100,)), "torch==2.15.0", "torchvision")
    check(plan, "2.15.0", "cpu", {"no-gpu-variant-for-version", "driver-too-old"})
    message = warning(plan, "no-gpu-variant-for-version")
    assert "2.14.1+cu126" in message and "≥ 580.65.06" in message
    assert dict(plan.choice.packages) == {"torch": "2.15.0+cpu", "torchvision": "0.29.2"}


def test_pinned_version_arch_dropped_says_no_driver_helps():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(GTX1080,)), "torch>=2.15")
    check(plan, "2.15.0", "cpu", {"no-gpu-variant-for-version", "gpu-arch-unsupported"})
    assert "no driver upgrade helps" in warning(plan, "no-gpu-variant-for-version")


def test_mixed_gpus_choose_for_the_most_capable_and_hide_the_other():
    machine = Machine(**LINUX, nvidia_driver="580.95.05", gpus=(GTX1080TI, RTX5090))
    plan = plan_for(machine)
    check(plan, "2.15.0", "cu130", {"mixed-gpus"})
    message = warning(plan, "mixed-gpus")
    assert "GeForce GTX 1080 Ti (sm_61)" in message
    assert "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1" in message


def test_mixed_gpus_indices_count_every_device():
    machine = Machine(**LINUX, nvidia_driver="580.95.05",
                      gpus=(nvidia("NVIDIA GeForce RTX 5090", "12.0", count=2), GTX1080TI))
    assert "CUDA_VISIBLE_DEVICES=0,1" in warning(plan_for(machine), "mixed-gpus")


def test_mixed_gpus_take_the_newest_build_for_the_most_capable_and_name_the_common_one():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(RTX4090, GTX1080)))
    check(plan, "2.15.0", "cu130", {"mixed-gpus"})
    message = warning(plan, "mixed-gpus")
    assert "cannot use NVIDIA GeForce GTX 1080 (sm_61)" in message
    assert "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0" in message
    assert "torch 2.14.1+cu126 runs on every GPU (1 release older)" in message


def test_unknown_driver_prefers_release_default_and_says_so():
    plan = plan_for(Machine(**LINUX, gpus=(RTX4090,)))
    check(plan, "2.15.0", "cu132", {"driver-unknown"})
    message = warning(plan, "driver-unknown")
    assert "needs driver ≥ 580.65.06" in message and "2.14.1+cu126" in message


def test_unknown_compute_capability_warns_and_does_not_reject():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(nvidia("NVIDIA Future GPU", None),)))
    check(plan, "2.15.0", "cu130", {"gpu-arch-unknown"})


def test_integrated_gpu_ignored_next_to_discrete():
    machine = Machine(**LINUX, nvidia_driver="580.95.05",
                      gpus=(nvidia("Some iGPU", "5.0", integrated=True), RTX4090))
    plan = plan_for(machine)
    check(plan, "2.15.0", "cu130", set())
    assert any("integrated GPU ignored" in r for r in plan.reasons)


def test_rejected_limited_to_chosen_and_newer_releases():
    plan = plan_for(Machine(**LINUX, nvidia_driver="550.54.15", gpus=(H100,)))
    assert {r.torch for r in plan.rejected} == {"2.15.0", "2.14.1"}
    assert all(r.reason for r in plan.rejected)


def test_forced_variant_that_cannot_run_warns():
    plan = plan_for(Machine(**LINUX, nvidia_driver="550.54.15", gpus=(H100,)), variant="cu130")
    check(plan, "2.15.0", "cu130", {"driver-too-old"})
    assert plan.gpu_accelerated is False


def test_forced_variant_that_runs():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(H100,)), "torch==2.9.1", variant="cu126")
    check(plan, "2.9.1", "cu126", set())
    assert plan.gpu_accelerated is True


def test_channels_change_index_and_open_versions():
    machine = Machine(**LINUX, nvidia_driver="580.95.05", gpus=(H100,))
    nightly = plan_for(machine, channel="nightly")
    assert nightly.choice.index_url == "https://download.pytorch.org/whl/nightly/cu130"
    assert nightly.choice.packages["torch"] == ""
    assert "--pre" in command_lines(nightly)["pip"]
    test = plan_for(machine, channel="test")
    assert test.choice.index_url == "https://download.pytorch.org/whl/test/cu130"


def test_mirror_index_base():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(H100,)),
                    index_base="https://mirror.example.org/pytorch/whl/")
    assert plan.choice.index_url == "https://mirror.example.org/pytorch/whl/cu130"


def test_companions_follow_torch_and_carry_the_label_when_built_per_variant():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(H100,)), "torch==2.9.1", "torchvision",
                    "torchaudio")
    assert dict(plan.choice.packages) == {"torch": "2.9.1+cu128", "torchvision": "0.24.1+cu128",
                                          "torchaudio": "2.9.1+cu128"}


def test_companion_pin_selects_the_torch_release():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(H100,)), "torchvision==0.23.0")
    check(plan, "2.8.0", "cu128", set())


def test_windows_cuda13_floor_is_labelled_inferred():
    plan = plan_for(Machine(**WINDOWS, nvidia_driver="581.57", gpus=(RTX3060,)))
    assert "driver floor of cu130 on windows (580) is inferred" in plan.notes


def test_driver_without_listed_gpu_chooses_cuda_and_warns():
    plan = plan_for(Machine(**LINUX, nvidia_driver="550.54.15"))
    check(plan, "2.14.1", "cu126", {"gpu-arch-unknown", "driver-too-old"})


# -- driver-native choice whose arch list is only inferred, next to a verified release default ------------------

def test_native_choice_with_inferred_arch_list_names_the_verified_default():
    """Driver 590 runs CUDA 13.0 natively and 13.2 only under minor-version compatibility: cu130 stays chosen,
    but its 2.15.0 arch list is inferred while the default cu132's is verified."""
    plan = plan_for(Machine(**LINUX, nvidia_driver="590.48.01", gpus=(H100,)))
    check(plan, "2.15.0", "cu130", set())
    assert ("cu130 is preferred because the driver runs it natively, but its arch list for torch 2.15.0 on "
            "linux_x86_64 is inferred; the release default cu132 has a verified arch list and also runs here: "
            "--variant cu132") in plan.notes


@pytest.mark.parametrize(("driver", "packages", "variant"), [
    ("595.58.03", ("torch",), "cu132"),  # the default itself is native: chosen, nothing to add
    ("590.48.01", ("torch==2.14.1",), "cu130"),  # native choice is the default
])
def test_no_verified_default_note_when_the_default_is_chosen(driver, packages, variant):
    plan = plan_for(Machine(**LINUX, nvidia_driver=driver, gpus=(H100,)), *packages)
    assert plan.choice is not None and plan.choice.variant == variant
    assert not any("release default" in n for n in plan.notes), plan.notes


def test_no_verified_default_note_when_the_default_cannot_run_the_gpu():
    """2.13.0 on aarch64: driver 575.57.08 runs cu129 natively (inferred arch list); cu130 (the verified default)
    needs the 580 floor, so it is not an alternative."""
    plan = plan_for(Machine(**ARM, nvidia_driver="575.57.08", gpus=(H100,)), "torch==2.13.0")
    assert plan.choice is not None and plan.choice.variant == "cu129"
    assert not any("release default" in n for n in plan.notes), plan.notes


def _unknown_gpu_plan(tmp_path, capsys, driver: str, *packages: str) -> dict:
    import json

    from torch_install.cli import main

    profile = tmp_path / "unknown.json"
    profile.write_text(json.dumps({**LINUX, "nvidia_driver": driver, "gpus": [{"vendor": "nvidia"}]}))
    assert main(["plan", "--target", str(profile), *packages, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_an_unknown_gpu_gets_the_build_serving_the_most_generations_its_driver_drives(tmp_path, capsys) -> None:
    """R580 still drives Maxwell to Volta: of torch 2.9.1's builds, cu128 and cu126 serve 7 of the 9 targets,
    cu130 6; the note names what the choice leaves out, which build serves it, and how to settle it."""
    plan = _unknown_gpu_plan(tmp_path, capsys, "580.82.07", "torch==2.9.1")
    assert plan["choice"]["variant"] in ("cu128", "cu126")
    note = next(n for n in plan["notes"] if n.startswith("compute capability of nvidia GPU unknown"))
    assert "driver 580.82.07 drives sm_50–sm_120" in note and "serves 7 of those 9 targets" in note
    assert "nvidia-smi --query-gpu=compute_cap --format=csv,noheader" in note and "compute_capability" in note


def test_a_driver_past_r580_rules_out_the_generations_it_dropped(tmp_path, capsys) -> None:
    plan = _unknown_gpu_plan(tmp_path, capsys, "590.44.01")
    note = next(n for n in plan["notes"] if n.startswith("compute capability of nvidia GPU unknown"))
    assert "drives sm_75–sm_120" in note and "(not" not in note  # the chosen build serves them all


def test_the_newest_release_leaving_old_gpus_out_names_the_build_that_serves_them(tmp_path, capsys) -> None:
    plan = _unknown_gpu_plan(tmp_path, capsys, "580.82.07")
    note = next(n for n in plan["notes"] if n.startswith("compute capability of nvidia GPU unknown"))
    assert plan["choice"]["torch"] == "2.15.0" and "which torch 2.14.1+cu126 serves" in note
