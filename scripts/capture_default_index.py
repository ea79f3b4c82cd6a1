#!/usr/bin/env python3
"""Capture the default index's PEP 691 project pages of torch, torchvision and torchaudio.

    python scripts/capture_default_index.py [-o scripts/reference/default-index]

Writes ``<project>.json`` (the JSON simple-API response as served, each file's ``url`` made relative to the
project page so a loopback replica can serve it), ``torch.html`` (torch's page in the PEP 503 HTML form, its
hrefs made relative the same way: what the page scanner is checked against) and ``captured.json`` (when, and
where the index URL was configured: ``PIP_INDEX_URL``, pip's configuration, uv's variables, or pip's own
default). These pages are what
``scripts/build_matrix.py`` reads the per-Python macOS floors and the companions' Python coverage from, what
``scripts/audit_matrix.py`` checks the embedded matrix against, and what the tests serve as the replica.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from torch_install.index.client import Fetcher  # noqa: E402
from torch_install.index.default_index import default_index_url  # noqa: E402
from torch_install.index.wheel_metadata import wheel_metadata  # noqa: E402

PROJECTS = ("torch", "torchvision", "torchaudio")
# whose wheels' PEP 658 METADATA is kept (its header: the Requires-Dist lines with their markers), one wheel per
# platform: every torch release of the embedded matrix (what its default build is read from) and every
# torchvision/torchaudio release it pairs with (what that one needs of torch; one platform is enough)
def metadata_of() -> dict[str, tuple[str, ...]]:
    from torch_install.resolver.matrix import load_matrix

    matrix = load_matrix()
    out: dict[str, set[str]] = {"torch": {r.version for r in matrix.releases}, "torchvision": set(),
                                "torchaudio": set()}
    for release in matrix.releases:
        for name, version in release.companions.items():
            out[name].add(version)
        for name, versions in matrix.decoupled_companions.items():
            out[name].update(versions)
    return {name: tuple(sorted(v)) for name, v in out.items()}


# (torch 2.6 and older: Linux x86_64 wheels are manylinux1, and 2.5 and older Linux aarch64 ones manylinux2014)
PLATFORMS = ("win_amd64", "manylinux_2_28_x86_64", "manylinux_2_28_aarch64", r"macosx_[0-9]+_[0-9]+_arm64",
             "manylinux1_x86_64", "manylinux2014_aarch64")
ACCEPT = "application/vnd.pypi.simple.v1+json"
MAX_BYTES = 32 << 20


def fetch_bytes(url: str, accept: str) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "torch-install capture"})
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 (https, from the configuration)
        body = response.read(MAX_BYTES + 1)
    if len(body) > MAX_BYTES:
        raise SystemExit(f"{url}: larger than {MAX_BYTES >> 20} MiB")
    return body


def fetch(url: str) -> dict:
    return json.loads(fetch_bytes(url, ACCEPT))


def relative_hrefs(page_url: str, text: str) -> str:
    """An HTML page with each ``href="URL#fragment"`` made relative like the JSON form's URLs."""
    def one(match: re.Match[str]) -> str:
        url, sep, fragment = match[1].partition("#")
        return f'href="{relative(page_url, html.unescape(url))}{sep}{fragment}"'

    return re.sub(r'href="([^"]*)"', one, text)


def relative(page_url: str, file_url: str) -> str:
    """A file URL as a path relative to its project page: ``../../files/<path>``."""
    path = urllib.parse.urlsplit(urllib.parse.urljoin(page_url, file_url)).path
    return "../../files" + path


def capture_metadata(project: str, page_url: str, page: dict, directory: Path) -> None:
    """``metadata/<wheel>.metadata``: the METADATA header (up to its description) of one wheel (cp312 where there
    is one) per platform of each release ``metadata_of`` names (companions: Linux x86_64 only)."""
    directory.mkdir(parents=True, exist_ok=True)
    platforms = PLATFORMS if project == "torch" else PLATFORMS[1:2]
    for version in metadata_of().get(project, ()):
        for platform in platforms:
            files = [f for f in page.get("files", []) if f["filename"].startswith(f"{project}-{version}-")
                     and re.search(platform + r"\.whl$", f["filename"])]
            wheel = next((f for f in files if "-cp312-" in f["filename"] or "-py3-none-" in f["filename"]),
                         files[0] if files else None)
            if wheel is None or (directory / f"{wheel['filename']}.metadata").exists():
                continue
            # the index's PEP 658 file where it has one, else the wheel's own member through range reads
            text = wheel_metadata(Fetcher(), urllib.parse.urljoin(page_url, wheel["url"]))
            header = text.split("\n\n", 1)[0] + "\n"
            (directory / f"{wheel['filename']}.metadata").write_text(header, encoding="utf-8")
            print(f"  {wheel['filename']}.metadata")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=HERE / "reference" / "default-index")
    args = parser.parse_args(argv)
    found = default_index_url()
    if found is None:
        print("no default index configured and pip's own default unknown (is pip installed?)", file=sys.stderr)
        return 2
    root, where = found
    args.output.mkdir(parents=True, exist_ok=True)
    for project in PROJECTS:
        page_url = urllib.parse.urljoin(root, f"{project}/")
        page = fetch(page_url)
        capture_metadata(project, page_url, page, args.output / "metadata")
        for entry in page.get("files", []):
            entry["url"] = relative(page_url, entry["url"])
        (args.output / f"{project}.json").write_text(json.dumps(page, indent=0, sort_keys=True) + "\n",
                                                      encoding="utf-8")
        print(f"{project}: {len(page.get('files', []))} files")
        if project == "torch":
            text = fetch_bytes(page_url, "text/html").decode("utf-8")
            (args.output / "torch.html").write_text(relative_hrefs(page_url, text), encoding="utf-8")
    (args.output / "captured.json").write_text(json.dumps(
        {"captured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "index": where}, indent=1) + "\n",
        encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
