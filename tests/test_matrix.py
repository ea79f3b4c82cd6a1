"""The embedded compatibility matrix: contents, queries and extension."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from torch_install.drivers import toolkit_ga_driver
from torch_install.resolver.matrix import CudaArch, Release, load_matrix, matrix_from_dict
from torch_install.resolver.variants import cuda_version, variant_kind
from torch_install.versions import numeric_key

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "src/torch_install/resolver/data/torch-matrix.json"
REFERENCE = ROOT / "scripts/reference/torch-matrix.json"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def test_every_release_2_0_to_2_15_newest_first(matrix):
    versions = [r.version for r in matrix.releases]
    assert versions[0] == "2.15.0" and versions[-1] == "2.0.0"
    assert len(versions) == 28
    keys = [tuple(int(x) for x in v.split(".")) for v in versions]
    assert keys == sorted(keys, reverse=True)


def test_load_matrix_is_cached(matrix):
    assert load_matrix() is matrix


@pytest.mark.parametrize(("version", "platform", "expected"), [
    ("2.9.1", "linux_x86_64", ["cpu", "cu126", "cu128", "cu129", "cu130", "rocm6.3", "rocm6.4", "xpu"]),
    ("2.9.1", "linux_aarch64", ["cpu", "cu126", "cu128", "cu129", "cu130"]),  # its branch adds 12.9-aarch64
    ("2.5.0", "windows_x86_64", ["cpu", "cu118", "cu121", "cu124", "xpu"]),
    ("2.15.0", "macos_arm64", ["default"]),
    ("2.2.2", "macos_x86_64", ["default"]),
    ("2.3.0", "macos_x86_64", []),
])
def test_variants_per_platform(matrix, version, platform, expected):
    assert matrix.release(version).variants(platform) == expected


@pytest.mark.parametrize(("query", "platform", "sm", "confidence"), [
    ("2.9.1+cu128", "linux_x86_64", (70, 75, 80, 86, 90, 100, 120), "verified"),
    ("2.15.0+cu132", "linux_aarch64", (80, 90, 100, 110, 120), "verified"),
    ("2.7.0+cu128", "linux_x86_64", (75, 80, 86, 90, 100, 120), "maintainer-statement"),
    ("2.14.1+cu126", "windows_x86_64", (50, 60, 61, 70, 75, 80, 86, 90), "source-file"),
])
def test_cuda_arch_lists(matrix, query, platform, sm, confidence):
    arch = matrix.cuda_arch(query, platform)
    assert arch.sm == sm
    assert arch.ptx == ()
    assert arch.confidence == confidence


def test_missing_arch_list_is_filled_and_labelled_inferred(matrix):
    arch = matrix.cuda_arch("2.15.0+cu130", "windows_x86_64")
    assert arch.confidence == "inferred" and arch.note and "copied from" in arch.note


def test_windows_cu118_keeps_sm37_ptx(matrix):
    arch = matrix.cuda_arch("2.0.0+cu118", "windows_x86_64")
    assert 37 in arch.sm and arch.ptx == (37,)


def test_gfx_lists(matrix):
    rocm64 = matrix.arch_targets("2.8.0+rocm6.4")
    assert "gfx942" in rocm64.arches and "gfx1201" in rocm64.arches and "gfx1103" not in rocm64.arches
    assert rocm64.confidence == "inferred"
    assert "gfx1103" in matrix.arch_targets("2.14.1", "rocm7.14").arches
    assert matrix.release("2.15.0").targets == {}


@pytest.mark.parametrize(("variant", "os", "floor"), [
    ("cu130", "linux", "580.65.06"),
    ("cu132", "windows", "580"),
    ("cu126", "linux", "525.60.13"),
    ("cu128", "windows", "528.33"),
    ("cu118", "linux", "450.80.02"),
    ("cu134", "linux", "580.65.06"),  # unknown to the release data: inherits its CUDA major's floor
    ("cpu", "linux", None),
])
def test_cuda_floor(matrix, variant, os, floor):
    assert matrix.cuda_floor(variant, os) == floor


def test_full_feature_driver_per_toolkit(matrix):
    assert matrix.cuda_full_driver("cu126", "linux") == "560.28.03"
    assert matrix.cuda_full_driver("cu128", "windows") == "570.65"
    assert matrix.cuda_full_driver("cu132", "windows") == "595"
    assert toolkit_ga_driver(13, 2, "windows") == ("595", "source-file")  # a driver branch, from the release notes


def test_python_glibc_macos_and_companions(matrix):
    r = matrix.release("2.15.0")
    assert "3.10" not in r.python_tags("linux_x86_64") and "3.15t" in r.python_tags("linux_x86_64")
    assert r.glibc["linux_x86_64"] == "2.28" and r.macos["macos_arm64"] == "14.0"
    assert dict(r.companions) == {"torchvision": "0.29.2", "torchaudio": "2.11.1"}
    assert matrix.release("2.0.0").glibc["linux_x86_64"] == "2.17"  # manylinux1 tag, GLIBC_2.17 symbols
    assert matrix.release("2.12.1").python_tags("linux_x86_64").count("3.13t") == 0


def test_default_variant(matrix):
    assert matrix.release("2.9.1").default_variant("linux_x86_64") == "cu128"
    assert matrix.release("2.9.1").default_variant("windows_x86_64") == "cu128"
    assert matrix.release("2.15.0").default_variant("linux_aarch64") == "cu132"
    assert matrix.release("2.15.0").default_variant("macos_arm64") is None


def test_xpu_families(matrix):
    assert "battlemage" in matrix.release("2.7.0").xpu.families["linux"]
    assert "battlemage" not in matrix.release("2.5.0").xpu.families["linux"]
    assert matrix.release("2.4.1").xpu is None


def test_release_lookup_ignores_local_label_and_names_unknown(matrix):
    assert matrix.release("2.9.1+cu128").version == "2.9.1"
    with pytest.raises(KeyError, match="2.99.0"):
        matrix.release("2.99.0")


def test_with_variant_inherits_rules_from_name(matrix):
    extended = matrix.with_variant("2.15.0", "linux_x86_64", "cu134")
    assert "cu134" in extended.release("2.15.0").variants("linux_x86_64")
    arch = extended.cuda_arch("2.15.0+cu134", "linux_x86_64")
    assert arch.sm == matrix.cuda_arch("2.15.0+cu132", "linux_x86_64").sm and arch.confidence == "assumed"
    assert extended.cuda_floor("cu134", "linux") == "580.65.06"
    assert "cu134" not in matrix.release("2.15.0").variants("linux_x86_64")  # the original is unchanged


def test_with_release_adds_newest(matrix):
    new = Release(version="2.16.0", variant_lists={"linux_x86_64": ("cpu", "cu132")},
                  cuda={"linux_x86_64": {"cu132": CudaArch((75, 80, 86, 90, 100, 120), (), "assumed")}},
                  confidence="assumed")
    extended = matrix.with_release(new)
    assert extended.releases[0].version == "2.16.0"
    assert extended.release("2.16.0").confidence == "assumed"
    assert len(extended.releases) == len(matrix.releases) + 1


def test_helpers():
    assert cuda_version("cu128") == (12, 8) and cuda_version("cu130") == (13, 0) and cuda_version("rocm6.4") is None
    assert [variant_kind(v) for v in ("cu118", "rocm6.2.4", "xpu", "cpu", "default", "cu12")] == [
        "cuda", "rocm", "xpu", "cpu", "default", "unknown"]
    assert numeric_key("550.54.15") < numeric_key("580") < numeric_key("580.65.06")


def test_data_file_is_compact_and_round_trips():
    text = DATA.read_text(encoding="utf-8")
    assert len(text) < 120_000 and "\n " not in text  # no pretty-printing
    data = json.loads(text)
    assert data["schema"] == 1
    assert matrix_from_dict(data).releases[0].version == "2.15.0"


@pytest.mark.slow
def test_committed_data_matches_build_script(tmp_path):
    spec = importlib.util.spec_from_file_location("build_matrix", ROOT / "scripts/build_matrix.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "m.json"
    assert module.main([str(REFERENCE), "-o", str(out)]) == 0
    assert json.loads(out.read_text()) == json.loads(DATA.read_text())


def test_build_script_rejects_unreadable_reference(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("build_matrix", ROOT / "scripts/build_matrix.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert module.main([str(bad), "-o", str(tmp_path / "o.json")]) == 2
    assert "cannot read reference matrix" in capsys.readouterr().err
