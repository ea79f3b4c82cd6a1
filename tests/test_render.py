"""Rendering a Plan: commands, requirements, pyproject, URL, JSON and the human summary (exact lines)."""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from resolve_cases import TEST_MATRIX
from torch_install.machine import Gpu, Machine
from torch_install.render import FORMATS, render
from torch_install.render.project import render_pyproject
from torch_install.resolver.plan import Choice, Plan, PlanWarning, Rejection, Request
from torch_install.resolver.steps import command_lines

CU128 = "https://download.pytorch.org/whl/cu128"
RTX_4090 = Gpu(vendor="nvidia", name="NVIDIA GeForce RTX 4090", pci_id="10de:2684", compute_capability="8.9")
LINUX_4090 = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.39", nvidia_driver="570.133.07",
                     gpus=(RTX_4090,))


def cuda_plan(channel: str = "stable", index_url: str = CU128, **overrides: object) -> Plan:
    choice = Choice(variant="cu128", torch="2.9.1", index_url=index_url,
                    packages={"torch": "2.9.1+cu128", "torchvision": "0.24.1+cu128"})
    fields = dict(machine=LINUX_4090, request=Request(packages=("torch", "torchvision"), channel=channel),
                  choice=choice, gpu_accelerated=True,
                  reasons=("driver 570.133.07 runs CUDA 12.8 builds (needs >= 525.60.13)",
                           "torch 2.9.1 cu128 is built for sm_89"),
                  rejected=(Rejection("cu130", "2.9.1", "cu130 rejected: needs driver >= 580, found 570.133.07"),
                            Rejection("cu126", "2.9.1", "an older CUDA than cu128")))
    fields.update(overrides)
    return Plan(**fields)  # type: ignore[arg-type]


MAC_PLAN = Plan(machine=Machine(os="macos", arch="arm64", python="3.13", gpus=(Gpu(vendor="apple", family="m2"),)),
                request=Request(), choice=Choice("default", "2.9.1", None, {"torch": "2.9.1"}), gpu_accelerated=True)


def test_commands_pin_local_label_and_index() -> None:
    assert command_lines(cuda_plan()) == {
        "pip": f"python -m pip install torch==2.9.1+cu128 torchvision==0.24.1+cu128 --index-url {CU128}",
        "uv": f"uv pip install torch==2.9.1+cu128 torchvision==0.24.1+cu128 --default-index {CU128}",
    }


def test_nightly_commands_allow_prereleases() -> None:
    nightly = "https://download.pytorch.org/whl/nightly/cu128"
    commands = command_lines(cuda_plan(channel="nightly", index_url=nightly))
    assert shlex.split(commands["pip"])[4:] == ["torch==2.9.1+cu128", "torchvision==0.24.1+cu128", "--pre",
                                                "--index-url", nightly]
    assert "--prerelease allow --default-index" in commands["uv"]  # beats an exported UV_DEFAULT_INDEX


def test_default_index_has_no_index_flag() -> None:
    assert command_lines(MAC_PLAN) == {"pip": "python -m pip install torch==2.9.1", "uv": "uv pip install torch==2.9.1"}
    assert render(MAC_PLAN, "url") == ""


def test_commands_quote_hostile_values() -> None:
    hostile = "https://mirror.example/whl/cu128?a=1&b=$(touch x)"
    plan = cuda_plan(index_url=hostile)
    argv = shlex.split(command_lines(plan)["pip"])
    assert argv[-2:] == ["--index-url", hostile]
    assert "'https://mirror.example/whl/cu128?a=1&b=$(touch x)'" in command_lines(plan)["uv"]


def test_no_choice_renders_no_commands() -> None:
    plan = cuda_plan(choice=None, gpu_accelerated=False)
    assert command_lines(plan) == {}
    for name in ("url", "pip", "uv", "requirements", "pyproject"):
        assert render(plan, name) == ""


def test_url_format() -> None:
    assert render(cuda_plan(), "url") == CU128


def test_requirements_format_exact() -> None:
    assert render(cuda_plan(), "requirements").splitlines() == [
        "# cu128 build of torch 2.9.1 for linux x86_64 (glibc 2.39); Python 3.12; "
        "NVIDIA GeForce RTX 4090 (sm 8.9); NVIDIA driver 570.133.07",
        f"--index-url {CU128}",
        "torch==2.9.1+cu128",
        "torchvision==0.24.1+cu128",
    ]
    assert "--pre" in render(cuda_plan(channel="nightly"), "requirements").splitlines()


def test_pyproject_format_exact() -> None:
    assert render_pyproject(cuda_plan()).splitlines() == [
        "# Merge into pyproject.toml",
        "# (or let torch-install do it: --merge pyproject.toml)",
        "[project]",
        "dependencies = [",
        '  "torch==2.9.1+cu128",',
        '  "torchvision==0.24.1+cu128",',
        "]",
        "",
        "[[tool.uv.index]]",
        'name = "torch-install-cu128"',
        f'url = "{CU128}"',
        "explicit = true",
        "",
        "[tool.uv.sources]",
        'torch = { index = "torch-install-cu128" }',
        'torchvision = { index = "torch-install-cu128" }',
    ]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_pyproject_is_valid_toml_and_routes_every_package_to_the_explicit_index() -> None:
    import tomllib

    data = tomllib.loads(render_pyproject(cuda_plan(channel="nightly",
                                                    index_url="https://download.pytorch.org/whl/nightly/cu128")))
    (index,) = data["tool"]["uv"]["index"]
    assert index == {"name": "torch-install-nightly-cu128", "url": "https://download.pytorch.org/whl/nightly/cu128",
                     "explicit": True}
    assert data["tool"]["uv"]["sources"] == {"torch": {"index": index["name"]}, "torchvision": {"index": index["name"]}}
    assert data["tool"]["uv"]["prerelease"] == "allow"
    assert data["project"]["dependencies"] == ["torch==2.9.1+cu128", "torchvision==0.24.1+cu128"]


def test_pyproject_for_default_index_has_no_index_entries() -> None:
    assert "[[tool.uv.index]]" not in render_pyproject(MAC_PLAN)
    assert '  "torch==2.9.1",' in render_pyproject(MAC_PLAN).splitlines()


def test_json_follows_the_contract() -> None:
    data = json.loads(render(cuda_plan(), "json"))
    assert data["choice"] == {"variant": "cu128", "torch": "2.9.1", "index_url": CU128,
                              "packages": {"torch": "2.9.1+cu128", "torchvision": "0.24.1+cu128"}, "companions": [],
                              "distribution": "pytorch-index", "vendor_index": None, "extras": {}, "devices": []}
    assert data["gpu_accelerated"] is True
    assert data["rejected"][0] == {"variant": "cu130", "torch": "2.9.1",
                                   "reason": "cu130 rejected: needs driver >= 580, found 570.133.07"}
    assert data["commands"] == command_lines(cuda_plan())
    assert data["machine"]["gpus"][0]["compute_capability"] == "8.9"
    assert data["request"]["packages"] == ["torch", "torchvision"]


def test_text_summary_exact() -> None:
    plan = cuda_plan(warnings=(PlanWarning("mixed-gpus", "GPU 1 is ignored"),), notes=("arch list inferred",))
    assert render(plan, "text").splitlines() == [
        "Machine:  linux x86_64 (glibc 2.39); Python 3.12; NVIDIA GeForce RTX 4090 (sm 8.9); "
        "NVIDIA driver 570.133.07",
        f"Choice:   torch 2.9.1, variant cu128 (GPU), from {CU128}",
        "Why:      driver 570.133.07 runs CUDA 12.8 builds (needs >= 525.60.13)",
        "Why:      torch 2.9.1 cu128 is built for sm_89",
        "Rejected: cu130 torch 2.9.1: needs driver >= 580, found 570.133.07 (+1 more, see --format json)",
        "Warning:  [mixed-gpus] GPU 1 is ignored",
        "Note:     arch list inferred",
        f"Command:  python -m pip install torch==2.9.1+cu128 torchvision==0.24.1+cu128 --index-url {CU128}",
    ]


def test_text_summary_reports_assumed_fields_and_gpu_details() -> None:
    machine = Machine(os="linux", arch="x86_64", python="3.11", rocm="6.4.1", assumed=("arch", "python"),
                      gpus=(Gpu(vendor="amd", name="AMD Radeon RX 7900 XTX", gfx="gfx1100", count=2),
                            Gpu(vendor="intel", pci_id="8086:a7a0", integrated=True, visible=False)))
    plan = Plan(machine=machine, request=Request(), choice=None, gpu_accelerated=False)
    lines = render(plan, "text").splitlines()
    assert lines == [
        "Machine:  linux x86_64; Python 3.11; AMD Radeon RX 7900 XTX x2 (gfx1100), "
        "intel GPU 8086:a7a0 (integrated, hidden); ROCm 6.4.1 [assumed from this machine: arch, python]",
        "Choice:   none: no build of torch fits this machine",
    ]


def test_formats_registry_names() -> None:
    assert {"text", "url", "pip", "uv", "requirements", "pyproject", "json"} <= set(FORMATS)


def _resolved(machine: Machine, *packages: str) -> Plan:
    from torch_install.resolver import resolve

    return resolve(machine, Request(packages=packages or ("torch",)), TEST_MATRIX)


def test_text_summary_does_not_repeat_the_choice_as_a_reason() -> None:
    h100 = Gpu(vendor="nvidia", name="H100", compute_capability="9.0")
    plan = _resolved(Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", nvidia_driver="550.54.15",
                             gpus=(h100,)))
    lines = render(plan, "text").splitlines()
    assert lines[1] == "Choice:   torch 2.14.1, variant cu126 (GPU), from https://download.pytorch.org/whl/cu126"
    why = [line for line in lines if line.startswith("Why:")]
    assert why == ["Why:      cu126: has sm_90 kernels; driver 550.54.15 runs CUDA 12.6 under minor-version "
                   "compatibility"]
    assert len(lines) == len(set(lines))


def test_text_summary_drops_a_rejection_that_a_warning_already_states() -> None:
    plan = _resolved(Machine(os="linux", arch="x86_64", python="3.10", glibc="2.35"), "torch==2.15.*")
    lines = render(plan, "text").splitlines()
    assert [line[:9] for line in lines] == ["Machine: ", "Choice:  ", "Why:     ", "Warning: ", "Newest:  "]
    assert "no wheels for Python 3.10" in lines[3]
    assert lines[4] == "Newest:   torch 2.15.0 needs Python ≥ 3.11"


def test_text_summary_of_a_driver_without_a_listed_gpu_says_the_model_is_unknown() -> None:
    plan = _resolved(Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", nvidia_driver="580.95.05"))
    lines = render(plan, "text").splitlines()
    assert lines[0] == "Machine:  linux x86_64 (glibc 2.35); Python 3.12; NVIDIA GPU (model unknown); NVIDIA driver " \
                       "580.95.05"
    assert "no GPU" not in lines[0]
    assert plan.gpu_accelerated and plan.choice is not None and plan.choice.variant.startswith("cu")
