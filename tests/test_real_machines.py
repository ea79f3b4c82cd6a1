"""Machines from the real world, as their owners paste them (``fixtures/profiles``, the documented profile format),
through completion and the resolver: every blocker of the newest release named with what would lift it, one
meaning per warning code on every vendor, the mixed-GPU policy, values as machines and tools report them, and
each platform's traps (AMD on Windows and WSL, Jetson, musl, Intel iGPUs by PCI id or shared names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from resolve_cases import LINUX, TEST_MATRIX, WINDOWS, amd, check, nvidia, warning, warning_codes
from torch_install.cli import main
from torch_install.errors import InputError
from torch_install.machine import Machine, fill_platform, load_machine, machine_from_dict
from torch_install.machine_completion import complete_machine
from torch_install.render import render
from torch_install.resolver import Request, resolve
from torch_install.resolver.plan import Plan
from torch_install.resolver.steps import command_lines

PROFILES = Path(__file__).parent / "fixtures" / "profiles"


def machine_of(name: str) -> Machine:
    return complete_machine(load_machine(PROFILES / f"{name}.json"))


def plan_of(name: str, *packages: str, **request: str) -> Plan:
    return resolve(machine_of(name), Request(packages=packages or ("torch",), **request), TEST_MATRIX)


# Every profile: the choice and the exact set of warning codes (the frozen test matrix: 2.15.0 is the newest
# release, with no ROCm build in its inferred variant set)
CASES = [
    ("alpine-musl", None, None, {"platform-unsupported"}),
    ("alpine-os-version", None, None, {"platform-unsupported"}),
    ("centos7-535-v100", "2.6.0", "cu118", {"gpu-arch-unsupported", "platform-unsupported"}),
    ("chimera-aarch64", None, None, {"platform-unsupported"}),
    ("cuda-version-only", "2.14.1", "cu126", {"driver-too-old"}),
    ("driver-branch-575", "2.14.1", "cu126", {"gpu-arch-unsupported"}),
    ("h100-no-driver", "2.15.0", "cu132", {"driver-unknown"}),
    ("intel-arc-graphics-name", "2.15.0", "xpu", {"driver-unknown", "integrated-gpu-only"}),
    ("intel-arrow-lake-pci", "2.15.0", "xpu", {"integrated-gpu-only"}),
    ("intel-lunar-lake-pci", "2.15.0", "xpu", {"driver-unknown", "integrated-gpu-only"}),
    ("intel-meteor-lake-pci", "2.15.0", "xpu", {"driver-unknown", "integrated-gpu-only"}),
    ("intel-uhd-graphics-name", "2.15.0", "cpu", {"integrated-gpu-only"}),
    ("jetson-orin-l4t", None, None, {"platform-unsupported"}),
    ("jetson-orin-name", "2.11.0", "cu126", {"driver-unknown", "integrated-gpu-only", "platform-unsupported",
                                             "python-unsupported"}),
    ("jetson-thor-580", "2.15.0", "cu130", {"integrated-gpu-only"}),
    ("jetson-thor-name", "2.15.0", "cu130", {"integrated-gpu-only"}),
    ("jetson-xavier-py38", "2.2.0", "cu114", {"integrated-gpu-only", "platform-unsupported", "python-unsupported"}),
    ("py310-570-rtx4090", "2.14.1", "cu126", {"driver-too-old", "python-unsupported"}),
    ("py313t-560-rtx4090", "2.12.0", "cu126", {"driver-too-old", "python-unsupported"}),
    ("py37-418-v100", None, None, {"driver-too-old", "gpu-arch-unsupported", "platform-unsupported",
                                   "python-unsupported"}),
    ("rocm-build-suffix", "2.14.1", "rocm7.14", {"no-gpu-variant-for-version", "rocm-driver-window"}),
    ("rocm-hipconfig", "2.14.1", "rocm7.14", {"no-gpu-variant-for-version", "rocm-driver-window"}),
    ("rocm-rc", "2.14.1", "rocm7.14", {"no-gpu-variant-for-version"}),
    ("rtx4090-arc-a770", "2.15.0", "cu130", {"mixed-gpus"}),
    ("rtx4090-gtx1080", "2.15.0", "cu130", {"mixed-gpus"}),
    ("rx7900xtx-rx6700xt", "2.14.1", "rocm7.14", {"mixed-gpus", "no-gpu-variant-for-version"}),
    ("strix-halo", "2.14.1", "rocm7.14", {"integrated-gpu-only", "no-gpu-variant-for-version"}),
    ("windows-file-version", "2.14.1", "cu126", {"driver-too-old"}),
    ("windows-hip-sdk-rx7900xtx", "2.14.0", "rocm10.1.0", {"no-gpu-variant-for-version"}),
    ("windows-rx9070xt", "2.14.0", "rocm10.1.0", {"no-gpu-variant-for-version", "vendor-support-level"}),
    ("windows-strix-halo", "2.14.0", "rocm10.1.0", {"integrated-gpu-only", "no-gpu-variant-for-version"}),
    ("wsl-rocm-rx7900xtx", "2.14.1", "rocm7.14", {"no-gpu-variant-for-version", "platform-unsupported",
                                                  "rocm-driver-window"}),
    ("wsl-rx7900xtx", "2.15.0", "cpu", {"platform-unsupported"}),
    ("wsl-rx9070xt", "2.15.0", "cpu", {"platform-unsupported"}),
]


def test_every_profile_is_a_case() -> None:
    assert sorted(p.stem for p in PROFILES.glob("*.json")) == sorted(c[0] for c in CASES)


@pytest.mark.parametrize(("name", "torch", "variant", "codes"), CASES, ids=[c[0] for c in CASES])
def test_choice_and_every_code(name: str, torch: str | None, variant: str | None, codes: set[str]) -> None:
    check(plan_of(name), torch, variant, codes)


# -- 1. every blocker named, and what would get the newest release ---------------------------------------------

def test_a_decline_names_python_and_the_driver() -> None:
    plan = plan_of("py37-418-v100")
    assert "no wheels for Python 3.7" in warning(plan, "python-unsupported")
    assert warning(plan, "driver-too-old").startswith("driver 418.67 is below every CUDA build of torch 2.14.1")
    assert "glibc ≥ 2.28 (manylinux), found 2.17" in warning(plan, "platform-unsupported")
    assert "no kernels for Tesla V100-SXM2-16GB (sm_70)" in warning(plan, "gpu-arch-unsupported")


def test_the_upgrade_line_and_its_json() -> None:
    plan = plan_of("py310-570-rtx4090")
    assert render(plan, "text").splitlines()[-1] == (
        "Newest:   torch 2.15.0 on the GPU needs Python ≥ 3.11 and NVIDIA driver ≥ 580.65.06")
    assert plan.to_dict()["upgrade"] == {
        "torch": "2.15.0", "gpu": True, "why_not": None,
        "needs": [{"what": "python", "from": "3.10", "to": ">=3.11", "text": "Python ≥ 3.11"},
                  {"what": "nvidia_driver", "from": "570.133.07", "to": ">=580.65.06",
                   "text": "NVIDIA driver ≥ 580.65.06"}]}


def test_an_upgrade_that_cannot_reach_the_gpu_says_why() -> None:
    upgrade = plan_of("centos7-535-v100").upgrade
    assert upgrade is not None and upgrade.gpu is False
    assert [n.what for n in upgrade.needs] == ["glibc"]
    assert upgrade.text() == "torch 2.15.0 needs glibc ≥ 2.28, and has no kernels for Tesla V100-PCIE-16GB (sm_70)"


def test_a_free_threaded_python_is_named_as_one() -> None:
    plan = plan_of("py313t-560-rtx4090")
    assert "free-threaded Python 3.13t" in warning(plan, "python-unsupported")
    assert plan.upgrade is not None and plan.upgrade.needs[0].text == "free-threaded Python ≥ 3.14"


@pytest.mark.parametrize("name", ["rtx4090-gtx1080", "h100-no-driver", "jetson-thor-580", "intel-lunar-lake-pci"])
def test_no_upgrade_line_when_the_newest_runs_on_the_gpu(name: str) -> None:
    plan = plan_of(name)
    assert plan.upgrade is None and plan.to_dict()["upgrade"] is None
    assert "Newest:" not in render(plan, "text")


@pytest.mark.parametrize("name", ["rocm-rc", "strix-halo", "rx7900xtx-rx6700xt"])
def test_a_newest_release_without_a_build_for_the_vendor_is_a_coded_warning(name: str) -> None:
    plan = plan_of(name)
    assert warning(plan, "no-gpu-variant-for-version").startswith("torch 2.15.0 has no AMD GPU build (ROCm)")
    assert not any("has no build for this GPU vendor" in r for r in plan.reasons)
    assert plan.upgrade is not None and plan.upgrade.why_not == "has no ROCm build for linux_x86_64"


# -- 2. one meaning per code on every vendor ------------------------------------------------------------------

@pytest.mark.parametrize(("name", "gpu"), [("strix-halo", "AMD Radeon 8060S Graphics (gfx1151)"),
                                           ("intel-lunar-lake-pci", "Intel Arc Graphics 130V/140V (lunar-lake)"),
                                           ("jetson-thor-580", "NVIDIA Thor (sm_110)")])
def test_integrated_gpu_only_when_the_chosen_gpu_is_integrated(name: str, gpu: str) -> None:
    assert warning(plan_of(name), "integrated-gpu-only").startswith(f"{gpu} is an integrated GPU")


def test_integrated_gpu_only_when_cpu_is_chosen_for_an_unsupported_igpu() -> None:
    plan = plan_of("intel-uhd-graphics-name")
    assert warning(plan, "integrated-gpu-only").startswith("the only GPU is an integrated Intel(R) UHD Graphics")
    assert plan.gpu_accelerated is False and plan.upgrade is None


@pytest.mark.parametrize(("machine", "words"), [
    (Machine(**LINUX, gpus=(nvidia("NVIDIA H100 80GB HBM3", "9.0"),)), "NVIDIA driver version unknown"),
    (Machine(**LINUX, gpus=(amd("AMD Radeon RX 7900 XTX", "gfx1100"),)), "amdgpu kernel driver and ROCm versions"),
    (Machine(**WINDOWS, gpus=(machine_of("intel-meteor-lake-pci").gpus[0],)), "Intel GPU kernel driver unknown"),
])
def test_driver_unknown_for_every_vendor(machine: Machine, words: str) -> None:
    plan = resolve(machine, Request(), TEST_MATRIX)
    assert plan.gpu_accelerated and warning(plan, "driver-unknown").startswith(words)


@pytest.mark.parametrize("machine", [
    Machine(**LINUX, nvidia_driver="580.95.05", gpus=(nvidia("NVIDIA H100 80GB HBM3", "9.0"),)),
    Machine(**LINUX, rocm="7.1.1", gpus=(amd("AMD Radeon RX 7900 XTX", "gfx1100"),)),
    Machine(**LINUX, amdgpu_driver="6.14.14", gpus=(amd("AMD Radeon RX 7900 XTX", "gfx1100"),)),
])
def test_no_driver_unknown_with_a_known_driver(machine: Machine) -> None:
    assert "driver-unknown" not in warning_codes(resolve(machine, Request(), TEST_MATRIX))


def test_intel_driver_named_in_the_profile_is_known() -> None:
    assert "driver-unknown" not in warning_codes(plan_of("intel-arrow-lake-pci"))


# -- 3. mixed GPUs -----------------------------------------------------------------------------------------------

def test_mixed_nvidia_the_newest_for_the_most_capable_and_the_common_build_as_alternative() -> None:
    message = warning(plan_of("rtx4090-gtx1080"), "mixed-gpus")
    assert message == ("torch 2.15.0+cu130 (the newest for NVIDIA GeForce RTX 4090 (sm_89)) cannot use NVIDIA GeForce "
                       "GTX 1080 (sm_61): hide it with CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0; torch "
                       "2.14.1+cu126 runs on every GPU (1 release older)")


def test_mixed_amd_never_advises_a_global_override_that_mistargets_the_native_gpu() -> None:
    plan = plan_of("rx7900xtx-rx6700xt")
    message = warning(plan, "mixed-gpus")
    assert "hide it with HIP_VISIBLE_DEVICES=0" in message
    assert "per-device override for gfx1031 only: HSA_OVERRIDE_GFX_VERSION_<KFD node>=10.3.0" in message
    assert "rocm-override-needed" not in warning_codes(plan)
    assert not any("HSA_OVERRIDE_GFX_VERSION=" in text for text in (*plan.reasons, *plan.notes))


def test_mixed_amd_hides_by_pci_order() -> None:
    first, second = machine_of("rx7900xtx-rx6700xt").gpus
    plan = resolve(Machine(**LINUX, rocm="7.1.1", gpus=(second, first)), Request(), TEST_MATRIX)
    assert "hide it with HIP_VISIBLE_DEVICES=1;" in warning(plan, "mixed-gpus")


def test_gpus_one_build_serves_alike_are_not_mixed() -> None:
    machine = Machine(**LINUX, rocm="7.1.1", gpus=(amd("AMD Instinct MI300X", "gfx942"),
                                                   amd("AMD Instinct MI210", "gfx90a")))
    plan = resolve(machine, Request(), TEST_MATRIX)
    check(plan, "2.14.1", "rocm7.14", {"no-gpu-variant-for-version"})


def test_gpus_of_two_vendors_are_mixed() -> None:
    assert warning(plan_of("rtx4090-arc-a770"), "mixed-gpus") == (
        "GPUs of several vendors: the CUDA build uses the NVIDIA GPUs only, not Intel Arc A770 Graphics (alchemist); "
        "XPU builds for those need an environment of their own")


RTX5090 = nvidia("NVIDIA GeForce RTX 5090", "12.0")


def test_a_build_is_not_chosen_on_ptx_alone_when_its_arch_list_is_inferred() -> None:
    # 2.7.1 cu118 on Windows has sm_37 PTX on an inferred arch list; a driver below the Blackwell floor (570)
    plan = resolve(Machine(**WINDOWS, nvidia_driver="566.36", gpus=(RTX5090,)),
                   Request(packages=("torch==2.7.1",)), TEST_MATRIX)
    check(plan, "2.7.1", "cpu", {"no-gpu-variant-for-version", "driver-too-old"})
    cu118 = next(r.reason for r in plan.rejected if r.variant == "cu118")
    assert "would run only by just-in-time compilation of PTX, and the arch list of 2.7.1+cu118 is inferred" in cu118


def test_a_build_that_runs_one_gpu_by_jit_only_is_mixed() -> None:
    plan = resolve(Machine(**WINDOWS, nvidia_driver="572.16", gpus=(RTX5090, nvidia("NVIDIA GeForce RTX 3090", "8.6"))),
                   Request(packages=("torch==2.5.1",)), TEST_MATRIX)
    check(plan, "2.5.1", "cu118", {"mixed-gpus"})
    assert warning(plan, "mixed-gpus").startswith("torch 2.5.1+cu118 runs NVIDIA GeForce RTX 5090 (sm_120) only by "
                                                  "just-in-time compilation of PTX")


# -- 4. values as machines report them ----------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "rocm"), [("rocm-rc", "7.1.0rc1"), ("rocm-build-suffix", "6.4.0-47"),
                                            ("rocm-hipconfig", "6.2.41133-dd7f95766")])
def test_rocm_pre_release_and_build_suffixes_are_read_by_their_release(name: str, rocm: str) -> None:
    assert machine_of(name).rocm == rocm


def test_the_rocm_window_counts_from_the_release_part() -> None:
    message = warning(plan_of("rocm-hipconfig"), "rocm-driver-window")
    assert message.startswith("ROCm user space 6.2.41133-dd7f95766 on this machine is 6 ROCm releases from 2.14.1")


@pytest.mark.parametrize("rocm", ["6.4.0rc1", "7.1.0-38", "6.4.0.60400-47~24.04"])
def test_the_rocm_flag_takes_what_tools_print(capsys: pytest.CaptureFixture[str], rocm: str) -> None:
    code = main(["plan", "--offline", "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--rocm", rocm,
                 "--gpu", "RX 7900 XTX", "--format", "json"])
    plan = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and plan["choice"]["variant"].startswith("rocm")


@pytest.mark.parametrize("rocm", ["latest", "6.x", "rocm6.4", "6.4.0\n"])
def test_a_rocm_value_that_is_no_version_is_still_refused(rocm: str) -> None:
    with pytest.raises(InputError, match=r"rocm: .* is not a version like \"6.4.1\""):
        machine_from_dict({"rocm": rocm})


def test_a_branch_only_driver_meets_its_own_branch_with_a_note() -> None:
    plan = plan_of("jetson-thor-580")
    assert any(n.startswith("driver 580 is given as its branch: it meets the cu130 floor 580.65.06 only if") for n in
               plan.notes)
    older = resolve(Machine(**LINUX, nvidia_driver="575", gpus=(RTX5090,)), Request(), TEST_MATRIX)
    assert older.choice is not None and older.choice.torch != "2.15.0"
    assert "driver 575 is too old for torch 2.15.0" in warning(older, "driver-too-old")


def test_the_cuda_version_the_driver_reports_stands_for_its_ga_driver() -> None:
    machine = machine_of("cuda-version-only")
    assert machine.nvidia_driver == "550.54.14"
    assert machine.sources["nvidia_driver"].startswith("from the CUDA Version 12.4 (cuda_driver_api)")
    plan = resolve(machine, Request(), TEST_MATRIX)
    assert "NVIDIA driver ≥ 550.54.14 (CUDA 12.4 reported)" in render(plan, "text").splitlines()[0]
    assert any(n.startswith("NVIDIA driver taken as 550.54.14") for n in plan.notes)


def test_a_windows_driver_file_version_is_the_driver_it_stands_for() -> None:
    machine = machine_of("windows-file-version")
    assert machine.nvidia_driver == "560.94"
    assert machine.sources["nvidia_driver"] == "Windows driver file version 32.0.15.6094"


@pytest.mark.parametrize(("name", "arch"), [("driver-branch-575", "sm_61"), ("cuda-version-only", "sm_86"),
                                            ("jetson-orin-name", "sm_87"), ("windows-file-version", "sm_86")])
def test_gpu_names_as_typed_get_their_architecture(name: str, arch: str) -> None:
    assert machine_of(name).gpus[0].arch == arch


# -- 5. each platform's traps -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "extra"), [("windows-hip-sdk-rx7900xtx", "device-gfx1100"),
                                           ("windows-rx9070xt", "device-gfx1201"),
                                           ("windows-strix-halo", "device-gfx1151")])
def test_amd_on_windows_gets_amds_own_build_with_its_device_extra(name: str, extra: str) -> None:
    plan = plan_of(name)
    assert plan.gpu_accelerated and plan.choice is not None
    assert plan.choice.distribution == "vendor-index" and plan.choice.vendor_index.id == "amd-stable"
    assert plan.choice.packages["torch"] == "2.14.0+rocm10.1.0" and plan.choice.extras == {"torch": (extra,)}
    assert command_lines(plan)["pip"].startswith(f"python -m pip install 'torch[{extra}]==2.14.0+rocm10.1.0' "
                                                 "--index-url https://stable.repo.amd.com/rocm/whl-next/")


@pytest.mark.parametrize("name", ["wsl-rx7900xtx", "wsl-rx9070xt"])
def test_amd_under_wsl_without_rocm_is_cpu_with_amds_wsl_procedure(name: str) -> None:
    plan = plan_of(name)
    message = warning(plan, "platform-unsupported")
    assert "/dev/dxg" in message and "amdgpu-install --usecase=wsl,rocm --no-dkms" in message
    assert plan.gpu_accelerated is False


def test_amd_under_wsl_with_rocm_plans_the_rocm_build_with_the_runtime_swap() -> None:
    plan = plan_of("wsl-rocm-rx7900xtx")
    assert plan.gpu_accelerated
    assert "remove libhsa-runtime64.so* from torch/lib" in warning(plan, "platform-unsupported")


@pytest.mark.parametrize(("name", "index"), [("jetson-orin-name", "jetson-jp6-cu126"),
                                           ("jetson-xavier-py38", "jetson-jp5-cu114")])
def test_jetson_before_l4t_38_gets_the_build_of_its_jetpacks_index(name: str, index: str) -> None:
    plan = plan_of(name)
    assert plan.gpu_accelerated and plan.choice is not None and plan.choice.vendor_index.id == index
    assert "PyTorch's index wheels do not run on the Jetson driver stack" in warning(plan, "platform-unsupported")
    assert plan.upgrade is not None and {n.what for n in plan.upgrade.needs} == {"os", "python"}


def test_a_jetson_whose_python_its_jetpacks_index_lacks_declines_naming_nvidias_jetson_wheels() -> None:
    plan = plan_of("jetson-orin-l4t")  # Python 3.12; the JetPack 6 index has 3.10
    message = warning(plan, "platform-unsupported")
    assert "has no wheels for Python 3.12 on linux_aarch64 (has 3.10)" in message
    assert "install NVIDIA's Jetson wheels" in message
    assert plan.choice is None and plan.upgrade is not None and plan.upgrade.needs[0].what == "os"


def test_jetson_with_variant_cpu_gets_the_cpu_build() -> None:
    check(plan_of("jetson-orin-l4t", variant="cpu"), "2.15.0", "cpu", set())


def test_jetson_is_recognised_from_a_name_without_l4t() -> None:
    gpu = machine_of("jetson-orin-name").gpus[0]
    assert (gpu.family, gpu.integrated) == ("jetson-orin", True)


def test_a_jetson_driver_is_compared_by_its_branch() -> None:
    plan = plan_of("jetson-thor-name")  # "580.00": below the desktop 580.65.06, the Thor's own driver
    assert plan.gpu_accelerated
    assert any("is compared by its branch, 580" in n for n in plan.notes)
    assert not any(n.startswith("driver 580 is given as its branch") for n in plan.notes)
    assert plan.machine.nvidia_driver == "580.00"


@pytest.mark.parametrize("name", ["alpine-musl", "alpine-os-version", "chimera-aarch64"])
def test_musl_declines_asking_for_a_glibc_system(name: str) -> None:
    plan = plan_of(name)
    assert "use a glibc-based system or image" in warning(plan, "platform-unsupported")
    assert plan.upgrade is not None and plan.upgrade.needs[0].what == "libc"


def test_a_target_naming_a_musl_distribution_does_not_take_this_machines_glibc() -> None:
    host = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.39", os_version="ubuntu 24.04")
    assert fill_platform(load_machine(PROFILES / "alpine-os-version.json"), host).glibc is None
    assert fill_platform(Machine(os="linux", os_version="ubuntu 24.04"), host).glibc == "2.39"


@pytest.mark.parametrize(("name", "family"), [("intel-meteor-lake-pci", "meteor-lake"),
                                              ("intel-arrow-lake-pci", "arrow-lake"),
                                              ("intel-lunar-lake-pci", "lunar-lake")])
def test_intel_igpus_by_pci_id_get_their_family(name: str, family: str) -> None:
    assert machine_of(name).gpus[0].family == family


def test_a_shared_intel_name_builds_for_every_candidate_or_says_which_it_lacks() -> None:
    notes = plan_of("intel-arc-graphics-name").notes
    assert any("is one of several chips (meteor-lake, arrow-lake)" in n for n in notes)
    old = plan_of("intel-arc-graphics-name", "torch==2.6.0")
    check(old, "2.6.0", "xpu", {"gpu-arch-unknown", "driver-unknown", "integrated-gpu-only"})
    assert warning(old, "gpu-arch-unknown") == (
        "Intel(R) Arc(TM) Graphics is the name of several chips (meteor-lake, arrow-lake), and torch 2.6.0+xpu builds "
        "for meteor-lake, not arrow-lake: the PCI id (vendor:device, as detection reads it) tells which this is")


def test_a_requested_variant_that_serves_one_gpu_of_two_hides_the_other() -> None:
    plan = plan_of("rtx4090-gtx1080", variant="cu130")
    check(plan, "2.15.0", "cu130", {"mixed-gpus"})
    assert plan.gpu_accelerated and "hide it with CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0" in warning(
        plan, "mixed-gpus")
    check(plan_of("rtx4090-gtx1080", variant="cu126"), "2.14.1", "cu126", set())


def test_warnings_about_the_newest_release_do_not_block_the_choice() -> None:
    plan = plan_of("centos7-535-v100")
    assert {w.about for w in plan.warnings} == {"newest"} and plan.blocking_warnings() == ()
    assert all(w["blocking"] is False for w in plan.to_dict()["warnings"])
    forced = resolve(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(nvidia("NVIDIA GeForce GTX 1080", "6.1"),)),
                     Request(variant="cu130"), TEST_MATRIX)
    assert [(w.code, w.about, w.blocking) for w in forced.warnings] == [("gpu-arch-unsupported", "choice", True)]
