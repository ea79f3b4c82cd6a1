#!/usr/bin/env python3
"""Capture the conda-forge recipe files the conda-forge table is built from, out of git copies of the feedstocks.

    python scripts/capture_conda_forge.py --pytorch GITDIR --torchvision GITDIR --torchaudio GITDIR \\
        --cuda-version GITDIR --arm-variant GITDIR

Each GITDIR is a clone (bare or not) of the feedstock on GitHub: conda-forge/pytorch-cpu-feedstock,
torchvision-feedstock, torchaudio-feedstock, cuda-version-feedstock, arm-variant-feedstock. Written under
``scripts/reference/conda-forge/`` (replacing what is there):

- ``pytorch/<version>/``: for every final pytorch release from 2.5.1 on, the recipe (``meta.yaml``, ``build.sh``,
  ``bld.bat``, ``activate.sh``, ``activate.bat``) and every ``.ci_support/*.yaml`` variant file as they were at the
  last commit of that version on ``main`` or a ``vX.Y.x`` maintenance branch (first-parent history);
- ``torchvision/``, ``torchaudio/``: the recipe at the newest commit, the names of all its variant files, and the
  Python 3.12 ones of each variant (the other Pythons differ only in the Python pin);
- ``cuda-version/``, ``arm-variant/``: the recipe of the selector packages;
- ``sources.json``: the repository, commit and date of everything captured.

The files are copied as they are; ``build_conda_forge.py`` reads them, ``audit_conda_forge.py`` checks the table
against them. Runs no code of the feedstocks and needs no network.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference" / "conda-forge"
FIRST_VERSION = (2, 5, 1)
PYTORCH_FILES = ("recipe/meta.yaml", "recipe/build.sh", "recipe/bld.bat", "recipe/activate.sh", "recipe/activate.bat")
REPOSITORIES = {"pytorch": "conda-forge/pytorch-cpu-feedstock", "torchvision": "conda-forge/torchvision-feedstock",
                "torchaudio": "conda-forge/torchaudio-feedstock", "cuda-version": "conda-forge/cuda-version-feedstock",
                "arm-variant": "conda-forge/arm-variant-feedstock"}


def git(gitdir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], check=True, capture_output=True,
                          text=True).stdout


def git_dir(path: str) -> Path:
    """The git directory of a clone: the path itself (bare) or its .git."""
    given = Path(path)
    return given / ".git" if (given / ".git").is_dir() else given


def show(gitdir: Path, commit: str, path: str) -> str | None:
    try:
        return git(gitdir, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return None


def recipe_version(text: str) -> str | None:
    """The ``{% set version = "2.13.0" %}`` of a meta.yaml, or ``version: "0.28.0"`` of a recipe.yaml context."""
    found = re.search(r'{%\s*set\s+version\s*=\s*"([^"]+)"\s*%}', text) or \
        re.search(r'^\s+version:\s*"([^"]+)"', text, re.M)
    return found[1] if found else None


def final_release(version: str) -> tuple[int, ...] | None:
    return tuple(int(p) for p in version.split(".")) if re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", version) else None


def pytorch_releases(gitdir: Path) -> dict[str, dict[str, str]]:
    """version -> {ref, commit, date}: the newest commit of each final release on main or a vX.Y.x branch."""
    refs = [r for r in git(gitdir, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()
            if r == "main" or re.fullmatch(r"v[0-9]+\.[0-9]+\.x", r)]
    found: dict[str, dict[str, str]] = {}
    for ref in refs:
        for line in git(gitdir, "log", "--first-parent", "--format=%H %cI", ref, "--", "recipe/meta.yaml").split("\n"):
            if not line:
                continue
            commit, date = line.split()
            version = recipe_version(show(gitdir, commit, "recipe/meta.yaml") or "")
            release = final_release(version or "")
            if version is None or release is None or release < FIRST_VERSION:
                continue
            if version not in found or found[version]["date"] < date:
                found[version] = {"ref": ref, "commit": commit, "date": date}
    return dict(sorted(found.items(), key=lambda item: final_release(item[0]) or ()))


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def variant_files(gitdir: Path, commit: str) -> list[str]:
    names = git(gitdir, "ls-tree", "--name-only", commit, ".ci_support/").split("\n")
    return sorted(n for n in names if n.endswith(".yaml"))


def head(gitdir: Path) -> dict[str, str]:
    commit, date = git(gitdir, "log", "-1", "--format=%H %cI", "HEAD").split()
    return {"commit": commit, "date": date}


def capture(dirs: dict[str, Path]) -> dict[str, object]:
    if OUT.exists():
        shutil.rmtree(OUT)
    sources: dict[str, object] = {"repositories": {}, "pytorch": {}}
    releases = pytorch_releases(dirs["pytorch"])
    for version, where in releases.items():
        for path in PYTORCH_FILES:
            text = show(dirs["pytorch"], where["commit"], path)
            if text is not None:
                write(OUT / "pytorch" / version / path, text)
        for name in variant_files(dirs["pytorch"], where["commit"]):
            write(OUT / "pytorch" / version / name, show(dirs["pytorch"], where["commit"], name) or "")
    sources["pytorch"] = releases
    for package in ("torchvision", "torchaudio"):
        gitdir = dirs[package]
        where = head(gitdir)
        recipe = next(p for p in ("recipe/recipe.yaml", "recipe/meta.yaml")
                      if show(gitdir, where["commit"], p) is not None)
        write(OUT / package / recipe, show(gitdir, where["commit"], recipe) or "")
        names = variant_files(gitdir, where["commit"])
        write(OUT / package / "ci_support.txt", "".join(f"{Path(n).name}\n" for n in names))
        for name in names:
            if "python3.12." in name:
                write(OUT / package / name, show(gitdir, where["commit"], name) or "")
    for package, files in (("cuda-version", ("recipe/meta.yaml", "recipe/conda_build_config.yaml")),
                           ("arm-variant", ("recipe/meta.yaml",))):
        where = head(dirs[package])
        for path in files:
            write(OUT / package / path, show(dirs[package], where["commit"], path) or "")
    for package, repository in REPOSITORIES.items():
        where = head(dirs[package])
        sources["repositories"][package] = {  # type: ignore[index]
            "url": f"https://github.com/{repository}", **where}
    write(OUT / "sources.json", json.dumps(sources, indent=1) + "\n")
    return sources


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for package in REPOSITORIES:
        parser.add_argument(f"--{package}", required=True, metavar="GITDIR")
    args = parser.parse_args(argv)
    dirs = {package: git_dir(getattr(args, package.replace("-", "_"))) for package in REPOSITORIES}
    sources = capture(dirs)
    releases = sources["pytorch"]
    print(f"captured pytorch {', '.join(releases)} and the selector packages into {OUT}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
