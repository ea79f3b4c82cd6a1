"""The conda-forge table: made by scripts/build_conda_forge.py from the captured recipes, and held to them by
scripts/audit_conda_forge.py, which reports a wrong fact of every kind the table holds."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "src" / "torch_install" / "resolver" / "data" / "conda-forge.json"


def script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def shipped() -> dict[str, Any]:
    return json.loads(TABLE.read_text(encoding="utf-8"))


def test_the_shipped_table_is_what_the_captured_recipes_give() -> None:
    assert script("build_conda_forge").dumps(script("build_conda_forge").build_table()) == \
        TABLE.read_text(encoding="utf-8")


def test_the_audit_agrees_with_the_shipped_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert script("audit_conda_forge").main([]) == 0
    assert "agrees with the captured recipes" in capsys.readouterr().out


def _build(table: dict[str, Any], version: str, subdir: str, cuda: str | None, arm: str | None = None
           ) -> dict[str, Any]:
    release = next(r for r in table["pytorch"] if r["version"] == version)
    return next(b for b in release["builds"] if b["subdir"] == subdir and b["cuda"] == cuda and
                b["arm_variant"] == arm and b["blas"] in ("generic", "mkl") and
                (b["blas"] == "mkl" or subdir != "linux-64"))


def _tegra_gets_sbsa_list(t: dict[str, Any]) -> None:
    _build(t, "2.13.0", "linux-aarch64", "12.9", "tegra")["arches"] = \
        copy.deepcopy(_build(t, "2.13.0", "linux-aarch64", "12.9", "sbsa")["arches"])


def _drop_row(t: dict[str, Any]) -> None:
    release = t["pytorch"][0]
    release["builds"] = [b for b in release["builds"] if b["subdir"] != "win-64" or b["cuda"] != "13.0"]


MUTATIONS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "arch list": (lambda t: _build(t, "2.13.0", "linux-64", "13.0")["arches"].update(
        list="5.0;7.5;8.0;8.6;9.0;10.0;11.0;12.0+PTX", sm=[50, 75, 80, 86, 90, 100, 110, 120]),
        "is not one the build script sets"),
    "tegra arch list": (_tegra_gets_sbsa_list, "is not the one set after the tegra test"),
    "sm read": (lambda t: _build(t, "2.12.1", "win-64", "12.8")["arches"].update(ptx=[]), "do not read"),
    "build number": (lambda t: _build(t, "2.13.0", "linux-64", "12.9").update(number=202), "the recipe gives 302"),
    "release build number": (lambda t: t["pytorch"][1].update(build_number=7), "is not the recipe's"),
    "python": (lambda t: _build(t, "2.9.1", "osx-arm64", None)["python"].append("3.14"), "but the CI files pin"),
    "glibc floor": (lambda t: _build(t, "2.13.0", "linux-64", "13.0")["floor"].update(glibc="2.17"),
                    "but the CI files say 2.28"),
    "macOS floor": (lambda t: _build(t, "2.13.0", "osx-arm64", None)["floor"].update(macos="11.0"),
                    "but the CI files say 12.0"),
    "missing build": (_drop_row, "has CI files but no build row"),
    "invented build": (lambda t: t["pytorch"][0]["builds"].append(
        {**_build(t, "2.13.0", "win-64", "13.0"), "cuda": "13.2"}), "has no CI file"),
    "cpu arch list": (lambda t: _build(t, "2.13.0", "linux-64", None).update(
        arches=_build(t, "2.13.0", "linux-64", "12.9")["arches"]), "a CPU build with an arch list"),
    "__cuda": (lambda t: t["pytorch"][0].update(cuda_run_dependency=False), "cuda_run_dependency"),
    "selectors": (lambda t: t["pytorch"][2].update(selectors=False), "selectors False"),
    "activation": (lambda t: next(r for r in t["pytorch"] if r["version"] == "2.9.1").update(
        activation={"script": "etc/conda/activate.d/libtorch_activate.sh", "variable": "CF_TORCH_CUDA_ARCH_LIST"}),
        "does not write the activation script"),
    "release": (lambda t: t["pytorch"].pop(3), "are not the captured ones"),
    "order": (lambda t: t["pytorch"].reverse(), "not newest first"),
    "torchvision build": (lambda t: t["torchvision"]["builds"].pop(0), "torchvision: builds"),
    "torchaudio version": (lambda t: t["torchaudio"].update(version="2.12.0"), "torchaudio: version 2.12.0"),
    "cuda-version": (lambda t: t["cuda_version"]["versions"].pop(), "cuda-version: versions"),
    # against the published records (scripts/reference/conda-forge/published.json)
    "published floor": (lambda t: _build(t, "2.8.0", "linux-64", "12.9")["floor"].update(glibc="2.28"),
                        "pytorch-2.8.0-cuda129_mkl_py313_h7947483_302.conda: __glibc >=2.17, but the table's floor"),
    "published python": (lambda t: _build(t, "2.8.0", "win-64", "12.8")["python"].remove("3.13"),
                         "cuda128_mkl_py313_hd1c3b22_302.conda: Python 3.13 is not among"),
    "published newer build": (lambda t: _build(t, "2.8.0", "linux-64", "12.9").update(number=301),
                              "build number 302 is none of the table's for linux-64"),
    "published template": (lambda t: next(r for r in t["pytorch"] if r["version"] == "2.8.0")["build_string"].update(
        cuda="cuda{cuda}_py{py}_{blas}_h{hash}_{number}"), "is not the recipe's template"),
}


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_the_audit_reports_a_wrong_fact_of_each_kind(mutation: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    table = shipped()
    change, expected = MUTATIONS[mutation]
    change(table)
    path = tmp_path / "conda-forge.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    assert script("audit_conda_forge").main(["--table", str(path)]) == 1
    out = capsys.readouterr().out
    assert expected in out, out


def test_an_unreadable_table_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "conda-forge.json"
    path.write_text("{", encoding="utf-8")
    assert script("audit_conda_forge").main(["--table", str(path)]) == 2
    assert "cannot read the table" in capsys.readouterr().err


def test_every_cuda_build_has_its_arch_list_and_the_tegra_build_only_orin() -> None:
    """The facts the resolver leans on, stated: a tegra build from 2.11 on compiles for Orin (sm_87) alone, and
    aarch64's CUDA 13 build covers Orin from 2.13.0 (the feedstock's change for Orin on JetPack 7)."""
    table = shipped()
    for release in table["pytorch"]:
        for build in release["builds"]:
            assert (build["arches"] is None) == (build["cuda"] is None), (release["version"], build)
    assert _build(table, "2.13.0", "linux-aarch64", "12.9", "tegra")["arches"]["list"] == "8.7+PTX"
    assert 87 in _build(table, "2.13.0", "linux-aarch64", "13.0", "sbsa")["arches"]["sm"]
    assert 87 not in _build(table, "2.12.1", "linux-aarch64", "13.0", "sbsa")["arches"]["sm"]


def test_the_published_records_are_read_from_repodata_and_from_a_pixi_lock(tmp_path: Path) -> None:
    """The capture reads a channel's repodata.json and the records pixi writes into its lock (name, version, build
    and build number from the file name), the family's only."""
    capture = script("capture_conda_forge_published")
    repodata = tmp_path / "repodata.json"
    repodata.write_text(json.dumps({"info": {"subdir": "linux-64"}, "packages": {}, "packages.conda": {
        "pytorch-2.13.0-cuda129_mkl_py312_h0509a7e_302.conda": {
            "name": "pytorch", "version": "2.13.0", "build": "cuda129_mkl_py312_h0509a7e_302", "build_number": 302,
            "depends": ["__cuda", "cuda-version >=12.9,<13"], "constrains": ["pytorch-gpu 2.13.0"]},
        "numpy-2.3.0-py312h0_0.conda": {"name": "numpy", "version": "2.3.0", "build": "py312h0_0"}}}))
    (record,) = capture.from_repodata(repodata, "https://conda.anaconda.org/conda-forge/linux-64/repodata.json")
    assert (record["name"], record["build_number"], record["subdir"]) == ("pytorch", 302, "linux-64")
    assert record["url"] == ("https://conda.anaconda.org/conda-forge/linux-64/"
                             "pytorch-2.13.0-cuda129_mkl_py312_h0509a7e_302.conda")
    lock = ("version: 6\npackages:\n"
            "- conda: https://conda.anaconda.org/conda-forge/noarch/cuda-version-12.9-h4f385c5_3.conda\n"
            "  sha256: 5f5f428031933f117ff9f7fcc650e6ea1b3fef5936cf84aa24af79167513b656\n"
            "  constrains:\n  - cudatoolkit 12.9|12.9.*\n  - __cuda >=12\n  size: 21578\n"
            "- conda: https://conda.anaconda.org/conda-forge/linux-64/libzlib-1.3.1-hb9d3cd8_2.conda\n"
            "  sha256: d4bfe88d7cb447768e31650f06257995601f89076080e76df55e3112d4e47dc4\n")
    (cuda_version,) = capture.from_lock(lock, "test")
    assert cuda_version["build_number"] == 3 and cuda_version["constrains"] == ["cudatoolkit 12.9|12.9.*",
                                                                                 "__cuda >=12"]


def test_published_records_agree_with_the_table_where_it_holds_their_build() -> None:
    checked, earlier = script("audit_conda_forge").audit_published(shipped(), problems := [])
    assert problems == [] and checked >= 4 and earlier >= 1
