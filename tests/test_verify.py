"""The installer's own resolver as the plan's check (environment/verify.py, cli/verify.py): reading what pip and uv
say (captured output, tests/fixtures/installer-output/), the lines a check resolves, uv's target options, and the
next candidate build a conflict leads to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.environment import verify
from torch_install.errors import NoBuild
from torch_install.machine import Machine
from torch_install.resolver import resolve
from torch_install.resolver.companion_facts import load_packages
from torch_install.resolver.matrix import load_matrix
from torch_install.resolver.plan import FileOption, Request, Wanted

OUTPUT = Path(__file__).parent / "fixtures" / "installer-output"
CPU = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.36")


@pytest.mark.parametrize(("name", "line", "asks"), [
    ("pip-torch-conflict.txt", "The user requested torch==2.15.0+cpu; serve-kit 1.0 depends on torch==2.14.1",
     ("torch==2.14.1",)),
    ("uv-torch-conflict.txt", "Because all versions of serve-kit depend on torch==2.14.1 and you require "
     "torch==2.15.0+cpu, we can conclude that your requirements and all versions of serve-kit are incompatible. And "
     "because you require serve-kit, we can conclude that your requirements are unsatisfiable.", ("torch==2.14.1",)),
    ("pip-other-conflict.txt", "The user requested numpy<2; needs-numpy2 1.0 depends on numpy>=2", ()),
    ("uv-other-conflict.txt", "Because all versions of needs-numpy2 depend on numpy>=2 and you require needs-numpy2, "
     "we can conclude that you require numpy>=2. And because you require numpy<2, we can conclude that your "
     "requirements are unsatisfiable.", ()),
])
def test_an_installers_conflict_is_one_line_with_the_family_requirements_it_names(name: str, line: str,
                                                                                 asks: tuple[str, ...]) -> None:
    said = (OUTPUT / name).read_text(encoding="utf-8")
    assert verify.conflict_line(said) == line
    assert verify.family_asks(said) == asks
    assert any(mark in said for mark in verify.UNRESOLVABLE)


def test_the_familys_own_requirements_are_not_asks() -> None:
    """torchvision's own pin of torch is the family's, not another package's: it moves nothing."""
    assert verify.family_asks("    torchvision 0.29.0 depends on torch==2.14.0\n    vllm 0.34.0 depends on "
                              "torchaudio==2.11.0\n") == ("torchaudio==2.11.0",)
    assert verify.family_asks("Because all versions of torchvision depend on torch==2.14.0") == ()


def test_a_failure_that_is_no_conflict_is_its_last_error_line() -> None:
    assert verify.conflict_line("Looking in indexes: x\nERROR: Could not find a version that satisfies the "
                                "requirement zzz\nERROR: No matching distribution found for zzz\n") == \
        "No matching distribution found for zzz"
    assert verify.conflict_line("error: Request failed after 3 retries\n") == "Request failed after 3 retries"
    assert len(verify.conflict_line("ERROR: " + "x" * 1000)) == 400


def test_pips_report_gives_each_distribution_and_its_hash() -> None:
    """pip's installation report (its documented format, version 1): ``archive_info.hashes``, or only the older
    ``hash``; a file without one has no hash."""
    report = {"version": "1", "pip_version": "23.2.1", "install": [
        {"download_info": {"url": "https://x/torch-2.9.1+cpu-cp312-cp312-linux_x86_64.whl",
                           "archive_info": {"hash": "sha256=aa", "hashes": {"sha256": "aa"}}},
         "is_direct": False, "requested": True, "metadata": {"name": "torch", "version": "2.9.1+cpu"}},
        {"download_info": {"url": "https://x/MarkupSafe-3.0.2.tar.gz", "archive_info": {"hash": "sha256=bb"}},
         "is_direct": False, "requested": False, "metadata": {"name": "MarkupSafe", "version": "3.0.2"}},
        {"download_info": {"url": "https://x/fsspec-2025.1.0.whl", "archive_info": {}},
         "is_direct": False, "requested": False, "metadata": {"name": "fsspec", "version": "2025.1.0"}}]}
    assert verify._reported(json.dumps(report)) == [
        verify.Resolved("torch", "2.9.1+cpu", ("sha256:aa",)), verify.Resolved("markupsafe", "3.0.2", ("sha256:bb",)),
        verify.Resolved("fsspec", "2025.1.0", ())]
    assert verify._reported("{") == "pip's installation report could not be read"


def test_uvs_compiled_lines_give_each_distribution_and_its_hashes() -> None:
    text = ("filelock==3.20.0 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n    # via torch\n"
            "torch==2.9.1+cpu \\\n    --hash=sha256:cc\n    # via -r build-request.txt\n")
    assert verify._compiled(text) == [verify.Resolved("filelock", "3.20.0", ("sha256:aa", "sha256:bb")),
                                      verify.Resolved("torch", "2.9.1+cpu", ("sha256:cc",))]


@pytest.mark.parametrize(("machine", "options"), [
    (CPU, ["--python-version", "3.12", "--python-platform", "x86_64-manylinux_2_36"]),
    (Machine(os="linux", arch="aarch64", python="3.13t", glibc="2.17"),
     ["--python-version", "3.13", "--python-platform", "aarch64-manylinux_2_17"]),
    (Machine(os="linux", arch="x86_64", python="3.12", musl="1.2.5"),
     ["--python-version", "3.12", "--python-platform", "x86_64-unknown-linux-musl"]),
    (Machine(os="windows", arch="x86_64", python="3.12"),
     ["--python-version", "3.12", "--python-platform", "x86_64-pc-windows-msvc"]),
    (Machine(os="macos", arch="arm64", python="3.12"),
     ["--python-version", "3.12", "--python-platform", "aarch64-apple-darwin"]),
    (Machine(os="linux", arch="ppc64le", python="3.12"), ["--python-version", "3.12"]),
])
def test_uv_resolves_for_the_targets_python_and_platform(machine: Machine, options: list[str]) -> None:
    assert verify.uv_target(machine) == options


def test_the_check_resolves_the_whole_plan_without_hashes() -> None:
    """The build's pins, every other requirement as written (hashes left off), the file's index options, the
    constraints apart, the packages built against torch from elsewhere with their page."""
    matrix = load_matrix()._replace(packages=load_packages())
    request = Request(requirements=(
        Wanted("numpy==1.26.4", "numpy", "lock.txt:3", hashes=("sha256:aa",), file="lock.txt"),
        Wanted("requests<3", "requests", "c.txt:1", constraint=True, file="c.txt"),
        Wanted("torch-scatter", "torch-scatter", "command line")),
        packages=("torch==2.7.1",),
        options=(FileOption("--extra-index-url", "https://mirror.example/simple", "lock.txt:1", "lock.txt"),
                 FileOption("--require-hashes", None, "lock.txt:2", "lock.txt")))
    plan = resolve(CPU, request, matrix)
    requirements, constraints = verify.check_lines(plan)
    assert requirements.splitlines() == ["--extra-index-url https://mirror.example/simple", "torch==2.7.1+cpu",
                                         "numpy==1.26.4", "torch-scatter",
                                         "--find-links https://data.pyg.org/whl/torch-2.7.0+cpu.html"]
    assert constraints == "requests<3\n"


def _checks(*answers: verify.Checked):
    asked = []

    def check(plan):
        asked.append(f"{plan.choice.torch}+{plan.choice.variant}")
        return answers[len(asked) - 1]

    return check, asked


def _serve_kit_plan():
    matrix = load_matrix()
    request = Request(requirements=(Wanted("serve-kit", "serve-kit", "command line"),))
    return resolve(CPU, request, matrix), matrix


def test_a_conflict_naming_a_torch_takes_the_build_it_allows(capsys: pytest.CaptureFixture[str]) -> None:
    from torch_install.cli.verify import verified_plan

    plan, matrix = _serve_kit_plan()
    check, asked = _checks(verify.Checked(False, "serve-kit 1.0 depends on torch==2.14.1", ("torch==2.14.1",)),
                           verify.Checked(True))
    chosen = verified_plan(plan, CPU, matrix, "pip", check)
    assert asked == ["2.15.0+cpu", "2.14.1+cpu"] and chosen.choice.torch == "2.14.1"
    assert capsys.readouterr().err == ("torch-install: warning: pip's resolver cannot install torch 2.15.0+cpu: "
                                       "serve-kit 1.0 depends on torch==2.14.1; the next candidate: torch 2.14.1+cpu "
                                       "(torch==2.14.1)\n")


def test_a_conflict_naming_the_family_without_a_version_leaves_the_release_out() -> None:
    from torch_install.cli.verify import verified_plan

    plan, matrix = _serve_kit_plan()
    check, asked = _checks(verify.Checked(False, "No matching distribution found for torch==2.15.0+cpu"),
                           verify.Checked(True))
    assert verified_plan(plan, CPU, matrix, "uv", check).choice.torch == "2.14.1" and len(asked) == 2


def test_a_conflict_outside_the_family_is_one_line_and_no_build() -> None:
    from torch_install.cli.verify import verified_plan

    plan, matrix = _serve_kit_plan()
    check, _ = _checks(verify.Checked(False, "The user requested numpy<2; needs-numpy2 1.0 depends on numpy>=2"))
    with pytest.raises(NoBuild) as failed:
        verified_plan(plan, CPU, matrix, "pip", check)
    assert str(failed.value) == ("pip's resolver cannot install the plan (torch 2.15.0+cpu): The user requested "
                                 "numpy<2; needs-numpy2 1.0 depends on numpy>=2")


def test_a_check_that_could_not_run_says_so_and_keeps_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    from torch_install.cli.verify import verified_plan

    plan, matrix = _serve_kit_plan()
    check, _ = _checks(verify.Checked(False, skipped="uv failed (exit code 2): Request failed after 3 retries"))
    assert verified_plan(plan, CPU, matrix, "uv", check) is plan
    assert "the plan was not checked with uv's resolver: uv failed (exit code 2)" in capsys.readouterr().err


def test_candidates_end_after_a_few_builds() -> None:
    from torch_install.cli.verify import CANDIDATES, verified_plan

    plan, matrix = _serve_kit_plan()
    failing = verify.Checked(False, "torch: no matching distribution")
    check, asked = _checks(*[failing] * CANDIDATES)
    with pytest.raises(NoBuild, match=f"cannot install any of the {CANDIDATES} builds tried"):
        verified_plan(plan, CPU, matrix, "pip", check)
    assert len(asked) == CANDIDATES


@pytest.mark.parametrize("users", ["", "/mine.txt"])
def test_the_check_sets_the_environments_own_pin_aside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       users: str) -> None:
    """pip's check runs without the pin an install replaces, the user's constraint files kept; where the pin was
    the only one, an empty file stands in (pip ignores an option set empty, and would read the files' value)."""
    import os

    from torch_install.environment.pin import constraints_path

    for name in [n for n in os.environ if n.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "xdg"))
    (tmp_path / "pip.conf").write_text(f"[install]\nconstraint = {users} {constraints_path(str(tmp_path))}\n")
    environ = verify._without_our_pin(str(tmp_path))
    assert environ is not None and environ["PIP_CONSTRAINT"] == (users or os.devnull)
    (tmp_path / "pip.conf").write_text("[install]\nconstraint = /mine.txt\n")
    assert verify._without_our_pin(str(tmp_path)) is None
