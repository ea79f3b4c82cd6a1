"""The resolver's paths read one vendor policy: on every GPU fixture, pinning the chosen release chooses the same
variant, and a release named as "nearest that would use the GPU" resolves, pinned, to the variant it named."""

from __future__ import annotations

import re

import pytest

from resolve_cases import TEST_MATRIX, amd, nvidia
from sysroot import FIXTURES
from torch_install.detectors import detect
from torch_install.machine import Machine
from torch_install.machine_completion import complete_machine
from torch_install.probe import Probe
from torch_install.resolver import Request, resolve

GPU_FIXTURES = sorted(p.name for p in FIXTURES.iterdir()
                      if p.is_dir() and detect(Probe(root=p)).gpus)
PROFILES = {
    "rx7900xtx-rocm7.1": Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", rocm="7.1.0",
                                 gpus=(amd("AMD Radeon RX 7900 XTX", "gfx1100"),)),
    "rx6700xt-rocm6.4": Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", rocm="6.4.1",
                                gpus=(amd("AMD Radeon RX 6700 XT", "gfx1031"),)),
    "gtx1080-580": Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", nvidia_driver="580.95.05",
                           gpus=(nvidia("NVIDIA GeForce GTX 1080", "6.1"),)),
    "h100-550": Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", nvidia_driver="550.54.15",
                        gpus=(nvidia("NVIDIA H100 80GB HBM3", "9.0"),)),
}


def _machines() -> dict[str, Machine]:
    found = {name: complete_machine(detect(Probe(root=FIXTURES / name))) for name in GPU_FIXTURES}
    return {**found, **PROFILES}


MACHINES = _machines()


def test_the_fixtures_with_gpus_are_many() -> None:
    assert len(GPU_FIXTURES) >= 12


@pytest.mark.parametrize("name", sorted(n for n, m in MACHINES.items() if resolve(m, Request(), TEST_MATRIX).choice))
def test_pinning_the_chosen_release_chooses_the_same_variant(name: str) -> None:
    machine = MACHINES[name]
    plan = resolve(machine, Request(), TEST_MATRIX)
    assert plan.choice is not None
    pinned = resolve(machine, Request(packages=(f"torch=={plan.choice.torch}",)), TEST_MATRIX)
    assert pinned.choice is not None
    assert (pinned.choice.torch, pinned.choice.variant) == (plan.choice.torch, plan.choice.variant)


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_the_nearest_release_named_for_a_pin_resolves_to_the_variant_named(name: str) -> None:
    machine = MACHINES[name]
    newest = TEST_MATRIX.releases[0].version
    plan = resolve(machine, Request(packages=(f"torch=={newest}",)), TEST_MATRIX)
    named = [m for w in plan.warnings if (m := re.search(r"nearest release that would use the GPU: torch "
                                                         r"([0-9.]+)\+([a-z0-9.]*[a-z0-9])", w.message))]
    for match in named:
        again = resolve(machine, Request(packages=(f"torch=={match[1]}",)), TEST_MATRIX)
        assert again.choice is not None and again.choice.variant == match[2], (match[0], again.choice)
