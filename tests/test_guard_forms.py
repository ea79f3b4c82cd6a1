"""The guard's forms, decided without an installer: which pins another index's build satisfies too, and what the
pin of a uv project sets (sources, never a version), by the rules uv applies to sources. The installers' side is
tests/test_guard.py."""

from __future__ import annotations

import pytest

from torch_install.environment.pin import _uv_project_edit
from torch_install.machine import Machine
from torch_install.machine_completion import complete_machine
from torch_install.resolver import Request, resolve
from torch_install.resolver.matrix import load_matrix
from torch_install.resolver.pins import kept_pins, unguarded
from torch_install.resolver.plan import Plan

MATRIX = load_matrix()
LINUX = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35")
MARKER = "sys_platform == 'linux' and platform_machine == 'x86_64'"


def plan(*packages: str, variant: str = "cpu") -> Plan:
    return resolve(complete_machine(LINUX), Request(packages=packages, variant=variant), MATRIX)


def test_the_unlabelled_companions_of_2_15_0_are_said_and_the_labelled_ones_of_2_9_1_are_not() -> None:
    new = plan("torch==2.15.0")
    pins = kept_pins(new, {"torch": "2.15.0+cpu"}, MATRIX)
    assert pins == ["torch==2.15.0+cpu", "torchvision==0.29.2", "torchaudio==2.11.1"]
    assert unguarded(new, pins, MATRIX) == ["torchvision==0.29.2", "torchaudio==2.11.1"]
    old = plan("torch==2.9.1")
    pins = kept_pins(old, {"torch": "2.9.1+cpu"}, MATRIX)
    assert all("+cpu" in pin for pin in pins) and unguarded(old, pins, MATRIX) == []


def test_the_default_indexs_own_build_has_no_other_to_be_swapped_with() -> None:
    release = MATRIX.release("2.15.0")
    own = release.pypi["linux_x86_64"]  # the variant the default index's Linux wheel is
    same = plan("torch==2.15.0", variant=own)
    assert unguarded(same, kept_pins(same, {"torch": f"2.15.0+{own}"}, MATRIX), MATRIX) == []


def _project(dependencies: list[str], extras: dict[str, list[str]] | None = None,
             sources: dict[str, object] | None = None) -> dict[str, object]:
    data: dict[str, object] = {"project": {"name": "demo", "dependencies": dependencies,
                                           "optional-dependencies": extras or {}}}
    if sources is not None:
        data["tool"] = {"uv": {"sources": sources}}
    return data


def test_a_project_gets_the_builds_index_for_its_own_family_requirements_under_this_platforms_marker() -> None:
    wanted, index, lines = _uv_project_edit(_project(["torch", "numpy"], {"vision": ["torchvision>=0.20"]}),
                                            plan("torch", "torchvision"))
    assert index == {"name": "torch-install-cpu", "url": "https://download.pytorch.org/whl/cpu", "explicit": True}
    assert wanted == {name: [{"index": "torch-install-cpu", "marker": MARKER}] for name in ("torch", "torchvision")}
    assert lines == []


def test_our_entries_for_other_platforms_stay_and_this_platforms_is_replaced() -> None:
    mac = {"index": "torch-install-default", "marker": "sys_platform == 'darwin'"}
    old = {"index": "torch-install-cu130", "marker": MARKER}
    wanted, _, _ = _uv_project_edit(_project(["torch"], sources={"torch": [mac, old]}), plan("torch"))
    assert wanted == {"torch": [mac, {"index": "torch-install-cpu", "marker": MARKER}]}


@pytest.mark.parametrize(("extras", "copied"), [
    ({"cpu": ["torch", "torchvision"], "cu126": ["torch", "torchvision"]}, True),
    ({"cpu": ["torch"], "cu126": ["torch"]}, False),  # torchvision is no requirement of those extras
])
def test_the_users_sources_of_torch_choose_the_build_and_uvs_extra_rule_decides_the_copy(
        extras: dict[str, list[str]], copied: bool) -> None:
    torch = [{"index": "pytorch-cpu", "extra": "cpu"}, {"index": "pytorch-cu126", "extra": "cu126"}]
    dependencies = [] if copied else ["torchvision"]
    wanted, index, lines = _uv_project_edit(_project(dependencies, extras, {"torch": torch}),
                                            plan("torch", "torchvision"))
    assert index is None  # the project's own indexes serve
    assert wanted == ({"torchvision": torch} if copied else {})
    if not copied:
        assert lines[1] == ("torchvision: torch's sources are per extra (cpu, cu126), and uv takes an extra's source "
                            "only for that extra's own requirements: add torchvision to them to take the same build")


def test_a_project_that_requires_no_family_member_itself_is_told_why_uv_keeps_nothing() -> None:
    wanted, index, lines = _uv_project_edit(_project(["vllm"]), plan("torch"))
    assert (wanted, index) == ({}, None) and "uv takes an index of the project's own requirements only" in lines[0]
