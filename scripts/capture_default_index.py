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

from torch_install.index.default_index import default_index_url  # noqa: E402

PROJECTS = ("torch", "torchvision", "torchaudio")
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
