"""`torch-install matrix`: releases and variants for a platform and Python, embedded and from the index."""

from __future__ import annotations

import json

import pytest

from index_pages import load_rows, serve_index
from profiles import profile
from torch_install.cli import main


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")
    monkeypatch.delenv("TORCH_INSTALL_INDEX_BASE", raising=False)


def test_embedded_table_for_a_described_platform(capsys):
    assert main(["matrix", "--os", "windows", "--arch", "x86_64", "--python", "3.13", "--limit", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "torch releases for windows_x86_64, Python 3.13 (embedded matrix)"
    assert lines[2].split() == ["2.15.0", "2026-10-28", "cpu", "cu130", "cu132", "xpu"]
    assert len(lines) == 4  # header, column names, two releases
    assert "rocm" not in "\n".join(lines)  # no ROCm wheels for Windows


def test_python_filter_drops_releases_without_its_wheels(capsys):
    main(["matrix", "--os", "linux", "--arch", "x86_64", "--python", "3.10", "--limit", "0", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    versions = [r["torch"] for r in data["releases"]]
    assert "2.15.0" not in versions  # requires Python >= 3.11
    assert all("3.10" in r["python"] for r in data["releases"])


def test_online_table_marks_learnt_variants(httpserver, capsys, tmp_path):
    base = serve_index(httpserver, load_rows())
    assert main(["matrix", "--online", "--index-base", base, "--target", profile(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"torch releases for linux_x86_64, Python 3.12 (index {base})"
    rows = {line.split()[0]: line.split()[2:] for line in out[2:-1]}
    assert rows["2.16.0"] == ["cpu*", "cu132*", "cu134*", "rocm7.14*"]
    assert rows["2.15.0"] == ["cpu", "cu130", "cu132", "xpu"]
    assert rows["2.9.1"] == ["cpu", "cu128", "rocm6.4"]
    assert "2.14.1" not in rows  # not on this index
    assert out[-1].startswith("* found on the index")


def test_online_failure_is_one_warning_and_the_embedded_table(capsys, tmp_path):
    from servers import closed_port

    base = f"http://127.0.0.1:{closed_port()}/whl"
    assert main(["matrix", "--online", "--index-base", base, "--target", profile(tmp_path), "--limit", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "using the embedded matrix" in captured.err
    assert "(embedded matrix)" in captured.out.splitlines()[0]


def test_negative_limit_is_a_usage_error(capsys):
    assert main(["matrix", "--os", "linux", "--arch", "x86_64", "--limit", "-1"]) == 2
    assert "--limit -1" in capsys.readouterr().err
