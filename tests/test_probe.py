"""The probe: captured-tree replay, access recording for captures, real commands with timeouts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sysroot import SysrootBuilder, host_facts
from torch_install.probe import Probe, command_slug


def test_command_slug() -> None:
    assert command_slug(["/usr/lib/wsl/lib/nvidia-smi", "--query-gpu=name,uuid", "--format=csv,noheader"]) == \
        "nvidia-smi_--query-gpu=name,uuid_--format=csv,noheader"
    # a Windows path names the same captured file whichever OS replays it
    assert command_slug(["C:\\Windows\\System32\\nvidia-smi.exe", "-L"]) == "nvidia-smi_-L"


def test_replay_of_a_captured_tree(tmp_path: Path) -> None:
    b = SysrootBuilder(tmp_path, host_facts(system="Linux"), env={"CUDA_VISIBLE_DEVICES": "0"})
    b.file("/etc/os-release", "ID=debian\n").command(["tool", "-x"], "out\n", "warn\n", rc=3)
    b.command(["slow"], timeout=True)
    probe = Probe(root=tmp_path)
    assert probe.read_text("/etc/os-release") == "ID=debian\n"
    assert probe.read_text("/etc/missing") is None
    assert probe.env("CUDA_VISIBLE_DEVICES") == "0" and probe.env("HOME") is None
    assert probe.host("system") == "Linux"
    result = probe.run(["tool", "-x"])
    assert (result.returncode, result.stdout, result.stderr, result.ok) == (3, "out\n", "warn\n", False)
    assert probe.run(["slow"]).error.startswith("timed out")
    assert probe.run(["absent"]).error == "not found"


def test_access_is_recorded_for_captures(tmp_path: Path) -> None:
    b = SysrootBuilder(tmp_path)
    b.file("/dev/dxg").file("/sys/x/vendor", "0x10de\n")
    probe = Probe(root=tmp_path)
    probe.exists("/dev/dxg")
    probe.listdir("/sys/x")
    probe.read_text("/sys/x/vendor")
    probe.host("machine")
    assert probe.accessed.files == {"/dev/dxg": b"", "/sys/x/vendor": b"0x10de\n"}
    assert probe.accessed.dirs == {"/sys/x"}
    assert probe.accessed.host == {"machine": "x86_64"}


def test_read_limit(tmp_path: Path) -> None:
    SysrootBuilder(tmp_path).file("/big", "x" * 1000)
    assert len(Probe(root=tmp_path).read_bytes("/big", limit=10)) == 10


@pytest.mark.slow
def test_real_command_success_and_missing(tmp_path: Path) -> None:
    probe = Probe(env={"PATH": str(Path(sys.executable).parent)})
    result = probe.run([sys.executable, "-c", "import sys; print('hi'); sys.exit(3)"])
    assert (result.returncode, result.stdout.strip(), result.error) == (3, "hi", None)
    assert probe.run(["no-such-command-here"]).error == "not found"


@pytest.mark.slow
def test_hung_command_and_its_children_are_killed(tmp_path: Path) -> None:
    marker = tmp_path / "still-running"
    script = tmp_path / "hang"
    script.write_text(f"#!/bin/sh\n/bin/sleep 2 && echo late > {marker} &\n/bin/sleep 60\n")
    script.chmod(0o755)
    result = Probe(env={"PATH": str(tmp_path)}, timeout=0.3).run(["hang"])
    assert result.error == "timed out after 0.3 s and was killed" and result.returncode is None
    import time

    time.sleep(2.5)  # the background child would have written the marker by now
    assert not marker.exists()


def test_the_live_host_facts_are_what_platform_answers() -> None:
    """system, machine, release and the Python version come from os.uname()/sys.version, libc from os.confstr,
    without importing platform: the same answers platform gives on this host."""
    import platform

    probe = Probe()
    name, version = platform.libc_ver()
    assert probe.host("system") == platform.system()
    assert probe.host("machine") == platform.machine()
    assert probe.host("release") == platform.release()
    assert probe.host("python_version") == platform.python_version()
    assert probe.host("libc") == f"{name} {version}".strip()
