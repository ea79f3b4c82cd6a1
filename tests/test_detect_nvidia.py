"""NVIDIA detection on captured trees in the real /proc, /sys and nvidia-smi formats."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sysroot import FIXTURES, OPEN, PCI_3D, PCI_VGA, PROPRIETARY, SMI_QUERY, SysrootBuilder, host_facts
from torch_install.detectors import detect, nvidia
from torch_install.detectors.found import Found
from torch_install.drivers import cuda_for_driver
from torch_install.probe import Probe, command_slug


def run(root: Path | str) -> tuple:
    probe = Probe(root=root)
    return detect(probe), probe


# fixture -> (driver, cuda, [(pci_id, name, cc, count)], source of the driver)
EXPECTED = {
    "nvidia-8xh100": ("550.54.15", "12.4", [("10de:2330", "NVIDIA H100 80GB HBM3", "9.0", 8)],
                      "/sys/module/nvidia/version"),
    "rtx4090-intel-igpu": ("560.35.03", "12.6", [("10de:2684", "NVIDIA GeForce RTX 4090", "8.9", 1)],
                           "/sys/module/nvidia/version"),
    "rtx5090": ("575.57.08", "12.9", [("10de:2b85", "NVIDIA GeForce RTX 5090", "12.0", 1)],
                "/sys/module/nvidia/version"),
    "gtx1080": ("535.183.01", "12.2", [("10de:1b80", "NVIDIA GeForce GTX 1080", "6.1", 1)],
                "/sys/module/nvidia/version"),
    "wsl2-nvidia": ("566.36", "12.7", [("10de:2204", "NVIDIA GeForce RTX 3090", "8.6", 1),
                                       ("10de:2503", "NVIDIA GeForce RTX 3060", "8.6", 1)],
                    "nvidia-smi --query-gpu=driver_version"),
    "container-masked-procfs": ("570.133.20", "12.8", [("10de:20b2", "NVIDIA A100 SXM4 80GB", "8.0", 4)],
                                "/sys/module/nvidia/version"),
    "gh200": ("560.35.03", "12.6", [("10de:2342", "NVIDIA GH200 480GB", "9.0", 1)], "/sys/module/nvidia/version"),
    "jetson-orin": ("540.4.0", None, [(None, "Jetson Orin GPU", "8.7", 1)], "/sys/module/nvidia/version"),
    "cpu-x86_64": (None, None, [], None),
    "graviton-aarch64": (None, None, [], None),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_trees(name: str) -> None:
    driver, cuda, gpus, driver_source = EXPECTED[name]
    machine, probe = run(FIXTURES / name)
    assert machine.nvidia_driver == driver
    assert machine.cuda_driver_api == cuda
    nvidia_gpus = [(g.pci_id, g.name, g.compute_capability, g.count) for g in machine.gpus_of("nvidia")]
    assert nvidia_gpus == gpus
    assert machine.sources.get("nvidia_driver") == driver_source
    # a command runs only where kernel files could not answer (WSL has no /sys/module/nvidia)
    assert bool(probe.accessed.commands) == (name == "wsl2-nvidia")


def test_h100_sources_name_the_file_and_the_table() -> None:
    machine, _ = run(FIXTURES / "nvidia-8xh100")
    assert machine.sources["gpus[0].name"] == "/proc/driver/nvidia/gpus/0000:18:00.0/information"
    assert machine.sources["gpus[0].compute_capability"] == "PCI id table: 10de:2330 is GH100 (sm_90)"
    assert "CUDA 12.4 Update 1 needs ≥ 550.54.15" in machine.sources["cuda_driver_api"]
    # NVSwitches (bridge class), the BMC VGA (ASPEED) and NICs are not GPUs
    assert [g.vendor for g in machine.gpus] == ["nvidia"]


def test_desktop_lists_the_intel_igpu_too() -> None:
    machine, _ = run(FIXTURES / "rtx4090-intel-igpu")
    intel = machine.gpus_of("intel")
    assert [(g.pci_id, g.driver) for g in intel] == [("8086:a780", "i915")]
    assert machine.python == "3.13t"


def test_wsl_takes_the_cuda_version_from_the_smi_banner() -> None:
    machine, probe = run(FIXTURES / "wsl2-nvidia")
    assert machine.wsl is True
    assert machine.cuda_driver_api == "12.7"  # what the driver reports; no toolkit row is 12.7
    assert machine.sources["cuda_driver_api"] == "nvidia-smi banner (CUDA version reported by driver 566.36)"
    assert machine.sources["gpus[0].compute_capability"] == "nvidia-smi compute_cap"
    assert list(probe.accessed.commands) == [command_slug(SMI_QUERY), command_slug(["nvidia-smi"])]


def test_wsl_without_a_banner_uses_the_windows_driver_table(tmp_path: Path) -> None:
    tree = tmp_path / "wsl"
    shutil.copytree(FIXTURES / "wsl2-nvidia", tree, symlinks=True)
    (tree / "_commands" / "nvidia-smi").unlink()
    machine, _ = run(tree)
    assert machine.cuda_driver_api == "12.6"
    assert "windows driver table" in machine.sources["cuda_driver_api"]


def test_a_banner_of_another_driver_is_not_trusted(tmp_path: Path) -> None:
    tree = tmp_path / "wsl"
    shutil.copytree(FIXTURES / "wsl2-nvidia", tree, symlinks=True)
    banner = tree / "_commands" / "nvidia-smi"
    banner.write_text(banner.read_text().replace("Driver Version: 566.36", "Driver Version: 572.16"))
    machine, _ = run(tree)
    assert "windows driver table" in machine.sources["cuda_driver_api"]


def test_masked_container_explains_that_gpus_are_the_hosts() -> None:
    machine, _ = run(FIXTURES / "container-masked-procfs")
    assert machine.container == "docker"
    assert any("no GPU is passed into this container" in n for n in machine.notes)


def test_jetson_leaves_cuda_unknown_with_a_reason() -> None:
    machine, _ = run(FIXTURES / "jetson-orin")
    assert machine.jetson == "36.4.3"
    assert machine.gpus[0].integrated is True
    assert any("L4T" in n for n in machine.notes)


@pytest.mark.parametrize("proc, expected", [
    (PROPRIETARY.format(v="470.256.02", date="Thu May  2 14:37:44 UTC 2024"), "470.256.02"),
    (OPEN.format(arch="x86_64", v="580.65.06", date="Sun Jul 27 07:09:29 UTC 2025"), "580.65.06"),
    (OPEN.format(arch="aarch64", v="560.35.03", date="Fri Aug 16 21:21:48 UTC 2024"), "560.35.03"),
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  375.74  Wed Jun 14 01:39:39 PDT 2017\n", "375.74"),
])
def test_driver_from_procfs_when_sysfs_is_missing(tmp_path: Path, proc: str, expected: str) -> None:
    b = SysrootBuilder(tmp_path)
    b.nvidia_driver(expected, proc, module=False).pci("0000:01:00.0", "10de", "2204", PCI_VGA, "nvidia")
    machine, probe = run(tmp_path)
    assert machine.nvidia_driver == expected
    assert machine.sources["nvidia_driver"] == "/proc/driver/nvidia/version"
    assert not probe.accessed.commands


def test_smi_compute_cap_is_the_authority_for_an_unknown_device(tmp_path: Path) -> None:
    b = SysrootBuilder(tmp_path)
    b.nvidia_driver("610.43.02").pci("0000:41:00.0", "10de", "3399", PCI_3D, "nvidia")
    b.command(SMI_QUERY, "0, NVIDIA Future GPU, 00000000:41:00.0, 0x339910DE, 610.43.02, GPU-abc, 12.1\n")
    machine, probe = run(tmp_path)
    assert machine.gpus[0].compute_capability == "12.1"
    assert machine.gpus[0].name == "NVIDIA Future GPU"
    assert machine.sources["gpus[0].compute_capability"] == "nvidia-smi compute_cap"
    assert len(probe.accessed.commands) == 1


@pytest.mark.parametrize("stdout, stderr, rc, note", [
    ("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 560.35\n", "", 18,
     "Driver/library version mismatch (driver upgraded without a reboot?)"),
    ("No devices were found\n", "", 6, "No devices were found"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.\n", "", 9, "couldn't communicate with the NVIDIA driver"),
    ("", "", 4, "exit status 4"),
])
def test_smi_failures_become_notes(tmp_path: Path, stdout: str, stderr: str, rc: int, note: str) -> None:
    b = SysrootBuilder(tmp_path)
    b.pci("0000:01:00.0", "10de", "2684", PCI_VGA)
    b.command(SMI_QUERY, stdout, stderr, rc)
    machine, _ = run(tmp_path)
    assert machine.nvidia_driver is None
    assert machine.gpus[0].compute_capability == "8.9"  # the PCI table still answers
    assert any(n.startswith("nvidia-smi: ") and note in n for n in machine.notes), machine.notes


def test_smi_timeout_in_a_capture_is_reported(tmp_path: Path) -> None:
    SysrootBuilder(tmp_path).pci("0000:01:00.0", "10de", "2684", PCI_VGA).command(SMI_QUERY, timeout=True)
    machine, _ = run(tmp_path)
    assert any("nvidia-smi: timed out after" in n for n in machine.notes)


def test_old_driver_without_compute_cap_field_is_asked_again(tmp_path: Path) -> None:
    b = SysrootBuilder(tmp_path)
    b.pci("0000:01:00.0", "10de", "1b80", PCI_VGA)
    b.command(SMI_QUERY, 'Field "compute_cap" is not a valid field to query.\n\n', rc=2)
    b.command([SMI_QUERY[0], SMI_QUERY[1].rsplit(",", 1)[0], SMI_QUERY[2]],
              "0, NVIDIA GeForce GTX 1080, 00000000:01:00.0, 0x1B8010DE, 470.256.02, GPU-1\n")
    machine, probe = run(tmp_path)
    assert machine.nvidia_driver == "470.256.02"
    assert machine.cuda_driver_api == "11.4"
    assert machine.gpus[0].compute_capability == "6.1"  # from the PCI table
    assert len(probe.accessed.commands) == 2


def test_multi_line_smi_with_err_and_na(tmp_path: Path) -> None:
    b = SysrootBuilder(tmp_path)
    b.file("/dev/dxg").file("/proc/version", "Linux version 5.15.153.1-microsoft-standard-WSL2\n")
    b.command(SMI_QUERY, "0, NVIDIA RTX A6000, 00000000:01:00.0, 0x223010DE, 552.44, GPU-1, 8.6\n"
                         "1, ERR!, 00000000:02:00.0, 0x223010DE, 552.44, [N/A], ERR!\n"
                         "garbage line\n")
    machine, _ = run(tmp_path)
    assert machine.nvidia_driver == "552.44"
    # the ERR! GPU gets name and CC from its PCI id, so both group as one model
    assert [(g.name, g.compute_capability, g.count) for g in machine.gpus] == [("NVIDIA RTX A6000", "8.6", 2)]
    assert any("reports ERR!" in n for n in machine.notes)
    assert any("unexpected line 'garbage line'" in n for n in machine.notes)


def test_no_nvidia_on_pci_and_no_wsl_never_runs_a_command(tmp_path: Path) -> None:
    b = SysrootBuilder(tmp_path)
    b.pci("0000:03:00.0", "1a03", "2000", PCI_VGA, "ast")
    b.command(SMI_QUERY, "0, NVIDIA Ghost, 00000000:01:00.0, 0x233010DE, 550.54.15, GPU-1, 9.0\n")
    machine, probe = run(tmp_path)
    assert machine.gpus == () and machine.nvidia_driver is None
    assert probe.accessed.commands == {}


def test_unknown_device_id_leaves_cc_unknown_with_a_note(tmp_path: Path) -> None:
    SysrootBuilder(tmp_path).nvidia_driver("580.82.07").pci("0000:01:00.0", "10de", "ffff", PCI_3D)
    machine, _ = run(tmp_path)
    assert machine.gpus[0].compute_capability is None
    assert any("10de:ffff is not in the shipped PCI table" in n for n in machine.notes)
    assert any("nvidia-smi: not found" in n for n in machine.notes)


def test_captured_nvml_answer_is_replayed(tmp_path: Path) -> None:
    facts = host_facts() | {"nvml": '{"driver": "580.95.05", "cuda": 13000, "gpus": [{"name": "NVIDIA B200", '
                                    '"bus_id": "00000000:1B:00.0", "cc": "10.0"}]}'}
    SysrootBuilder(tmp_path, facts).file("/dev/dxg")
    machine, probe = run(tmp_path)
    assert (machine.nvidia_driver, machine.cuda_driver_api) == ("580.95.05", "13.0")
    assert machine.sources["cuda_driver_api"] == "NVML nvmlSystemGetCudaDriverVersion"
    assert machine.gpus[0].compute_capability == "10.0"
    assert probe.accessed.commands == {}


@pytest.mark.slow
def test_hung_nvidia_smi_is_killed_and_reported(tmp_path: Path) -> None:
    pid_file = tmp_path / "sleep.pid"
    script = tmp_path / "nvidia-smi"
    script.write_text(f"#!/bin/sh\n/bin/sleep 60 &\necho $! > {pid_file}\nwait $!\necho 0, never\n")
    script.chmod(0o755)
    probe = Probe(env={"PATH": str(tmp_path), "TORCH_INSTALL_NO_NVML": "1"}, timeout=0.3)
    found = Found(values={"os": "linux"})
    nvidia._from_smi(probe, found)
    assert found.notes == ["nvidia-smi: timed out after 0.3 s and was killed"]
    assert "nvidia_driver" not in found.values
    assert _gone_within(pid_file.read_text().strip(), seconds=5.0)  # without the group kill it sleeps for 60 s


def _gone_within(pid: str, seconds: float) -> bool:
    """True once the process has exited (a zombie has exited too): SIGKILL is delivered asynchronously."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("driver, os_name, cuda", [
    ("550.54.15", "linux", "12.4"), ("550.54.14", "linux", "12.4"), ("550.40.07", "linux", "12.3"),
    ("580.65.06", "linux", "13.0"), ("580.65.05", "linux", "12.9"), ("575.57.08", "linux", "12.9"),
    ("525.60.13", "linux", "12.0"), ("520.61.05", "linux", "11.8"), ("595.71.05", "linux", "13.2"),
    ("551.78", "windows", "12.4"), ("581.42", "windows", "13.0"), ("528.33", "windows", "12.0"),
    ("400.1", "linux", None), ("banana", "linux", None), ("", "linux", None),
])
def test_newest_cuda_for_driver(driver: str, os_name: str, cuda: str | None) -> None:
    result = cuda_for_driver(driver, os_name)
    assert (result[0] if result else None) == cuda


@pytest.mark.parametrize("device, chip, cc", [
    ("102d", "GK210", "3.7"), ("1023", "GK110B", "3.5"), ("13c0", "GM204", "5.2"), ("15f8", "GP100", "6.0"),
    ("1b80", "GP104", "6.1"), ("1db1", "GV100", "7.0"), ("1eb8", "TU104", "7.5"), ("20b2", "GA100", "8.0"),
    ("2204", "GA102", "8.6"), ("27b8", "AD104", "8.9"), ("2330", "GH100", "9.0"), ("2342", "GH100", "9.0"),
    ("2901", "GB100", "10.0"), ("3182", "GB110", "10.3"), ("2b00", "GB10B", "11.0"), ("2b85", "GB202", "12.0"),
    ("2e12", "GB20B", "12.1"),
])
def test_pci_table_covers_kepler_to_blackwell(device: str, chip: str, cc: str) -> None:
    hit = nvidia.pci_lookup(device)
    assert hit is not None and (hit[0], hit[2]) == (chip, cc)


def test_pci_table_has_no_non_gpu_functions() -> None:
    for device in ("22ba", "22a3", "1af1", "22e8", "229a"):  # audio, NVSwitch, Orin root complex
        assert nvidia.pci_lookup(device) is None


def test_a_driver_newer_than_the_table_takes_cuda_from_the_banner(tmp_path: Path) -> None:
    b = SysrootBuilder(tmp_path)
    b.nvidia_driver("620.14.02").pci("0000:41:00.0", "10de", "3399", PCI_3D, "nvidia")
    b.command(SMI_QUERY, "0, NVIDIA Future GPU, 00000000:41:00.0, 0x339910DE, 620.14.02, GPU-abc, 12.1\n")
    b.command(["nvidia-smi"], "| NVIDIA-SMI 620.14.02       KMD Version: 620.14.02      CUDA UMD Version: 13.6     |\n")
    machine, probe = run(tmp_path)
    assert machine.cuda_driver_api == "13.6"
    assert machine.sources["cuda_driver_api"].startswith("nvidia-smi banner")
    assert len(probe.accessed.commands) == 2


def test_a_banner_reporting_cuda_err_falls_back_to_the_table(tmp_path: Path) -> None:
    tree = tmp_path / "wsl"
    shutil.copytree(FIXTURES / "wsl2-nvidia", tree, symlinks=True)
    banner = tree / "_commands" / "nvidia-smi"  # seen on WSL with some driver/WSL combinations
    banner.write_text(banner.read_text().replace("CUDA Version: 12.7    ", "CUDA Version: ERR!    "))
    machine, _ = run(tree)
    assert machine.cuda_driver_api == "12.6"
    assert "windows driver table" in machine.sources["cuda_driver_api"]
