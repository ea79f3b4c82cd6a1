"""The vendor registry (vendors.py): every floor reads it, its hooks exist, one visibility rule serves detection,
plan and doctor, and a vendor defined here alone (a registry row and its data) is detected, completed, resolved
and doctored: the recipe of docs/architecture.md, "Adding a vendor", run."""

from __future__ import annotations

import copy
import inspect
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from doctor_cases import codes, interpreter
from hook_kinds import hook_kinds
from schemas import schema_of
from script_modules import script
from sysroot import FIXTURES, PCI_3D, PCI_HOST, SysrootBuilder, host_facts
from torch_install import vendors
from torch_install.cli import main
from torch_install.detectors import detect
from torch_install.detectors.names import gpu_from_name
from torch_install.detectors.pci import PciFacts
from torch_install.doctor import diagnose
from torch_install.doctor.inspect import inspect_environment
from torch_install.errors import InputError
from torch_install.machine import Gpu, Machine, machine_from_dict
from torch_install.machine_completion import complete_machine
from torch_install.probe import Probe
from torch_install.render import FORMATS
from torch_install.resolver import matrix as matrix_module
from torch_install.resolver.choose import PLAN_RULES, resolve
from torch_install.resolver.matrix import load_matrix, matrix_from_dict
from torch_install.resolver.plan import Request
from torch_install.resolver.variants import variant_kind, variant_order
from torch_install.resolver.vendor_rules import VendorRules

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "torch_install"


HOOK_KINDS = hook_kinds()


def _signature(code: Any) -> tuple[list[tuple[str, Any, Any]], Any]:
    """(each parameter's name, kind and annotation as written; the return annotation) of a function, a class (its
    constructor) or a Protocol's ``__call__`` (without self)."""
    parameters = list(inspect.signature(code).parameters.values())
    if parameters and parameters[0].name == "self":
        parameters = parameters[1:]
    return [(p.name, p.kind, p.annotation) for p in parameters], inspect.signature(code).return_annotation


def test_each_kind_of_hook_is_declared_where_it_is_called() -> None:
    """One kind per hook field of the row, each in the package whose code it names."""
    assert sorted(kind.field for kind in HOOK_KINDS) == sorted(
        ["detector", "pci_facts", "pci_names", "check", "preference", "plan_rules", "doctor_checks",
         "wheelnext_properties"])
    assert all(kind.protocol.__module__.startswith(kind.package) for kind in HOOK_KINDS)


@pytest.mark.parametrize("row", vendors.VENDORS, ids=lambda r: r.name)
def test_every_hook_of_every_row_has_its_kinds_signature(row: vendors.Vendor) -> None:
    """Each hook a row names is imported and its signature compared with its kind's Protocol: the parameters
    (names, kinds, annotations as written) and the return type; a class named as a hook is made by calling it,
    so its constructor takes the parameters and it is the Protocol's return type."""
    for kind in HOOK_KINDS:
        parameters, returns = _signature(kind.protocol.__call__)
        for code in kind.load_all(row):
            if isinstance(code, type):
                declared = vars(sys.modules[kind.protocol.__module__])[returns]
                assert issubclass(code, declared) and _signature(code)[0] == parameters, (kind.field, code)
            else:
                assert _signature(code) == (parameters, returns), (kind.field, code)
    assert issubclass(PLAN_RULES.load(row), VendorRules)
    if row.pci_table:
        assert (Path(vendors.__file__).parent / "detectors" / "data" / row.pci_table).is_file()


def test_a_hook_of_another_shape_is_told_apart() -> None:
    """The comparison sees a parameter too many, a renamed one and another return type."""
    def good(device_id: str) -> tuple[dict[str, Any], str] | None: ...
    def extra(device_id: str, more: int) -> tuple[dict[str, Any], str] | None: ...
    def renamed(pci_id: str) -> tuple[dict[str, Any], str] | None: ...
    def returns(device_id: str) -> dict[str, Any]: ...
    wanted = _signature(PciFacts.__call__)
    assert _signature(good) == wanted
    assert all(_signature(f) != wanted for f in (extra, renamed, returns))


def test_ids_and_kinds_are_each_one_vendors() -> None:
    ids = [i for row in vendors.VENDORS for i in row.pci_vendor_ids]
    kinds = vendors.gpu_kinds()
    assert len(ids) == len(set(ids)) and len(kinds) == len(set(kinds))
    assert {row.name for row in vendors.with_builds()} == {"nvidia", "amd", "intel"}


def test_every_variant_of_the_shipped_matrix_has_a_kind_of_the_registry() -> None:
    """The stand-in for an exhaustive match: a variant the registry does not know would be silently ignored."""
    variants = {v for r in load_matrix().releases for vs in r.variant_lists.values() for v in vs}
    assert {variant_kind(v) for v in variants} <= {"cpu", "default", *vendors.gpu_kinds()}
    assert sorted(["xpu", "rocm6.4", "cu128", "cpu"], key=variant_order) == ["cpu", "cu128", "rocm6.4", "xpu"]


def _amd_sysroot(tmp_path: Path, env: dict[str, str]) -> Path:
    root = tmp_path / "rx7900xtx"
    shutil.copytree(FIXTURES / "rx7900xtx", root, symlinks=True)
    (root / "_env.json").write_text(json.dumps(env))
    return root


@pytest.mark.parametrize("variable", ["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"])
def test_one_visibility_rule_hides_amd_gpus_in_detect_plan_and_doctor(tmp_path: Path, variable: str) -> None:
    """HIP reads CUDA_VISIBLE_DEVICES too (ROCm's GPU isolation reference): detection, the plan and the doctor
    all say so for an AMD machine."""
    probe = Probe(root=_amd_sysroot(tmp_path, {variable: "-1"}))
    machine = complete_machine(detect(probe))
    assert machine.gpus_of("amd") and not any(g.visible for g in machine.gpus_of("amd"))
    plan = resolve(machine, Request(), load_matrix())
    assert plan.choice is not None and plan.choice.variant == "cpu" and not plan.gpu_accelerated
    site = tmp_path / "site"
    site.mkdir()
    report = diagnose(machine, inspect_environment(interpreter(site)), load_matrix(), probe=probe,
                      environ=probe.environ)
    assert [f.title for f in report.findings if f.code == "visible-devices-hide-all"] == [
        f"{variable} hides every GPU from torch"]


def test_hip_indexes_count_the_devices_rocr_left(tmp_path: Path) -> None:
    """ROCr applies first; HIP's (or CUDA's) indexes then count only the devices ROCr left."""
    row = vendors.vendor("amd")
    assert row is not None
    env = {"ROCR_VISIBLE_DEVICES": "1,2", "CUDA_VISIBLE_DEVICES": "1"}
    outcome = vendors.hidden_devices(env.get, row, 3)
    assert outcome.hidden == {0: "$ROCR_VISIBLE_DEVICES=1,2", 1: "$CUDA_VISIBLE_DEVICES=1"}
    env["HIP_VISIBLE_DEVICES"] = "0"  # HIP's own variable outranks CUDA's
    assert vendors.hidden_devices(env.get, row, 3).hidden == {0: "$ROCR_VISIBLE_DEVICES=1,2",
                                                             2: "$HIP_VISIBLE_DEVICES=0"}
    intel = vendors.vendor("intel")
    assert intel is not None  # Level Zero: a tile keeps its device, an empty mask selects nothing
    assert vendors.hidden_devices({"ZE_AFFINITY_MASK": "1.0"}.get, intel, 2).hidden == {0: "$ZE_AFFINITY_MASK=1.0"}
    assert vendors.hidden_devices({"ZE_AFFINITY_MASK": ""}.get, intel, 2).hidden == {}


# -- a vendor that exists in this test only ------------------------------------------------------------------

ACME = vendors.Vendor(
    name="acme", brand="Acme", pci_vendor_ids=("1f1f",), kind="npu", variant_id=r"npu[0-9]{2}", build="NPU",
    arch_field="family", arch_word="NPU generation", list_word="NPU list",
    visibility=(vendors.Selector(("ACME_VISIBLE_DEVICES",)),), select="ACME_VISIBLE_DEVICES={}",
    version_field="npu", build_variant="npu{major}{minor}", runtime_prefixes=("acme-",),
)
NPU_VERSION_PY = "__version__ = '{v}'\ndebug = False\ncuda = None\nhip = None\nxpu = None\nnpu = {npu}\n"


REFERENCE = ROOT / "scripts" / "reference" / "torch-matrix.json"
LINUX_FLAGS = ("--os", "linux", "--arch", "x86_64", "--python", "3.12")


@pytest.fixture(scope="module")
def acme_matrix_data() -> dict[str, Any]:
    """The matrix build (scripts/build_matrix.py) run on the reference's newest release with Acme's build added as
    data: npu31 among the index's variants, and its NPU list in the reference's generic ``targets`` field."""
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    newest = copy.deepcopy(max(reference["releases"], key=lambda r: tuple(map(int, r["version"].split(".")))))
    newest["index_variants"]["linux_x86_64"].append("npu31")
    newest["targets"] = {"npu31": {"arches": ["n1", "n2"], "confidence": "verified", "sources": ["acme release notes"]}}
    built: dict[str, Any] = script("build_matrix").build({**reference, "releases": [newest]})
    return built


@pytest.fixture
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, acme_matrix_data: dict[str, Any]):
    """The registry with ACME in it (its PCI table kept beside the test), and the matrix built with its npu31
    build for Acme's n1 and n2 generations; the CLI reads that matrix too."""
    table = tmp_path / "acme-pci.json"
    table.write_text(json.dumps({"devices": {"0a01": {"name": "Acme N1 Accelerator", "family": "n1",
                                                      "integrated": False},
                                             "0a03": {"name": "Acme N3 Accelerator", "family": "n3",
                                                      "integrated": False}}}))
    *gpu_vendors, apple = vendors.VENDORS  # the row goes with the vendors that have builds
    monkeypatch.setattr(vendors, "VENDORS", (*gpu_vendors, ACME._replace(pci_table=str(table)), apple))
    monkeypatch.setattr(vendors, "generation", vendors.generation + 1)
    matrix = matrix_from_dict(acme_matrix_data)
    monkeypatch.setattr(matrix_module, "load_matrix", lambda: matrix)
    return matrix, acme_matrix_data["releases"][0]["v"]


def _acme_root(tmp_path: Path, env: dict[str, str] | None = None) -> Path:
    b = SysrootBuilder(tmp_path / "acme-box", host_facts(), env or {})
    b.pci("0000:00:00.0", "8086", "09a2", PCI_HOST)
    b.pci("0000:41:00.0", "1f1f", "0a01", PCI_3D, "acme")
    return b.root


def _acme_box(tmp_path: Path, env: dict[str, str] | None = None) -> Probe:
    return Probe(root=_acme_root(tmp_path, env))


def test_a_registered_vendor_is_detected_completed_and_resolved(tmp_path: Path, acme) -> None:
    matrix, newest = acme
    machine = complete_machine(detect(_acme_box(tmp_path)))
    (gpu,) = machine.gpus
    assert (gpu.vendor, gpu.name, gpu.family, gpu.driver) == ("acme", "Acme N1 Accelerator", "n1", "acme")
    assert machine.sources["gpus[0].family"] == "acme-pci.json (0a01)"
    plan = resolve(machine, Request(), matrix)
    assert plan.choice is not None and (plan.choice.torch, plan.choice.variant) == (newest, "npu31")
    assert plan.gpu_accelerated and plan.choice.index_url == "https://download.pytorch.org/whl/npu31"
    assert "npu31: builds n1" in plan.reasons
    # a profile naming the GPU by PCI id alone is completed from the same table
    profile = complete_machine(machine_from_dict({"os": "linux", "arch": "x86_64", "python": "3.12",
                                                  "gpus": [{"vendor": "acme", "pci_id": "1f1f:0a03"}]}))
    assert profile.gpus[0].family == "n3"
    other = resolve(profile, Request(), matrix)  # n3 is not built: the CPU build, saying why
    assert other.choice is not None and other.choice.variant == "cpu" and not other.gpu_accelerated
    assert any("no code for Acme N3 Accelerator (n3) (builds n1 n2)" in r.reason for r in other.rejected)
    unknown = resolve(Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", gpus=(Gpu("acme"),)),
                      Request(), matrix)
    assert "NPU generation unknown for acme GPU: not checked against the builds' NPU lists" in [
        w.message for w in unknown.warnings]


def test_a_registered_vendors_gpu_is_known_by_the_names_of_its_pci_table(acme) -> None:
    """--gpu NAME reads every vendor's PCI table through the registry: a row and its table are enough."""
    matrix, newest = acme
    assert gpu_from_name("Acme N1 Accelerator") == Gpu("acme", "Acme N1 Accelerator", family="n1", integrated=False)
    assert gpu_from_name("acme n3 accelerator").family == "n3"
    with pytest.raises(InputError, match="close matches: Acme N3 Accelerator, Acme N1 Accelerator"):
        gpu_from_name("Acme N2 Accelerator")
    machine = complete_machine(Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35",
                                       gpus=(Gpu("acme", "Acme N1 Accelerator"),)))
    plan = resolve(machine, Request(), matrix)
    assert plan.choice is not None and (plan.choice.torch, plan.choice.variant) == (newest, "npu31")


def test_a_registered_vendors_selection_variable_hides_it(tmp_path: Path, acme) -> None:
    matrix, _ = acme
    probe = _acme_box(tmp_path, {"ACME_VISIBLE_DEVICES": "-1"})
    machine = complete_machine(detect(probe))
    assert not machine.gpus[0].visible
    assert machine.sources["gpus[0].visible"] == "$ACME_VISIBLE_DEVICES=-1"
    assert resolve(machine, Request(), matrix).choice.variant == "cpu"  # type: ignore[union-attr]


def _site_with_torch(where: Path, version: str, npu: str) -> Path:
    """site-packages holding a torch whose version.py states its build as torch's build writes the fields."""
    (where / "torch").mkdir(parents=True)
    (where / "torch" / "__init__.py").write_text("")
    (where / "torch" / "version.py").write_text(NPU_VERSION_PY.format(v=version, npu=npu))
    dist = where / f"torch-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    (dist / "RECORD").write_text("torch/__init__.py,,\n")
    return where


def test_a_registered_vendors_build_is_doctored(tmp_path: Path, acme) -> None:
    matrix, newest = acme
    machine = complete_machine(detect(_acme_box(tmp_path)))
    for npu, label in (("'3.1'", "npu31"), ("None", "cpu")):
        site = _site_with_torch(tmp_path / label, f"{newest}+{label}", npu)
        report = diagnose(machine, inspect_environment(interpreter(site)), matrix, environ={})
        assert report.torch is not None and report.torch.variant == label
        assert ("cpu-build-on-gpu-machine" in codes(report)) is (label == "cpu")
        if label == "npu31":
            assert report.torch.evidence == "torch/version.py: npu = '3.1'"
    hidden = diagnose(machine, inspect_environment(interpreter(tmp_path / "npu31")), matrix,
                      environ={"ACME_VISIBLE_DEVICES": ""})
    (finding,) = [f for f in hidden.findings if f.code == "visible-devices-hide-all"]
    assert finding.fix == "unset ACME_VISIBLE_DEVICES" and "the NPU runtime see no device" in finding.evidence[1]


def test_the_matrix_build_and_the_schemas_take_a_new_vendors_data(acme, acme_matrix_data: dict[str, Any],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The build writes the new kind's arch lists from the reference's generic field, and every schema takes the
    vendor's data with no edit of its own: the registry decides the variant ids and vendor names they accept."""
    matrix, newest = acme
    assert acme_matrix_data["releases"][0]["targets"] == {"npu31": {"arches": ["n1", "n2"], "conf": "verified"}}
    assert matrix.arch_targets(newest, "npu31").arches == ("n1", "n2")
    names = json.loads((PACKAGE / "detectors" / "data" / "gpu-names.json").read_text(encoding="utf-8"))
    names["gpus"].append({"name": "Acme N2 Accelerator", "vendor": "acme", "family": "n2", "source": "acme"})
    companions = json.loads((PACKAGE / "resolver" / "data" / "companions.json").read_text(encoding="utf-8"))
    next(iter(companions["packages"]["xformers"]["releases"]))["variants"].append("npu31")
    tables = {"resolver/data/torch-matrix.json": acme_matrix_data, "detectors/data/gpu-names.json": names,
              "resolver/data/companions.json": companions}

    def errors() -> list[str]:
        return [f"{name}: {error.message}" for name, data in tables.items()
                for error in Draft202012Validator(schema_of(PACKAGE / name)).iter_errors(data)]

    assert errors() == []
    monkeypatch.setattr(vendors, "VENDORS", tuple(row for row in vendors.VENDORS if row.name != "acme"))
    refused = errors()  # without its row, each table's new facts are refused
    assert {e.split(":")[0] for e in refused} == set(tables) and all("npu31" in e or "acme" in e for e in refused)


def test_a_registered_vendor_is_planned_in_every_format(tmp_path: Path, acme, capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """``--gpu NAME`` of the new vendor through the CLI, in every plan format; the JSON's machine, given back as
    a target, plans the same build."""
    _, newest = acme
    pin = f"torch=={newest}+npu31"
    for fmt in FORMATS:
        code = main(["plan", "--gpu", "Acme N1 Accelerator", *LINUX_FLAGS, "--format", fmt])
        out, err = capsys.readouterr()
        assert code == 0, (fmt, err)
        assert "npu31" in out, fmt
        assert pin in out or fmt in ("url", "variant-env"), fmt  # those two name the index, or the variant
    assert main(["plan", "--gpu", "Acme N1 Accelerator", *LINUX_FLAGS, "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["choice"]["variant"] == "npu31" and plan["machine"]["gpus"][0]["family"] == "n1"
    target = tmp_path / "acme.json"
    target.write_text(json.dumps(plan["machine"]))
    assert main(["plan", "--target", str(target), "--format", "url"]) == 0
    assert capsys.readouterr().out.strip() == "https://download.pytorch.org/whl/npu31"
    assert main(["matrix", *LINUX_FLAGS, "--gpu", "Acme N1 Accelerator", "--limit", "1", "--json"]) == 0
    assert "npu31" in capsys.readouterr().out


def test_a_registered_vendor_is_detected_through_the_cli_and_planned_in_a_fleet(
        tmp_path: Path, acme, capsys: pytest.CaptureFixture[str]) -> None:
    _, newest = acme
    box = _acme_root(tmp_path)
    assert main(["detect", "--sysroot", str(box)]) == 0
    assert "Acme N1 Accelerator" in capsys.readouterr().out
    assert main(["detect", "--sysroot", str(box), "--json"]) == 0
    profile = json.loads(capsys.readouterr().out)
    assert [(g["vendor"], g["family"]) for g in profile["gpus"]] == [("acme", "n1")]
    assert main(["detect", "--sysroot", str(box), "--format", "nfd"]) == 0
    assert "npu31" in capsys.readouterr().out
    n1, n3 = tmp_path / "n1.json", tmp_path / "n3.json"
    n1.write_text(json.dumps(profile))
    n3.write_text(json.dumps({**profile, "gpus": [{"vendor": "acme", "pci_id": "1f1f:0a03"}]}))
    assert main(["plan", "--target", str(n1), "--target", str(n3), "--format", "json"]) == 0
    fleet = json.loads(capsys.readouterr().out)
    assert [t["choice"]["variant"] for t in fleet["targets"]] == ["npu31", "cpu"]
    assert fleet["choice"] == {"torch": newest, "variant": "cpu", "problems": []}
