"""A pipenv project's Pipfile, read as pipenv reads it: its packages and chosen categories, each package's source
(a PyTorch index source naming the family's build, as a uv source does), the first source pipenv's default for
the rest, and ``[requires]``'s Python, the one pipenv makes the environment with (pipenv's documentation, "Package
Indexes" and "Pipfile": the shapes written here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.cli import main

GPU = ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06", "--python", "3.12",
       "--offline", "--format", "json"]
MAC = ["--os", "macos", "--arch", "arm64", "--python", "3.12", "--offline", "--format", "json"]
MIRROR = '[[source]]\nurl = "https://mirror.example.org/simple"\nverify_ssl = true\nname = "pypi"\n\n'
PYTORCH = '[[source]]\nurl = "https://download.pytorch.org/whl/cu121"\nverify_ssl = true\nname = "pytorch"\n\n'


def plan(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, machine: list[str], *argv: str) -> dict:
    (tmp_path / "Pipfile").write_text(text)
    code = main(["plan", "--project", str(tmp_path), *argv, *machine])
    out, err = capsys.readouterr()
    found = json.loads(out)
    assert code == (4 if any(w["blocking"] for w in found["warnings"]) else 0), err
    return found


@pytest.mark.parametrize(("packages", "machine", "variant"), [
    ('torch = {version = "*", index = "pytorch"}\nrequests = "*"\n', GPU, "cu121"),
    ('torch = {version = "==2.4.1", index = "pytorch"}\n', GPU, "cu121"),
    ('torch = {version = "*", index = "pytorch", sys_platform = "== \'linux\'"}\ntorch-cpu = "*"\n', MAC, "default"),
    ('torch = {version = "*", index = "pytorch", markers = "sys_platform == \'linux\'"}\n', GPU, "cu121"),
    ('torch = "*"\n', GPU, "cu130"),  # the first source, the mirror, names no build: the machine's
])
def test_a_pytorch_index_source_names_the_build(packages: str, machine: list[str], variant: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    found = plan(tmp_path, capsys, f"{MIRROR}{PYTORCH}[packages]\n{packages}", machine)
    assert found["choice"]["variant"] == variant
    if variant == "cu121":
        assert found["choice"]["index_url"] == "https://download.pytorch.org/whl/cu121"
        assert "the cu121 build, as Pipfile [packages] torch from [[source]] pytorch names it" in found["reasons"]


def test_the_first_source_is_pipenvs_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pipenv's documented alternative default index: the first source serves what names none, torch too."""
    found = plan(tmp_path, capsys, f"{PYTORCH}[packages]\ntorch = \"*\"\ntorchvision = \"*\"\n", GPU)
    assert found["choice"]["variant"] == "cu121"
    assert any("(the first: pipenv's default)" in r for r in found["reasons"])


def test_the_others_come_from_the_sources_the_pipfile_names(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    text = (f"{MIRROR}{PYTORCH}" '[[source]]\nurl = "https://private.example.org/simple"\nverify_ssl = true\n'
            'name = "private"\n\n[packages]\ntorch = {version = "*", index = "pytorch"}\nrequests = "*"\n'
            'flask = "3.1.0"\nmylib = {version = ">=1.2", index = "private", extras = ["fast"]}\n'
            'tool = {git = "https://git.example.org/tool.git", ref = "v1.0"}\n'
            'wheel = {file = "https://files.example.org/wheel-1.0-py3-none-any.whl"}\n')
    found = plan(tmp_path, capsys, text, GPU)
    rides = found["commands"]["pip"].split(" && ")[1]
    for part in ("requests", "flask==3.1.0", "'mylib[fast]>=1.2'", "'tool @ git+https://git.example.org/tool.git@v1.0'",
                 "'wheel @ https://files.example.org/wheel-1.0-py3-none-any.whl'",
                 "--index-url https://mirror.example.org/simple", "--extra-index-url https://private.example.org/simple"):
        assert part in rides, rides


def test_the_requires_python_is_the_one_planned_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = f"{MIRROR}[packages]\ntorch = \"*\"\n\n[requires]\npython_version = \"3.9\"\n"
    found = plan(tmp_path, capsys, text, [a for a in GPU if a not in ("--python", "3.12")])
    assert found["machine"]["python"] == "3.9" and found["choice"]["torch"] == "2.8.0"  # the last for Python 3.9
    stated = plan(tmp_path, capsys, text, GPU)
    assert stated["machine"]["python"] == "3.12"
    assert any('Pipfile [requires] python_version = "3.9": the environment\'s Python is not Python 3.12' in n
               for n in stated["notes"])


def test_a_category_is_chosen_with_group(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (f"{MIRROR}[packages]\ntorch = \"*\"\n\n[dev-packages]\nxformers = \"==0.0.28.post1\"\n\n"
            "[docs]\nsphinx = \"*\"\n")
    assert plan(tmp_path, capsys, text, GPU, "--group", "dev")["choice"]["torch"] == "2.4.1"  # xformers' build's
    assert "sphinx" in plan(tmp_path, capsys, text, GPU, "--group", "docs")["commands"]["pip"]
    assert main(["plan", "--project", str(tmp_path), "--group", "test", *GPU]) == 2
    assert "--group test: " in capsys.readouterr().err


@pytest.mark.parametrize(("packages", "message"), [
    ('torch = {version = "*", index = "cu118"}', "packages.torch: index 'cu118' is no [[source]] (has: pypi)"),
    ('torch = {version = 2}', "packages.torch: version is not a string"),
    ('torch = ["*"]', "packages.torch is neither a version string nor a table"),
    ('torch = {version = "*", extras = "opt"}', "packages.torch: extras is not a list of names")])
def test_a_pipfile_pipenv_refuses_is_one_line(packages: str, message: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "Pipfile").write_text(f"{MIRROR}[packages]\n{packages}\n")
    assert main(["plan", "--project", str(tmp_path / "Pipfile"), *GPU]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err



LOCK = {
    "_meta": {"hash": {"sha256": "4e3e9d7c" * 8}, "pipfile-spec": 6, "requires": {"python_version": "3.10"},
              "sources": [{"name": "pypi", "url": "https://mirror.example.org/simple", "verify_ssl": True},
                          {"name": "pytorch", "url": "https://download.pytorch.org/whl/cu121", "verify_ssl": True}]},
    "default": {"requests": {"hashes": ["sha256:" + "7" * 64], "index": "pypi", "markers": "python_version >= '3.8'",
                             "version": "==2.32.3"},
                "torch": {"hashes": ["sha256:" + "0" * 64], "index": "pytorch", "version": "==2.5.1"}},
    "develop": {"xformers": {"hashes": ["sha256:" + "c" * 64], "index": "pypi", "version": "==0.0.28.post1"}},
}


@pytest.mark.parametrize(("argv", "torch"), [([], "2.5.1"), (["--group", "dev"], "2.4.1")])
def test_a_pipfile_lock_installs_as_locked(argv: list[str], torch: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """pipenv sync's lock: default (and develop with --group dev) pinned with their hashes, torch's build named by
    its source, the Python of _meta.requires."""
    (tmp_path / "Pipfile.lock").write_text(json.dumps(LOCK, indent=4))
    code = main(["plan", "-r", str(tmp_path / "Pipfile.lock"), *argv,
                 *[a for a in GPU if a not in ("--python", "3.12")]])
    out, err = capsys.readouterr()
    if torch == "2.4.1":  # xformers 0.0.28.post1 is built against 2.4.1, which the lock's 2.5.1 is not
        assert code == 2 and "xformers==0.0.28.post1 needs torch==2.4.1" in err
        return
    found = json.loads(out)
    assert code == 0, err
    assert (found["choice"]["torch"], found["choice"]["variant"], found["machine"]["python"]) == ("2.5.1", "cu121",
                                                                                                  "3.10")
    requirements = {r["requirement"]: r for r in found["request"]["requirements"]}
    assert requirements["requests==2.32.3 ; (python_version >= '3.8')"]["hashes"] == 1
    assert found["request"]["files"][0]["passthrough"] is False


@pytest.mark.slow
def test_install_into_another_python_than_the_pipfile_names_says_so(tmp_path: Path, make_venv,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """install plans for the interpreter it installs into (a fact), and a note says the Pipfile names another."""
    python = make_venv(tmp_path / "env")
    (tmp_path / "Pipfile").write_text(f"{MIRROR}[packages]\ntorch = \"*\"\n\n[requires]\npython_version = \"3.7\"\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    assert main(["install", "--project", str(tmp_path), "--python", str(python), "--dry-run", "--offline",
                 "--variant", "cpu"]) == 0
    said = capsys.readouterr()
    assert "Pipfile [requires] python_version = \"3.7\": the environment's Python is not Python 3." in \
        said.out + said.err
