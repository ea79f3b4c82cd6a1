"""--project with a conda or pixi project: environment.yml (its conda dependencies and its pip: list) and pixi.toml
(its dependencies, pypi-dependencies, targets and --extra features) read like a pyproject.toml; what
--format conda/pixi writes reads back to the same build; bad files are one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conda_channel import need_rattler
from torch_install.cli import main
from torch_install.errors import InputError
from torch_install.project.conda_files import conda_range, read_environment_yml, read_pixi
from torch_install.project.gather import gather

FLAGS = ["--gpu", "RTX 4090", "--nvidia-driver", "560.35.03", "--os", "linux", "--arch", "x86_64", "--python",
         "3.12"]
ENVIRONMENT = """\
name: demo
channels:
  - conda-forge
dependencies:
  - python=3.12
  - conda-forge::pytorch=2.12
  - torchvision
  - numpy<2
  - pip
  - pip:
    - transformers>=4
    - -e ./mylib
    - --extra-index-url https://example.org/simple
"""
PIXI = """\
[workspace]
channels = ["conda-forge"]
platforms = ["linux-64", "osx-arm64"]

[dependencies]
python = "3.12.*"
pytorch-gpu = ">=2.10,<2.13"

[pypi-dependencies]
transformers = { version = ">=4", extras = ["torch"] }

[target.linux-64.dependencies]
torchvision = { version = "*", build = "cuda*" }

[feature.speed.pypi-dependencies]
accelerate = "*"
"""


def test_an_environment_yml_gives_the_family_from_conda_and_the_rest_from_pip(tmp_path: Path) -> None:
    path = tmp_path / "environment.yml"
    path.write_text(ENVIRONMENT, encoding="utf-8")
    read = read_environment_yml(str(path))
    assert [(w.name, w.text) for w in read.wanted] == [("torch", "torch==2.12.*"), ("torchvision", "torchvision"),
                                                       ("transformers", "transformers>=4"), (None, "./mylib")]
    assert read.wanted[-1].editable
    assert any("numpy, python" in n or "python, numpy" in n for n in read.notes)
    assert [(o.option, o.value) for o in read.options] == [("--extra-index-url", "https://example.org/simple")]
    found = gather([], project=str(tmp_path))
    assert found.family == ["torch==2.12.*", "torchvision"]


def test_a_pixi_manifest_gives_its_tables_targets_and_chosen_features(tmp_path: Path) -> None:
    path = tmp_path / "pixi.toml"
    path.write_text(PIXI, encoding="utf-8")
    read = read_pixi(str(path), ["speed"])
    assert [(w.name, w.text) for w in read.wanted] == [
        ("torch", "torch>=2.10,<2.13"), ("transformers", "transformers[torch]>=4"),
        ("torchvision", "torchvision ; (sys_platform == 'linux' and platform_machine == 'x86_64')"),
        ("accelerate", "accelerate")]
    assert any("build 'cuda*'" in n for n in read.notes)
    with pytest.raises(Exception, match="defines no such feature"):
        read_pixi(str(path), ["nope"])


TARGETED = """\
[workspace]
channels = ["conda-forge"]
platforms = [{ name = "linux-64-cuda", platform = "linux-64", cuda = "12.0" }, "linux-64", "osx-arm64"]

[pypi-dependencies]
torch = ">=2.5"

[target.osx-arm64.pypi-dependencies]
torch = "==2.2.0"
numpy = "<2"

[target."*-cuda".pypi-dependencies]
torch = { version = ">=2.5", index = "https://download.pytorch.org/whl/cu124" }

[target.win-64-gpu.pypi-dependencies]
torch = "==2.0.0"
"""


@pytest.mark.parametrize(("profile", "torch", "variant"), [("linux-cuda-py312", "2.6.0", "cu124"),
                                                           ("linux-cpu-py312", "2.15.0", "cpu")])
def test_a_targets_entries_hold_on_its_platform_in_place_of_the_workspaces(
        tmp_path: Path, profile: str, torch: str, variant: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A macOS target's torch pin is not Linux's; a named platform with cuda = "12.0" holds where the machine's
    driver runs CUDA 12 (pixi selects the first listed platform the machine can use), the plain one elsewhere."""
    (tmp_path / "pixi.toml").write_text(TARGETED, encoding="utf-8")
    read = read_pixi(str(tmp_path / "pixi.toml"))
    assert [w.text for w in read.wanted][:3] == [
        "torch>=2.5 ; ((sys_platform != 'darwin') or (platform_machine != 'arm64')) and ((sys_platform != 'linux') "
        "or (platform_machine != 'x86_64'))",
        "torch==2.2.0 ; (sys_platform == 'darwin' and platform_machine == 'arm64')",
        "numpy<2 ; (sys_platform == 'darwin' and platform_machine == 'arm64')"]
    assert any("target.win-64-gpu: a target (win-64-gpu) this tool does not read as a platform" in n
               for n in read.notes)
    target = Path(__file__).parent / "fixtures" / "projects-corpus" / "profiles" / f"{profile}.json"
    assert main(["plan", "--project", str(tmp_path), "--offline", "--target", str(target), "--format", "json"]) == 0
    choice = json.loads(capsys.readouterr().out)["choice"]
    assert (choice["torch"], choice["variant"]) == (torch, variant)


def test_a_pixi_manifest_in_toml_1_1_is_read_as_pixi_reads_it_and_a_pyproject_is_not(tmp_path: Path) -> None:
    manifest = ('[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n[pypi-dependencies]\n'
                'torch = {\n  version = ">=2.5.1",\n  index = "https://download.pytorch.org/whl/cu124",\n}\n')
    (tmp_path / "pixi.toml").write_text(manifest, encoding="utf-8")
    assert [w.text for w in read_pixi(str(tmp_path / "pixi.toml")).wanted] == ["torch>=2.5.1"]
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\ndependencies = []\n'
                                             '[tool.x]\ny = {\n  z = 1\n}\n', encoding="utf-8")
    with pytest.raises(InputError, match="pyproject.toml: not valid TOML"):
        gather([], project=str(tmp_path))


def test_a_pixi_index_of_the_family_is_the_build_it_names_for_its_targets_platform(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pixi.toml").write_text(
        '[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64", "osx-arm64"]\n\n[pypi-dependencies]\n'
        'torch = { version = ">=2.5.1", index = "https://download.pytorch.org/whl/cu124" }\n'
        'numpy = { version = "*", index = "https://example.org/simple" }\n\n'
        '[target.osx.pypi-dependencies]\n'
        'torch = { version = ">=2.5.1", index = "https://download.pytorch.org/whl/cpu" }\n'
        '[target.emscripten-wasm32.pypi-dependencies]\n'
        'torch = { version = "*", index = "https://download.pytorch.org/whl/cpu" }\n', encoding="utf-8")
    read = read_pixi(str(tmp_path / "pixi.toml"))
    assert [(b.name, b.variant, b.marker, b.unless) for b in read.builds] == [
        ("torch", "cu124", None, ("sys_platform == 'darwin'",)), ("torch", "cpu", "sys_platform == 'darwin'", ())]
    assert any("target (emscripten-wasm32) this tool does not read as a platform" in n for n in read.notes)
    assert main(["plan", "--project", str(tmp_path), *FLAGS, "--format", "json"]) == 0
    linux = json.loads(capsys.readouterr().out)
    assert (linux["choice"]["torch"], linux["choice"]["variant"]) == ("2.6.0", "cu124")  # cu124's newest torch
    assert main(["plan", "--project", str(tmp_path), "--os", "macos", "--arch", "arm64", "--python", "3.12",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["choice"]["variant"] != "cu124"


@pytest.mark.parametrize(("conda", "pep440"), [
    ("2.13", "==2.13"), ("=2.13", "==2.13.*"), ("2.13.*", "==2.13.*"), (">=2.8,<3", ">=2.8,<3"), ("*", ""),
    ("!=2.9.0", "!=2.9.0"), ("~=2.10", "~=2.10"), ("2.8|2.9", None), ("latest", None)])
def test_conda_version_specs_read_as_the_ranges_they_mean(conda: str, pep440: str | None) -> None:
    assert conda_range(conda) == pep440


VERSIONS = ["2.8.0", "2.9.1", "2.12.0", "2.12.1", "2.13.0", "3.0.0"]


@pytest.mark.parametrize("conda", ["2.12", "=2.12", "2.12.*", ">=2.9,<2.13", "!=2.12.0", "==2.13.0", ">2.9.1",
                                   "<=2.12", "~=2.12.0"])
def test_the_ranges_hold_the_versions_conda_itself_holds(conda: str) -> None:
    rattler = need_rattler()
    from packaging.specifiers import SpecifierSet

    ours = SpecifierSet(conda_range(conda) or "")
    theirs = rattler.VersionSpec(conda)
    for version in VERSIONS:
        assert ours.contains(version) == theirs.matches(rattler.Version(version)), (conda, version)


@pytest.mark.parametrize("fmt", ["conda", "pixi"])
def test_what_the_conda_formats_write_reads_back_to_the_same_build(fmt: str, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "torch", "torchvision", "transformers", *FLAGS, "--format", fmt]) == 0
    written = capsys.readouterr().out
    path = tmp_path / ("environment.yml" if fmt == "conda" else "pixi.toml")
    path.write_text(written, encoding="utf-8")
    assert main(["plan", "--project", str(path), *FLAGS, "--format", fmt]) == 0
    again = capsys.readouterr().out

    def body(text: str) -> list[str]:  # the comments say why; the rest is the build
        return [line for line in text.splitlines() if not line.startswith("#")]

    assert body(again) == body(written)
    assert main(["plan", "--project", str(path), *FLAGS, "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["request"]["others"] == ["transformers"]


@pytest.mark.parametrize(("name", "text", "message"), [
    ("environment.yml", "dependencies:\n  - pytorch\n - torchvision\n", "environment.yml: line 3"),
    ("environment.yml", "dependencies: pytorch\n", "not an environment file"),
    ("environment.yml", "dependencies:\n  - &anchor pytorch\n", "anchors, aliases"),
    ("environment.yml", "dependencies:\n  - - pytorch\n", "is neither a package spec nor a pip: list"),
    ("pixi.toml", "[dependencies]\npytorch = 3\n", "is neither a version string nor a table"),
    ("pixi.toml", "[dependencies\n", "not valid TOML"),
])
def test_a_bad_project_file_is_one_line_and_exit_2(name: str, text: str, message: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert main(["plan", "--project", str(path), *FLAGS]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_pixi_wheel_of_torch_by_url_or_path_is_its_build_and_a_git_source_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """pypi-dependencies.torch as a wheel's url, or its path beside the manifest (a blank in it), plans that wheel's
    build, from any working directory; a git source builds torch, which is one line."""
    project = tmp_path / "project"
    project.mkdir()
    wheel = "torch-2.8.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl"
    monkeypatch.chdir(tmp_path)
    for entry, reference in [
            (f'{{ url = "https://h.example/whl/cpu/{wheel}" }}', f"torch @ https://h.example/whl/cpu/{wheel}"),
            (f'{{ path = "wheels/my torch/{wheel}" }}',
             f"torch @ {(project / 'wheels' / 'my torch' / wheel).as_uri()}")]:
        (project / "pixi.toml").write_text('[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n'
                                           f'[dependencies]\npython = "3.12.*"\n[pypi-dependencies]\ntorch = {entry}\n')
        assert main(["plan", "--project", "project/pixi.toml", *FLAGS, "--format", "json"]) in (0, 1)
        plan = json.loads(capsys.readouterr().out)
        assert (plan["choice"]["torch"], plan["choice"]["variant"]) == ("2.8.0", "cpu")
        assert plan["choice"]["references"]["torch"] == reference
    (project / "pixi.toml").write_text('[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n'
                                       '[pypi-dependencies]\ntorch = { git = "https://h.example/pytorch" }\n')
    assert main(["plan", "--project", "project/pixi.toml", *FLAGS]) == 2
    assert capsys.readouterr().err == ("torch-install: error: --project: project/pixi.toml: pypi-dependencies.torch: "
                                       "a git source for torch; torch-install chooses its wheel (a url or path of a "
                                       "wheel names one)\n")


@pytest.mark.parametrize(("kind", "pin", "variant", "said"), [
    ("conda", "cuda-version=12.4", "cu124", "environment.yml dependencies: cuda-version=12.4"),
    ("conda", "pytorch-cuda=12.1", "cu121", "environment.yml dependencies: pytorch-cuda=12.1"),
    ("conda", "cudatoolkit=11.8", "cu118", "environment.yml dependencies: cudatoolkit=11.8"),
    ("conda", "cuda-version 12.6.*", "cu126", "environment.yml dependencies: cuda-version 12.6.*"),
    ("pixi", '"12.6.*"', "cu126", 'pixi.toml [dependencies] cuda-version = "12.6.*"'),
    ("pixi", '"==12.8"', "cu128", 'pixi.toml [dependencies] cuda-version = "==12.8"'),
    ("conda", "cuda-version=12.5", "cu124", "environment.yml dependencies: cuda-version=12.5 (the PyTorch index "
                                            "has no CUDA 12.5 build; cu124 is its newest before it)"),
])
def test_a_cuda_pin_is_the_users_choice_of_build(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str,
                                                 pin: str, variant: str, said: str) -> None:
    """conda-forge's cuda-version (pixi's documented way to choose the CUDA of its packages), the pytorch channel's
    pytorch-cuda and the older cudatoolkit pin the CUDA build: the plan takes the PyTorch index's build of that CUDA
    where the driver runs it and says why; where the driver is too old, the blocker names the pin."""
    if kind == "conda":
        path = tmp_path / "environment.yml"
        path.write_text(f"name: demo\ndependencies:\n  - python=3.12\n  - pytorch\n  - {pin}\n")
    else:
        path = tmp_path / "pixi.toml"
        path.write_text(f'[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n[dependencies]\n'
                        f'pytorch-gpu = "*"\ncuda-version = {pin}\n')
    code = main(["plan", *FLAGS[:3], "580.65.06", *FLAGS[4:], "--project", str(path), "--format", "json"])
    p = json.loads(capsys.readouterr().out)
    assert code == 0 and p["choice"]["variant"] == variant and p["gpu_accelerated"]
    assert f"the {variant} build, as {said} names it" in p["reasons"]
    old = main(["plan", *FLAGS[:3], "450.80.02", *FLAGS[4:], "--project", str(path), "--format", "json"])
    blockers = [w for w in json.loads(capsys.readouterr().out)["warnings"] if w["blocking"]]
    assert old == 0 and blockers[0]["code"] == "driver-too-old"
    assert f"will not run on this GPU: {variant} rejected: " in blockers[0]["message"] and "needs driver" in \
        blockers[0]["message"]
    assert blockers[0]["message"].endswith(f"the project's configuration without {said} gets it")


@pytest.mark.parametrize(("pin", "note"), [
    ("cuda-version>=12", "a range of CUDA versions, not one build"),
    ("cuda-version", "no CUDA version, not one build"),
    ("cudatoolkit=9.0", "the PyTorch index has no build for CUDA 9.0 or an older CUDA 9"),
])
def test_a_cuda_pin_of_no_one_build_is_a_note(tmp_path: Path, pin: str, note: str) -> None:
    path = tmp_path / "environment.yml"
    path.write_text(f"name: demo\ndependencies:\n  - pytorch\n  - {pin}\n")
    read = read_environment_yml(str(path))
    assert not read.builds
    assert f"environment.yml dependencies: {pin}: {note}: torch-install chooses the build for the machine" \
        in read.notes


@pytest.mark.parametrize(("pin", "allowed"), [("cuda-version=12.6", (12, 6)), ("cuda-version=12.8", (12, 8)),
                                              ("pytorch-cuda=12.4", (12, 4)), ("cuda-version 12.6.*", (12, 6))])
@pytest.mark.parametrize("fmt", ["conda", "pixi"])
def test_conda_forges_build_keeps_to_the_cuda_the_file_pins(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            pin: str, allowed: tuple[int, int], fmt: str) -> None:
    """The environment's CUDA is the user's: conda-forge's build written for it is the newest of that CUDA or an
    older one of its major version (what the pinned cuda-version lets conda install), never a newer CUDA."""
    from torch_install.resolver.conda_forge import builds

    path = tmp_path / "environment.yml"
    path.write_text(f"name: demo\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.12\n  - pytorch>=2.4\n"
                    f"  - {pin}\n")
    assert main(["plan", *FLAGS[:3], "580.65.06", *FLAGS[4:], "--project", str(path), "--format", fmt]) == 0
    out = capsys.readouterr().out
    fits = [b for b in builds() if b.subdir == "linux-64" and b.cuda and b.arm_variant is None
            and tuple(map(int, b.cuda.split("."))) <= allowed and int(b.cuda.split(".")[0]) == allowed[0]]
    if not fits:  # conda-forge has no build of that CUDA: PyTorch's index's, of the pin's CUDA
        assert "from PyTorch's index" in out.splitlines()[0] and f"cu{allowed[0]}{allowed[1]})" in out.splitlines()[0]
        return
    newest = max(fits, key=lambda b: (tuple(map(int, b.version.split("."))), tuple(map(int, b.cuda.split(".")))))
    assert f"pytorch {newest.version} (CUDA {newest.cuda} build)" in out.splitlines()[0]
    assert f"cuda-version {newest.cuda}" in out or f"cuda-version={newest.cuda}" in out \
        or f'cuda-version = "{newest.cuda}' in out


@pytest.mark.parametrize(("spec", "allowed"), [
    ("python=3.8", [8]), ("python 3.10.*", [10]), ("python>=3.12,<3.14", [12, 13]), ("python<3.11", range(0, 11))])
def test_the_environments_python_is_the_one_planned_for(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        spec: str, allowed: list[int]) -> None:
    """conda makes the environment with the Python its file names: a target whose Python is this machine's is
    planned for that one instead (of a range, the release nearest this machine's); a Python the target states
    (a profile's 3.11.7) stays, with a note where the file's differs."""
    import sys

    path = tmp_path / "environment.yml"
    path.write_text(f"name: demo\ndependencies:\n  - {spec}\n  - pytorch\n")
    profile = tmp_path / "gpu.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "glibc": "2.35", "python": "3.11.7",
                                   "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090",
                                             "compute_capability": "8.9"}],
                                   "nvidia_driver": "580.65.06"}))
    assert main(["plan", "--project", str(path), "--target", str(profile), "--format", "json"]) == 0
    stated = json.loads(capsys.readouterr().out)
    assert stated["machine"]["python"] == "3.11"
    assert any(f"environment.yml dependencies: {spec}: the environment's Python is not Python 3.11" in n
               for n in stated["notes"]) == (11 not in allowed)
    assert main(["plan", "--project", str(path), "--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090",
                 "--nvidia-driver", "580.65.06", "--format", "json"]) == 0
    assumed = json.loads(capsys.readouterr().out)
    here = sys.version_info.minor
    nearest = here if here in allowed else min(allowed, key=lambda m: (abs(m - here), -m))
    assert assumed["machine"]["python"] == f"3.{nearest}"
    assert any(n.startswith(f"Python 3.{nearest}, as environment.yml dependencies: {spec} makes the environment")
               for n in assumed["notes"]) == (here != nearest)


def test_a_pixi_workspaces_python_is_the_one_planned_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pixi.toml"
    path.write_text('[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n[dependencies]\n'
                    'python = "3.9.*"\n\n[pypi-dependencies]\ntorch = ">=2.2"\n')
    assert main(["plan", "--project", str(path), "--os", "linux", "--arch", "x86_64", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["machine"]["python"] == "3.9" and found["choice"]["torch"] == "2.8.0"  # the last for Python 3.9
    assert any('as pixi.toml [dependencies] python = "3.9.*" makes the environment' in n for n in found["notes"])


@pytest.mark.parametrize("driver", ["580.65.06", None])  # conda-forge's build, and PyTorch's index's through pip
def test_the_environments_other_conda_packages_are_kept_as_written(tmp_path: Path, driver: str | None,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """--format conda writes the whole environment: the file's other conda packages stay as written (a channel
    they name too), each once, beside the build's own specs; what it writes reads back to itself."""
    path = tmp_path / "environment.yml"
    path.write_text("name: demo\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.12\n  - numpy>=1.26\n"
                    "  - bioconda::samtools 1.21.*\n  - pytorch>=2.4\n  - cuda-version=12.6\n  - pip\n  - pip:\n"
                    "    - transformers\n")
    machine = ["--os", "linux", "--arch", "x86_64", *(["--gpu", "RTX 4090", "--nvidia-driver", driver] if driver
                                                      else []), "--format", "conda"]
    if driver is None:
        machine += ["--torch-source", "pytorch-index"]
    assert main(["plan", "--project", str(path), *machine]) == 0
    written = capsys.readouterr().out
    specs = [line[4:] for line in written.splitlines() if line.startswith("  - ")]
    assert specs.count("numpy>=1.26") == 1 and specs.count("bioconda::samtools 1.21.*") == 1
    assert sum(s.startswith("python=") for s in specs) == 1
    assert sum(s.startswith("cuda-version") for s in specs) == 1
    back = tmp_path / "back" / "environment.yml"
    back.parent.mkdir()
    back.write_text(written)
    assert main(["plan", "--project", str(back), *machine]) == 0
    again = capsys.readouterr().out
    assert [line for line in again.splitlines() if not line.startswith("#")] == \
        [line for line in written.splitlines() if not line.startswith("#")]


def test_the_files_own_cuda_pin_stays_where_the_build_runs_with_it(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """cuda-version=12.7 (no conda-forge build of 12.7): the newest older CUDA 12 build runs with it, and the
    file's own pin is written, once, not replaced by the build's."""
    path = tmp_path / "environment.yml"
    path.write_text("name: demo\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.12\n  - pytorch>=2.4\n"
                    "  - cuda-version=12.7\n")
    assert main(["plan", *FLAGS[:3], "580.65.06", *FLAGS[4:], "--project", str(path), "--format", "conda"]) == 0
    specs = [line[4:] for line in capsys.readouterr().out.splitlines() if line.startswith("  - ")]
    assert [s for s in specs if s.startswith("cuda-version")] == ["cuda-version=12.7"]
    build = next(s for s in specs if s.startswith("pytorch="))
    assert build.endswith("_*") and int(build.split("=cuda12")[1][:1]) <= 7


@pytest.mark.parametrize("include", ["-r requirements.txt", "--requirement=requirements.txt",
                                     "--requirement requirements.txt"])
def test_a_file_the_pip_list_includes_is_read_from_the_environments_directory(
        include: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """conda hands the pip list to pip as a requirements file beside the environment.yml: "-r requirements.txt"
    there (the common shape) is that file, and its torch pin and index options hold; "-c" constrains."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "environment.yml").write_text(f"name: demo\nchannels:\n  - conda-forge\ndependencies:\n"
                                             f"  - python=3.10\n  - pip\n  - pip:\n    - {include}\n"
                                             "    - -c pins.txt\n    - --extra-index-url https://private.example.org/"
                                             "simple\n    - annoy\n")
    (project / "requirements.txt").write_text("torch>=2.2\nxformers\n")
    (project / "pins.txt").write_text("torch<2.4\n")
    monkeypatch.chdir(tmp_path)  # not the environment's directory
    assert main(["plan", "--project", "project/environment.yml", *FLAGS[:8], "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["choice"]["torch"] == "2.3.1"  # torch>=2.2 in the included file, <2.4 in the constraint
    assert "--extra-index-url https://private.example.org/simple" in found["commands"]["pip"]
    assert "annoy" in found["commands"]["pip"] and any(c["name"] == "xformers" for c in found["choice"]["companions"])


def test_a_missing_file_the_pip_list_includes_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "environment.yml").write_text("name: demo\ndependencies:\n  - pip:\n    - -r nowhere.txt\n")
    assert main(["plan", "--project", str(tmp_path / "environment.yml"), *FLAGS[:8]]) == 2
    err = capsys.readouterr().err
    assert "nowhere.txt" in err and len(err.strip().splitlines()) == 1, err
