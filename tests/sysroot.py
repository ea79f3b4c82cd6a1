"""Build captured-machine trees (the layout ``Probe(root=...)`` reads) in the real /proc and /sys formats.

Tests use ``SysrootBuilder`` for one-off trees; the committed trees under ``tests/fixtures/sysroots/`` were
written with it too (``python tests/sysroot.py`` rewrites them) so a reader can browse real-looking files.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from torch_install.probe import command_slug

FIXTURES = Path(__file__).parent / "fixtures" / "sysroots"

PCI_VGA, PCI_3D, PCI_BRIDGE, PCI_AUDIO, PCI_NIC, PCI_NVME, PCI_HOST = (
    "0x030000", "0x030200", "0x068000", "0x040300", "0x020000", "0x010802", "0x060000")

PROPRIETARY = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  {v}  {date}\n"
               "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
OPEN = ("NVRM version: NVIDIA UNIX Open Kernel Module for {arch}  {v}  Release Build  (dvs-builder@U16-I3-B03-4-3)"
        "  {date}\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n")
SMI_QUERY = ["nvidia-smi", "--query-gpu=index,name,pci.bus_id,pci.device_id,driver_version,uuid,compute_cap",
             "--format=csv,noheader"]
# Plain `nvidia-smi` in WSL: the Linux-side tool's version, the Windows driver, the CUDA version it reports.
WSL_SMI_BANNER = (
    "Sun Nov 24 10:12:41 2024       \n"
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 565.77.01              Driver Version: 566.36         CUDA Version: 12.7     |\n"
    "|-----------------------------------------+------------------------+----------------------+\n"
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
    "|                                         |                        |               MIG M. |\n"
    "|=========================================+========================+======================|\n"
    "|   0  NVIDIA GeForce RTX 3090        On  |   00000000:01:00.0  On |                  N/A |\n"
    "| 30%   38C    P8             25W /  350W |    1203MiB /  24576MiB |      2%      Default |\n"
    "|                                         |                        |                  N/A |\n"
    "+-----------------------------------------+------------------------+----------------------+\n"
    "|   1  NVIDIA GeForce RTX 3060        On  |   00000000:2B:00.0 Off |                  N/A |\n"
    "|  0%   35C    P8              9W /  170W |       0MiB /  12288MiB |      0%      Default |\n"
    "|                                         |                        |                  N/A |\n"
    "+-----------------------------------------+------------------------+----------------------+\n")


def host_facts(system: str = "Linux", machine: str = "x86_64", python: str = "3.12.3", libc: str = "glibc 2.35",
               release: str = "6.8.0-45-generic", free_threaded: bool = False) -> dict[str, str]:
    return {"system": system, "machine": machine, "python_version": python, "python_implementation": "cpython",
            "python_free_threaded": "true" if free_threaded else "false", "libc": libc, "mac_ver": "",
            "win_ver": "", "release": release}


def os_release(distro_id: str, version: str, pretty: str) -> str:
    return f'PRETTY_NAME="{pretty}"\nNAME="{pretty.split()[0]}"\nVERSION_ID="{version}"\nID={distro_id}\n'


class SysrootBuilder:
    """Writes one machine's files under ``root``."""

    def __init__(self, root: str | Path, host: dict[str, str] | None = None, env: dict[str, str] | None = None):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._write_json("_host.json", host or host_facts())
        self._write_json("_env.json", env or {})

    def _write_json(self, name: str, data: dict[str, str]) -> None:
        (self.root / name).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def file(self, path: str, content: str | bytes = "") -> SysrootBuilder:
        target = self.root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return self

    def pci(self, slot: str, vendor: str, device: str, pci_class: str, driver: str | None = None) -> SysrootBuilder:
        base = f"/sys/bus/pci/devices/{slot}"
        self.file(f"{base}/vendor", f"0x{vendor}\n").file(f"{base}/device", f"0x{device}\n")
        self.file(f"{base}/class", f"{pci_class}\n")
        if driver:
            link = self.root / base.lstrip("/") / "driver"
            if link.is_symlink():
                link.unlink()
            os.symlink(f"../../../bus/pci/drivers/{driver}", link)
        return self

    def nvidia_driver(self, version: str, proc: str | None = None, module: bool = True) -> SysrootBuilder:
        if module:
            self.file("/sys/module/nvidia/version", f"{version}\n")
        if proc:
            self.file("/proc/driver/nvidia/version", proc)
        return self

    def nvidia_gpu_info(self, bus: str, model: str, uuid: str, minor: int, irq: int = 0) -> SysrootBuilder:
        text = (f"Model: \t\t {model}\nIRQ:   \t\t {irq or 200 + minor}\nGPU UUID: \t {uuid}\n"
                "Video BIOS: \t 96.00.74.00.0d\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\n"
                f"Bus Location: \t {bus}\nDevice Minor: \t {minor}\nGPU Excluded:\t No\n")
        return self.file(f"/proc/driver/nvidia/gpus/{bus}/information", text)

    def command(self, argv: list[str], stdout: str = "", stderr: str = "", rc: int = 0,
                timeout: bool = False) -> SysrootBuilder:
        base = f"_commands/{command_slug(argv)}"
        if timeout:
            return self.file(f"{base}.timeout", "")
        self.file(base, stdout)
        if stderr:
            self.file(f"{base}.stderr", stderr)
        if rc:
            self.file(f"{base}.rc", f"{rc}\n")
        return self


def _uuid(n: int) -> str:
    return f"GPU-{n:08x}-0000-4000-8000-{n:012x}"


def build_fixtures(where: Path = FIXTURES) -> None:
    """(Re)write every committed fixture tree."""
    # 8x H100 SXM server: open kernel module, NVSwitches (bridge class), ASPEED BMC VGA, Mellanox NICs.
    b = SysrootBuilder(where / "nvidia-8xh100", host_facts(python="3.12.3", libc="glibc 2.35",
                                                               release="5.15.0-125-generic"))
    b.file("/etc/os-release", os_release("ubuntu", "22.04", "Ubuntu 22.04.5 LTS"))
    b.file("/proc/version", "Linux version 5.15.0-125-generic (buildd@lcy02-amd64-093) (gcc (Ubuntu 11.4.0-1ubuntu1~"
           "22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #135-Ubuntu SMP Fri Sep 27 13:53:58 UTC 2024\n")
    b.nvidia_driver("550.54.15", OPEN.format(arch="x86_64", v="550.54.15", date="Tue Mar  5 22:15:33 UTC 2024"))
    b.pci("0000:00:00.0", "8086", "09a2", PCI_HOST)
    b.pci("0000:03:00.0", "1a03", "2000", PCI_VGA, "ast")
    for i, bus in enumerate(("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")):
        slot = f"0000:{bus}:00.0"
        b.pci(slot, "10de", "2330", PCI_3D, "nvidia")
        b.nvidia_gpu_info(slot, "NVIDIA H100 80GB HBM3", _uuid(0x100 + i), i)
        b.pci(f"0000:{bus}:01.0", "15b3", "1021", PCI_NIC, "mlx5_core")
    for i in range(4):
        b.pci(f"0000:{0xc0 + i:02x}:00.0", "10de", "22a3", PCI_BRIDGE)

    # Desktop: RTX 4090 plus the Intel iGPU, proprietary module, free-threaded Python.
    b = SysrootBuilder(where / "rtx4090-intel-igpu", host_facts(python="3.13.1", libc="glibc 2.39",
                                                                release="6.11.5-300.fc41.x86_64",
                                                                free_threaded=True))
    b.file("/etc/os-release", os_release("fedora", "41", "Fedora Linux 41 (Workstation Edition)"))
    b.nvidia_driver("560.35.03", PROPRIETARY.format(v="560.35.03", date="Fri Aug 16 21:39:15 UTC 2024"))
    b.pci("0000:00:02.0", "8086", "a780", PCI_VGA, "i915")
    b.pci("0000:01:00.0", "10de", "2684", PCI_VGA, "nvidia")
    b.pci("0000:01:00.1", "10de", "22ba", PCI_AUDIO, "snd_hda_intel")
    b.nvidia_gpu_info("0000:01:00.0", "NVIDIA GeForce RTX 4090", _uuid(0x4090), 0)

    # RTX 5090: Blackwell consumer, needs the open module.
    b = SysrootBuilder(where / "rtx5090", host_facts(python="3.12.3", libc="glibc 2.39",
                                                     release="6.8.0-60-generic"))
    b.file("/etc/os-release", os_release("ubuntu", "24.04", "Ubuntu 24.04.2 LTS"))
    b.nvidia_driver("575.57.08", OPEN.format(arch="x86_64", v="575.57.08", date="Sat May 24 07:21:18 UTC 2025"))
    b.pci("0000:01:00.0", "10de", "2b85", PCI_VGA, "nvidia")
    b.pci("0000:01:00.1", "10de", "22e8", PCI_AUDIO, "snd_hda_intel")
    b.nvidia_gpu_info("0000:01:00.0", "NVIDIA GeForce RTX 5090", _uuid(0x5090), 0)

    # GTX 1080: Pascal, proprietary module on Debian 12.
    b = SysrootBuilder(where / "gtx1080", host_facts(python="3.11.2", libc="glibc 2.36",
                                                     release="6.1.0-28-amd64"))
    b.file("/etc/os-release", os_release("debian", "12", "Debian GNU/Linux 12 (bookworm)"))
    b.nvidia_driver("535.183.01", PROPRIETARY.format(v="535.183.01", date="Sun May 12 19:39:15 UTC 2024"))
    b.pci("0000:01:00.0", "10de", "1b80", PCI_VGA, "nvidia")
    b.nvidia_gpu_info("0000:01:00.0", "NVIDIA GeForce GTX 1080", _uuid(0x1080), 0)

    # WSL2 with two NVIDIA GPUs: no /sys/module/nvidia, no /proc/driver/nvidia; nvidia-smi from the Windows driver.
    b = SysrootBuilder(where / "wsl2-nvidia", host_facts(python="3.12.3", libc="glibc 2.39",
                                                         release="5.15.167.4-microsoft-standard-WSL2"))
    b.file("/etc/os-release", os_release("ubuntu", "24.04", "Ubuntu 24.04.1 LTS"))
    b.file("/proc/version", "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0,"
           " GNU ld (GNU Binutils) 2.37) #1 SMP Tue Nov 5 00:21:55 UTC 2024\n")
    b.file("/dev/dxg", "").file("/usr/lib/wsl/lib/nvidia-smi", "")
    for lib in ("libcuda.so", "libcuda.so.1", "libcuda.so.1.1", "libnvidia-ml.so.1", "libdxcore.so"):
        b.file(f"/usr/lib/wsl/lib/{lib}", "")  # what the Windows driver maps into WSL
    b.pci("5a0b:00:00.0", "1414", "008e", PCI_3D)
    b.command(SMI_QUERY, f"0, NVIDIA GeForce RTX 3090, 00000000:01:00.0, 0x220410DE, 566.36, {_uuid(0x3090)}, 8.6\n"
                         f"1, NVIDIA GeForce RTX 3060, 00000000:2B:00.0, 0x250310DE, 566.36, {_uuid(0x3060)}, 8.6\n")
    b.command(["nvidia-smi"], WSL_SMI_BANNER)

    # Container without --gpus: /proc/driver/nvidia masked, the host's module version and PCI devices visible.
    b = SysrootBuilder(where / "container-masked-procfs", host_facts(python="3.10.12", libc="glibc 2.35",
                                                                     release="5.15.0-1071-aws"),
                       env={"NVIDIA_VISIBLE_DEVICES": "all", "CUDA_VERSION": "12.8.1",
                            "NVIDIA_REQUIRE_CUDA": "cuda>=12.8 brand=tesla,driver>=470,driver<471"})
    b.file("/etc/os-release", os_release("ubuntu", "22.04", "Ubuntu 22.04.5 LTS"))
    b.file("/.dockerenv", "")
    b.nvidia_driver("570.133.20")
    for i in range(4):
        b.pci(f"0000:{0x10 + i * 0x10:02x}:1c.0", "10de", "20b2", PCI_3D, "nvidia")

    # GH200 (Grace Hopper, aarch64), open module.
    b = SysrootBuilder(where / "gh200", host_facts(machine="aarch64", python="3.12.3", libc="glibc 2.35",
                                                   release="6.8.0-1013-nvidia-64k"))
    b.file("/etc/os-release", os_release("ubuntu", "22.04", "Ubuntu 22.04.4 LTS"))
    b.nvidia_driver("560.35.03", OPEN.format(arch="aarch64", v="560.35.03", date="Fri Aug 16 21:21:48 UTC 2024"))
    b.pci("0009:01:00.0", "10de", "2342", PCI_3D, "nvidia")
    b.pci("0008:00:00.0", "10de", "22b2", "0x060400", "pcieport")
    b.nvidia_gpu_info("0009:01:00.0", "NVIDIA GH200 480GB", _uuid(0x200), 0)

    # Jetson AGX Orin, JetPack 6 (L4T 36.4.3): integrated GPU, not on PCI.
    b = SysrootBuilder(where / "jetson-orin", host_facts(machine="aarch64", python="3.10.12", libc="glibc 2.35",
                                                         release="5.15.148-tegra"))
    b.file("/etc/os-release", os_release("ubuntu", "22.04", "Ubuntu 22.04.5 LTS"))
    b.file("/etc/nv_tegra_release", "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64,"
           " DATE: Wed Jan  8 01:49:37 UTC 2025\n# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\n")
    b.file("/proc/device-tree/model", b"NVIDIA Jetson AGX Orin Developer Kit\x00")
    b.nvidia_driver("540.4.0", OPEN.format(arch="aarch64", v="540.4.0", date="Fri Jan  3 18:25:42 PST 2025"))
    b.pci("0001:01:00.0", "10ec", "8168", PCI_NIC, "r8168")

    # CPU-only servers: x86_64 with a BMC VGA, and AWS Graviton (aarch64).
    b = SysrootBuilder(where / "cpu-x86_64", host_facts(python="3.12.3", libc="glibc 2.39",
                                                        release="6.8.0-51-generic"))
    b.file("/etc/os-release", os_release("ubuntu", "24.04", "Ubuntu 24.04.1 LTS"))
    b.pci("0000:00:00.0", "8086", "2020", PCI_HOST)
    b.pci("0000:02:00.0", "1a03", "2000", PCI_VGA, "ast")
    b.pci("0000:3b:00.0", "8086", "1593", PCI_NIC, "ice")
    b = SysrootBuilder(where / "graviton-aarch64", host_facts(machine="aarch64", python="3.11.6", libc="glibc 2.34",
                                                              release="6.1.115-126.197.amzn2023.aarch64"))
    b.file("/etc/os-release", os_release("amzn", "2023", "Amazon Linux 2023.6.20241121"))
    b.pci("0000:00:04.0", "1d0f", "8061", PCI_NVME, "nvme")
    b.pci("0000:00:05.0", "1d0f", "ec20", PCI_NIC, "ena")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    build_fixtures()
