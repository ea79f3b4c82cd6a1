"""Unknown is never impossible: only a declared requirement, or a build that does not exist for the variant, holds
torch; what a package was built for without declaring it is a preference with a warning; a package version whose
needs are not known adds no constraint and is named (``requirement-unknown``) with ``--online``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_install.cli import main
from torch_install.errors import InputError
from torch_install.machine import Gpu, Machine
from torch_install.resolver import Request, resolve
from torch_install.resolver.companion_facts import load_packages
from torch_install.resolver.matrix import load_matrix
from torch_install.resolver.plan import Wanted

RTX_4090 = ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06"]
CPU = ["--os", "linux", "--arch", "x86_64"]


def plan(capsys: pytest.CaptureFixture[str], *argv: str, python: str = "3.12") -> dict:
    code = main(["plan", *argv, "--python", python, "--format", "json"])
    out, err = capsys.readouterr()
    assert code in (0, 4), err
    return json.loads(out)


def codes(p: dict) -> list[str]:
    return [w["code"] for w in p["warnings"]]


# -- the cases the table's metadata decides ------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "python", "torch", "variant", "installs"), [
    (["xformers==0.0.20"], "3.11", "2.0.1", None, "xformers==0.0.20 torch==2.0.1+"),  # its wheel: the user's index
    (["xformers==0.0.28.post3"], "3.12", "2.5.1", "cu124", "xformers==0.0.28.post3 --index-url"),
    (["xformers>=0.0.25,<0.0.28"], "3.12", "2.4.0", "cu121", "xformers==0.0.27.post2 --index-url"),
    (["vllm>=0.8,<0.10"], "3.12", "2.7.0", None, "vllm==0.9.2 torch==2.7.0+"),
    (["vllm==0.6.3"], "3.12", "2.4.0", None, "vllm==0.6.3 torch==2.4.0+"),
    (["torch==2.7.1", "torchao==0.10.0"], "3.12", "2.7.1", "cu126", "torchao==0.10.0 --index-url"),
    (["torch-scatter==2.1.2+pt23cu121"], "3.12", "2.3.1", "cu121", "torch-2.3.0+cu121.html"),
    (["torch", "fbgemm-gpu==1.4.2"], "3.12", "2.9.1", None, "fbgemm-gpu==1.4.2"),
])
def test_a_table_package_plans_as_its_metadata_says(argv: list[str], python: str, torch: str, variant: str | None,
                                                   installs: str, capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *RTX_4090, *argv, python=python)
    assert p["choice"]["torch"] == torch and (variant is None or p["choice"]["variant"] == variant), p["choice"]
    assert installs in p["commands"]["pip"], p["commands"]["pip"]
    assert not [w for w in p["warnings"] if w["blocking"]]


def test_a_torch_a_package_was_built_for_is_a_preference_with_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    held = plan(capsys, *RTX_4090, "torch", "torchao==0.10.0")
    assert held["choice"]["torch"] == "2.6.0"  # the torch it was built for, where nothing else decides
    pinned = plan(capsys, *RTX_4090, "torch==2.7.1", "torchao==0.10.0")
    warning = next(w for w in pinned["warnings"] if w["code"] == "built-for-another-torch")
    assert warning["message"] == ("torchao==0.10.0 (command line): torchao 0.10.0 is built for torch==2.6.0 and "
                                  "declares no torch requirement: with torch 2.7.1 its compiled parts may not load "
                                  "(its Python code does)") and not warning["blocking"]


def test_a_yanked_release_is_never_chosen_unless_pinned_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    ranged = plan(capsys, *RTX_4090, "torch", "fbgemm-gpu>=1.4,<1.5")
    assert "fbgemm-gpu==1.4.0" in ranged["commands"]["pip"]  # 1.4.2 is newer, and yanked
    pinned = plan(capsys, *RTX_4090, "torch", "fbgemm-gpu==1.4.2")
    assert "fbgemm-gpu==1.4.2" in pinned["commands"]["pip"]
    assert any("yanked on the default index (1.4.2): pip takes it only because it is pinned exactly" in w["message"]
               for w in pinned["warnings"])
    assert main(["plan", *RTX_4090, "--python", "3.12", "torch", "fbgemm-gpu>1.4.0,<1.5"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "fbgemm-gpu>1.4.0,<1.5 needs a release that is not yanked (1.4.2 is: pip takes a yanked release only when "
        "pinned exactly, fbgemm-gpu==1.4.2)")


@pytest.mark.parametrize("package", ["sglang", "torch-tensorrt", "unsloth", "xformers==0.0.99", "vllm>=0.99",
                                     "torchao==9.0.0"])
def test_offline_a_package_whose_needs_are_unknown_is_named_with_online(package: str,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *RTX_4090, "torch", package)
    free = plan(capsys, *RTX_4090, "torch")
    assert (p["choice"]["torch"], p["choice"]["variant"]) == (free["choice"]["torch"], free["choice"]["variant"])
    warning = next(w for w in p["warnings"] if w["code"] == "requirement-unknown")
    assert package.split("=")[0].split(">")[0] in warning["message"] and "--online" in warning["message"]
    assert package in p["commands"]["pip"] or f"'{package}'" in p["commands"]["pip"]


def test_no_message_ends_in_an_empty_requirement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *RTX_4090, "--python", "3.12", "xformers==0.0.32.post2", "vllm>=0.30"]) == 2
    err = capsys.readouterr().err
    assert "needs torch ==" in err and "needs torch ;" not in err and not err.rstrip().endswith("needs torch")


# -- the property ------------------------------------------------------------------------------------------------

MATRIX = load_matrix()._replace(packages=load_packages())
MACHINES = [
    Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35"),
    Machine(os="linux", arch="x86_64", python="3.10", glibc="2.35", nvidia_driver="550.54.15",
            gpus=(Gpu("nvidia", "NVIDIA GeForce RTX 4090", compute_capability="8.9"),)),
    Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", nvidia_driver="580.65.06",
            gpus=(Gpu("nvidia", "NVIDIA GeForce GTX 1080", compute_capability="6.1"),)),
    Machine(os="windows", arch="x86_64", python="3.12", nvidia_driver="580.88",
            gpus=(Gpu("nvidia", "NVIDIA GeForce RTX 4090", compute_capability="8.9"),)),
    Machine(os="linux", arch="aarch64", python="3.13", glibc="2.39"),
    Machine(os="macos", arch="arm64", python="3.12", os_version="15.1"),
]
TORCH = st.sampled_from(["torch", "torch>=2.8", "torch<2.10", "torch==2.7.1", "torch==2.9.1+cu128", "torch~=2.4.0"])
KNOWN = st.sampled_from(["", "xformers", "vllm", "torchao", "fbgemm-gpu", "flash-attn", "torch-scatter",
                         "torchao==0.13.0", "vllm<0.12", "xformers==0.0.29.post3"])
UNKNOWN = st.builds("{}{}".format, st.sampled_from(["xformers", "vllm", "torchao", "fbgemm-gpu", "torchrec",
                                                    "flash-attn", "sglang", "torch-tensorrt", "mystery-kernels"]),
                    st.sampled_from(["==0.0.99", "==9.9.9", ">=50", "==1.0.0rc1", "==0.99.0.dev3", "~=77.0"]))


def outcome(machine: Machine, packages: list[str]) -> tuple[str, str] | None:
    wanted = tuple(Wanted(text=p, name=p.split("=")[0].split(">")[0].split("<")[0].split("~")[0],
                          origin="command line") for p in packages[1:])
    try:
        result = resolve(machine, Request(packages=(packages[0],), requirements=wanted), MATRIX)
    except InputError:
        return None
    return (result.choice.torch, result.choice.variant) if result.choice else None


def unknown_never_refuses(machine: Machine, torch: str, known: str, unknown: str) -> None:
    base = [torch, *([known] if known else [])]
    before = outcome(machine, base)
    if before is None:
        return  # not solvable to begin with
    after = outcome(machine, [*base, unknown])
    assert after is not None, (machine, base, unknown)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MACHINES), TORCH, KNOWN, UNKNOWN)
def test_a_version_the_table_does_not_know_never_turns_a_solvable_request_into_a_refusal(
        machine: Machine, torch: str, known: str, unknown: str) -> None:
    unknown_never_refuses(machine, torch, known, unknown)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.sampled_from(MACHINES), TORCH, KNOWN, UNKNOWN)
def test_a_version_the_table_does_not_know_never_refuses_over_many_requests(
        machine: Machine, torch: str, known: str, unknown: str) -> None:
    unknown_never_refuses(machine, torch, known, unknown)


def test_what_a_lock_says_only_torch_needs_is_not_named(capsys: pytest.CaptureFixture[str]) -> None:
    """A compiled lock's ``# via torch`` lines (and theirs: mpmath via sympy) are torch's own needs, not packages
    that might need torch; the lines the user asked for are named."""
    from pathlib import Path

    lock = Path(__file__).parent / "fixtures" / "requirements" / "uv-compiled.txt"
    p = plan(capsys, *CPU, "-r", str(lock))
    warning = next(w["message"] for w in p["warnings"] if w["code"] == "requirement-unknown")
    assert warning.startswith("what numpy, requests need of torch is not known here")


def test_a_torchvision_pin_a_package_declares_holds_like_its_torch_pin(capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM's releases pin torchvision (Requires-Dist): a request's own torchvision pin chooses among them, and one
    that none of them allows is one input error naming both, not a second step pip cannot resolve."""
    p = plan(capsys, *CPU, "vllm", "torchvision==0.28.0")
    assert p["choice"]["packages"]["torchvision"].startswith("0.28.0") and "vllm==0.32.0" in p["commands"]["pip"]
    assert main(["plan", *CPU, "--python", "3.12", "vllm", "torchvision==0.29.2"]) == 2
    err = capsys.readouterr().err
    assert "vllm needs torch ==2.14.0" in err and "with torchvision==0.29.0" in err and len(err.splitlines()) == 1
