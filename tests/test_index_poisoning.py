"""A 200 page that lists no torch wheel (a maintenance page, an empty body, the wrong content type) is a warning
and a fallback to the last good cached data or the embedded matrix: never a "none" plan, never cached."""

from __future__ import annotations

import pytest

from index_pages import load_rows, serve_index
from resolve_cases import TEST_MATRIX
from torch_install.index.cache import IndexCache
from torch_install.index.learn import online_matrix
from torch_install.machine import Machine

LINUX = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35")
JSON = "application/vnd.pypi.simple.v1+json"
MAINTENANCE = [("<html><body><h1>Down for maintenance</h1></body></html>", "text/html"),
               ("", "text/html"), ("{}", JSON),
               ('{"meta": {"api-version": "1.1"}, "name": "torch", "files": []}', JSON),
               ("\xff\xfe garbage", "application/octet-stream")]


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TTL", "0")  # every run asks the server again


@pytest.mark.parametrize(("body", "content_type"), MAINTENANCE)
def test_a_page_without_wheels_falls_back_to_the_embedded_matrix(httpserver, body: str, content_type: str) -> None:
    httpserver.expect_request("/whl/torch/").respond_with_data(body, content_type=content_type)
    result = online_matrix(TEST_MATRIX, LINUX, httpserver.url_for("/whl"))
    assert result.matrix.releases == TEST_MATRIX.releases
    assert result.warning is not None and ("lists no torch wheel" in result.warning or "index unreachable"
                                           in result.warning)
    assert IndexCache().get(httpserver.url_for("/whl/torch/")) is None  # not cached


def test_a_page_without_wheels_after_a_good_one_keeps_the_good_one(httpserver) -> None:
    base = serve_index(httpserver, load_rows())
    good = online_matrix(TEST_MATRIX, LINUX, base)
    assert good.warning is None
    httpserver.clear()
    httpserver.expect_request("/whl/torch/").respond_with_data("<html>maintenance</html>", content_type="text/html")
    again = online_matrix(TEST_MATRIX, LINUX, base)
    assert [r.version for r in again.matrix.releases] == [r.version for r in good.matrix.releases]
    assert again.warning is not None and "lists no torch wheel" in again.warning and "cached data" in again.warning
