"""The doctor reads which build each family member and each package built against torch is (version.py, the
version's label, direct_url.json, the wheel's tags), judges them by the plan's own rules, and fixes a wrong build by
installing that package again from where its right build comes. The environments are pip's own installs of
generated wheels (``tests/site_packages.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from doctor_cases import MACHINES, case_site, interpreter
from torch_install.doctor import Report, diagnose
from torch_install.doctor.flavour import built_for, torch_flavour, url_label
from torch_install.doctor.inspect import Installed, inspect_environment
from torch_install.environment.dists import Dist, read_dist
from torch_install.index.wheel_metadata import build_of, requires_dist
from torch_install.resolver import Request, resolve
from torch_install.resolver.matrix import load_matrix

MATRIX = load_matrix()
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def doctor(case: str, machine: str = "no-gpu") -> Report:
    return diagnose(MACHINES[machine], inspect_environment(interpreter(case_site(case))), MATRIX,
                    environ={})


def mismatches(report: Report) -> dict[str, tuple[str, ...]]:
    return {f.title.split()[0]: f.evidence for f in report.findings if f.code == "companion-mismatch"}


def test_the_default_indexs_cuda_torchvision_next_to_a_cpu_torch_is_found_and_reinstalled() -> None:
    report = doctor("cpu-2.15.0-torchvision-cu132")
    found = mismatches(report)
    assert list(found) == ["torchvision"] and report.exit_code == 1
    assert found["torchvision"][0] == ("torchvision is a cu132 build, torch a cpu build (torchvision/version.py: "
                                       "__version__ = '0.29.2+cu132')")
    assert report.fix is not None  # the same version: pip keeps it unless told, and only it is wrong
    assert report.fix.command == ("/env/bin/python -m pip install --force-reinstall --no-deps torchvision==0.29.2 "
                                  f"--index-url {CPU_INDEX}")


def test_pyg_libraries_of_another_variant_next_to_a_cpu_torch_are_found_and_taken_from_the_right_page() -> None:
    report = doctor("cpu-2.7.1-pyg-cu118")
    found = mismatches(report)
    assert sorted(found) == ["torch-scatter", "torch-sparse"]
    assert found["torch-scatter"][0] == ("torch-scatter is a cu118 build, torch a cpu build "
                                         "(torch_scatter-2.1.2+pt27cu118.dist-info: version 2.1.2+pt27cu118)")
    assert report.fix is not None
    assert report.fix.command == ("/env/bin/python -m pip install --force-reinstall --no-deps torch-scatter==2.1.2 "
                                  "torch-sparse==0.6.18 --find-links https://data.pyg.org/whl/torch-2.7.0+cpu.html")


def test_a_package_installed_from_a_url_is_the_build_of_the_index_directory_it_came_from() -> None:
    site = case_site("cpu-2.8.0-xformers-cu128-url")
    [info] = site.glob("xformers-*.dist-info")
    recorded = json.loads((info / "direct_url.json").read_text())  # pip's own PEP 610 record
    dist = read_dist(str(info), str(site), "xformers", "0.0.32.post2", "dist-info")
    assert dist.direct_url == recorded["url"] and dist.direct_url.endswith(
        "/whl/cu128/xformers-0.0.32.post2-cp39-abi3-manylinux_2_28_x86_64.whl")
    found = mismatches(diagnose(MACHINES["no-gpu"], inspect_environment(interpreter(site)), MATRIX, environ={}))
    assert found["xformers"][0].startswith("xformers is a cu128 build, torch a cpu build (xformers-0.0.32.post2"
                                           ".dist-info/direct_url.json: file://")


def test_a_torchaudio_the_plan_chooses_with_its_torch_is_no_error() -> None:
    """vLLM's requirements pin torch==2.13.0 and torchaudio==2.11.0, a decoupled release the plan takes with it."""
    plan = resolve(MACHINES["no-gpu"]._replace(python="3.11"),
                   Request(packages=("torch==2.13.0", "torchaudio==2.11.0")), MATRIX)
    assert plan.choice is not None and plan.choice.packages == {"torch": "2.13.0+cpu", "torchaudio": "2.11.0+cpu"}
    report = doctor("cpu-2.13.0-torchaudio-2.11.0")
    assert not mismatches(report) and report.healthy


def test_a_fix_for_another_reason_keeps_a_companion_version_the_plan_allows() -> None:
    """The fix's plan asks for the installed torchaudio where it goes with the torch kept, so it never fights the
    pin that holds it."""
    from torch_install.doctor import default_planner
    from torch_install.doctor.fix import kept_companions

    installed = inspect_environment(interpreter(case_site("cpu-2.13.0-torchaudio-2.11.0")))
    assert kept_companions(installed, MATRIX, "2.13.0") == ("torchaudio==2.11.0",)
    assert kept_companions(installed, MATRIX, "2.9.1") == ("torchaudio",)  # 2.11.0 is no companion of 2.9.1
    plan = default_planner(MACHINES["rtx4090-570"]._replace(python="3.11"), MATRIX)(
        ("torch==2.13.0", *kept_companions(installed, MATRIX, "2.13.0")))
    assert plan.choice is not None and plan.choice.packages["torchaudio"].startswith("2.11.0+cu")


@pytest.mark.parametrize(("url", "label"), [
    ("https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl", "cu128"),
    ("https://download.pytorch.org/whl/cpu/torchvision-0.29.2-py3-none-manylinux_2_28_x86_64.whl", "cpu"),
    ("file:///w/torch_scatter-2.1.2+pt27cu118-cp311-cp311-linux_x86_64.whl", "pt27cu118"),
    ("https://example.org/simple/torchvision/torchvision-0.29.2-py3-none-any.whl", None),
    ("git+https://github.com/pytorch/vision@v0.29.2", None),
])
def test_a_url_names_the_build_by_its_files_label_or_its_index_directory(url: str, label: str | None) -> None:
    assert url_label(url) == label


def test_a_pure_wheel_has_no_build_to_match() -> None:
    site = case_site("cpu-2.7.1-pyg-cu118")
    [info] = site.glob("torch_scatter-*.dist-info")
    dist = read_dist(str(info), str(site), "torch-scatter", "2.1.2+pt27cu118", "dist-info")
    assert built_for(dist) is not None
    assert built_for(dist._replace(wheel_tags=("py3-none-any",))) is None


def test_a_problem_the_fix_left_as_it_was_is_said() -> None:
    from torch_install.cli.doctor import _unchanged

    before = doctor("cpu-2.15.0-torchvision-cu132")
    assert _unchanged(before, before) == [
        "the fix changed nothing of this: [companion-mismatch] torchvision does not match the installed torch "
        "(torchvision is a cu132 build, torch a cpu build (torchvision/version.py: __version__ = '0.29.2+cu132'); "
        "torch build: torch/version.py: cuda = None, hip = None, xpu = None (__version__ = '2.15.0+cpu'))"]
    assert _unchanged(before, doctor("cpu-2.13.0-torchaudio-2.11.0")) == []


def test_uv_installs_a_wrong_build_again_with_its_own_spelling() -> None:
    from torch_install.resolver.steps import reinstall_args

    plan = resolve(MACHINES["no-gpu"]._replace(python="3.11"), Request(packages=("torch==2.15.0", "torchvision")),
                   MATRIX)
    assert reinstall_args(plan, ("torchvision",), "uv") == ["--reinstall", "--no-deps", "torchvision==0.29.2",
                                                            "--default-index", CPU_INDEX]
    assert reinstall_args(plan, ("xformers",)) == []  # not in the plan: nothing to install again


DEFAULT_INDEX_METADATA = Path(__file__).resolve().parents[1] / "scripts" / "reference" / "default-index" / "metadata"


@pytest.mark.parametrize("path", sorted(DEFAULT_INDEX_METADATA.glob("torch-*linux*_x86_64.whl.metadata")),
                         ids=lambda path: path.name.split("-cp")[0])
def test_an_installed_torch_without_version_py_is_the_build_its_metadata_pins(path: Path) -> None:
    """A torch of the default index whose version.py cannot be read is the build the index's reading of the same
    METADATA gives (the ``(==12.4.127)`` pins of torch 2.6 and older included)."""
    metadata = path.read_text(encoding="utf-8")
    version = next(line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Version: "))
    dist = Dist(name="torch", version=version, path=f"/env/site/torch-{version}.dist-info", location="/env/site",
                requires=tuple(requires_dist(metadata)))
    installed = Installed(interpreter=interpreter(Path("/env/site")), dists=(dist,))
    flavour = torch_flavour(installed)
    expected = build_of(requires_dist(metadata), path.name.removesuffix(".metadata"))
    assert flavour is not None and flavour.version == version
    assert flavour.variant == (expected if expected != "cpu" else "unknown")
    assert flavour.variant.startswith("cu") or version.startswith("2.0.")
