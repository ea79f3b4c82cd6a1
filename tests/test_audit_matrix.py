"""scripts/audit_matrix.py: the embedded matrix against the default index's captured pages, and a loopback replica
of the index serving them; a matrix that disagrees is reported line by line with exit 1."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import MappingProxyType, ModuleType

import pytest

from torch_install.resolver.matrix import load_matrix

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "scripts" / "reference" / "default-index"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def audit_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("audit_matrix", ROOT / "scripts" / "audit_matrix.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("audit_matrix", module)
    spec.loader.exec_module(module)
    return module


def serve_replica(httpserver) -> str:
    """The captured pages at /simple/<project>/, as the default index serves them (PEP 691 JSON)."""
    for project in ("torch", "torchvision", "torchaudio"):
        body = (PAGES / f"{project}.json").read_text(encoding="utf-8")
        httpserver.expect_request(f"/simple/{project}/").respond_with_data(body, content_type=JSON_TYPE)
    return httpserver.url_for("/simple/")


def test_the_matrix_agrees_with_the_captured_pages(capsys: pytest.CaptureFixture[str]) -> None:
    assert audit_module().main([]) == 0
    assert capsys.readouterr().out.strip() == f"0 disagreements over {len(load_matrix().releases)} releases"


def test_the_matrix_agrees_with_a_loopback_replica(httpserver, capsys: pytest.CaptureFixture[str]) -> None:
    assert audit_module().main(["--index", serve_replica(httpserver)]) == 0
    assert "0 disagreements" in capsys.readouterr().out


def test_a_wrong_fact_is_reported_with_its_evidence(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    module = audit_module()
    matrix = load_matrix()
    old = matrix.release("2.0.0")
    wrong = old._replace(glibc=MappingProxyType({**old.glibc, "linux_x86_64": "2.5"}),
                         macos_python=MappingProxyType({}))
    tenth = matrix.release("2.10.0")
    releases = tuple(wrong if r is old else tenth._replace(macos_python=MappingProxyType({})) if r is tenth else r
                     for r in matrix.releases)
    monkeypatch.setattr(module, "load_matrix", lambda: matrix._replace(releases=releases))
    assert module.main([]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "torch 2.0.0 linux_x86_64: glibc 2.5 in the matrix, 2.17 from the wheels' tags" in out
    assert "torch 2.10.0 macos_arm64 Python 3.14: macOS 11.0 in the matrix, 14.0 on the index" in out


def test_a_release_the_matrix_lacks_is_reported(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    module = audit_module()
    matrix = load_matrix()
    monkeypatch.setattr(module, "load_matrix", lambda: matrix._replace(releases=matrix.releases[1:]))
    assert module.main([]) == 1
    newest = matrix.releases[0].version
    assert f"torch {newest}: on the default index, not in the matrix" in capsys.readouterr().out


def test_unreadable_pages_are_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "torch.json").write_text(json.dumps({"files": []}))
    assert audit_module().main(["--pages", str(tmp_path)]) == 2
    assert "cannot read the default index's pages" in capsys.readouterr().err
