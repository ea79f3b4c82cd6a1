"""Real projects as their authors wrote them (tests/fixtures/projects-corpus: requirement files, compiled locks,
pyprojects, pixi manifests, conda environments from public repositories, each with its source.json), planned
offline for each machine the case names, and held to what the default index's metadata allows
(expected.json, made by scripts/corpus_expectations.py from the index, never from this product's output).

A plan is right when: a request the metadata can satisfy is not refused (and one it cannot is); its torch is a
release the project's torch lines and every named package's declared requirement allow, where a package the plan
names as unknown (``requirement-unknown``, outside the table) is excused; a build the files name (a local label, a
``[tool.uv.sources]`` or pixi index) is the one chosen; and every package the plan installs is a version the
project's lines allow whose own declared needs admit that torch."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from torch_install.cli import main

CORPUS = Path(__file__).parent / "fixtures" / "projects-corpus"
EXPECTED: dict[str, Any] = json.loads((CORPUS / "expected.json").read_text())
TABLE = {canonicalize_name(n) for n in json.loads(
    (Path(__file__).parents[1] / "src/torch_install/resolver/data/companions.json").read_text())["packages"]}
CASES = [(case, profile) for case in sorted(EXPECTED["cases"]) for profile in sorted(EXPECTED["cases"][case])]
UNKNOWN = re.compile(r"^what (.+?) needs? of torch is not known here|^(\S+?)[=<>~!;\s(].*: what it needs of torch")


def source(case: str) -> dict[str, Any]:
    return json.loads((CORPUS / case / "source.json").read_text())


def run_plan(case: str, profile: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any] | None, str]:
    folder = CORPUS / case
    argv = [str(folder / a) if i and source(case)["invoke"][i - 1] in ("-r", "-c", "--project") else a
            for i, a in enumerate(source(case)["invoke"])]
    code = main(["plan", *argv, "--offline", "--target", str(CORPUS / "profiles" / f"{profile}.json"),
                 "--format", "json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code in (0, 4) and out.strip() else None), err


def unknown_names(plan: dict[str, Any]) -> tuple[set[str], bool]:
    """The packages the plan says it does not know the needs of, and whether it left some unnamed ("and N more")."""
    names, more = set(), False
    for warning in plan["warnings"]:
        if warning["code"] != "requirement-unknown":
            continue
        found = UNKNOWN.match(warning["message"])
        if found and found.group(1):
            listed, _, rest = found.group(1).partition(" and ")
            more |= rest.endswith("more")
            names |= {canonicalize_name(n) for n in listed.split(", ")}
        elif found:
            names.add(canonicalize_name(found.group(2)))
    return names, more


def evidence(name: str, version: Version) -> dict[str, Any] | None:
    reads = EXPECTED["packages"].get(name, {})
    return next((v for k, v in reads.items() if Version(k.split("[")[0]) == version), None)


def problems(case: str, profile: str, code: int, plan: dict[str, Any] | None, err: str) -> list[str]:
    """What in the plan disagrees with the metadata's answer (empty: the plan is right)."""
    want = EXPECTED["cases"][case][profile]
    if not want["solvable"]:
        return [] if code in (2, 4) else [f"the metadata allows no torch here, yet the plan exits {code}"]
    if code != 0 or plan is None:
        return [f"refused (exit {code}) though the metadata allows torch {want['torch'][-3:]}: {err.strip()[-300:]}"]
    out = []
    torch = Version(plan["choice"]["torch"])
    if str(torch.public) not in want["torch"]:
        out.append(f"torch {torch} is not a release the project's torch lines allow ({want['torch_requirement']})")
    unknown, more = unknown_names(plan)
    for constraint in want["constraints"]:
        if str(torch.public) in constraint["allows"]:
            continue
        name = constraint["package"]
        if name not in TABLE and (name in unknown or more):
            continue  # named as unknown: offline, the plan cannot know it
        out.append(f"{name} ({constraint['requirement'] or 'any'}) declares a torch requirement that excludes "
                   f"{torch.public} (its releases allow {constraint['allows'][-4:] or 'none'})")
    named = dict(want["labels"], **want["variant"])
    if "torch" in named and plan["choice"]["variant"] != named["torch"]:
        out.append(f"the project names the {named['torch']} build, the plan chose {plan['choice']['variant']}")
    installed = dict(plan["choice"]["packages"])
    installed.update({c["name"]: c["version"] for c in plan["choice"]["companions"] if c["version"]})
    for name, text in installed.items():
        if not text:
            continue  # a version left to the installer, as the project's own line asks
        key, version = canonicalize_name(name), Version(text)
        line = want["requirements"].get(key)
        if line and not line["direct"] and not SpecifierSet(line["specifier"]).contains(version.public, True):
            out.append(f"{name} {version} is not what the project allows ({line['specifier']}, {line['where']})")
        read = evidence(key, Version(version.public))
        if read and "torch" in read and not SpecifierSet(read["torch"]).contains(torch.public, True):
            out.append(f"{name} {version} declares torch{read['torch']}, the plan has {torch}")
        if version.local and key != "torch" and torch.local and version.local != torch.local:
            out.append(f"{name} {version} is another build than torch {torch}")
    return out


@pytest.mark.parametrize(("case", "profile"), CASES)
def test_a_real_project_plans_as_the_default_index_metadata_allows(case: str, profile: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, plan, err = run_plan(case, profile, capsys)
    assert not problems(case, profile, code, plan, err), source(case)["what"]


def test_every_case_names_where_its_files_come_from() -> None:
    folders = sorted(p.name for p in CORPUS.iterdir() if p.is_dir() and p.name != "profiles")
    assert folders == sorted(EXPECTED["cases"]), "expected.json is out of date: run scripts/corpus_expectations.py"
    for case in folders:
        meta = source(case)
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", meta["repository"]) and meta["licence"] and meta["profiles"]
        for path, commit in meta["files"].items():
            assert re.fullmatch(r"[0-9a-f]{40}", commit), (case, path)
            assert (CORPUS / case / path).is_file(), (case, path)


def test_the_verdict_names_each_way_a_plan_can_disagree_with_the_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    case, profile = "open-instruct-lock-2025-06", "linux-cuda-py312"  # torch==2.6.0+cu124, vllm, xformers
    code, plan, err = run_plan(case, profile, capsys)
    assert plan is not None and not problems(case, profile, code, plan, err)
    assert problems(case, profile, 4, None, "no build fits")[0].startswith("refused (exit 4)")
    older = json.loads(json.dumps(plan))
    older["choice"].update(torch="2.7.0", variant="cu126")
    found = " | ".join(problems(case, profile, 0, older, ""))
    assert "torch 2.7.0 is not a release the project's torch lines allow" in found
    assert "vllm (==0.8.5.post1) declares a torch requirement that excludes 2.7.0" in found
    assert "the project names the cu124 build, the plan chose cu126" in found
    other = json.loads(json.dumps(plan))
    other["choice"]["companions"] = [dict(c, version="0.0.30") if c["name"] == "xformers" else c
                                     for c in other["choice"]["companions"]]
    found = " | ".join(problems(case, profile, 0, other, ""))
    assert "xformers 0.0.30 is not what the project allows (==0.0.29.post2" in found
    assert "xformers 0.0.30 declares torch==2.7.0, the plan has 2.6.0" in found
    other["choice"]["packages"]["torchvision"] = "0.22.0+cu124"
    found = " | ".join(problems(case, profile, 0, other, ""))
    assert "torchvision 0.22.0+cu124 declares torch==2.7.0, the plan has 2.6.0" in found
