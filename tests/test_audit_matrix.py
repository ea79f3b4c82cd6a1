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
    assert "torch 2.0.0 linux_x86_64: glibc 2.5 in the matrix, 2.17 from the wheels' tags and the build images' " \
        "floor" in out
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
    assert "cannot read the evidence" in capsys.readouterr().err


def _release(data: dict, version: str) -> dict:
    return next(r for r in data["releases"] if r["v"] == version)


def _set(path: list, value: object):
    def change(data: dict) -> None:
        node = _release(data, path[0]) if isinstance(path[0], str) and path[0][0].isdigit() else data[path[0]]
        for key in path[1:-1]:
            node = node[key]
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return change


DELETE = object()
# one fact of each class the evidence covers, changed in a copy of the data; the line the audit must print
MUTATIONS = {
    "glibc floor": (_set(["2.0.0", "glibc", "linux_x86_64"], "2.5"), "torch 2.0.0 linux_x86_64: glibc 2.5"),
    "platform macOS floor": (_set(["2.9.1", "macos", "macos_arm64"], "12.0"), "torch 2.9.1 macos_arm64: macOS 12.0"),
    "per-Python macOS floor": (_set(["2.10.0", "macos_python"], {}), "torch 2.10.0 macos_arm64 Python 3.13t"),
    "deleted middle release": (lambda d: d["releases"].remove(_release(d, "2.5.1")),
                               "torch 2.5.1: on the default index, not in the matrix"),
    "index-only Python": (_set(["2.12.0", "python", "linux_x86_64"],
                               ["3.10", "3.11", "3.12", "3.13", "3.14", "3.14t", "3.15"]),
                          "torch 2.12.0 linux_x86_64: Pythons"),
    "Requires-Python": (_set(["2.15.0", "requires_python"], ">=3.10"), "torch 2.15.0: Requires-Python '>=3.10'"),
    "variant set": (_set(["2.14.1", "variants", "linux_x86_64"], ["cpu", "cu126", "cu130", "rocm7.2", "rocm7.14",
                                                                   "xpu"]),
                    "torch 2.14.1 linux_x86_64: CUDA/ROCm variants"),
    "default build": (_set(["2.15.0", "pypi", "linux_x86_64"], "cu130"),
                      "torch 2.15.0 linux_x86_64: the default index's build is cu130"),
    "companion pairing": (_set(["2.14.1", "companions", "torchvision"], "0.28.0"),
                          "torch 2.14.1: paired with torchvision 0.28.0, which requires torch==2.13.0"),
    "companion Python coverage": (_set(["2.15.0", "companion_gaps"], {"torchvision": {"linux_x86_64": ["3.12"]}}),
                                  "torch 2.15.0: torchvision 0.29.2 lacks Pythons"),
    "companion macOS floor": (_set(["2.11.0", "companion_macos"], {}),
                              "torch 2.11.0: torchvision 0.26.0 macos_arm64 Python 3.13 needs macOS 12.0"),
    "decoupled companion floor": (_set(["decoupled_companions", "torchaudio", "2.11.1", "torch_from"], "2.10.0"),
                                  "torchaudio 2.11.1: goes with torch from 2.10.0"),
}


@pytest.fixture(scope="module")
def evidence():
    return audit_module().read_evidence()


@pytest.mark.parametrize("fact", sorted(MUTATIONS))
def test_the_audit_reports_a_changed_fact_of_every_class_it_covers(fact: str, evidence) -> None:
    import copy

    from torch_install.package_data import load_json
    from torch_install.resolver.matrix import matrix_from_dict

    module = audit_module()
    data = copy.deepcopy(dict(load_json("resolver/data/torch-matrix.json")))
    assert module.audit(matrix_from_dict(data), evidence) == []
    change, expected = MUTATIONS[fact]
    change(data)
    found = module.audit(matrix_from_dict(data), evidence)
    assert any(line.startswith(expected) for line in found), found


@pytest.mark.parametrize(("vendor", "device", "row", "expected"), [
    ("nvidia", "1676", ["GM206", "Quadro M2200 Mobile"], "nvidia 1676: chip GM206 in the table, pci.ids says"),
    ("amd", "744c", {"name": "Navi 31", "chip": "Navi 32", "gfx": "gfx1101", "integrated": False},
     "amd 744c: code name Navi 32")])
def test_the_audit_reports_a_pci_id_with_another_chip(vendor: str, device: str, row: object, expected: str,
                                                      evidence) -> None:
    module = audit_module()
    data = ROOT / "src" / "torch_install" / "detectors" / "data"
    tables = {name: json.loads((data / f"{name}-pci.json").read_text()) for name in ("nvidia", "amd")}
    tables[vendor]["devices"][device] = row
    found = module.audit(None, evidence, (tables["nvidia"], tables["amd"]))
    assert any(line.startswith(expected) for line in found), found
