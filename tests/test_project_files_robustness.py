"""The project files' readers on random documents of their own shapes (the keys each reads, values of every
TOML type where a string, a list or a table belongs): a plan is made, or one InputError names what is wrong; no
other exception, whatever the file holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomlkit
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from lanes import robustness
from torch_install.cli import main

WORDS = st.sampled_from(["torch", "torchvision", "xformers", "numpy", "pytorch", "pypi", "cu121", "dev", "test",
                         "*", "==2.5.1", ">=2.4", "2.5.1+cu121", "https://download.pytorch.org/whl/cu121",
                         "https://mirror.example.org/simple", "sys_platform == 'linux'", "== 'linux'", "3.10",
                         "requirements.txt", ".", "git", "-r x.txt", "1.0", "", "sha256"])
SCALARS = st.one_of(WORDS, st.integers(-3, 3), st.booleans(), st.text(max_size=8))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(WORDS, inner, max_size=3)), max_leaves=8)
KEYS = {
    "Pipfile": ["source", "packages", "dev-packages", "requires", "docs"],
    "pylock.toml": ["lock-version", "packages", "requires-python"],
    "pyproject.toml": ["project", "tool", "dependency-groups", "build-system"],
}
TOOL_KEYS = ["uv", "pdm", "poetry", "setuptools", "hatch"]
ENTRY_KEYS = ["name", "version", "index", "url", "source", "marker", "markers", "wheels", "hashes", "extras",
              "include_packages", "priority", "dependencies", "dynamic", "constraint-dependencies",
              "override-dependencies", "dev-dependencies", "file", "files", "vcs", "path", "git", "ref", "sys_platform",
              "python_version", "optional-dependencies"]
ENTRIES = st.dictionaries(st.sampled_from(ENTRY_KEYS), VALUES, max_size=4)


def document(kind: str) -> st.SearchStrategy[dict]:
    top = st.sampled_from(KEYS[kind])
    inner = st.one_of(VALUES, ENTRIES, st.lists(ENTRIES, max_size=3), st.dictionaries(WORDS, ENTRIES, max_size=3))
    if kind == "pyproject.toml":
        tool = st.dictionaries(st.sampled_from(TOOL_KEYS), st.one_of(ENTRIES, st.dictionaries(
            st.sampled_from(["source", "sources", "index", "dynamic", "dependencies", "metadata"]),
            st.one_of(ENTRIES, st.lists(ENTRIES, max_size=2), VALUES), max_size=3)), max_size=3)
        return st.fixed_dictionaries({"project": st.one_of(ENTRIES, st.just({"name": "x", "version": "0"}))},
                                     optional={"tool": tool, "dependency-groups": inner})
    return st.dictionaries(top, inner, max_size=4)


@robustness(300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(KEYS)), data=st.data())
def test_a_random_project_file_is_a_plan_or_one_line(kind: str, data: st.DataObject, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    text = tomlkit.dumps(data.draw(document(kind)))
    folder = tmp_path / "p"
    folder.mkdir(exist_ok=True)
    (folder / kind).write_text(text)
    (folder / "requirements.txt").write_text("torch\n")
    argv = ["-r", str(folder / kind)] if kind == "pylock.toml" else ["--project", str(folder / kind)]
    code = main(["plan", *argv, "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--offline", "--format",
                 "json"])
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err, (text, err)
    assert code in (0, 2, 4), (text, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, (text, err)
    else:
        json.loads(out)
    (folder / kind).unlink()


LOCK_SECTIONS = st.dictionaries(st.sampled_from(["_meta", "default", "develop"]),
                                st.one_of(VALUES, ENTRIES, st.dictionaries(WORDS, ENTRIES, max_size=3),
                                          st.fixed_dictionaries({"sources": st.lists(ENTRIES, max_size=2)},
                                                                optional={"requires": ENTRIES})), max_size=3)
SETUP_CFG = st.lists(st.one_of(st.sampled_from(["[options]", "[options.extras_require]", "install_requires =",
                                                "cuda =", "  torch>=2.4", "  -r x.txt", "  numpy; python_version>'3'",
                                                "dev = a; b", "file: r.txt", "[metadata]", "=", "  # c"]),
                               st.text(max_size=12)), max_size=8).map("\n".join)


@robustness(200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lock=LOCK_SECTIONS, setup_cfg=SETUP_CFG)
def test_a_random_pipfile_lock_or_setup_cfg_is_a_plan_or_one_line(lock: dict, setup_cfg: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "q"
    folder.mkdir(exist_ok=True)
    (folder / "Pipfile.lock").write_text(json.dumps(lock))
    (folder / "setup.cfg").write_text(setup_cfg)
    for argv in (["-r", str(folder / "Pipfile.lock"), "--group", "dev"], ["--project", str(folder), "--extra", "cuda"]):
        code = main(["plan", *argv, "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--offline", "--format",
                     "json"])
        out, err = capsys.readouterr()
        assert "internal error" not in err and code in (0, 2, 4), (lock, setup_cfg, err)
        assert code != 2 or len(err.strip().splitlines()) == 1, (lock, setup_cfg, err)
