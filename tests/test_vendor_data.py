"""The embedded table of vendor-hosted builds: rebuilt from the researched facts and the captured vendor statements
it is exactly the committed file; it names only what exists (registry vendors, sources, support levels, variant ids
of the vendor's kind, targets in the vendor's architecture field) and its loader reads every fact of it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from script_modules import script
from torch_install import vendors
from torch_install.resolver.variants import variant_kind
from torch_install.resolver.vendor_builds import load_vendor_builds, vendor_builds_from_dict

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "src/torch_install/resolver/data/vendor-builds.json"
DATA = json.loads(TABLE.read_text(encoding="utf-8"))
ARCH = {"gfx": r"gfx[0-9a-f]{3,4}", "compute_capability": r"[0-9]{1,2}\.[0-9]", "family": r"[a-z0-9|-]+"}


def test_the_committed_table_is_what_the_builder_writes(tmp_path: Path) -> None:
    out = tmp_path / "vendor-builds.json"
    assert script("build_vendor_builds").main(["-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == TABLE.read_text(encoding="utf-8")


def test_every_index_is_of_a_registered_vendor_and_every_source_is_named() -> None:
    for index_id, index in DATA["indexes"].items():
        assert vendors.vendor(index["vendor"]) is not None, index_id
        assert set(index["src"]) <= set(DATA["sources"]), index_id
    for build in DATA["builds"]:
        assert build["index"] in DATA["indexes"] and set(build["src"]) <= set(DATA["sources"])


@pytest.mark.parametrize("build", DATA["builds"], ids=lambda b: f"{b['index']}-{b['packages']['torch'] or 'nightly'}")
def test_a_build_names_its_vendors_variant_kind_and_architectures(build: dict) -> None:
    index = DATA["indexes"][build["index"]]
    row = vendors.vendor(index["vendor"])
    assert row is not None and variant_kind(build["variant"]) == row.kind
    label = build["packages"]["torch"].partition("+")[2]
    assert label in ("", build["variant"]), "the torch label is the build's variant"
    assert set(build["targets"]) <= set(index["platforms"]) and set(build["python"]) <= set(index["platforms"])
    for targets in build["targets"].values():
        assert targets and all(re.fullmatch(ARCH[row.arch_field], arch) for arch in targets)
        assert set(targets.values()) <= {*DATA["support_levels"], None}
    if index.get("extra"):  # every package the extras go on is one the build has
        assert set(index["extra_packages"]) <= set(build["packages"])


def test_the_loader_reads_every_fact() -> None:
    table = vendor_builds_from_dict(DATA)
    assert [b.vendor_index.id for b in table.builds] == [b["index"] for b in DATA["builds"]]
    for build, row in zip(table.builds, DATA["builds"], strict=True):
        assert dict(build.packages) == row["packages"] and build.variant == row["variant"]
        assert {p: list(v) for p, v in build.python.items()} == row["python"]
        assert {p: dict(t) for p, t in build.targets.items()} == row["targets"]
        assert build.needs == tuple(row.get("needs", ()))
    assert [s.id for s in table.support_levels] == list(DATA["support_levels"])
    assert table.cuda_of_l4t("36.4.3") == "12.6" and table.cuda_of_l4t("35.6.0") == "11.4"
    assert table.cuda_of_l4t("34.1.1") is None


def test_the_newest_build_comes_first_and_channels_are_kept_apart() -> None:
    table = load_vendor_builds()
    stable = table.of_vendor("amd", "windows_x86_64")
    assert [b.torch for b in stable] == sorted((b.torch for b in stable), key=lambda v: tuple(map(int, v.split("."))),
                                               reverse=True)
    assert {b.vendor_index.channel for b in stable} == {"stable"}
    assert [b.vendor_index.id for b in table.of_vendor("amd", "windows_x86_64", "nightly")] == ["amd-nightly"]
    assert table.of_vendor("amd", "linux_aarch64") == []


def test_a_mirror_moves_one_index_only() -> None:
    table = load_vendor_builds().with_urls({"amd-stable": "http://127.0.0.1:1/x"})
    assert {b.vendor_index.url for b in table.builds if b.vendor_index.id == "amd-stable"} == {"http://127.0.0.1:1/x"}
    assert table.indexes["amd-multi-arch"].url == DATA["indexes"]["amd-multi-arch"]["url"]
