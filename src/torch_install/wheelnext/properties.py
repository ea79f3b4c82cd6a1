"""What each WheelNext variant provider would report for a machine, and the override variables that make
a variant-aware installer choose for a target machine.

``supported_properties(machine)`` gives the properties in the providers' own vocabulary and value order
(``nvidia :: sm_arch :: 89_real`` …), reproduced from data (``data/variant-providers.json``), never by running a
provider plugin; a target profile gives another machine's properties the same way. ``override_env(machine,
variant)`` gives the provider override variables for a GPU-less ``docker build``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .. import vendors
from ..drivers import cuda_for_driver
from ..machine import Machine
from ..package_data import load_json

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def provider_data() -> dict[str, Any]:
    """The provider rules shipped as package data (data/variant-providers.json)."""
    return load_json("data/variant-providers.json")


# --------------------------------------------------------------------------------------------------------------
# What the providers report for a machine
# --------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FeatureConfig:
    """One feature a provider supports, values most preferred first (a provider's ``get_supported_configs``)."""

    name: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class SupportedProperties:
    """Per namespace, the ordered features and values a machine supports; notes say what was left out."""

    namespaces: Mapping[str, tuple[FeatureConfig, ...]]
    notes: tuple[str, ...] = ()

    def feature(self, namespace: str, name: str) -> FeatureConfig | None:
        return next((f for f in self.namespaces.get(namespace, ()) if f.name == name), None)

    def lines(self) -> list[str]:
        """``namespace :: feature :: value`` lines in provider order."""
        return [f"{ns} :: {f.name} :: {v}" for ns, feats in self.namespaces.items() for f in feats for v in f.values]


def major_minor(text: str | None) -> tuple[int, int] | None:
    """The leading "major[.minor]" of a version as numbers: "12.4.1" -> (12, 4), "13" -> (13, 0); None if none."""
    if not text:
        return None
    match = re.match(r"^([0-9]+)(?:\.([0-9]+))?", text.strip())
    return (int(match.group(1)), int(match.group(2) or 0)) if match else None


def nvidia_features(cuda_driver: tuple[int, int], sm: tuple[int, int] | None) -> tuple[FeatureConfig, ...]:
    """nvidia-variant-provider's lists for a driver CUDA version and the highest compute capability."""
    rules = provider_data()["nvidia"]
    low_major, high_major = rules["cuda_major_range"]
    top_minor = rules["cuda_minor_max"]
    major, minor = cuda_driver

    def versions(majors: Iterable[int], minors_for: Any) -> list[str]:
        out: list[str] = []
        for m in majors:
            out += [f"{m}.{n}" if n is not None else str(m) for n in minors_for(m)]
        return out

    lower = versions(range(major, low_major - 1, -1),
                     lambda m: [*range(top_minor if m < major else minor, -1, -1), None])
    upper = versions(range(high_major, major - 1, -1),
                     lambda m: [*range(top_minor, -1, -1), None] if m > major else range(top_minor, minor, -1))
    features = [FeatureConfig("cuda_version_lower_bound", tuple(lower))]
    if upper:
        features.append(FeatureConfig("cuda_version_upper_bound", tuple(upper)))
    if sm is not None:
        sm_major, sm_minor = sm
        arch = [f"{sm_major}{n}_real" for n in range(sm_minor, -1, -1)] + [f"{sm_major}0_virtual"]
        features.append(FeatureConfig("sm_arch", tuple(arch)))
    return tuple(features)


def driver_cuda(machine: Machine) -> tuple[int, int] | None:
    """The newest CUDA (major, minor) the machine's NVIDIA driver supports: the profile's ``cuda_driver_api``,
    else the newest toolkit whose minimum driver ``nvidia_driver`` meets, in the Windows column on Windows and
    WSL (whose driver is the Windows one), else the Linux column; None when neither tells."""
    stated = major_minor(machine.cuda_driver_api)
    if stated or not machine.nvidia_driver:
        return stated
    found = cuda_for_driver(machine.nvidia_driver, driver_column(machine))
    return major_minor(found[0]) if found else None


def driver_column(machine: Machine) -> str:
    """Which column of the CUDA toolkit → driver table the machine's NVIDIA driver is read in: ``windows`` on
    Windows and under WSL (the driver is the Windows host's), else ``linux``."""
    return "windows" if machine.os == "windows" or machine.wsl else "linux"


def intel_device_ips(family: str | None) -> tuple[str, ...]:
    """GT GMDID device IPs (own, then compatible base) for an Intel GPU family name; () when unknown."""
    if not family:
        return ()
    key = re.sub(r"[^a-z0-9]", "", family.lower())
    for name, entry in provider_data()["intel"]["families"].items():
        if key == name.replace("_", "") or key in entry["aliases"]:
            return tuple(entry["device_ip"])
    return ()


def x86_64_level(flags: Iterable[str]) -> int:
    """The x86-64 psABI microarchitecture level (1–4) a set of /proc/cpuinfo flags reaches."""
    have = set(flags)
    level = 1
    for lvl, needed in sorted(provider_data()["x86_64"]["levels"].items()):
        if not set(needed) <= have:
            break
        level = int(lvl)
    return level


def aarch64_version(features: Iterable[str]) -> str:
    """The Arm architecture version (``8a`` … ``9.0a``) the HWCAP feature names reach (inferred, see data)."""
    have = set(features)
    version = "8a"
    for name, needed in provider_data()["aarch64"]["versions"]:
        if not set(needed) <= have:
            break
        version = name
    return version


def aarch64_versions_down(version: str) -> tuple[str, ...]:
    order = ["8a"] + [v for v, _ in provider_data()["aarch64"]["versions"]]
    return tuple(reversed(order[: order.index(version) + 1]))


def cpu_flags_from_cpuinfo(text: str | None) -> frozenset[str]:
    """The feature names of the first processor in /proc/cpuinfo (x86 ``flags``, Arm ``Features``)."""
    for line in (text or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def nvidia_namespace(machine: Machine, notes: list[str]) -> tuple[FeatureConfig, ...]:
    """What nvidia-variant-provider reports (NVIDIA's registry hook): the driver's CUDA bounds and ``sm_arch``."""
    nvidia = [g for g in machine.visible_gpus if g.vendor == "nvidia"]
    if not (nvidia or machine.cuda_driver_api):
        return ()
    cuda = driver_cuda(machine)
    if cuda and major_minor(machine.cuda_driver_api) is None:
        notes.append(f"nvidia: driver CUDA {cuda[0]}.{cuda[1]} inferred from driver {machine.nvidia_driver} "
                     f"(newest toolkit whose {driver_column(machine)} driver it meets); NVML reports it exactly")
    low, high = provider_data()["nvidia"]["cuda_major_range"]
    sms = sorted({(g.sm // 10, g.sm % 10) for g in nvidia if g.sm is not None}, reverse=True)
    if cuda is None:
        notes.append("nvidia: the driver's CUDA version is unknown, so the nvidia provider reports nothing")
        return ()
    if not (low, 0) <= cuda <= (high, provider_data()["nvidia"]["cuda_minor_max"]):
        shown = machine.cuda_driver_api or f"{cuda[0]}.{cuda[1]}"
        notes.append(f"nvidia: driver CUDA {shown} is outside the provider's range {low}.0–{high}.20, "
                     "so it reports nothing")
        return ()
    top = sms[0] if sms and sms[0] >= (5, 0) else None
    if sms and top is None:
        notes.append(f"nvidia: compute capability {sms[0][0]}.{sms[0][1]} is below 5.0; the provider "
                     "reports no sm_arch")
    elif not sms:
        notes.append("nvidia: GPU architecture unknown, so no sm_arch: variants that declare sm_arch "
                     "(every CUDA build of torch) do not match")
    if len(sms) > 1:
        rest = ", ".join(f"{a}.{b}" for a, b in sms[1:])
        notes.append(f"nvidia: sm_arch lists only the highest compute capability ({sms[0][0]}.{sms[0][1]}), "
                     f"as the provider does; this machine also has {rest}")
    return nvidia_features(cuda, top)


def intel_namespace(machine: Machine, notes: list[str]) -> tuple[FeatureConfig, ...]:
    """What the Intel provider reports (Intel's registry hook): the GPUs' ``device_ip``."""
    intel_ips: list[str] = []
    for gpu in machine.visible_gpus:
        if gpu.vendor == "intel":
            ips = intel_device_ips(gpu.family)
            if not ips:
                notes.append(f"intel: device IP of {gpu.name or gpu.family or 'an Intel GPU'} is unknown "
                             f"(family {gpu.family or 'unknown'})")
            intel_ips += [ip for ip in ips if ip not in intel_ips]
    return (FeatureConfig("device_ip", tuple(intel_ips)),) if intel_ips else ()


def amd_namespace(machine: Machine, notes: list[str]) -> tuple[FeatureConfig, ...]:
    """What the AMD provider reports (AMD's registry hook): ``gfx_arch`` and ``rocm_version``."""
    gfx = list(dict.fromkeys(g.gfx for g in machine.visible_gpus if g.vendor == "amd" and g.gfx))
    amd: list[FeatureConfig] = []
    if gfx:
        amd.append(FeatureConfig("gfx_arch", tuple(gfx)))
    elif any(g.vendor == "amd" for g in machine.visible_gpus):
        notes.append("amd: gfx target unknown, so the amd provider reports no gfx_arch")
    rocm = major_minor(machine.rocm)
    if rocm and (gfx or any(g.vendor == "amd" for g in machine.gpus)):
        amd.append(FeatureConfig("rocm_version", (f"{rocm[0]}.{rocm[1]}",)))
    return tuple(amd)


class Namespace(vendors.Protocol):
    """What a vendor's WheelNext provider reports for a machine (its row's ``wheelnext_properties``): its feature
    configs; a line for ``notes`` where a value could not be read."""

    def __call__(self, machine: Machine, notes: list[str]) -> tuple[FeatureConfig, ...]: ...


PROPERTIES: vendors.Hook[Namespace] = vendors.Hook("wheelnext_properties", Namespace, "torch_install.wheelnext")


def supported_properties(machine: Machine, cpu_flags: Iterable[str] | None = None) -> SupportedProperties:
    """What each vendor's WheelNext provider (its registry row's ``wheelnext_properties``) and the x86_64 and
    aarch64 providers would report for ``machine``.

    CPU namespaces need the CPU feature flags (``cpu_flags``; not part of a machine profile) and are left
    out without them.
    """
    namespaces: dict[str, tuple[FeatureConfig, ...]] = {}
    notes: list[str] = []
    for row in vendors.VENDORS:
        if row.wheelnext and row.wheelnext_properties:
            features = PROPERTIES.load(row)(machine, notes)
            if features:
                namespaces[row.wheelnext] = features
    flags = frozenset(cpu_flags or ())
    if flags and machine.arch == "x86_64":
        level = x86_64_level(flags)
        namespaces["x86_64"] = (FeatureConfig("level", tuple(f"v{n}" for n in range(level, 0, -1))),)
    elif flags and machine.arch in ("aarch64", "arm64"):
        namespaces["aarch64"] = (FeatureConfig("version", aarch64_versions_down(aarch64_version(flags))),)
        notes.append("aarch64: " + provider_data()["aarch64"]["note"])
    order = provider_data()["namespace_order"]
    ordered = {ns: namespaces[ns] for ns in order if ns in namespaces}
    return SupportedProperties(ordered, tuple(notes))


# --------------------------------------------------------------------------------------------------------------
# Provider override variables
# --------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OverrideEnv:
    """Provider override variables (name -> value, in order) and notes on what could not be set."""

    variables: Mapping[str, str]
    notes: tuple[str, ...] = ()


def override_env(machine: Machine, variant: str | None = None) -> OverrideEnv:
    """The override variables that make variant providers report ``machine`` (and agree with ``variant``).

    ``variant`` is the resolved index variant (``cu126``, ``rocm7.1``, ``xpu``, ``cpu``): when the target's
    ROCm user space is unknown, the AMD provider's exact ``rocm_version`` is set from it.
    """
    data = provider_data()
    out: dict[str, str] = {}
    notes: list[str] = []
    props = supported_properties(machine)
    cuda = driver_cuda(machine)
    if cuda:
        out[data["nvidia"]["overrides"]["cuda_driver_version"]] = f"{cuda[0]}.{cuda[1]}"
        sm_arch = props.feature("nvidia", "sm_arch")
        if sm_arch:
            top = sm_arch.values[0].removesuffix("_real")
            out[data["nvidia"]["overrides"]["sm_arch"]] = f"{top[:-1]}.{top[-1]}"
        else:
            notes.append(f"{data['nvidia']['overrides']['sm_arch']} not set: the target's GPU architecture is "
                         "unknown, and without it the nvidia provider matches no CUDA variant; give the GPU "
                         "(--target FILE with gpus[].compute_capability)")
    gfx = props.feature("amd", "gfx_arch")
    if gfx:
        for name in data["amd"]["overrides"]["gfx_arch"]:
            out[name] = ",".join(gfx.values)
    rocm = machine.rocm or (variant.removeprefix("rocm") if variant and variant.startswith("rocm") else None)
    if rocm and (gfx or any(g.vendor == "amd" for g in machine.gpus) or (variant or "").startswith("rocm")):
        parts = (rocm.split(".") + ["0", "0"])[:3]
        out[data["amd"]["overrides"]["rocm_version"]] = ".".join(parts)
        if not machine.rocm:
            notes.append(f"{data['amd']['overrides']['rocm_version']} is the chosen build's ROCm ({variant}): "
                         "the AMD provider matches rocm_version exactly")
    if any(g.vendor == "amd" for g in machine.gpus) and not gfx:
        notes.append("AMD gfx target unknown: the AMD provider matches no ROCm variant without it")
    ip = props.feature("intel", "device_ip")
    if ip:
        out[data["intel"]["overrides"]["device_ip"]] = ip.values[0]
    elif any(g.vendor == "intel" for g in machine.gpus):
        notes.append("Intel device IP unknown: give the GPU family (gpus[].family) so it can be set")
    return OverrideEnv(out, tuple(notes + list(props.notes)))
