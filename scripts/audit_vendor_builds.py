#!/usr/bin/env python3
"""Audit the embedded table of vendor-hosted builds against the vendors' own statements, with its own readings of
them (nothing of build_vendor_builds.py is imported).

    python scripts/audit_vendor_builds.py [--table FILE] [--captured DIR]

Reads ``src/torch_install/resolver/data/vendor-builds.json`` and the statements ``capture_vendor_sources.py``
captured (``scripts/reference/vendor/``), and prints each disagreement with its evidence; exit 1 if there is any.
What it checks:

- AMD: every gfx target of every build is one of AMD's ``[device-*]`` extras; the nightly builds' targets per OS
  are exactly the extras AMD's table for that OS ticks, each at the highest level ticked; every level is the one
  that table gives; the Pythons are the release builds'; a build's torchvision is the one AMD pairs with its torch;
  the nightly's ROCm version is the development branch's, its index the one RELEASES.md names; an index that
  rests on RFC0012 is on one of its stream hosts, under one of its index names.
- Jetson: a build's targets are what the JetPack of its index's L4T compiles; the L4T -> CUDA rows are the
  jetson-containers chain's; an index URL is that project's ``https://pypi.<host>/jp<JetPack>/cu<CUDA>``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TABLE = HERE.parent / "src/torch_install/resolver/data/vendor-builds.json"
CAPTURED = HERE / "reference" / "vendor"
COLUMNS = ("release-ready", "sanity-tested", "build-passing")  # SUPPORTED_GPUS.md's, the highest first
OS_OF = {"windows_x86_64": "windows", "linux_x86_64": "linux", "linux_aarch64": "linux"}


def _files(captured: Path, name: str) -> dict[str, Any]:
    files: dict[str, Any] = json.loads((captured / name).read_text(encoding="utf-8"))["files"]
    return files


def _level(row: dict[str, Any] | None) -> str | None:
    return next((c for c in COLUMNS if row and row.get(c)), None)


def _jetpack_sm(rules: list[dict[str, Any]], major: int) -> list[int] | None:
    for rule in rules:
        bound = int(rule["l4t"][0])
        if rule["op"] == "major>=" and major >= bound or rule["op"] == "major==" and major == bound:
            return list(rule["sm"])
    return None


def audit_amd(table: dict[str, Any], therock: dict[str, Any]) -> list[str]:
    out: list[str] = []
    releases = therock["RELEASES.md"]
    extras = {row["gfx"] for row in releases["device_extras"] if row["gfx"].startswith("gfx")}
    levels = therock["SUPPORTED_GPUS.md"]["levels"]
    pythons = therock["build_tools/github_actions/configure_pytorch_release_matrix.py"]["RELEASE_PYTHON_VERSIONS"]
    pairs = {p["torch"]: p for p in releases["pairings"]}
    rfc = therock["docs/rfcs/RFC0012-Repo-Structure.md"]
    for index_id, index in table["indexes"].items():
        if index["vendor"] != "amd":
            continue
        if index["channel"] == "nightly" and index["url"] != releases["nightly_index"]:
            out.append(f"index {index_id}: {index['url']}, RELEASES.md names {releases['nightly_index']}")
        if "therock-rfc0012" in index["src"]:
            host, _, path = index["url"].removeprefix("https://").partition("/")
            if host not in rfc["stream_hosts"] or path.strip("/") not in (f"rocm/{i}" for i in rfc["indexes"]):
                out.append(f"index {index_id}: {index['url']} is no <stream>.repo.amd.com/rocm/<whl|whl-next>/ of "
                           "RFC0012")
    for build in table["builds"]:
        index = table["indexes"][build["index"]]
        if index["vendor"] != "amd":
            continue
        name = f"{build['index']} {build['packages']['torch'] or 'nightly'}"
        for platform, targets in build["targets"].items():
            os_levels = levels.get(OS_OF[platform], {})
            if set(targets) - extras:
                out.append(f"{name} {platform}: {', '.join(sorted(set(targets) - extras))} not among AMD's "
                           "[device-*] extras (RELEASES.md)")
            for gfx, level in targets.items():
                if level != _level(os_levels.get(gfx)):
                    out.append(f"{name} {platform}: {gfx} at {level}, SUPPORTED_GPUS.md says "
                               f"{_level(os_levels.get(gfx))}")
            if index["channel"] == "nightly":
                expected = {g for g in extras if _level(os_levels.get(g))}
                if set(targets) != expected:
                    out.append(f"{name} {platform}: targets {sorted(targets)}, AMD's extras its OS table ticks "
                               f"{sorted(expected)}")
        for platform, tags in build["python"].items():
            if tags != pythons:
                out.append(f"{name} {platform}: Pythons {tags}, the release builds make {pythons}")
        torch, vision = build["packages"]["torch"], build["packages"].get("torchvision", "")
        pair = pairs.get(".".join(torch.split(".")[:2]))
        if torch and vision and pair and not vision.startswith(pair["torchvision"] + "."):
            out.append(f"{name}: torchvision {vision}, RELEASES.md pairs torch {pair['torch']} with "
                       f"{pair['torchvision']}")
        if index["channel"] == "nightly" and build["variant"] != "rocm" + therock["version.json"]["rocm-version"]:
            out.append(f"{name}: variant {build['variant']}, the development branch is ROCm "
                       f"{therock['version.json']['rocm-version']}")
    return out


def audit_jetson(table: dict[str, Any], jetson: dict[str, Any]) -> list[str]:
    out: list[str] = []
    l4t = jetson["jetson_containers/l4t_version.py"]
    config = jetson["packages/cuda/cuda/config.py"]
    for index_id, index in table["indexes"].items():
        if index["vendor"] != "nvidia":
            continue
        expected = f"https://pypi.{config['index_host']}/jp{index['jetpack']}/cu{index['cuda'].replace('.', '')}"
        if index["url"].rstrip("/") != expected:
            out.append(f"index {index_id}: {index['url']}, jetson-containers' layout gives {expected}")
    for build in table["builds"]:
        index = table["indexes"][build["index"]]
        if index["vendor"] != "nvidia":
            continue
        sm = _jetpack_sm(l4t["tegra_cuda_architectures"], int(index["l4t"][0]))
        want = {f"{s // 10}.{s % 10}" for s in sm or ()}
        for platform, targets in build["targets"].items():
            if set(targets) != want:
                out.append(f"{build['index']} {build['packages']['torch']} {platform}: targets {sorted(targets)}, "
                           f"JetPack builds for L4T {index['l4t'][0]} compile {sorted(want)}")
    shipped = {}
    for rule in l4t["cuda_of_l4t"]:
        for release in rule["l4t"]:
            shipped[re.sub(r"\.0$", "", release) if rule["op"] == "==" else release] = rule["cuda"]
    for release, cuda in shipped.items():
        if table["l4t_cuda"].get(release) != cuda:
            out.append(f"L4T {release}: CUDA {table['l4t_cuda'].get(release)}, jetson-containers says {cuda}")
    return out


def audit(table: dict[str, Any], captured: Path) -> list[str]:
    """Every disagreement between the table and the captured statements, one line each."""
    return (audit_amd(table, _files(captured, "therock.json"))
            + audit_jetson(table, _files(captured, "jetson-containers.json")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=TABLE)
    parser.add_argument("--captured", type=Path, default=CAPTURED)
    args = parser.parse_args(argv)
    problems = audit(json.loads(args.table.read_text(encoding="utf-8")), args.captured)
    for line in problems:
        print(line)
    if not problems:
        print("vendor builds: no disagreement with the captured vendor statements")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
