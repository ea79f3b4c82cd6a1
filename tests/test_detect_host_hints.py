"""Host facts (platform, libc, distribution, WSL, container, Jetson) and user hints/overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from sysroot import FIXTURES, PCI_3D, PCI_VGA, SysrootBuilder, host_facts
from torch_install import vendors
from torch_install.detectors import detect, host, nvidia
from torch_install.probe import Probe


def machine_of(root: Path, env: dict[str, str] | None = None):
    return detect(Probe(root=root, env=env))


@pytest.mark.parametrize("system, machine, os_name, arch", [
    ("Linux", "x86_64", "linux", "x86_64"), ("Linux", "aarch64", "linux", "aarch64"),
    ("Linux", "arm64", "linux", "aarch64"), ("Windows", "AMD64", "windows", "x86_64"),
    ("Windows", "ARM64", "windows", "arm64"), ("Darwin", "arm64", "macos", "arm64"),
    ("Linux", "ppc64le", "linux", None), ("Plan9", "x86_64", None, "x86_64"),
])
def test_os_and_arch(system: str, machine: str, os_name: str | None, arch: str | None) -> None:
    assert host.parse_os(system) == os_name
    assert host.parse_arch(machine, host.parse_os(system)) == arch


def test_unsupported_arch_is_a_note(tmp_path: Path) -> None:
    SysrootBuilder(tmp_path, host_facts(machine="ppc64le"))
    machine = machine_of(tmp_path)
    assert machine.arch is None
    assert any("'ppc64le' has no PyTorch wheels" in n for n in machine.notes)


@pytest.mark.parametrize("version, free, expected", [
    ("3.12.4", "false", "3.12"), ("3.13.1", "true", "3.13t"), ("3.14.0rc1", "false", "3.14"), ("2.7.18", "false", None),
])
def test_python(version: str, free: str, expected: str | None) -> None:
    assert host.parse_python(version, free) == expected


def test_graviton_fixture_platform() -> None:
    machine = machine_of(FIXTURES / "graviton-aarch64")
    assert (machine.os, machine.arch, machine.python, machine.glibc, machine.os_version) == (
        "linux", "aarch64", "3.11", "2.34", "amzn 2023")
    assert machine.gpus == () and machine.wsl is None and machine.container is None


def test_musl_from_alpine_package_db(tmp_path: Path) -> None:
    b = SysrootBuilder(tmp_path, host_facts(libc=""))
    b.file("/lib/ld-musl-x86_64.so.1", b"\x7fELF").file("/lib/apk/db/installed", "P:busybox\nV:1.36.1-r29\n\n"
                                                        "C:Q1x=\nP:musl\nV:1.2.5-r0\nA:x86_64\n")
    machine = machine_of(tmp_path)
    assert (machine.glibc, machine.musl) == (None, "1.2.5")


def test_wsl_markers(tmp_path: Path) -> None:
    SysrootBuilder(tmp_path, host_facts(release="5.15.167.4-microsoft-standard-WSL2")).file("/dev/dxg")
    machine = machine_of(tmp_path)
    assert machine.wsl is True
    assert machine.sources["wsl"] == "kernel release, /dev/dxg"


def test_wsl1_has_no_gpu_path(tmp_path: Path) -> None:
    b = SysrootBuilder(tmp_path, host_facts(release="4.4.0-19041-Microsoft"))
    b.file("/proc/version", "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0)\n")
    machine = machine_of(tmp_path)
    assert machine.wsl is True and any("WSL 1" in n for n in machine.notes)


@pytest.mark.parametrize("marker, env, cgroup, expected", [
    ("/.dockerenv", {}, None, "docker"),
    ("/run/.containerenv", {}, None, "podman"),
    (None, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, None, "kubernetes"),
    (None, {}, "12:pids:/kubepods/besteffort/pod1/abc\n", "kubernetes"),
    (None, {}, "0::/\n", None),
])
def test_container_markers(tmp_path: Path, marker, env, cgroup, expected) -> None:
    b = SysrootBuilder(tmp_path, env=env)
    if marker:
        b.file(marker)
    if cgroup:
        b.file("/proc/1/cgroup", cgroup)
    assert machine_of(tmp_path).container == expected


def test_unknown_tegra_release_format_is_noted(tmp_path: Path) -> None:
    SysrootBuilder(tmp_path).file("/etc/nv_tegra_release", "something else\n")
    machine = machine_of(tmp_path)
    assert machine.jetson is None and any("nv_tegra_release" in n for n in machine.notes)


# ---- hints -------------------------------------------------------------------------------------------------
def test_driver_hint_overrides_detection_and_recomputes_cuda() -> None:
    machine = machine_of(FIXTURES / "nvidia-8xh100", {"UV_CUDA_DRIVER_VERSION": "580.65.06"})
    assert (machine.nvidia_driver, machine.cuda_driver_api) == ("580.65.06", "13.0")
    assert machine.sources["nvidia_driver"] == "hint $UV_CUDA_DRIVER_VERSION"


def test_our_variable_wins_over_other_tools() -> None:
    env = {"TORCH_INSTALL_NVIDIA_DRIVER": "570.124.06", "UV_CUDA_DRIVER_VERSION": "580.65.06",
           "CONDA_OVERRIDE_CUDA": "12.6"}
    machine = machine_of(FIXTURES / "cpu-x86_64", env)
    assert machine.nvidia_driver == "570.124.06"
    assert (machine.cuda_driver_api, machine.sources["cuda_driver_api"]) == ("12.6", "hint $CONDA_OVERRIDE_CUDA")


def test_arch_hints_add_a_gpu_on_a_gpu_less_builder() -> None:
    env = {"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.0", "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.9",
           "UV_AMD_GPU_ARCHITECTURE": "gfx942", "TORCH_INSTALL_ROCM": "6.4.1"}
    machine = machine_of(FIXTURES / "cpu-x86_64", env)
    assert [(g.vendor, g.compute_capability, g.gfx) for g in machine.gpus] == [
        ("nvidia", "9.0", None), ("amd", None, "gfx942")]
    assert machine.sources["gpus[0].compute_capability"] == "hint $NV_VARIANT_PROVIDER_FORCE_SM_ARCH"
    assert (machine.cuda_driver_api, machine.rocm) == ("12.9", "6.4.1")


def test_cc_hint_replaces_detected_cc() -> None:
    machine = machine_of(FIXTURES / "gtx1080", {"TORCH_INSTALL_CUDA_ARCH": "sm_75"})
    assert machine.gpus[0].compute_capability == "7.5"
    assert machine.sources["gpus[0].compute_capability"] == "hint $TORCH_INSTALL_CUDA_ARCH"


@pytest.mark.parametrize("name, value", [("UV_CUDA_DRIVER_VERSION", "latest"), ("TORCH_INSTALL_CUDA_ARCH", "ampere"),
                                         ("TORCH_INSTALL_GFX", "navi31"), ("CONDA_OVERRIDE_CUDA", "twelve"),
                                         ("TORCH_INSTALL_ROCM", "6")])
def test_unusable_hints_are_ignored_with_a_note(name: str, value: str) -> None:
    plain = machine_of(FIXTURES / "gtx1080")
    hinted = machine_of(FIXTURES / "gtx1080", {name: value})
    assert hinted.gpus == plain.gpus and hinted.nvidia_driver == plain.nvidia_driver
    assert any(n.startswith(f"${name}=") and "ignored" in n for n in hinted.notes)


@pytest.mark.parametrize("value, visible", [
    ("0,1", [True, True, False, False, False, False, False, False]),
    ("7", [False] * 7 + [True]),
    ("", [False] * 8), ("-1", [False] * 8),
    ("2,-1,3", [False, False, True, False, False, False, False, False]),
    ("GPU-00000105", [False] * 5 + [True] + [False] * 2),
    ("GPU-00000100-0000-4000-8000-000000000100,GPU-00000101", [True, True] + [False] * 6),
    ("0,9", [True] + [False] * 7),
])
def test_cuda_visible_devices(value: str, visible: list[bool]) -> None:
    machine = machine_of(FIXTURES / "nvidia-8xh100", {"CUDA_VISIBLE_DEVICES": value})
    flags = [g.visible for g in machine.gpus for _ in range(g.count)]
    assert flags == visible


def test_visibility_problem_is_noted_and_amd_variable_leaves_nvidia_alone() -> None:
    machine = machine_of(FIXTURES / "nvidia-8xh100", {"CUDA_VISIBLE_DEVICES": "0,9", "HIP_VISIBLE_DEVICES": ""})
    assert any("$CUDA_VISIBLE_DEVICES: index 9 does not exist" in n for n in machine.notes)
    assert machine.gpus[0].count == 1 and machine.gpus[0].visible


def test_visible_set_rules() -> None:
    uuids = ["GPU-aaaa1111", "GPU-aaaa2222", "GPU-bbbb3333"]
    assert vendors.visible_set("GPU-b", 3, uuids) == ({2}, None)
    keep, problem = vendors.visible_set("GPU-aaaa,1", 3, uuids)
    assert keep == set() and "matches 2 GPUs" in problem
    keep, problem = vendors.visible_set("1,MIG-abcdef", 3, uuids)
    assert keep == {1} and "MIG instance" in problem


def test_smi_header_labels_old_and_new() -> None:
    old = "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |"
    assert nvidia.parse_smi_header(old) == ("550.54.15", "12.4")


def test_pci_only_gpu_without_driver(tmp_path: Path) -> None:
    SysrootBuilder(tmp_path).pci("0000:01:00.0", "10de", "2684", PCI_VGA, "nouveau").pci(
        "0000:02:00.0", "10de", "20b2", PCI_3D, "vfio-pci")
    machine = machine_of(tmp_path)
    assert [(g.driver, g.compute_capability) for g in machine.gpus] == [("nouveau", "8.9"), ("vfio-pci", "8.0")]
    assert machine.nvidia_driver is None
