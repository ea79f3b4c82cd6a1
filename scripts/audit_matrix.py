#!/usr/bin/env python3
"""Compare the embedded compatibility matrix with the default index's torch files; print each disagreement.

    python scripts/audit_matrix.py                        # the captured pages (scripts/reference/default-index)
    python scripts/audit_matrix.py --pages DIR            # pages captured elsewhere (capture_default_index.py)
    python scripts/audit_matrix.py --index URL            # a live index, or a loopback replica of one

Checks, per release of the matrix: that the default index has it, its Requires-Python, the Python tags of each
platform (the PyTorch index may have more: the matrix lists those as index-only), the glibc floor (the manylinux
tag, or torch's 2.17 where the tag says less), the macOS floor of each Python tag, and the Python coverage of the
companions the matrix pairs with it. Releases on the index and not in the matrix are listed too. Exit 1 on any
disagreement, 0 when the matrix agrees, 2 when the pages cannot be read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import build_matrix  # noqa: E402  (the same readings of wheel tags the matrix was built with)

from torch_install.resolver.matrix import load_matrix  # noqa: E402

ACCEPT = "application/vnd.pypi.simple.v1+json"
MAX_BYTES = 32 << 20
TAG_PLATFORMS = ("linux_x86_64", "linux_aarch64", "windows_x86_64", "macos_arm64", "macos_x86_64")


def read_pages(pages: Path | None, index: str | None) -> dict[str, dict[str, Any]]:
    out = {}
    for project in ("torch", "torchvision", "torchaudio"):
        if index:
            url = urllib.parse.urljoin(index.rstrip("/") + "/", f"{project}/")
            request = urllib.request.Request(url, headers={"Accept": ACCEPT})
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
                body = response.read(MAX_BYTES + 1)
            if len(body) > MAX_BYTES:
                raise OSError(f"{url}: larger than {MAX_BYTES >> 20} MiB")
            out[project] = json.loads(body)
        else:
            out[project] = json.loads(((pages or build_matrix.DEFAULT_INDEX_PAGES) / f"{project}.json")
                                      .read_text(encoding="utf-8"))
    return out


def wheels(page: dict[str, Any]) -> list[tuple[str, Any, dict[str, Any]]]:
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    rows = []
    for entry in page["files"]:
        try:
            _, version, _, tags = parse_wheel_filename(entry["filename"])
        except InvalidWheelFilename:
            continue
        if not entry.get("yanked"):
            rows.append((str(version), tags, entry))
    return rows


def audit(pages: dict[str, dict[str, Any]]) -> list[str]:
    matrix = load_matrix()
    torch = wheels(pages["torch"])
    problems: list[str] = []
    versions = {v for v, _, _ in torch}
    known = {r.version for r in matrix.releases}
    newest = max(known, key=lambda v: tuple(int(x) for x in re.findall(r"\d+", v)))
    for version in sorted(versions - known):
        if re.fullmatch(r"\d+\.\d+\.\d+", version) and tuple(map(int, version.split("."))) > tuple(
                map(int, newest.split("."))):
            problems.append(f"torch {version}: on the default index, not in the matrix (newest there: {newest})")
    files = {"torch": [(v, t, e["filename"]) for v, t, e in torch],
             **{p: [(v, t, e["filename"]) for v, t, e in wheels(pages[p])] for p in ("torchvision", "torchaudio")}}
    for release in matrix.releases:
        mine = [(t, e) for v, t, e in torch if v == release.version]
        if not mine:
            problems.append(f"torch {release.version}: in the matrix, not on the default index")
            continue
        requires = {e.get("requires-python") for _, e in mine}
        if release.requires_python not in requires:
            problems.append(f"torch {release.version}: Requires-Python {release.requires_python!r} in the matrix, "
                            f"{sorted(r or '' for r in requires)} on the index")
        pythons: dict[str, set[str]] = {}
        manylinux: dict[str, list[str]] = {}
        for tags, _ in mine:
            for tag in tags:
                platform = build_matrix._platform_of(tag.platform)
                python = build_matrix._python_of(tag)
                if platform and python:
                    pythons.setdefault(platform, set()).add(python)
                if platform and platform.startswith("linux"):
                    manylinux.setdefault(platform, []).append(tag.platform)
        index_only = build_matrix.INDEX_ONLY_PYTHON.get(release.version, {})
        for platform in TAG_PLATFORMS:
            have = set(release.python_tags(platform)) - set(index_only.get(platform, ()))
            there = pythons.get(platform, set())
            if have != there:
                problems.append(f"torch {release.version} {platform}: Pythons {sorted(have)} in the matrix, "
                                f"{sorted(there)} on the index")
        for platform, tags in manylinux.items():
            floor = build_matrix._glibc(tags)
            if platform == "linux_x86_64" and floor and build_matrix._key(floor) < build_matrix._key(
                    build_matrix.TORCH_GLIBC_FLOOR):
                floor = build_matrix.TORCH_GLIBC_FLOOR
            if floor != release.glibc.get(platform):
                problems.append(f"torch {release.version} {platform}: glibc {release.glibc.get(platform)} in the "
                                f"matrix, {floor} from the wheels' tags")
        by_python = build_matrix._macos_by_python(files["torch"], release.version)
        for platform in ("macos_arm64", "macos_x86_64"):
            for python in release.python_tags(platform):
                there_floor = by_python.get(platform, {}).get(python) or release.macos.get(platform)
                ours = release.macos_floor(platform, python)
                if ours != there_floor:
                    problems.append(f"torch {release.version} {platform} Python {python}: macOS {ours} in the "
                                    f"matrix, {there_floor} on the index")
        default_pythons = {p: [x for x in release.python_tags(p) if x not in index_only.get(p, ())]
                           for p in TAG_PLATFORMS}
        gaps = build_matrix._companion_gaps(files, dict(release.companions), default_pythons)
        for name in ("torchvision", "torchaudio"):
            mine_gaps = {p: set(v) for p, v in release.companion_gaps.get(name, {}).items()}
            there_gaps = {p: set(v) for p, v in gaps.get(name, {}).items()}
            if mine_gaps != there_gaps:
                problems.append(f"torch {release.version}: {name} {release.companions.get(name)} lacks Pythons "
                                f"{ {p: sorted(v) for p, v in there_gaps.items()} } on the index, the matrix says "
                                f"{ {p: sorted(v) for p, v in mine_gaps.items()} }")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--pages", type=Path, help="directory of captured pages (default: the committed capture)")
    where.add_argument("--index", help="a simple-API root to read live (a loopback replica, or the default index)")
    args = parser.parse_args(argv)
    try:
        pages = read_pages(args.pages, args.index)
    except (OSError, ValueError, KeyError) as exc:
        print(f"cannot read the default index's pages: {exc}", file=sys.stderr)
        return 2
    problems = audit(pages)
    for line in problems:
        print(line)
    releases = len(load_matrix().releases)
    print(f"{len(problems)} disagreement{'s' if len(problems) != 1 else ''} over {releases} releases")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
