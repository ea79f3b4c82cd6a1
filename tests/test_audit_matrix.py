"""scripts/audit_matrix.py: the embedded matrix against the default index's captured pages, and a loopback replica
of the index serving them; a matrix that disagrees is reported line by line with exit 1."""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import MappingProxyType, ModuleType

import pytest

from torch_install.resolver.matrix import load_matrix

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "scripts" / "reference" / "default-index"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"


@functools.cache
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


def test_the_matrix_and_the_tables_agree_with_the_evidence(capsys: pytest.CaptureFixture[str]) -> None:
    module = audit_module()
    assert module.main([]) == 0
    others = [name for name, _ in module.other_audits()]
    assert capsys.readouterr().out.strip() == (
        f"0 disagreements over {len(load_matrix().releases)} releases and {len(module.CLASSES)} fact classes, and "
        f"{len(others)} other audits")
    assert "audit_companions" in others  # every other scripts/audit_*.py runs with it


def test_another_audits_disagreement_is_reported(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    module = audit_module()
    name, other = module.other_audits()[0]

    def disagrees(argv: list[str]) -> int:
        print("a wrong fact")
        return 1

    monkeypatch.setattr(other, "main", disagrees)
    monkeypatch.setattr(module, "other_audits", lambda: [(name, other)])
    assert module.main([]) == 1
    assert f"{name}: a wrong fact" in capsys.readouterr().out.splitlines()


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


def _put(node: dict, path: list, value: object) -> None:
    for key in path[:-1]:
        node = node[key]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value


def _set(path: list, value: object):
    """A change of the matrix data: ``path`` from a release ("2.0.0", …) or a top-level key, to ``value``
    (DELETE: the key goes)."""
    def change(data: dict, tables: dict) -> None:
        node = _release(data, path[0]) if isinstance(path[0], str) and path[0][0].isdigit() else data[path[0]]
        _put(node, path[1:], value)
    return change


def _table(name: str, path: list, value: object):
    """A change of one shipped table (``read_tables`` names): ``path`` into it, to ``value`` (DELETE: it goes)."""
    def change(data: dict, tables: dict) -> None:
        _put(tables[name], path, value)
    return change


def _pattern(match: str, gpu: str | None):
    """The instance type pattern ``match`` names another GPU (None: the pattern goes)."""
    def change(data: dict, tables: dict) -> None:
        rows = tables["names"]["instance_types"]
        row = next(r for r in rows if r["match"] == match)
        if gpu is None:
            rows.remove(row)
        else:
            row["gpu"] = gpu
    return change


def _apu(code: str, gpu: str | None = None, code_names: list[str] | None = None, delete: bool = False):
    """The AMD APU pattern whose code names include ``code`` names another GPU or other code names (or goes)."""
    def change(data: dict, tables: dict) -> None:
        rows = tables["names"]["amd_apu_cpus"]
        row = next(r for r in rows if code in r["code_names"])
        if delete:
            rows.remove(row)
        row.update({k: v for k, v in (("gpu", gpu), ("code_names", code_names)) if v is not None})
    return change


def _chip(chip: str, gfx: str | None):
    """Every AMD PCI device of one code name gets another gfx target (None: the devices go)."""
    def change(data: dict, tables: dict) -> None:
        devices = tables["amd"]["devices"]
        for device in [d for d, row in devices.items() if row["chip"] == chip]:
            if gfx is None:
                del devices[device]
            else:
                devices[device]["gfx"] = gfx
    return change


def _both(*changes):
    def change(data: dict, tables: dict) -> None:
        for one in changes:
            one(data, tables)
    return change


DELETE = object()
LINUX_2_14_1 = ["cpu", "cu126", "cu130", "cu132", "rocm7.2", "rocm7.14", "xpu"]
# one changed fact (or more) of every class the audit checks: (its class, the change, the line the audit prints)
MUTATIONS = {
    "a release missing from the middle": ("releases", lambda d, t: d["releases"].remove(_release(d, "2.5.1")),
                                          "torch 2.5.1: on the default index, not in the matrix"),
    "a release date": ("release-date", _set(["2.14.0", "date"], "2026-09-01"), "torch 2.14.0: date 2026-09-01"),
    "Requires-Python": ("requires-python", _set(["2.15.0", "requires_python"], ">=3.10"),
                        "torch 2.15.0: Requires-Python '>=3.10'"),
    "a Python only the PyTorch index has, lost": ("python-tags", _set(
        ["2.13.0", "python", "linux_x86_64"], ["3.10", "3.11", "3.12", "3.13", "3.14", "3.14t"]),
        "torch 2.13.0 linux_x86_64: Pythons"),
    "a Python no index has, added": ("python-tags", _set(
        ["2.12.0", "python", "linux_x86_64"], ["3.10", "3.11", "3.12", "3.13", "3.13t", "3.14", "3.14t", "3.15"]),
        "torch 2.12.0 linux_x86_64: Pythons"),
    "the glibc floor": ("glibc", _set(["2.0.0", "glibc", "linux_x86_64"], "2.5"),
                        "torch 2.0.0 linux_x86_64: glibc 2.5"),
    "the aarch64 glibc floor": ("glibc", _set(["2.14.1", "glibc", "linux_aarch64"], "2.17"),
                                "torch 2.14.1 linux_aarch64: glibc 2.17"),
    "the macOS floor": ("macos", _set(["2.9.1", "macos", "macos_arm64"], "12.0"),
                        "torch 2.9.1 macos_arm64: macOS 12.0"),
    "the Intel Mac floor": ("macos", _set(["2.2.2", "macos", "macos_x86_64"], "10.15"),
                            "torch 2.2.2 macos_x86_64: macOS 10.15"),
    "a per-Python macOS floor": ("macos", _set(["2.10.0", "macos_python"], {}),
                                 "torch 2.10.0 macos_arm64 Python 3.13t"),
    "the default index's build": ("default-build", _set(["2.15.0", "pypi", "linux_x86_64"], "cu130"),
                                  "torch 2.15.0 linux_x86_64: the default index's build is cu130"),
    # 2.6 and older: manylinux1 wheels, whose METADATA writes each pin in parentheses, "(==12.4.127)"
    "an older release's default build": ("default-build", _set(["2.6.0", "pypi", "linux_x86_64"], "cu126"),
                                         "torch 2.6.0 linux_x86_64: the default index's build is cu126"),
    "an older aarch64 default build": ("default-build", _set(["2.4.1", "pypi", "linux_aarch64"], "cu124"),
                                       "torch 2.4.1 linux_aarch64: the default index's build is cu124"),
    "a Linux CUDA variant": ("variants", _set(["2.14.1", "variants", "linux_x86_64"],
                                              [v for v in LINUX_2_14_1 if v != "cu132"]),
                             "torch 2.14.1 linux_x86_64: variants"),
    "the xpu variant": ("variants", _set(["2.14.1", "variants", "linux_x86_64"], LINUX_2_14_1[:-1]),
                        "torch 2.14.1 linux_x86_64: variants"),
    "an aarch64 variant": ("variants", _set(["2.14.1", "variants", "linux_aarch64"], ["cpu", "cu126", "cu130"]),
                           "torch 2.14.1 linux_aarch64: variants"),
    "a Windows variant": ("variants", _set(["2.14.1", "variants", "windows_x86_64"],
                                           ["cpu", "cu126", "cu128", "cu130", "cu132", "xpu"]),
                          "torch 2.14.1 windows_x86_64: variants"),
    "the stable CUDA": ("stable-cuda", _set(["2.14.1", "stable_cuda"], "cu126"), "torch 2.14.1: stable CUDA cu126"),
    "an XPU family lost (no Battlemage)": ("xpu-families", _set(["2.14.1", "xpu", "linux"], [
        "alchemist", "arrow-lake", "lunar-lake", "meteor-lake", "panther-lake", "ponte-vecchio"]),
        "torch 2.14.1 linux: XPU families"),
    "a release's XPU build, deleted": ("xpu-families", _set(["2.12.0", "xpu"], None),
                                       "torch 2.12.0: no XPU families in the matrix"),
    "XPU families no branch sets, labelled as read": ("xpu-families", _set(["2.15.0", "xpu", "conf"], "source-file"),
                                                      "torch 2.15.0: XPU families labelled source-file"),
    "a companion pairing": ("companion-pairing", _set(["2.14.1", "companions", "torchvision"], "0.28.0"),
                            "torch 2.14.1: paired with torchvision 0.28.0, which requires torch==2.13.0"),
    "a companion's Python gaps": ("companion-gaps", _set(["2.15.0", "companion_gaps"],
                                                         {"torchvision": {"linux_x86_64": ["3.12"]}}),
                                  "torch 2.15.0: torchvision 0.29.2 lacks Pythons"),
    "the companion gap of a Python only the PyTorch index has": ("companion-gaps",
                                                                 _set(["2.13.0", "companion_gaps"], {}),
                                                                 "torch 2.13.0: torchvision 0.28.0 lacks Pythons"),
    "a companion's macOS floor": ("companion-macos", _set(["2.11.0", "companion_macos"], {}),
                                  "torch 2.11.0: torchvision 0.26.0 needs macOS"),
    "a companion's excluded Python patch release": ("companion-python", _set(["2.14.1", "companion_python"], {}),
                                                    "torch 2.14.1: torchvision 0.29.1 excludes Pythons ['3.14.1']"),
    "a decoupled companion release, deleted": ("decoupled-existence", _set(["decoupled_companions", "torchaudio",
                                                                            "2.11.0"], DELETE),
                                               "torchaudio 2.11.0: pins no one torch (its METADATA), not among"),
    "a decoupled companion's torch floor": ("decoupled-floor", _set(["decoupled_companions", "torchaudio", "2.11.1",
                                                                     "torch_from"], "2.10.0"),
                                            "torchaudio 2.11.1: goes with torch from 2.10.0"),
    "a decoupled companion's floor label": ("decoupled-floor", _set(["decoupled_companions", "torchaudio", "2.11.0",
                                                                     "conf"], "verified"),
                                            "torchaudio 2.11.0: goes with torch from 2.11.0 (verified)"),
    "a decoupled companion's Python tags": ("decoupled-wheels", _set(
        ["decoupled_companions", "torchvision", "0.29.1", "python", "linux_x86_64"],
        ["3.10", "3.11", "3.12", "3.13", "3.14", "3.14t", "3.15"]), "torchvision 0.29.1: Python tags"),
    "a decoupled companion's macOS floor": ("decoupled-wheels", _set(
        ["decoupled_companions", "torchaudio", "2.11.1", "macos", "macos_arm64"], {"*": "11.0"}),
        "torchaudio 2.11.1: macOS floors"),
    "a decoupled companion's variants": ("decoupled-variants", _set(
        ["decoupled_companions", "torchaudio", "2.11.0", "variants", "linux_x86_64"],
        ["cpu", "cu126", "cu128", "cu129", "cu130", "rocm7.1", "rocm7.2", "rocm7.14", "xpu"]),
        "torchaudio 2.11.0: variants"),
    "an NVIDIA device's chip": ("pci-nvidia", _table("nvidia", ["devices", "1676"], ["GM206", "Quadro M2200 Mobile"]),
                                "nvidia 1676: chip GM206 in the table, pci.ids says"),
    "an NVIDIA device, deleted": ("pci-nvidia", _table("nvidia", ["devices", "2684"], DELETE),
                                  "nvidia 2684: pci.ids names a GPU of a known chip"),
    "an AMD device's code name": ("pci-amd", _table("amd", ["devices", "744c"], {
        "name": "Navi 31", "chip": "Navi 32", "gfx": "gfx1101", "integrated": False}), "amd 744c: code name Navi 32"),
    "an AMD device, deleted": ("pci-amd", _table("amd", ["devices", "744c"], DELETE),
                               "amd 744c: pci.ids names a GPU of a known code name"),
    "a chip's compute capability": ("nvidia-chip-cc", _table("nvidia", ["chips", "AD102"], "8.6"),
                                    "nvidia chip AD102: compute capability 8.6"),
    "a Jetson module's compute capability": ("jetson", lambda d, t: t["jetson"]["modules"][1].update(
        compute_capability="8.8"), "jetson Orin: compute capability 8.8"),
    "a Jetson module's capability, one NVIDIA's list has": ("jetson", lambda d, t: next(
        r for r in t["jetson"]["modules"] if r["word"] == "TX2").update(compute_capability="6.1"),
        "jetson TX2: compute capability 6.1 in the table, 6.2 by jetson-containers"),
    "a Jetson module, deleted": ("jetson", lambda d, t: t["jetson"]["modules"].pop(3),
                                 "jetson-containers' Jetson TX2 (6.2): the table's word for it gives None"),
    "a GPU generation's driver floor": ("gpu-driver-floor", _set(["cuda", "gpu_driver_floor", "8.9", "driver"], "515"),
                                        "compute capability 8.9: driver floor 515"),
    "a GPU generation's driver floor, deleted": ("gpu-driver-floor", _set(["cuda", "gpu_driver_floor", "8.6"], DELETE),
                                                 "compute capability 8.6: driver floor None"),
    "Blackwell's driver floor": ("gpu-driver-floor", _set(["cuda", "gpu_driver_floor", "10.0", "driver"], "550"),
                                 "compute capability 10.0: driver floor 550"),
    "Blackwell Ultra's driver floor, deleted": ("gpu-driver-floor", _set(["cuda", "gpu_driver_floor", "10.3"], DELETE),
                                                "compute capability 10.3: driver floor 570"),
    "Kepler's last driver branch": ("gpu-driver-last", lambda d, t: d["cuda"]["gpu_driver_last"][0].update(
        driver="535"), "compute capability 3.0: last driver branch 535 in the matrix, R470 by NVIDIA's"),
    "a generation's last driver branch, deleted": ("gpu-driver-last", lambda d, t: d["cuda"]["gpu_driver_last"].pop(),
                                                   "compute capability 5.2: last driver branch None in the matrix, "
                                                   "R580"),
    "a generation given a last branch it does not have": ("gpu-driver-last", lambda d, t: d["cuda"][
        "gpu_driver_last"][1].update(up_to_sm=75), "compute capability 7.5: last driver branch 580 in the matrix, "
        "none"),
    "a toolkit's driver": ("toolkit-drivers", lambda d, t: next(r for r in t["toolkits"]["toolkits"]
                                                                if r["cuda"] == "12.8.0").update(linux="560.28.03"),
                           "CUDA 12.8.0: drivers 560.28.03/570.65 in the toolkit table"),
    "an Intel device's family": ("intel-pci", _table("intel", ["devices", "e20b", "family"], "alchemist"),
                                 "intel e20b: family alchemist in the table, battlemage by pciids.h"),
    "an Intel device, deleted": ("intel-pci", _table("intel", ["devices", "56a0"], DELETE),
                                 "intel 56a0: pciids.h lists it for alchemist"),
    "an Intel device Linux no longer lists": ("intel-pci", _table("intel", ["devices", "4f80", "family"], "xe-lp"),
                                              "intel 4f80: xe-lp in the table, neither pciids.h nor its pci.ids name"),
    "an APU pattern's GPU (Phoenix as Rembrandt's)": ("amd-apu-cpus", _apu("Phoenix", gpu="Radeon 680M"),
                                                      "AMD APU pattern 'Ryzen\\\\s+[3579]\\\\s+(PRO\\\\s+)?(7[0-9]40|"),
    "an APU pattern's code names": ("amd-apu-cpus", _apu("Mendocino", code_names=["Mendocin0"]),
                                    "AMD APU pattern 'Ryzen\\\\s+[3579]\\\\s+(PRO\\\\s+)?7[0-9]20U\\\\b': code names"),
    "an APU pattern, deleted": ("amd-apu-cpus", _apu("Mendocino", delete=True),
                                "amdgpu APU table: Ryzen 7x20 series (Mendocino, ['gfx1036']) has no CPU-model"),
    "a discrete code name's gfx": ("amd-chip-gfx", _chip("Navi 31", "gfx1101"),
                                   "amd chip Navi 31: gfx1101 in the PCI table, ['gfx1100']"),
    "an APU code name's gfx": ("amd-chip-gfx", _chip("Phoenix1", "gfx1102"),
                               "amd chip Phoenix1: gfx1102 in the PCI table, ['gfx1103']"),
    "a discrete series' code name, deleted": ("amd-chip-gfx", _chip("Navi 48", None),
                                              "amdgpu table: AMD Radeon RX 9070 (XT) (no code name, ['gfx1201']) "
                                              "matches no code name"),
    "an AWS instance type's GPU": ("cloud-instance-types", _pattern("^p4de?\\.", "V100"),
                                   "aws p4d.24xlarge: V100 in the table, NVIDIA A100 GPU by"),
    "an Azure size's GPU": ("cloud-instance-types", _pattern("^Standard_NC[0-9]+r?s_v2$", "V100"),
                            "azure Standard_NC12s_v2: V100 in the table, NVIDIA Tesla P100 GPU by"),
    "an instance type pattern, deleted": ("cloud-instance-types", _pattern("^g5\\.", None),
                                          "aws g5.12xlarge: NVIDIA A10G GPU by the provider's documentation, no "
                                          "pattern resolves it"),
    "a pattern no documented size has": ("cloud-instance-types", lambda d, t: t["names"]["instance_types"].append(
        {"match": "^p9\\.", "gpu": "B200"}), "instance type pattern '^p9\\\\.'"),
    "a Google Cloud machine type's GPU": ("cloud-instance-types", _pattern("^a3-ultragpu-", "H100"),
                                          "gcp a3-ultragpu-8g: H100 in the table, NVIDIA H200 GPU by"),
    "a Google Cloud pattern, deleted": ("cloud-instance-types", _pattern("^g4-standard-", None),
                                        "gcp g4-standard-48: NVIDIA RTX PRO 6000 GPU by the provider's documentation, "
                                        "no pattern resolves it"),
    "a Google Cloud pattern no documented type has": ("cloud-instance-types", lambda d, t: t["names"][
        "instance_types"].append({"match": "^a9-highgpu-", "gpu": "B200"}), "instance type pattern '^a9-highgpu-'"),
    "an AMD Azure size's GPU": ("cloud-instance-types", _pattern("^Standard_NG\\w*_V620_v1$", "Radeon PRO V710"),
                                "azure Standard_NG8ads_V620_v1: Radeon PRO V710 in the table"),
}


@pytest.fixture(scope="module")
def evidence():
    return audit_module().read_evidence()


def test_every_class_the_audit_checks_has_a_mutation() -> None:
    assert {cls for cls, _, _ in MUTATIONS.values()} == set(audit_module().CLASSES)


@pytest.fixture(scope="module")
def shipped_text() -> tuple[str, str]:
    """The shipped matrix and the tables the audit reads, as JSON text: each test reads its own copy of them."""
    from torch_install.package_data import load_json

    return json.dumps(load_json("resolver/data/torch-matrix.json")), json.dumps(audit_module().read_tables())


@pytest.mark.parametrize("fact", sorted(MUTATIONS))
def test_the_audit_reports_a_changed_fact_of_every_class(fact: str, evidence, shipped_text: tuple[str, str]) -> None:
    from torch_install.resolver.matrix import matrix_from_dict

    module = audit_module()
    data, tables = (json.loads(text) for text in shipped_text)
    cls, change, expected = MUTATIONS[fact]
    assert module.audit(matrix_from_dict(data), evidence, tables, only=(cls,)) == []  # the class agrees before
    change(data, tables)
    found = module.audit(matrix_from_dict(data), evidence, tables, only=(cls,))
    assert any(line.startswith(expected) for line in found), found


def test_every_documented_instance_type_is_looked_up_as_the_audit_reads_it(evidence) -> None:
    """The product's name lookup resolves each size the providers document to the GPU of the pattern the audit
    matched it with (the audit reads the patterns itself)."""
    from torch_install.detectors.names import gpu_from_name

    module = audit_module()
    ctx = module.Context(load_matrix(), evidence, module.read_tables())
    sizes = [size for data in evidence.cloud["providers"].values() for size in data["sizes"]]
    assert len(sizes) > 150
    for size in sizes:
        assert gpu_from_name(size) == gpu_from_name(module._lookup(ctx, size)), size


def test_every_instance_type_pattern_is_one_a_providers_documentation_answers_for(evidence) -> None:
    """No row escapes the check: each pattern is in the scope of a provider whose size pages were captured."""
    scopes = evidence.cloud["pattern_scope"].values()
    rows = audit_module().read_tables()["names"]["instance_types"]
    assert [r["match"] for r in rows if not any(re.search(scope, r["match"]) for scope in scopes)] == []


def test_the_class_list_is_what_docs_matrix_md_lists() -> None:
    text = (ROOT / "docs" / "matrix.md").read_text(encoding="utf-8")
    section = text.split("What the audit checks, and against what:", 1)[1].split("\n\n", 2)[1]
    listed = [line.split("|")[1].strip().strip("`") for line in section.splitlines()[2:] if line.startswith("| `")]
    assert listed == list(audit_module().CLASSES)


def _documented_keys(heading: str) -> set[str]:
    """The keys in the first column of the table under ``heading`` in docs/matrix.md (several may share a cell)."""
    text = (ROOT / "docs" / "matrix.md").read_text(encoding="utf-8").split(heading, 1)[1].split("\n\n", 2)[1]
    return {key for line in text.splitlines()[2:] for key in re.findall(r"`([a-z_.]+)`", line.split("|")[1])}


def test_docs_matrix_md_documents_exactly_the_matrix_keys() -> None:
    """Every key the matrix's schema allows, and no other (the data holds each of them but the optional ones)."""
    from torch_install.package_data import load_json

    schema = load_json("resolver/data/torch-matrix.schema.json")
    data = load_json("resolver/data/torch-matrix.json")
    properties = schema["properties"]
    top = {k for k in properties if k != "cuda"} | {f"cuda.{k}" for k in properties["cuda"]["properties"]}
    release = set(schema["$defs"]["release"]["properties"])
    decoupled = set(properties["decoupled_companions"]["additionalProperties"]["additionalProperties"]["properties"])
    assert _documented_keys("Top level:") == top
    assert _documented_keys("Per release:") == release
    assert _documented_keys("Per decoupled companion release") == decoupled
    assert set(data) | {f"cuda.{k}" for k in data["cuda"]} <= top | {"cuda"}
    assert {k for r in data["releases"] for k in r} <= release
