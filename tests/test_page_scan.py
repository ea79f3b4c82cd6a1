"""The page scanner against the reference reading (html.parser, json.loads): the same wheel files from the
default index's real torch page in both forms, from pages in the PyTorch index's shape, from hostile markup and
from generated pages; and memory bounded by the wheel entries, not the page size."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from index_pages import JSON_TYPE, html_page, json_page, load_rows
from lanes import equivalence
from reference_pages import reference_html, reference_json
from torch_install.index import pages
from torch_install.index.pages import (
    MAX_PAGE_ENTRIES,
    IndexUnavailable,
    parse_page,
    parse_simple_html,
    parse_simple_json,
    parse_wheels,
)

CAPTURED = Path(__file__).resolve().parents[1] / "scripts" / "reference" / "default-index"
PAGE_URL = "https://mirror.example/simple/torch/"


def rows(files):  # noqa: ANN001, ANN201 - IndexFile list -> comparable tuples
    return [tuple(f) for f in files]


@pytest.mark.parametrize("form", ["html", "json"])
def test_the_default_index_torch_page_reads_as_the_reference_reads_it(form: str) -> None:
    body = (CAPTURED / f"torch.{form}").read_bytes()
    scan = (parse_simple_html if form == "html" else parse_simple_json)(body, PAGE_URL)
    reference = (reference_html if form == "html" else reference_json)(body, PAGE_URL)
    assert len(scan) > 900 and rows(scan) == reference
    assert all(f.url.startswith("https://mirror.example/files/packages/") for f in scan)


def test_both_forms_of_the_real_page_list_the_same_wheels() -> None:
    from_html = parse_simple_html((CAPTURED / "torch.html").read_bytes(), PAGE_URL)
    from_json = parse_simple_json((CAPTURED / "torch.json").read_bytes(), PAGE_URL)
    assert {(f.filename, f.url, f.sha256) for f in from_html} == {(f.filename, f.url, f.sha256) for f in from_json}


@pytest.mark.parametrize("page_url", ["https://download.pytorch.org/whl/torch/", "http://127.0.0.1:8/whl/cu128/torch/",
                                      "https://m.example/a/b/torch"])
def test_pytorch_index_shaped_pages_read_as_the_reference(page_url: str) -> None:
    rows_ = load_rows()
    for prefix in ("/whl", "../..", "https://cdn.example/whl", "whl"):
        page = html_page("torch", rows_, prefix=prefix).encode()
        assert rows(parse_simple_html(page, page_url)) == reference_html(page, page_url), prefix
        page = json_page("torch", rows_, prefix=prefix).encode()
        assert rows(parse_simple_json(page, page_url)) == reference_json(page, page_url), prefix


MARKUP = [
    '<a href="torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl" data-requires-python=">=3.10">x</a>',  # raw ">"
    "<a data-requires-python='&gt;=3.9' href='/p/torch-2.9.1-cp311-cp311-win_amd64.whl#sha256=" + "A" * 64 + "'>",
    "<A HREF=torch-2.9.1-cp310-cp310-win_amd64.whl DATA-YANKED>y</A>",
    '<a href="torch-2.9.1-cp313-cp313-win_amd64.whl" data-yanked="">z</a>',
    '<a\thref="torch-2.9.1-cp39-cp39-win_amd64.whl"\ndata-dist-info-metadata="sha256=00">',
    '<!-- <a href="torch-9.9.9-cp312-cp312-win_amd64.whl"> -->',
    '<script type="text/javascript">var a = \'<a href="torch-8.8.8-cp312-cp312-win_amd64.whl">\';</script>',
    '<style>a[href$=".whl"] { color: red }</style>',
    '<a href="torch-2.9.1-cp314-cp314-win_amd64.whl?download=1#sha256=' + "b" * 64 + '">q</a>',
    '<a href="../up/torch-2.9.1-cp312-cp312-macosx_14_0_arm64.whl">dots</a>',
    '<a href="//other.example/torch-2.9.1-cp312-none-macosx_11_0_arm64.whl">scheme-relative</a>',
    '<a href="torch-2.9.1%2Bcpu-cp312-cp312-linux_x86_64.whl" data-requires-python="&lt;4,&gt;=3.9">pct</a>',
    '<a href="javascript:torch.whl">js</a><a href="">empty</a><a>none</a><abbr title="x.whl">',
    '<a href="torch-2.9.1-cp312-cp312-win_arm64.whl" href="torch-1.0.0-cp312-cp312-win_arm64.whl">dup</a>',
    '<a href="torch-2.9.2-cp312-cp312-win_amd64.whl?<a href=torch-1.0.1-cp312-cp312-win_amd64.whl>">in a value</a>',
    "<a data-x='1' href='torch-2.9.3-cp312-cp312-win_amd64.whl?<a href=torch-1.0.2-cp312-cp312-win_amd64.whl>'>",
]


def test_markup_variations_read_as_the_reference() -> None:
    page = ("<!DOCTYPE html><html><body>\n" + "\n".join(MARKUP) + "\n</body></html>").encode()
    scan = rows(parse_simple_html(page, PAGE_URL))
    assert scan == reference_html(page, PAGE_URL)
    names = [r[0] for r in scan]
    assert "torch-9.9.9-cp312-cp312-win_amd64.whl" not in names and "torch-8.8.8-cp312-cp312-win_amd64.whl" not in names
    assert names.count("torch-1.0.0-cp312-cp312-win_arm64.whl") == 1  # the last of a repeated attribute
    assert not any(name.startswith("torch-1.0.") and name != "torch-1.0.0-cp312-cp312-win_arm64.whl" for name in names)
    assert next(r for r in scan if r[0].startswith("torch-2.9.1-cp312-cp312-manylinux"))[3] == ">=3.10"


NAMES = st.sampled_from(["torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl",
                         "torch-2.9.1+cu128-cp313-cp313-win_amd64.whl",
                         "torch-2.10.0-cp314-cp314t-macosx_14_0_arm64.whl", "torch-2.9.1.tar.gz", "x.WHL"])
VALUES = st.text(alphabet=st.sampled_from(list("abc <>=&;'\"/#.%2B\t")), max_size=12)


@equivalence(300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(NAMES, st.sampled_from(["'", '"', ""]), VALUES, st.booleans(), st.booleans(),
                          st.sampled_from(["", "<br/>", "<!-- c -->", " text.whl ", "<p>"])), max_size=6))
def test_generated_html_reads_as_the_reference(anchors: list) -> None:  # noqa: ANN001
    parts = []
    for name, quote, value, rp_first, yanked, between in anchors:
        q = quote or ""
        href = f"href={q}/whl/{name}{q}" if q else f"href=/whl/{name}"
        rp = f'data-requires-python="{html.escape(value, quote=True)}"'
        attrs = [rp, href] if rp_first else [href, rp]
        parts.append(f"<a {' '.join(attrs)}{' data-yanked' if yanked else ''}>{name}</a>{between}")
    page = "".join(parts).encode()
    assert rows(parse_simple_html(page, PAGE_URL)) == reference_html(page, PAGE_URL)


ENTRY_VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
                         st.dictionaries(st.text(max_size=4), st.text(max_size=8), max_size=2))


@equivalence(300)
@given(st.lists(st.one_of(
    st.fixed_dictionaries({"filename": NAMES, "url": NAMES.map(lambda n: f"../../f/{n}"),
                           "hashes": st.dictionaries(st.sampled_from(["sha256", "md5"]),
                                                     st.sampled_from(["c" * 64, "x", "C" * 64]), max_size=2)},
                          optional={"requires-python": st.one_of(st.none(), st.text(max_size=8)),
                                    "yanked": st.one_of(st.booleans(), st.text(max_size=5)),
                                    "core-metadata": ENTRY_VALUES, "size": st.integers(0, 10**9),
                                    "extra": ENTRY_VALUES}),
    ENTRY_VALUES, st.lists(st.integers(), max_size=2)), max_size=6), st.booleans())
def test_generated_json_reads_as_the_reference(entries: list, indent: bool) -> None:  # noqa: ANN001
    page = json.dumps({"meta": {"api-version": "1.1", "x": [1, {"y": "]"}]}, "name": "torch", "files": entries,
                       "versions": ["2.9.1"]}, indent=1 if indent else None).encode()
    assert rows(parse_simple_json(page, PAGE_URL)) == reference_json(page, PAGE_URL)


@pytest.mark.parametrize("text", [
    "", "[]", "{}", '{"files": {}}', "not json", '{"files": [', '{"files": [{"url": "a.whl"}', '{"files": []',
    '{"files": []} trailing', '{"files": [] "name": "x"}', '{"files": [{"url": "a.whl"},]', "{" + '"a":' * 600 + "1}",
    '{"meta": ' + "[" * 600 + "]" * 600 + ', "files": []}',
])
def test_a_page_that_is_not_a_pep_691_page_is_unavailable_not_a_crash(text: str) -> None:
    with pytest.raises(IndexUnavailable, match="torch/"):
        parse_simple_json(text.encode(), PAGE_URL)


def _one_entry_too_many(bound: int) -> bytes:
    return b'{"files": [' + b",".join([b"{}"] * (bound + 1)) + b"]}"


def test_a_page_of_one_entry_more_than_the_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages, "MAX_PAGE_ENTRIES", 1_000)
    parse_simple_json(_one_entry_too_many(999), PAGE_URL)
    with pytest.raises(IndexUnavailable, match="more than 1,000"):
        parse_simple_json(_one_entry_too_many(1_000), PAGE_URL)


@pytest.mark.slow
def test_a_page_with_more_entries_than_any_index_serves_is_refused() -> None:
    with pytest.raises(IndexUnavailable, match="more than 500,000"):
        parse_simple_json(_one_entry_too_many(MAX_PAGE_ENTRIES), PAGE_URL)


def test_the_platform_prefilter_keeps_exactly_the_wheels_of_those_platforms() -> None:
    files = parse_simple_json((CAPTURED / "torch.json").read_bytes(), PAGE_URL)
    wanted = {"manylinux_2_28_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64"}
    everything = parse_wheels(files, "torch")
    filtered = parse_wheels(files, "torch", platforms=wanted)
    assert filtered == [w for w in everything if any(t.rsplit("-", 1)[1] in wanted for t in w.tags)]
    assert 0 < len(filtered) < len(everything)


PREFILTER_PLATFORMS = frozenset({"manylinux_2_28_x86_64", "linux_x86_64"})
PLATFORM_TAGS = st.sampled_from(["manylinux_2_28_x86_64", "linux_x86_64", "win_amd64", "LINUX_X86_64",
                                 "manylinux_2_28_x86_64.win_amd64", "win_amd64.linux_x86_64", "linux%5Fx86_64",
                                 "win_amd64%2Elinux_x86_64", "linux_x86-64", "any"])
WHEEL_NAMES = st.builds("torch-2.9.1{}-cp312-cp312{}{}".format, st.sampled_from(["", "+cpu", "%2Bcu128"]),
                        st.sampled_from(["-", "%2D"]).flatmap(lambda dash: PLATFORM_TAGS.map(lambda tag: dash + tag)),
                        st.sampled_from([".whl", ".WHL", ".tar.gz"]))


@equivalence(500)
@given(st.lists(st.tuples(st.one_of(st.none(), WHEEL_NAMES), st.sampled_from(["", "a/"]), st.booleans(),
                          WHEEL_NAMES, st.sampled_from(["", "?x=1", "#sha256=" + "c" * 64])), max_size=6))
def test_the_platform_prefilter_passes_over_only_what_the_wheel_reading_drops(entries: list) -> None:  # noqa: ANN001
    """Whatever the file name and URL say (case, escapes, percent-escapes, compressed tags, one platform in each,
    no file name, a file name the reading does not take), the wheels read from a page scanned for some platforms
    are those read from the whole page for them."""
    def escaped(text: str) -> str:  # a JSON string that spells its underscores as \u005f
        return json.dumps(text).replace("_", "\\u005f")

    files = []
    for name, folder, escape, url, suffix in entries:
        entry = [f'"url": "../f/{url}{suffix}"']
        if name is not None:
            entry.insert(0, f'"filename": {(escaped if escape else json.dumps)(folder + name)}')
        files.append("{" + ", ".join(entry) + "}")
    page = f'{{"name": "torch", "files": [{",".join(files)}]}}'.encode()
    anchors = "".join(f'<a href="../f/{url}{suffix}">{name}</a>' for name, _, _, url, suffix in entries).encode()
    for body, read in ((page, parse_simple_json), (anchors, parse_simple_html)):
        whole = parse_wheels(read(body, PAGE_URL), "torch", PREFILTER_PLATFORMS)
        assert parse_wheels(read(body, PAGE_URL, PREFILTER_PLATFORMS), "torch", PREFILTER_PLATFORMS) == whole


def test_a_page_of_more_distinct_tags_than_are_remembered_reads_each_wheel_by_its_own() -> None:
    """More distinct tag sets (plain and compressed), labels and data-* texts than a page's memos keep, in both
    forms: each wheel is read by its own."""
    from torch_install.index.facts import facts_from_pages
    from torch_install.index.pages import MEMO_LIMIT, PageWheels
    from torch_install.machine import Machine
    from torch_install.wheel_tags import target_tags

    count = MEMO_LIMIT + 500
    platforms = {"linux_x86_64", "manylinux_2_28_x86_64"}

    def tags(i: int) -> frozenset[str]:
        return frozenset(f"cp3{i}-cp3{i}-{p}" for p in (platforms if i % 2 else {"linux_x86_64"}))

    names = [f"torch-2.9.{i % 3}+cpu-cp3{i}-cp3{i}-{'manylinux_2_28_x86_64.' if i % 2 else ''}linux_x86_64.whl"
             for i in range(count)]
    html = "".join(f'<a href="/f/{n}" data-requires-python="&gt;=3.{i}">w</a>' for i, n in enumerate(names))
    json_page = json.dumps({"files": [{"filename": n, "url": f"/f/{n}", "requires-python": f">=3.{i}"}
                                      for i, n in enumerate(names)]})
    machine = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35")
    for body, content_type in ((html.encode(), "text/html"), (json_page.encode(), JSON_TYPE)):
        files = parse_page(body, content_type, PAGE_URL, platforms)
        assert [f.requires_python for f in files] == [f">=3.{i}" for i in range(count)]
        wheels = parse_wheels(files, "torch", platforms)
        assert [(w.version, w.tags) for w in wheels] == [(f"2.9.{i % 3}", tags(i)) for i in range(count)]
        page = PageWheels(body, content_type, PAGE_URL, "torch", platforms)
        assert [(release[0], tags) for release, tags, _ in page.rows] == [(w.version, w.tags) for w in wheels]
        facts = facts_from_pages([page], target_tags(machine), "linux_x86_64", PAGE_URL, 0.0)
        assert {r.version: set(r.python) for r in facts.releases} == {
            f"2.9.{n}": {f"3.{i}" for i in range(count) if i % 3 == n} for n in range(3)}
        assert {r.version: r.glibc for r in facts.releases} == {"2.9.0": "2.28", "2.9.1": "2.28", "2.9.2": "2.28"}


# ---- memory ----------------------------------------------------------------------------------------------------

SIZE = 64 * 1024 * 1024
HOSTILE_PAGES = {
    "json-empty-objects": ("json", b'{"meta":{"api-version":"1.0"},"name":"torch","files":[', b"{}", b","),
    "json-empty-arrays": ("json", b'{"name":"torch","files":[', b"[]", b","),
    "json-non-wheel-files": ("json", b'{"name":"torch","files":[', b'{"filename":"t.tar.gz","url":"t.tar.gz"}', b","),
    "json-huge-versions": ("json", b'{"name":"torch","files":[],"versions":[', b'"2.9.1"', b","),
    "html-empty-anchors": ("html", b"<html><body>", b"<a>x</a>", b""),
    "html-non-wheel-anchors": ("html", b"<html><body>", b'<a href="torch-2.9.1.tar.gz">t</a>', b"\n"),
    "html-comment-of-wheels": ("html", b"<!--", b'<a href="torch-2.9.1-cp312-cp312-win_amd64.whl">', b""),
    "html-wheel-anchors": ("html", b"<html>", b'<a href="torch-2.9.1-cp312-cp312-win_amd64.whl">w</a>', b"\n"),
}
MEASURE = """
import resource, sys
from torch_install.index.pages import IndexUnavailable, parse_page
kind, head, item, sep = sys.argv[1], *(a.encode().decode('unicode_escape').encode('latin-1') for a in sys.argv[2:5])
size = int(sys.argv[5])
count = (size - len(head) - 2) // (len(item) + len(sep))
body = head + sep.join([item] * count) + (b"]}" if kind == "json" else b"")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    files = parse_page(body, "application/vnd.pypi.simple.v1+json" if kind == "json" else "text/html", "https://m.example/torch/")
    result = len(files)
except IndexUnavailable as exc:
    result = str(exc)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before, after, repr(result))
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB is Linux's")
@pytest.mark.parametrize("name", sorted(HOSTILE_PAGES))
def test_a_64_mib_hostile_page_costs_little_more_than_its_bytes(name: str) -> None:
    kind, head, item, sep = HOSTILE_PAGES[name]
    args = [a.decode("latin-1").encode("unicode_escape").decode() for a in (head, item, sep)]
    done = subprocess.run([sys.executable, "-c", MEASURE, kind, *args, str(SIZE)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONHASHSEED": "0"})
    assert done.returncode == 0, done.stderr
    before, after, result = done.stdout.split(" ", 2)
    grown_mib = (int(after) - int(before)) / 1024
    assert grown_mib < 32, (name, grown_mib, result)  # the page itself (64 MiB) was built before `before`
    assert result.strip() in ("0", *(repr(f"https://m.example/torch/: lists more than {MAX_PAGE_ENTRIES:,} {what}")
                                     for what in ("files", "wheels")))


MEASURE_PLAN = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.stderr[-500:])
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB is Linux's")
@pytest.mark.parametrize("form", ["html", "json"])
def test_a_cold_plan_of_a_100000_file_page_stays_under_100_mib(form: str, httpserver, tmp_path: Path) -> None:
    """Every file is a wheel for the target's platform (8 Pythons x 12 variants per release), so every entry
    is read; the entries are taken one at a time, never all held (the page alone is 24 MB)."""
    variants = ("cpu", "cu118", "cu121", "cu124", "cu126", "cu128", "cu129", "cu130", "cu132", "rocm6.4",
                "rocm7.2", "xpu")
    pythons = ("cp39-cp39", "cp310-cp310", "cp311-cp311", "cp312-cp312", "cp313-cp313", "cp313-cp313t",
               "cp314-cp314", "cp314-cp314t")
    rows = [(v, f"torch-2.{minor}.{patch}+{v}-{py}-manylinux_2_28_x86_64.whl", ">=3.9")
            for patch in range(100) for minor in range(16) for v in variants for py in pythons][:100_000]
    if form == "json":
        httpserver.expect_request("/whl/torch/").respond_with_data(json_page("torch", rows), content_type=JSON_TYPE)
    else:
        httpserver.expect_request("/whl/torch/").respond_with_data(html_page("torch", rows), content_type="text/html")
    target = tmp_path / "target.json"
    target.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.39",
                                  "nvidia_driver": "580.82.07", "gpus": [{"vendor": "nvidia", "pci_id": "10de:2684",
                                                                         "compute_capability": "8.9"}]}))
    plan = [sys.executable, "-m", "torch_install", "plan", "--target", str(target), "--format", "json", "--online",
            "--index-base", httpserver.url_for("/whl"), "--allow-insecure-index"]
    env = {**os.environ, "TORCH_INSTALL_CACHE_DIR": str(tmp_path / "cache"), "TORCH_INSTALL_DEFAULT_INDEX": "none",
           "TORCH_INSTALL_INDEX_RETRIES": "0"}
    done = subprocess.run([sys.executable, "-c", MEASURE_PLAN, *plan], capture_output=True, text=True, env=env,
                          timeout=300)
    code, peak_kib, err = done.stdout.split(" ", 2)
    assert code == "0", err
    assert len(httpserver.log) == 1  # the page was read
    assert int(peak_kib) / 1024 < 100, (peak_kib, err)


# ---- wheel names ---------------------------------------------------------------------------------------------

def _by_packaging(filename: str):  # noqa: ANN202
    from packaging.utils import parse_wheel_filename

    name, version, _build, tags = parse_wheel_filename(filename)
    return name, version.public, version.local or "", frozenset(str(t) for t in tags)


def test_normal_wheel_names_read_as_packaging_reads_them() -> None:
    from torch_install.index.pages import _normal_wheel

    names = [f["filename"] for project in ("torch", "torchvision", "torchaudio")
             for f in json.loads((CAPTURED / f"{project}.json").read_text())["files"] if f["filename"].endswith(".whl")]
    names += [r[1] for r in load_rows()]
    read = 0
    for name in names:
        normal = _normal_wheel(name)
        if normal is not None:
            read += 1
            assert normal == _by_packaging(name), name
    assert read > 0.9 * len(names)


@equivalence(500)
@given(st.from_regex(r"[A-Za-z0-9_]{1,6}-[0-9]{1,3}(\.[0-9]{1,3}){0,3}(\+[a-zA-Z0-9]{1,4}(\.[0-9a-z]{1,3})?)?"
                     r"-(cp3[0-9]{1,2}|py3)(\.cp31[0-9])?-(none|abi3|cp3[0-9]{1,2}t?)-"
                     r"(manylinux_2_[0-9]{1,2}_x86_64|win_amd64|any)(\.manylinux2014_x86_64)?\.whl", fullmatch=True))
def test_the_fast_reading_agrees_with_packaging_or_leaves_the_name_to_it(filename: str) -> None:
    from torch_install.index.pages import _normal_wheel

    normal = _normal_wheel(filename)
    if normal is not None:
        assert normal == _by_packaging(filename)


@pytest.mark.parametrize(("os_name", "arch", "python", "extra"), [
    ("linux", "x86_64", "3.12", {"glibc": "2.35"}), ("linux", "aarch64", "3.11", {"glibc": "2.28"}),
    ("windows", "x86_64", "3.13", {}), ("macos", "arm64", "3.12", {"os_version": "14.5"}),
    ("linux", "x86_64", "3.9", {"glibc": "2.17"}),
])
def test_what_is_learnt_for_a_target_is_the_same_with_the_platform_prefilter(os_name: str, arch: str, python: str,
                                                                             extra: dict) -> None:
    from torch_install.index.facts import facts_from_pages
    from torch_install.index.pages import PageWheels
    from torch_install.machine import Machine
    from torch_install.wheel_tags import target_tags

    machine = Machine(os=os_name, arch=arch, python=python, **extra)
    target = target_tags(machine)
    for form in ("html", "json"):
        body = (CAPTURED / f"torch.{form}").read_bytes()
        content_type = "text/html" if form == "html" else "application/vnd.pypi.simple.v1+json"
        whole = facts_from_pages([PageWheels(body, content_type, PAGE_URL, "torch", None)], target,
                                 machine.platform or "", PAGE_URL, 0.0, unlabelled="default")
        facts = facts_from_pages([PageWheels(body, content_type, PAGE_URL, "torch", target.platforms)], target,
                                 machine.platform or "", PAGE_URL, 0.0, unlabelled="default")
        assert facts == whole and whole.releases, (form, machine)
