#!/usr/bin/env python3
"""Check the conda-forge table against the captured recipe files and published records; print each disagreement.

    python scripts/audit_conda_forge.py                 # the shipped table and scripts/reference/conda-forge
    python scripts/audit_conda_forge.py --table FILE    # another table (the tests feed it mutated copies)

The evidence is read by this script's own code (nothing of build_conda_forge.py is imported, and no YAML is
parsed): the names of the CI variant files (conda-smithy writes each variant's keys into the name:
``…cuda_compiler_version12.9…``, ``…arm_variant_typetegra…``, ``…c_stdlib_version2.28…``), the Python pins as
lines of those files, and the recipe and build scripts as text. Checked: every variant file has its build row and
every row its file; each row's C library floor and Pythons; each CUDA row's arch list is a TORCH_CUDA_ARCH_LIST the
build script sets (a tegra row's the one set right after the tegra test), and no CPU row has one; build numbers
(the recipe's base, +200 for CUDA, +100 for MKL); the ``__cuda`` run dependency and the selector constraints; that
the activation script is written for the releases said to write it; torchvision's and torchaudio's variants from
their file names; the cuda-version versions; and each published pytorch record ``capture_conda_forge_published.py``
captured of a build the table holds (``audit_published``). Exit 1 on any disagreement, 0 when all agree, 2 when the
evidence or the table cannot be read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference" / "conda-forge"
TABLE = HERE.parent / "src" / "torch_install" / "resolver" / "data" / "conda-forge.json"
PREFIXES = {"linux_64": "linux-64", "linux_aarch64": "linux-aarch64", "win_64": "win-64", "osx_64": "osx-64",
            "osx_arm64": "osx-arm64"}


def _subdir(name: str) -> str:
    for prefix, subdir in sorted(PREFIXES.items(), key=lambda item: -len(item[0])):
        if name.startswith(prefix + "_"):
            return subdir
    raise ValueError(f"variant file {name}: no subdir prefix")


def _key(name: str, key: str) -> str | None:
    """The value conda-smithy wrote after ``key`` in a variant file's name (None where the key is absent)."""
    found = re.search(re.escape(key) + r"([0-9]+(?:\.[0-9]+)*|None|[a-z]+?)(?=channel_targets|cuda_|cxx_|c_|is_rc|"
                      r"python|numpy|blas|arm_|github_|\.yaml|$)", name)
    return found[1] if found else None


def _pythons(text: str) -> set[str]:
    return set(re.findall(r"^- ([0-9]+\.[0-9]+)\.\* \*_cp", text, re.M))


def _versions(values: list[str]) -> list[tuple[int, ...]]:
    return [tuple(map(int, v.split("."))) for v in values]


def audit_release(release: dict[str, Any], problems: list[str]) -> None:
    version = release["version"]
    directory = REFERENCE / "pytorch" / version
    where = f"pytorch {version}"
    meta = (directory / "recipe" / "meta.yaml").read_text(encoding="utf-8")
    build_sh = (directory / "recipe" / "build.sh").read_text(encoding="utf-8")
    bld_bat = (directory / "recipe" / "bld.bat").read_text(encoding="utf-8")
    if f"{{% set build = {release['build_number']} %}}" not in meta:
        problems.append(f"{where}: build number {release['build_number']} is not the recipe's")
    files: dict[tuple[Any, ...], set[str]] = {}
    floors: dict[tuple[Any, ...], str | None] = {}
    for path in sorted((directory / ".ci_support").glob("*.yaml")):
        name = path.name
        if "is_rcTrue" in name or "conda-forge_main" not in name:
            continue
        subdir = _subdir(name)
        cuda = _key(name, "cuda_compiler_version")
        cuda = None if cuda in (None, "None") else cuda
        blas = _key(name, "blas_impl") or ("mkl" if subdir == "win-64" else "generic")
        text = path.read_text(encoding="utf-8")
        arm = None
        if subdir == "linux-aarch64" and cuda:
            in_text = re.search(r"^arm_variant_type:\n- ([a-z]+)$", text, re.M)
            arm = _key(name, "arm_variant_type") or (in_text[1] if in_text else None)
        key = (subdir, cuda, blas, arm)
        files.setdefault(key, set()).update(_pythons(text) or {p for p in re.findall(r"python([0-9]+\.[0-9]+)\.",
                                                                                        name)})
        stdlib = _key(name, "c_stdlib_version")
        if stdlib is None:
            found = re.search(r"^c_stdlib_version:\n- '?([0-9.]+)'?$", text, re.M)
            stdlib = found[1] if found else None
        if subdir.startswith("osx"):
            found = re.search(r"^MACOSX_DEPLOYMENT_TARGET:\n- '?([0-9.]+)'?$", text, re.M)
            stdlib = found[1] if found else stdlib
        floors[key] = stdlib
    rows = {(b["subdir"], b["cuda"], b["blas"], b["arm_variant"]): b for b in release["builds"]}
    for key in sorted(set(files) - set(rows), key=str):
        problems.append(f"{where}: variant {key} has CI files but no build row")
    for key in sorted(set(rows) - set(files), key=str):
        problems.append(f"{where}: build row {key} has no CI file")
    for key, row in rows.items():
        if key not in files:
            continue
        label = f"{where} {row['subdir']} {row['cuda'] or 'cpu'} {row['blas']}" + (
            f" {row['arm_variant']}" if row["arm_variant"] else "")
        if set(row["python"]) != files[key]:
            problems.append(f"{label}: Pythons {row['python']} but the CI files pin {sorted(files[key])}")
        floor = row["floor"].get("glibc") or row["floor"].get("macos")
        if not row["subdir"].startswith("win") and floor != floors[key]:
            problems.append(f"{label}: floor {floor} but the CI files say {floors[key]}")
        number = release["build_number"] + (200 if row["cuda"] else 0) + (100 if row["blas"] == "mkl" else 0)
        if row["number"] != number:
            problems.append(f"{label}: build number {row['number']}, the recipe gives {number}")
        script = bld_bat if row["subdir"] == "win-64" else build_sh
        if row["cuda"] is None:
            if row["arches"] is not None:
                problems.append(f"{label}: a CPU build with an arch list")
            continue
        if row["arches"] is None:
            problems.append(f"{label}: a CUDA build without an arch list")
            continue
        listed = row["arches"]["list"]
        if f'TORCH_CUDA_ARCH_LIST="{listed}"' not in script and f'"TORCH_CUDA_ARCH_LIST={listed}"' not in script:
            problems.append(f"{label}: arch list {listed} is not one the build script sets")
        lines = script.splitlines()
        after_tegra = [lines[i + j] for i, line in enumerate(lines) if '"tegra" ]]' in line and "arm_variant_type"
                       in line for j in range(1, 5) if i + j < len(lines) and "TORCH_CUDA_ARCH_LIST=" in lines[i + j]]
        if row["arm_variant"] == "tegra" and not any(f'"{listed}"' in line for line in after_tegra):
            problems.append(f"{label}: arch list {listed} is not the one set after the tegra test")
        sm = [int(float(p.split("+")[0]) * 10 + 0.5) for p in listed.split(";")]
        ptx = [int(float(p.split("+")[0]) * 10 + 0.5) for p in listed.split(";") if p.endswith("+PTX")]
        if row["arches"]["sm"] != sm or row["arches"]["ptx"] != ptx:
            problems.append(f"{label}: sm {row['arches']['sm']} / ptx {row['arches']['ptx']} do not read {listed}")
    output = meta.split("\n  - name: pytorch\n", 1)[-1]
    if release["cuda_run_dependency"] != bool(re.search(r"^\s+- __cuda\s+#\s*\[cuda_compiler_version != \"None\"\]",
                                                        output, re.M)):
        problems.append(f"{where}: cuda_run_dependency {release['cuda_run_dependency']} is not the recipe's")
    selectors = all(line in output for line in ("- pytorch-gpu {{ version }}", "- pytorch-cpu <0.0a0",
                                                "- pytorch-cpu {{ version }}", "- pytorch-gpu <0.0a0"))
    if release["selectors"] != selectors:
        problems.append(f"{where}: selectors {release['selectors']} is not the recipe's")
    if release["mps"] != ('torch.backends.mps.is_available()"' in meta):
        problems.append(f"{where}: mps {release['mps']} is not what the recipe's osx test asserts")
    writes = "etc/conda/${CHANGE}.d/libtorch_${CHANGE}.sh" in build_sh and \
        (directory / "recipe" / "activate.sh").is_file()
    if (release["activation"] is not None) != writes:
        problems.append(f"{where}: activation {release['activation']} but the build script "
                        f"{'writes' if writes else 'does not write'} the activation script")
    template = release["build_string"]["cuda"]
    if template != "cuda{cuda}_{blas}_py{py}_h{hash}_{number}" or \
            "cuda{{ cuda_compiler_version | replace('.', '') }}_{{ blas_impl }}_py{{ CONDA_PY }}_h{{ PKG_HASH }}" \
            "_{{ build }}" not in output:
        problems.append(f"{where}: CUDA build string {template} is not the recipe's pytorch output's")


def audit_companion(package: str, entry: dict[str, Any], problems: list[str]) -> None:
    directory = REFERENCE / package
    names = (directory / "ci_support.txt").read_text(encoding="utf-8").split()
    seen: dict[tuple[Any, ...], set[str]] = {}
    for name in names:
        subdir = _subdir(name)
        cuda = _key(name, "cuda_compiler_version")
        cuda = None if cuda in (None, "None") else cuda
        python = re.search(r"python([0-9]+\.[0-9]+)\.", name)
        arm = None
        if subdir == "linux-aarch64" and cuda:
            sample = directory / ".ci_support" / (name if "python3.12." in name else
                                                  re.sub(r"python[0-9.]+\.____cp[a-z0-9]*", "python3.12.____cpython",
                                                         name))
            if sample.is_file():
                found = re.search(r"^arm_variant_type:\n- ([a-z]+)$", sample.read_text(encoding="utf-8"), re.M)
                arm = found[1] if found else None
        seen.setdefault((subdir, cuda, arm), set()).add(python[1] if python else "?")
    rows = {(b["subdir"], b["cuda"], b["arm_variant"]): set(b["python"]) for b in entry["builds"]}
    if rows != seen:
        problems.append(f"{package}: builds {sorted(rows, key=str)} but its CI files give {sorted(seen, key=str)}")
    recipe = (directory / "recipe" / "recipe.yaml").read_text(encoding="utf-8")
    if f'version: "{entry["version"]}"' not in recipe:
        problems.append(f"{package}: version {entry['version']} is not the recipe's")


def _template(template: str) -> re.Pattern[str]:
    """A recipe's build-string template as a pattern of the strings it makes (the hash any)."""
    pattern = re.escape(template)
    for field, group in (("cuda", r"(?P<cuda>[0-9]+)"), ("blas", r"(?P<blas>[a-z]+)"), ("py", r"(?P<py>[0-9]+)"),
                         ("hash", "[0-9a-f]+"), ("number", r"(?P<number>[0-9]+)")):
        pattern = pattern.replace(re.escape("{" + field + "}"), group)
    return re.compile(f"^{pattern}$")


def _floor(depends: list[str], name: str) -> str | None:
    found = next((re.match(rf"^{name} >=([0-9.]+)", d) for d in depends if d.startswith(f"{name} ")), None)
    return found[1] if found else None


def audit_published(table: dict[str, Any], problems: list[str]) -> tuple[int, int]:
    """Each published pytorch record (``published.json``) of a build the table holds, against its row: the build
    string's template and parts, the ``__cuda`` run dependency, ``cuda-version >=X.Y,<X+1``, the C library floor,
    the Python, the selector constraints. A record of an earlier build number of the release is counted, not
    checked (the table holds each release's last builds); a later one is a disagreement. (checked, earlier)."""
    path = REFERENCE / "published.json"
    if not path.is_file():
        return 0, 0
    releases = {r["version"]: r for r in table["pytorch"]}
    checked = earlier = 0
    for record in json.loads(path.read_text(encoding="utf-8"))["records"]:
        release = releases.get(record["version"])
        if record["name"] != "pytorch" or release is None:
            continue
        where = f"published {record['url'].rsplit('/', 1)[-1]}"
        kind = "cuda" if record["build"].startswith("cuda") else "cpu"
        rows = [b for b in release["builds"] if b["subdir"] == record["subdir"] and bool(b["cuda"]) == (kind == "cuda")]
        if record["build_number"] not in {b["number"] for b in rows}:
            if rows and record["build_number"] < max(b["number"] for b in rows):
                earlier += 1
            else:
                problems.append(f"{where}: build number {record['build_number']} is none of the table's for "
                                f"{record['subdir']} ({sorted(b['number'] for b in rows)})")
            continue
        found = _template(release["build_string"][kind]).match(record["build"])
        if not found:
            problems.append(f"{where}: the build string is not the recipe's template {release['build_string'][kind]}")
            continue
        parts = found.groupdict()
        cuda = f"{parts['cuda'][:-1]}.{parts['cuda'][-1]}" if parts.get("cuda") else None
        python = f"{parts['py'][0]}.{parts['py'][1:]}"
        row = next((b for b in rows if b["cuda"] == cuda and b["blas"] == parts["blas"] and
                    b["number"] == record["build_number"]), None)
        if row is None:
            problems.append(f"{where}: no build row for {record['subdir']} CUDA {cuda} {parts['blas']} build "
                            f"{record['build_number']}")
            continue
        checked += 1
        depends, constrains = record["depends"], set(record["constrains"])
        if ("__cuda" in depends) != (cuda is not None and release["cuda_run_dependency"]):
            problems.append(f"{where}: depends {'on' if '__cuda' in depends else 'not on'} __cuda, but the table's "
                            f"cuda_run_dependency is {release['cuda_run_dependency']}")
        if cuda and f"cuda-version >={cuda},<{int(cuda.split('.')[0]) + 1}" not in depends:
            problems.append(f"{where}: no cuda-version >={cuda},<{int(cuda.split('.')[0]) + 1} dependency")
        for key, name in (("glibc", "__glibc"), ("macos", "__osx")):
            if row["floor"].get(key) != _floor(depends, name):
                problems.append(f"{where}: {name} >={_floor(depends, name)}, but the table's floor is "
                                f"{row['floor'].get(key)}")
        if python not in row["python"]:
            problems.append(f"{where}: Python {python} is not among the row's {row['python']}")
        if release["selectors"]:
            own, other = ("pytorch-gpu", "pytorch-cpu") if cuda else ("pytorch-cpu", "pytorch-gpu")
            if not {f"{own} {record['version']}", f"{other} <0.0a0"} <= constrains:
                problems.append(f"{where}: constrains {sorted(constrains)}, not {own} {record['version']} and "
                                f"{other} <0.0a0")
    return checked, earlier


def audit(table: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    sources = json.loads((REFERENCE / "sources.json").read_text(encoding="utf-8"))
    versions = [r["version"] for r in table["pytorch"]]
    if sorted(versions, key=lambda v: tuple(map(int, v.split(".")))) != \
            sorted(sources["pytorch"], key=lambda v: tuple(map(int, v.split(".")))):
        problems.append(f"pytorch releases {versions} are not the captured ones {list(sources['pytorch'])}")
    if _versions(versions) != sorted(_versions(versions), reverse=True):
        problems.append("pytorch releases are not newest first")
    for release in table["pytorch"]:
        if release["version"] in sources["pytorch"] and release["commit"] != sources["pytorch"][release["version"]][
                "commit"]:
            problems.append(f"pytorch {release['version']}: commit is not the captured one")
        if (REFERENCE / "pytorch" / release["version"]).is_dir():
            audit_release(release, problems)
    for package in ("torchvision", "torchaudio"):
        audit_companion(package, table[package], problems)
    config = (REFERENCE / "cuda-version" / "recipe" / "conda_build_config.yaml").read_text(encoding="utf-8")
    if table["cuda_version"]["versions"] != re.findall(r"^\s*- ([0-9.]+)$", config, re.M):
        problems.append("cuda-version: versions are not the recipe's")
    audit_published(table, problems)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, default=TABLE, help="the table to audit (default: the shipped one)")
    args = parser.parse_args(argv)
    try:
        table = json.loads(args.table.read_text(encoding="utf-8"))
        problems = audit(table)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"audit_conda_forge: cannot read the table or the evidence: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem)
    releases = len(table["pytorch"])
    builds = sum(len(r["builds"]) for r in table["pytorch"])
    checked, earlier = audit_published(table, [])
    print(f"conda-forge table: {releases} pytorch releases, {builds} builds; {checked} published records of them "
          f"checked ({earlier} of earlier builds counted): "
          + (f"{len(problems)} disagreements" if problems else "agrees with the captured recipes and records"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
