"""Machine profiles shared by the resolver tests (real GPU models, drivers and platforms)."""

from __future__ import annotations

import json
from pathlib import Path

from torch_install.machine import Gpu, Machine
from torch_install.resolver import Request, resolve
from torch_install.resolver.matrix import Matrix, matrix_from_dict
from torch_install.resolver.plan import Plan
from torch_install.resolver.vendor_builds import vendor_builds_from_dict

TEST_MATRIX_FILE = Path(__file__).parent / "fixtures" / "matrix" / "test-matrix.json"
TEST_VENDOR_FILE = TEST_MATRIX_FILE.with_name("vendor-builds.json")


def test_matrix() -> Matrix:
    """The frozen test matrix (fixtures/matrix/make_test_matrix.py), with its frozen table of vendor-hosted
    builds: logic tests never read the shipped data."""
    vendor = vendor_builds_from_dict(json.loads(TEST_VENDOR_FILE.read_text(encoding="utf-8")))
    return matrix_from_dict(json.loads(TEST_MATRIX_FILE.read_text(encoding="utf-8")))._replace(vendor_builds=vendor)


TEST_MATRIX = test_matrix()

LINUX = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}
ARM = {"os": "linux", "arch": "aarch64", "python": "3.12", "glibc": "2.39"}
WINDOWS = {"os": "windows", "arch": "x86_64", "python": "3.12", "os_version": "10.0.26100"}


def nvidia(name: str, cc: str, **kw) -> Gpu:
    return Gpu("nvidia", name, compute_capability=cc, **kw)


def amd(name: str, gfx: str, **kw) -> Gpu:
    return Gpu("amd", name, gfx=gfx, **kw)


def intel(name: str, family: str | None, integrated: bool) -> Gpu:
    return Gpu("intel", name, family=family, integrated=integrated)


def plan_for(machine: Machine, *packages: str, **request) -> Plan:
    return resolve(machine, Request(packages=packages or ("torch",), **request), TEST_MATRIX)


def check(plan: Plan, torch: str | None, variant: str | None, codes: set[str]) -> None:
    """Assert the choice and the exact set of warning codes."""
    if torch is None:
        assert plan.choice is None, plan.choice
    else:
        assert plan.choice is not None, plan.warnings
        assert (plan.choice.torch, plan.choice.variant) == (torch, variant), (plan.reasons, plan.warnings)
    assert set(warning_codes(plan)) == codes, plan.warnings


def check_index_build(plan: Plan, torch: str, variant: str, codes: set[str]) -> None:
    """``check``, for a build from PyTorch's index: GPU use follows the variant, the URL names it, the pin carries
    its local label."""
    check(plan, torch, variant, codes)
    assert plan.gpu_accelerated is (variant != "cpu")
    assert plan.choice.index_url == f"https://download.pytorch.org/whl/{variant}"
    assert plan.choice.packages["torch"] == f"{torch}+{variant}"


def rejected(plan: Plan, torch: str, variant: str) -> str:
    """The rejection reason of one (release, variant); fails if it was not considered."""
    reasons = [r.reason for r in plan.rejected if r.torch == torch and r.variant == variant]
    assert reasons, f"{torch}+{variant} not in rejected: {plan.rejected}"
    return reasons[0]


def warning(plan: Plan, code: str) -> str:
    return next(w.message for w in plan.warnings if w.code == code)


def warning_codes(plan: Plan) -> tuple[str, ...]:
    return tuple(w.code for w in plan.warnings)
