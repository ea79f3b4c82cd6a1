"""The doctor and an installed vendor build: environments holding the stub wheels of the loopback vendor indexes
(vendor_index.py) as an installer leaves them. It names the build and its runtime packages, says when the device
code of a GPU is missing or the build is not the vendor's where the machine needs it, and its fix keeps to the
vendor's index with the GPU's extra."""

from __future__ import annotations

from pathlib import Path

import pytest

from doctor_cases import interpreter
from resolve_cases import TEST_MATRIX, amd
from torch_install.doctor import diagnose
from torch_install.doctor.inspect import inspect_environment
from torch_install.environment.interpreter import Interpreter
from torch_install.machine import Gpu, Machine
from vendor_index import amd_wheels, jetson_wheels, unpack
from wheels import build_wheel

VENDOR = TEST_MATRIX.vendor_builds
assert VENDOR is not None
AMD_BUILD = next(b for b in VENDOR.builds if b.vendor_index.id == "amd-stable" and b.torch == "2.14.0")
JP6_BUILD = next(b for b in VENDOR.builds if b.vendor_index.id == "jetson-jp6-cu126" and b.torch == "2.11.0")
LINUX = {"os": "linux", "arch": "x86_64", "glibc": "2.36", "rocm": "7.1.1"}
ORIN = Machine(os="linux", arch="aarch64", glibc="2.35", jetson="36.4.3", nvidia_driver="540.4.0",
               gpus=(Gpu("nvidia", "Jetson AGX Orin", compute_capability="8.7", family="jetson-orin",
                         integrated=True),))


def amd_site(tmp_path: Path, gfx: str) -> Path:
    """torch and torchvision with one GPU's device extra, as pip installs them (cp311, linux_x86_64)."""
    wheels = amd_wheels(tmp_path / "wheels", AMD_BUILD)
    chosen = [w for w in wheels if (w.name.startswith(("torch-", "torchvision-")) and "cp311-cp311-linux" in w.name)
              or (w.name.endswith("py3-none-linux_x86_64.whl") and ("_device_" not in w.name
                                                                   or f"device_{gfx}-" in w.name))
              or w.name.startswith(("rocm-10.1.0", "rocm_bootstrap"))]
    return unpack(tmp_path / "site", chosen)


def codes(report) -> list[str]:  # noqa: ANN001
    return [f.code for f in report.findings]


@pytest.fixture
def tmp_wheels(tmp_path: Path) -> Path:
    (tmp_path / "wheels").mkdir()
    return tmp_path


def test_amds_build_for_the_gpu_is_healthy_and_named_with_its_runtime(tmp_wheels: Path) -> None:
    site = amd_site(tmp_wheels, "gfx1010")
    report = diagnose(Machine(**LINUX, gpus=(amd("AMD Radeon RX 5700 XT", "gfx1010"),)),
                      inspect_environment(interpreter(site)), TEST_MATRIX)
    assert report.healthy, report.findings
    named = next(f for f in report.findings if f.code == "vendor-build")
    assert named.title == "torch is a build of AMD's stable ROCm index (whl-next)"
    assert named.evidence[0] == "torch 2.14.0+rocm10.1.0: https://stable.repo.amd.com/rocm/whl-next/ (rocm10.1.0)"
    assert all(name in named.evidence[1] for name in ("rocm 10.1.0", "rocm-sdk-core 10.1.0",
                                                      "amd-torch-device-gfx1010 2.14.0+rocm10.1.0",
                                                      "amd-torchvision-device-gfx1010 0.29.0a0+rocm10.1.0"))
    assert "companion-mismatch" not in codes(report)  # torchvision pins torch==2.14.0+rocm10.1.0: it is that


def test_a_gpu_whose_device_code_is_missing_is_an_error_fixed_from_amds_index(tmp_wheels: Path) -> None:
    site = amd_site(tmp_wheels, "gfx1010")
    report = diagnose(Machine(**LINUX, gpus=(amd("AMD Radeon RX 7900 XTX", "gfx1100"),)),
                      inspect_environment(interpreter(site)), TEST_MATRIX)
    missing = [f for f in report.findings if f.code == "vendor-device-missing"]
    assert [f.title for f in missing] == [
        "the torch device code for AMD Radeon RX 7900 XTX (gfx1100) is not installed",
        "the torchvision device code for AMD Radeon RX 7900 XTX (gfx1100) is not installed"]
    assert missing[0].evidence == ("torch[device-gfx1100] requires amd-torch-device-gfx1100; not installed: "
                                   "amd-torch-device-gfx1100",)
    assert report.fix is not None and report.fix.command == (
        "/env/bin/python -m pip install 'torch[device-gfx1100]==2.14.0+rocm10.1.0' "
        "'torchvision[device-gfx1100]==0.29.0a0+rocm10.1.0' --index-url https://stable.repo.amd.com/rocm/whl-next/")


def jetson_interpreter(site: Path) -> Interpreter:
    return Interpreter(executable="/env/bin/python", version="3.10.12", system="Linux", machine="aarch64",
                       path=(str(site),), site_packages=(str(site),), prefix="/env", base_prefix="/usr")


def test_the_jetson_indexs_build_on_its_jetson_is_healthy(tmp_wheels: Path) -> None:
    site = unpack(tmp_wheels / "site", jetson_wheels(tmp_wheels / "wheels", JP6_BUILD))
    report = diagnose(ORIN, inspect_environment(jetson_interpreter(site)), TEST_MATRIX)
    assert report.healthy, report.findings
    assert next(f for f in report.findings if f.code == "vendor-build").title == (
        "torch is a build of the Jetson AI Lab index for JetPack 6, CUDA 12.6")


def test_pytorchs_sbsa_wheel_on_a_jetsons_l4t_stack_is_not_its_build(tmp_wheels: Path) -> None:
    sbsa = build_wheel(tmp_wheels / "wheels", "torch", "2.11.0", tag="cp310-cp310-manylinux_2_28_aarch64",
                       requires=['nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux"'],
                       version_py="__version__ = '2.11.0'\ncuda = '12.8'\nhip = None\nxpu = None\n")
    report = diagnose(ORIN, inspect_environment(jetson_interpreter(unpack(tmp_wheels / "site", [sbsa]))),
                      TEST_MATRIX)
    expected = next(f for f in report.findings if f.code == "vendor-build-expected")
    assert expected.severity == "error"
    assert expected.title == ("this torch build does not run here: the Jetson AI Lab index for JetPack 6, CUDA "
                              "12.6's does")
    assert report.fix is not None and report.fix.command.endswith(
        "torch==2.11.0 --index-url https://pypi.jetson-ai-lab.io/jp6/cu126")
    assert "vendor-build" not in codes(report)
