"""resolve() gates: Apple, Intel Macs, Jetson, Python (incl. free-threaded), glibc, musl, CPU-only, bad requests."""

from __future__ import annotations

import pytest

from resolve_cases import ARM, LINUX, TEST_MATRIX, WINDOWS, check, nvidia, plan_for, rejected, warning
from torch_install.errors import InputError
from torch_install.machine import Gpu, Machine
from torch_install.render.plan import plan_document
from torch_install.resolver import Request, resolve
from torch_install.resolver.steps import command_lines

M2 = Gpu("apple", "Apple M2", integrated=True)
MAC = {"os": "macos", "arch": "arm64", "python": "3.12"}
ORIN = nvidia("Jetson AGX Orin", "8.7", integrated=True)
THOR = nvidia("NVIDIA Jetson AGX Thor", "11.0", integrated=True)

CASES = [
    ("apple-m2", Machine(**MAC, os_version="14.5", gpus=(M2,)), (), "2.15.0", "default", set()),
    ("apple-m2-macos13", Machine(**MAC, os_version="13.6.1", gpus=(M2,)), (), "2.11.0", "default",
     {"platform-unsupported"}),
    ("intel-mac", Machine(os="macos", arch="x86_64", os_version="13.6", python="3.11"), (), "2.2.2", "default",
     {"platform-unsupported"}),
    ("intel-mac-pinned", Machine(os="macos", arch="x86_64", python="3.11"), ("torch==2.5.1",), None, None,
     {"platform-unsupported"}),
    ("graviton", Machine(**ARM), (), "2.15.0", "cpu", set()),
    ("no-gpu-linux", Machine(**LINUX), (), "2.15.0", "cpu", set()),
    ("windows-cpu", Machine(**WINDOWS), (), "2.15.0", "cpu", set()),
    ("jetson-orin", Machine(**ARM, jetson="36.4.3", gpus=(ORIN,)), (), None, None, {"platform-unsupported"}),
    # a Jetson's driver is versioned by L4T: 580.00 is the 580 branch, not a release below the desktop 580.65.06
    ("jetson-thor-l4t-driver", Machine(**ARM, jetson="38.2.0", nvidia_driver="580.00", gpus=(THOR,)), (), "2.15.0",
     "cu130", {"integrated-gpu-only"}),
    ("jetson-thor-r575", Machine(**ARM, jetson="38.2.0", nvidia_driver="575.00", gpus=(THOR,)), (), "2.15.0",
     "cpu", {"driver-too-old"}),
    ("py310-asks-2.15", Machine(**{**LINUX, "python": "3.10"}), ("torch==2.15.0",), None, None,
     {"python-unsupported"}),
    ("py310-unpinned", Machine(**{**LINUX, "python": "3.10"}), (), "2.14.1", "cpu", {"python-unsupported"}),
    ("py314t", Machine(**{**LINUX, "python": "3.14t"}, nvidia_driver="580.95.05",
                       gpus=(nvidia("NVIDIA H100", "9.0"),)), (), "2.15.0", "cu130", set()),
    ("py313t", Machine(**{**LINUX, "python": "3.13t"}), (), "2.12.0", "cpu", {"python-unsupported"}),
    ("centos7", Machine(**{**LINUX, "glibc": "2.17"}, nvidia_driver="535.183.01",
                        gpus=(nvidia("Tesla V100-PCIE-16GB", "7.0"),)), (), "2.6.0", "cu118",
     {"platform-unsupported", "gpu-arch-unsupported"}),
    ("musl", Machine(os="linux", arch="x86_64", python="3.12", musl="1.2.5"), (), None, None,
     {"platform-unsupported"}),
    ("windows-arm64", Machine(os="windows", arch="arm64", python="3.12"), (), None, None, {"platform-unsupported"}),
]


@pytest.mark.parametrize(("machine", "packages", "torch", "variant", "codes"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_choice_and_warnings(machine, packages, torch, variant, codes):
    check(plan_for(machine, *packages), torch, variant, codes)


def test_apple_silicon_uses_the_default_index_with_mps():
    plan = plan_for(Machine(**MAC, os_version="15.1", gpus=(M2,)), "torch", "torchvision")
    assert plan.choice.index_url is None and plan.gpu_accelerated is True
    assert dict(plan.choice.packages) == {"torch": "2.15.0", "torchvision": "0.29.2"}
    assert "--index-url" not in command_lines(plan)["pip"]


def test_apple_nightly_uses_the_nightly_cpu_index():
    plan = plan_for(Machine(**MAC, gpus=(M2,)), channel="nightly")
    assert plan.choice.index_url == "https://download.pytorch.org/whl/nightly/cpu"


def test_macos_minimum_is_explained():
    plan = plan_for(Machine(**MAC, os_version="13.6.1", gpus=(M2,)))
    assert "need macOS ≥ 14.0, found 13.6.1" in warning(plan, "platform-unsupported")


def test_intel_mac_pinned_names_the_last_release():
    plan = plan_for(Machine(os="macos", arch="x86_64", python="3.11"), "torch==2.5.1")
    assert "2.2.2" in warning(plan, "platform-unsupported")


def test_cpu_machine_never_gets_the_default_index_cuda_wheel():
    plan = plan_for(Machine(**LINUX))
    assert plan.choice.index_url == "https://download.pytorch.org/whl/cpu"
    assert plan.choice.packages["torch"] == "2.15.0+cpu"
    assert command_lines(plan)["pip"] == ("python -m pip install torch==2.15.0+cpu "
                                    "--index-url https://download.pytorch.org/whl/cpu")


def test_jetson_points_to_nvidia_wheels_and_rejects_index_cuda_builds():
    plan = plan_for(Machine(**ARM, jetson="36.4.3", gpus=(ORIN,)))
    assert "Jetson" in warning(plan, "platform-unsupported")
    assert "not the Jetson L4T 36.4.3 driver stack" in rejected(plan, "2.15.0", "cu130")
    assert command_lines(plan) == {}


def test_jetson_cpu_on_request():
    plan = plan_for(Machine(**ARM, jetson="36.4.3", gpus=(ORIN,)), variant="cpu")
    check(plan, "2.15.0", "cpu", set())


def test_jetson_thor_sbsa_uses_aarch64_cuda_builds():
    plan = plan_for(Machine(**ARM, jetson="38.2.0", nvidia_driver="580.65.06", gpus=(THOR,)))
    check(plan, "2.15.0", "cu130", {"integrated-gpu-only"})
    assert any("SBSA" in n for n in plan.notes)


def test_python_gate_names_versions():
    plan = plan_for(Machine(**{**LINUX, "python": "3.10"}), "torch==2.15.0")
    assert "no wheels for Python 3.10" in warning(plan, "python-unsupported")
    assert any("2.14.1" in r for r in plan.reasons)


def test_free_threaded_gate_says_free_threaded():
    plan = plan_for(Machine(**{**LINUX, "python": "3.13t"}))
    assert "free-threaded Python 3.13t" in warning(plan, "python-unsupported")


def test_glibc_gate_names_manylinux_floor():
    plan = plan_for(Machine(**{**LINUX, "glibc": "2.17"}))
    assert "need glibc ≥ 2.28 (manylinux), found 2.17" in warning(plan, "platform-unsupported")


def test_inferred_facts_become_notes():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(nvidia("NVIDIA H100", "9.0"),)))
    assert "that torch 2.15.0+cu130 wheels exist is inferred: the variant set of torch 2.15.0 is inferred" in plan.notes
    assert any("arch list of 2.15.0+cu130 on linux_x86_64 is inferred" in n for n in plan.notes)


@pytest.mark.parametrize(("machine", "packages", "variant", "build"), [
    (Machine(**LINUX, nvidia_driver="580.95.05", gpus=(nvidia("NVIDIA H100", "9.0"),)), ("torch==2.12.1",), "cu129",
     "torch 2.12.1+cu129"),
    (Machine(**LINUX, rocm="7.2.0", gpus=(Gpu("amd", "AMD Instinct MI300X", gfx="gfx942"),)), ("torch==2.14.1",),
     "rocm7.2", "torch 2.14.1+rocm7.2"),
])
def test_a_wheel_known_only_from_a_secondary_source_says_its_existence_is_uncertain(machine, packages, variant,
                                                                                    build):
    plan = plan_for(machine, *packages, variant=variant)
    assert plan.choice is not None and plan.choice.variant == variant
    assert f"that {build} wheels exist rests on a secondary or inferred source only, not on PyTorch's release " \
           "matrix: the index may not have them" in plan.notes


def test_a_wheel_from_the_release_matrix_has_no_existence_note():
    plan = plan_for(Machine(**LINUX, nvidia_driver="580.95.05", gpus=(nvidia("NVIDIA H100", "9.0"),)),
                    "torch==2.14.1", variant="cu130")
    assert not any("exist" in n for n in plan.notes), plan.notes


def test_a_live_index_confirms_existence():
    from torch_install.index.facts import IndexFacts, ReleaseFacts
    from torch_install.index.merge import merge

    facts = IndexFacts("https://download.pytorch.org/whl", (ReleaseFacts("2.14.1", ("cpu", "rocm7.2"), ("3.12",)),),
                       0.0)
    matrix = merge(TEST_MATRIX, facts, "linux_x86_64")
    machine = Machine(**LINUX, gpus=(Gpu("amd", "AMD Instinct MI300X", gfx="gfx942"),))
    plan = resolve(machine, Request(packages=("torch==2.14.1",), variant="rocm7.2"), matrix)
    assert plan.choice is not None and plan.choice.variant == "rocm7.2"
    assert not any("exist" in n or "secondary source" in n for n in plan.notes), plan.notes


@pytest.mark.parametrize(("request_kwargs", "message"), [
    ({"packages": ("torch>=>2",)}, "not a valid requirement"),
    ({"packages": ("numpy",)}, "only torch, torchvision, torchaudio"),
    ({"packages": ("torch==2.3.2",)}, "no torch release in the compatibility matrix"),  # in its range: none such
    ({"variant": "cuda12"}, "not a wheel variant"),
    ({"variant": "rocm6.4"}, "the PyTorch index has no ROCm builds for windows"),
    ({"channel": "beta"}, "channel 'beta'"),
    ({"index_base": "ftp://mirror"}, "not an http(s) URL"),
])
def test_bad_requests_are_input_errors(request_kwargs, message):
    packages = request_kwargs.pop("packages", ("torch",))
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan_for(Machine(**WINDOWS), *packages, **request_kwargs)


def test_machine_without_os_is_an_input_error():
    with pytest.raises(InputError, match="os and arch"):
        plan_for(Machine(python="3.12"))


def test_plan_json_round_trip_has_the_contract_keys():
    plan = plan_for(Machine(**LINUX, nvidia_driver="550.54.15", gpus=(nvidia("NVIDIA H100", "9.0"),)))
    data = plan_document(plan)
    assert data["choice"]["variant"] == "cu126" and data["rejected"][0]["reason"]
    assert data["warnings"][0]["code"] == "driver-too-old"
    assert set(data["commands"]) == {"pip", "uv"}


def test_bare_names_and_specifiers_resolve_alike():
    machine = Machine(**LINUX, nvidia_driver="580.95.05", gpus=(nvidia("NVIDIA H100", "9.0"),))
    bare = plan_for(machine, "TorchVision")
    spec = plan_for(machine, "torch>=2.0", "torchvision>=0")
    assert dict(bare.choice.packages) == dict(spec.choice.packages) == {"torch": "2.15.0+cu130",
                                                                       "torchvision": "0.29.2"}


def test_package_resolve_is_the_function_after_every_submodule_import():
    import importlib
    import pkgutil

    import torch_install.resolver as resolver

    for module in pkgutil.iter_modules(resolver.__path__):
        importlib.import_module(f"torch_install.resolver.{module.name}")
    assert callable(resolver.resolve) and resolver.resolve.__module__ == "torch_install.resolver.choose"


@pytest.mark.parametrize(("torch", "hint"), [("torch>=2.16", True), ("torch==3.*", True), ("torch<2", False)])
def test_a_request_beyond_the_matrix_says_where_newer_releases_are(torch: str, hint: bool) -> None:
    with pytest.raises(InputError) as raised:
        plan_for(Machine(**LINUX), torch)
    assert ("--online reads it" in str(raised.value)) is hint
