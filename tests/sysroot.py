"""Build captured-machine trees (the layout ``Probe(root=...)`` reads) in the real /proc and /sys formats.

Tests use ``SysrootBuilder`` for one-off trees; every committed tree under ``tests/fixtures/sysroots/`` is
written by ``build_fixtures`` below (``python tests/sysroot.py`` rewrites them all, and a test checks that the
committed trees are exactly what it writes). The machines are composed from public formats (kernel sysfs/procfs,
KFD topology, nvidia-smi, PowerShell CIM, macOS SystemVersion.plist) with values of real parts; none is a verbatim
capture of one machine.
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
        target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))  # line ends kept
        return self

    def pci(self, slot: str, vendor: str, device: str, pci_class: str, driver: str | None = None,
            depth: int = 3) -> SysrootBuilder:
        """A PCI function; ``driver`` the bound kernel driver, whose link climbs ``depth`` directories (3 for a
        device on a root port, 4 behind a bridge) to /sys, as sysfs writes it."""
        base = f"/sys/bus/pci/devices/{slot}"
        self.file(f"{base}/vendor", f"0x{vendor}\n").file(f"{base}/device", f"0x{device}\n")
        self.file(f"{base}/class", f"{pci_class}\n")
        if driver:
            link = self.root / base.lstrip("/") / "driver"
            if link.is_symlink():
                link.unlink()
            os.symlink(f"{'../' * depth}bus/pci/drivers/{driver}", link)
        return self

    def kfd_cpu_node(self, node: int, cores: int, core_base: int, io_links: int) -> SysrootBuilder:
        """A CPU node of the KFD topology (``/sys/class/kfd/kfd/topology/nodes/N``)."""
        values = {"cpu_cores_count": cores, "mem_banks_count": 1, "io_links_count": io_links,
                  "cpu_core_id_base": core_base}
        props = "".join(f"{key} {values.get(key, 0)}\n" for key in _KFD_CPU_FIELDS) + "max_engine_clk_ccompute 3700\n"
        base = f"/sys/class/kfd/kfd/topology/nodes/{node}"
        return self.file(f"{base}/gpu_id", "0\n").file(f"{base}/name", "\n").file(f"{base}/properties", props)

    def kfd_gpu_node(self, node: int, gpu_id: int, **values: int | str) -> SysrootBuilder:
        """A GPU node of the KFD topology: every field of the amdkfd properties file in its order, the given
        ones set (``gfx_target_version`` 110000 for gfx1100, ``device_id``, ``location_id`` = bus << 8 | devfn)."""
        props = "".join(f"{key} {values.get(key, 0)}\n" for key in _KFD_GPU_FIELDS)
        base = f"/sys/class/kfd/kfd/topology/nodes/{node}"
        return self.file(f"{base}/gpu_id", f"{gpu_id}\n").file(f"{base}/name", "ip discovery\n").file(
            f"{base}/properties", props)

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


# The amdkfd topology properties files, field order as the kernel writes them (kfd_topology.c).
_KFD_CPU_FIELDS = ("cpu_cores_count", "simd_count", "mem_banks_count", "caches_count", "io_links_count",
                   "p2p_links_count", "cpu_core_id_base", "simd_id_base", "max_waves_per_simd", "lds_size_in_kb",
                   "gds_size_in_kb", "num_gws", "wave_front_size", "array_count", "simd_arrays_per_engine",
                   "cu_per_simd_array", "simd_per_cu", "max_slots_scratch_cu", "gfx_target_version", "vendor_id",
                   "device_id", "location_id", "domain", "drm_render_minor", "hive_id", "num_sdma_engines",
                   "num_sdma_xgmi_engines", "num_sdma_queues_per_engine", "num_cp_queues")
_KFD_GPU_FIELDS = (*_KFD_CPU_FIELDS, "max_engine_clk_fcompute", "local_mem_size", "fw_version", "capability",
                   "debug_prop", "sdma_fw_version", "unique_id", "num_xcc", "max_engine_clk_ccompute")
AMD = 4098  # KFD vendor_id: 0x1002
# What amdkfd reports alike for the RDNA GPUs and APUs of the fixtures (one SDMA pair, wave32, 64 kB LDS)
_RDNA_NODE: dict[str, int | str] = dict(mem_banks_count=1, io_links_count=1, max_waves_per_simd=16, lds_size_in_kb=64,
                                        num_gws=64, wave_front_size=32, simd_per_cu=2, max_slots_scratch_cu=32,
                                        vendor_id=AMD, num_sdma_engines=2, num_cp_queues=8, capability=671588992,
                                        debug_prop=1495, num_xcc=1)
# PowerShell's ConvertTo-Json of Win32_VideoController rows, as Windows PowerShell 5.1 indents it.
_CIM_ROW = ('    {{\n        "Name":  "{name}",\n        "PNPDeviceID":  "{pnp}",\n'
            '        "DriverVersion":  "{driver}",\n        "Status":  "{status}",\n'
            '        "ConfigManagerErrorCode":  {code}\n    }}')


def cim_adapters(rows: list[dict[str, str | int]]) -> str:
    """``Get-CimInstance Win32_VideoController | … | ConvertTo-Json``: one object alone, a list for several, with
    the CRLF line ends PowerShell writes on Windows."""
    objects = [_CIM_ROW.format(**row) for row in rows]
    if len(objects) == 1:
        text = "\n".join(line[4:] for line in objects[0].splitlines()) + "\n"
    else:
        text = "[\n" + ",\n".join(objects) + "\n]\n"
    return text.replace("\n", "\r\n")


def _jetson(root: Path, python: str, libc: str, release: str, ubuntu: tuple[str, str], tegra_release: str,
            model: str) -> SysrootBuilder:
    """A Jetson: Ubuntu on aarch64 with a tegra kernel, its L4T release file and its board's device-tree model."""
    b = SysrootBuilder(root, host_facts(machine="aarch64", python=python, libc=libc, release=release))
    b.file("/etc/os-release", os_release("ubuntu", *ubuntu))
    b.file("/etc/nv_tegra_release", tegra_release)
    b.file("/proc/device-tree/model", model.encode() + b"\x00")
    return b


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
    b = _jetson(where / "jetson-orin", "3.10.12", "glibc 2.35", "5.15.148-tegra", ("22.04", "Ubuntu 22.04.5 LTS"),
                "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 "
                "01:49:37 UTC 2025\n# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\n",
                "NVIDIA Jetson AGX Orin Developer Kit")
    b.nvidia_driver("540.4.0", OPEN.format(arch="aarch64", v="540.4.0", date="Fri Jan  3 18:25:42 PST 2025"))
    b.pci("0001:01:00.0", "10ec", "8168", PCI_NIC, "r8168")
    # Jetson Xavier NX, JetPack 5.1.2 (L4T 35.4.1, Ubuntu 20.04): the JetPack 5 index's Python 3.8.
    _jetson(where / "jetson-xavier-r35", "3.8.10", "glibc 2.31", "5.10.120-tegra", ("20.04", "Ubuntu 20.04.6 LTS"),
            "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, DATE: Tue Aug  1 "
            "19:57:35 UTC 2023\n", "NVIDIA Jetson Xavier NX Developer Kit")
    # Jetson AGX Thor, JetPack 7.0 (L4T 38.2.0, Ubuntu 24.04): the SBSA CUDA stack, PyTorch's aarch64 builds.
    b = _jetson(where / "jetson-thor-r38", "3.12.3", "glibc 2.39", "6.8.12-tegra", ("24.04", "Ubuntu 24.04.3 LTS"),
                "# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64, DATE: Fri Aug 22 "
                "00:55:42 UTC 2025\n# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\n",
                "NVIDIA Jetson AGX Thor Developer Kit")
    b.nvidia_driver("580.00", OPEN.format(arch="aarch64", v="580.00", date="Thu Aug 21 17:10:56 PDT 2025"))

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
    # Hyper-V VM (Azure-style vPCI, or on-premises DDA): every assigned device on a PCI domain of its own, each
    # GPU at bus 00 device 00 of its domain; a Microsoft synthetic video adapter, no bridges.
    b = SysrootBuilder(where / "hyperv-a100-l40s", host_facts(python="3.12.3", libc="glibc 2.35",
                                                              release="6.5.0-1025-azure"))
    b.file("/etc/os-release", os_release("ubuntu", "22.04", "Ubuntu 22.04.4 LTS"))
    b.nvidia_driver("570.124.06", OPEN.format(arch="x86_64", v="570.124.06", date="Wed Feb 26 01:22:53 UTC 2025"))
    b.pci("0001:00:00.0", "10de", "20b5", PCI_3D, "nvidia")
    b.nvidia_gpu_info("0001:00:00.0", "NVIDIA A100 80GB PCIe", _uuid(0xa100), 0)
    b.pci("0002:00:00.0", "10de", "26b9", PCI_3D, "nvidia")
    b.nvidia_gpu_info("0002:00:00.0", "NVIDIA L40S", _uuid(0x40), 1)
    b.pci("c05b:00:00.0", "15b3", "101e", PCI_NIC, "mlx5_core")

    build_amd_fixtures(where)
    build_intel_fixtures(where)
    build_other_os_fixtures(where)


def _mi300x_node(i: int) -> dict[str, int | str]:
    """One MI300X (gfx942, 8 XCDs) of an 8-GPU XGMI hive, as amdkfd reports it."""
    bus = (0x05, 0x26, 0x46, 0x65, 0x85, 0xa6, 0xc6, 0xe5)[i]
    return {"simd_count": 1216, "mem_banks_count": 1, "caches_count": 626, "io_links_count": 1, "p2p_links_count": 7,
            "simd_id_base": 2147487744 + 4096 * i, "max_waves_per_simd": 8, "lds_size_in_kb": 64, "num_gws": 64,
            "wave_front_size": 64, "array_count": 32, "simd_arrays_per_engine": 1, "cu_per_simd_array": 10,
            "simd_per_cu": 4, "max_slots_scratch_cu": 32, "gfx_target_version": 90402, "vendor_id": AMD,
            "device_id": 0x74a1, "location_id": bus << 8, "drm_render_minor": 128 + 8 * i,
            "hive_id": "0x8a5b0bf1c4d1e2a3", "num_sdma_engines": 2, "num_sdma_xgmi_engines": 14,
            "num_sdma_queues_per_engine": 8, "num_cp_queues": 24, "max_engine_clk_fcompute": 2100, "fw_version": 163,
            "capability": 746549888, "debug_prop": 1495, "sdma_fw_version": 19, "unique_id": 7418420000000000000 + i,
            "num_xcc": 8, "max_engine_clk_ccompute": 3250}


def build_amd_fixtures(where: Path) -> None:
    # 8x Instinct MI300X (gfx942) behind PCIe switches, ROCm 6.4.1, AMD's DKMS amdgpu driver 6.12.12.
    b = SysrootBuilder(where / "mi300x", host_facts(python="3.12.4", libc="glibc 2.35", release="6.8.0-51-generic"))
    b.file("/opt/rocm/.info/version", "6.4.1-120\n").file("/sys/module/amdgpu/version", "6.12.12\n")
    b.pci("0000:00:00.0", "1022", "14a4", PCI_HOST)
    b.pci("0000:0d:00.0", "15b3", "1021", PCI_NIC, "mlx5_core", depth=4)
    b.kfd_cpu_node(0, 96, 0, 8).kfd_cpu_node(1, 96, 96, 8)
    for i in range(8):
        node = _mi300x_node(i)
        b.pci(f"0000:{int(node['location_id']) >> 8:02x}:00.0", "1002", "74a1", "0x120000", "amdgpu", depth=4)
        b.kfd_gpu_node(2 + i, 10000 + 1111 * i, **node)

    # Desktop: Radeon RX 7900 XTX (gfx1100) and the Ryzen 7000 iGPU (Raphael, gfx1036); no ROCm installed.
    b = SysrootBuilder(where / "rx7900xtx", host_facts(python="3.12.4", libc="glibc 2.35", release="6.8.0-51-generic"))
    b.pci("0000:03:00.0", "1002", "744c", PCI_VGA, "amdgpu", depth=4)
    b.pci("0000:13:00.0", "1002", "164e", PCI_VGA, "amdgpu", depth=4)
    b.kfd_cpu_node(0, 16, 0, 2)
    b.kfd_gpu_node(1, 4672, **_RDNA_NODE, simd_count=192, caches_count=206, simd_id_base=2147488032, array_count=12,
                   simd_arrays_per_engine=2, cu_per_simd_array=8, gfx_target_version=110000, device_id=0x744c,
                   location_id=0x0300, drm_render_minor=128, num_sdma_queues_per_engine=6,
                   max_engine_clk_fcompute=2482, fw_version=2140, sdma_fw_version=20, unique_id=11673270660693242239,
                   max_engine_clk_ccompute=2400)
    b.kfd_gpu_node(2, 53810, **_RDNA_NODE, simd_count=4, caches_count=6, simd_id_base=2147488048, array_count=1,
                   simd_arrays_per_engine=1, cu_per_simd_array=2, gfx_target_version=100306, device_id=0x164e,
                   location_id=0x1300, drm_render_minor=129, num_sdma_queues_per_engine=2,
                   max_engine_clk_fcompute=2200, fw_version=111, sdma_fw_version=9, unique_id=0,
                   max_engine_clk_ccompute=2400)

    # Ryzen AI Max (Strix Halo, gfx1151) APU, ROCm 7.1.1 under $ROCM_PATH.
    b = SysrootBuilder(where / "strix-halo", host_facts(python="3.12.4", libc="glibc 2.35",
                                                        release="6.14.0-29-generic"),
                       env={"ROCM_PATH": "/opt/rocm-7.1.1"})
    b.file("/opt/rocm-7.1.1/.info/version", "7.1.1-38\n")
    b.pci("0000:c5:00.0", "1002", "1586", PCI_VGA, "amdgpu", depth=4)
    b.kfd_cpu_node(0, 32, 0, 1)
    b.kfd_gpu_node(1, 21781, **_RDNA_NODE, simd_count=80, caches_count=58, simd_id_base=2147487744, array_count=4,
                   simd_arrays_per_engine=2, cu_per_simd_array=5, gfx_target_version=110501, device_id=0x1586,
                   location_id=0xc500, drm_render_minor=128, num_sdma_queues_per_engine=6,
                   max_engine_clk_fcompute=2900, fw_version=43, sdma_fw_version=14, unique_id=0,
                   max_engine_clk_ccompute=5100)


def build_intel_fixtures(where: Path) -> None:
    # Arc A770 (Alchemist, 56a0) next to the Raptor Lake UHD 770 iGPU, both on i915.
    b = SysrootBuilder(where / "arc-a770", host_facts(python="3.12.4", libc="glibc 2.35", release="6.8.0-51-generic"))
    b.pci("0000:00:02.0", "8086", "a780", PCI_VGA, "i915", depth=4)
    b.pci("0000:00:1f.3", "8086", "7a50", PCI_AUDIO, "snd_hda_intel", depth=4)
    b.pci("0000:03:00.0", "8086", "56a0", PCI_VGA, "i915", depth=4)

    # A laptop's UHD Graphics 620 (Kaby Lake, gen9) only.
    b = SysrootBuilder(where / "uhd620", host_facts(python="3.12.4", libc="glibc 2.35", release="6.8.0-51-generic"))
    b.pci("0000:00:02.0", "8086", "5917", PCI_VGA, "i915", depth=4)


def build_other_os_fixtures(where: Path) -> None:
    # MacBook with an M2 on macOS 14.5; Python built against an old SDK reports mac_ver 10.16.
    b = SysrootBuilder(where / "macos-m2", {**host_facts(system="Darwin", machine="arm64", python="3.12.4", libc="",
                                                         release="23.5.0"), "mac_ver": "10.16"})
    b.file("/System/Library/CoreServices/SystemVersion.plist", MACOS_14_5_PLIST)
    b.command(["sysctl", "-n", "machdep.cpu.brand_string"], "Apple M2\n")

    # Windows 11 desktop: RTX 3060 (driver 552.22), the UHD 770 iGPU, an RDP adapter, and a GTX 1060 that is not
    # connected (problem code 45).
    b = SysrootBuilder(where / "windows-rtx3060", {**host_facts(system="Windows", machine="AMD64", python="3.12.4",
                                                                libc="", release="10"), "win_ver": "10.0.22631"})
    b.command(WINDOWS_CIM, cim_adapters([
        {"name": "NVIDIA GeForce RTX 3060", "pnp": r"PCI\\VEN_10DE&DEV_2504&SUBSYS_397D1462&REV_A1\\4&2C9C6A4&0&0008",
         "driver": "31.0.15.5222", "status": "OK", "code": 0},
        {"name": "Intel(R) UHD Graphics 770", "pnp": r"PCI\\VEN_8086&DEV_4680&SUBSYS_7D971462&REV_0C\\3&11583659&0&10",
         "driver": "31.0.101.4502", "status": "OK", "code": 0},
        {"name": "Microsoft Remote Display Adapter",
         "pnp": r"SWD\\REMOTEDISPLAYENUM\\RDPIDD_INDIRECTDISPLAY&SESSIONID_0002", "driver": "10.0.22621.1",
         "status": "OK", "code": 0},
        {"name": "NVIDIA GeForce GTX 1060 6GB",
         "pnp": r"PCI\\VEN_10DE&DEV_1C03&SUBSYS_85AE1043&REV_A1\\4&1B8D7A3&0&0019", "driver": "31.0.15.5222",
         "status": "Unknown", "code": 45}]))

    # Windows 11 desktops with AMD GPUs and Adrenalin drivers: an RX 7900 XTX (next to the Ryzen 7000 iGPU), and a
    # Strix Halo laptop (Radeon 8060S).
    b = SysrootBuilder(where / "windows-rx7900xtx", {**host_facts(system="Windows", machine="AMD64", python="3.12.10",
                                                                  libc="", release="11"), "win_ver": "10.0.26100"})
    b.command(WINDOWS_CIM, cim_adapters([
        {"name": "AMD Radeon RX 7900 XTX",
         "pnp": r"PCI\\VEN_1002&DEV_744C&SUBSYS_471E1043&REV_C8\\6&1A7A3F0&0&00000019", "driver": "32.0.21025.1024",
         "status": "OK", "code": 0},
        {"name": "AMD Radeon(TM) Graphics",
         "pnp": r"PCI\\VEN_1002&DEV_164E&SUBSYS_88771043&REV_C9\\4&2B2A8E6C&0&0041",
         "driver": "32.0.21025.1024", "status": "OK", "code": 0}]))
    b = SysrootBuilder(where / "windows-strix-halo", {**host_facts(system="Windows", machine="AMD64",
                                                                   python="3.13.7", libc="", release="11"),
                                                      "win_ver": "10.0.26100"})
    b.command(WINDOWS_CIM, cim_adapters([
        {"name": "AMD Radeon(TM) 8060S Graphics",
         "pnp": r"PCI\\VEN_1002&DEV_1586&SUBSYS_8E2A103C&REV_C1\\4&1D3AB2B2&0&0041", "driver": "32.0.21025.1024",
         "status": "OK", "code": 0}]))

    # Windows 11 on ARM (Snapdragon X Elite): the Adreno GPU is an ACPI device; PowerShell escapes '&' as \u0026.
    b = SysrootBuilder(where / "windows-arm64-snapdragon", {**host_facts(system="Windows", machine="ARM64",
                                                                         python="3.12.8", libc="", release="11"),
                                                            "win_ver": "10.0.26100"})
    b.command(WINDOWS_CIM, cim_adapters([
        {"name": "Qualcomm(R) Adreno(TM) X1-85 GPU", "pnp": r"ACPI\\QCOM0C36\\2\u0026DABA3FF\u00260",
         "driver": "31.0.133.1", "status": "OK", "code": 0}]))


WINDOWS_CIM = ["powershell.exe", "-NoProfile", "-NonInteractive", "-Command",
               "Get-CimInstance Win32_VideoController | "
               "Select-Object Name,PNPDeviceID,DriverVersion,Status,ConfigManagerErrorCode | ConvertTo-Json"]
MACOS_14_5_PLIST = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
\t<key>BuildID</key>
\t<string>1E3F1E2A-0D8E-11EF-A5E4-2E8E9A4B5C6D</string>
\t<key>ProductBuildVersion</key>
\t<string>23F79</string>
\t<key>ProductCopyright</key>
\t<string>1983-2024 Apple Inc.</string>
\t<key>ProductName</key>
\t<string>macOS</string>
\t<key>ProductUserVisibleVersion</key>
\t<string>14.5</string>
\t<key>ProductVersion</key>
\t<string>14.5</string>
\t<key>iOSSupportVersion</key>
\t<string>17.5</string>
</dict>
</plist>
"""


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    build_fixtures()
