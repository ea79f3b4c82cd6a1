"""Flags to machines: which machine(s) a command resolves for, from ``--target``, the hardware and platform flags,
``--sysroot`` or this host, and container mode; every machine completed (``machine_completion.complete_machine``).

Precedence, first that applies:

1. container mode (``plan --for-container``, or on by itself in a container without a GPU device node): the
   flags, else the base image's hints, else the forced ``--variant``; never the build host's hardware
   (``container.container_targets`` decides, from the values parsed here);
2. ``--target FILE`` (repeatable): each profile, the field flags overriding its fields;
3. a hardware flag (``--gpu``, ``--nvidia-driver``, ``--rocm``) or ``--os``/``--arch``: a machine of the flags alone;
4. this machine (or the ``--sysroot`` tree), detected; ``--python`` replaces its Python.

In a described machine, platform fields left out (os, arch, python, glibc) are taken from this machine and listed
in ``assumed``; hardware fields are never taken from this machine.
"""

from __future__ import annotations

import argparse
import os

from ..errors import InputError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from ..machine import Gpu, Machine
    from ..probe import Probe

_FLAG_FIELDS = (("os", "os"), ("arch", "arch"), ("python", "python"), ("nvidia_driver", "nvidia-driver"),
                ("rocm", "rocm"))


def non_empty(value: str) -> str:
    """An argparse type: a path or value that is not empty (an empty one is a usage error, not "this machine")."""
    if not value.strip():
        raise argparse.ArgumentTypeError("empty value")
    return value


def sysroot_path(value: str) -> str:
    """An argparse type for --sysroot: a captured tree (a directory with the capture's ``_host.json``) or an
    archive path (checked when it is opened); an empty value or a directory that is no capture is a usage error,
    not an empty machine."""
    value = non_empty(value)
    if os.path.isdir(value) and not os.path.isfile(os.path.join(value, "_host.json")):
        raise argparse.ArgumentTypeError(f"{value}: not a captured tree (no _host.json; "
                                         "'torch-install detect --capture FILE' makes one)")
    return value


def add_sysroot_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sysroot", metavar="DIR|FILE.tar.gz", type=sysroot_path,
                        help="detect on a captured tree or a capture archive (from 'detect --capture', read in "
                             "memory) instead of this machine")


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


def probe_of(args: argparse.Namespace) -> Probe:
    """The probe of this machine, or of the captured machine --sysroot names (a directory, or a capture archive
    read into memory); one per command, so a capture is read once."""
    cached: Probe | None = getattr(args, "_probe", None)
    if cached is None:
        from ..probe import Probe

        sysroot = getattr(args, "sysroot", None)
        if sysroot:
            from ..capture import open_sysroot

            cached = open_sysroot(sysroot)
        else:
            cached = Probe()
        args._probe = cached
    return cached


def detect_here(args: argparse.Namespace) -> Machine:
    """Detect this machine, or the captured machine named by --sysroot."""
    from ..detectors import detect

    return detect(probe_of(args))


def platform_here(args: argparse.Namespace) -> Machine:
    """This machine's platform fields only (os, arch, python, glibc): what a target profile may assume."""
    from ..detectors import detect_platform

    return detect_platform(probe_of(args))


def target_flag_values(args: argparse.Namespace) -> dict[str, Any]:
    """Machine fields given as flags, each validated like a profile field (errors name the flag)."""
    from ..machine import machine_from_dict

    values: dict[str, Any] = {}
    for name, flag in _FLAG_FIELDS:
        value = getattr(args, name, None)
        if value is None:
            continue
        try:
            parsed = machine_from_dict({name: value})
        except InputError as exc:
            raise InputError(f"--{flag}: {str(exc).split(': ', 2)[-1]}") from None
        values[name] = getattr(parsed, name)
        if name == "python":  # --python 3.14.1 states the patch release; --python 3.14 leaves it unknown
            values["python_full"] = parsed.python_full
    if getattr(args, "gpu", None):
        values["gpus"] = gpus_from_names(args.gpu)
    return values


def gpus_from_names(names: list[str]) -> tuple[Gpu, ...]:
    """--gpu NAME (repeatable) through the shipped name table; the same model twice counts 2."""
    from ..detectors.names import gpu_from_name

    gpus: list[Gpu] = []
    for name in names:
        gpu = gpu_from_name(name)
        same = next((i for i, g in enumerate(gpus) if g._replace(count=1) == gpu._replace(count=1)), None)
        if same is None:
            gpus.append(gpu)
        else:
            gpus[same] = gpus[same]._replace(count=gpus[same].count + gpu.count)
    return tuple(gpus)


def describes_target(args: argparse.Namespace) -> bool:
    """Whether the flags describe a machine other than this one: --target, a hardware flag, --os or --arch."""
    return bool(getattr(args, "target", None)) or any(
        getattr(args, name, None) for name in ("os", "arch", "gpu", "nvidia_driver", "rocm"))


def _described(args: argparse.Namespace) -> list[Machine]:
    """Steps 2-4 of the module docstring (no container mode), not yet completed."""
    from ..machine import PLATFORM_FIELDS, Machine, fill_platform, load_machine

    flags = target_flag_values(args)
    if not describes_target(args):
        here = detect_here(args)
        return [here._replace(**flags)] if flags else [here]
    targets = getattr(args, "target", None) or []
    if "gpus" in flags:
        flags["gpus_known"] = True
    described = [base._replace(**flags) for base in [load_machine(path) for path in targets] or [Machine()]]
    if all(getattr(m, name) is not None or (name == "glibc" and m.os not in (None, "linux"))
           for m in described for name in PLATFORM_FIELDS):
        return described  # nothing to assume: this machine is not consulted
    host = platform_here(args)
    return [fill_platform(machine, host) for machine in described]


def machines(args: argparse.Namespace, variant: str | None = None, container: bool = False) -> list[Machine]:
    """The completed machine(s) a command resolves for (the module docstring's precedence). ``container``:
    the command knows container mode (``plan``); ``variant``: the forced ``--variant``, a target of its own
    in container mode."""
    from ..machine_completion import complete_machine

    described = _described(args) if not container or describes_target(args) else None
    found = None
    if container and getattr(args, "for_container", None) is not False:
        from ..container import container_targets

        python = target_flag_values(args) if described is None and getattr(args, "python", None) else {}
        found = container_targets(probe_of(args), getattr(args, "for_container", None), described,
                                  python.get("python"), python.get("python_full"), variant)
    return [complete_machine(m) for m in (found or described or _described(args))]


def machine(args: argparse.Namespace) -> Machine:
    """The one completed machine a command resolves for (see ``machines``)."""
    found = machines(args)
    if len(found) > 1:
        raise InputError("this command takes one --target")
    return found[0]
