"""Captures leave no MAC address and no user name from a home path behind, in contents or in stored paths."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from sysroot import SysrootBuilder, host_facts
from torch_install.capture import Redactor, capture_members, open_sysroot, write_capture
from torch_install.probe import Probe

ETH_MAC = "3c:ec:ef:1a:2b:3c"
IB_ADDRESS = "00:00:10:29:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:6b:7a:5e"  # 20-byte InfiniBand address
PYVENV_CFG = ("home = /home/alice/.pyenv/versions/3.12.3/bin\n"
              "include-system-site-packages = false\n"
              "version = 3.12.3\n"
              "executable = /home/alice/.pyenv/versions/3.12.3/bin/python3.12\n"
              "command = /home/alice/.pyenv/versions/3.12.3/bin/python3.12 -m venv /home/alice/.venv\n")
IP_LINK = ("lo               UNKNOWN        00:00:00:00:00:00 <LOOPBACK,UP,LOWER_UP>\n"
           f"enp65s0f0        UP             {ETH_MAC.upper()} <BROADCAST,MULTICAST,UP,LOWER_UP>\n"
           f"ibp193s0         UP             {IB_ADDRESS} <BROADCAST,MULTICAST,UP,LOWER_UP>\n")
DRIVER = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:50 UTC 2024\n"
          "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
PERSONAL = ("alice", "bob", "Carol Diaz", ETH_MAC, ETH_MAC.upper(), IB_ADDRESS, "3C-EC-EF-1A-2B-3C")


def _read_everything(root: Path) -> Probe:
    b = SysrootBuilder(root, host_facts(system="Linux"), env={
        "HOME": "/home/alice", "VIRTUAL_ENV": "/home/alice/.venv", "CONDA_PREFIX": "/Users/bob/miniforge3",
        "USERPROFILE": "C:\\Users\\Carol Diaz", "WSLENV": "USERPROFILE/p", "NETWORK_MAC": "3C-EC-EF-1A-2B-3C"})
    b.file("/sys/class/net/enp65s0f0/address", ETH_MAC + "\n").file("/sys/class/net/ibp193s0/address",
                                                                    IB_ADDRESS + "\n")
    b.file("/home/alice/.venv/pyvenv.cfg", PYVENV_CFG).file("/proc/driver/nvidia/version", DRIVER)
    b.file("/sys/bus/pci/devices/0000:41:00.0/vendor", "0x10de\n")
    b.command(["ip", "-br", "link"], IP_LINK)
    probe = Probe(root=root)
    for name in ("HOME", "VIRTUAL_ENV", "CONDA_PREFIX", "USERPROFILE", "WSLENV", "NETWORK_MAC"):
        assert probe.env(name)
    for path in ("/sys/class/net/enp65s0f0/address", "/sys/class/net/ibp193s0/address", "/proc/driver/nvidia/version",
                 "/home/alice/.venv/pyvenv.cfg", "/sys/bus/pci/devices/0000:41:00.0/vendor"):
        assert probe.read_text(path) is not None, path
    assert probe.listdir("/home/alice/.venv") == ["pyvenv.cfg"]
    assert probe.run(["ip", "-br", "link"]).ok
    return probe


def test_mac_addresses_and_home_user_names_are_redacted_everywhere(tmp_path: Path) -> None:
    members = capture_members(_read_everything(tmp_path / "tree"), Redactor("gpu-node-07"))
    text = "\n".join([*members, *(v.decode() if isinstance(v, bytes) else v or "" for v in members.values())])
    for value in PERSONAL:
        assert value not in text and value.lower() not in text.lower(), value

    env = json.loads(members["_env.json"])
    assert env["HOME"] == "/home/user1" and env["VIRTUAL_ENV"] == "/home/user1/.venv"
    assert env["CONDA_PREFIX"] == "/Users/user2/miniforge3" and env["USERPROFILE"] == "C:\\Users\\user3"
    assert env["WSLENV"] == "USERPROFILE/p"
    assert env["NETWORK_MAC"] == "02-00-00-00-00-01"  # same address, same stand-in, its own separator
    assert members["sys/class/net/enp65s0f0/address"] == b"02:00:00:00:00:01\n"
    assert members["sys/class/net/ibp193s0/address"] == b"02" + b":00" * 17 + b":00:02\n"  # length kept
    assert members["home/user1/.venv"] is None and "home/alice/.venv" not in members
    assert members["home/user1/.venv/pyvenv.cfg"].decode() == PYVENV_CFG.replace("/alice/", "/user1/")
    assert members["_commands/ip_-br_link"].decode().splitlines() == [
        "lo               UNKNOWN        00:00:00:00:00:00 <LOOPBACK,UP,LOWER_UP>",  # all zeros: nobody's
        "enp65s0f0        UP             02:00:00:00:00:01 <BROADCAST,MULTICAST,UP,LOWER_UP>",
        "ibp193s0         UP             02" + ":00" * 17 + ":00:02 <BROADCAST,MULTICAST,UP,LOWER_UP>"]
    # PCI addresses, times and versions are not hardware addresses
    assert members["proc/driver/nvidia/version"].decode() == DRIVER
    assert "sys/bus/pci/devices/0000:41:00.0/vendor" in members


def test_a_redacted_capture_replays_its_home_paths_consistently(tmp_path: Path) -> None:
    archive = tmp_path / "capture.tar.gz"
    write_capture(_read_everything(tmp_path / "tree"), archive)
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert "home/user1/.venv/pyvenv.cfg" in names and not any("alice" in name for name in names)
    probe = open_sysroot(str(archive))
    home = probe.env("HOME")
    assert home == "/home/user1"
    assert probe.read_text(f"{home}/.venv/pyvenv.cfg").startswith("home = /home/user1/.pyenv/")


def test_shared_homes_and_look_alikes_are_kept() -> None:
    redactor = Redactor()
    for text in ("/Users/Shared/Library", "C:\\Users\\Public\\Documents", "0000:41:00.0", "22:23:50",
                 "fe80::3eec:efff:fe1a:2b3c", "/opt/rocm-6.4.1/lib", "2024-03-05"):
        assert redactor.redact_text(text) == text


def test_a_host_named_like_a_distribution_leaves_os_release_alone() -> None:
    from torch_install.capture import Redactor

    text = 'ID=ubuntu\nPRETTY_NAME="Ubuntu 22.04.5 LTS"\n'
    assert Redactor("ubuntu").redact_text(text) == text


def test_the_host_name_is_redacted_as_a_whole_word_only() -> None:
    from torch_install.capture import Redactor

    redactor = Redactor("node7")
    assert redactor.redact_text("node7 up; node7.cluster; node77; xnode7") == (
        "redacted-host up; redacted-host.cluster; node77; xnode7")


def test_the_kernel_builder_in_proc_version_is_redacted() -> None:
    from torch_install.capture import Redactor

    line = "Linux version 6.8.0-custom (alice@workstation) (gcc (GCC) 13.2.0, GNU ld 2.42) #1 SMP\n"
    assert Redactor(None).redact_text(line) == ("Linux version 6.8.0-custom (user@redacted-host) (gcc (GCC) 13.2.0, "
                                                "GNU ld 2.42) #1 SMP\n")


def test_credentials_and_tokens_in_what_was_read_are_masked() -> None:
    """A command's output or an environment value holding a URL's credentials or a token (a proxy setting, a pip
    mirror in a conda activation script) is masked as every other output masks it."""
    redactor = Redactor("node")
    text = (b"PIP_INDEX_URL=https://alice@example.com:t0k@mirror.invalid/simple\n"
            b'{"name": "HF_TOKEN", "value": "hf_secret"}\nhf_token=abc\n')
    assert redactor.redact_bytes(text) == (b"PIP_INDEX_URL=https://***@mirror.invalid/simple\n"
                                           b'{"name": "HF_TOKEN", "value": "***"}\nhf_token=***\n')
    assert redactor.redact_bytes(b"\xff\xfe binary \x00") == b"\xff\xfe binary \x00"  # bytes it cannot decode kept
