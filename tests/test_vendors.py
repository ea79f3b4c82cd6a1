"""The vendor registry (vendors.py): every floor reads it, its hooks exist, one visibility rule serves detection,
plan and doctor, and a vendor defined here alone (a registry row and its data) is detected, completed, resolved
and doctored: the recipe of docs/architecture.md, "Adding a vendor", run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from doctor_cases import codes, interpreter
from resolve_cases import TEST_MATRIX_FILE
from sysroot import FIXTURES, PCI_3D, PCI_HOST, SysrootBuilder, host_facts
from torch_install import vendors
from torch_install.detectors import detect
from torch_install.detectors.names import gpu_from_name
from torch_install.doctor import diagnose
from torch_install.doctor.inspect import inspect_environment
from torch_install.errors import InputError
from torch_install.machine import Gpu, Machine, machine_from_dict
from torch_install.machine_completion import complete_machine
from torch_install.probe import Probe
from torch_install.resolver.choose import resolve
from torch_install.resolver.matrix import load_matrix, matrix_from_dict
from torch_install.resolver.plan import Request
from torch_install.resolver.variants import variant_kind, variant_order
from torch_install.resolver.vendor_rules import VendorRules


@pytest.mark.parametrize("row", vendors.VENDORS, ids=lambda r: r.name)
def test_every_hook_of_every_row_exists(row: vendors.Vendor) -> None:
    hooks = [row.check, row.preference, row.plan_rules, *row.doctor_checks,
             *(h for h in (row.pci_facts, row.pci_names, row.wheelnext_properties) if h)]
    assert all(callable(vendors.hook(ref)) for ref in hooks)
    assert issubclass(vendors.hook(row.plan_rules), VendorRules)
    if row.detector:
        assert (Path(vendors.__file__).parent / "detectors" / f"{row.detector}.py").is_file()
    if row.pci_table:
        assert (Path(vendors.__file__).parent / "detectors" / "data" / row.pci_table).is_file()


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


@pytest.fixture
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The registry with ACME in it (its PCI table kept beside the test), and a matrix whose newest release has an
    npu31 build for Acme's n1 and n2 generations."""
    table = tmp_path / "acme-pci.json"
    table.write_text(json.dumps({"devices": {"0a01": {"name": "Acme N1 Accelerator", "family": "n1",
                                                      "integrated": False},
                                             "0a03": {"name": "Acme N3 Accelerator", "family": "n3",
                                                      "integrated": False}}}))
    data = json.loads(TEST_MATRIX_FILE.read_text())
    newest = data["releases"][0]
    newest["variants"]["linux_x86_64"] = [*newest["variants"]["linux_x86_64"], "npu31"]
    newest["targets"] = {"npu31": {"arches": ["n1", "n2"], "conf": "verified"}}
    *gpu_vendors, apple = vendors.VENDORS  # the row goes with the vendors that have builds
    monkeypatch.setattr(vendors, "VENDORS", (*gpu_vendors, ACME._replace(pci_table=str(table)), apple))
    monkeypatch.setattr(vendors, "generation", vendors.generation + 1)
    return matrix_from_dict(data), newest["v"]


def _acme_box(tmp_path: Path, env: dict[str, str] | None = None) -> Probe:
    b = SysrootBuilder(tmp_path / "acme-box", host_facts(), env or {})
    b.pci("0000:00:00.0", "8086", "09a2", PCI_HOST)
    b.pci("0000:41:00.0", "1f1f", "0a01", PCI_3D, "acme")
    return Probe(root=b.root)


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
