"""The facts an audit against torch's real wheels found wrong (D1-D9), on the shipped matrix and tables: each test
plans the machine the audit reproduced the failure on, or reads the fact it corrected."""

from __future__ import annotations

import pytest

from resolve_cases import warning_codes
from sysroot import FIXTURES
from torch_install.detectors import detect
from torch_install.detectors.names import gpu_from_name
from torch_install.machine import Gpu, Machine
from torch_install.machine_completion import complete_machine
from torch_install.package_data import load_json
from torch_install.probe import Probe
from torch_install.resolver import Request, resolve
from torch_install.resolver.matrix import load_matrix
from torch_install.resolver.plan import Plan

MATRIX = load_matrix()


def plan(machine: Machine, *packages: str) -> Plan:
    return resolve(complete_machine(machine), Request(packages=packages or ("torch",)), MATRIX)


def mac(version: str, python: str) -> Machine:
    return Machine(os="macos", arch="arm64", python=python, os_version=version,
                   gpus=(Gpu("apple", "Apple M2", family="m2", integrated=True),))


def codes(p: Plan) -> set[str]:
    return set(warning_codes(p))


# D1: the macOS floor is per Python tag (2.7.0/2.7.1/2.8.0 cp313t and 2.10.0 cp313t/cp314/cp314t need 14.0)
@pytest.mark.parametrize(("python", "request_", "not_", "chosen"), [("3.14", "torch<2.11", "2.10.0", "2.9.1"),
                                                                  ("3.13t", "torch<2.9", "2.8.0", None)])
def test_the_macos_floor_of_each_python_tag(python: str, request_: str, not_: str, chosen: str | None) -> None:
    p = plan(mac("13.6", python), request_)
    assert p.choice is None or p.choice.torch != not_
    assert chosen is None or p.choice is not None and p.choice.torch == chosen
    assert f"torch {not_} wheels for Python {python} need macOS ≥ 14.0, found 13.6" in {w.message.split(";")[0]
                                                                                        for w in p.warnings}


# D2: torch 2.x x86_64 wheels need glibc 2.17 whatever their manylinux1 tag says
def test_glibc_below_2_17_is_declined_with_the_reason() -> None:
    machine = Machine(os="linux", arch="x86_64", python="3.10", glibc="2.12", nvidia_driver="550.54.15",
                      gpus=(gpu_from_name("Tesla T4"),))
    p = plan(machine, "torch<2.7")
    assert p.choice is None
    assert any("need glibc ≥ 2.17 (manylinux), found 2.12" in w.message for w in p.warnings)
    assert all(r.glibc.get("linux_x86_64") in ("2.17", "2.28") for r in MATRIX.releases)


# D6: MPS needs a macOS per release (13.0 for 2.5-2.9, 14.0 from 2.10)
def test_mps_below_its_macos_takes_the_newest_release_whose_mps_runs() -> None:
    p = plan(mac("13.6", "3.12"))
    assert p.choice is not None and p.choice.torch == "2.9.1" and p.gpu_accelerated
    assert any("torch 2.11.0's MPS backend needs macOS ≥ 14.0, found 13.6" in w.message for w in p.warnings)
    assert p.upgrade is not None and p.upgrade.needs[0].text == "macOS ≥ 14.0"


def test_mps_that_runs_on_no_matching_release_is_a_cpu_plan() -> None:
    p = plan(mac("13.6", "3.12"), "torch>=2.10")  # 2.12+ need macOS 14 to install; 2.10/2.11 install, MPS does not
    assert p.choice is not None and p.choice.torch == "2.11.0" and p.gpu_accelerated is False
    assert "platform-unsupported" in codes(p) and "the build runs on the CPU only" in p.warnings[-1].message


def test_mps_on_a_current_macos_is_the_gpu() -> None:
    p = plan(mac("15.5", "3.12"))
    assert p.choice is not None and p.choice.torch == MATRIX.releases[0].version and p.gpu_accelerated


# D3/D9: aarch64 cu129 lists come from the aarch64 build script; D4: Windows cu128/cu129 have no sm_70
@pytest.mark.parametrize("version", ["2.8.0", "2.12.1", "2.13.0"])
def test_aarch64_cu129_arch_lists(version: str) -> None:
    arch = MATRIX.release(version).cuda_arch("cu129", "linux_aarch64")
    assert arch is not None and arch.sm == (80, 90, 100, 120) and arch.ptx == ()


@pytest.mark.parametrize(("version", "variant"), [("2.8.0", "cu128"), ("2.10.0", "cu128"), ("2.8.0", "cu129")])
def test_windows_cu128_cu129_without_sm70(version: str, variant: str) -> None:
    arch = MATRIX.release(version).cuda_arch(variant, "windows_x86_64")
    assert arch is not None and 70 not in arch.sm and arch.confidence == "inferred"


def test_a_v100_on_windows_gets_the_build_with_its_kernels() -> None:
    machine = Machine(os="windows", arch="x86_64", python="3.12", nvidia_driver="572.16",
                      gpus=(gpu_from_name("Tesla V100-PCIE-16GB"),))
    p = plan(machine, "torch==2.9.1")
    assert p.choice is not None and p.choice.variant == "cu126"


# D5: Mendocino is gfx1036 (the ISA amdkfd reports for GC 10.3.7)
def test_mendocino_is_gfx1036() -> None:
    gpu = complete_machine(Machine(os="linux", gpus=(Gpu("amd", pci_id="1002:1506"),))).gpus[0]
    assert (gpu.gfx, gpu.integrated) == ("gfx1036", True)
    assert "gfx1037" not in load_json("detectors/data/amd-pci.json")["integrated_gfx"]


# D7: a companion without wheels for the Python is not planned beside torch
def test_torchvision_020_has_no_python_313_wheels() -> None:
    machine = Machine(os="linux", arch="x86_64", python="3.13", glibc="2.35")
    p = plan(machine, "torch<2.6", "torchvision")
    assert p.choice is None
    assert any("torchvision 0.20.1 (the match of torch 2.5.1) has no wheels for Python 3.13" in w.message
               for w in p.warnings)
    assert plan(machine, "torch<2.6").choice is not None  # torch alone installs


# D8: 2.13.0 has cp315/cp315t on the PyTorch index (Linux)
@pytest.mark.parametrize("python", ["3.15", "3.15t"])
def test_python_315_on_the_index_for_2_13(python: str) -> None:
    p = plan(Machine(os="linux", arch="x86_64", python=python, glibc="2.35"), "torch==2.13.0")
    assert p.choice is not None and p.choice.torch == "2.13.0"


# Table gaps
@pytest.mark.parametrize(("pci_id", "vendor", "arch"), [
    ("10de:2e03", "nvidia", "sm_121"), ("10de:2e06", "nvidia", "sm_121"), ("10de:20bd", "nvidia", "sm_80"),
    ("1002:75a8", "amd", "gfx950"), ("8086:e215", "intel", "battlemage"), ("8086:b0ff", "intel", "panther-lake"),
    ("8086:0bd0", "intel", "ponte-vecchio"), ("10de:1e35", "nvidia", "sm_75"), ("10de:21c3", "nvidia", "sm_75"),
    ("8086:56a7", "intel", "alchemist"), ("8086:4f89", "intel", "alchemist"), ("8086:46b6", "intel", "xe-lp"),
    ("8086:9840", "intel", "gen11"), ("1002:6fdf", "amd", "gfx803")])
def test_pci_ids_the_tables_lacked(pci_id: str, vendor: str, arch: str) -> None:
    gpu = complete_machine(Machine(os="linux", gpus=(Gpu(vendor, pci_id=pci_id),))).gpus[0]
    assert gpu.arch == arch


@pytest.mark.parametrize(("name", "arch"), [("NVIDIA GeForce RTX 5090 Laptop GPU", "sm_120"),
                                            ("RTX 4060 Laptop GPU", "sm_89"), ("AMD Radeon RX 7650 GRE", "gfx1102"),
                                            # APUs by the amdgpu APU table's series and amdkfd's gfx targets
                                            ("AMD Ryzen 5 3400G with Radeon Vega Graphics", "gfx902"),
                                            ("AMD Ryzen AI 5 330 w/ Radeon Graphics", "gfx1153"),
                                            ("AMD Ryzen AI 7 PRO 360 w/ Radeon 880M", "gfx1150"),
                                            ("AMD Ryzen AI Max PRO 390", "gfx1151"), ("AMD Ryzen AI 7 450", "gfx1152")])
def test_names_users_type(name: str, arch: str) -> None:
    assert gpu_from_name(name).arch == arch


# Notes a user can act on only
def test_a_cpu_plan_has_no_existence_note() -> None:
    p = plan(Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35"))
    assert p.choice is not None and p.choice.variant == "cpu"
    assert not any("wheels exist is inferred" in n for n in p.notes)


# PCI domains: a Hyper-V VM puts every GPU on a domain of its own
def test_each_gpu_on_its_own_pci_domain_gets_its_own_proc_facts() -> None:
    machine = detect(Probe(root=FIXTURES / "hyperv-a100-l40s"))
    assert [g.name for g in machine.gpus] == ["NVIDIA A100 80GB PCIe", "NVIDIA L40S"]
    assert machine.sources["gpus[0].name"] == "/proc/driver/nvidia/gpus/0001:00:00.0/information"
    assert machine.sources["gpus[1].name"] == "/proc/driver/nvidia/gpus/0002:00:00.0/information"


# Cloud instance types: Azure's NCv2 sizes are P100 (sm_60), not V100
@pytest.mark.parametrize(("size", "gpu"), [("Standard_NC6s_v2", "Tesla P100"), ("Standard_NC24rs_v2", "Tesla P100"),
                                           ("Standard_NC6s_v3", "Tesla V100"), ("Standard_ND40rs_v2", "Tesla V100")])
def test_azure_nc_and_nd_sizes_by_generation(size: str, gpu: str) -> None:
    assert gpu_from_name(size).name == gpu


def test_an_ncv2_size_gets_a_build_with_sm_60_kernels() -> None:
    machine = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", nvidia_driver="570.172.08",
                      gpus=(gpu_from_name("Standard_NC6s_v2"),))
    p = plan(machine, "torch==2.9.1")
    assert p.choice is not None and p.gpu_accelerated
    arch = MATRIX.cuda_arch(f"2.9.1+{p.choice.variant}", "linux_x86_64")
    assert arch is not None and 60 in arch.sm


# AMD desktop parts with an F suffix have no integrated GPU
@pytest.mark.parametrize(("cpu", "sibling"), [
    ("AMD Ryzen 5 7500F 6-Core Processor", "AMD Ryzen 5 7600X 6-Core Processor"), ("Ryzen 5 7400F", "Ryzen 5 7600"),
    ("Ryzen 7 9700F", "Ryzen 7 9700X"), ("Ryzen 7 8700F", "Ryzen 7 8700G")])
def test_an_f_part_is_no_gpu(cpu: str, sibling: str) -> None:
    from torch_install.detectors.names import lookup_gpu_name

    assert lookup_gpu_name(cpu) is None
    assert lookup_gpu_name(sibling) is not None  # a part of the same series with its GPU


# The driver branches: R470 is Kepler's last, R580 the last for Maxwell, Pascal and Volta; newer generations need
# the driver of the first toolkit that targets them. Every GPU of each generation in the names table, both sides.
NVIDIA_GPUS = [(g["name"], round(float(g["compute_capability"]) * 10))
               for g in load_json("detectors/data/gpu-names.json")["gpus"]
               if g["vendor"] == "nvidia" and g.get("compute_capability")]


def _nvidia(name: str, driver: str) -> Machine:
    return Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", nvidia_driver=driver,
                   gpus=(gpu_from_name(name),))


@pytest.mark.parametrize(("name", "sm"), [(n, sm) for n, sm in NVIDIA_GPUS if MATRIX.gpu_driver_last_for(sm)])
def test_a_driver_newer_than_the_generations_last_drives_no_gpu_of_it(name: str, sm: int) -> None:
    last = MATRIX.gpu_driver_last_for(sm)
    assert last is not None
    newer = plan(_nvidia(name, f"{int(last.driver) + 5}.10.01"))
    assert newer.choice is not None and not newer.gpu_accelerated and "driver-too-new" in codes(newer)
    assert f"R{last.driver} is the last driver branch for {last.arch}" in next(
        w.message for w in newer.warnings if w.code == "driver-too-new")
    own = plan(_nvidia(name, f"{last.driver}.82.01"), "torch<2.9")
    assert "driver-too-new" not in codes(own)


@pytest.mark.parametrize(("name", "sm"), [(n, sm) for n, sm in NVIDIA_GPUS if MATRIX.gpu_driver_floor_for(sm)])
def test_a_driver_older_than_the_generations_floor_gets_no_gpu_build(name: str, sm: int) -> None:
    floor = MATRIX.gpu_driver_floor_for(sm)
    assert floor is not None
    older = plan(_nvidia(name, f"{int(floor.driver.split('.')[0]) - 1}.99.01"))
    assert not older.gpu_accelerated and "driver-too-old" in codes(older)


def test_a_gpu_the_driver_no_longer_drives_is_hidden_beside_one_it_drives() -> None:
    machine = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", nvidia_driver="535.54.03",
                      gpus=(gpu_from_name("Tesla K80"), gpu_from_name("Tesla T4")))
    p = plan(machine)
    assert p.choice is not None and p.gpu_accelerated and "driver-too-new" not in codes(p)
    assert any(w.code == "mixed-gpus" and "cannot use Tesla K80" in w.message
               and "driver 535.54.03 no longer drives Tesla K80 (sm_37) (R470 is the last driver branch for Kepler)"
               in w.message for w in p.warnings)


@pytest.mark.parametrize(("name", "driver", "gpu"), [
    ("GeForce RTX 5090", "565.77", False), ("GeForce RTX 5090", "570.86.10", True),  # Blackwell: R570
    ("B300", "570.172.08", False), ("B300", "575.57.08", True),  # Blackwell Ultra (sm_103, CUDA 12.9): R575
    ("GeForce RTX 4090", "515.105.01", False), ("GeForce RTX 4090", "525.60.13", True),  # Ada: R520
    ("GeForce RTX 3090", "450.80.02", False), ("GeForce RTX 3090", "525.60.13", True),  # GA10x: R455
    ("Tesla K80", "470.256.02", True), ("Tesla K80", "535.54.03", False),  # Kepler's last: R470
    ("GeForce GTX 1080", "580.82.07", True), ("GeForce GTX 1080", "590.44.01", False)])  # Pascal's last: R580
def test_the_driver_branches_of_the_generations(name: str, driver: str, gpu: bool) -> None:
    assert plan(_nvidia(name, driver), "torch<2.9").gpu_accelerated is gpu
