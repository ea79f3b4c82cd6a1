"""`--online` reads what other packages need of torch from the user's index (a loopback PEP 691 index with PEP 658
metadata files): every candidate release the search may need, not only the newest; a package that declares no torch
is known to need nothing; a table package's release newer than the table is read too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servers import closed_port
from torch_install.cli import main

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
TARGET = ["--os", "linux", "--arch", "x86_64"]
WHEEL_TAG = "py3-none-any"


def metadata(name: str, version: str, requires: list[str], requires_python: str | None) -> str:
    """A wheel's METADATA file as build backends write it (Metadata-Version 2.1)."""
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Python: {requires_python}"] if requires_python else []
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\n"


class LoopbackIndex:
    """A simple index on 127.0.0.1: ``/simple/<project>/`` pages (PEP 691 JSON, ``core-metadata`` on each wheel)
    and each wheel's ``.metadata`` file (PEP 658); it counts the metadata files read."""

    def __init__(self, httpserver) -> None:
        self.server = httpserver
        self.read: list[str] = []

    def project(self, name: str, releases: list[tuple[str, list[str], str | None]], yanked: tuple[str, ...] = ()
                ) -> None:
        files = []
        dist = name.replace("-", "_")
        for version, requires, requires_python in releases:
            filename = f"{dist}-{version}-{WHEEL_TAG}.whl"
            path = f"/files/{filename}"
            files.append({"filename": filename, "url": path, "hashes": {"sha256": "0" * 64},
                          "requires-python": requires_python, "core-metadata": True,
                          "yanked": "broken" if version in yanked else False})
            body = metadata(name, version, requires, requires_python)

            def handler(request, body: str = body, filename: str = filename):  # noqa: ANN001, ANN202
                from werkzeug import Response

                self.read.append(filename)
                return Response(body, content_type="text/plain")

            self.server.expect_request(path + ".metadata").respond_with_handler(handler)
        page = {"meta": {"api-version": "1.1"}, "name": name, "files": files,
                "versions": [v for v, _, _ in releases]}
        self.server.expect_request(f"/simple/{name}/").respond_with_data(json.dumps(page), content_type=JSON_TYPE)


@pytest.fixture
def index(httpserver, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> LoopbackIndex:
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TIMEOUT", "2")
    monkeypatch.setenv("TORCH_INSTALL_DEFAULT_INDEX", httpserver.url_for("/simple/"))
    return LoopbackIndex(httpserver)


def plan(capsys: pytest.CaptureFixture[str], *argv: str, python: str = "3.12") -> dict:
    down = f"http://127.0.0.1:{closed_port()}/whl"  # the PyTorch index is not needed: the embedded matrix serves
    code = main(["plan", *TARGET, "--python", python, "--online", "--index-base", down, *argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def codes(p: dict) -> list[str]:
    return [w["code"] for w in p["warnings"]]


def test_a_package_that_pins_torch_is_read_and_moves_torch(index: LoopbackIndex,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    index.project("sglang", [("0.5.23", ["torch==2.14.1", "torchaudio==2.11.0", "torchvision"], ">=3.10")])
    p = plan(capsys, "torch", "sglang")
    assert p["choice"]["torch"] == "2.14.1" and "constrained-by" in codes(p)
    assert "requirement-unknown" not in codes(p)


def test_a_package_that_declares_no_torch_needs_nothing_and_one_release_is_read(
        index: LoopbackIndex, capsys: pytest.CaptureFixture[str]) -> None:
    index.project("tqdm", [("4.67.1", ["colorama; platform_system == 'Windows'"], ">=3.7"),
                           ("4.67.0", [], ">=3.7"), ("4.66.0", [], ">=3.7")])
    p = plan(capsys, "torch", "tqdm")
    assert p["choice"]["torch"] == "2.15.0" and p["warnings"] == []
    assert index.read == ["tqdm-4.67.1-py3-none-any.whl"]
    assert "tqdm torch==2.15.0+cpu" in p["commands"]["pip"]  # as written: it is not pinned for the build


def test_every_release_the_search_needs_is_read_not_only_the_newest(index: LoopbackIndex,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """On Python 3.9 no torch the newest releases pin installs: the older release that pins one that does is read
    and chosen (the releases read stop once they cover every torch release)."""
    index.project("servekit", [("3.0.0", ["torch==2.14.0"], ">=3.10"), ("2.0.0", ["torch==2.9.1"], ">=3.10"),
                               ("1.0.0", ["torch==2.4.0"], ">=3.8"), ("0.9.0", ["torch==2.0.1"], ">=3.8")])
    p = plan(capsys, "torch", "servekit", python="3.9")
    assert p["choice"]["torch"] == "2.4.0" and "servekit==1.0.0" in p["commands"]["pip"]
    assert "servekit-1.0.0-py3-none-any.whl" in index.read


def test_a_yanked_release_is_not_read_unless_pinned(index: LoopbackIndex, capsys: pytest.CaptureFixture[str]) -> None:
    index.project("servekit", [("2.0.0", ["torch==2.13.0"], ">=3.10"), ("1.0.0", ["torch==2.9.1"], ">=3.10")],
                  yanked=("2.0.0",))
    assert plan(capsys, "torch", "servekit")["choice"]["torch"] == "2.9.1"
    pinned = plan(capsys, "torch", "servekit==2.0.0")
    assert pinned["choice"]["torch"] == "2.13.0", (pinned["warnings"], index.read)


def test_a_table_package_release_newer_than_the_table_is_read(index: LoopbackIndex,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    index.project("xformers", [("0.0.36", ["torch==2.11.0"], ">=3.9"), ("0.0.35", ["torch>=2.10"], ">=3.9")])
    p = plan(capsys, "torch", "xformers==0.0.36")
    assert p["choice"]["torch"] == "2.11.0" and "xformers==0.0.36" in p["commands"]["pip"]
    assert index.read == ["xformers-0.0.36-py3-none-any.whl"]  # the table holds 0.0.35
