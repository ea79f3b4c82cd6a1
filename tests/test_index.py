"""The index client: URL policy, PEP 503/691 parsing, transport failures against a real loopback server."""

from __future__ import annotations

import pytest
from werkzeug import Response

from index_pages import JSON_TYPE, html_page, json_page, load_rows, serve_index, sha
from servers import TRUNCATED, RawServer, closed_port
from torch_install.errors import EXIT_ENVIRONMENT, InputError
from torch_install.index.client import Fetcher, IndexClient
from torch_install.index.pages import IndexUnavailable, parse_page, parse_simple_html, parse_simple_json, parse_wheels
from torch_install.index.urls import DEFAULT_INDEX_BASE, check_index_url, index_base_from, project_url

FAST = {"retries": 0, "backoff": 0.0, "connect_timeout": 2.0, "read_timeout": 2.0}


# ------------------------------------------------------------------------------------------------ URL policy

@pytest.mark.parametrize("url", ["https://download.pytorch.org/whl", "https://mirror.example.com/pytorch/whl/",
                                 "http://127.0.0.1:8080/whl", "http://localhost/whl", "http://[::1]:9/whl"])
def test_accepted_index_urls(url):
    assert check_index_url(url) == url.rstrip("/")


@pytest.mark.parametrize(("url", "fragment"), [
    ("http://mirror.example.com/whl", "plain http is refused"),
    ("ftp://mirror.example.com/whl", "not an http\\(s\\) URL"),
    ("file:///srv/whl", "not an http\\(s\\) URL"),
    ("https://user:secret@mirror.example.com/whl", "credentials"),
    ("https:///whl", "not an http\\(s\\) URL"),
    ("https://mirror.example.com/whl?x=1", "query or fragment"),
])
def test_refused_index_urls(url, fragment):
    with pytest.raises(InputError, match=fragment) as err:
        check_index_url(url)
    assert "\n" not in str(err.value)


def test_plain_http_mirror_needs_the_explicit_flag():
    assert check_index_url("http://mirror.lan/whl", allow_insecure=True) == "http://mirror.lan/whl"


def test_index_base_precedence():
    env = {"TORCH_INSTALL_INDEX_BASE": "https://nexus.corp/repository/pytorch/whl/"}
    assert index_base_from(None, {}) == DEFAULT_INDEX_BASE
    assert index_base_from(None, env) == "https://nexus.corp/repository/pytorch/whl"
    assert index_base_from("https://devpi.corp/root/torch", env) == "https://devpi.corp/root/torch"
    with pytest.raises(InputError, match="TORCH_INSTALL_INDEX_BASE"):
        index_base_from(None, {"TORCH_INSTALL_INDEX_BASE": "http://nexus.corp/whl"})


def test_project_urls():
    assert project_url("https://m/whl/", "torch") == "https://m/whl/torch/"
    assert project_url("https://m/whl", "torch", "cu134") == "https://m/whl/cu134/torch/"


# ------------------------------------------------------------------------------------------------ parsing

ROWS = load_rows()


def test_html_page_in_the_pytorch_index_shape():
    page_url = "https://download.pytorch.org/whl/torch/"
    files = parse_simple_html(html_page("torch", ROWS), page_url)
    assert len(files) == len(ROWS)
    first = files[0]
    assert first.filename == "torch-2.15.0+cu130-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert first.url == "https://download.pytorch.org/whl/cu130/torch-2.15.0%2Bcu130-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert first.sha256 == sha(first.filename)
    assert first.requires_python == ">=3.11"  # HTML-escaped on the page


def test_json_page_gives_the_same_files_as_html():
    page_url = "http://127.0.0.1:1/whl/torch/"
    from_json = parse_simple_json(json_page("torch", ROWS), page_url)
    from_html = parse_simple_html(html_page("torch", ROWS), page_url)
    assert from_json == from_html


def test_content_type_selects_the_parser():
    page_url = "https://x.test/whl/torch/"
    body = json_page("torch", ROWS[:2]).encode()
    assert len(parse_page(body, f"{JSON_TYPE}; charset=utf-8", page_url)) == 2
    assert parse_page(body, "text/html", page_url) == []  # JSON text is not anchors


def test_wheels_carry_version_label_and_tags():
    files = parse_simple_html(html_page("torch", ROWS), "https://x.test/whl/torch/")
    wheels = {w.file.filename: w for w in parse_wheels(files, "torch")}
    future = wheels["torch-2.16.0+rocm7.14-cp312-cp312-manylinux_2_28_x86_64.whl"]
    assert (future.version, future.label, future.full_version) == ("2.16.0", "rocm7.14", "2.16.0+rocm7.14")
    assert future.tags == {"cp312-cp312-manylinux_2_28_x86_64"}
    mac = wheels["torch-2.15.0-cp312-none-macosx_14_0_arm64.whl"]
    assert mac.label == "" and mac.tags == {"cp312-none-macosx_14_0_arm64"}
    assert wheels["torch-2.15.0+cu132-cp314-cp314t-manylinux_2_28_x86_64.whl"].tags == {
        "cp314-cp314t-manylinux_2_28_x86_64"}


HOSTILE = """<!DOCTYPE html><html><head><title>Links for torch</title>
<script>document.write('<a href="/whl/cu999/torch-9.9.9+cu999-cp312-cp312-manylinux_2_28_x86_64.whl">x</a>')</script>
<style>a { background: url(javascript:alert(1)) }</style></head><body>
<a href="javascript:alert(1)">torch-2.15.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl</a>
<a href="data:text/plain,hi">torch-2.15.0+cpu-cp312-cp312-win_amd64.whl</a>
<a href="file:///etc/passwd">passwd</a>
<a href="/whl/cpu/..%2F..%2Fetc%2Ftorch-2.15.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl">traversal</a>
<a href="/whl/cpu/torch-2.15.0%2Bcpu-cp312-cp312-manylinux_2_28_aarch64.whl#sha256=NOTAHASH">bad hash</a>
<a href="/whl/cpu/torch-not-a-wheel.whl">garbage name</a>
<a href="/whl/cpu/torchvision-0.30.0%2Bcpu-cp312-cp312-manylinux_2_28_x86_64.whl">other project</a>
<a href="/whl/cpu/torch-2.15.0%2Bcpu.tar.gz">sdist</a>
<a href="/whl/cu132/torch-2.15.0%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl" data-yanked="broken">yanked</a>
<a href="/whl/cu134/torch-2.16.0%2Bcu134-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=%s"
   data-requires-python="&gt;=3.11&lt;&quot;&#0;">ok <b>unclosed <i>tags
<a>no href</a><a href="">empty</a><div <<< broken attr=">>"
"""


def test_hostile_html_yields_only_real_wheels():
    good = "torch-2.16.0+cu134-cp312-cp312-manylinux_2_28_x86_64.whl"
    text = HOSTILE.replace("%s", sha(good)) + "\x00\udcff" * 3 + "<a href='" + "x" * 100_000
    files = parse_simple_html(text, "https://x.test/whl/torch/")
    assert all(f.url.startswith("https://x.test/") for f in files)
    assert not any("cu999" in f.filename for f in files)  # anchors inside <script> are not links
    wheels = parse_wheels(files, "torch")
    assert [w.file.filename for w in wheels] == [
        "torch-2.15.0+cpu-cp312-cp312-manylinux_2_28_aarch64.whl", good]
    assert wheels[0].file.sha256 is None  # a malformed hash is dropped, not trusted
    assert wheels[1].file.sha256 == sha(good)


def test_hostile_json_entries_are_skipped():
    text = ('{"meta": {"api-version": "1.0"}, "name": "torch", "files": ['
            '"string", {"filename": 3}, {"url": "javascript:x"},'
            '{"filename": "torch-2.16.0+cu134-cp312-cp312-win_amd64.whl", '
            '"url": "/whl/cu134/torch-2.16.0%2Bcu134-cp312-cp312-win_amd64.whl", "hashes": {"sha256": 5}}]}')
    files = parse_simple_json(text, "http://127.0.0.1:1/whl/torch/")
    assert [f.filename for f in files] == ["torch-2.16.0+cu134-cp312-cp312-win_amd64.whl"]
    assert files[0].sha256 is None
    for bad in ("[]", "{}", '{"files": {}}', "not json"):
        with pytest.raises(IndexUnavailable, match="torch/"):
            parse_simple_json(bad, "http://127.0.0.1:1/whl/torch/")


# ------------------------------------------------------------------------------------------------ transport

def test_fetch_html_and_json_forms(httpserver):
    base = serve_index(httpserver, ROWS, form="json")
    page = Fetcher(**FAST).get(project_url(base, "torch", "cu134"))
    assert page.status == 200 and page.content_type.startswith(JSON_TYPE)
    files = parse_page(page.body, page.content_type, page.url)
    assert {f.filename for f in files} == {r[1] for r in ROWS if r[0] == "cu134"}
    request, _ = httpserver.log[0]
    assert request.headers["Accept"].startswith(JSON_TYPE)  # PEP 691 negotiation


def test_server_error_is_retried_then_succeeds(httpserver):
    url = httpserver.url_for("/whl/torch/")
    httpserver.expect_ordered_request("/whl/torch/").respond_with_data("busy", status=503)
    httpserver.expect_ordered_request("/whl/torch/").respond_with_data(html_page("torch", ROWS[:3]))
    page = Fetcher(retries=2, backoff=0.0).get(url)
    assert len(parse_page(page.body, page.content_type, url)) == 3
    assert len(httpserver.log) == 2


def test_persistent_500_gives_up_after_bounded_retries(httpserver):
    httpserver.expect_request("/whl/torch/").respond_with_data("oops", status=500)
    with pytest.raises(IndexUnavailable) as err:
        Fetcher(retries=2, backoff=0.0).get(httpserver.url_for("/whl/torch/"))
    assert "HTTP 500" in str(err.value) and "3 attempts" in str(err.value)
    assert len(httpserver.log) == 3
    assert err.value.exit_code == EXIT_ENVIRONMENT


def test_not_found_is_not_retried(httpserver):
    httpserver.expect_request("/whl/torch/").respond_with_data("no", status=404)
    with pytest.raises(IndexUnavailable, match="HTTP 404"):
        Fetcher(retries=3, backoff=0.0).get(httpserver.url_for("/whl/torch/"))
    assert len(httpserver.log) == 1


def test_redirect_to_plain_http_is_refused(httpserver):
    httpserver.expect_request("/whl/torch/").respond_with_response(
        Response(status=302, headers={"Location": "http://mirror.example.com/whl/torch/"}))
    with pytest.raises(IndexUnavailable, match="refused a redirect to http://mirror.example.com"):
        Fetcher(**FAST).get(httpserver.url_for("/whl/torch/"))


def test_redirect_on_loopback_is_followed(httpserver):
    httpserver.expect_request("/whl/torch").respond_with_response(
        Response(status=301, headers={"Location": "/whl/torch/"}))
    httpserver.expect_request("/whl/torch/").respond_with_data(html_page("torch", ROWS[:1]))
    page = Fetcher(**FAST).get(httpserver.url_for("/whl/torch"))
    assert page.url.endswith("/whl/torch/") and b"Links for torch" in page.body


def test_declared_huge_body_is_refused(httpserver):
    httpserver.expect_request("/whl/torch/").respond_with_data("x" * 5000)
    with pytest.raises(IndexUnavailable, match="5000 bytes, over the 4096-byte limit"):
        Fetcher(max_bytes=4096, **FAST).get(httpserver.url_for("/whl/torch/"))


def test_streamed_huge_body_is_cut_off(httpserver):
    def endless():
        for _ in range(64):
            yield b"<a>" * 10_000

    httpserver.expect_request("/whl/torch/").respond_with_response(Response(endless(), content_type="text/html"))
    with pytest.raises(IndexUnavailable, match="over the 100000-byte limit"):
        Fetcher(max_bytes=100_000, **FAST).get(httpserver.url_for("/whl/torch/"))


@pytest.fixture
def raw_server(request):
    server = RawServer(request.param)
    yield server
    server.close()


@pytest.mark.slow
@pytest.mark.parametrize("raw_server", [None], indirect=True)
def test_silent_server_times_out(raw_server):
    fetcher = Fetcher(retries=1, backoff=0.0, connect_timeout=0.5, read_timeout=0.3)
    with pytest.raises(IndexUnavailable, match=r"timed out after 0.3 s \(2 attempts\)"):
        fetcher.get(f"http://127.0.0.1:{raw_server.port}/whl/torch/")
    assert raw_server.accepted == 2


@pytest.mark.parametrize("raw_server", [TRUNCATED], indirect=True)
def test_truncated_body_is_an_error_not_a_short_listing(raw_server):
    with pytest.raises(IndexUnavailable, match=r"truncated response.*\(2 attempts\)"):
        Fetcher(retries=1, backoff=0.0).get(f"http://127.0.0.1:{raw_server.port}/whl/torch/")


def test_unreachable_host_is_one_line():
    with pytest.raises(IndexUnavailable) as err:
        Fetcher(retries=1, backoff=0.0).get(f"http://127.0.0.1:{closed_port()}/whl/torch/")
    assert "cannot connect" in str(err.value) and "\n" not in str(err.value)


# ------------------------------------------------------------------------------------------------ client + cache

def test_client_reads_all_variants_and_one_variant(httpserver, tmp_path):
    from torch_install.index.cache import IndexCache

    base = serve_index(httpserver, ROWS)
    client = IndexClient(base, IndexCache(tmp_path), Fetcher(**FAST))
    all_files = client.listing("torch").files()
    assert len(all_files) == len(ROWS)
    assert {f.filename for f in client.listing("torch", "rocm7.14").files()} == {
        "torch-2.16.0+rocm7.14-cp312-cp312-manylinux_2_28_x86_64.whl"}


def test_fresh_cache_makes_no_request(httpserver, tmp_path):
    from torch_install.index.cache import IndexCache

    base = serve_index(httpserver, ROWS)
    IndexClient(base, IndexCache(tmp_path), Fetcher(**FAST)).listing("torch")
    assert len(httpserver.log) == 1
    again = IndexClient(base, IndexCache(tmp_path), Fetcher(**FAST)).listing("torch")
    assert len(again.files()) == len(ROWS) and len(httpserver.log) == 1
    assert len(httpserver.log) == 1


def test_expired_cache_revalidates_with_etag_and_last_modified(httpserver, tmp_path):
    from torch_install.index.cache import IndexCache

    body = html_page("torch", ROWS[:4])
    lm = "Wed, 02 Dec 2026 10:00:00 GMT"
    httpserver.expect_ordered_request("/whl/torch/").respond_with_data(
        body, headers={"ETag": '"v1"', "Last-Modified": lm})
    httpserver.expect_ordered_request("/whl/torch/", headers={"If-None-Match": '"v1"', "If-Modified-Since": lm}
                                      ).respond_with_data("", status=304)
    base = httpserver.url_for("/whl")
    cache = IndexCache(tmp_path, ttl=0)  # always expired
    first = IndexClient(base, cache, Fetcher(**FAST)).listing("torch")
    second = IndexClient(base, cache, Fetcher(**FAST)).listing("torch")
    httpserver.check_assertions()
    assert not second.stale
    assert second.files() == first.files() and len(second.files()) == 4
    assert second.fetched_at >= first.fetched_at


def test_network_failure_falls_back_to_the_stale_cache(httpserver, tmp_path):
    from torch_install.index.cache import IndexCache

    httpserver.expect_ordered_request("/whl/torch/").respond_with_data(html_page("torch", ROWS[:4]))
    httpserver.expect_ordered_request("/whl/torch/").respond_with_data("down", status=502)
    base = httpserver.url_for("/whl")
    cache = IndexCache(tmp_path, ttl=0)
    IndexClient(base, cache, Fetcher(**FAST)).listing("torch")
    listing = IndexClient(base, cache, Fetcher(**FAST)).listing("torch")
    assert listing.stale and "HTTP 502" in listing.error
    assert len(listing.files()) == 4


def test_offline_never_touches_the_network(httpserver, tmp_path):
    from torch_install.index.cache import IndexCache

    base = serve_index(httpserver, ROWS)
    with pytest.raises(IndexUnavailable, match="not in the cache, and --offline"):
        IndexClient(base, IndexCache(tmp_path), offline=True).listing("torch")
    assert httpserver.log == []
    IndexClient(base, IndexCache(tmp_path), Fetcher(**FAST)).listing("torch")
    stale = IndexCache(tmp_path, ttl=0)
    listing = IndexClient(base, stale, offline=True).listing("torch")
    assert len(listing.files()) == len(ROWS)
    assert len(httpserver.log) == 1


def test_corrupt_cache_entry_counts_as_absent(httpserver, tmp_path):
    from torch_install.index.cache import IndexCache

    base = serve_index(httpserver, ROWS)
    IndexClient(base, IndexCache(tmp_path), Fetcher(**FAST)).listing("torch")
    for meta in tmp_path.glob("*.meta.json"):
        meta.write_text("{not json")
    listing = IndexClient(base, IndexCache(tmp_path), Fetcher(**FAST)).listing("torch")
    assert len(listing.files()) == len(ROWS)
    assert len(httpserver.log) == 2


def test_unwritable_cache_directory_is_skipped(httpserver, tmp_path):
    from torch_install.index.cache import IndexCache

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    base = serve_index(httpserver, ROWS)
    listing = IndexClient(base, IndexCache(blocker / "cache"), Fetcher(**FAST)).listing("torch")
    assert len(listing.files()) == len(ROWS)


def test_cache_dir_from_environment(monkeypatch, tmp_path):
    from torch_install.index.cache import IndexCache

    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TTL", "120")
    cache = IndexCache()
    assert cache.directory == tmp_path / "c" and cache.ttl == 120.0
