"""`torch-install variants FILE|URL`: choice, explanation, JSON, URL safety, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "variants"
TORCH_2_10 = str(FIXTURES / "torch-2.10.0-variants.json")


@pytest.fixture
def ada_target(tmp_path):
    path = tmp_path / "ada.json"
    path.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "nvidia_driver": "575.57.08",
                                "cuda_driver_api": "12.9",
                                "gpus": [{"vendor": "nvidia", "compute_capability": "8.9"}]}))
    return str(path)


def test_text_explains_choice_and_order(ada_target, capsys):
    assert main(["variants", TORCH_2_10, "--target", ada_target]) == 0
    out = capsys.readouterr().out
    assert "Choice:   cuda12.8 (classic index variant: cu128)" in out
    assert "cuda12.8 before cuda12.6: priority :: order :: 2 comes before priority :: order :: 3" in out
    assert "cuda13.0: nvidia :: cuda_version_lower_bound: needs one of 13.0" in out
    assert "refuse metadata with enable-if" in out


def test_json_output(ada_target, capsys):
    main(["variants", str(FIXTURES / "torch-2.10.0-variants-v0.2.0.json"), "--target", ada_target, "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert data["dialect"] == "0.2.0" and data["choice"] == "cuda12.8"
    assert [v["label"] for v in data["ranked"]] == ["cuda12.8", "cuda12.6", "null"]
    assert data["ranked"][0]["properties"][0] == {"property": "nvidia :: cuda_version_lower_bound :: 12.0",
                                                 "key": [0, 0, 9]}


def test_url_on_loopback(httpserver, ada_target, capsys):
    httpserver.expect_request("/torch-2.10.0-variants.json").respond_with_data(
        (FIXTURES / "torch-2.10.0-variants.json").read_text(), content_type="application/json")
    assert main(["variants", httpserver.url_for("/torch-2.10.0-variants.json"), "--target", ada_target]) == 0
    assert "Choice:   cuda12.8" in capsys.readouterr().out


def test_url_size_cap(httpserver, ada_target, capsys, monkeypatch):
    from torch_install.cli import variants

    monkeypatch.setattr(variants, "MAX_BYTES", 1000)
    httpserver.expect_request("/big.json").respond_with_data("x" * 5000)
    assert main(["variants", httpserver.url_for("/big.json"), "--target", ada_target]) == 3
    assert "over the 1000-byte limit" in capsys.readouterr().err


def test_redirect_to_plain_http_elsewhere_is_refused(httpserver, ada_target, capsys):
    httpserver.expect_request("/r").respond_with_data("", status=302,
                                                      headers={"Location": "http://example.org/v.json"})
    assert main(["variants", httpserver.url_for("/r"), "--target", ada_target]) == 3  # the server's doing
    assert "refused a redirect to http://example.org/v.json (not https)" in capsys.readouterr().err


def test_plain_http_url_refused(capsys):
    assert main(["variants", "http://example.org/torch-variants.json"]) == 2
    assert "only https" in capsys.readouterr().err


def test_bad_json_file(tmp_path, capsys):
    bad = tmp_path / "x-variants.json"
    bad.write_text("{not json")
    assert main(["variants", str(bad), "--os", "linux"]) == 2
    err = capsys.readouterr().err
    assert "not valid JSON" in err and "Traceback" not in err


SYSROOTS = Path(__file__).parent / "fixtures" / "sysroots"


def test_detect_variant_properties_8xh100(capsys):
    assert main(["detect", "--sysroot", str(SYSROOTS / "nvidia-8xh100"), "--format", "variant-properties"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "nvidia :: cuda_version_lower_bound :: 12.4"  # driver 550.54.15 runs CUDA 12.4
    assert [ln for ln in lines if ":: sm_arch ::" in ln] == ["nvidia :: sm_arch :: 90_real",
                                                              "nvidia :: sm_arch :: 90_virtual"]
    assert "nvidia :: cuda_version_upper_bound :: 12.5" in lines and not any(ln.startswith("amd") for ln in lines)


def test_detect_variant_properties_mi300x_golden(capsys):
    assert main(["detect", "--sysroot", str(SYSROOTS / "mi300x"), "--format", "variant-properties"]) == 0
    assert capsys.readouterr().out == "amd :: gfx_arch :: gfx942\namd :: rocm_version :: 6.4\n"


def test_detect_nfd_golden(capsys):
    assert main(["detect", "--sysroot", str(SYSROOTS / "nvidia-8xh100"), "--format", "nfd"]) == 0
    assert capsys.readouterr().out == (
        "# torch-install node labels (Node Feature Discovery feature file)\n"
        "torch-install.io/variant=cu126\n"
        "torch-install.io/torch=2.14.1\n"
        "torch-install.io/cuda-driver-max=12.4\n"
        "torch-install.io/nvidia-driver=550.54.15\n"
        "torch-install.io/gpu-arch=sm_90\n"
        "torch-install.io/gpu-vendor=nvidia\n")
    assert main(["detect", "--sysroot", str(SYSROOTS / "mi300x"), "--format", "nfd"]) == 0
    labels = capsys.readouterr().out.splitlines()[1:]
    assert "torch-install.io/rocm-gfx=gfx942" in labels and "torch-install.io/rocm=6.4.1" in labels
    assert any(label.startswith("torch-install.io/variant=rocm") for label in labels)


def test_detect_format_bad_combinations(capsys):
    assert main(["detect", "--sysroot", str(SYSROOTS / "mi300x"), "--json", "--format", "nfd"]) == 2
    assert "--json contradicts --format nfd" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["detect", "--format", "yaml"])
    assert exit_info.value.code == 2
    assert main(["detect", "--sysroot", str(SYSROOTS / "mi300x"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["gpus"][0]["gfx"] == "gfx942"
