"""Options and helpers shared by several sub-commands."""

from __future__ import annotations

import argparse
import sys

from ..errors import InputError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from typing import Any

    from ..machine import Machine


def add_sysroot_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sysroot", metavar="DIR",
                        help="detect on a captured tree (from 'detect --capture') instead of this machine")


def detect_here(args: argparse.Namespace) -> Machine:
    """Detect this machine, or the captured tree named by --sysroot."""
    import os

    from ..detectors import detect
    from ..probe import Probe

    sysroot = getattr(args, "sysroot", None)
    if sysroot:
        if os.path.isdir(sysroot):
            return detect(Probe(root=sysroot))
        from ..capture import sysroot_dir  # a capture archive, extracted safely

        with sysroot_dir(sysroot) as root:
            return detect(Probe(root=root))
    return detect(Probe())


_FLAG_FIELDS = (("os", "os"), ("arch", "arch"), ("python", "python"), ("nvidia_driver", "nvidia-driver"),
                ("rocm", "rocm"))


def add_target_options(parser: argparse.ArgumentParser) -> None:
    """Describe a machine other than this one: a profile file and/or field flags (flags win)."""
    from ..machine import ARCHES, OSES

    group = parser.add_argument_group("target machine (default: this machine)")
    group.add_argument("--target", metavar="FILE", action="append",
                       help="machine profile JSON; platform fields left out are assumed from this machine")
    group.add_argument("--os", choices=OSES, help="target operating system")
    group.add_argument("--arch", choices=ARCHES, help="target CPU architecture")
    group.add_argument("--python", metavar="X.Y", help='target Python, like "3.12" or "3.13t"')
    group.add_argument("--nvidia-driver", metavar="VERSION", help='NVIDIA driver, like "550.54.15"')
    group.add_argument("--rocm", metavar="VERSION", help='ROCm user space, like "6.4.1"')
    group.add_argument("--gpu", metavar="NAME", action="append",
                       help='GPU by name, like "RTX 4090" (repeat for several)')


def target_flag_values(args: argparse.Namespace) -> dict[str, Any]:
    """Machine fields given as flags, each validated like a profile field (errors name the flag)."""
    from ..machine import machine_from_dict

    values: dict[str, Any] = {}
    for name, flag in _FLAG_FIELDS:
        value = getattr(args, name, None)
        if value is None:
            continue
        try:
            machine_from_dict({name: value})
        except InputError as exc:
            raise InputError(f"--{flag}: {str(exc).split(': ', 2)[-1]}") from None
        values[name] = value
    if getattr(args, "gpu", None):
        values["gpus"] = _gpus_from_names(args.gpu)
    return values


def _gpus_from_names(names: list[str]) -> tuple[Any, ...]:
    """--gpu NAME (repeatable) through the shipped name table; the same model twice counts 2."""
    from ..detectors.names import gpu_from_name

    gpus: list[Any] = []
    for name in names:
        gpu = gpu_from_name(name)
        same = next((i for i, g in enumerate(gpus) if g._replace(count=1) == gpu._replace(count=1)), None)
        if same is None:
            gpus.append(gpu)
        else:
            gpus[same] = gpus[same]._replace(count=gpus[same].count + gpu.count)
    return tuple(gpus)


def platform_here(args: argparse.Namespace) -> Machine:
    """This machine's platform fields only (os, arch, python, glibc): what a target profile may assume."""
    import os

    from ..detectors import Found, build_machine, host
    from ..probe import Probe

    sysroot = getattr(args, "sysroot", None)
    found = Found()
    if sysroot and not os.path.isdir(sysroot):
        from ..capture import sysroot_dir  # a capture archive, extracted safely

        with sysroot_dir(sysroot) as root:
            host.detect(Probe(root=root), found)
    else:
        host.detect(Probe(root=sysroot) if sysroot else Probe(), found)
    return build_machine(found)


def describes_target(args: argparse.Namespace) -> bool:
    """Whether the flags describe a machine other than this one: --target, a hardware flag, --os or --arch."""
    return bool(getattr(args, "target", None)) or any(
        getattr(args, name, None) for name in ("os", "arch", "gpu", "nvidia_driver", "rocm"))


def machines_from_args(args: argparse.Namespace) -> list[Machine]:
    """The machine(s) to resolve for.

    --target FILE (repeatable): each profile, flags overriding its fields. Without --target, a hardware
    flag (--gpu, --nvidia-driver, --rocm) or --os/--arch describes another machine built from the flags
    alone; otherwise this machine is detected and --python, if given, replaces its Python. In a described
    machine, platform fields left out are taken from this machine and listed in ``assumed``; hardware
    fields are never taken from this machine.
    """
    from ..machine import PLATFORM_FIELDS, Machine, fill_platform, load_machine

    flags = target_flag_values(args)
    targets = getattr(args, "target", None) or []
    if not describes_target(args):
        here = detect_here(args)
        return [here._replace(**flags)] if flags else [here]
    described = [base._replace(**flags) for base in [load_machine(path) for path in targets] or [Machine()]]
    described = [_complete_gpus(machine) for machine in described]
    if all(getattr(m, name) is not None or (name == "glibc" and m.os not in (None, "linux"))
           for m in described for name in PLATFORM_FIELDS):
        return described  # nothing to assume: this machine is not consulted
    host = platform_here(args)
    return [fill_platform(machine, host) for machine in described]


def _complete_gpus(machine: Machine) -> Machine:
    """A GPU given by name alone gets its architecture from the shipped name table."""
    if all(g.compute_capability or g.gfx or g.family or not g.name for g in machine.gpus):
        return machine
    from ..detectors.names import complete_gpu

    return machine._replace(gpus=tuple(complete_gpu(g) for g in machine.gpus))


def machine_from_args(args: argparse.Namespace) -> Machine:
    """The one machine to resolve for (see ``machines_from_args``)."""
    machines = machines_from_args(args)
    if len(machines) > 1:
        raise InputError("this command takes one --target")
    return machines[0]


def write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def add_index_options(parser: argparse.ArgumentParser) -> None:
    """Where the release/variant data comes from: embedded (default) or a live index."""
    parser.add_argument("--index-base", metavar="URL",
                        help="PyTorch wheel index base (mirrors); default https://download.pytorch.org/whl "
                             "or $TORCH_INSTALL_INDEX_BASE")
    parser.add_argument("--online", action="store_true",
                        help="learn releases and variants from the live index (cached)")
    parser.add_argument("--offline", action="store_true", help="never touch the network")
    parser.add_argument("--allow-insecure-index", action="store_true",
                        help="allow a plain-http index base that is not loopback")


def matrix_for(args: argparse.Namespace, machine: Machine) -> Any:  # a resolver.matrix.Matrix
    """The compatibility matrix to resolve with: embedded, extended from the live index with --online
    (with --offline too: cached index data only). A failed index read falls back with one warning line."""
    from ..resolver.matrix import load_matrix

    matrix = load_matrix()
    if not getattr(args, "online", False):
        return matrix
    from ..index_url import index_base_from
    from ..online import emit_warning, online_matrix

    insecure = bool(getattr(args, "allow_insecure_index", False))
    base = index_base_from(getattr(args, "index_base", None), allow_insecure=insecure)
    result = online_matrix(matrix, machine, base, channel=getattr(args, "channel", None) or "stable",
                           offline=bool(getattr(args, "offline", False)), allow_insecure=insecure)
    if result.warning:
        emit_warning(result.warning)
    return result.matrix
