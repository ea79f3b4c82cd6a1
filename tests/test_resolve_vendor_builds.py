"""Builds from a GPU vendor's own index (resolver/vendor_indexes.py), on the frozen test matrix and its frozen
vendor table: AMD's multi-arch builds where PyTorch's ROCm builds cannot serve (Windows, gfx targets PyTorch's
builds lack, or when asked for), with the device extra of every GPU they serve; the Jetson index of a JetPack and
CUDA for a Jetson on its L4T stack; PyTorch's own build kept first where it serves."""

from __future__ import annotations

import json

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement

from resolve_cases import LINUX, TEST_MATRIX, WINDOWS, amd, check, nvidia, plan_for, rejected, warning, warning_codes
from torch_install.machine import Gpu, Machine
from torch_install.markers import platform_markers
from torch_install.render import render
from torch_install.resolver import Request, resolve
from torch_install.resolver.steps import command_lines, install_steps
from torch_install.resolver.vendor_builds import VendorBuilds

AMD_INDEX = "https://stable.repo.amd.com/rocm/whl-next/"
JP6_INDEX = "https://pypi.jetson-ai-lab.io/jp6/cu126"
VENDOR: VendorBuilds = TEST_MATRIX.vendor_builds  # type: ignore[assignment]
RX7900XTX = amd("AMD Radeon RX 7900 XTX", "gfx1100")
RX9070XT = amd("AMD Radeon RX 9070 XT", "gfx1201")
R8060S = amd("AMD Radeon 8060S Graphics", "gfx1151", integrated=True)
RX5700XT = amd("AMD Radeon RX 5700 XT", "gfx1010")
RX580 = amd("AMD Radeon RX 580", "gfx803")
ORIN = Gpu("nvidia", "Jetson AGX Orin", compute_capability="8.7", family="jetson-orin", integrated=True)
XAVIER = Gpu("nvidia", "Jetson AGX Xavier", compute_capability="7.2", family="jetson-xavier", integrated=True)
JETSON = {"os": "linux", "arch": "aarch64", "glibc": "2.35"}


def jetson(l4t: str | None, python: str = "3.10", *gpus: Gpu) -> Machine:
    return Machine(**JETSON, python=python, jetson=l4t, gpus=gpus or (ORIN,))


# -- AMD: every GPU of AMD's Windows table gets its device extra --------------------------------------------------

def windows_targets() -> list[tuple[str, str]]:
    """Every gfx target of the newest stable Windows build, with AMD's level for it."""
    build = VENDOR.of_vendor("amd", "windows_x86_64")[0]
    return sorted((gfx, level) for gfx, level in build.targets["windows_x86_64"].items())


@pytest.mark.parametrize(("gfx", "level"), windows_targets())
def test_every_windows_gfx_of_amds_table_gets_its_device_extra(gfx: str, level: str) -> None:
    plan = plan_for(Machine(**WINDOWS, gpus=(amd(f"AMD GPU {gfx}", gfx),)), "torch", "torchvision")
    assert plan.choice is not None and plan.gpu_accelerated
    assert (plan.choice.distribution, plan.choice.index_url) == ("vendor-index", AMD_INDEX)
    assert plan.choice.extras == {"torch": (f"device-{gfx}",), "torchvision": (f"device-{gfx}",)}
    assert [(d.extra, d.arch, d.support) for d in plan.choice.devices] == [(f"device-{gfx}", gfx, level)]
    codes = set(warning_codes(plan))
    assert ("vendor-support-level" in codes) is (level != "release-ready")
    assert "platform-unsupported" not in codes


@pytest.mark.parametrize(("gpu", "extra"), [(RX7900XTX, "device-gfx1100"), (R8060S, "device-gfx1151")])
def test_windows_rx7900xtx_and_radeon_8060s_get_amds_build(gpu: Gpu, extra: str) -> None:
    plan = plan_for(Machine(**WINDOWS, gpus=(gpu,)))
    check(plan, "2.14.0", "rocm10.1.0", {"no-gpu-variant-for-version"} | ({"integrated-gpu-only"}
                                                                          if gpu.integrated else set()))
    assert plan.choice.packages == {"torch": "2.14.0+rocm10.1.0"}
    assert command_lines(plan)["pip"] == (f"python -m pip install 'torch[{extra}]==2.14.0+rocm10.1.0' --index-url "
                                          f"{AMD_INDEX}")
    assert command_lines(plan)["uv"] == (f"uv pip install 'torch[{extra}]==2.14.0+rocm10.1.0' --default-index "
                                         f"{AMD_INDEX}")
    newest = next(w for w in plan.warnings if w.code == "no-gpu-variant-for-version")
    assert newest.about == "newest" and not newest.blocking  # PyTorch's 2.15.0 passed over, the choice runs
    assert plan.upgrade is not None and plan.upgrade.gpu is False


def test_a_build_passing_target_warns_with_amds_words() -> None:
    message = warning(plan_for(Machine(**WINDOWS, gpus=(RX9070XT,))), "vendor-support-level")
    assert message.startswith('AMD rates gfx1201 (AMD Radeon RX 9070 XT) on Windows "Build Passing", below '
                              '"Release Ready"')
    assert "unverified" in message


def test_several_amd_gpus_get_the_extras_that_serve_them_and_say_which() -> None:
    plan = plan_for(Machine(**WINDOWS, gpus=(RX7900XTX, RX9070XT, RX580)), "torch", "torchvision")
    assert plan.choice.extras["torch"] == ("device-gfx1100", "device-gfx1201")
    assert [(d.extra, d.gpus) for d in plan.choice.devices] == [("device-gfx1100", ("AMD Radeon RX 7900 XTX",)),
                                                               ("device-gfx1201", ("AMD Radeon RX 9070 XT",))]
    assert "has no code for AMD Radeon RX 580 (gfx803)" in warning(plan, "mixed-gpus")
    pins = [Requirement(arg) for arg in install_steps(plan)[0] if "==" in arg]
    assert {r.name: r.extras for r in pins} == {"torch": {"device-gfx1100", "device-gfx1201"},
                                                "torchvision": {"device-gfx1100", "device-gfx1201"}}


def test_an_amd_gpu_of_unknown_gfx_takes_the_all_devices_extra() -> None:
    plan = plan_for(Machine(**WINDOWS, gpus=(amd("AMD Radeon Graphics", None),)))
    assert plan.choice.extras == {"torch": ("device-all",)}
    assert "device-all installs the code of every device" in warning(plan, "gpu-arch-unknown")


def test_a_windows_gpu_outside_every_table_keeps_the_decline_with_the_ways_that_remain() -> None:
    plan = plan_for(Machine(**WINDOWS, gpus=(RX580,)))
    check(plan, "2.15.0", "cpu", {"platform-unsupported"})
    message = warning(plan, "platform-unsupported")
    assert all(way in message for way in ("ZLUDA", "torch-directml", "WSL2"))
    assert "no code for AMD Radeon RX 580 (gfx803) (builds gfx1010" in rejected(plan, "2.14.0", "rocm10.1.0")


def test_a_python_amds_builds_lack_is_said() -> None:
    plan = plan_for(Machine(**{**WINDOWS, "python": "3.9"}, gpus=(RX7900XTX,)))
    assert plan.choice is None or not plan.gpu_accelerated
    assert "has no wheels for Python 3.9 on windows_x86_64" in rejected(plan, "2.14.0", "rocm10.1.0")


@pytest.mark.parametrize(("spec", "torch", "variant"), [("torch<2.14", "2.13.0", "rocm10.0.0"),
                                                        ("torch==2.12.0", "2.12.0", "rocm7.14.0")])
def test_the_request_picks_among_amds_streams(spec: str, torch: str, variant: str) -> None:
    plan = plan_for(Machine(**WINDOWS, gpus=(RX7900XTX,)), spec)
    assert (plan.choice.torch, plan.choice.variant) == (torch, variant)
    index = VENDOR.indexes[plan.choice.vendor_index.id]
    assert plan.choice.index_url == index.url


# -- AMD on Linux: PyTorch's own build first --------------------------------------------------------------------

def test_linux_rx7900xtx_keeps_pytorchs_own_build() -> None:
    plan = plan_for(Machine(**LINUX, rocm="7.1.1", gpus=(RX7900XTX,)))
    check(plan, "2.14.1", "rocm7.14", {"no-gpu-variant-for-version"})
    assert plan.choice.distribution == "pytorch-index" and plan.choice.extras == {}


def test_a_linux_gfx_pytorchs_builds_lack_gets_amds_build() -> None:
    plan = plan_for(Machine(**LINUX, rocm="7.1.1", gpus=(RX5700XT,)))
    check(plan, "2.14.0", "rocm10.1.0", {"gpu-arch-unsupported"})
    assert plan.choice.extras == {"torch": ("device-gfx1010",)}
    assert "no code for AMD Radeon RX 5700 XT (gfx1010)" in rejected(plan, "2.14.1", "rocm7.14")


def test_vendor_build_asked_for_takes_amds_build_where_pytorchs_serves() -> None:
    machine = Machine(**LINUX, rocm="7.1.1", gpus=(RX7900XTX,))
    plan = resolve(machine, Request(vendor_build=True), TEST_MATRIX)
    assert (plan.choice.torch, plan.choice.variant, plan.choice.distribution) == ("2.14.0", "rocm10.1.0",
                                                                                  "vendor-index")
    assert plan.reasons[1] == "AMD's own build was asked for (--vendor-build)"


def test_a_mirror_of_the_vendor_index_is_used_in_every_command() -> None:
    mirror = "http://127.0.0.1:8123/amd/whl-next"
    plan = resolve(Machine(**WINDOWS, gpus=(RX7900XTX,)), Request(vendor_indexes=(("amd-stable", mirror),)),
                   TEST_MATRIX)
    assert plan.choice.index_url == mirror and command_lines(plan)["pip"].endswith(f"--index-url {mirror}")


def test_amds_nightly_is_the_nightly_channels() -> None:
    plan = plan_for(Machine(**WINDOWS, gpus=(RX7900XTX,)), channel="nightly")
    assert plan.choice.vendor_index.id == "amd-nightly" and plan.choice.packages == {"torch": ""}
    assert install_steps(plan)[0] == ["torch[device-gfx1100]", "--pre", "--index-url",
                                      VENDOR.indexes["amd-nightly"].url]


def test_a_package_built_against_torch_keeps_amds_build_out() -> None:
    from torch_install.resolver.companion_facts import load_packages
    from torch_install.resolver.plan import Wanted

    request = Request(requirements=(Wanted("xformers", "xformers", "command line"),))
    plan = resolve(Machine(**WINDOWS, gpus=(RX7900XTX,)), request, TEST_MATRIX._replace(packages=load_packages()))
    assert plan.choice is not None and plan.choice.distribution == "pytorch-index"
    assert "xformers has no build for AMD's stable ROCm index" in rejected(plan, "2.14.0", "rocm10.1.0")


# -- Jetson --------------------------------------------------------------------------------------------------------

def test_orin_on_l4t_36_4_3_gets_the_jetpack_6_index_build() -> None:
    plan = resolve(jetson("36.4.3"), Request(packages=("torch", "torchvision")), TEST_MATRIX)
    check(plan, "2.11.0", "cu126", {"integrated-gpu-only", "platform-unsupported", "python-unsupported"})
    assert plan.choice.index_url == JP6_INDEX and plan.choice.packages == {"torch": "2.11.0",
                                                                           "torchvision": "0.26.0"}
    assert plan.choice.extras == {} and [(d.extra, d.arch) for d in plan.choice.devices] == [(None, "8.7")]
    assert {w.about for w in plan.warnings if w.code != "integrated-gpu-only"} == {"newest"}
    assert any("cuDSS" in note for note in plan.notes)
    assert command_lines(plan)["pip"] == (f"python -m pip install torch==2.11.0 torchvision==0.26.0 --index-url "
                                          f"{JP6_INDEX}")


def test_an_l4t_release_that_ships_another_cuda_is_not_given_the_cu126_index() -> None:
    plan = resolve(jetson("36.3.0"), Request(), TEST_MATRIX)
    assert plan.choice is None
    assert "L4T 36.3.0 ships CUDA 12.4" in rejected(plan, "2.11.0", "cu126")


def test_jetpack_5_gets_its_own_index_with_its_python() -> None:
    plan = resolve(jetson("35.4.1", "3.8", XAVIER), Request(), TEST_MATRIX)
    assert (plan.choice.torch, plan.choice.variant, plan.choice.vendor_index.id) == ("2.2.0", "cu114",
                                                                                    "jetson-jp5-cu114")
    assert any("unverified" in note for note in plan.notes)  # the .io host's jp5/cu114


def test_orin_is_not_served_by_a_build_without_sm_87() -> None:
    table = VENDOR._replace(builds=tuple(b._replace(targets={"linux_aarch64": {"8.0": None, "8.6": None}})
                                         if b.vendor_index.id == "jetson-jp6-cu126" else b for b in VENDOR.builds))
    plan = resolve(jetson("36.4.3"), Request(), TEST_MATRIX._replace(vendor_builds=table))
    assert plan.choice is None
    assert "no code for Jetson AGX Orin (sm_87) (builds 8.0 8.6)" in rejected(plan, "2.11.0", "cu126")


def test_a_jetson_python_its_index_lacks_declines_naming_the_python() -> None:
    plan = resolve(jetson("36.4.3", "3.12"), Request(), TEST_MATRIX)
    assert plan.choice is None
    assert "has no wheels for Python 3.12 on linux_aarch64 (has 3.10)" in warning(plan, "platform-unsupported")


def test_thor_keeps_pytorchs_own_build() -> None:
    thor = Gpu("nvidia", "NVIDIA Thor", compute_capability="11.0", family="jetson-thor", integrated=True)
    plan = resolve(Machine(**{**JETSON, "python": "3.12"}, jetson="38.2.0", nvidia_driver="580.00", gpus=(thor,)),
                   Request(), TEST_MATRIX)
    check(plan, "2.15.0", "cu130", {"integrated-gpu-only"})
    assert plan.choice.distribution == "pytorch-index"


def test_orin_on_the_sbsa_stack_with_only_sm_80_kernels_is_said_not_assumed() -> None:
    plan = resolve(Machine(**{**JETSON, "python": "3.12"}, jetson="39.1.0", nvidia_driver="580.00", gpus=(ORIN,)),
                   Request(), TEST_MATRIX)
    assert plan.choice.distribution == "pytorch-index" and plan.gpu_accelerated
    message = warning(plan, "gpu-arch-unknown")
    assert message.startswith(f"Jetson AGX Orin (sm_87) gets the sm_80 kernels of torch {plan.choice.torch}+"
                              f"{plan.choice.variant}, which lists no sm_87")
    assert message.endswith("inferred")


def test_l4t_unknown_is_said_when_a_jetson_index_is_chosen() -> None:
    plan = resolve(jetson(None), Request(), TEST_MATRIX)
    assert plan.choice.vendor_index.id == "jetson-jp6-cu126"
    assert warning(plan, "driver-unknown").startswith("L4T release unknown: the Jetson AI Lab index for JetPack 6")


# -- every output format carries the vendor's build ----------------------------------------------------------------

def test_json_names_the_distribution_index_extras_and_devices() -> None:
    data = json.loads(render(plan_for(Machine(**WINDOWS, gpus=(RX7900XTX,))), "json"))
    assert data["choice"]["distribution"] == "vendor-index"
    assert data["choice"]["vendor_index"] == {"id": "amd-stable", "vendor": "amd",
                                              "name": "AMD's stable ROCm index (whl-next)", "channel": "stable",
                                              "confidence": "maintainer-statement"}
    assert data["choice"]["extras"] == {"torch": ["device-gfx1100"]}
    assert data["choice"]["devices"] == [{"extra": "device-gfx1100", "arch": "gfx1100",
                                          "gpus": ["AMD Radeon RX 7900 XTX"], "support": "release-ready"}]
    assert data["commands"]["pip"].startswith("python -m pip install 'torch[device-gfx1100]==2.14.0+rocm10.1.0'")


def test_requirements_constraints_pyproject_and_dockerfile_carry_the_build() -> None:
    plan = plan_for(Machine(**WINDOWS, gpus=(RX7900XTX,)), "torch", "torchvision")
    requirements = render(plan, "requirements").splitlines()
    assert requirements[1:] == [f"--index-url {AMD_INDEX}", "torch[device-gfx1100]==2.14.0+rocm10.1.0",
                                "torchvision[device-gfx1100]==0.29.0a0+rocm10.1.0"]
    constraints = render(plan, "constraints").splitlines()[1:]
    assert constraints == ["torch==2.14.0+rocm10.1.0", "torchvision==0.29.0a0+rocm10.1.0"]  # no extras in a constraint
    pyproject = render(plan, "pyproject")
    assert '"torch[device-gfx1100]==2.14.0+rocm10.1.0",' in pyproject
    # its dependencies (rocm[libraries], amd-torch-device-gfx1100) live on AMD's index: uv must search it
    assert f'name = "torch-install-amd-stable"\nurl = "{AMD_INDEX}"\nexplicit = false' in pyproject
    linux = plan_for(Machine(**LINUX, rocm="7.1.1", gpus=(RX5700XT,)))
    assert ("RUN python3 -m pip install --no-cache-dir 'torch[device-gfx1010]==2.14.0+rocm10.1.0' --index-url "
            f"{AMD_INDEX}") in render(linux, "dockerfile").splitlines()


def test_a_fleet_of_jetsons_and_servers_tells_them_apart_by_platform_release() -> None:
    gh200 = Machine(**JETSON, python="3.10", nvidia_driver="580.95.05", gpus=(nvidia("NVIDIA GH200 480GB", "9.0"),))
    orin = jetson("36.4.3")
    markers = platform_markers([orin, gh200, Machine(**LINUX)])
    assert markers == ["sys_platform == 'linux' and platform_machine == 'aarch64' and 'tegra' in platform_release",
                       "sys_platform == 'linux' and platform_machine == 'aarch64' and 'tegra' not in "
                       "platform_release", "sys_platform == 'linux' and platform_machine == 'x86_64'"]
    jetson_env = {"sys_platform": "linux", "platform_machine": "aarch64", "platform_release": "5.15.148-tegra"}
    server_env = {**jetson_env, "platform_release": "6.8.0-1013-nvidia-64k"}
    assert [Marker(m).evaluate(jetson_env) for m in markers[:2]] == [True, False]
    assert [Marker(m).evaluate(server_env) for m in markers[:2]] == [False, True]
    assert platform_markers([orin, Machine(**LINUX)])[0] == "sys_platform == 'linux' and platform_machine == 'aarch64'"


# -- a variant only a vendor's index has, forced or named by a pin ------------------------------------------------

@pytest.mark.parametrize("request_", [Request(variant="rocm10.0.0"), Request(packages=("torch==2.13.0+rocm10.0.0",))],
                         ids=["--variant", "pin"])
def test_a_variant_only_amds_index_has_is_its_build(request_: Request) -> None:
    plan = resolve(Machine(**WINDOWS, gpus=(RX7900XTX,)), request_, TEST_MATRIX)
    assert (plan.choice.torch, plan.choice.variant, plan.choice.vendor_index.id) == ("2.13.0", "rocm10.0.0",
                                                                                    "amd-stable")
    assert plan.choice.extras == {"torch": ("device-gfx1100",)}


def test_a_forced_vendor_variant_without_code_for_the_gpu_is_said() -> None:
    plan = resolve(Machine(**WINDOWS, gpus=(RX580,)), Request(variant="rocm10.1.0"), TEST_MATRIX)
    assert plan.choice is None
    assert warning(plan, "gpu-arch-unsupported").startswith("rocm10.1.0 requested: the builds of AMD's stable ROCm "
                                                            "index (whl-next) have no code for AMD Radeon RX 580")


def test_one_image_for_several_amd_targets_carries_each_targets_device_extra() -> None:
    from torch_install import fleet
    from torch_install.render.fleet import render_fleet

    machines = [Machine(**LINUX, rocm="7.1.1", gpus=(RX5700XT,)), Machine(**LINUX, rocm="7.1.1", gpus=(RX7900XTX,))]
    result = fleet.resolve_fleet(machines, Request(packages=("torch", "torchvision")), TEST_MATRIX)
    assert result.choice is not None and (result.choice.torch, result.choice.variant) == ("2.14.0", "rocm10.1.0")
    run = next(line for line in render_fleet(result, "dockerfile").splitlines() if line.startswith("RUN python3"))
    assert run == ("RUN python3 -m pip install --no-cache-dir "
                   "'torch[device-gfx1010,device-gfx1100]==2.14.0+rocm10.1.0' "
                   "'torchvision[device-gfx1010,device-gfx1100]==0.29.0a0+rocm10.1.0' --index-url " + AMD_INDEX)
