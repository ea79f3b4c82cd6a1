"""The index cache on disk: private directory, and corrupt or truncated entries found, named once and fetched again."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from index_pages import load_rows, serve_index
from torch_install.index.cache import IndexCache, default_cache_dir
from torch_install.index.client import Fetcher, IndexClient
from torch_install.index.pages import IndexUnavailable

FAST = {"retries": 0, "backoff": 0.0, "connect_timeout": 2.0, "read_timeout": 2.0}
ROWS = load_rows()
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")


def entry_files(cache_dir: Path) -> tuple[Path, Path]:
    (meta,) = cache_dir.glob("*.meta.json")
    return meta, meta.with_name(meta.name.replace(".meta.json", ".page"))


def warm_cache(httpserver, cache_dir: Path) -> tuple[str, Path, Path]:  # noqa: ANN001
    base = serve_index(httpserver, ROWS)
    assert len(IndexClient(base, IndexCache(cache_dir), Fetcher(**FAST)).listing("torch").files()) == len(ROWS)
    return (base, *entry_files(cache_dir))


def listing_again(base: str, cache_dir: Path, offline: bool = False):  # noqa: ANN201
    return IndexClient(base, IndexCache(cache_dir), Fetcher(**FAST), offline=offline).listing("torch")


@posix_only
def test_the_cache_directory_and_the_parents_it_creates_are_private(httpserver, tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home").chmod(0o755)  # a user cache directory that already exists
    old_umask = os.umask(0o022)
    try:
        warm_cache(httpserver, tmp_path / "home" / ".cache" / "torch-install" / "index")
    finally:
        os.umask(old_umask)
    for directory in ("home/.cache", "home/.cache/torch-install", "home/.cache/torch-install/index"):
        assert stat.S_IMODE((tmp_path / directory).stat().st_mode) == 0o700, directory
    meta, files = entry_files(tmp_path / "home/.cache/torch-install/index")
    assert stat.S_IMODE(meta.stat().st_mode) == 0o600 and stat.S_IMODE(files.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o755  # what existed is left alone


@pytest.mark.parametrize("damage", ["truncated", "same size, other bytes", "meta not JSON", "files deleted"])
def test_a_corrupt_entry_is_named_once_and_fetched_again(httpserver, tmp_path: Path, capsys, damage: str) -> None:
    base, meta, files = warm_cache(httpserver, tmp_path)
    data = files.read_bytes()
    if damage == "truncated":
        files.write_bytes(data[: len(data) // 2])
    elif damage == "same size, other bytes":
        files.write_bytes(data.replace(b"cp312", b"cp311", 1))
    elif damage == "meta not JSON":
        meta.write_bytes(meta.read_bytes()[:20])
    else:
        files.unlink()
    capsys.readouterr()
    listing = listing_again(base, tmp_path)
    assert len(listing.files()) == len(ROWS)  # fetched again, complete
    assert len(httpserver.log) == 2
    warning = capsys.readouterr().err.splitlines()
    assert len(warning) == 1 and warning[0].startswith(f"torch-install: warning: index cache entry {meta} is corrupt")
    assert warning[0].endswith("ignored, fetched again")
    again = listing_again(base, tmp_path)  # the rewritten entry is whole again
    assert len(again.files()) == len(ROWS) and len(httpserver.log) == 2  # from the cache
    assert capsys.readouterr().err == ""


def test_a_corrupt_entry_offline_is_absent_not_an_empty_listing(httpserver, tmp_path: Path, capsys) -> None:
    base, _, files = warm_cache(httpserver, tmp_path)
    files.write_bytes(files.read_bytes()[:-40])
    with pytest.raises(IndexUnavailable, match="not in the cache"):
        listing_again(base, tmp_path, offline=True)
    assert "is corrupt" in capsys.readouterr().err


def test_an_entry_of_an_older_format_is_replaced_without_a_warning(httpserver, tmp_path: Path, capsys) -> None:
    base, meta, _ = warm_cache(httpserver, tmp_path)
    old = json.loads(meta.read_text())
    old["format"] = 1
    del old["page_bytes"], old["page_crc"]
    meta.write_text(json.dumps(old))
    capsys.readouterr()
    listing_again(base, tmp_path)
    assert len(httpserver.log) == 2
    assert capsys.readouterr().err == ""


def test_a_corrupt_derived_result_is_named_and_computed_again(tmp_path: Path, capsys) -> None:
    cache = IndexCache(tmp_path)
    cache.put_derived("facts|x", {"torch": ["2.9.1"]})
    assert cache.get_derived("facts|x") == {"torch": ["2.9.1"]}
    (path,) = (tmp_path / "derived").glob("*.json")
    path.write_text('{"key": "facts|x", "val')
    assert cache.get_derived("facts|x") == {"torch": ["2.9.1"]}  # what this run read stands for the run
    assert IndexCache(tmp_path).get_derived("facts|x") is None  # the next run reads the file
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f"index cache entry {path} is corrupt" in err[0] and not path.exists()


@pytest.mark.parametrize(("platform", "environ", "expected"), [
    ("linux", {"HOME": "/home/u"}, "/home/u/.cache/torch-install/index"),
    ("linux", {"HOME": "/home/u", "XDG_CACHE_HOME": "/var/cache/u"}, "/var/cache/u/torch-install/index"),
    ("linux", {"HOME": "/home/u", "XDG_CACHE_HOME": "relative/cache"}, "/home/u/.cache/torch-install/index"),
    ("darwin", {"HOME": "/Users/u"}, "/Users/u/Library/Caches/torch-install/index"),
    ("linux", {"HOME": "/home/u", "TORCH_INSTALL_CACHE_DIR": "/tmp/ti"}, "/tmp/ti"),
])
def test_default_cache_dir_follows_the_platform_convention(platform, environ, expected):
    assert default_cache_dir(environ, platform) == expected


@posix_only
def test_a_relative_home_is_not_a_home_and_never_the_working_directory():
    import pwd

    account_home = pwd.getpwuid(os.getuid()).pw_dir
    for value in ("rel", "", "./x"):
        assert default_cache_dir({"HOME": value}, "linux") == os.path.join(account_home, ".cache", "torch-install",
                                                                           "index")


def test_default_cache_dir_on_windows_uses_local_app_data():
    path = default_cache_dir({"LOCALAPPDATA": "C:/Users/u/AppData/Local", "HOME": "C:/Users/u"}, "win32")
    assert path.replace("\\", "/") == "C:/Users/u/AppData/Local/torch-install/Cache/index"


# ---- every kind of unusable cache file, through `plan --online`, and revalidation -----------------------------

def _plan(base: str, profile: Path) -> tuple[int, dict, str]:  # noqa: D103
    import contextlib
    import io

    from torch_install.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["plan", "--online", "--index-base", base, "--target", str(profile), "--format", "json"])
    return code, json.loads(out.getvalue()), err.getvalue()


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    """(the cache directory, a Linux x86_64 target profile)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(cache))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    return cache, profile


def _wrong_content(path: Path) -> None:
    """The file's own JSON with the values that matter of the wrong type (its format, URL and key kept); a page
    replaced by another of the same size."""
    if path.suffix == ".page":
        size = path.stat().st_size
        path.write_bytes((b"<html>" + b" " * size)[:size])
        return
    data = json.loads(path.read_text())
    if "value" in data:  # a derived result
        data = {**data, "value": {**data["value"], "facts": {**data["value"]["facts"], "releases": [[5] * 8]}}}
    else:  # a meta file
        data = {**data, "fetched_at": "x", "page_bytes": [1]}
    path.write_text(json.dumps(data))


DAMAGE = {
    "not UTF-8": lambda p: p.write_bytes(b"\xff\xfe"),
    "nested past the recursion limit": lambda p: p.write_text("[" * 100_000),
    "wrong content": _wrong_content,
    "a FIFO": lambda p: (p.unlink(), os.mkfifo(p)),
    "a link to /dev/zero": lambda p: (p.unlink(), p.symlink_to("/dev/zero")),
    "a link to another file": lambda p: (p.unlink(), p.symlink_to(p.with_name("elsewhere.json"))),
}


@posix_only
@pytest.mark.parametrize("which", ["meta", "page", "derived"])
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_an_unusable_cache_file_is_named_once_removed_and_refetched(httpserver, online, which: str,
                                                                    damage: str) -> None:
    cache, profile = online
    base = serve_index(httpserver, ROWS)
    code, first, err = _plan(base, profile)
    assert code == 0 and err == ""
    meta, files = entry_files(cache)
    target = {"meta": meta, "page": files, "derived": next((cache / "derived").glob("*.json"))}[which]
    (target.parent / "elsewhere.json").write_text('{"kept": true}')  # what a link may point to: never removed
    DAMAGE[damage](target)
    if which == "page" and damage == "wrong content":  # same size: found when the page is read, which what was
        for derived in (cache / "derived").glob("*.json"):  # learnt from it spares; so make the plan read it
            derived.unlink()
    os.utime(meta, (0, 0))  # no effect on the TTL (fetched_at is inside); the entry is read all the same
    code, again, err = _plan(base, profile)
    assert code == 0 and again["choice"] == first["choice"], err
    lines = err.splitlines()
    assert len(lines) == 1 and "is corrupt" in lines[0] and ("computed again" in lines[0] or "fetched again"
                                                             in lines[0]), err
    assert not target.is_symlink() and not stat.S_ISFIFO(os.lstat(target).st_mode) if target.exists() else True
    assert json.loads((target.parent / "elsewhere.json").read_text()) == {"kept": True}
    code, third, err = _plan(base, profile)  # whole again: nothing more to say
    assert code == 0 and third["choice"] == first["choice"] and err == ""


def test_a_revalidated_page_reuses_what_was_learnt_and_leaves_no_file_behind(httpserver, online, monkeypatch
                                                                             ) -> None:
    from werkzeug.wrappers import Response

    from index_pages import html_page
    from torch_install.index import learn

    cache, profile = online
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TTL", "0")  # every run asks the server again
    page = html_page("torch", ROWS)
    answers: list[int] = []

    def handler(request):  # noqa: ANN001, ANN202
        status = 304 if request.headers.get("If-None-Match") == '"v1"' else 200
        answers.append(status)
        return Response("" if status == 304 else page, status=status, headers={"ETag": '"v1"'},
                        content_type="text/html")

    httpserver.expect_request("/whl/torch/").respond_with_handler(handler)
    computed: list[int] = []
    real = learn.facts_from_pages
    monkeypatch.setattr(learn, "facts_from_pages", lambda *a, **k: computed.append(1) or real(*a, **k))
    base = httpserver.url_for("/whl")
    code, first, _ = _plan(base, profile)
    files_after_first = sorted(p.relative_to(cache) for p in cache.rglob("*") if p.is_file())
    for _ in range(3):
        code, again, err = _plan(base, profile)
        assert code == 0 and again["choice"] == first["choice"] and err == ""
    assert answers == [200, 304, 304, 304]
    assert computed == [1]  # learnt once; each 304 reused it
    assert sorted(p.relative_to(cache) for p in cache.rglob("*") if p.is_file()) == files_after_first


def test_a_304_for_an_entry_removed_meanwhile_fetches_the_page_again(httpserver, online, monkeypatch) -> None:
    """Another torch-install (or the user) clears the entry while the conditional request is on its way."""
    from werkzeug.wrappers import Response

    from index_pages import html_page

    cache, profile = online
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TTL", "0")
    page = html_page("torch", ROWS)
    answers: list[int] = []

    def handler(request):  # noqa: ANN001, ANN202
        if request.headers.get("If-None-Match"):
            for meta in cache.glob("*.meta.json"):
                meta.unlink()
            answers.append(304)
            return Response("", status=304, headers={"ETag": '"a"'})
        answers.append(200)
        return Response(page, headers={"ETag": '"a"'}, content_type="text/html")

    httpserver.expect_request("/whl/torch/").respond_with_handler(handler)
    base = httpserver.url_for("/whl")
    code, first, _ = _plan(base, profile)
    code, again, err = _plan(base, profile)
    assert code == 0 and again["choice"] == first["choice"] and err == ""
    assert answers == [200, 304, 200]
    assert len(list(cache.glob("*.meta.json"))) == 1  # stored again


@posix_only
@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e12", "-5", "1e400"])
def test_a_fetched_at_that_is_no_time_is_a_corrupt_entry_even_with_the_index_down(httpserver, online,
                                                                                  value: str) -> None:
    cache, profile = online
    base = serve_index(httpserver, ROWS)
    _plan(base, profile)
    meta, _ = entry_files(cache)
    meta.write_text(re.sub(r'"fetched_at":[^,}]+', f'"fetched_at":{value}', meta.read_text()))
    httpserver.clear()
    httpserver.expect_request("/whl/torch/").respond_with_data("down", status=500)
    code, plan, err = _plan(base, profile)
    assert code == 0 and plan["choice"]["torch"], err
    assert "is corrupt (fetched_at" in err and "is not a time" in err and "internal error" not in err


def test_a_revalidated_page_is_not_read(httpserver, online, monkeypatch) -> None:
    from werkzeug.wrappers import Response

    from index_pages import html_page
    from torch_install.index import pages

    cache, profile = online
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TTL", "0")
    page = html_page("torch", ROWS)
    httpserver.expect_request("/whl/torch/").respond_with_handler(
        lambda request: Response("" if request.headers.get("If-None-Match") else page,
                                 status=304 if request.headers.get("If-None-Match") else 200,
                                 headers={"ETag": '"v1"'}, content_type="text/html"))
    base = httpserver.url_for("/whl")
    _plan(base, profile)
    reads: list[str] = []
    real = pages.parse_page
    monkeypatch.setattr(pages, "parse_page", lambda *a, **k: reads.append(a[2]) or real(*a, **k))
    code, _, err = _plan(base, profile)
    assert code == 0 and err == "" and reads == []


def test_a_cache_directory_under_a_regular_file_is_named_once_not_called_corrupt(httpserver, online, monkeypatch,
                                                                                 tmp_path: Path) -> None:
    _, profile = online
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(blocker / "cache" / "index"))
    base = serve_index(httpserver, ROWS)
    for _ in range(2):
        code, plan, err = _plan(base, profile)
        assert code == 0 and plan["choice"]["torch"]
        assert err.splitlines() == [f"torch-install: warning: index cache {blocker}/cache/index cannot be made: "
                                    f"{blocker} is a file, not a directory; pages are not cached (set "
                                    "TORCH_INSTALL_CACHE_DIR to another place)"]
    assert blocker.read_text() == "not a directory\n"
