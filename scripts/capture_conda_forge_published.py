#!/usr/bin/env python3
"""Capture published conda-forge package records of the PyTorch family, which the audit checks the conda-forge table
against (``audit_conda_forge.py``: what the channel serves, beside what the recipes say).

    python scripts/capture_conda_forge_published.py [--repodata FILE URL]… [--lock-history GITDIR REPO PATH]…

- ``--repodata FILE URL``: a channel's ``repodata.json`` (``<conda-forge>/<subdir>/repodata.json``, saved to FILE;
  URL is where it was read), every record of the family in it;
- ``--lock-history GITDIR REPO PATH``: every version of the pixi lock file PATH in the git copy GITDIR of the GitHub
  repository REPO (``owner/name``): pixi writes each locked package's published record into it (its URL, digests,
  ``depends`` and ``constrains`` as the channel's repodata has them; name, version, build and build number are in
  the file name).

Writes ``scripts/reference/conda-forge/published.json`` (replacing it): the sources, and each record once (by its
URL), sorted. Runs no code of what it reads and needs no network.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
OUT = HERE / "reference" / "conda-forge" / "published.json"
NAMES = ("pytorch", "libtorch", "pytorch-gpu", "pytorch-cpu", "torchvision", "torchaudio", "cuda-version",
         "arm-variant")
_FILE = re.compile(r"^(?P<name>.+)-(?P<version>[^-]+)-(?P<build>[^-]+)\.(?:conda|tar\.bz2)$")
_URL = re.compile(r"^https://conda\.anaconda\.org/conda-forge/(?P<subdir>[a-z0-9-]+)/(?P<file>[^/]+)$")


def _record(filename: str, subdir: str, url: str, fields: dict[str, Any], source: str) -> dict[str, Any] | None:
    found = _FILE.match(filename)
    if not found or found["name"] not in NAMES:
        return None
    number = fields.get("build_number")
    if not isinstance(number, int):  # pixi leaves it out where the build string ends in it
        tail = found["build"].rsplit("_", 1)[-1]
        number = int(tail) if tail.isdigit() else 0
    return {"name": found["name"], "version": found["version"], "build": found["build"], "build_number": number,
            "subdir": subdir, "depends": list(fields.get("depends") or []),
            "constrains": list(fields.get("constrains") or []), "sha256": fields.get("sha256"), "url": url,
            "source": source}


def from_repodata(path: Path, url: str) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    subdir = (data.get("info") or {}).get("subdir") or url.rstrip("/").split("/")[-2]
    base = url.rsplit("/", 1)[0]
    out = []
    for key in ("packages", "packages.conda"):
        for filename, fields in (data.get(key) or {}).items():
            record = _record(filename, subdir, f"{base}/{filename}", fields, url)
            if record:
                out.append(record)
    return out


def from_lock(text: str, source: str) -> list[dict[str, Any]]:
    from torch_install.project.simple_yaml import loads

    out = []
    for entry in loads(text).get("packages") or []:
        found = _URL.match(str(entry.get("conda", ""))) if isinstance(entry, dict) else None
        if found:
            record = _record(found["file"], found["subdir"], entry["conda"], entry, source)
            if record:
                out.append(record)
    return out


def lock_history(git_dir: str, repo: str, path: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    def git(*args: str) -> str:
        return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=True).stdout

    commits = git("log", "--format=%H %cI", "HEAD", "--", path).split("\n")
    records = []
    seen = []
    for line in filter(None, commits):
        commit, date = line.split()
        try:
            text = git("show", f"{commit}:{path}")
        except subprocess.CalledProcessError:  # the commit that deleted it
            continue
        records += from_lock(text, f"https://github.com/{repo}/blob/{commit}/{path}")
        seen.append({"commit": commit, "date": date})
    return records, {"kind": "pixi lock file history", "repository": f"https://github.com/{repo}", "path": path,
                     "commits": seen}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repodata", nargs=2, action="append", default=[], metavar=("FILE", "URL"))
    parser.add_argument("--lock-history", nargs=3, action="append", default=[], metavar=("GITDIR", "REPO", "PATH"))
    args = parser.parse_args(argv)
    records: dict[str, dict[str, Any]] = {}
    sources = []
    for path, url in args.repodata:
        for record in from_repodata(Path(path), url):
            records.setdefault(record["url"], record)
        sources.append({"kind": "repodata.json", "url": url})
    for git_dir, repo, path in args.lock_history:
        found, source = lock_history(git_dir, repo, path)
        for record in found:
            records.setdefault(record["url"], record)
        sources.append(source)
    ordered = sorted(records.values(), key=lambda r: (r["name"], r["version"], r["subdir"], r["build"]))
    OUT.write_text(json.dumps({"about": "published conda-forge records of the PyTorch family, by "
                                        "scripts/capture_conda_forge_published.py", "sources": sources,
                               "records": ordered}, indent=1) + "\n", encoding="utf-8")
    print(f"captured {len(ordered)} records from {len(sources)} sources into {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
