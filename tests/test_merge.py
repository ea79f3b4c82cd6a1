"""`--merge PYPROJECT` merges: a regular file edited through the one editor (special files refused, a link followed,
line ends kept), the project merged into itself twice gives the same file, the user's own indexes and sources
stay, every valid TOML form of `tool.uv` stays valid TOML, and a shape it cannot read is one line and exit 2. A
property test over generated valid pyprojects; `uv lock` on some of them in the slow lane."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from special_files import KINDS, make_special
from torch_install.cli import main

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")

CPU = ["--os", "linux", "--arch", "x86_64", "--python", "3.12"]
OURS = {"name": "torch-install-cpu", "url": "https://download.pytorch.org/whl/cpu", "explicit": True}


def _toml(path: Path) -> dict[str, Any]:
    import tomllib

    return tomllib.loads(path.read_text())


def merge(capsys: pytest.CaptureFixture[str], path: Path, *flags: str, cwd: Path | None = None) -> tuple[int, str]:
    here = os.getcwd()
    os.chdir(cwd or path.parent)
    try:
        code = main(["plan", *CPU, "--format", "pyproject", "--merge", str(path), *flags])
    finally:
        os.chdir(here)
    out, err = capsys.readouterr()
    assert out == ""
    return code, err


@pytest.mark.skipif(os.name != "posix", reason="POSIX file kinds")
@pytest.mark.parametrize("kind", KINDS)
def test_a_path_that_is_no_regular_file_is_refused_and_left_as_it_is(tmp_path: Path, kind: str,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pyproject.toml"
    make_special(path, kind)
    before = os.lstat(path)
    code, err = merge(capsys, path)
    assert (code, len(err.splitlines())) == (2, 1) and f"a {kind}, not a regular file" in err
    assert (os.lstat(path).st_mode, os.lstat(path).st_ino) == (before.st_mode, before.st_ino)


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_linked_pyproject_is_merged_through_its_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shared = tmp_path / "shared-pyproject.toml"
    shared.write_text('[project]\nname = "x"\ndependencies = ["torch"]\n')
    link = tmp_path / "pyproject.toml"
    link.symlink_to(shared)
    assert merge(capsys, link)[0] == 0
    assert link.is_symlink() and _toml(shared)["project"]["dependencies"] == ["torch==2.15.0+cpu"]


README_PROJECT = ('[project]\nname = "demo"\nversion = "0.1"\ndependencies = ["torch>=2.8", "transformers", '
                  '"numpy<2"]\n\n[project.optional-dependencies]\nviz = ["matplotlib"]\ngpu = ["torch>=2.9"]\n\n'
                  '[dependency-groups]\ndev = ["pytest", {include-group = "lint"}]\nlint = ["ruff"]\n')


def test_the_project_merged_into_itself_twice_is_the_same_file(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The README's flow, `plan --project . --format pyproject --merge pyproject.toml`, with --extra and --group:
    the build's pins go where the project names torch, nothing is listed twice or moved between the project's
    dependencies, extras and groups, and a second run changes nothing."""
    path = tmp_path / "pyproject.toml"
    path.write_text(README_PROJECT)
    flags = ["--project", ".", "--extra", "viz", "--group", "dev", "--", ]
    code, err = merge(capsys, Path("pyproject.toml"), *flags[:-1], cwd=tmp_path)
    assert code == 0, err
    data = _toml(path)
    assert data["project"]["dependencies"] == ["torch==2.15.0+cpu", "transformers", "numpy<2"]
    assert data["project"]["optional-dependencies"] == {"viz": ["matplotlib"], "gpu": ["torch>=2.9"]}
    assert data["dependency-groups"] == {"dev": ["pytest", {"include-group": "lint"}], "lint": ["ruff"]}
    first = path.read_bytes()
    code, err = merge(capsys, Path("pyproject.toml"), *flags[:-1], cwd=tmp_path)
    assert code == 0 and path.read_bytes() == first and "nothing to change" in err
    code, err = merge(capsys, Path("pyproject.toml"), "--project", ".", "--extra", "gpu", cwd=tmp_path)
    assert code == 0, err
    data = _toml(path)  # torch named in the extra chosen: its pin stays in project.dependencies, where it was first
    assert data["project"]["dependencies"][0] == "torch==2.15.0+cpu" and data["dependency-groups"]["lint"] == ["ruff"]


def test_what_rides_along_from_elsewhere_is_added_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\ndependencies = [\n  "numpy<2",  # the C extension\n]\n'
                    '[project.optional-dependencies]\nhub = ["requests"]\n')
    for _ in range(2):
        assert merge(capsys, path, "torch", "numpy<2", "requests", "transformers")[0] == 0
    text = path.read_text()
    assert '"numpy<2",  # the C extension' in text
    assert _toml(path)["project"]["dependencies"] == ["numpy<2", "torch==2.15.0+cpu", "transformers"]


FORMS = {
    "inline array": '[project]\nname = "x"\ndependencies = ["torch"]\n[tool.uv]\n'
                    'index = [{ name = "internal", url = "https://pypi.internal.example/simple" }]\n',
    "empty array": '[project]\nname = "x"\ndependencies = ["torch"]\n[tool.uv]\nindex = []\n',
    "dotted keys": 'project.name = "x"\nproject.dependencies = ["torch"]\ntool.uv.index = []\n',
    "inline uv": '[project]\nname = "x"\ndependencies = ["torch"]\n[tool]\n'
                 'uv = { sources = { mylib = { index = "internal" } }, index = [{ name = "internal", url = "https://i" '
                 '}] }\n',
    "split array of tables": '[project]\nname = "x"\ndependencies = ["torch"]\n\n[[tool.uv.index]]\nname = "internal"\n'
                             'url = "https://i"\n\n[tool.uv]\nnative-tls = true\n\n[[tool.uv.index]]\nname = "mirror"\n'
                             'url = "https://m"\n\n[tool.ruff]\nline-length = 100\n',
    "sources before uv": '[project]\nname = "x"\ndependencies = ["torch"]\n[tool.uv.sources]\nmylib = { index = "i" }\n'
                         '[tool.uv]\nnative-tls = true\n[[tool.uv.index]]\nname = "i"\nurl = "https://i"\n',
    "no tool": '[project]\nname = "x"\ndependencies = ["torch"]\n',
}


@pytest.mark.parametrize("form", FORMS)
def test_every_form_of_tool_uv_stays_valid_and_keeps_the_users_entries(tmp_path: Path, form: str,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(FORMS[form])
    before = _toml(path)
    code, err = merge(capsys, path)
    assert code == 0, err
    after = _toml(path)
    uv = after["tool"]["uv"]
    assert OURS in uv["index"] and uv["sources"]["torch"] == {"index": "torch-install-cpu"}
    old = before.get("tool", {}).get("uv", {})
    assert [i for i in uv["index"] if i != OURS] == old.get("index", [])  # the user's, in order
    assert {k: v for k, v in uv["sources"].items() if k != "torch"} == old.get("sources", {})
    assert {k: v for k, v in uv.items() if k not in ("index", "sources")} == {
        k: v for k, v in old.items() if k not in ("index", "sources")}
    assert {k: v for k, v in after.get("tool", {}).items() if k != "uv"} == {
        k: v for k, v in before.get("tool", {}).items() if k != "uv"}
    once = path.read_bytes()
    assert merge(capsys, path)[0] == 0 and path.read_bytes() == once


def test_the_users_own_indexes_stay_and_only_torch_installs_are_replaced(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\ndependencies = ["torch", "xformers", "mylib"]\n\n'
                    '[[tool.uv.index]]\nname = "pytorch-cu124"\nurl = "https://torch-mirror.example/whl/cu124"\n'
                    'explicit = true\n\n[[tool.uv.index]]\nname = "pyg-mirror"\nurl = "https://mirror.example/pyg"\n\n'
                    '[[tool.uv.index]]\nname = "torch-install-cu128"\nurl = "https://download.pytorch.org/whl/cu128"\n'
                    'explicit = true\n\n[tool.uv.sources]\ntorch = { index = "torch-install-cu128" }\n'
                    'xformers = { index = "pytorch-cu124" }\nmylib = { index = "pyg-mirror" }\n')
    code, err = merge(capsys, path)
    assert code == 0, err
    uv = _toml(path)["tool"]["uv"]
    assert [i["name"] for i in uv["index"]] == ["pytorch-cu124", "pyg-mirror", "torch-install-cpu"]
    assert uv["sources"] == {"torch": {"index": "torch-install-cpu"}, "xformers": {"index": "pytorch-cu124"},
                             "mylib": {"index": "pyg-mirror"}}
    assert "tool.uv.index: torch-install-cu128 (removed), torch-install-cpu" in err


@pytest.mark.parametrize("ends", ["\r\n", "mixed"])
def test_line_ends_are_kept(tmp_path: Path, ends: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pyproject.toml"
    lines = ["# project", "[project]", 'name = "x"', "dependencies = [", '  "numpy",', '  "torch",', "]"]
    line_ends = ["\r\n"] * len(lines) if ends == "\r\n" else ["\r\n", "\n"] * 3 + ["\r\n"]
    path.write_bytes("".join(line + end for line, end in zip(lines, line_ends, strict=True)).encode())
    assert merge(capsys, path)[0] == 0
    data = path.read_bytes()
    own_end = dict(zip(lines, line_ends, strict=True))
    kept = [line for line in data.decode().split("\n") if line.rstrip("\r") in own_end]
    assert len(kept) == len(lines) - 1  # all but torch's line, now its pin
    assert all(line.endswith("\r") == (own_end[line.rstrip("\r")] == "\r\n") for line in kept)
    if ends == "\r\n":
        assert data.count(b"\n") == data.count(b"\r\n") > len(lines)


@pytest.mark.parametrize(("text", "said"), [
    ('project = "x"\n', "project is a string, not a table"),
    ('[project]\ndependencies = "torch"\n', "project.dependencies is a string, not an array of strings"),
    ('[project]\ndependencies = ["torch", 5]\n', "project.dependencies is an array holding a number"),
    ('[project]\noptional-dependencies = []\n', "project.optional-dependencies is an array, not a table"),
    ('[project.optional-dependencies]\ngpu = "torch"\n', "project.optional-dependencies.gpu is a string"),
    ('dependency-groups = 1\n', "dependency-groups is a number"),
    ('tool = 5\n', "tool is a number, not a table"),
    ('[tool]\nuv = "x"\n', "tool.uv is a string, not a table"),
    ('[tool]\nuv = []\n', "tool.uv is an array, not a table"),
    ('[[tool.uv]]\nx = 1\n', "tool.uv is an array, not a table"),
    ('[tool.uv]\nindex = { name = "a" }\n', "tool.uv.index is a table, not an array of tables"),
    ('[tool.uv]\nindex = "a"\n', "tool.uv.index is a string"),
    ('[tool.uv]\nindex = [1, 2]\n', "tool.uv.index is an array holding a number, not an array of tables"),
    ('[tool.uv]\nsources = "a"\n', "tool.uv.sources is a string, not a table"),
    ('[tool.uv]\nsources = []\n', "tool.uv.sources is an array, not a table"),
    ('[tool.uv]\nno-build-isolation-package = "x"\n', "tool.uv.no-build-isolation-package is a string"),
    ('[project]\nname = "x"\r[tool]\n', "not valid TOML"),  # a lone CR is no TOML line end
    ("\xe9 = 1\n", "not valid TOML"),
])
def test_a_shape_the_merge_cannot_read_is_one_line_and_exit_2(tmp_path: Path, text: str, said: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_bytes(text.encode())
    code, err = merge(capsys, path)
    assert (code, len(err.splitlines())) == (2, 1), err
    assert said in err and path.read_bytes() == text.encode()


def test_a_file_over_the_limit_is_refused_not_cut(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pyproject.toml"
    text = '[project]\nname = "x"\n' + "# pad\n" * 800_000
    path.write_text(text)
    code, err = merge(capsys, path)
    assert code == 2 and "larger than 4 MiB: not read" in err and path.read_text() == text


# ---- generated projects ------------------------------------------------------------------------------------------

def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return json.dumps(value)


INDEXES = st.lists(st.sampled_from([{"name": "internal", "url": "https://pypi.internal.example/simple"},
                                    {"name": "pytorch-cu124", "url": "https://torch-mirror.example/whl/cu124",
                                     "explicit": True},
                                    {"name": "torch-install-cu999", "url": "https://old.example/cu999",
                                     "explicit": True}]), max_size=3, unique_by=lambda i: i["name"])
SOURCES = st.dictionaries(st.sampled_from(["mylib", "xformers", "torch"]),
                          st.sampled_from([{"index": "internal"}, {"index": "pytorch-cu124"}, {"git": "https://g"}]),
                          max_size=3)
DEPENDENCIES = st.lists(st.sampled_from(["torch", "torch>=2.8", "torch==2.15.0+cpu", "numpy<2", "mylib", "requests"]),
                        max_size=4, unique=True)


@st.composite
def pyprojects(draw: st.DrawFn) -> str:
    """A valid pyproject.toml: its project and tool.uv written in one of the ways TOML allows."""
    dependencies = draw(DEPENDENCIES)
    indexes, sources = draw(INDEXES), draw(SOURCES)
    settings_ = draw(st.dictionaries(st.sampled_from(["native-tls", "prerelease"]),
                                     st.sampled_from([True, "allow"]), max_size=1))
    project_form = draw(st.sampled_from(["table", "dotted", "multiline"]))
    lines: list[str] = []
    if project_form == "dotted":
        lines += ['project.name = "x"', f"project.dependencies = {_value(dependencies)}"]
    else:
        lines += ["[project]", 'name = "x"']
        if project_form == "multiline":
            lines += ["dependencies = [", *(f'    "{d}",  # note' for d in dependencies), "]"]
        else:
            lines.append(f"dependencies = {_value(dependencies)}")
    if draw(st.booleans()):
        lines += ["", "[project.optional-dependencies]", 'viz = ["matplotlib"]']
    uv_form = draw(st.sampled_from(["none", "tables", "inline", "dotted", "split", "inline-index"]))
    if uv_form == "tables":
        if settings_:
            lines += ["", "[tool.uv]", *(f"{k} = {_value(v)}" for k, v in settings_.items())]
        for index in indexes:
            lines += ["", "[[tool.uv.index]]", *(f"{k} = {_value(v)}" for k, v in index.items())]
        if sources:
            lines += ["", "[tool.uv.sources]", *(f"{k} = {_value(v)}" for k, v in sources.items())]
    elif uv_form == "inline":
        uv = {**settings_, **({"index": indexes} if indexes else {}), **({"sources": sources} if sources else {})}
        lines += ["", "[tool]", f"uv = {_value(uv)}"]
    elif uv_form == "dotted":
        lines = [*(f"tool.uv.{k} = {_value(v)}" for k, v in settings_.items()), f"tool.uv.index = {_value(indexes)}",
                 *(f"tool.uv.sources.{k} = {_value(v)}" for k, v in sources.items()), *lines]
    elif uv_form == "inline-index":
        lines += ["", "[tool.uv]", f"index = {_value(indexes)}", *(f"{k} = {_value(v)}" for k, v in settings_.items())]
        if sources:
            lines += ["", "[tool.uv.sources]", *(f"{k} = {_value(v)}" for k, v in sources.items())]
    elif uv_form == "split" and indexes:
        lines += ["", "[[tool.uv.index]]", *(f"{k} = {_value(v)}" for k, v in indexes[0].items()),
                  "", "[tool.uv]", 'cache-dir = ".cache"']
        for index in indexes[1:]:
            lines += ["", "[[tool.uv.index]]", *(f"{k} = {_value(v)}" for k, v in index.items())]
    if draw(st.booleans()):
        lines += ["", "[tool.ruff]", "line-length = 100"]
    return "\n".join(lines) + "\n"


def _others(data: dict[str, Any]) -> dict[str, Any]:
    """The file's data less what the merge owns: torch's dependency entries, torch-install's indexes, torch's
    source; empty tables and arrays left out."""
    import copy

    data = copy.deepcopy(data)
    project = data.get("project", {})
    project["dependencies"] = [d for d in project.get("dependencies", []) if not d.startswith("torch")]
    uv = data.get("tool", {}).get("uv", {})
    uv["index"] = [i for i in uv.get("index", []) if not i["name"].startswith("torch-install-")]
    uv.get("sources", {}).pop("torch", None)

    def prune(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        pruned = {k: prune(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v not in ({}, [])}

    return prune(data)


def _check_merge(tmp_path: Path, text: str) -> None:
    import tomllib

    from torch_install.errors import InputError
    from torch_install.render.merge import merge_pyproject

    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    before = tomllib.loads(text)
    try:
        merge_pyproject(str(path), [PLAN], None)
    except InputError as refused:  # only a layout the editor cannot keep, said in one line
        raise AssertionError(f"refused a valid pyproject: {refused}\n{text}") from None
    after = tomllib.loads(path.read_text())
    assert _others(after) == _others(before), path.read_text()
    uv = after["tool"]["uv"]
    assert [d for d in after["project"]["dependencies"] if d.startswith("torch")] == ["torch==2.15.0+cpu"]
    assert uv["sources"]["torch"] == {"index": "torch-install-cpu"} and OURS in uv["index"]
    names = {i["name"] for i in uv["index"]}
    assert all(s["index"] in names for s in uv["sources"].values() if "index" in s and s["index"] in
               {i["name"] for i in before.get("tool", {}).get("uv", {}).get("index", [])} | {"torch-install-cpu"})
    once = path.read_bytes()
    assert merge_pyproject(str(path), [PLAN], None) == [] and path.read_bytes() == once


def _cpu_plan() -> Any:
    from torch_install.machine import Machine
    from torch_install.project.gather import gather, request_of
    from torch_install.resolver.choose import resolve
    from torch_install.resolver.matrix import load_matrix
    from torch_install.resolver.plan import DEFAULT_INDEX_BASE

    machine = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35")
    return resolve(machine, request_of(gather(["torch"]), "cpu", "stable", DEFAULT_INDEX_BASE), load_matrix())


PLAN = _cpu_plan()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pyprojects())
def test_a_merge_into_any_valid_pyproject_is_valid_keeps_the_rest_and_settles(tmp_path: Path, text: str) -> None:
    _check_merge(tmp_path, text)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pyprojects())
def test_a_merge_into_any_valid_pyproject_more_examples(tmp_path: Path, text: str) -> None:
    _check_merge(tmp_path, text)


LOCKABLE = {  # each form with the user's own index serving mylib
    "inline uv": '[project]\nname = "x"\nversion = "1"\ndependencies = ["torch", "mylib"]\n[tool]\n'
                 'uv = { sources = { mylib = { index = "internal" } }, index = [{ name = "internal", url = "USER", '
                 'explicit = true }] }\n',
    "split array of tables": '[project]\nname = "x"\nversion = "1"\ndependencies = ["torch", "mylib"]\n\n'
                             '[[tool.uv.index]]\nname = "internal"\nurl = "USER"\nexplicit = true\n\n[tool.uv]\n'
                             'sources = { mylib = { index = "internal" } }\n\n[[tool.uv.index]]\nname = "mirror"\n'
                             'url = "USER"\nexplicit = true\n',
    "dotted keys": 'project.name = "x"\nproject.version = "1"\nproject.dependencies = ["torch", "mylib"]\n'
                   'tool.uv.index = [{ name = "internal", url = "USER", explicit = true }]\n'
                   'tool.uv.sources.mylib = { index = "internal" }\n',
}


@pytest.mark.slow
@pytest.mark.parametrize("form", LOCKABLE)
def test_uv_locks_a_merged_project(httpserver, tmp_path: Path, form: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Real `uv lock` reads the merged file: torch's build from the merged index, mylib from the user's."""
    from wheels import build_wheel, serve_wheels, uv_env

    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    serve_wheels(httpserver, "/whl/cpu", [build_wheel(wheels, "torch", "2.15.0+cpu")])
    serve_wheels(httpserver, "/user", [build_wheel(wheels, "mylib", "1.0")])
    serve_wheels(httpserver, "/simple", [build_wheel(wheels, "torch", "2.15.0")])  # the default index's build
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(LOCKABLE[form].replace("USER", httpserver.url_for("/user/")))
    base = httpserver.url_for("/whl").rstrip("/")
    assert main(["plan", *CPU, "--index-base", base, "--format", "pyproject", "--merge",
                 str(project / "pyproject.toml")]) == 0, capsys.readouterr().err
    env = uv_env(tmp_path, httpserver.url_for("/simple/"))
    locked = subprocess.run([uv, "lock"], cwd=project, capture_output=True, text=True, env=env)
    assert locked.returncode == 0, locked.stderr + (project / "pyproject.toml").read_text()
    lock = (project / "uv.lock").read_text()
    assert "2.15.0+cpu" in lock and 'name = "mylib"' in lock


def test_a_build_from_the_default_index_drops_the_source_naming_torch_installs_old_index(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\ndependencies = ["torch"]\n\n[[tool.uv.index]]\nname = "torch-install-cpu"\n'
                    'url = "https://download.pytorch.org/whl/cpu"\nexplicit = true\n\n[tool.uv.sources]\n'
                    'torch = { index = "torch-install-cpu" }\nmylib = { git = "https://g" }\n')
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = main(["plan", "--os", "macos", "--arch", "arm64", "--python", "3.12", "--format", "pyproject",
                     "--merge", str(path)])
    finally:
        os.chdir(here)
    assert code == 0, capsys.readouterr().err
    uv = _toml(path)["tool"]["uv"]
    assert uv == {"sources": {"mylib": {"git": "https://g"}}}
    assert path.read_text().startswith("[project]\n")
