"""Simple-index pages for loopback tests, in the shapes download.pytorch.org serves (PEP 503 HTML) and the
PEP 691 JSON form, built from a list of real-shaped wheel filenames (tests/fixtures/index/*.txt)."""

from __future__ import annotations

import hashlib
import html
import json
from pathlib import Path
from urllib.parse import quote

FIXTURES = Path(__file__).parent / "fixtures" / "index"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def sha(filename: str) -> str:
    """The sha256 the fixture index lists for a file (of its name: the wheels themselves are not served)."""
    return hashlib.sha256(filename.encode()).hexdigest()


def load_rows(name: str = "torch-files.txt") -> list[tuple[str, str, str | None]]:
    """(variant dir, filename, requires-python) rows of a fixture list."""
    rows = []
    for line in (FIXTURES / name).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            parts = line.split()
            rows.append((parts[0], parts[1], parts[2] if len(parts) > 2 else None))
    return rows


def parse_row(line: str) -> tuple[str, str, str | None]:
    parts = line.split()
    return parts[0], parts[1], parts[2] if len(parts) > 2 else None


def project_of(filename: str) -> str:
    return filename.split("-", 1)[0]


def html_page(project: str, rows: list[tuple[str, str, str | None]], prefix: str = "/whl") -> str:
    """The page as download.pytorch.org renders it: absolute-path hrefs into the variant directory,
    '+' percent-encoded, a #sha256= fragment, data-requires-python HTML-escaped."""
    lines = ["<!DOCTYPE html>", "<html>", "  <body>", f"    <h1>Links for {project}</h1>"]
    for variant, filename, requires in rows:
        href = f"{prefix}/{variant}/{quote(filename)}#sha256={sha(filename)}"
        attrs = f' data-requires-python="{html.escape(requires)}"' if requires else ""
        lines.append(f'    <a href="{href}"{attrs}>{html.escape(filename)}</a><br/>')
    lines += ["  </body>", "</html>", ""]
    return "\n".join(lines)


def json_page(project: str, rows: list[tuple[str, str, str | None]], prefix: str = "/whl") -> str:
    files = [{"filename": filename, "url": f"{prefix}/{variant}/{quote(filename)}",
              "hashes": {"sha256": sha(filename)}, "requires-python": requires, "yanked": False}
             for variant, filename, requires in rows]
    return json.dumps({"meta": {"api-version": "1.1"}, "name": project, "files": files,
                       "versions": sorted({f["filename"].split("-")[1] for f in files})})


def serve_index(httpserver, rows: list[tuple[str, str, str | None]], form: str = "html",
                prefix: str = "/whl") -> str:
    """Serve ``{prefix}/{project}/`` and ``{prefix}/{variant}/{project}/`` pages; returns the index base URL."""
    pages: dict[str, list[tuple[str, str, str | None]]] = {}
    for row in rows:
        project = project_of(row[1])
        pages.setdefault(f"{prefix}/{project}/", []).append(row)
        pages.setdefault(f"{prefix}/{row[0]}/{project}/", []).append(row)
    for path, page_rows in pages.items():
        project = path.rstrip("/").rsplit("/", 1)[-1]
        if form == "json":
            httpserver.expect_request(path).respond_with_data(json_page(project, page_rows, prefix),
                                                              content_type=JSON_TYPE)
        else:
            httpserver.expect_request(path).respond_with_data(html_page(project, page_rows, prefix),
                                                              content_type="text/html")
    return httpserver.url_for(prefix)
