"""Companion releases that pin no one torch (torchaudio 2.11.0/2.11.1, torchvision 0.29.1/0.29.2) go with newer
torch releases, but only where their own wheels exist: their variants, Python tags and macOS floors decide, not
those of the torch they are paired with. Every decoupled release of the shipped matrix, against every release it
may go with."""

from __future__ import annotations

import pytest

from resolve_cases import warning_codes
from torch_install.detectors.names import gpu_from_name
from torch_install.machine import Gpu, Machine
from torch_install.machine_completion import complete_machine
from torch_install.resolver import Request, resolve
from torch_install.resolver.matrix import load_matrix, version_key
from torch_install.resolver.plan import Plan

MATRIX = load_matrix()
DECOUPLED = [(name, version, facts) for name, rows in sorted(MATRIX.decoupled_companions.items())
             for version, facts in sorted(rows.items())]
PAIRS = [(name, version, release.version) for name, version, facts in DECOUPLED for release in MATRIX.releases
         if version_key(release.version) >= version_key(facts.torch_from)]


def plan(machine: Machine, *packages: str, variant: str | None = None) -> Plan:
    return resolve(complete_machine(machine), Request(packages=packages, variant=variant), MATRIX)


def linux(python: str = "3.12", gpu: str | None = None, **more: str) -> Machine:
    return Machine(os="linux", arch="x86_64", python=python, glibc="2.35",
                   gpus=(gpu_from_name(gpu),) if gpu else (), **more)


@pytest.mark.parametrize(("name", "version", "torch"), PAIRS)
def test_a_forced_variant_the_companion_was_not_built_for_is_said(name: str, version: str, torch: str) -> None:
    built = MATRIX.decoupled_companions[name][version].variants["linux_x86_64"]
    for variant in MATRIX.release(torch).variants("linux_x86_64"):
        p = plan(linux(), f"torch=={torch}", f"{name}=={version}", variant=variant)
        said = [w.message for w in p.warnings if w.code == "constrained-by" and f"has no {variant} build" in w.message]
        assert bool(said) == (variant not in built), (variant, said)


@pytest.mark.parametrize(("name", "version", "torch"), PAIRS)
def test_the_chosen_variant_is_one_the_companion_was_built_for(name: str, version: str, torch: str) -> None:
    built = MATRIX.decoupled_companions[name][version].variants["linux_x86_64"]
    for machine in (linux(gpu="MI300X", rocm="7.14.0"), linux(gpu="RTX 4090", nvidia_driver="595.45.04"),
                    linux(gpu="Arc B580")):
        p = plan(machine, f"torch=={torch}", f"{name}=={version}")
        assert p.choice is not None and p.choice.variant in built, (machine.gpus[0].name, p.choice)
        assert p.choice.packages[name].split("+")[0] == version


def test_an_mi300x_on_rocm_7_14_gets_the_rocm_build_torchaudio_2_11_0_has() -> None:
    p = plan(linux(gpu="MI300X", rocm="7.14.0"), "torch==2.14.0", "torchaudio==2.11.0")
    assert p.choice is not None
    assert (p.choice.variant, p.choice.packages["torchaudio"]) == ("rocm7.2", "2.11.0+rocm7.2")
    assert any("rocm7.14 rejected: torchaudio 2.11.0" in r.reason for r in p.rejected)


@pytest.mark.parametrize(("name", "version", "torch"), PAIRS)
def test_a_python_the_companion_has_no_wheel_for_is_declined(name: str, version: str, torch: str) -> None:
    facts = MATRIX.decoupled_companions[name][version]
    tags = facts.python["linux_x86_64"]
    for python in MATRIX.release(torch).python_tags("linux_x86_64"):
        p = plan(linux(python), f"torch=={torch}", f"{name}=={version}")
        if "*" in tags or python in tags:
            assert p.choice is not None, python
        else:
            assert p.choice is None and any(f"{name} {version}" in w.message and f"Python {python}" in w.message
                                            for w in p.warnings if w.code == "python-unsupported"), python


@pytest.mark.parametrize(("name", "version", "torch"),
                         [(n, v, t) for n, v, t in PAIRS if MATRIX.decoupled_companions[n][v].macos])
def test_the_companions_own_macos_floor_holds(name: str, version: str, torch: str) -> None:
    floors = MATRIX.decoupled_companions[name][version].macos["macos_arm64"]
    release = MATRIX.release(torch)
    for python in release.python_tags("macos_arm64"):
        need = floors.get(python) or floors.get("*")
        if need is None:
            continue
        torch_need = release.macos_floor("macos_arm64", python) or "0.0"
        major = int(need.split(".")[0])
        for os_version, fits in ((f"{major - 1}.7", False), (f"{major}.1", True)):
            if version_key(os_version) < version_key(torch_need):
                continue  # torch's own wheel is out already
            machine = Machine(os="macos", arch="arm64", python=python, os_version=os_version,
                              gpus=(Gpu("apple", "Apple M2", family="m2", integrated=True),))
            p = plan(machine, f"torch=={torch}", f"{name}=={version}")
            assert (p.choice is not None) == fits, (python, os_version)
            if not fits:
                assert any(f"{name} {version}" in w.message and f"need macOS ≥ {need}" in w.message
                           for w in p.warnings), p.warnings


def test_torchaudio_2_11_1_is_not_planned_beside_torch_2_11_0_below_macos_14() -> None:
    for os_version in ("11.7", "13.6"):
        machine = Machine(os="macos", arch="arm64", python="3.12", os_version=os_version,
                          gpus=(Gpu("apple", "Apple M2", family="m2", integrated=True),))
        p = plan(machine, "torch==2.11.0", "torchaudio==2.11.1")
        assert p.choice is None and "platform-unsupported" in warning_codes(p)


@pytest.mark.parametrize(("python", "companion"), [("3.15", "torchvision"), ("3.15t", "torchvision")])
def test_the_pythons_only_the_pytorch_index_has_get_no_cp_tagged_companion(python: str, companion: str) -> None:
    """torch 2.13.0 has cp315 wheels on the PyTorch index only; the release branch publishes no torchvision for them
    (TORCH_ONLY_PYTHON_ARCHES)."""
    p = plan(linux(python, gpu="RTX 4090", nvidia_driver="595.45.04"), "torch==2.13.0", companion)
    assert p.choice is None
    assert any(f"has no wheels for Python {python}" in w.message for w in p.warnings if w.code == "python-unsupported")
    alone = plan(linux(python, gpu="RTX 4090", nvidia_driver="595.45.04"), "torch==2.13.0")
    assert alone.choice is not None and alone.choice.torch == "2.13.0"


def test_a_py3_companion_goes_with_the_pythons_only_the_pytorch_index_has() -> None:
    p = plan(linux("3.15", gpu="RTX 4090", nvidia_driver="595.45.04"), "torch==2.13.0", "torchaudio")
    assert p.choice is not None and p.choice.packages["torchaudio"] == "2.11.1"


def test_a_derived_pairing_says_so() -> None:
    p = plan(linux(gpu="RTX 4090", nvidia_driver="595.45.04"), "torch==2.13.0", "torchaudio==2.11.0")
    assert MATRIX.decoupled_companions["torchaudio"]["2.11.0"].confidence == "inferred"
    assert any("torchaudio 2.11.0 pins no one torch" in n and "is inferred" in n for n in p.notes)
