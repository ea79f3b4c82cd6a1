"""Doctor test cases: site-packages fixtures (real dist-info/version.py formats), an interpreter over them, and
hardware profiles."""

from __future__ import annotations

import shutil
from pathlib import Path

from resolve_cases import TEST_MATRIX
from torch_install.doctor import diagnose
from torch_install.doctor.inspect import inspect_environment
from torch_install.environment.interpreter import Interpreter
from torch_install.machine import Gpu, Machine
from torch_install.probe import Probe

FIXTURES = Path(__file__).parent / "fixtures" / "site-packages"
LINUX = {"os": "linux", "arch": "x86_64", "glibc": "2.35"}
RTX4090 = Gpu("nvidia", "NVIDIA GeForce RTX 4090", "10de:2684", "8.9")
MACHINES = {
    "rtx4090-570": Machine(**LINUX, nvidia_driver="570.133.07", gpus=(RTX4090,)),
    "rtx4090-550": Machine(**LINUX, nvidia_driver="550.54.15", gpus=(RTX4090,)),
    "gtx1080-570": Machine(**LINUX, nvidia_driver="570.133.07",
                           gpus=(Gpu("nvidia", "NVIDIA GeForce GTX 1080", "10de:1b80", "6.1"),)),
    "rx6700xt": Machine(**LINUX, rocm="6.4.1", gpus=(Gpu("amd", "AMD Radeon RX 6700 XT", "1002:73df", gfx="gfx1031"),)),
    "no-gpu": Machine(**LINUX),
}


def case_site(case: str) -> Path:
    """The site-packages fixture ``case``, read where it is: the doctor writes no file (test_architecture.py's
    rule of the writers), and a test that changes the tree takes ``copy_case``."""
    return FIXTURES / case


def copy_case(case: str, tmp_path: Path) -> Path:
    site = tmp_path / "site-packages"
    if case == "empty":
        site.mkdir()
    else:
        shutil.copytree(FIXTURES / case, site)
    return site


def interpreter(site: Path, version: str = "3.11.7") -> Interpreter:
    return Interpreter(executable="/env/bin/python", version=version, system="Linux", machine="x86_64",
                       path=(str(site),), site_packages=(str(site),), prefix="/env", base_prefix="/usr")


def run(site: Path, machine: str | Machine, environ: dict[str, str] | None = None, version: str = "3.11.7",
        probe: Probe | None = None):
    m = MACHINES[machine] if isinstance(machine, str) else machine
    return diagnose(m, inspect_environment(interpreter(site, version)), TEST_MATRIX, environ=environ or {},
                    probe=probe)


def codes(report, *severities: str) -> tuple[str, ...]:
    """The report's finding codes (of those severities), in its order."""
    return tuple(f.code for f in report.findings if not severities or f.severity in severities)
