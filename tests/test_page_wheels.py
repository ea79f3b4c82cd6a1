"""How online mode reads a page's wheels (``pages.PageWheels``): a page of the common shape by one pattern, a file's
record made only when asked for, and every page to the same answer as the general reading (``parse_wheels`` of
``parse_page``'s files), whatever its anchors, entries, names and layout."""

from __future__ import annotations

import hashlib
import html
import json
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from index_pages import JSON_TYPE, html_page, json_page, load_rows
from torch_install.index import pages
from torch_install.index.pages import IndexFile, IndexUnavailable, PageWheels, parse_page, parse_wheels

CAPTURED = Path(__file__).resolve().parents[1] / "scripts" / "reference" / "default-index"
PAGE_URL = "https://mirror.example/simple/torch/"
PLATFORMS = frozenset({"manylinux_2_28_x86_64", "linux_x86_64", "manylinux2014_x86_64"})


def general(body: bytes, content_type: str, platforms: frozenset[str] | None, project: str = "torch") -> list:
    return [((w.version, w.label), w.tags, w.file)
            for w in parse_wheels(parse_page(body, content_type, PAGE_URL, platforms), project, platforms)]


def read(body: bytes, content_type: str, platforms: frozenset[str] | None, project: str = "torch"
         ) -> tuple[list, int]:
    """The rows with their records made, and how many were read by the common pattern."""
    page = PageWheels(body, content_type, PAGE_URL, project, platforms)
    return ([(release, tags, page.file(ref)) for release, tags, ref in page.rows],
            sum(isinstance(ref, int) for _, _, ref in page.rows))


def outcome(reading, *args):  # noqa: ANN001, ANN002, ANN201 - the rows, or the error's message
    try:
        return reading(*args)
    except IndexUnavailable as exc:
        return str(exc)


def assert_same(body: bytes, content_type: str) -> None:
    for platforms in (PLATFORMS, None):
        fast = outcome(read, body, content_type, platforms)
        assert outcome(general, body, content_type, platforms) == (fast if isinstance(fast, str) else fast[0])


# ---- real pages and the PyTorch index's shape -------------------------------------------------------------------

@pytest.mark.parametrize("form", ["html", "json"])
@pytest.mark.parametrize("platforms", [PLATFORMS, None])
def test_the_default_index_torch_page_is_read_by_the_pattern_to_the_general_answer(form: str, platforms) -> None:  # noqa: ANN001
    body = (CAPTURED / f"torch.{form}").read_bytes()
    content_type = JSON_TYPE if form == "json" else "text/html"
    rows, by_pattern = read(body, content_type, platforms)
    assert rows == general(body, content_type, platforms) and len(rows) > 80
    assert by_pattern > 0.9 * len(rows)  # the few others: build tags, another layout of entry


@pytest.mark.parametrize("prefix", ["/whl", "https://download.pytorch.org/whl", "../..", "whl"])
@pytest.mark.parametrize("form", ["html", "json"])
def test_pages_in_the_pytorch_index_shape_are_read_by_the_pattern(prefix: str, form: str) -> None:
    rows_ = load_rows()
    body = (json_page if form == "json" else html_page)("torch", rows_, prefix=prefix).encode()
    content_type = JSON_TYPE if form == "json" else "text/html"
    for platforms in (PLATFORMS, None):
        rows, by_pattern = read(body, content_type, platforms)
        assert rows == general(body, content_type, platforms) and rows
        assert by_pattern == len(rows)


def test_a_record_is_made_only_for_the_files_a_plan_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Learning what a 10,000-file page offers a target makes a file record for one wheel of each release (its URL
    and requires-python), not for each file."""
    from torch_install.index.facts import facts_from_pages
    from torch_install.machine import Machine
    from torch_install.wheel_tags import target_tags

    rows_ = [(v, f"torch-2.{minor}.{patch}+{v}-{py}-{platform}.whl", ">=3.9")
             for minor in range(10) for patch in range(4) for v in ("cpu", "cu126", "cu128", "rocm6.4", "xpu")
             for py in ("cp310-cp310", "cp311-cp311", "cp312-cp312", "cp313-cp313", "cp313-cp313t")
             for platform in ("manylinux_2_28_x86_64", "manylinux_2_28_aarch64", "win_amd64")][:10_000]
    machine = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35")
    target = target_tags(machine)
    made: list[str] = []
    real = pages._Links.file
    monkeypatch.setattr(pages._Links, "file", lambda self, href, *a: made.append(href) or real(self, href, *a))
    for form, page in (("html", html_page("torch", rows_)), ("json", json_page("torch", rows_))):
        made.clear()
        wheels = PageWheels(page.encode(), JSON_TYPE if form == "json" else "text/html", PAGE_URL, "torch",
                            target.platforms)
        facts = facts_from_pages([wheels], target, "linux_x86_64", PAGE_URL, 0.0)
        assert len(facts.releases) == 40 and all(r.requires_python == ">=3.9" and r.wheel_url for r in facts.releases)
        records = [href for href in made if not href.endswith("/torch-0-py3-none-any.whl")]  # not a directory's check
        assert len(records) == len(facts.releases), form  # one a release


def test_a_page_over_the_entry_limit_is_refused_as_the_general_reading_refuses_it(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(pages, "MAX_PAGE_ENTRIES", 50)
    rows_ = [("cpu", f"torch-2.9.{i}+cpu-cp312-cp312-win_amd64.whl", None) for i in range(51)]
    for body, content_type in ((html_page("torch", rows_).encode(), "text/html"),
                               (json_page("torch", rows_).encode(), JSON_TYPE)):
        with pytest.raises(IndexUnavailable, match="more than 50"):
            PageWheels(body, content_type, PAGE_URL, "torch", PLATFORMS)
        assert_same(body, content_type)


# ---- any page: generated ------------------------------------------------------------------------------------------

SHA = hashlib.sha256(b"x").hexdigest()


def mostly(usual: list, other: list) -> st.SearchStrategy:
    """One of ``usual`` about nine times in ten, else one of ``other``: pages mostly of the common shape, with the
    odd anchor or entry that the reading must take as the general path does."""
    return st.sampled_from(usual * (9 * len(other) // len(usual) + 1) + other)


RELEASES = mostly(["2.9.1", "2.9.1+cu128", "2.9.1%2Bcu128", "2.10.0.dev20250101%2Bcpu", "2.9.0rc1+rocm6.4",
                   "2.9.1.post1"],
                  ["02.9", "2.9.1+CU128", "2.9.1%2bcpu", "1%2Fx", "2.9.1-1", "2..1", "2.9.1+", "1<b>", '1"x', "1 2"])
TAGS = mostly(["cp312-cp312-manylinux_2_28_x86_64", "cp312-cp312-win_amd64", "cp312-cp312-linux_x86_64",
               "cp39.cp310-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64", "py3-none-any"],
              ["CP312-cp312-linux_x86_64", "cp312-cp312-linux%5Fx86_64", "cp312-cp312-", "cp312-linux_x86_64",
               "cp312-cp312-linux_x86_64<script>"])
NAMES = st.builds("{}-{}-{}{}".format, mostly(["torch"], ["torchvision", "Torch", "torch_x"]), RELEASES, TAGS,
                  mostly([".whl"], [".WHL", ".whl?x=1", ".tar.gz", ".whl.asc"]))
PREFIXES = mostly(["/whl/cu128/", "https://h.example/a/", "../../f/", "x/"],
                  ["", "/a?b/", "/a#b/", "//h.example/x/", "javascript:x/", "/a&amp;b/", "/a<b/", "/torch-x/", "/a b/",
                   "/./a/", "http://[::1/", " /w/"])
FRAGMENTS = mostly(["", f"#sha256={SHA}"], [f"#sha256={SHA.upper()}", "#md5=x", "#", "#<a"])
ATTRIBUTES = mostly(["", ' data-requires-python="&gt;=3.9"', ' data-requires-python="&gt;=3.10" data-core-metadata='
                     '"sha256=00"'],
                    [' data-yanked=""', " data-yanked", ' title="x"', ' data-x="a<b"', " data-requires-python='>=3.9'",
                     ' href="/y/torch-1.0-cp312-cp312-linux_x86_64.whl"', ' data-x="<!--"'])
BETWEEN = mostly(["<br/>\n", "\n"], ["", "<!-- c -->", "<!--", "-->", "<script>", "</script>", "<style>x</style>",
                                     "<abbr title='x.whl'>", "<a>", "<A href=/z/torch-1-cp312-cp312-linux_x86_64.whl>",
                                     "<p>"])
OPENINGS = mostly(['<a href="{}"'], ["<a href='{}'", "<A HREF={}", '<a  href="{}"', '<a\thref="{}"', '<a href="{}'])


@st.composite
def anchors(draw: st.DrawFn) -> str:
    name = draw(NAMES)
    href = draw(PREFIXES) + name + draw(FRAGMENTS)
    return draw(OPENINGS).format(href) + draw(ATTRIBUTES) + ">" + html.escape(name) + "</a>" + draw(BETWEEN)


def check_generated_html(parts: list[str]) -> None:
    assert_same(("<!DOCTYPE html><html><body>\n" + "".join(parts) + "</body></html>").encode(), "text/html")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(anchors(), max_size=6))
def test_a_generated_html_page_reads_as_the_general_reading_reads_it(parts: list[str]) -> None:
    check_generated_html(parts)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(anchors(), max_size=8))
def test_many_generated_html_pages_read_as_the_general_reading_reads_them(parts: list[str]) -> None:
    check_generated_html(parts)


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**9), st.sampled_from(["", "x", ">=3.9", "a\nb", "\\"]))


@st.composite
def entries(draw: st.DrawFn) -> dict:
    name = draw(NAMES)
    url_name = draw(mostly([name.replace("+", "%2B"), name],
                           [quote(name), "other-1.0-py3-none-any.whl", name + "#sha256=" + SHA,
                            name.replace("cp312", "cp311"), name + "/"]))
    entry = {"filename": name, "url": draw(PREFIXES) + url_name,
             "hashes": draw(mostly([{"sha256": SHA}], [{}, {"sha256": "x"}, {"md5": "y"}, {"sha256": None}])),
             "requires-python": draw(mostly([">=3.9", None], ["", " >=3.10 ", "\t", 3])),
             "size": draw(st.integers(0, 10**9)), "yanked": draw(mostly([False], [True, "bad", None, 0]))}
    if draw(st.integers(0, 4)) == 0:  # another layout of entry
        for key in draw(st.lists(st.sampled_from(["hashes", "size", "yanked", "requires-python", "filename", "url"]),
                                 max_size=2)):
            entry.pop(key, None)
        if draw(st.booleans()):
            entry[draw(st.sampled_from(["core-metadata", "provenance", "extra", "filename"]))] = draw(VALUES)
        if draw(st.booleans()):  # another order: the URL first
            entry = dict(reversed(list(entry.items())))
    return entry


def check_generated_json(files: list, layout: int) -> None:
    dumps = [lambda v: json.dumps(v), lambda v: json.dumps(v, separators=(",", ":")),
             lambda v: json.dumps(v, indent=0), lambda v: json.dumps(v, indent=1),
             lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)][layout]
    page = {"meta": {"api-version": "1.1"}, "name": "torch", "files": files, "versions": ["2.9.1"]}
    assert_same(dumps(page).encode(), JSON_TYPE)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entries(), max_size=6), st.integers(0, 4))
def test_a_generated_json_page_reads_as_the_general_reading_reads_it(files: list, layout: int) -> None:
    check_generated_json(files, layout)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entries(), max_size=8), st.integers(0, 4))
def test_many_generated_json_pages_read_as_the_general_reading_reads_them(files: list, layout: int) -> None:
    check_generated_json(files, layout)


@pytest.mark.parametrize("text", [
    '{"files": [', '{"files": [{"filename": "torch-1-cp312-cp312-win_amd64.whl", "url": "/a/torch-1-cp312-cp312-'
    'win_amd64.whl"}', '{"files": [{"filename": "torch-1-cp312-cp312-win_amd64.whl", "url": "/a/torch-1-cp312-cp312-'
    'win_amd64.whl"},]}', '{"files": [{"filename": "torch-1-cp312-cp312-win_amd64.whl", "url": "/a/torch-1-cp312-cp312-'
    'win_amd64.whl"}] x', '{"files": [{"filename": "torch-1-cp312-cp312-win_amd64.whl", "url": "/a/torch-1-cp312-'
    'cp312-win_amd64.whl"}, {"filename": "torch-1-cp312-cp312-win_amd64.whl", "url": "/a/torch-1-cp312-cp312-'
    'win_amd64.whl"}', "{}", "[]",
])
def test_a_broken_page_is_refused_as_the_general_reading_refuses_it(text: str) -> None:
    assert_same(text.encode(), JSON_TYPE)
    with pytest.raises(IndexUnavailable):
        PageWheels(text.encode(), JSON_TYPE, PAGE_URL, "torch", PLATFORMS)


def test_a_row_is_a_file_of_the_page() -> None:
    body = html_page("torch", load_rows()).encode()
    page = PageWheels(body, "text/html", PAGE_URL, "torch", None)
    assert all(isinstance(page.file(ref), IndexFile) for _, _, ref in page.rows)
