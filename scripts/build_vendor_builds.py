#!/usr/bin/env python3
"""Build the embedded table of vendor-hosted builds from the researched facts and the vendors' own statements.

    python scripts/build_vendor_builds.py [-o OUT]

Reads ``scripts/reference/vendor-builds.json`` (the indexes and builds, with sources and confidence) and the
statements ``scripts/capture_vendor_sources.py`` captured under ``scripts/reference/vendor/``: AMD's ``[device-*]``
extras, its per-OS support levels, the Pythons its release builds make and its development branch's ROCm version
(ROCm/TheRock); the CUDA architectures a JetPack's builds compile (dusty-nv/jetson-containers). Writes
``src/torch_install/resolver/data/vendor-builds.json`` (schema: ``vendor-builds.schema.json`` beside it, described
in docs/vendor-builds.md). A test rebuilds it and compares it with the committed file.

Each build's targets are written per platform, keyed by the value of its vendor's architecture field (a gfx target
for AMD, a compute capability for NVIDIA), each with the support level its vendor gives it on that OS (null where
the vendor rates none); a target absent from the vendor's table for an OS has no build for that OS.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference" / "vendor-builds.json"
CAPTURED = HERE / "reference" / "vendor"
OUT = HERE.parent / "src/torch_install/resolver/data/vendor-builds.json"

OS_OF_PLATFORM = {"linux_x86_64": "linux", "windows_x86_64": "windows", "linux_aarch64": "linux"}
LEVELS = ("release-ready", "sanity-tested", "build-passing")  # AMD's columns, the highest first
RELEASES, SUPPORTED, RELEASE_MATRIX, VERSION = ("RELEASES.md", "SUPPORTED_GPUS.md",
                                                "build_tools/github_actions/configure_pytorch_release_matrix.py",
                                                "version.json")
L4T = "jetson_containers/l4t_version.py"


class Evidence:
    """The vendors' statements, as captured."""

    def __init__(self, directory: Path) -> None:
        self.therock = json.loads((directory / "therock.json").read_text(encoding="utf-8"))["files"]
        self.jetson = json.loads((directory / "jetson-containers.json").read_text(encoding="utf-8"))["files"]

    def device_extras(self) -> list[str]:
        """The gfx targets of AMD's table of [device-*] install extras (the nightly index's)."""
        return [row["gfx"] for row in self.therock[RELEASES]["device_extras"] if row["gfx"].startswith("gfx")]

    def level(self, os: str, gfx: str) -> str | None:
        """AMD's support level of a gfx target on an OS: the highest of its ticked columns; None when the OS's
        table does not list it (or ticks nothing)."""
        row = self.therock[SUPPORTED]["levels"].get(os, {}).get(gfx)
        return next((level for level in LEVELS if row and row.get(level)), None)

    def pythons(self) -> list[str]:
        return list(self.therock[RELEASE_MATRIX]["RELEASE_PYTHON_VERSIONS"])

    def rocm_version(self) -> str:
        return str(self.therock[VERSION]["rocm-version"])

    def l4t_cuda(self) -> dict[str, str]:
        """L4T release prefix ("36.4", "38") -> the CUDA it ships, from jetson-containers' chain."""
        out: dict[str, str] = {}
        for rule in self.jetson[L4T]["cuda_of_l4t"]:
            for release in rule["l4t"]:
                out[release.removesuffix(".0") if rule["op"] == "==" else release] = rule["cuda"]
        return out

    def jetpack_sm(self, l4t_major: str) -> list[int]:
        """The CUDA architectures (×10) jetson-containers' builds compile on a Jetson of this L4T major: the first
        rule of its chain that holds."""
        for rule in self.jetson[L4T]["tegra_cuda_architectures"]:
            bound = int(rule["l4t"][0])
            if (rule["op"] == "major>=" and int(l4t_major) >= bound) or (rule["op"] == "major==" and
                                                                         int(l4t_major) == bound):
                return list(rule["sm"])
        raise SystemExit(f"no CUDA architectures captured for L4T {l4t_major}")


def _sm_text(sm: int) -> str:
    return f"{sm // 10}.{sm % 10}"


def build(reference: dict[str, Any], evidence: Evidence) -> dict[str, Any]:
    indexes = {row["id"]: row for row in reference["indexes"]}
    known = {"therock-device-extras": evidence.device_extras(), "stable-device-extras":
             reference["stable_device_extras"]["gfx"]}
    builds = []
    for row in reference["builds"]:
        index = indexes[row["index"]]
        platforms = index["platforms"]
        python_fact = row["python"]
        pythons = ({p: evidence.pythons() for p in platforms} if python_fact.get("evidence") == "therock-release-matrix"
                   else {p: python_fact[p] for p in platforms if p in python_fact})
        target_fact = row["targets"]
        targets: dict[str, dict[str, str | None]] = {}
        if target_fact["evidence"] == "jetpack-cuda-architectures":
            for platform in platforms:
                targets[platform] = {_sm_text(sm): None for sm in evidence.jetpack_sm(target_fact["l4t"])}
        else:
            for platform in platforms:
                os = OS_OF_PLATFORM[platform]
                served = {gfx: evidence.level(os, gfx) for gfx in known[target_fact["evidence"]]}
                targets[platform] = {gfx: level for gfx, level in served.items() if level}
        rocm = row.get("rocm")
        if isinstance(rocm, dict):
            rocm = evidence.rocm_version()
        variant = f"rocm{rocm}" if index["vendor"] == "amd" else f"cu{index['cuda'].replace('.', '')}"
        out = {"index": row["index"], "variant": variant, "packages": row["packages"], "date": row["date"],
               "conf": row["conf"], "src": row["src"], "python": pythons, "python_conf": python_fact["conf"],
               "targets": targets, "targets_conf": target_fact["conf"]}
        if target_fact.get("note"):
            out["targets_note"] = target_fact["note"]
        if row.get("needs"):
            out["needs"] = row["needs"]
        builds.append(out)
    return {"schema": reference["schema"], "generated": reference["generated"],
            "confidence_levels": list(reference["confidence_levels"]),
            "sources": {sid: s["locator"] for sid, s in reference["sources"].items()},
            "support_levels": {k: {"text": v["text"], "conf": v["conf"]}
                               for k, v in reference["support_levels"].items()},
            "declined": reference["declined"],
            "l4t_cuda": {**evidence.l4t_cuda(), **{k: v["cuda"] for k, v in reference["l4t_cuda"].items()
                                                   if k != "about"}},
            "indexes": {row["id"]: {k: v for k, v in row.items() if k != "id"} for row in reference["indexes"]},
            "builds": builds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=REFERENCE)
    parser.add_argument("--captured", type=Path, default=CAPTURED)
    parser.add_argument("-o", "--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = build(json.loads(args.reference.read_text(encoding="utf-8")), Evidence(args.captured))
    args.output.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {len(data['indexes'])} indexes, {len(data['builds'])} builds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
