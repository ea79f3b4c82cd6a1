"""Fuzzing the parsers, validators and renderers: each returns a value or raises its documented error type, never
any other exception; and the CLI given hostile values exits 0, 2 or 4 with no internal error (exit 3).

Examples are bounded so the suite stays fast (``TORCH_INSTALL_FUZZ_SCALE=N`` multiplies every bound for a
longer run); the detector text parsers have their own fuzz tests in test_detect_parsers.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import string
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from torch_install.errors import EnvironmentFailure, InputError

pytestmark = pytest.mark.slow  # property searches of seconds each

SCALE = int(os.environ.get("TORCH_INSTALL_FUZZ_SCALE", "1"))  # a longer run multiplies every bound


def bounded(examples: int) -> Any:
    return settings(max_examples=examples * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])


FAST = bounded(150)

# text as users paste it: ASCII, digits of other scripts, control characters, very long digit runs
DIGITS = st.sampled_from(["٥", "²", "٨", "۹", "０", "9" * 5000, "1" * 30, "-", ".", "+", "\n", "\x1b[2J", "\x00"])
PASTED = st.one_of(st.text(max_size=40), st.lists(st.one_of(DIGITS, st.text(string.printable, max_size=6)),
                                                   max_size=8).map("".join))
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | PASTED,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(PASTED, inner, max_size=4),
                    max_leaves=12)
MACHINE_KEYS = ("schema", "os", "os_version", "arch", "python", "glibc", "musl", "wsl", "jetson", "nvidia_driver",
                "cuda_driver_api", "rocm", "amdgpu_driver", "gpus")
GPU = st.dictionaries(st.sampled_from(["vendor", "name", "pci_id", "compute_capability", "gfx", "family", "count"]),
                      JSON | PASTED, max_size=5)
PROFILE = st.fixed_dictionaries({}, optional={
    **{key: JSON | PASTED for key in MACHINE_KEYS if key != "gpus"},
    "os": st.sampled_from(["linux", "windows", "macos", "freebsd", 5]),
    "arch": st.sampled_from(["x86_64", "aarch64", "arm64", "riscv64"]),
    "gpus": st.lists(GPU, max_size=3) | JSON,
})


def _main(argv: list[str]) -> tuple[int, str, str]:
    from torch_install.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own usage errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    for name in ("CUDA_VERSION", "NVIDIA_DRIVER_CAPABILITIES", "ROCM_VERSION", "TORCH_INSTALL_INDEX_BASE"):
        monkeypatch.delenv(name, raising=False)


# ---- validators ----------------------------------------------------------------------------------------------

@FAST
@given(PROFILE)
@example({"gpus": [{"vendor": None}]})  # found by this test: a null vendor was taken for a present one
def test_a_profile_is_a_machine_or_an_input_error(data: dict[str, Any]) -> None:
    from torch_install.machine import machine_from_dict

    with contextlib.suppress(InputError):
        machine_from_dict(data)


@FAST
@given(JSON)
def test_any_json_is_a_machine_or_an_input_error(data: Any) -> None:
    from torch_install.machine import machine_from_dict

    with contextlib.suppress(InputError):
        machine_from_dict(data)


@bounded(60)
@given(st.one_of(PROFILE.map(json.dumps), st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
                 st.integers(1, 3000).map(lambda n: "[" * n), PROFILE.map(lambda d: json.dumps(d)[:-1])))
def test_a_target_file_plans_or_exits_2(text: str) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8",
                                     errors="surrogateescape") as file:
        file.write(text)
    try:
        code, _, err = _main(["plan", "--target", file.name, "--format", "json"])
    finally:
        os.unlink(file.name)
    assert code in (0, 2, 4), err
    assert "internal error" not in err


@bounded(80)
@given(st.sampled_from(["--nvidia-driver", "--rocm", "--python", "--gpu", "--variant", "--index-base", "--os",
                        "--arch", "--channel", "--format"]), PASTED)
def test_a_flag_value_plans_or_exits_2(flag: str, value: str) -> None:
    code, _, err = _main(["plan", "--os", "linux", "--arch", "x86_64", flag, value, "--format", "json"])
    assert code in (0, 2, 4), err
    assert "internal error" not in err


@bounded(80)
@given(st.lists(st.one_of(PASTED, st.sampled_from(["torch", "torch==2.9.1", "torchvision<0.20", "torch[opt]",
                                                    "torch>=" + "9" * 40, "torch @ file:///x", "numpy<2"])),
                min_size=1, max_size=3))
def test_requirements_plan_or_exit_2(packages: list[str]) -> None:
    code, _, err = _main(["plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--format", "json",
                          "--", *packages])
    assert code in (0, 2, 4), err
    assert "internal error" not in err


@FAST
@given(PASTED)
def test_numbers_are_ascii_and_bounded(text: str) -> None:
    from torch_install.versions import numeric_key, release_numbers, small_int

    assert all(n <= 10**18 for n in numeric_key(text))
    release_numbers(text)
    value = small_int(text)
    assert value is None or (text.isascii() and str(value) == text.lstrip("0").rjust(1, "0"))


# ---- parsers --------------------------------------------------------------------------------------------------

PAGE_URL = "https://mirror.example/whl/torch/"
HREF = st.one_of(PASTED, st.sampled_from(["http://[::1", "torch-2.9.1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl",
                                          "javascript:alert(1)", "//evil/x.whl", "../../x.whl#sha256=zz"]))


@FAST
@given(st.lists(HREF, max_size=5), st.sampled_from(["html", "json"]), st.booleans())
def test_an_index_page_is_files_or_index_unavailable(hrefs: list[str], form: str, nest: bool) -> None:
    from torch_install.index.pages import IndexUnavailable, parse_page, parse_wheels

    if form == "json":
        body = json.dumps({"files": [{"filename": h, "url": h, "hashes": {"sha256": h}} for h in hrefs]})
        body = "[" * 5000 + body if nest else body
        content_type = "application/vnd.pypi.simple.v1+json"
    else:
        body = "".join(f'<a href="{h}" data-requires-python="{h}">{h}</a>' for h in hrefs)
        body = "<div>" * 5000 + body if nest else body
        content_type = "text/html"
    try:
        files = parse_page(body.encode("utf-8", "surrogatepass"), content_type, PAGE_URL)
    except IndexUnavailable:
        return
    parse_wheels(files, "torch")


@FAST
@given(st.one_of(JSON.map(json.dumps), PASTED, st.integers(1, 5000).map(lambda n: "{\"a\":" * n)))
def test_a_variants_file_is_read_or_an_input_error(text: str) -> None:
    from torch_install.wheelnext import read_variants_text

    with contextlib.suppress(InputError):
        read_variants_text(text, "fuzz.json")


@FAST
@given(JSON)
def test_stored_facts_are_facts_or_none(data: Any) -> None:
    from torch_install.index.facts import facts_from_json, facts_learnt_from, is_learnt_record

    facts_from_json(data)
    is_learnt_record(data)
    facts_learnt_from(data, {"https://x/": "00000000-1"})


@FAST
@given(st.dictionaries(st.sampled_from(["executable", "version", "path", "site_packages", "user_site", "isolated",
                                        "free_threaded", "prefix", "base_prefix", "stdlib"]), JSON, max_size=10))
def test_an_interpreters_answer_is_read_whatever_it_holds(facts: dict[str, Any]) -> None:
    from torch_install.environment.interpreter import interpreter_from_facts

    interpreter_from_facts(facts, {}).python  # noqa: B018


@FAST
@given(st.one_of(PASTED, st.integers(1, 3000).map(lambda n: "x = " + "-" * n + "1"),
                 st.integers(1, 3000).map(lambda n: "x = " + "(" * n + "1" + ")" * n)))
def test_a_version_py_is_read_or_named_a_problem(text: str) -> None:
    from torch_install.doctor.inspect import read_version_py

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, encoding="utf-8",
                                     errors="surrogateescape") as file:
        file.write(text)
    try:
        build = read_version_py("torch", file.name)
    finally:
        os.unlink(file.name)
    assert build.problem is None or isinstance(build.problem, str)


@FAST
@given(PASTED, st.integers(0, 8))
def test_a_visible_devices_value_is_a_set_and_maybe_a_problem(value: str, count: int) -> None:
    from torch_install.vendors import visible_set

    keep, problem = visible_set(value, count, [None] * count)
    assert all(0 <= i < count for i in keep) and (problem is None or isinstance(problem, str))


@FAST
@given(st.binary(max_size=400))
def test_a_cache_file_of_any_bytes_is_an_entry_or_none(data: bytes) -> None:
    from torch_install.index.cache import IndexCache, _key

    with tempfile.TemporaryDirectory() as directory, contextlib.redirect_stderr(io.StringIO()):
        cache = IndexCache(directory, ttl=3600)
        url = "https://x/whl/torch/"
        with open(os.path.join(directory, f"{_key(url)}.meta.json"), "wb") as file:
            file.write(data)
        entry = cache.get(url)
        if entry is not None:
            entry.files()
        os.makedirs(os.path.join(directory, "derived"))
        with open(os.path.join(directory, "derived", f"{_key('k')}.json"), "wb") as file:
            file.write(data)
        cache.get_derived("k")


# ---- resolver and renderers -----------------------------------------------------------------------------------

@bounded(100)
@given(PROFILE, st.sampled_from(["text", "json", "pip", "uv", "requirements", "pyproject", "dockerfile", "url"]))
def test_every_valid_machine_resolves_and_renders(data: dict[str, Any], form: str) -> None:
    from torch_install.machine import machine_from_dict
    from torch_install.machine_completion import complete_machine
    from torch_install.render import FORMATS, render
    from torch_install.resolver.choose import resolve
    from torch_install.resolver.matrix import load_matrix
    from torch_install.resolver.plan import Request

    try:
        machine = complete_machine(machine_from_dict(data))
        plan = resolve(machine, Request(), load_matrix())
    except InputError:
        return
    if form in FORMATS:
        with contextlib.suppress(InputError, EnvironmentFailure):
            render(plan, form)


# ---- configuration files and capture archives ------------------------------------------------------------------

CONF_LINES = st.one_of(
    st.sampled_from(["[global]", "[install]", "[INSTALL]", "[freeze]", "", "# a comment", "; another", "   ",
                     "index-url = https://mirror.example/simple", "constraint = /etc/c.txt", "Constraint=/x y",
                     "CONSTRAINT : /a", "constraint =", "  /continued/value", "\tmore", "no-cache-dir = true",
                     "[", "=", "key", "[install"]),
    st.text(string.printable, max_size=30))


@FAST
@example(["[global]", "0\x0c="], "\n", ["A"])  # found by this test: a form feed is no line end for pip
@given(st.lists(CONF_LINES, max_size=12), st.sampled_from(["\n", "\r\n", "\r"]),
       st.lists(st.text(string.ascii_letters + "/._-", min_size=1, max_size=12), min_size=1, max_size=3))
def test_a_pip_conf_edit_keeps_every_other_line_and_pip_reads_the_value(lines: list[str], newline: str,
                                                                         values: list[str]) -> None:
    """What the editor of user files hands the edit: the text with "\n" line ends (it puts the file's back)."""
    import configparser

    from torch_install.environment.pip_config import option_values, set_option
    from torch_install.user_files import with_line_ends

    original = newline.join(lines) + (newline if lines else "")
    text = re.sub(r"\r\n|\r", "\n", original)
    before = configparser.RawConfigParser()
    try:  # as pip reads the file: text mode, universal newlines
        before.read_file(io.StringIO(original, newline=None))
    except configparser.Error:
        with pytest.raises(configparser.Error):  # pip refuses such a file: so does the edit
            set_option(text, "install", "constraint", values)
        return
    try:
        edited = set_option(text, "install", "constraint", values)
    except ValueError:
        assert "DEFAULT" in text.upper()  # an [install] added beside [DEFAULT] keys pip would read differently
        return
    assert option_values(edited, "install", "constraint") == values
    import difflib

    diff = difflib.SequenceMatcher(None, text.split("\n"), edited.split("\n"), autojunk=False)
    missing = [line for tag, i1, i2, _, _ in diff.get_opcodes() if tag in ("delete", "replace")
               for line in text.split("\n")[i1:i2]]
    # only the edited key's own lines (its continuation lines, comments among them) may be gone; the rest stays
    assert all("constraint" in line.lower() or line[:1] in (" ", "\t") or line.lstrip().startswith(("#", ";"))
               or not line.strip() for line in missing), missing
    after = configparser.RawConfigParser()
    after.read_file(io.StringIO(with_line_ends(original, edited), newline=None))
    assert after.get("install", "constraint").split() == values
    for section in before.sections():
        for key, value in before.items(section):
            if (section, key) != ("install", "constraint"):
                assert after.get(section, key) == value


MEMBER_NAMES = st.lists(st.sampled_from(["sys", "proc", "..", ".", "", "a", "x" * 300, "driver", "~", "a b",
                                         "\x00", "é"]), min_size=1, max_size=6).map("/".join)
MEMBERS = st.lists(st.tuples(st.one_of(MEMBER_NAMES, st.just("/etc/passwd"), st.just("a/" * 40 + "x")),
                             st.sampled_from(["file", "dir", "symlink", "hardlink", "fifo", "chardev"]),
                             st.sampled_from(["", "/", "../..", "a", "/etc/shadow", "x" * 2000])), max_size=8)


@FAST
@given(MEMBERS)
def test_a_capture_archive_of_any_members_is_read_or_refused_naming_why(members: list[tuple[str, str, str]]) -> None:
    import tarfile

    from torch_install.capture import read_capture

    kinds = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
             "fifo": tarfile.FIFOTYPE, "chardev": tarfile.CHRTYPE}
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "capture.tar.gz")
        with tarfile.open(path, "w:gz") as archive:
            for name, kind, link in members:
                info = tarfile.TarInfo(name or "x")
                info.type, info.linkname = kinds[kind], link
                data = b"data" if kind == "file" else b""
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data) if data else None)
        try:
            tree = read_capture(path)
        except InputError as exc:
            assert "\n" not in str(exc)
            return
        for name in (*tree.files, *tree.links, *(tree.dirs - {""})):  # "": the tree's root
            assert not name.startswith("/") and ".." not in name.split("/") and "" not in name.split("/")
        assert os.listdir(directory) == ["capture.tar.gz"]  # nothing written beside it


def test_a_damaged_version_py_prints_no_python_warning(tmp_path, recwarn) -> None:
    """Python's SyntaxWarning for a damaged file (an invalid decimal literal) is not the user's to read: the
    build says what is wrong with the file, and nothing else is printed."""
    from torch_install.doctor.inspect import read_version_py

    path = tmp_path / "version.py"
    path.write_text("__version__ = '2.9.1'\ncuda = 1or None\n")  # valid, with a SyntaxWarning
    read_version_py("torch", str(path))
    assert [w for w in recwarn if issubclass(w.category, SyntaxWarning)] == []
