"""Every shipped JSON table has a JSON Schema beside it (``name.schema.json``), and holds to it: a hand edit with a
wrong type, an unknown key or a malformed id fails here, before any resolve reads it. Cross-references a schema
cannot state (a device's chip is in the chip table; a release's arch lists name only variants it lists) are
checked here too."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from schemas import registry_defs, schema_of, schema_path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "torch_install"
TABLES = sorted(p for p in PACKAGE.rglob("*.json") if not p.name.endswith(".schema.json"))


@functools.cache
def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _load(path: Path) -> Any:
    return json.loads(_text(path))


@functools.cache
def _validator(table: Path) -> Draft202012Validator:
    """The table's schema (with the shipped registry's parts), checked, once per table."""
    schema = schema_of(table)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_every_table_has_a_schema() -> None:
    assert TABLES and all(schema_path(t).is_file() for t in TABLES)


def test_the_registry_decides_every_vendor_part_of_the_schemas() -> None:
    """The entries the registry fills are placeholders in the schema files (a kind's ids only for a kind of the
    registry), and no file writes a variant pattern of its own: the variant ids a table may hold are the
    registry's."""
    files = {p.name: p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.schema.json")}
    placeholders = {name for text in files.values() for name in json.loads(text).get("$defs", {})}
    assert {"variant", "vendor", "vendor_namespaces", "torch_family", "torch_family_others"} <= placeholders
    assert {name for name in placeholders if name.endswith("_variant")} <= set(registry_defs())
    assert [name for name, text in files.items() if "cu[0-9]" in text or "rocm[0-9]" in text] == []
    assert [name for name, text in files.items() if '"torchvision", "torchaudio"' in text] == []  # the family


@pytest.mark.parametrize("table", TABLES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_table_holds_to_its_schema(table: Path) -> None:
    errors = sorted(_validator(table).iter_errors(_load(table)), key=lambda e: list(e.absolute_path))
    assert [f"{list(e.absolute_path)}: {e.message}" for e in errors][:5] == []


def _first_release(data: dict[str, Any]) -> dict[str, Any]:
    release: dict[str, Any] = data["releases"][0]
    return release


# One hand edit of each kind a person makes by mistake, and the table it goes into.
MUTATIONS: dict[str, tuple[str, Callable[[Any], None]]] = {
    "a driver floor written as a number": (
        "resolver/data/torch-matrix.json", lambda d: d["cuda"]["families"]["12"]["floor"].update(linux=525.60)),
    "a misspelt release key": ("resolver/data/torch-matrix.json", lambda d: _first_release(d).update(variant={})),
    "a variant id of no kind": (
        "resolver/data/torch-matrix.json", lambda d: _first_release(d)["variants"]["linux_x86_64"].append("cuda13")),
    "a platform key that does not exist": (
        "resolver/data/torch-matrix.json", lambda d: _first_release(d)["python"].update(linux_x64=["3.12"])),
    "an arch list of strings": (
        "resolver/data/torch-matrix.json",
        lambda d: next(iter(_first_release(d)["cuda"]["linux_x86_64"].values())).update(sm=["sm_90"])),
    "a confidence not on the scale": (
        "resolver/data/torch-matrix.json", lambda d: _first_release(d).update(variants_conf="probably")),
    "an upper-case PCI device id": (
        "detectors/data/nvidia-pci.json", lambda d: d["devices"].update({"2B85": ["GB202", "x"]})),
    "a compute capability as a number": ("detectors/data/nvidia-pci.json", lambda d: d["chips"].update(GB202=12.0)),
    "a gfx target without its prefix": (
        "detectors/data/amd-pci.json", lambda d: next(iter(d["devices"].values())).update(gfx="1100")),
    "integrated as a string": (
        "detectors/data/intel-pci.json", lambda d: next(iter(d["devices"].values())).update(integrated="yes")),
    "a name row of an unknown vendor": ("detectors/data/gpu-names.json", lambda d: d["gpus"][0].update(vendor="ati")),
    "a name row with no architecture": (
        "detectors/data/gpu-names.json",
        lambda d: d["gpus"].append({"name": "Mystery GPU", "vendor": "nvidia", "source": "x"})),
    "a toolkit driver with a letter": (
        "data/cuda-toolkit-drivers.json", lambda d: d["toolkits"][0].update(linux="535.x")),
    "a ROCm release as a number": ("data/amdgpu-dkms-rocm.json", lambda d: d["drivers"][0].update(rocm=6.4)),
    "a vendor's WheelNext namespace left out": ("data/variant-providers.json", lambda d: d.pop("intel")),
    "an override variable in lower case": (
        "data/variant-providers.json", lambda d: d["nvidia"]["overrides"].update(sm_arch="nv_force_sm")),
    "a companion's torch written as a bare version": (
        "resolver/data/companions.json", lambda d: d["packages"]["xformers"]["releases"][0].update(torch="2.10.0")),
    "a companion variant of no kind": (
        "resolver/data/companions.json",
        lambda d: d["packages"]["xformers"]["releases"][0]["variants"].append("cuda13")),
    "a companion kind that does not exist": (
        "resolver/data/companions.json", lambda d: d["packages"]["vllm"].update({"from": "pypi"})),
    "a find-links package without its page": (
        "resolver/data/companions.json", lambda d: d["packages"]["pyg-lib"].pop("url")),
    "a companion package without its sources": (
        "resolver/data/companions.json", lambda d: d["packages"]["torchao"].pop("src")),
    "a companion fact with a label of no kind": (
        "resolver/data/companions.json", lambda d: d["packages"]["xformers"]["labels"].update(torch="verified")),
    "a yanked flag as a boolean": (
        "resolver/data/companions.json", lambda d: d["packages"]["fbgemm-gpu"]["releases"][0].update(yanked=True)),
    "a vendor index over plain http": (
        "resolver/data/vendor-builds.json", lambda d: d["indexes"]["amd-stable"].update(url="http://example.com/x/")),
    "a vendor build's target without its gfx prefix": (
        "resolver/data/vendor-builds.json",
        lambda d: d["builds"][0]["targets"]["windows_x86_64"].update({"1100": None})),
    "a vendor build of a variant of no kind": (
        "resolver/data/vendor-builds.json", lambda d: d["builds"][0].update(variant="rocm-10")),
    "device extras without the all-devices extra": (
        "resolver/data/vendor-builds.json", lambda d: d["indexes"]["amd-stable"].pop("all_extra")),
}


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_a_wrong_hand_edit_fails_the_schema(mutation: str) -> None:
    relative, change = MUTATIONS[mutation]
    table = PACKAGE / relative
    data = _load(table)  # a parse of its own
    change(data)
    assert next(_validator(table).iter_errors(data), None) is not None, mutation  # one error is enough


def test_cross_references_hold() -> None:
    nvidia = _load(PACKAGE / "detectors" / "data" / "nvidia-pci.json")
    assert {row[0] for row in nvidia["devices"].values()} <= set(nvidia["chips"])
    intel = _load(PACKAGE / "detectors" / "data" / "intel-pci.json")
    assert {row["family"] for row in intel["devices"].values()} <= set(intel["families"])
    matrix = _load(PACKAGE / "resolver" / "data" / "torch-matrix.json")
    for release in matrix["releases"]:
        listed = {(p, v) for p, vs in release["variants"].items() for v in vs}
        assert {(p, v) for p, vs in release["cuda"].items() for v in vs} <= listed, release["v"]
        assert all(any(v == variant for _, v in listed) for variant in release["rocm"]), release["v"]
        assert set(release["python"]) <= set(release["variants"]), release["v"]
    versions = [r["v"] for r in matrix["releases"]]
    assert versions == sorted(versions, key=lambda v: tuple(int(x) for x in v.split(".")), reverse=True)


def test_every_companion_fact_names_a_recorded_source_and_the_newest_release_comes_first() -> None:
    table = _load(PACKAGE / "resolver" / "data" / "companions.json")
    from packaging.version import Version

    for name, package in table["packages"].items():
        assert package["src"] and set(package["src"]) <= set(table["sources"]), name
        versions = [Version(r["version"]) for r in package.get("releases", ())]
        assert versions == sorted(versions, reverse=True), name
        sets = package.get("build_sets", [])
        assert all(r["builds"] < len(sets) for r in package.get("releases", ()) if "builds" in r), name
    assert {"{torch}", "{variant}"} <= {f"{{{k}}}" for k in ("torch", "variant")
                                        if f"{{{k}}}" in table["packages"]["pyg-lib"]["url"]}
    wheel = table["packages"]["flash-attn"]["url"]
    assert all(f"{{{k}}}" in wheel for k in ("version", "cuda", "torch", "cxx11abi", "python", "platform"))
