#!/usr/bin/env python3
"""Check the table of packages built against one torch against the captured evidence; print each disagreement.

    python scripts/audit_companions.py                  # the shipped table and scripts/reference/companions.json
    python scripts/audit_companions.py --table FILE     # another table (the tests feed it mutated copies)

The evidence (``capture_companions.py``'s output: the default index's pages and metadata, the repositories' files
at their tags) is read by this script's own code; nothing of ``build_companions.py`` is imported. Every class is
checked both ways — every fact of the table has its evidence, and every piece of evidence its fact:

* the releases: every final release on the default index is in the table, and no other;
* declared requirements: a release's torch requirement and the torchvision/torchaudio it pins are its
  Requires-Dist's (read with packaging); a release none of whose wheels was read has no torch;
* yanked flags: a release is flagged exactly when every file of it is yanked, with the index's reason;
* platforms and Python tags: those of the release's wheel names;
* where a build comes from: xformers' variants are those its ``wheels.yml`` uploaded at the tag, and a release
  it uploaded nowhere comes from the user's index; torchao's and fbgemm-gpu's built-for torch and variants are
  their sources' (``__init__.py``, the test-infra branch, ``Releases.rst`` or its rule); torchrec's its fbgemm-gpu
  release's;
* flash-attn's prebuilt wheels: the build matrix of ``publish.yml`` at the tag, less its excludes;
* the PyG find-links pages: each README's tables over its history, per torch minor and OS.

Exit 1 on any disagreement, 0 when all agree, 2 when the evidence or the table cannot be read.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference" / "companions.json"
TABLE = HERE.parent / "src" / "torch_install" / "resolver" / "data" / "companions.json"
FIRST_MINOR = (2, 0)  # the matrix's first release


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"[0-9]+", text))


def _same_spec(a: str, b: str) -> bool:
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(a) == SpecifierSet(b)


def declared(requires: list[str] | None, name: str) -> str | None:
    """The specifier a release's Requires-Dist gives ``name`` ("" when no line names it; None: not read)."""
    from packaging.requirements import Requirement

    if requires is None:
        return None
    for line in requires:
        requirement = Requirement(line)
        if requirement.name.lower() == name:
            return str(requirement.specifier)
    return ""


def wheel_facts(files: list[str]) -> tuple[set[str], set[str]]:
    """(platform keys, Python tags) of a release's wheel names; a pure wheel ("any") gives no platform."""
    from packaging.utils import parse_wheel_filename

    platforms, pythons, pure = set(), set(), False
    for name in (f for f in files if f.endswith(".whl")):
        for tag in parse_wheel_filename(name)[3]:
            pythons.add(tag.interpreter + ("-abi3" if tag.abi == "abi3" else ""))
            plat = tag.platform
            if plat == "any":
                pure = True
            elif plat.startswith("win"):
                platforms.add({"win_amd64": "windows_x86_64", "win_arm64": "windows_arm64"}.get(plat, plat))
            elif "linux" in plat:
                platforms.add("linux_" + ("aarch64" if plat.endswith("aarch64") else "x86_64"))
            elif plat.startswith("macosx"):
                platforms.add("macos_" + ("x86_64" if plat.endswith(("x86_64", "intel")) else "arm64"))
    return (set() if pure else platforms), pythons


def _variant(version: str) -> str:
    """A CUDA ("12.6.3") or ROCm ("rocm7.1") version as the variant id it is built as."""
    return version if not version[0].isdigit() else "cu" + "".join(version.split(".")[:2])


class Audit:
    def __init__(self, table: dict[str, Any], evidence: dict[str, Any]) -> None:
        self.table, self.evidence, self.problems = table["packages"], evidence, []

    def say(self, line: str) -> None:
        self.problems.append(line)

    def releases(self, name: str) -> dict[str, dict[str, Any]]:
        return {r["version"]: r for r in self.table[name].get("releases", [])}

    def index(self, name: str) -> dict[str, dict[str, Any]]:
        return {r["version"]: r for r in self.evidence["default_index"][name]["releases"]}

    def labels(self, name: str, release: dict[str, Any]) -> dict[str, str]:
        return {**self.table[name].get("labels", {}), **release.get("labels", {})}

    # -- the default index's facts, for every package with releases ------------------------------------------
    def index_facts(self, name: str) -> None:
        table, index = self.releases(name), self.index(name)
        for version in sorted(set(index) - set(table), key=_numbers):
            self.say(f"{name} {version}: on the default index, not in the table")
        for version in sorted(set(table) - set(index), key=_numbers):
            self.say(f"{name} {version}: in the table, not a release on the default index")
        for version in sorted(set(table) & set(index), key=_numbers):
            self.release_facts(name, table[version], index[version])

    def release_facts(self, name: str, row: dict[str, Any], facts: dict[str, Any]) -> None:
        where = f"{name} {row['version']}"
        torch = declared(facts["requires"], "torch")
        if name != "flash-attn":  # its wheels are not on the default index: its torch is its setup.py's
            if torch is None and "torch" in row:
                self.say(f"{where}: torch {row['torch']!r} in the table, but no wheel of it was read")
            elif torch is not None and ("torch" not in row or not _same_spec(row["torch"], torch)):
                self.say(f"{where}: torch {row.get('torch')!r} in the table, its Requires-Dist says {torch!r}")
        for family in ("torchvision", "torchaudio"):
            pinned = declared(facts["requires"], family) or ""
            listed = row.get("family", {}).get(family, "")
            if name == "vllm" and not (pinned == listed == "" or pinned and listed and _same_spec(pinned, listed)):
                self.say(f"{where}: {family} {listed!r} in the table, its Requires-Dist says {pinned!r}")
        yanked = bool(facts["yanked"])
        if yanked != ("yanked" in row):
            self.say(f"{where}: yanked is {'yanked' in row} in the table, {bool(yanked)} on the default index")
        elif yanked and row["yanked"] != (facts.get("yanked_reason") or ""):
            self.say(f"{where}: yanked for {row['yanked']!r} in the table, {facts.get('yanked_reason')!r} there")
        platforms, pythons = wheel_facts(facts["files"])
        listed_platforms = set(row.get("platforms", []))
        if name == "torchao":  # the PyTorch index's builds are Linux x86_64: the table keeps its Linux platforms
            platforms = {p for p in platforms if p.startswith("linux_")} or {"linux_x86_64"}
        if listed_platforms != platforms:
            self.say(f"{where}: platforms {sorted(listed_platforms)} in the table, its wheels {sorted(platforms)}")
        if set(row.get("pythons", [])) != pythons:
            self.say(f"{where}: Python tags {sorted(row.get('pythons', []))} in the table, its wheels "
                     f"{sorted(pythons)}")
        if (row.get("python") or None) != ((facts.get("requires_python") or "").replace(" ", "") or None):
            self.say(f"{where}: Requires-Python {row.get('python')!r} in the table, {facts.get('requires_python')!r}")

    # -- where each package's builds come from ---------------------------------------------------------------
    def labels_say(self, name: str, row: dict[str, Any], fact: str, evidence: str) -> None:
        """A fact's label names the kind of evidence it was read from."""
        given = self.labels(name, row).get(fact)
        if given != evidence:
            self.say(f"{name} {row['version']}: its {fact} is labelled {given}; its evidence makes it {evidence}")

    def xformers(self) -> None:
        upstream = self.evidence["upstream"]["xformers"]["releases"]
        for version, row in self.releases("xformers").items():
            if "torch" in row:
                self.labels_say("xformers", row, "torch", "requires-dist")
            if "variants" in row:
                self.labels_say("xformers", row, "variants", "build-workflow")
            uploaded = upstream.get(version, {}).get("uploaded", [])
            if set(row.get("variants", [])) != set(uploaded):
                self.say(f"xformers {version}: variants {row.get('variants', [])} in the table, its wheels.yml "
                         f"uploads {uploaded}")
            if not uploaded and "torch" in row and row.get("from") != "default":
                self.say(f"xformers {version}: uploaded to no PyTorch index, but not from the user's index")
            if uploaded and row.get("from") == "default":
                self.say(f"xformers {version}: from the user's index in the table, uploaded to {uploaded}")

    def torchao(self) -> None:
        upstream = self.evidence["upstream"]["torchao"]
        for version, row in self.releases("torchao").items():
            build = upstream["builds"].get(version, {})
            branch = build.get("test_infra_ref", "").startswith("torchao-release")
            expected = (">=" + upstream["min_torch"][version] if version in upstream["min_torch"] else
                        "==" + upstream["built_against"][version][0] if version in upstream["built_against"] else
                        "==" + build["stable_torch"] if branch and build.get("stable_torch") else None)
            if expected != row.get("built_for"):
                self.say(f"torchao {version}: built for {row.get('built_for')!r} in the table, its sources say "
                         f"{expected!r}")
            elif expected:
                own = version in upstream["min_torch"] or version in upstream["built_against"]
                self.labels_say("torchao", row, "built_for", "source-file" if own else "inferred")
            variants = ({"cpu", *map(_variant, build.get("cuda", [])), *(f"rocm{r}" for r in build.get("rocm", []))}
                        if branch and build.get("cuda") else None)
            if variants != (set(row["variants"]) if "variants" in row else None):
                self.say(f"torchao {version}: variants {row.get('variants')} in the table, its build branch "
                         f"{sorted(variants) if variants else None}")

    def fbgemm(self) -> None:
        upstream = self.evidence["upstream"]["fbgemm-gpu"]
        rows = upstream["releases"]
        for version, row in self.releases("fbgemm-gpu").items():
            major, minor = _numbers(version)[:2]
            stated = rows.get(version) or rows.get(f"{major}.{minor}.0")
            if stated:
                torch = re.match(r"[0-9]+\.[0-9]+", stated["torch"])
                expected = f"=={torch[0] if torch else '?'}.*"
                variants = {"cpu", *map(_variant, stated["cuda"]), *(f"rocm{r}" for r in stated["rocm"])}
                label = "maintainer-statement"
            elif major == 1:
                expected = f"==2.{minor + 5}.*"
                tags = [t for t, tag in upstream["tags"].items() if _numbers(t) <= (major, minor, 0) and tag["cuda"]]
                newest = max(tags, key=_numbers) if tags else None
                variants = {"cpu", *map(_variant, upstream["tags"][newest]["cuda"] if newest else [])}
                label = "inferred"
            else:
                expected, variants, label = None, None, None
            if row.get("built_for") != expected:
                self.say(f"fbgemm-gpu {version}: built for {row.get('built_for')!r} in the table, its sources say "
                         f"{expected!r}")
            if (set(row["variants"]) if "variants" in row else None) != variants:
                self.say(f"fbgemm-gpu {version}: variants {row.get('variants')} in the table, its sources "
                         f"{sorted(variants) if variants else None}")
            given = self.labels("fbgemm-gpu", row).get("built_for")
            if label and given != label:
                self.say(f"fbgemm-gpu {version}: its torch is labelled {given}, its source is a {label}")
            if expected is None and row.get("from") != "default":
                self.say(f"fbgemm-gpu {version}: no source says its torch, yet it is not from the user's index")

    def torchrec(self) -> None:
        fbgemm = {".".join(v.split(".")[:2]): r for v, r in self.releases("fbgemm-gpu").items() if "built_for" in r}
        for version, row in self.releases("torchrec").items():
            pair = fbgemm.get(".".join(version.split(".")[:2]))
            if (pair or {}).get("built_for") != row.get("built_for") or \
                    (pair or {}).get("variants") != row.get("variants"):
                self.say(f"torchrec {version}: built for {row.get('built_for')!r} {row.get('variants')} in the table, "
                         f"its fbgemm-gpu release {pair and pair.get('built_for')!r}")

    def flash_attn(self) -> None:
        upstream = self.evidence["upstream"]["flash-attn"]["releases"]
        sets = self.table["flash-attn"].get("build_sets", [])
        for version, row in self.releases("flash-attn").items():
            built = upstream.get(version)
            have = {(b[0], b[1], b[2], p, b[4]) for b in (sets[row["builds"]] if "builds" in row else []) for p in b[3]}
            want = self._published(built) if built else set()
            for extra in sorted(have - want):
                self.say(f"flash-attn {version}: a wheel for {extra} in the table, not in its publish.yml")
            for missing in sorted(want - have):
                self.say(f"flash-attn {version}: its publish.yml builds {missing}, not in the table")
            if built is None and self.labels("flash-attn", row).get("builds") != "unknown":
                self.say(f"flash-attn {version}: no publish.yml at its tag, yet its wheels are not labelled unknown")
            if built and (row.get("cuda_map") or {}) != (built.get("cuda_map") or {}):
                self.say(f"flash-attn {version}: CUDA map {row.get('cuda_map')} in the table, its setup.py "
                         f"{built.get('cuda_map')}")

    @staticmethod
    def _published(built: dict[str, Any]) -> set[tuple[str, str, str, str, str]]:
        """Every (torch minor, wheel CUDA tag, ABI, Python, platform) the workflow matrix builds, torch 2.0 on."""
        out = set()
        keys = ("torch-version", "cuda-version", "cxx11_abi", "os", "python-version")
        values = [built[k] or (["FALSE"] if k == "cxx11_abi" else ["ubuntu-22.04"] if k == "os" else []) for k in keys]
        # an exclude rule as (position in a combination, value); a key no combination has matches only None
        rules = [[(keys.index(k), v) for k, v in rule.items() if k in keys] for rule in built["exclude"]
                 if all(k in keys or v is None for k, v in rule.items())]
        from_first = {torch: _numbers(torch)[:2] >= FIRST_MINOR for torch in values[0]}
        for combination in itertools.product(*values):
            torch, cuda, abi, os_name, python = combination
            if not from_first[torch] or "." not in cuda or \
                    any(all(combination[i] == v for i, v in rule) for rule in rules):
                continue
            major, minor = cuda.split(".")[:2]
            tag = major if built.get("cuda_tag") == "major" else major + minor
            out.add((".".join(torch.split(".")[:2]), tag, abi, python,
                     "linux_aarch64" if "arm" in os_name else "linux_x86_64"))
        return out

    def pyg(self, name: str) -> None:
        pages = self.table[name]["builds"]
        tables = {m: t["os"] for m, t in self.evidence["upstream"][name]["tables"].items()
                  if _numbers(m) >= FIRST_MINOR}
        for minor in sorted(set(pages) | set(tables), key=_numbers):
            stated = {os_: sorted(vs) for os_, vs in tables.get(minor, {}).items()
                      if os_ in ("linux", "windows", "macos")}
            listed = {os_: sorted(vs) for os_, vs in pages.get(minor, {}).items()}
            if stated != listed:
                self.say(f"{name} torch {minor}: pages {listed or None} in the table, its README says {stated or None}")
        files = [f for r in self.evidence["default_index"][name]["releases"] for f in r["files"]]
        sdists = any(not f.endswith(".whl") for f in files)
        if sdists != (self.table[name].get("source_build") is not None):
            self.say(f"{name}: a source build is {'not ' if sdists else ''}in the table, and it has "
                     f"{'' if sdists else 'no '}sdists on the default index")

    def run(self) -> list[str]:
        for name in ("xformers", "vllm", "torchao", "fbgemm-gpu", "torchrec", "flash-attn"):
            self.index_facts(name)
        self.xformers()
        self.torchao()
        self.fbgemm()
        self.torchrec()
        self.flash_attn()
        for name in ("pyg-lib", "torch-scatter", "torch-sparse", "torch-cluster"):
            self.pyg(name)
        return self.problems


def audit(table: dict[str, Any], evidence: dict[str, Any]) -> list[str]:
    """Every disagreement between the table and the evidence, one line each."""
    return Audit(table, evidence).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=TABLE)
    parser.add_argument("--reference", type=Path, default=REFERENCE)
    args = parser.parse_args(argv)
    try:
        table = json.loads(args.table.read_text(encoding="utf-8"))
        evidence = json.loads(args.reference.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"cannot read the table or the evidence: {exc}", file=sys.stderr)
        return 2
    problems = audit(table, evidence)
    for line in problems:
        print(line)
    releases = sum(len(p.get("releases", p.get("builds", {}))) for p in table["packages"].values())
    print(f"{len(problems)} disagreement{'s' if len(problems) != 1 else ''} over {releases} companion releases "
          "and pages")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
