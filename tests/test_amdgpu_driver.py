"""AMD's DKMS amdgpu kernel driver: /sys/module/amdgpu/version, the profile field, the DKMS → ROCm table and the
ROCm kernel-driver window counted from it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from resolve_cases import LINUX, amd, check, plan_for, warning
from torch_install.cli import main
from torch_install.detectors import detect
from torch_install.detectors.amd import parse_amdgpu_module_version
from torch_install.detectors.unknown import Unknown
from torch_install.drivers import rocm_for_amdgpu_driver
from torch_install.errors import InputError
from torch_install.machine import Machine, machine_from_dict
from torch_install.probe import Probe

SYSROOTS = Path(__file__).parent / "fixtures" / "sysroots"
RX7900XTX = amd("AMD Radeon RX 7900 XTX", "gfx1100")
MI210 = amd("AMD Instinct MI210", "gfx90a")


def test_dkms_driver_is_read_with_its_source() -> None:
    m = detect(Probe(SYSROOTS / "mi300x"))  # ROCm 6.4.1 user space with its DKMS driver 6.12.12
    assert (m.amdgpu_driver, m.sources["amdgpu_driver"]) == ("6.12.12", "/sys/module/amdgpu/version")
    assert m.to_dict()["amdgpu_driver"] == "6.12.12"


def test_in_tree_driver_has_no_module_version_so_the_field_stays_unknown() -> None:
    m = detect(Probe(SYSROOTS / "rx7900xtx"))
    assert m.amdgpu_driver is None and "amdgpu_driver" not in m.to_dict()


def test_module_version_is_not_read_without_an_amd_gpu(tmp_path: Path) -> None:
    root = tmp_path / "cpu"
    shutil.copytree(SYSROOTS / "cpu-x86_64", root, symlinks=True)
    (root / "sys/module/amdgpu").mkdir(parents=True)
    (root / "sys/module/amdgpu/version").write_text("6.10.5\n")
    assert detect(Probe(root)).amdgpu_driver is None


def test_garbled_module_version_is_a_note(tmp_path: Path) -> None:
    root = tmp_path / "mi300x"
    shutil.copytree(SYSROOTS / "mi300x", root, symlinks=True)
    (root / "sys/module/amdgpu/version").write_text("\x00\x01garbage\n")
    m = detect(Probe(root))
    assert m.amdgpu_driver is None
    assert any(n.startswith("/sys/module/amdgpu/version holds") for n in m.notes)


@pytest.mark.parametrize(("text", "expected"), [("6.10.5\n", "6.10.5"), ("6.12.12", "6.12.12"),
                                                 ("6.14.14\n\n", "6.14.14")])
def test_parse_module_version(text: str, expected: str) -> None:
    assert parse_amdgpu_module_version(text) == expected


@pytest.mark.parametrize("text", ["", "\n", "6", "v6.10.5", "6.10.5-2084815.22.04", None])
def test_parse_module_version_refuses_other_text(text: str | None) -> None:
    assert isinstance(parse_amdgpu_module_version(text), Unknown)


@pytest.mark.parametrize(("driver", "rocm"), [("6.2.4", "5.7"), ("6.3.6", "6.0"), ("6.7.0", "6.1"), ("6.8.5", "6.2"),
                                              ("6.10.5", "6.3"), ("6.12.12", "6.4"), ("6.14.14", "7.0")])
def test_dkms_driver_to_rocm_series(driver: str, rocm: str) -> None:
    found = rocm_for_amdgpu_driver(driver)
    assert found is not None and (found.rocm, found.confidence) == (rocm, "secondary")


@pytest.mark.parametrize("driver", ["6.16.6", "5.18.13", "6", "abc", "", None])
def test_unknown_or_malformed_driver_has_no_rocm(driver: str | None) -> None:
    assert rocm_for_amdgpu_driver(driver) is None


def test_profile_field_is_validated() -> None:
    assert machine_from_dict({"amdgpu_driver": "6.10.5"}).amdgpu_driver == "6.10.5"
    with pytest.raises(InputError, match=r"amdgpu_driver: 'six' is not a version"):
        machine_from_dict({"amdgpu_driver": "six"})
    with pytest.raises(InputError, match=r"amdgpu_driver: expected a string"):
        machine_from_dict({"amdgpu_driver": 6.10})


def test_detect_shows_the_driver_and_its_rocm(capsys) -> None:
    assert main(["detect", "-v", "--sysroot", str(SYSROOTS / "mi300x")]) == 0
    out = capsys.readouterr().out
    assert "amdgpu kernel driver 6.12.12 (ROCm 6.4, secondary)\n    amdgpu_driver: /sys/module/amdgpu/version" in out


# -- the ROCm kernel-driver window counts from the kernel driver when its ROCm release is known --------------------

def test_window_uses_the_kernel_drivers_rocm_over_the_user_space() -> None:
    # user space 7.2 would be inside the window of rocm7.14; the DKMS driver 6.10.5 (ROCm 6.3) is not
    machine = Machine(**LINUX, rocm="7.2.0", amdgpu_driver="6.10.5",
                      sources={"amdgpu_driver": "/sys/module/amdgpu/version"}, gpus=(RX7900XTX,))
    plan = plan_for(machine)
    check(plan, "2.14.1", "rocm7.14", {"no-gpu-variant-for-version", "rocm-driver-window"})
    message = warning(plan, "rocm-driver-window")
    assert message.startswith("amdgpu kernel driver 6.10.5 (/sys/module/amdgpu/version), which ships with ROCm 6.3 "
                              "(secondary), is 5 ROCm releases from 2.14.1+rocm7.14")
    assert "(torch==2.10.0 --variant rocm7.0)" in message  # 7.0 is two releases from the driver's 6.3


def test_kernel_driver_inside_the_window_silences_an_old_user_space() -> None:
    machine = Machine(**LINUX, rocm="6.2.4", amdgpu_driver="6.14.14", gpus=(RX7900XTX,))  # ROCm 7.0 driver
    check(plan_for(machine, "torch<2.14"), "2.13.0", "rocm7.2", set())
    check(plan_for(Machine(**LINUX, rocm="6.2.4", gpus=(RX7900XTX,)), "torch<2.14"), "2.13.0", "rocm7.2",
          {"rocm-driver-window"})


def test_driver_missing_from_the_table_falls_back_to_user_space_and_says_so() -> None:
    machine = Machine(**LINUX, rocm="6.2.4", amdgpu_driver="6.16.6", gpus=(MI210,))
    plan = plan_for(machine)
    check(plan, "2.14.1", "rocm7.14", {"no-gpu-variant-for-version", "rocm-driver-window"})
    assert warning(plan, "rocm-driver-window").startswith("ROCm user space 6.2.4 on this machine is 6 ROCm releases")
    assert any(n.startswith("amdgpu kernel driver 6.16.6: the ROCm release it ships with is not in the driver table")
               for n in plan.notes)
