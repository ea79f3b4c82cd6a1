"""Every detection parser meets empty, truncated, binary and random input with "unknown", never an exception."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lanes import robustness
from sysroot import OPEN, PCI_VGA, SysrootBuilder
from torch_install import vendors
from torch_install.detectors import detect, hints, host, nvidia
from torch_install.drivers import cuda_for_driver
from torch_install.probe import Probe

REAL_INPUTS = {
    nvidia.parse_driver_version: "550.54.15\n",
    nvidia.parse_proc_version: OPEN.format(arch="x86_64", v="550.54.15", date="Tue Mar  5 22:15:33 UTC 2024"),
    nvidia.parse_smi_header: "| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3"
                             "     |",
    nvidia.parse_pci_device_id: "0x233010DE",
    host.parse_tegra_release: "# R35 (release), REVISION: 6.0, GCID: 37262383, BOARD: t186ref, EABI: aarch64",
    host.parse_os_release: 'NAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\n',
    host.parse_glibc: "glibc 2.35",
    host.parse_musl_version: "C:Q1abc=\nP:musl\nV:1.2.4-r2\nA:x86_64\n",
    hints.parse_compute_capability: "sm_90",
    hints.parse_cuda: "12.4.1",
}
GOOD = {
    nvidia.parse_driver_version: "550.54.15", nvidia.parse_proc_version: "550.54.15",
    nvidia.parse_smi_header: ("610.43.02", "13.3"), nvidia.parse_pci_device_id: "2330",
    host.parse_tegra_release: "35.6.0", host.parse_os_release: "ubuntu 22.04", host.parse_glibc: "2.35",
    host.parse_musl_version: "1.2.4", hints.parse_compute_capability: "9.0", hints.parse_cuda: "12.4",
}
UNKNOWN = {nvidia.parse_smi_header: (None, None)}


@pytest.mark.parametrize("parse", list(REAL_INPUTS), ids=lambda f: f.__name__)
def test_real_input_parses(parse) -> None:
    assert parse(REAL_INPUTS[parse]) == GOOD[parse]


@pytest.mark.parametrize("parse", list(REAL_INPUTS), ids=lambda f: f.__name__)
@pytest.mark.parametrize("bad", ["", None, "\x00\x01\xff", "\n\n\n", "garbage: : :"])
def test_empty_and_binary_input_is_unknown(parse, bad) -> None:
    assert parse(bad) == UNKNOWN.get(parse)


@pytest.mark.parametrize("parse", list(REAL_INPUTS), ids=lambda f: f.__name__)
def test_truncated_input_never_raises(parse) -> None:
    text = REAL_INPUTS[parse]
    for cut in range(len(text)):
        parse(text[:cut])  # a prefix may or may not carry the value; it must never raise


def test_truncated_driver_version_is_not_taken_as_a_shorter_version() -> None:
    assert nvidia.parse_driver_version("550.") is None
    assert nvidia.parse_proc_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54") is None


@robustness(200)
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", "replace"))))
def test_random_input_never_raises(text: str) -> None:
    version = re.compile(r"^\d+\.\d+(\.\d+)?$")
    for parse in (nvidia.parse_driver_version, nvidia.parse_proc_version, host.parse_glibc, host.parse_tegra_release,
                  host.parse_musl_version, hints.parse_cuda):
        value = parse(text)
        assert value is None or version.match(value)
    cc = hints.parse_compute_capability(text)
    assert cc is None or re.fullmatch(r"\d{1,2}\.\d", cc)
    assert isinstance(nvidia.parse_gpu_information(text), dict)
    rows, problems = nvidia.parse_smi_query(text)
    assert all(isinstance(p, str) for p in problems) and isinstance(rows, list)
    nvidia.parse_smi_header(text)
    nvidia.smi_failure(text, text)
    nvidia.parse_pci_device_id(text)
    host.parse_os_release(text)
    host.parse_python(text, text)
    host.parse_arch(text, "linux")
    assert cuda_for_driver(text) is None or version.match(cuda_for_driver(text)[0])
    vendors.visible_set(text, 4, ["GPU-1", None, "GPU-2", "GPU-3"])


@robustness(40)
@given(st.binary(max_size=300), st.binary(max_size=300), st.binary(max_size=300))
def test_detection_on_a_tree_of_random_bytes_never_raises(tmp_path_factory, version: bytes, info: bytes,
                                                         vendor: bytes) -> None:
    root: Path = tmp_path_factory.mktemp("random")
    b = SysrootBuilder(root)
    b.pci("0000:01:00.0", "10de", "2684", PCI_VGA, "nvidia")
    b.file("/sys/module/nvidia/version", version).file("/proc/driver/nvidia/version", version)
    b.file("/proc/driver/nvidia/gpus/0000:01:00.0/information", info)
    b.file("/sys/bus/pci/devices/0000:02:00.0/vendor", vendor).file("/sys/bus/pci/devices/0000:02:00.0/class", vendor)
    b.file("/etc/nv_tegra_release", info).file("/etc/os-release", info).file("/proc/version", version)
    machine = detect(Probe(root=root))
    assert machine.gpus_of("nvidia")[0].compute_capability == "8.9"
    if machine.nvidia_driver is None and version.strip():
        assert machine.notes  # an unreadable driver file is reported, not silently dropped


@pytest.mark.parametrize(("driver", "label"), [("450.40.01", "CUDA 11.0.1 RC"), ("450.51.05", "CUDA 11.0.2 GA"),
                                               ("450.51.06", "CUDA 11.0.3 Update 1")])
def test_cuda_11_0_rows_are_nvidias_three_releases(driver: str, label: str) -> None:
    """NVIDIA's toolkit/driver table: 11.0.1 RC >= 450.36.06, 11.0.2 GA >= 450.51.05, 11.0.3 >= 450.51.06."""
    found = cuda_for_driver(driver)
    assert found is not None and found[0] == "11.0" and found[1].startswith(f"{label} needs")


def test_the_ga_of_cuda_11_0_is_11_0_2() -> None:
    from torch_install.drivers import toolkit_ga_driver

    assert toolkit_ga_driver(11, 0, "linux") == ("450.51.05", "source-file")
