"""Windows on ARM64 (Snapdragon X): detected as arm64 / windows_arm64, and the resolver says no release wheels."""

from __future__ import annotations

from pathlib import Path

from resolve_cases import TEST_MATRIX, check, plan_for, warning
from torch_install.cli import main
from torch_install.detectors import detect
from torch_install.machine import Machine
from torch_install.probe import Probe
from torch_install.resolver import resolve
from torch_install.resolver.plan import Request

SNAPDRAGON = Path(__file__).parent / "fixtures" / "sysroots" / "windows-arm64-snapdragon"


def test_snapdragon_capture_is_windows_arm64_without_a_usable_gpu() -> None:
    m = detect(Probe(SNAPDRAGON))
    assert (m.os, m.arch, m.platform, m.os_version, m.python) == ("windows", "arm64", "windows_arm64",
                                                                   "10.0.26100", "3.12")
    assert m.sources["arch"] == "platform.machine() = 'ARM64'"
    assert m.gpus == ()  # the Adreno GPU is an ACPI device (ACPI\QCOM0C36…), not a PCI adapter of a known vendor


def test_resolver_says_windows_arm64_has_no_release_wheels_and_that_nightly_is_unverified() -> None:
    plan = plan_for(detect(Probe(SNAPDRAGON)))
    check(plan, None, None, {"platform-unsupported"})
    message = warning(plan, "platform-unsupported")
    assert message.startswith("Windows on ARM64 (windows_arm64): PyTorch publishes no Windows ARM64 release wheels")
    assert "nightly channel only (unverified: release availability not checked)" in message


def test_once_the_data_lists_windows_arm64_wheels_they_are_chosen() -> None:
    matrix = TEST_MATRIX.with_variant("2.15.0", "windows_arm64", "cpu")  # e.g. learnt from a live index
    plan = resolve(Machine(os="windows", arch="arm64", python="3.12"), Request(packages=("torch",)), matrix)
    check(plan, "2.15.0", "cpu", set())


def test_plan_command_on_the_capture_fails_with_the_warning(capsys) -> None:
    code = main(["plan", "--sysroot", str(SNAPDRAGON)])
    out, err = capsys.readouterr()
    assert code == 4  # no build fits
    assert "torch-install: warning: [platform-unsupported] Windows on ARM64 (windows_arm64)" in err  # text: stderr
    assert "windows arm64" in out and "[platform-unsupported]" not in out
