"""The guard per installer, end to end with real pip, real uv and real venvs against loopback indexes laid out as
the PyTorch index and the default index are for torch 2.15.0: the PyTorch index's torchvision 0.29.2 and torchaudio
2.11.1 carry no label (stable-ABI wheels), and the default index has the same versions as its CUDA 13.2 build.

- pip: `install --pin`, then `pip install torchvision` from the default index takes that other build (no pin can
  tell them apart, and the pin says so); the doctor finds it, and `doctor --fix` puts the right one back.
- uv: the pin of a uv project is the build's index in its sources, so `uv lock` keeps passing for every extra.
- The README's guard example is what these commands print.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wheels import build_wheel, serve_wheels

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout and pip.conf")]

ROOT = Path(__file__).resolve().parents[1]
UV = shutil.which("uv") or str(Path(sys.executable).parent / "uv")


def _version_py(version: str, cuda: str | None) -> str:
    return f"__version__ = '{version}'\ndebug = False\ncuda = {cuda!r}\ngit_version = 'x'\nhip = None\nxpu = None\n"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """pip and uv reading none of this machine's configuration; uv's default index is the loopback one."""
    home = tmp_path / "home"
    home.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV", "UV_"))}
    return {**clean, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CONFIG_DIRS": str(home),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", "TORCH_INSTALL_DEFAULT_INDEX": "none",
            "TORCH_INSTALL_CACHE_DIR": str(tmp_path / "cache"), "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
            "UV_PYTHON": sys.executable, "UV_PYTHON_DOWNLOADS": "never"}


@pytest.fixture
def indexes(httpserver, tmp_path: Path) -> dict[str, str]:
    """/whl/cpu and /whl/cu126 (the PyTorch index's layout) and /simple (the default index's), each wheel's
    version.py naming its build."""
    wheels = tmp_path / "wheels"
    made: dict[str, list[Path]] = {"/whl/cpu": [], "/whl/cu126": [], "/simple": []}

    def add(where: str, name: str, version: str, build: str, cuda: str | None = None, **more: object) -> None:
        directory = wheels / where.strip("/").replace("/", "-")
        directory.mkdir(parents=True, exist_ok=True)
        public = version.split("+")[0]
        made[where].append(build_wheel(directory, name, version, version_py=_version_py(f"{public}+{build}", cuda),
                                       **more))  # type: ignore[arg-type]

    for torch in ("2.15.0", "2.14.0"):
        add("/whl/cpu", "torch", f"{torch}+cpu", "cpu")
    add("/whl/cpu", "torchvision", "0.29.2", "cpu", requires=["torch>=2.14.0"])
    add("/whl/cpu", "torchvision", "0.29.0+cpu", "cpu", requires=["torch==2.14.0"])
    add("/whl/cpu", "torchaudio", "2.11.1", "cpu", requires=["torch>=2.11"])
    add("/whl/cu126", "torch", "2.14.1+cu126", "cu126", "12.6")
    add("/whl/cu126", "torchvision", "0.29.1+cu126", "cu126", "12.6", requires=["torch>=2.14.0"])
    add("/simple", "torch", "2.15.0", "cu132", "13.2")
    add("/simple", "torch", "2.14.0", "cu130", "13.0")
    add("/simple", "torchvision", "0.29.2", "cu132", "13.2", requires=["torch>=2.14.0"])
    add("/simple", "torchvision", "0.29.0", "cu130", "13.0", requires=["torch==2.14.0"])
    add("/simple", "torchaudio", "2.11.1", "cu132", "13.2", requires=["torch>=2.11"])
    made["/simple"] += [build_wheel(wheels / "simple", "vllm", "0.33.0",
                                    requires=["torch==2.14.0", "torchvision==0.29.0"]),
                        build_wheel(wheels / "simple", "numpy", "2.0.0")]
    for prefix, files in made.items():
        serve_wheels(httpserver, prefix, files)
    return {"base": httpserver.url_for("/whl").rstrip("/"), "default": httpserver.url_for("/simple/")}


def _install(project: Path, indexes: dict[str, str], env: dict[str, str], *args: str,
             python: Path | None = None) -> subprocess.CompletedProcess[str]:
    where = ["--python", str(python)] if python else []
    return subprocess.run([sys.executable, "-m", "torch_install", "install", *where, "--variant", "cpu",
                           "--index-base", indexes["base"], *args], capture_output=True, text=True, env=env,
                          cwd=project)


def _version_of(python: Path, package: str) -> str:
    """What the installed package's version.py says (its build)."""
    code = f"import ast, importlib.util as u; print(u.find_spec({package!r}).submodule_search_locations[0])"
    where = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    return re.search(r"__version__ = '([^']+)'", (Path(where) / "version.py").read_text())[1]  # type: ignore[index]


def test_a_later_pip_install_of_an_unlabelled_companion_is_said_found_and_fixed(tmp_path: Path, make_venv,
                                                                                 indexes: dict[str, str],
                                                                                 env: dict[str, str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    python = make_venv(project / ".venv")
    pinned = _install(project, indexes, env, "torch", "--pin")
    assert pinned.returncode == 0, pinned.stderr
    assert "torch-install: torchvision==0.29.2, torchaudio==2.11.1: no label, and the default index has the same " \
           "versions as another build, which a pin cannot tell apart" in pinned.stderr
    later = subprocess.run([str(python), "-m", "pip", "install", "torchvision", "--index-url", indexes["default"]],
                           capture_output=True, text=True, env=env)
    assert later.returncode == 0, later.stderr  # the pin holds the version, and the default index has it
    assert _version_of(python, "torchvision") == "0.29.2+cu132"
    doctor = [sys.executable, "-m", "torch_install", "doctor", "--python", str(python), "--index-base",
              indexes["base"], "--target", str(_cpu_profile(tmp_path))]
    report = json.loads(subprocess.run([*doctor, "--json"], capture_output=True, text=True, env=env).stdout)
    [found] = [f for f in report["findings"] if f["code"] == "companion-mismatch"]
    assert found["evidence"][0] == ("torchvision is a cu132 build, torch a cpu build (torchvision/version.py: "
                                    "__version__ = '0.29.2+cu132')")
    fixed = subprocess.run([*doctor, "--fix", "--yes"], capture_output=True, text=True, env=env)
    assert "--force-reinstall --no-deps torchvision==0.29.2 --index-url " in fixed.stderr + fixed.stdout
    assert fixed.returncode == 0 and "the fix changed nothing" not in fixed.stderr, fixed.stdout + fixed.stderr
    assert _version_of(python, "torchvision") == "0.29.2+cpu" and _version_of(python, "torch") == "2.15.0+cpu"
    assert "After the fix:" in fixed.stdout and "Healthy" in fixed.stdout.split("After the fix:")[1]


def test_a_fix_that_changes_nothing_says_so(tmp_path: Path, make_venv, indexes: dict[str, str],
                                            env: dict[str, str], httpserver) -> None:
    """The fix's index serves the same wrong build again: the fix ran, and the doctor says what it left."""
    python = make_venv(tmp_path / "env")
    assert _install(tmp_path, indexes, env, "torch", python=python).returncode == 0
    bad = tmp_path / "bad"
    bad.mkdir()
    serve_wheels(httpserver, "/bad/cpu", [build_wheel(bad, "torchvision", "0.29.2", requires=["torch>=2.14.0"],
                                                      version_py=_version_py("0.29.2+cu132", "13.2"))])
    assert subprocess.run([str(python), "-m", "pip", "install", "torchvision", "--index-url", indexes["default"]],
                          capture_output=True, env=env).returncode == 0
    fixed = subprocess.run([sys.executable, "-m", "torch_install", "doctor", "--python", str(python), "--index-base",
                            httpserver.url_for("/bad").rstrip("/"), "--target", str(_cpu_profile(tmp_path)), "--fix",
                            "--yes"], capture_output=True, text=True, env=env)
    assert fixed.returncode == 1
    assert "torch-install: warning: the fix changed nothing of this: [companion-mismatch] torchvision does not match " \
           "the installed torch (torchvision is a cu132 build, torch a cpu build" in fixed.stderr, fixed.stderr


def _cpu_profile(tmp_path: Path) -> Path:
    profile = tmp_path / "cpu.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.11", "glibc": "2.35", "gpus": []}))
    return profile


def _uv_lock(project: Path, env: dict[str, str], default: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([UV, "lock", "--default-index", default], capture_output=True, text=True, env=env,
                          cwd=project)


def _locked(project: Path, name: str) -> set[tuple[str, str]]:
    """(version, index) of each entry of ``name`` in uv.lock."""
    import tomllib

    lock = tomllib.loads((project / "uv.lock").read_text())
    return {(p["version"], p["source"].get("registry", "")) for p in lock["package"] if p["name"] == name}


TWO_EXTRAS = """\
[project]
name = "imgcls"
version = "0.1"
requires-python = ">=3.10"
dependencies = ["torch", "numpy"]

[project.optional-dependencies]
vision = ["torchvision"]
serve = ["vllm"]
"""


def test_uv_lock_passes_for_every_extra_after_the_pin(tmp_path: Path, make_venv, indexes: dict[str, str],
                                                      env: dict[str, str]) -> None:
    """The pin writes where the build comes from (sources), not a version: the serve extra, whose vLLM needs torch
    2.14.0 and torchvision 0.29.0, still locks, from the build's index."""
    project = tmp_path / "imgcls"
    project.mkdir()
    (project / "pyproject.toml").write_text(TWO_EXTRAS)
    make_venv(project / ".venv")
    pinned = _install(project, indexes, env, "torch", "torchvision", "--pin")
    assert pinned.returncode == 0, pinned.stderr
    assert f"uv sync and uv lock in {project} keep the build too ({project / 'pyproject.toml'}: [tool.uv.sources] " \
           "of torch, torchvision)" in pinned.stderr
    assert (project / "pyproject.toml").read_text().startswith(TWO_EXTRAS)  # the user's part as it was
    assert sorted(p.name for p in project.iterdir()) == [".venv", "pyproject.toml"]
    locked = _uv_lock(project, env, indexes["default"])
    assert locked.returncode == 0, locked.stderr
    cpu = f"{indexes['base']}/cpu"
    assert ("2.14.0+cpu", cpu) in _locked(project, "torch")  # the serve extra's torch, from the build's index
    vision = _locked(project, "torchvision")  # Linux's from the build's index; other platforms' from the default
    assert {i for _, i in vision} == {cpu, indexes["default"]} and ("0.29.0+cpu", cpu) in vision
    synced = subprocess.run([UV, "sync", "--extra", "vision", "--default-index", indexes["default"]],
                            capture_output=True, text=True, env=env, cwd=project)
    assert synced.returncode == 0, synced.stderr
    assert _version_of(project / ".venv" / "bin" / "python", "torch").endswith("+cpu")
    assert _version_of(project / ".venv" / "bin" / "python", "torchvision").endswith("+cpu")


UV_GUIDE = """\
[project]
name = "segdemo"
version = "0.1"
requires-python = ">=3.10"
dependencies = ["numpy"]

[project.optional-dependencies]
torch-cpu = ["torch", "torchvision"]
torch-cu126 = ["torch", "torchvision"]

[tool.uv]
conflicts = [[{ extra = "torch-cpu" }, { extra = "torch-cu126" }]]

[tool.uv.sources]
torch = [
  { index = "pytorch-cpu", extra = "torch-cpu" },
  { index = "pytorch-cu126", extra = "torch-cu126" },
]

[[tool.uv.index]]
name = "pytorch-cpu"
url = "{base}/cpu"
explicit = true

[[tool.uv.index]]
name = "pytorch-cu126"
url = "{base}/cu126"
explicit = true
"""


def test_a_project_that_chooses_its_build_per_extra_keeps_its_sources(tmp_path: Path, make_venv,
                                                                      indexes: dict[str, str],
                                                                      env: dict[str, str]) -> None:
    """uv's guide: the build per extra, through torch's sources. The pin leaves them, and gives torchvision, which
    has none, the same: both extras lock, each from its own index. Where torchvision is no requirement of those
    extras, uv takes no source of theirs for it: that is said, and the file left as it is."""
    project = tmp_path / "segdemo"
    project.mkdir()
    text = UV_GUIDE.replace("{base}", indexes["base"])
    (project / "pyproject.toml").write_text(text)
    make_venv(project / ".venv")
    pinned = _install(project, indexes, env, "torch", "torchvision", "--pin")
    assert pinned.returncode == 0, pinned.stderr
    assert "uv's sources of torch in the project are its own: torchvision now takes the same" in pinned.stderr
    after = (project / "pyproject.toml").read_text()
    assert after.startswith(text.split("[[tool.uv.index]]")[0].rstrip("\n").rsplit("\n]", 1)[0])
    assert "torch-install-" not in after  # no index of ours: the project's own serve
    locked = _uv_lock(project, env, indexes["default"])
    assert locked.returncode == 0, locked.stderr
    assert {index for _, index in _locked(project, "torch")} == {f"{indexes['base']}/cpu", f"{indexes['base']}/cu126"}
    assert {f"{indexes['base']}/cpu", f"{indexes['base']}/cu126"} <= {i for _, i in _locked(project, "torchvision")}
    base = text.replace('dependencies = ["numpy"]', 'dependencies = ["torchvision"]').replace(', "torchvision"]', "]")
    (project / "pyproject.toml").write_text(base)
    again = _install(project, indexes, env, "torch", "torchvision", "--pin", "--", "--force-reinstall")
    assert again.returncode == 0 and (project / "pyproject.toml").read_text() == base, again.stderr
    assert "torchvision: torch's sources are per extra (torch-cpu, torch-cu126), and uv takes an extra's source " \
           "only for that extra's own requirements: add torchvision to them to take the same build" in again.stderr
    assert _uv_lock(project, env, indexes["default"]).returncode == 0


def _readme_guard() -> tuple[str, list[str], str]:
    """The README's guard example: the command, the torch-install lines it shows, the sources block it shows."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("### Keeping the build installed", 1)[1]
    block = section.split("```\n", 2)[1]
    command = re.search(r"^\$ (torch-install install [^\n]+)$", block, re.M)[1]  # type: ignore[index]
    lines = [line for line in block.splitlines() if line.startswith("torch-install: ")]
    sources = block.split("$ cat pyproject.toml\n", 1)[1].split("```", 1)[0].rstrip("\n")
    return command, lines, sources


def test_the_readme_guard_example_is_real_output(tmp_path: Path, make_venv, indexes: dict[str, str],
                                                 env: dict[str, str]) -> None:
    command, lines, sources = _readme_guard()
    assert lines and "UV_CONSTRAINT=" in "".join(lines)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(sources.split("\n\n[[tool.uv.index]]")[0] + "\n")
    make_venv(project / ".venv")
    shown = re.search(r"--index-base (\S+)", command)[1]  # type: ignore[index]
    argv = command.replace(shown, indexes["base"]).split()[1:]
    done = subprocess.run([sys.executable, "-m", "torch_install", *argv], capture_output=True, text=True, env=env,
                          cwd=project)
    assert done.returncode == 0, done.stderr
    printed = [line.replace(str(project), "~/project").replace(indexes["base"], shown)
               for line in done.stderr.splitlines() if line.startswith("torch-install: ")]
    assert printed == lines
    assert (project / "pyproject.toml").read_text().rstrip("\n").replace(indexes["base"], shown) == sources
