"""Packages built against one torch, resolved with it: the torch version they allow, the variant they have builds
for, where their build comes from, and the warning that says so (the embedded table,
resolver/data/companions.json)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from script_modules import script
from torch_install.cli import main

ROOT = Path(__file__).resolve().parents[1]
RTX_4090 = ["--os", "linux", "--arch", "x86_64", "--python", "3.12", "--gpu", "RTX 4090", "--nvidia-driver",
            "580.65.06"]
CPU = ["--os", "linux", "--arch", "x86_64", "--python", "3.12"]


def plan_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["plan", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def codes(plan: dict) -> list[str]:
    return [w["code"] for w in plan["warnings"]]


def test_a_pinned_xformers_moves_torch_to_the_release_it_was_built_for(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *RTX_4090, "torch", "torchvision", "xformers==0.0.32.post2")
    assert plan["choice"]["torch"] == "2.8.0" and plan["choice"]["variant"] == "cu128"
    held = next(w for w in plan["warnings"] if w["code"] == "constrained-by")
    assert held["about"] == "newest" and not held["blocking"]
    assert held["message"] == ("xformers==0.0.32.post2 (command line) needs torch==2.8.0: torch 2.8.0 is the newest "
                               "release it allows (not 2.15.0)")
    assert plan["commands"]["pip"] == ("python -m pip install torch==2.8.0+cu128 torchvision==0.23.0+cu128 "
                                       "xformers==0.0.32.post2 --index-url https://download.pytorch.org/whl/cu128")


def test_xformers_takes_the_newest_variant_it_has_a_build_for(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *RTX_4090, "xformers")
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.15.0", "cu130")
    assert {"variant": "cu132", "torch": "2.15.0", "reason": "cu132 rejected: xformers 0.0.35 has no cu132 build on "
            "the PyTorch index (its builds: cu126, cu128, cu130, rocm7.1)"} in plan["rejected"]
    assert "xformers==0.0.35 --index-url https://download.pytorch.org/whl/cu130" in plan["commands"]["pip"]


def test_xformers_on_a_cpu_machine_comes_from_the_users_index_with_a_warning(
        capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *CPU, "torch", "xformers")
    assert plan["choice"]["variant"] == "cpu" and "constrained-by" in codes(plan)
    assert plan["commands"]["pip"].endswith("&& python -m pip install xformers==0.0.35 torch==2.15.0+cpu")


def test_vllm_decides_torch_and_the_companion_it_pins(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *RTX_4090, "vllm", "torchvision", "torchaudio")
    assert plan["choice"]["packages"] == {"torch": "2.14.0+cu130", "torchvision": "0.29.0+cu130",
                                          "torchaudio": "2.11.0+cu130"}
    assert "torchaudio 2.11.0, not 2.11.1: vllm 0.34.0 requires torchaudio==2.11.0" in plan["notes"]
    steps = plan["commands"]["pip"].split(" && ")
    assert steps[1] == ("python -m pip install vllm==0.34.0 torch==2.14.0+cu130 torchvision==0.29.0+cu130 "
                        "torchaudio==2.11.0+cu130")


@pytest.mark.parametrize(("machine", "variant"), [(CPU, "cpu"), (RTX_4090, "cu130")])
def test_the_family_a_package_pins_is_installed_in_the_builds_own_step(machine: list[str], variant: str,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM 0.34.0 requires torch==2.14.0, torchvision==0.29.0 and torchaudio==2.11.0: the user names none of the
    family, and both come from the build's index with its label, not from the user's index in the next step."""
    plan = plan_json(capsys, *machine, "vllm")
    family = {"torch": f"2.14.0+{variant}", "torchvision": f"0.29.0+{variant}", "torchaudio": f"2.11.0+{variant}"}
    assert plan["choice"]["packages"] == family
    build, rest = plan["commands"]["pip"].split(" && ")
    pins = " ".join(f"{name}=={version}" for name, version in family.items())
    assert build == f"python -m pip install {pins} --index-url https://download.pytorch.org/whl/{variant}"
    assert rest == f"python -m pip install vllm==0.34.0 {pins}"
    assert plan["commands"]["uv"].startswith(f"uv pip install {pins} --default-index ")


def test_a_variant_without_a_build_of_the_family_a_package_pins_is_rejected(
        capsys: pytest.CaptureFixture[str]) -> None:
    """torchaudio 2.11.0 (which vLLM pins) has no cu132 build: torch 2.14.0+cu132 is no build for vLLM."""
    plan = plan_json(capsys, *RTX_4090, "vllm")
    rejected = next(r for r in plan["rejected"] if (r["variant"], r["torch"]) == ("cu132", "2.14.0"))
    assert rejected["reason"].startswith("cu132 rejected: vllm 0.34.0 requires torchaudio==2.11.0: torchaudio 2.11.0 "
                                         "(not the match of torch 2.14.0: it pins no one torch) has no cu132 build")


def test_a_bare_family_requirement_of_a_package_takes_the_releases_own_match() -> None:
    """A package read from the user's index that requires a bare ``torchvision`` (and ``torchaudio>=2.11``): each
    goes with the build's step, at the release's match (or the newest decoupled release the specifier allows)."""
    from torch_install.machine import Machine
    from torch_install.resolver import resolve
    from torch_install.resolver.companion_facts import CompanionRelease, Package
    from torch_install.resolver.matrix import load_matrix
    from torch_install.resolver.plan import Request, Wanted

    matrix = load_matrix()
    online = Package("serve-kit", "default", (CompanionRelease(
        "1.0", "==2.14.1", family={"torchvision": "", "torchaudio": ">=2.11"}),))
    matrix = matrix._replace(packages={**matrix.packages, "serve-kit": online})
    machine = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.36")
    plan = resolve(machine, Request(requirements=(Wanted("serve-kit", "serve-kit", "command line"),)), matrix)
    assert plan.choice is not None
    assert dict(plan.choice.packages) == {"torch": "2.14.1+cpu", "torchvision": "0.29.1", "torchaudio": "2.11.1"}


def test_vllm_where_it_has_no_wheels_is_left_out_of_the_commands_with_a_warning(
        capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, "--os", "windows", "--arch", "x86_64", "--python", "3.12", "torch", "vllm")
    warning = next(w for w in plan["warnings"] if "left out of the commands" in w["message"])
    assert warning["code"] == "constrained-by" and "has no wheels for windows_x86_64" in warning["message"]
    assert "vllm" not in plan["commands"]["pip"] and plan["choice"]["torch"] == "2.15.0"  # not moved for it


@pytest.mark.parametrize("profile", ["windows-rx9070xt", "windows-strix-halo"])
def test_a_package_left_out_for_its_platform_keeps_a_vendor_build(profile: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """On a Windows Radeon, vLLM (no Windows wheel) is named and left out; AMD's own build stays the choice."""
    target = ["--target", str(ROOT / "tests/fixtures/profiles" / f"{profile}.json")]
    alone = plan_json(capsys, *target, "torch", "numpy")
    with_vllm = plan_json(capsys, *target, "torch", "vllm", "numpy")
    assert with_vllm["choice"]["variant"] == alone["choice"]["variant"] and with_vllm["gpu_accelerated"]
    assert with_vllm["choice"]["torch"] == alone["choice"]["torch"] and "vllm" not in with_vllm["commands"]["pip"]
    assert [c["from"] for c in with_vllm["choice"]["companions"]] == ["left-out"]
    assert any(w["code"] == "constrained-by" and w["message"].startswith(
        "vllm (command line): vllm has no wheels for windows_x86_64") and "left out of the commands" in w["message"]
        for w in with_vllm["warnings"])


@pytest.mark.parametrize("driver", ["580.88", "552.22"])
def test_a_package_left_out_for_its_platform_does_not_change_the_build(driver: str,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    laptop = ["--os", "windows", "--arch", "x86_64", "--python", "3.12", "--gpu", "RTX 4090", "--nvidia-driver", driver]
    alone = plan_json(capsys, *laptop, "numpy")
    with_vllm = plan_json(capsys, *laptop, "vllm", "numpy")
    assert with_vllm["gpu_accelerated"] and with_vllm["choice"]["variant"] == alone["choice"]["variant"]
    assert with_vllm["choice"]["torch"] == alone["choice"]["torch"]


def test_requirements_that_fit_no_torch_together_are_one_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *RTX_4090, "xformers==0.0.32.post2", "vllm>=0.30"]) == 2
    assert capsys.readouterr().err.strip() == (
        "torch-install: error: torch, xformers==0.0.32.post2, vllm>=0.30: no torch release in the compatibility "
        "matrix (2.0.0–2.15.0) fits them all: xformers==0.0.32.post2 needs torch==2.8.0; vllm>=0.30 needs torch "
        "==2.14.0 or ==2.13.0")


def test_an_older_release_of_a_package_fits_where_its_newest_does_not(capsys: pytest.CaptureFixture[str]) -> None:
    """Every release of a table package is known: vLLM 0.10.2 declares the torch xformers 0.0.32.post2 needs."""
    plan = plan_json(capsys, *RTX_4090, "xformers==0.0.32.post2", "vllm")
    assert plan["choice"]["torch"] == "2.8.0" and "vllm==0.11.0" in plan["commands"]["pip"]


@pytest.mark.parametrize(("requirement", "torch", "pin"), [
    ("torchao", "2.15.0", "torchao==0.18.0"), ("torchao==0.13.0", "2.8.0", "torchao==0.13.0"),
    ("torchao<0.17", "2.10.0", "torchao==0.16.0"),
])
def test_torchao_goes_with_the_torch_it_was_built_against(requirement: str, torch: str, pin: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *RTX_4090, requirement)
    assert plan["choice"]["torch"] == torch and pin in plan["commands"]["pip"].split(" && ")[0]


def test_flash_attn_takes_the_prebuilt_wheel_of_the_chosen_build(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *RTX_4090, "torch<2.9", "flash-attn")
    url = ("https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3.post1/flash_attn-2.8.3.post1+cu12"
           "torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl")
    assert f"'flash-attn @ {url}'" in plan["commands"]["pip"] and "builds-from-source" not in codes(plan)


def test_flash_attn_beyond_its_wheels_builds_from_source_in_a_last_step(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *RTX_4090, "torch", "flash-attn")
    warning = next(w for w in plan["warnings"] if w["code"] == "builds-from-source")
    assert warning["message"].startswith("the prebuilt wheels of flash-attn 2.8.3.post2 are not known (the release "
                                         "is newer than the repository copy the table was read from)")
    assert "CUDA toolkit 12.0 or newer (nvcc" in warning["message"] and plan["choice"]["torch"] == "2.15.0"
    assert plan["commands"]["pip"].split(" && ")[-1] == ("python -m pip install --no-build-isolation flash-attn "
                                                         "torch==2.15.0+cu130")


@pytest.mark.parametrize("package", ["flash-attn", "torch-scatter"])
def test_a_source_build_names_the_torch_that_takes_a_prebuilt_wheel_and_that_torch_does(
        package: str, capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *RTX_4090, "torch", package)
    warning = next(w["message"] for w in plan["warnings"] if w["code"] == "builds-from-source")
    asked = warning.rsplit("ask for ", 1)[1].strip("'")
    assert asked == "torch==2.8.*"
    again = plan_json(capsys, *RTX_4090, asked, package)
    assert again["choice"]["torch"] == "2.8.0" and "builds-from-source" not in codes(again)


def test_pyg_lib_holds_torch_to_its_find_links_pages_and_torch_scatter_builds_from_source(
        capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *RTX_4090, "torch", "pyg-lib", "torch-scatter")
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.13.0", "cu130")
    assert "--find-links https://data.pyg.org/whl/torch-2.13.0+cu130.html" in plan["commands"]["pip"]
    assert "builds-from-source" in codes(plan) and "constrained-by" in codes(plan)


def test_an_inferred_pairing_is_labelled_in_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *CPU, "torch", "fbgemm-gpu")
    assert plan["choice"]["torch"] == "2.14.1"
    assert any(n.startswith("that fbgemm-gpu 1.9.0 goes with torch 2.14.1 (==2.14.*) is inferred") for n in
               plan["notes"])


def test_a_package_the_table_does_not_know_rides_along_unchanged_and_is_named(
        capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *CPU, "torch", "transformers>=4")
    assert plan["choice"]["torch"] == "2.15.0" and codes(plan) == ["requirement-unknown"]
    assert plan["warnings"][0]["message"] == (
        "what transformers needs of torch is not known here (not in the table of packages built against torch): no "
        "constraint is added for it; --online reads its metadata from your index")
    assert plan["commands"]["pip"].endswith("python -m pip install 'transformers>=4' torch==2.15.0+cpu")


def test_the_embedded_table_is_what_the_build_script_makes_of_the_captured_facts(tmp_path: Path) -> None:
    out = tmp_path / "companions.json"
    assert script("build_companions").main(["-o", str(out)]) == 0
    data = ROOT / "src" / "torch_install" / "resolver" / "data"
    assert json.loads(out.read_text()) == json.loads((data / "companions.json").read_text())
    assert (tmp_path / "companion-names.json").read_text() == (data / "companion-names.json").read_text()


def test_the_names_file_names_the_tables_packages() -> None:
    """A plan reads only the names to know whether it needs the table: they are the table's."""
    from torch_install.resolver.companion_facts import load_packages, table_names

    assert table_names() == set(load_packages()) and "xformers" in table_names()


def test_a_decoupled_torchaudio_goes_with_a_newer_torch_as_the_file_asks(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM's CUDA requirements pin torch==2.13.0 beside torchaudio==2.11.0, whose METADATA names no torch."""
    req = tmp_path / "cuda.txt"
    req.write_text("torch==2.13.0\ntorchaudio==2.11.0\ntorchvision==0.28.0\n")
    plan = plan_json(capsys, *RTX_4090, "-r", str(req))
    assert (plan["choice"]["torch"], plan["choice"]["packages"]["torchaudio"]) == ("2.13.0", "2.11.0+cu130")
    assert any("torchaudio 2.11.0, not 2.11.1: as asked" in n for n in plan["notes"])


def test_without_a_request_the_release_keeps_its_own_companion(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *CPU, "torch==2.13.0", "torchaudio")
    assert plan["choice"]["packages"]["torchaudio"] == "2.11.1" and not plan["notes"]


def test_a_companion_that_pins_one_torch_still_moves_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *CPU, "torch==2.13.0", "torchaudio==2.9.1", "--format", "json"]) == 2
    assert "no torch release in the compatibility matrix" in capsys.readouterr().err


def test_the_decoupled_releases_are_read_from_the_captured_metadata() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    import build_matrix

    built = json.loads((ROOT / "src" / "torch_install" / "resolver" / "data" / "torch-matrix.json").read_text())
    found = build_matrix.decoupled_companions(built["releases"])
    assert {v: row["torch_from"] for v, row in found["torchaudio"].items()} == {"2.11.0": "2.11.0", "2.11.1": "2.11.0"}
    # torchvision pins its torch (torch (==2.11.0) for 0.26.0) up to 0.29.0; 0.29.1 and 0.29.2 need torch>=2.14.0
    assert {v: row["torch_from"] for v, row in found["torchvision"].items()} == {"0.29.1": "2.14.0", "0.29.2": "2.14.0"}
    # a floor a Requires-Dist states is read; one taken from the release it came with is inferred
    assert {v: row["conf"] for v, row in found["torchaudio"].items()} == {"2.11.0": "inferred", "2.11.1": "verified"}


@pytest.mark.parametrize(("python", "companion", "torch"), [
    ("3.13", "torchvision", "2.8.0"),  # torchvision 0.24-0.26 cp313 wheels: macosx_12_0
    ("3.13", "torchaudio", "2.8.0"),
    ("3.13", None, "2.11.0"),  # torch's own cp313 wheel: macosx_11_0
    ("3.12", "torchvision", "2.11.0")])
def test_a_companions_own_macos_floor_holds_torch_back_where_it_has_no_wheel(
        python: str, companion: str | None, torch: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = tmp_path / "mac.json"
    profile.write_text(json.dumps({"os": "macos", "arch": "arm64", "python": python, "os_version": "11.7"}))
    plan = plan_json(capsys, "--target", str(profile), "torch<2.12", *([companion] if companion else []))
    assert plan["choice"]["torch"] == torch
    if torch == "2.8.0":
        assert any(f"{companion} " in w["message"] and "need macOS ≥ 12.0, found 11.7" in w["message"]
                   for w in plan["warnings"])


@pytest.mark.parametrize(("python", "torch"), [("3.14.1", "2.10.0"), ("3.14.2", "2.15.0"), ("3.14", "2.15.0")])
def test_a_python_patch_release_a_companion_excludes_is_honoured_where_known(
        python: str, torch: str, capsys: pytest.CaptureFixture[str]) -> None:
    """torchvision 0.26.0-0.29.2 declare Requires-Python !=3.14.1 (the default index's pages)."""
    plan = plan_json(capsys, "--os", "linux", "--arch", "x86_64", "--python", python, "torch", "torchvision")
    assert plan["choice"]["torch"] == torch
    assert any("excludes Python 3.14.1" in w["message"] for w in plan["warnings"]) is (python == "3.14.1")


def test_a_companions_macos_floor_holds_on_intel_macs_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """torchvision 0.17.x's macosx_10_13_x86_64 wheels, beside torch 2.2.x's macosx_10_9 ones."""
    profile = tmp_path / "mac.json"
    profile.write_text(json.dumps({"os": "macos", "arch": "x86_64", "python": "3.10", "os_version": "10.12"}))
    plan = plan_json(capsys, "--target", str(profile), "torch==2.2.2")
    assert plan["choice"]["torch"] == "2.2.2"
    assert main(["plan", "--target", str(profile), "torch==2.2.2", "torchvision", "--format", "json"]) == 4
    warnings = [w["message"] for w in json.loads(capsys.readouterr().out)["warnings"]]
    assert any("torchvision 0.17.2 (the match of torch 2.2.2) wheels for Python 3.10 need macOS ≥ 10.13" in w
               for w in warnings), warnings


L4 = ["--os", "linux", "--arch", "x86_64", "--python", "3.12", "--gpu", "L4", "--nvidia-driver", "580.65.06"]


@pytest.mark.parametrize(("torch", "page"), [("2.2.2", "torch-2.2.0+cu121"), ("2.3.1", "torch-2.3.0+cu121"),
                                             ("2.5.1", "torch-2.5.0+cu124")])
def test_the_pyg_pages_of_older_torch_releases_are_known(torch: str, page: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *L4, f"torch=={torch}", "torch-scatter")
    assert f"--find-links https://data.pyg.org/whl/{page}.html" in plan["commands"]["pip"]
    assert "builds-from-source" not in codes(plan)


def test_a_pyg_wheels_label_holds_torch_and_its_variant(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, *L4, "torch-scatter==2.1.2+pt24cu121", "pyg-lib")
    assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.4.1", "cu121")
    assert "--find-links https://data.pyg.org/whl/torch-2.4.0+cu121.html" in plan["commands"]["pip"]
    held = {w["message"].split(" (command line)")[0]: w["message"] for w in plan["warnings"]
            if w["code"] == "constrained-by"}
    assert held["torch-scatter==2.1.2+pt24cu121"].endswith("needs torch 2.4.* (its build: torch 2.4+cu121): torch "
                                                           "2.4.1 is the newest release it allows (not 2.15.0)")
    assert held["pyg-lib"].endswith("torch 2.13.0 is the newest release it allows (not 2.15.0)")


def test_a_files_pages_and_indexes_of_another_build_are_left_out_with_a_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A PyG requirements file made for torch 2.7+cu118, planned for a CPU machine: its cu118 page and index would
    let the next step take ``+pt27cu118`` extensions next to the CPU torch; the page of the chosen build stays."""
    file = tmp_path / "requirements.txt"
    file.write_text("--extra-index-url https://download.pytorch.org/whl/cu118\n"
                    "-f https://data.pyg.org/whl/torch-2.7.0+cu118.html\n"
                    "--find-links https://data.pyg.org/whl/torch-2.7.0+cpu.html\n"
                    "torch==2.7.1\ntorch_scatter\nnumpy\n")
    plan = plan_json(capsys, *CPU, "-r", str(file))
    rest = plan["commands"]["pip"].split(" && ")[1]
    assert "cu118" not in rest and "--find-links https://data.pyg.org/whl/torch-2.7.0+cpu.html" in rest
    assert f"{file}:1: --extra-index-url https://download.pytorch.org/whl/cu118 is where the builds for cu118 are, " \
           "not those for torch 2.7.1+cpu: left out of the commands" in plan["notes"]
    assert f"{file}:2: --find-links https://data.pyg.org/whl/torch-2.7.0+cu118.html is where the builds for torch " \
           "2.7+cu118 are, not those for torch 2.7.1+cpu: left out of the commands" in plan["notes"]


def test_a_bare_name_or_a_pinned_release_is_bound_as_packaging_reads_it() -> None:
    """The requirements read without packaging ("xformers", "vllm==0.7.3") bind the releases, pin and label that
    the same requirement read by packaging binds (an extra sends it there)."""
    from torch_install.machine import Machine
    from torch_install.resolver.companion_facts import load_packages
    from torch_install.resolver.companions import bound_requirements
    from torch_install.resolver.plan import Wanted
    from torch_install.resolver.request import plain_requirement

    packages = load_packages()
    machine = Machine(os="linux", arch="x86_64", python="3.12")
    compared = 0
    for name, package in packages.items():
        for pinned in [None, *(r.version for r in package.releases)]:
            plain, parsed = (f"{name}{extra}{'' if pinned is None else '==' + pinned}" for extra in ("", "[x]"))
            fast, slow = (bound_requirements((Wanted(text, name, "command line"),), machine, packages)
                          for text in (plain, parsed))
            assert [(b.matching, b.exact, b.label, b.label_unread) for b in fast] == \
                [(b.matching, b.exact, b.label, b.label_unread) for b in slow], plain
            compared += bool(fast) and plain_requirement(plain) is not None
    assert compared > 200


def test_a_companion_version_the_table_does_not_know_is_installed_as_asked(capsys: pytest.CaptureFixture[str]) -> None:
    """torchvision 0.15.0 (on the PyTorch conda channel; yanked from the default index) is no torch release's match
    in the table: torch is planned from its own pin, the companion as the project wrote it, with a warning
    (tests/fixtures/projects-corpus/dinov2-conda-2023 asks for pytorch=2.0.0 and torchvision=0.15.0)."""
    machine = [*RTX_4090[:5], "3.10", *RTX_4090[6:]]
    plan = plan_json(capsys, *machine, "torch==2.0.0", "torchvision==0.15.0")
    assert plan["choice"]["torch"] == "2.0.0" and plan["choice"]["packages"]["torchvision"] == ""
    assert "release-unknown" in codes(plan) and any(w["message"].startswith("torchvision==0.15.0: no torchvision "
                                                                            "release of the table matches it")
                                                    for w in plan["warnings"])
    assert plan["commands"]["pip"].startswith("python -m pip install torch==2.0.0+cu117 torchvision==0.15.0 ")
    assert main(["plan", *machine, "torch==2.0.0", "torchvision==0.16.0"]) == 2  # a known match of another torch
    assert "no torch release in the compatibility matrix (2.0.0–2.15.0) matches" in capsys.readouterr().err
