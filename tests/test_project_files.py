"""pyproject.toml files as their tools read them: a requirement on the project's own extras (``myproj[cuda]``
inside ``myproj``) is those extras' requirements, as pip and uv read it, each extra once, its marker kept, extras
that include each other named in one note; dependency groups follow ``include-group`` (a cycle is one line)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.errors import InputError
from torch_install.project.pyproject import read_pyproject

LINUX = ["--os", "linux", "--arch", "x86_64", "--python", "3.12"]
RTX = [*LINUX, "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06"]

SELF = """
[project]
name = "My_Proj"
version = "0.1"
dependencies = ["numpy", "my-proj[torch] ; sys_platform == 'linux'"]

[project.optional-dependencies]
torch = ["torch>=2.6", "torchvision"]
cuda = ["my_proj[torch,extra]", "xformers"]
extra = ["my-proj[cuda]", "einops"]
all = ["my-proj[cuda,nope]"]

[dependency-groups]
test = ["pytest"]
dev = ["my-proj[all]", {include-group = "test"}, "my-proj"]
"""


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main(["plan", *argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_the_projects_own_extras_are_read_in_place_each_once(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(SELF)
    notes: list[str] = []
    wanted = read_pyproject(str(tmp_path), groups=["dev"], notes=notes)
    assert [w.text for w in wanted] == [
        "numpy", 'torch>=2.6; sys_platform == "linux"', 'torchvision; sys_platform == "linux"',
        "einops", "xformers", "pytest"]
    assert wanted[1].origin.endswith("project.optional-dependencies.torch[0]")
    path = tmp_path / "pyproject.toml"
    assert notes[0] == (f"{path}: my-proj[torch] ; sys_platform == 'linux', my-proj[all], my-proj[cuda,nope], "
                        "my_proj[torch,extra], my-proj[cuda] name the project's own extras: their requirements are "
                        "read in place")
    assert f"{path}: extras include each other (all -> cuda -> extra -> cuda): each is read once" in notes
    assert any("the project defines no extra nope (has: all, cuda, extra, torch)" in n for n in notes)
    assert any("dependency-groups.dev[2]: my-proj is the project itself" in n for n in notes)


def test_an_extra_chosen_with_extra_is_not_read_twice(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(SELF)
    wanted = read_pyproject(str(tmp_path), extras=["torch", "cuda"])
    assert [w.text for w in wanted] == ["numpy", "torch>=2.6", "torchvision", "einops", "xformers"]


def test_the_plan_installs_what_the_projects_own_extras_name(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text(SELF)
    p = plan(capsys, *RTX, "--project", str(tmp_path), "--extra", "cuda")
    assert p["choice"]["packages"] == {"torch": "2.15.0+cu130", "torchvision": "0.29.2"}
    assert [c["name"] for c in p["choice"]["companions"]] == ["xformers"]
    assert "my-proj" not in p["commands"]["pip"] and "my_proj" not in p["commands"]["pip"]
    assert p["request"]["others"] == ["numpy", "einops", "xformers"]
    windows = plan(capsys, "--os", "windows", "--arch", "x86_64", "--python", "3.12", "--project", str(tmp_path))
    assert windows["choice"]["packages"] == {"torch": "2.15.0+cpu"}  # the marked extra does not apply there


@pytest.mark.parametrize(("text", "message"), [
    ('[project]\nname = "x"\n[dependency-groups]\na = [{include-group = "b"}]\nb = [{include-group = "c"}]\n'
     'c = [{include-group = "a"}]\n', r"dependency-groups include themselves \(a -> b -> c -> a\)"),
    ('[project]\nname = "x"\n[project.optional-dependencies]\n'
     + "".join(f'e{i} = ["x[e{i + 1}]"]\n' for i in range(40)) + 'e40 = ["numpy"]\n',
     r"extras naming the project's own extras nest more than 32 deep \(e0 -> … -> e32\)"),
])
def test_a_cycle_or_a_chain_too_deep_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(InputError, match=message):
        read_pyproject(str(tmp_path), groups=["a"] if "dependency-groups" in text else [],
                       extras=["e0"] if "e0" in text else [])


# ---- [tool.uv.sources] and [[tool.uv.index]] --------------------------------------------------------------------

CU118 = """
[project]
name = "seg"
version = "0.1"
dependencies = ["torch>=2.0", "torchvision", "numpy", "mylib"]

[tool.uv.sources]
torch = { index = "pytorch-cu118" }
torchvision = { index = "pytorch-cu118" }
mylib = { index = "corp" }

[[tool.uv.index]]
name = "pytorch-cu118"
url = "https://download.pytorch.org/whl/cu118"
explicit = true

[[tool.uv.index]]
name = "corp"
url = "https://corp.example/simple"
explicit = true
"""

# the uv documentation's pattern: a CPU and a CUDA extra that conflict, each with its own index, and a wheel URL
# source for Linux only
EXTRAS = """
[project]
name = "seg"
version = "0.1"
dependencies = ["numpy", "flash-attn", "mypkg", "helper"]

[project.optional-dependencies]
cpu = ["torch>=2.5", "torchvision"]
cu124 = ["torch>=2.5", "torchvision"]

[dependency-groups]
dev = ["pytest"]

[tool.uv]
conflicts = [[{ extra = "cpu" }, { extra = "cu124" }]]

[tool.uv.sources]
torch = [
  { index = "pytorch-cpu", extra = "cpu" },
  { index = "pytorch-cu124", extra = "cu124", marker = "sys_platform == 'linux'" },
]
torchvision = [
  { index = "pytorch-cpu", extra = "cpu" },
  { index = "pytorch-cu124", extra = "cu124", marker = "sys_platform == 'linux'" },
]
flash-attn = { url = "FLASH", marker = "sys_platform == 'linux'" }
mypkg = { git = "https://github.com/me/mypkg", tag = "v1.0" }
helper = { path = "../helper", editable = true }
pytest = { index = "mirror", group = "dev" }

[[tool.uv.index]]
name = "pytorch-cpu"
url = "https://download.pytorch.org/whl/cpu"
explicit = true

[[tool.uv.index]]
name = "pytorch-cu124"
url = "https://download.pytorch.org/whl/cu124"
explicit = true

[[tool.uv.index]]
name = "mirror"
url = "https://mirror.example/simple"
""".replace("FLASH", "https://github.com/Dao-AILab/flash-attention/releases/download/v2.7.4.post1/"
                     "flash_attn-2.7.4.post1+cu12torch2.5cxx11abiFALSE-cp312-cp312-linux_x86_64.whl")


def project(tmp_path: Path, text: str) -> str:
    (tmp_path / "pyproject.toml").write_text(text)
    return str(tmp_path)


def test_torch_from_a_cu118_index_is_the_cu118_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *RTX, "--project", project(tmp_path, CU118))
    assert (p["choice"]["torch"], p["choice"]["variant"], p["gpu_accelerated"]) == ("2.7.1", "cu118", True)
    assert p["choice"]["index_url"] == "https://download.pytorch.org/whl/cu118"
    assert p["choice"]["packages"] == {"torch": "2.7.1+cu118", "torchvision": "0.22.1+cu118"}
    assert any('the cu118 build, as [tool.uv.sources] torch = { index = "pytorch-cu118" }' in r for r in p["reasons"])
    second = p["commands"]["pip"].split(" && ")[1]
    assert "mylib --extra-index-url https://corp.example/simple" in second  # the others' index, for their step
    assert any("mylib from the index 'corp': pip has no index per package" in n for n in p["notes"])


def test_a_cu118_index_that_does_not_run_here_is_a_blocker_naming_what_would(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *LINUX, "--project", project(tmp_path, CU118))
    blockers = [w["message"] for w in p["warnings"] if w["blocking"]]
    assert p["choice"]["variant"] == "cu118" and blockers
    assert "torch 2.15.0+cpu runs here on the CPU: the project's configuration without [tool.uv.sources] torch = " \
        '{ index = "pytorch-cu118" }, [tool.uv.sources] torchvision = { index = "pytorch-cu118" } gets it' \
        in blockers[0]
    old_driver = plan(capsys, *RTX[:-1], "450.80.02", "--project", str(tmp_path))
    assert any(w["code"] == "driver-too-old" and w["blocking"] for w in old_driver["warnings"])


@pytest.mark.parametrize(("argv", "variant", "index"), [
    (["--extra", "cu124"], "cu124", "https://download.pytorch.org/whl/cu124"),
    (["--extra", "cpu"], "cpu", "https://download.pytorch.org/whl/cpu"),
    ([], "cu124", "https://download.pytorch.org/whl/cu124"),  # no source: the newest build for flash-attn's torch
])
def test_sources_keyed_by_extra_apply_with_that_extra(argv: list[str], variant: str, index: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *RTX, "--project", project(tmp_path, EXTRAS), *argv)
    assert (p["choice"]["variant"], p["choice"]["index_url"]) == (variant, index)
    assert any("[tool.uv.sources] torch" in r for r in p["reasons"]) == bool(argv)


def test_a_sources_marker_is_the_targets_to_decide(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    windows = ["--os", "windows", "--arch", "x86_64", "--python", "3.12", "--gpu", "RTX 4090", "--nvidia-driver",
               "580.88"]
    p = plan(capsys, *windows, "--project", project(tmp_path, EXTRAS), "--extra", "cu124")
    assert p["choice"]["variant"] != "cu124"  # the cu124 source is for Linux: Windows gets its own plan
    assert "flash_attn-2.7.4.post1" not in p["commands"]["pip"]  # the wheel URL is for Linux only


def test_url_git_path_and_group_sources_make_the_requirements_uv_would_install(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *RTX, "--project", project(tmp_path, EXTRAS), "--extra", "cu124", "--group", "dev")
    flash = [c for c in p["choice"]["companions"] if c["name"] == "flash-attn"]
    assert flash and flash[0]["from"] == "url" and "flash_attn-2.7.4.post1" in flash[0]["requirement"]
    assert p["choice"]["torch"] == "2.5.1"  # the wheel's label: built for torch 2.5, CUDA 12
    others = p["request"]["others"]
    assert "mypkg @ git+https://github.com/me/mypkg@v1.0" in others
    assert 'flash-attn; sys_platform != "linux"' in others  # where the URL's marker does not hold: the index
    assert [r for r in p["request"]["requirements"] if r["editable"]][0]["requirement"] == \
        str(tmp_path.parent / "helper")
    assert "pytest" in others and "--extra-index-url https://mirror.example/simple" in p["commands"]["pip"]


def test_what_the_product_writes_for_a_uv_project_reads_back_to_the_same_plan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = plan(capsys, *RTX, "torch==2.7.1+cu118", "torchvision")
    assert main(["plan", *RTX, "torch==2.7.1+cu118", "torchvision", "--format", "pyproject"]) == 0
    written = capsys.readouterr().out
    (tmp_path / "pyproject.toml").write_text(written.replace("[project]\n", '[project]\nname = "x"\n'))
    again = plan(capsys, *RTX, "--project", str(tmp_path))
    assert again["choice"]["packages"] == first["choice"]["packages"]


@pytest.mark.parametrize(("text", "message"), [
    ('[project]\nname = "x"\n[tool.uv.sources]\ntorch = { index = "nope" }\n',
     r"tool.uv.sources.torch names the index 'nope', which no \[\[tool.uv.index\]\] defines \(has: none\)"),
    ('[project]\nname = "x"\n[tool.uv.sources]\ntorch = "cu118"\n', r"tool.uv.sources.torch is not a source table"),
    ('[project]\nname = "x"\n[tool.uv]\nindex = { url = "x" }\n', r"tool.uv.index is not an array of tables"),
])
def test_a_bad_uv_table_is_one_line_naming_it(tmp_path: Path, text: str, message: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *LINUX, "--project", project(tmp_path, text)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    import re

    assert re.search(message, err), err


@pytest.mark.parametrize("marker", ["sys_platform == 'linux'", "python_version < '3.12' or os_name == 'nt'",
                                    "platform_machine in 'x86_64 AMD64' and (sys_platform != 'darwin' or "
                                    "python_version >= '3.11')"])
def test_a_negated_marker_holds_exactly_where_the_marker_does_not(marker: str) -> None:
    from itertools import product

    from packaging.markers import Marker

    from torch_install.markers import negated

    opposite = negated(marker)
    assert opposite is not None
    for platform, python, machine, os_name in product(("linux", "win32", "darwin"), ("3.10", "3.11", "3.12"),
                                                      ("x86_64", "arm64"), ("posix", "nt")):
        env = {"sys_platform": platform, "python_version": python, "platform_machine": machine, "os_name": os_name}
        assert Marker(marker).evaluate(env) != Marker(opposite).evaluate(env)
    assert negated("python_version ~= '3.10'") is None  # no opposite operator: the caller keeps the requirement


@pytest.mark.slow
@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_install_takes_the_projects_cu118_index_and_its_own_extra_with_real_pip_and_uv(
        httpserver, tmp_path: Path, make_venv, installer: str) -> None:
    """A uv project as its author writes it, installed as a user would: ``demo[gpu]`` inside demo names torch and
    torchvision, whose ``[tool.uv.sources]`` index is a (loopback) cu118 index; the cu118 build comes from it,
    numpy from the user's index, and nothing installs "demo" from an index."""
    import os
    import subprocess
    import sys

    from wheels import build_wheel, serve_wheels

    default, cu118 = tmp_path / "default", tmp_path / "cu118"
    default.mkdir()
    cu118.mkdir()
    serve_wheels(httpserver, "/simple", [build_wheel(default, "numpy", "1.26.4"),
                                         build_wheel(default, "torch", "2.7.1", requires=["numpy"])])
    serve_wheels(httpserver, "/whl/cu118", [
        build_wheel(cu118, "numpy", "1.26.4"), build_wheel(cu118, "torch", "2.7.1+cu118", requires=["numpy"]),
        build_wheel(cu118, "torchvision", "0.22.1+cu118", requires=["torch==2.7.1", "numpy"])])
    index = httpserver.url_for("/whl/cu118")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "pyproject.toml").write_text(f"""
[project]
name = "demo"
version = "0.1"
dependencies = ["demo[gpu]", "numpy"]

[project.optional-dependencies]
gpu = ["torch>=2.6", "torchvision"]

[tool.uv.sources]
torch = {{ index = "pytorch-cu118" }}
torchvision = {{ index = "pytorch-cu118" }}

[[tool.uv.index]]
name = "pytorch-cu118"
url = "{index}"
explicit = true
""")
    simple = httpserver.url_for("/simple").rstrip("/") + "/"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "VIRTUAL_ENV"))}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
               XDG_CONFIG_DIRS=str(tmp_path / "xdg"), PIP_INDEX_URL=simple, UV_DEFAULT_INDEX=simple,
               PIP_DISABLE_PIP_VERSION_CHECK="1", UV_NO_CACHE="1", TORCH_INSTALL_DEFAULT_INDEX="none",
               TORCH_INSTALL_CACHE_DIR=str(tmp_path / "cache"), TORCH_INSTALL_CUDA_ARCH="8.9",
               TORCH_INSTALL_NVIDIA_DRIVER="560.35.03",
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    python = make_venv(tmp_path / "env", with_pip=installer == "pip")
    done = subprocess.run([sys.executable, "-m", "torch_install", "install", "--project", str(tmp_path / "proj"),
                           "--python", str(python), "--installer", installer], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    code = "import importlib.metadata as m; print(m.version('torch'), m.version('torchvision'), m.version('numpy'))"
    versions = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert versions == ["2.7.1+cu118", "0.22.1+cu118", "1.26.4"]
    assert not any("/demo/" in str(entry[0].path) for entry in httpserver.log)


# ---- what pip is configured with, and what the user wrote ------------------------------------------------------

def test_pips_configured_constraints_bound_the_choice_and_are_given_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    cap = tmp_path / "cap.txt"
    cap.write_text("torch<=2.14.1\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(cap))
    p = plan(capsys, *LINUX, "torch", "numpy")
    assert p["choice"]["torch"] == "2.14.1"
    assert f"pip's configured constraints ($PIP_CONSTRAINT): {cap} bound the choice, and each step is given them" \
        in p["notes"]
    assert f"-c {cap}" in p["commands"]["uv"].split(" && ")[1]  # uv reads no PIP_CONSTRAINT: the step names it
    assert " && " not in plan(capsys, *LINUX, "torch")["commands"]["pip"]  # constraints alone install nothing
    monkeypatch.delenv("PIP_CONSTRAINT")
    (tmp_path / "conf" / "pip").mkdir(parents=True)
    (tmp_path / "conf" / "pip" / "pip.conf").write_text(f"[install]\nconstraint = {cap} {tmp_path / 'gone.txt'}\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    code = main(["plan", *LINUX, "torch", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["choice"]["torch"] == "2.14.1"
    assert f"pip's configured constraint file {tmp_path / 'gone.txt'} " in err and "cannot be read" in err


def test_a_configured_constraint_named_by_url_is_fetched_as_pip_fetches_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], httpserver) -> None:
    """pip takes a URL for a constraint file (PIP_CONSTRAINT, pip.conf's constraint, -c): it is read over the
    index transport (loopback http here), its relative includes relative to its URL; offline, or where it cannot be
    read, a warning names it as not applied."""
    httpserver.expect_request("/c/constraints.txt").respond_with_data("-c more.txt\nnumpy<3\n")
    httpserver.expect_request("/c/more.txt").respond_with_data("torch<=2.14.1\n")
    httpserver.expect_request("/c/gone.txt").respond_with_data("", status=404)
    url = httpserver.url_for("/c/constraints.txt")
    monkeypatch.setenv("PIP_CONSTRAINT", url)
    p = plan(capsys, *LINUX, "torch", "numpy")
    assert p["choice"]["torch"] == "2.14.1"
    assert f"pip's configured constraints ($PIP_CONSTRAINT): {url} bound the choice, and each step is given them" \
        in p["notes"]
    assert f"-c {url}" in p["commands"]["uv"].split(" && ")[1]
    code = main(["plan", *LINUX, "torch", "--offline", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["choice"]["torch"] != "2.14.1"
    assert f"pip's configured constraint file {url} ($PIP_CONSTRAINT) is not fetched with --offline: not applied" \
        in err
    monkeypatch.delenv("PIP_CONSTRAINT")
    (tmp_path / "conf" / "pip").mkdir(parents=True)
    gone, plain = httpserver.url_for("/c/gone.txt"), "http://constraints.example/c.txt"
    (tmp_path / "conf" / "pip" / "pip.conf").write_text(f"[install]\nconstraint = {gone} {plain}\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")
    code = main(["plan", *LINUX, "torch", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["choice"]["torch"] != "2.14.1"
    assert f"pip's configured constraint file {gone} ({tmp_path / 'conf' / 'pip' / 'pip.conf'} [install]) cannot be " \
           "read (" in err and "404" in err
    assert f"{plain}: only https URLs are fetched (plain http only for loopback)): not applied to the plan" in err
    assert main(["plan", *LINUX, "torch", "-c", url, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["choice"]["torch"] == "2.14.1"
    spaced = tmp_path / "my caps" / "cap.txt"
    spaced.parent.mkdir()
    spaced.write_text("torch<=2.14.1\n")
    monkeypatch.setenv("PIP_CONSTRAINT", spaced.as_uri())  # a file: URL is the file it names, as pip reads it
    assert plan(capsys, *LINUX, "torch")["choice"]["torch"] == "2.14.1"


def test_a_profile_of_another_machine_is_not_bound_by_this_ones_pip(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    cap = tmp_path / "cap.txt"
    cap.write_text("torch<=2.14.1\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(cap))
    (tmp_path / "t.json").write_text('{"os": "linux", "arch": "x86_64", "python": "3.12"}')
    assert plan(capsys, "--target", str(tmp_path / "t.json"))["choice"]["torch"] == "2.15.0"
    other = "macos" if sys.platform.startswith("linux") else "linux"  # another OS than this one: not this pip's
    assert plan(capsys, "--os", other, "--arch", "arm64" if other == "macos" else "x86_64", "--python", "3.12"
                )["choice"]["torch"] == "2.15.0"
    pin = tmp_path / "venv" / "torch-install-constraints.txt"  # torch-install's own pin: an install replaces it
    pin.parent.mkdir()
    pin.write_text("torch==2.9.1+cpu\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(pin))
    assert plan(capsys, *LINUX)["choice"]["torch"] == "2.15.0"


def test_lines_the_user_wrote_are_kept_and_a_locks_own_are_left_to_the_build(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Hand-written nvidia-ml-py, cuda-python, triton lines are the user's; a compiled lock's ``# via torch`` lines
    are the build's own, left to its step with a note."""
    hand = tmp_path / "requirements.txt"
    hand.write_text("torch>=2.8\nnvidia-ml-py>=12  # for pynvml\ncuda-python>=12.6\ntriton\n"
                    "nvidia-cudnn-frontend>=1.19.1\ntransformers\n")
    p = plan(capsys, *LINUX, "--variant", "cpu", "-r", str(hand))
    assert p["request"]["others"] == ["nvidia-ml-py>=12", "cuda-python>=12.6", "triton",
                                      "nvidia-cudnn-frontend>=1.19.1", "transformers"]
    assert not any("torch build's packages" in n for n in p["notes"])
    lock = tmp_path / "lock.txt"
    lock.write_text("torch==2.9.1\n    # via -r requirements.in\nnvidia-cublas-cu12==12.8.4.1\n    # via torch\n"
                    "triton==3.5.1\n    # via torch\nnvidia-ml-py==13.580.82\n    # via -r requirements.in\n")
    locked = plan(capsys, *LINUX, "--variant", "cpu", "-r", str(lock))
    assert locked["request"]["others"] == ["nvidia-ml-py==13.580.82"]
    assert f"{lock}: 2 lines are its lock's own torch build's packages (nvidia-cublas-cu12, triton): the chosen " \
           "build brings its own" in locked["notes"]


def test_a_files_wheelhouse_reaches_every_step_and_its_index_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "offline.txt").write_text("--no-index\n--find-links ./wheels\n--extra-index-url "
                                          "https://mirror.example/simple\ntorch\nnumpy\ntorch-scatter\n")
    p = plan(capsys, *LINUX, "-r", str(tmp_path / "offline.txt"))
    steps = p["commands"]["pip"].split(" && ")
    assert len(steps) == 3 and all("--no-index --find-links ./wheels" in step for step in steps)
    assert "--extra-index-url https://mirror.example/simple" not in steps[0]  # the build's index stays its own
    assert "--extra-index-url https://mirror.example/simple" in steps[1]
    assert any("--extra-index-url https://mirror.example/simple: the packages of your index come from there" in n
               for n in p["notes"])


@pytest.mark.slow
@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_install_keeps_to_pips_configured_constraint_with_real_pip_and_uv(
        httpserver, tmp_path: Path, make_venv, installer: str) -> None:
    """A machine whose pip.conf caps torch (``constraint = …``): the plan takes the newest torch under the cap, and
    pip and uv install it (pip reads the cap itself, and refuses any build above it)."""
    import os
    import subprocess
    import sys

    from wheels import build_wheel, serve_wheels

    default, cpu = tmp_path / "default", tmp_path / "cpu"
    default.mkdir()
    cpu.mkdir()
    serve_wheels(httpserver, "/simple", [build_wheel(default, "numpy", "1.26.4"),
                                         build_wheel(default, "requests", "2.32.5"),
                                         build_wheel(default, "torch", "2.15.0", requires=["numpy"])])
    serve_wheels(httpserver, "/whl/cpu", [build_wheel(cpu, "numpy", "1.26.4"),
                                          *(build_wheel(cpu, "torch", f"{v}+cpu", requires=["numpy"])
                                            for v in ("2.14.1", "2.15.0"))])
    (tmp_path / "cap.txt").write_text("torch<=2.14.1\n")
    (tmp_path / "xdg" / "pip").mkdir(parents=True)
    (tmp_path / "xdg" / "pip" / "pip.conf").write_text(f"[global]\nconstraint = {tmp_path / 'cap.txt'}\n")
    simple = httpserver.url_for("/simple").rstrip("/") + "/"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "VIRTUAL_ENV"))}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
               XDG_CONFIG_DIRS=str(tmp_path / "xdg"), PIP_INDEX_URL=simple, UV_DEFAULT_INDEX=simple,
               PIP_DISABLE_PIP_VERSION_CHECK="1", UV_NO_CACHE="1", TORCH_INSTALL_DEFAULT_INDEX="none",
               TORCH_INSTALL_CACHE_DIR=str(tmp_path / "cache"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    python = make_venv(tmp_path / "env", with_pip=installer == "pip")
    done = subprocess.run([sys.executable, "-m", "torch_install", "install", "torch", "requests", "--python",
                           str(python), "--index-base", httpserver.url_for("/whl").rstrip("/"), "--installer",
                           installer], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    code = "import importlib.metadata as m; print(m.version('torch'), m.version('requests'))"
    versions = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert versions == ["2.14.1+cpu", "2.32.5"]


LOCAL = """
[project]
name = "local-proj"
version = "0.1"
dependencies = ["numpy", "torch==2.6.0 ; sys_platform == 'linux'"]

[project.optional-dependencies]
vision = ["torchvision==0.21.0"]
"""


@pytest.mark.parametrize(("given", "torchvision"), [
    (["."], None), (["./proj"], None), (["./proj[vision]"], "0.21.0"), (["-r", "req.txt"], "0.21.0"),
    (["{uri}"], None), (["local-proj @ {uri}"], None), (["-r", "editable.txt"], None)])
def test_a_local_project_to_install_bounds_the_plan_by_its_torch_requirements(
        given: list[str], torchvision: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``pip install .`` (a path, ``-e``, extras, a file: URL) installs the torch the project requires: the plan
    holds to it, and still installs the project with the others."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(LOCAL)
    (tmp_path / "req.txt").write_text("-e ./proj[vision]\n")
    (tmp_path / "editable.txt").write_text("--editable file:./proj\n")
    monkeypatch.chdir(project if given == ["."] else tmp_path)
    argv = [a.format(uri=project.as_uri()) for a in given]
    found = plan(capsys, *argv, *RTX)
    assert found["choice"]["torch"] == "2.6.0"
    assert found["choice"]["packages"].get("torchvision", "").startswith(torchvision or "?") or torchvision is None
    assert any("a local project requiring torch==2.6.0 ; sys_platform == 'linux'" in n for n in found["notes"])
    assert found["commands"]["pip"].count(" install ") == 2  # the build, then the project with its pins


def test_a_local_projects_package_built_against_torch_bounds_the_plan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """xformers 0.0.28.post1 is built against torch 2.4.1: a local project that requires it holds torch there,
    and the plan installs the xformers build that goes with it, as pip would find it installing the project."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "local-proj"\nversion = "0.1"\n'
                                             'dependencies = ["torch", "xformers==0.0.28.post1"]\n')
    monkeypatch.chdir(tmp_path)
    found = plan(capsys, ".", *RTX)
    assert found["choice"]["torch"] == "2.4.1" and found["gpu_accelerated"]
    assert any(c["name"] == "xformers" and c["version"] == "0.0.28.post1" for c in found["choice"]["companions"])
    assert any("a local project requiring torch, xformers==0.0.28.post1" in n for n in found["notes"])


@pytest.mark.parametrize("manifest", ["environment.yml", "pixi.toml"])
def test_a_local_project_an_environment_names_is_found_from_its_directory(
        manifest: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """conda runs an environment.yml's pip list in the file's directory, and pixi reads a path source from the
    manifest's: ``-e .`` there is the project beside the file, wherever the command runs."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(LOCAL)
    (project / "environment.yml").write_text("name: x\ndependencies:\n  - python=3.12\n  - pip\n  - pip:\n"
                                             "    - -e .[vision]\n")
    (project / "pixi.toml").write_text('[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n'
                                       '[dependencies]\npython = "3.12.*"\n'
                                       '[pypi-dependencies]\nlocal-proj = { path = ".", editable = true, '
                                       'extras = ["vision"] }\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text('[project]\nname = "other"\nversion = "0"\n'
                                              'dependencies = ["torch==2.8.0"]\n')
    monkeypatch.chdir(elsewhere)  # a project of its own here, which the manifest does not name
    found = plan(capsys, "--project", str(project / manifest), *RTX)
    assert found["choice"]["torch"] == "2.6.0"
    assert found["choice"]["packages"].get("torchvision", "").startswith("0.21.0")


def test_a_file_url_without_a_host_is_the_local_project_it_names(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """rye's lock names its project ``-e file:.``: pip reads any ``file:`` as a URL (here the working directory),
    so the line is the project, read and installed with the others, not a requirement refused."""
    folder = Path(__file__).parent / "fixtures/projects-corpus/qwen-vl-utils-rye-lock-2024/qwen-vl-utils"
    monkeypatch.chdir(folder)
    found = plan(capsys, "-r", "requirements-dev.lock", *RTX)
    assert found["choice"]["torch"] == "2.4.0" and found["choice"]["packages"]["torchvision"] == "0.19.0+cu121"
    assert " install -e file:. av==12.3.0 " in found["commands"]["pip"]
    assert not any("without a pyproject.toml" in n for n in found["notes"])  # its pyproject.toml was read


@pytest.mark.parametrize(("files", "why"), [
    ({"setup.py": "raise SystemExit('never run')\n"}, "a local project without a pyproject.toml"),
    ({"pyproject.toml": "[build-system]\nrequires = ['setuptools']\n"}, "whose requirements were not read"),
    ({"pyproject.toml": "[project\n"}, "whose requirements were not read")])
def test_a_local_project_whose_requirements_cannot_be_read_is_a_note(
        files: dict[str, str], why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    found = plan(capsys, ".", *RTX)
    assert found["choice"] == plan(capsys, *RTX)["choice"]  # planned as without it: nothing known, nothing refused
    assert any(why in n for n in found["notes"]), found["notes"]
    assert "never run" not in json.dumps(found)


@pytest.mark.parametrize(("source", "message"), [
    ('torch = { index = ["a"] }', r"tool\.uv\.sources\.torch\.index is not a string"),
    ('foo = { git = "https://g.example/foo", marker = "sys_platform ==" }',
     r"tool\.uv\.sources\.foo\.marker 'sys_platform ==' is not a marker"),
    ('foo = [{ url = "https://h.example/foo-1.0-py3-none-any.whl", marker = 3 }]',
     r"tool\.uv\.sources\.foo\[0\]\.marker is not a string"),
    ('foo = { workspace = 1 }', r"tool\.uv\.sources\.foo\.workspace is not true, false or a path"),
    ('foo = { path = "x", editable = 1 }', r"tool\.uv\.sources\.foo\.editable is not true or false")])
def test_a_source_uv_refuses_is_one_line_naming_its_key(source: str, message: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\ndependencies = ["torch", "foo"]\n'
                                             f"[tool.uv.sources]\n{source}\n")
    assert main(["plan", *RTX, "--project", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "internal error" not in err
    assert re.search(message, err), err


def path_source_project(tmp_path: Path) -> tuple[Path, Path]:
    """A project whose uv source for ``foo`` is a wheel under a directory with a blank and a ``#`` in its name."""
    from wheels import build_wheel

    project = tmp_path / "proj"
    (project / "wheels" / "my foo#1").mkdir(parents=True)
    wheel = build_wheel(project / "wheels" / "my foo#1", "foo", "1.0")
    (project / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\ndependencies = ["torch", "foo"]\n'
                                            '[tool.uv.sources]\n'
                                            'foo = { path = "wheels/my foo#1/foo-1.0-py3-none-any.whl" }\n')
    return project, wheel


def test_a_path_source_with_a_blank_and_a_hash_is_a_file_url_of_that_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from urllib.parse import urlsplit
    from urllib.request import url2pathname

    project, wheel = path_source_project(tmp_path)
    others = plan(capsys, *RTX, "--project", str(project))["request"]["others"]
    url = next(o.split(" @ ", 1)[1] for o in others if o.startswith("foo @ "))
    assert "#" not in url and " " not in url and Path(url2pathname(urlsplit(url).path)) == wheel


@pytest.mark.slow
@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_pip_and_uv_install_the_path_source_as_the_command_names_it(
        installer: str, tmp_path: Path, make_venv, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    import shlex
    import shutil
    import subprocess

    project, _ = path_source_project(tmp_path)
    others = plan(capsys, *RTX, "--project", str(project))["request"]["others"]
    requirement = next(o for o in others if o.startswith("foo @ "))
    python = make_venv(tmp_path / "venv", with_pip=installer == "pip")
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    argv = ([str(python), "-m", "pip", "install", "--no-index", requirement] if installer == "pip" else
            [uv, "pip", "install", "--python", str(python), "--no-index", "--offline", requirement])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (shlex.join(argv), done.stderr)
    check = subprocess.run([str(python), "-c", "import foo; print(foo.__version__)"], capture_output=True, text=True,
                           timeout=60)
    assert check.stdout.strip() == "1.0"


# ---- sources and indexes uv refuses: torch-install refuses them too, in one line naming the entry ----------------

UV_PROJECT = """\
[project]
name = "x"
version = "0"
requires-python = ">=3.10"
dependencies = ["torch", "foo"]

[project.optional-dependencies]
cpu = ["torch"]
cu128 = ["torch"]

[dependency-groups]
dev = ["foo"]

[tool.uv]
conflicts = [[{ extra = "cpu" }, { extra = "cu128" }]]

[tool.uv.sources]
SOURCES

[[tool.uv.index]]
name = "pytorch-cpu"
url = "https://download.pytorch.org/whl/cpu"
explicit = true

[[tool.uv.index]]
name = "pytorch-cu128"
url = "https://download.pytorch.org/whl/cu128"
explicit = true
INDEXES"""
WHEEL = "https://files.example/foo-1.0-py3-none-any.whl"
# the PyTorch documentation's uv configuration: the CPU build off Linux, the CUDA one on Linux
PLATFORM_SPLIT = ("torch = [{ index = \"pytorch-cpu\", marker = \"sys_platform != 'linux'\" }, "
                  "{ index = \"pytorch-cu128\", marker = \"sys_platform == 'linux'\" }]")


def uv_project(tmp_path: Path, sources: str, indexes: str = "", case: str = "") -> Path:
    """A uv project with a CPU and a CUDA extra that conflict (but in the cases of NO_CONFLICTS), a dev group and
    two explicit PyTorch indexes; ``foo`` is a local project in ``w`` (a wheel's name there is a file)."""
    (tmp_path / "w").mkdir(exist_ok=True)
    (tmp_path / "w" / "pyproject.toml").write_text('[project]\nname = "foo"\nversion = "1"\n')
    (tmp_path / "w" / "foo-1.0-py3-none-any.whl").write_bytes(b"")
    text = UV_PROJECT.replace("SOURCES", sources).replace("INDEXES", indexes)
    if case in NO_CONFLICTS:
        text = text.replace('conflicts = [[{ extra = "cpu" }, { extra = "cu128" }]]\n', "")
    (tmp_path / "pyproject.toml").write_text(text)
    return tmp_path


def index(name: str, *lines: str, url: str = "https://corp.example/simple") -> str:
    return "\n".join(["", "[[tool.uv.index]]", f'name = "{name}"', f'url = "{url}"', *lines, ""])


UV_REFUSES = {  # what uv says of each, then torch-install's line
    "two kinds": ('torch = { index = "pytorch-cpu", git = "https://g.example/torch" }', "",
                  r"tool\.uv\.sources\.torch: both git and index \(uv takes one kind of source an entry\)"),
    "url and path": (f'foo = {{ url = "{WHEEL}", path = "w" }}', "",
                     r"tool\.uv\.sources\.foo: both url and path \(uv takes one kind of source an entry\)"),
    "rev and tag": ('foo = { git = "https://g.example/foo", rev = "abc", tag = "v1" }', "",
                    r"tool\.uv\.sources\.foo names more than one of rev, tag and branch \(uv takes one\)"),
    "unknown key": ('foo = { path = "w", nope = 1 }', "",
                    r"tool\.uv\.sources\.foo\.nope: not a key of a uv source \(it takes git, url, path, index, "),
    "tag on a url": (f'foo = {{ url = "{WHEEL}", tag = "v1" }}', "",
                     r"tool\.uv\.sources\.foo: a url source takes no tag \(it takes url, subdirectory, lfs, marker, "
                     r"extra, group\)"),
    "editable on a url": (f'foo = {{ url = "{WHEEL}", editable = true }}', "",
                          r"tool\.uv\.sources\.foo: a url source takes no editable"),
    "extra and group": ('torch = { index = "pytorch-cpu", extra = "cpu", group = "dev" }', "",
                        r"tool\.uv\.sources\.torch names both an extra and a group \(uv takes one\)"),
    "not a url": ('foo = { url = "not a url" }', "",
                  r"tool\.uv\.sources\.foo\.url 'not a url' is not a URL \(uv takes an absolute one: https://…\)"),
    "empty list": ("torch = []", "", r"tool\.uv\.sources\.torch is an empty list \(uv takes at least one source\)"),
    "a list without markers": ('torch = [{ index = "pytorch-cpu" }, { index = "pytorch-cu128" }]', "",
                               r"tool\.uv\.sources\.torch\[0\] has no marker: uv takes more than one source only "
                               r"with a marker on each"),
    "one entry without": (PLATFORM_SPLIT.replace(", marker = \"sys_platform == 'linux'\"", ""), "",
                          r"tool\.uv\.sources\.torch\[1\] has no marker"),
    "overlapping markers": ("torch = [{ index = \"pytorch-cu128\", marker = \"sys_platform == 'linux'\" }, "
                            "{ index = \"pytorch-cpu\", marker = \"python_version >= '3.11'\" }]", "",
                            r"tool\.uv\.sources\.torch\[0\] and \[1\]: the markers \"sys_platform == 'linux'\" and "
                            r"\"python_version >= '3.11'\" overlap \(uv takes a package's sources only with "
                            r"disjoint markers\)"),
    "editable wheel": ('foo = { path = "w/foo-1.0-py3-none-any.whl", editable = true }', "",
                       r"tool\.uv\.sources\.foo: editable = true on the file 'w/foo-1\.0-py3-none-any\.whl' \(uv "
                       r"installs only a directory editable\)"),
    "an extra not defined": ('torch = { index = "pytorch-cpu", extra = "gpu" }', "",
                             r"tool\.uv\.sources\.torch\.extra 'gpu': the project defines no such extra"),
    "a group not defined": ('foo = { path = "w", group = "docs" }', "",
                            r"tool\.uv\.sources\.foo\.group 'docs': the project defines no such group"),
    "not a package name": ('"foo bar" = { path = "w" }', "",
                           r"tool\.uv\.sources: 'foo bar' is not a valid package name"),
    "workspace = false": ("foo = { workspace = false }", "",
                          r"tool\.uv\.sources\.foo: workspace = false, which uv does not take yet \(leave the entry "
                          r"out: foo then comes from the indexes\)"),
    "a workspace source of no member": ("foo = { workspace = true }", "",
                                        r"tool\.uv\.sources\.foo: workspace = true, but foo is not a member of the uv "
                                        r"workspace \(.+pyproject\.toml has: x\)"),
    "a url of no distribution": ('foo = { url = "https://files.example/foo" }', "",
                                 r"tool\.uv\.sources\.foo\.url 'https://files\.example/foo' names no distribution "
                                 r"file \(uv takes a URL that ends in \.whl, \.tar\.gz, "),
    "an extra that does not name the package": ('foo = { path = "w", extra = "cpu" }', "",
                                                r"tool\.uv\.sources\.foo\.extra 'cpu': the extra does not name foo "
                                                r"\(uv takes a source for an extra only for a package it names\)"),
    "a group that does not name the package": ('torch = { index = "pytorch-cpu", group = "dev" }', "",
                                               r"tool\.uv\.sources\.torch\.group 'dev': the group does not name "
                                               r"torch \(uv takes a source for a group only for a package it "
                                               r"names\)"),
    "two indexes where both markers hold": (
        "torch = [{ index = \"pytorch-cpu\", marker = \"sys_platform == 'linux'\" }, { index = \"pytorch-cu128\", "
        "marker = \"sys_platform == 'win32'\" }, { index = \"pytorch-cu128\", marker = \"sys_platform == 'linux'\" }]",
        "", r"tool\.uv\.sources\.torch\[0\] and \[2\] name the indexes 'pytorch-cpu' and 'pytorch-cu128' where both "
        r"apply \(uv takes one index a package\)"),
    "extras apart with no conflicts declared": (
        'torch = [{ index = "pytorch-cpu", extra = "cpu" }, { index = "pytorch-cu128", extra = "cu128" }]', "",
        r"tool\.uv\.sources\.torch\[0\] and \[1\] name the indexes 'pytorch-cpu' and 'pytorch-cu128' where both "
        r"apply \(uv takes one index a package; tool\.uv\.conflicts declares the extras or groups that are never "
        r"chosen together\)"),
    "explicit = \"yes\"": ("", index("corp", 'explicit = "yes"'), r"tool\.uv\.index\[2\]\.explicit is not true or "
                           r"false"),
    "default = \"no\"": ("", index("corp", 'default = "no"'), r"tool\.uv\.index\[2\]\.default is not true or false"),
    "an unknown format": ("", index("corp", 'format = "wheels"'),
                          r"tool\.uv\.index\[2\]\.format 'wheels' is not one of simple, flat"),
    "a name not a string": ("", index("corp").replace('name = "corp"', "name = 3"),
                            r"tool\.uv\.index\[2\]\.name is not a string \(name = \"…\"\)"),
    "a duplicate name": ("", index("pytorch-cpu"),
                         r"tool\.uv\.index\[2\]: a second index named 'pytorch-cpu' \(uv takes each name once\)"),
    "two defaults": ("", index("corp", "default = true") + index("mirror", "default = true"),
                     r"tool\.uv\.index\[3\]: a second index with default = true \(uv takes one\)"),
}


NO_CONFLICTS = {"extras apart with no conflicts declared"}


@pytest.mark.parametrize("case", UV_REFUSES)
def test_a_source_or_index_uv_refuses_is_one_line_naming_the_entry(case: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    sources, indexes, message = UV_REFUSES[case]
    project_dir = uv_project(tmp_path, sources, indexes, case)
    assert main(["plan", *RTX, "--project", str(project_dir), "--extra", "cpu", "--group", "dev"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "internal error" not in err, err
    assert re.search(rf"error: --project: {re.escape(str(project_dir / 'pyproject.toml'))}: {message}", err), err


def test_a_file_inside_a_git_repository_comes_from_the_indexes_with_a_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """uv builds the file a git source's ``path`` names inside the repository; pip's git URL names the repository's
    own project, never a file in it: the plan does not install that other project in its place."""
    p = plan(capsys, *RTX, "--project", str(uv_project(
        tmp_path, 'foo = { git = "https://g.example/foo", tag = "v1", path = "dist/foo-1.0-py3-none-any.whl", '
                  "marker = \"sys_platform == 'linux'\" }")))
    others = p["request"]["others"]
    assert not any("git+" in o for o in others), others
    assert 'foo; sys_platform == "linux"' in others and 'foo; sys_platform != "linux"' in others
    assert any("tool.uv.sources.foo: foo from the file 'dist/foo-1.0-py3-none-any.whl' inside a git repository, "
               "which pip cannot install from a git URL: the plan takes foo from the indexes" in n for n in p["notes"])


@pytest.mark.parametrize(("dev", "refused"), [('["foo"]', False), ("3", True), ('"foo"', True)])
def test_uvs_own_dev_dependencies_are_the_dev_group_a_source_names(dev: str, refused: bool, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``[tool.uv] dev-dependencies``, uv's dev group before PEP 735, of any type: a list names the group's
    packages, any other value none."""
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\nversion = "0"\ndependencies = ["torch"]\n'
                                             f'[tool.uv]\ndev-dependencies = {dev}\n[tool.uv.sources]\n'
                                             f'foo = {{ index = "corp", group = "dev" }}\n' + index("corp"))
    assert main(["plan", *RTX, "--project", str(tmp_path)]) == (2 if refused else 0)
    err = capsys.readouterr().err
    assert ("tool.uv.sources.foo.group 'dev': the group does not name foo" in err) == refused, err
    assert "Traceback" not in err


UV_TAKES = {  # shapes uv reads: torch-install plans them
    "the PyTorch documentation's platform split": (PLATFORM_SPLIT, ""),
    "extras with conflicts": ('torch = [{ index = "pytorch-cpu", extra = "cpu" }, '
                              '{ index = "pytorch-cu128", extra = "cu128" }]', ""),
    "markers disjoint across fields": ("torch = [{ index = \"pytorch-cu128\", marker = \"sys_platform == 'linux'\" }, "
                                       "{ index = \"pytorch-cpu\", marker = \"platform_system == 'Windows'\" }]", ""),
    "python_version against python_full_version": (
        "torch = [{ index = \"pytorch-cu128\", marker = \"python_version < '3.12'\" }, "
        "{ index = \"pytorch-cpu\", marker = \"python_full_version >= '3.12'\" }]", ""),
    "an overlap of entries not side by side": (
        "torch = [{ index = \"pytorch-cu128\", marker = \"sys_platform == 'linux'\" }, "
        "{ index = \"pytorch-cpu\", marker = \"sys_platform == 'win32'\" }, "
        "{ index = \"pytorch-cu128\", marker = \"sys_platform == 'linux'\" }]", ""),
    "subdirectory and lfs beside any kind": ('torch = { index = "pytorch-cu128", subdirectory = "x", lfs = true }\n'
                                             f'foo = {{ url = "{WHEEL}", lfs = true }}', ""),
    "an editable directory with its group": ('foo = { path = "w", editable = true, group = "dev" }', ""),
    "an extra's name unnormalised": ('torch = { index = "pytorch-cpu", extra = "CPU" }', ""),
    "index keys torch-install does not read": ("", index("corp", 'cache-control = { api = "max-age=600" }',
                                                         "ignore-error-codes = [401]", 'format = "simple"')),
}


@pytest.mark.parametrize("case", UV_TAKES)
def test_a_source_or_index_uv_reads_is_planned(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sources, indexes = UV_TAKES[case]
    p = plan(capsys, *RTX, "--project", str(uv_project(tmp_path, sources, indexes, case)), "--extra", "cpu",
             "--group", "dev")
    assert p["choice"]["torch"]


def test_the_pytorch_documentations_split_plans_each_platform_from_its_index(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project_dir = str(uv_project(tmp_path, PLATFORM_SPLIT))
    assert plan(capsys, *RTX, "--project", project_dir)["choice"]["variant"] == "cu128"
    mac = plan(capsys, "--os", "macos", "--arch", "arm64", "--python", "3.12", "--project", project_dir)
    assert mac["choice"]["variant"] != "cu128"


@pytest.mark.parametrize(("at", "source", "member"), [
    ("", "foo", True), ("packages/app", "foo", True), ("", "bar", False), ("packages/app", "docs", False)])
def test_a_workspace_source_names_a_member_of_the_workspace_the_project_is_in(
        at: str, source: str, member: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A root whose members are ``packages/*`` less ``packages/docs``: ``foo`` and ``app`` are members, read from
    the root or from a member; ``bar`` is no package there, and ``docs`` is excluded."""
    def write(where: Path, name: str, extra: str = "") -> None:
        where.mkdir(parents=True, exist_ok=True)
        dependencies = f'["torch", "{source}"]' if extra else '["torch"]'
        (where / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "0"\n'
                                              f"dependencies = {dependencies}\n{extra}")

    sources = f"[tool.uv.sources]\n{source} = {{ workspace = true }}\n"
    write(tmp_path, "root", '[tool.uv.workspace]\nmembers = ["packages/*"]\nexclude = ["packages/docs"]\n' + sources)
    write(tmp_path / "packages" / "app", "app", sources)
    write(tmp_path / "packages" / "foo", "foo")
    write(tmp_path / "packages" / "docs", "docs")
    assert main(["plan", *RTX, "--project", str(tmp_path / at)]) == (0 if member else 2)
    out, err = capsys.readouterr()
    if member:
        assert f"{source} is a member of the uv workspace, which uv installs: torch-install leaves it out" in out
    else:
        assert err.splitlines() == [f"torch-install: error: --project: {tmp_path / at / 'pyproject.toml'}: "
                                    f"tool.uv.sources.{source}: workspace = true, but {source} is not a member of "
                                    f"the uv workspace ({tmp_path / 'pyproject.toml'} has: app, foo, root)"]


@pytest.mark.parametrize(("source", "message"), [
    ("", "foo is a member of the uv workspace, and tool.uv.sources names no source for it (uv takes a member only "
         "from the workspace: foo = { workspace = true })"),
    ('foo = { index = "corp" }', "tool.uv.sources.foo: foo is a member of the uv workspace, which uv takes only from "
                                 "the workspace (foo = { workspace = true })"),
    ("foo = { workspace = true }", None)])
def test_a_workspace_roots_requirement_on_a_member_is_a_workspace_source(
        source: str, message: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The root's extra names the member ``foo``: uv takes it only from the workspace, whatever the extras
    chosen."""
    (tmp_path / "packages" / "foo").mkdir(parents=True)
    (tmp_path / "packages" / "foo" / "pyproject.toml").write_text('[project]\nname = "foo"\nversion = "0"\n')
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "root"\nversion = "0"\ndependencies = ["torch"]\n'
        '[project.optional-dependencies]\nplugins = ["foo"]\n[tool.uv.workspace]\nmembers = ["packages/*"]\n'
        f"[tool.uv.sources]\n{source}\n" + index("corp"))
    assert main(["plan", *RTX, "--project", str(tmp_path)]) == (2 if message else 0)
    err = capsys.readouterr().err
    if message:
        assert err.splitlines() == [f"torch-install: error: --project: {tmp_path / 'pyproject.toml'}: {message}"]


@pytest.mark.parametrize(("url", "option"), [("wheels/simple", "--extra-index-url"), ("./wheels", "--find-links")])
def test_an_index_that_is_a_path_is_the_directory_from_the_project(url: str, option: str, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """uv reads an index ``url`` without a scheme as a local directory: pip is given its file URL."""
    flat = ['format = "flat"'] if option == "--find-links" else []
    project_dir = uv_project(tmp_path, "", index("local", *flat, url=url))
    command = plan(capsys, *RTX, "--project", str(project_dir))["commands"]["pip"]
    assert f"{option} {(tmp_path / url).resolve().as_uri()}" in command, command


@pytest.mark.parametrize(("url", "allowed"), [("http://corp.example/simple", False),
                                              ("http://127.0.0.1:8080/simple", True)])
def test_a_plain_http_index_is_refused_as_an_index_base_is(url: str, allowed: bool, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    project_dir = str(uv_project(tmp_path, "", index("corp", url=url)))
    assert main(["plan", *RTX, "--project", project_dir]) == (0 if allowed else 2)
    err = capsys.readouterr().err
    if not allowed:
        assert err.splitlines() == [f"torch-install: error: --project: {tmp_path / 'pyproject.toml'}: "
                                    f"tool.uv.index[2]: url '{url}': plain http is refused (use https, or "
                                    "--allow-insecure-index)"]
        assert "--extra-index-url http://corp.example/simple" in \
            plan(capsys, *RTX, "--project", project_dir, "--allow-insecure-index")["commands"]["pip"]


def test_an_index_every_member_comes_from_is_named_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n'
                                             'dependencies = ["torch", "torchvision", "torchaudio"]\n'
                                             + index("pytorch-cu118", url="https://download.pytorch.org/whl/cu118"))
    assert main(["plan", *LINUX, "--project", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "the cu118 build, as [[tool.uv.index]] pytorch-cu118 (not explicit: uv searches it for every package) " \
        "name it" in out


@pytest.mark.slow
@pytest.mark.parametrize("case", [*UV_REFUSES, *UV_TAKES])
def test_torch_install_refuses_a_project_exactly_where_real_uv_does(case: str, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """``uv lock --offline`` reads the project (its sources lowered onto its dependencies) before it looks for a
    package: a refusal of the project is its exit before that, where it otherwise finds no package offline."""
    import shutil
    import subprocess

    sources, indexes, *_ = UV_REFUSES[case] if case in UV_REFUSES else UV_TAKES[case]
    (tmp_path / "project").mkdir()
    project_dir = uv_project(tmp_path / "project", sources, indexes, case)
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    done = subprocess.run([uv, "lock", "--offline", "--no-config", "--cache-dir", str(tmp_path / "cache"),
                           "--python", sys.executable], cwd=project_dir, capture_output=True, text=True, timeout=120)
    looked_for_packages = any(s in done.stderr for s in ("No solution found when resolving",
                                                          "Network connectivity is disabled"))
    uv_refuses = done.returncode != 0 and not looked_for_packages
    assert uv_refuses == (case in UV_REFUSES), done.stderr
    code = main(["plan", *RTX, "--project", str(project_dir), "--extra", "cpu", "--group", "dev"])
    assert (code == 2) == uv_refuses, capsys.readouterr().err
