"""--format conda and --format pixi: an environment.yml and a pixi manifest for one target or several, checked by
the conda ecosystem's own readers: YAML as PyYAML reads it, the manifest as TOML and against pixi's JSON Schema,
every MatchSpec as py-rattler parses it, and the conda part solved by py-rattler (the solver pixi is built on)
against a local channel shaped like conda-forge's pytorch (tests/conda_channel.py), with the machine's ``__cuda``,
without it, and with the ``CONDA_OVERRIDE_CUDA`` the file names."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from conda_channel import need_rattler, solve, virtual_packages, write_channel
from pixi_manifest import manifest, pixi_specs
from torch_install.cli import main
from torch_install.project.simple_yaml import loads

RTX_4090 = {"vendor": "nvidia", "name": "NVIDIA GeForce RTX 4090", "pci_id": "10de:2684", "compute_capability": "8.9"}
LINUX_560 = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35", "nvidia_driver": "560.35.03",
             "gpus": [RTX_4090]}
LINUX_580 = {**LINUX_560, "nvidia_driver": "580.82.07"}
GTX_1080 = {**LINUX_580, "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080", "compute_capability": "6.1"}]}
MAC = {"os": "macos", "arch": "arm64", "python": "3.12", "os_version": "14.5"}
CPU = {"os": "linux", "arch": "x86_64", "python": "3.11", "glibc": "2.35", "gpus": []}
WINDOWS = {"os": "windows", "arch": "x86_64", "python": "3.12", "nvidia_driver": "576.02",
           "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"}]}
ORIN = {"os": "linux", "arch": "aarch64", "python": "3.10", "glibc": "2.35", "jetson": "36.4.3",
        "cuda_driver_api": "12.6", "gpus": [{"vendor": "nvidia", "name": "Jetson AGX Orin", "compute_capability": "8.7",
                                             "family": "jetson-orin", "integrated": True}]}
AMD = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35", "rocm": "6.4.1",
       "gpus": [{"vendor": "amd", "name": "AMD Radeon RX 7900 XTX", "gfx": "gfx1100"}]}
MACHINES = {"linux-560": LINUX_560, "linux-580": LINUX_580, "gtx1080": GTX_1080, "mac": MAC, "cpu": CPU,
            "windows": WINDOWS, "orin": ORIN}
# what conda-forge's build for each machine is: (subdir, build-string prefix, cuda-version)
EXPECTED = {"linux-560": ("linux-64", "cuda129_", "12.9"), "linux-580": ("linux-64", "cuda130_", "13.0"),
            "gtx1080": ("linux-64", "cuda129_", "12.9"), "mac": ("osx-arm64", "cpu_", None),
            "cpu": ("linux-64", "cpu_", None), "windows": ("win-64", "cuda128_", "12.8"),
            "orin": ("linux-aarch64", "cuda129_", "12.9")}
SUBDIR_OF = {"linux-64": "linux_x86_64"}


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, *machines: dict[str, Any],
        packages: tuple[str, ...] = ("torch",), extra: tuple[str, ...] = ()) -> tuple[int, str, str]:
    argv = ["plan", *packages, "--format", fmt, *extra]
    for i, machine in enumerate(machines):
        path = tmp_path / f"target{i}.json"
        path.write_text(json.dumps(machine))
        argv += ["--target", str(path)]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def documents(text: str) -> list[dict[str, Any]]:
    """The environment.yml documents, read by PyYAML (conda's own reader family) and by torch-install's reader,
    which must agree."""
    import yaml  # PyYAML (the test extra) reads the YAML as conda does
    parsed = [d for d in yaml.safe_load_all(text) if d is not None]
    own = [loads(part) for part in re.split(r"^---$", text, flags=re.M) if loads(part) is not None]
    assert parsed == own
    return parsed


def conda_part(document: dict[str, Any]) -> list[str]:
    return [d for d in document["dependencies"] if isinstance(d, str)]


def pip_part(document: dict[str, Any]) -> list[str]:
    return next((d["pip"] for d in document["dependencies"] if isinstance(d, dict)), [])


def override(text: str) -> str | None:
    found = re.search(r"CONDA_OVERRIDE_CUDA=([0-9.]+)", text)
    return found[1] if found else None


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_channel(tmp_path_factory.mktemp("conda-forge"))


# ---- what the files say ------------------------------------------------------------------------------------------

def test_a_cuda_linux_box_gets_conda_forges_cuda_build_pinned_by_its_build_string(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, "conda", LINUX_560, packages=("torch", "torchvision", "transformers"))
    assert code == 0, err
    (document,) = documents(out)
    assert document["channels"] == ["conda-forge", "nodefaults"]
    assert conda_part(document) == ["python=3.12", "pytorch=2.13.0=cuda129_*", "torchvision=*=cuda129_*",
                                    "cuda-version=12.9", "pip"]
    assert pip_part(document) == ["transformers", "torch==2.13.0"]
    assert override(out) == "12.6"  # the driver's CUDA: what __cuda is on the machine
    assert "source: conda-forge" in out and "sm_89 runs its sm_86 kernels" in out


def test_a_pixi_manifest_declares_the_platforms_cuda_and_pins_the_build(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, "pixi", LINUX_580)
    assert code == 0, err
    data = manifest(out)
    assert data["workspace"]["platforms"] == [{"name": "linux-64-cuda13", "platform": "linux-64", "cuda": "13.0"}]
    assert data["workspace"]["requires-pixi"] == ">=0.71.0"
    assert data["dependencies"] == {"python": "3.12.*", "pytorch": {"version": "==2.13.0", "build": "cuda130_*"},
                                    "cuda-version": "13.0.*"}
    assert "CONDA_OVERRIDE_CUDA=13.0 pixi install --platform linux-64-cuda13" in out


def test_a_mac_and_a_linux_box_share_one_manifest_each_with_its_own_build(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, "pixi", LINUX_560, MAC, packages=("torch", "torchvision"))
    assert code == 0, err
    data = manifest(out)
    assert data["workspace"]["platforms"] == [{"name": "linux-64-cuda12", "platform": "linux-64", "cuda": "12.6"},
                                              "osx-arm64"]
    assert data["dependencies"] == {"python": "3.12.*"}
    assert data["target"]["linux-64-cuda12"]["dependencies"]["pytorch"] == {"version": "==2.13.0",
                                                                             "build": "cuda129_*"}
    assert data["target"]["osx-arm64"]["dependencies"] == {"pytorch": {"version": "==2.13.0", "build": "cpu_*"},
                                                          "torchvision": {"build": "cpu_*"}}


def test_pytorch_index_wheels_go_under_pypi_dependencies_with_each_targets_index(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, "pixi", LINUX_580, MAC, extra=("--torch-source", "pytorch-index"))
    assert code == 0, err
    data = manifest(out)
    linux = data["target"]["linux-64-cuda13"]["pypi-dependencies"]["torch"]
    assert linux["index"].startswith("https://download.pytorch.org/whl/cu13")
    assert linux["version"] == f"==2.15.0+{linux['index'].rsplit('/', 1)[1]}"
    assert data["target"]["osx-arm64"]["pypi-dependencies"] == {"torch": "==2.15.0"}  # the default index's build
    assert data["dependencies"] == {"python": "3.12.*"}
    assert "--torch-source pytorch-index (without it: conda-forge" in out


def test_the_environment_yml_for_the_pytorch_index_hands_pip_the_index(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, "conda", LINUX_580, packages=("torch", "numpy<2"),
                         extra=("--torch-source", "pytorch-index"))
    assert code == 0, err
    (document,) = documents(out)
    lines = pip_part(document)
    assert lines[0].startswith("--extra-index-url https://download.pytorch.org/whl/cu13")
    assert re.fullmatch(r"torch==2\.15\.0\+cu13[0-9]", lines[1]) and lines[2] == "numpy<2"
    assert conda_part(document) == ["python=3.12", "pip"] and override(out) is None  # pip wheels need no __cuda


def test_an_amd_gpu_takes_pytorch_index_rocm_wheels_and_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, "pixi", AMD)
    assert code == 0, err
    data = manifest(out)
    assert "rocm" in data["pypi-dependencies"]["torch"]["index"]
    assert "conda-forge's builds do not run it" in out


def test_several_linux_targets_with_different_cuda_get_a_named_platform_each(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, "pixi", LINUX_580, LINUX_560, CPU)
    assert code == 0, err
    names = [p["name"] for p in manifest(out)["workspace"]["platforms"]]
    assert names == ["linux-64-cuda13", "linux-64-cuda12", "linux-64-cpu"]


def test_environment_yml_for_several_platforms_is_one_document_each(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], channel: Path) -> None:
    code, out, err = run(tmp_path, capsys, "conda", LINUX_560, MAC, packages=("torch", "torchvision"))
    assert code == 0, err
    linux, mac = documents(out)
    assert "pytorch=2.13.0=cuda129_*" in conda_part(linux) and "pytorch=2.13.0=cpu_*" in conda_part(mac)
    need_rattler()
    for document, subdir, cuda, prefix in ((linux, "linux-64", override(out), "cuda129_"),
                                           (mac, "osx-arm64", None, "cpu_")):
        solved = solve(channel, subdir, [s for s in conda_part(document) if s != "pip"],
                       virtual_packages(subdir, cuda))
        assert str(solved["pytorch"].build).startswith(prefix) and str(solved["torchvision"].build).startswith(prefix)


@pytest.mark.parametrize(("extra", "message"), [
    (("--torch-source", "anaconda"), "--torch-source anaconda: not one of conda-forge, pytorch-index"),
    (("--torch-source", "conda-forge", "--format", "pip"), "--torch-source goes with --format conda or pixi"),
])
def test_a_bad_torch_source_is_one_line_and_exit_2(extra: tuple[str, ...], message: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, "pixi", LINUX_560, extra=extra)
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_package_built_against_one_torch_needs_pytorch_index_wheels(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, "conda", LINUX_580, packages=("torch", "xformers"),
                         extra=("--torch-source", "conda-forge"))
    assert code == 2 and "xformers is built against one torch build" in err


# ---- checked by py-rattler ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("machine", MACHINES)
def test_every_environment_yml_spec_parses_and_solves_to_the_build_it_names(
        machine: str, channel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rattler = need_rattler()
    code, out, err = run(tmp_path, capsys, "conda", MACHINES[machine], packages=("torch", "torchvision"))
    assert code == 0, err
    (document,) = documents(out)
    specs = [s for s in conda_part(document) if s != "pip"]
    assert all(rattler.MatchSpec(s).name is not None for s in specs)
    subdir, prefix, cuda_version = EXPECTED[machine]
    cuda = override(out)
    solved = solve(channel, subdir, specs, virtual_packages(subdir, cuda, glibc=MACHINES[machine].get("glibc",
                                                                                                    "2.35")))
    assert str(solved["pytorch"].build).startswith(prefix) and str(solved["torchvision"].build).startswith(prefix)
    assert (str(solved["cuda-version"].version) if "cuda-version" in solved else None) == cuda_version
    if machine == "orin":
        assert str(solved["arm-variant"].build) == "tegra"
    if cuda:  # built where no GPU is visible: only the override makes it installable
        from rattler.exceptions import SolverError

        with pytest.raises(SolverError):
            solve(channel, subdir, specs, virtual_packages(subdir, None))


@pytest.mark.parametrize("pair", [("linux-560", "mac"), ("linux-580", "windows", "mac"), ("orin", "cpu")])
def test_one_pixi_manifest_solves_for_every_platform_it_declares(
        pair: tuple[str, ...], channel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    need_rattler()
    code, out, err = run(tmp_path, capsys, "pixi", *(MACHINES[m] for m in pair), packages=("torch", "torchvision"))
    assert code == 0, err
    data = manifest(out)
    platforms = data["workspace"]["platforms"]
    assert len(platforms) == len(pair)
    for machine, platform in zip(pair, platforms, strict=True):
        subdir, specs = pixi_specs(data, platform)
        declared = {} if isinstance(platform, str) else platform
        expected_subdir, prefix, _ = EXPECTED[machine]
        assert subdir == expected_subdir
        # what pixi declares where the entry does not say: glibc 2.28, macOS 13.0 (its docs)
        solved = solve(channel, subdir, specs, virtual_packages(subdir, declared.get("cuda"),
                                                                glibc=declared.get("glibc", "2.28"),
                                                                macos=declared.get("macos", "13.0")))
        assert str(solved["pytorch"].build).startswith(prefix), (machine, solved["pytorch"].build)


def test_a_glibc_below_cuda_13s_floor_gets_the_cuda_12_build(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, "conda", {**LINUX_580, "glibc": "2.27"})
    assert code == 0, err
    assert "pytorch=2.13.0=cuda129_*" in conda_part(documents(out)[0])


# every NVIDIA generation conda-forge's lists name or leave out, on every CUDA driver branch and each subdir
GRID_SM = ("3.5", "5.0", "6.1", "7.0", "7.5", "8.6", "8.9", "9.0", "10.0", "12.0")
GRID_DRIVERS = ("470.256.02", "525.60.13", "550.54.15", "560.35.03", "575.57.08", "580.82.07")
GRID_PLATFORMS = (("linux", "x86_64", "linux-64"), ("linux", "aarch64", "linux-aarch64"),
                  ("windows", "x86_64", "win-64"))


@pytest.mark.slow
def test_every_machine_of_the_grid_gets_specs_that_solve_to_a_build_that_runs_it(channel: Path) -> None:
    """The class, not the example: on every machine of the grid the environment.yml's conda part solves, with
    the __cuda it names, to a pytorch whose arch list (the table's) runs the GPU under the cubin/PTX rule, and to
    conda-forge's CPU build only where no conda-forge CUDA build of the release runs it."""
    need_rattler()
    from torch_install.machine import Gpu, Machine
    from torch_install.render.conda import render_conda
    from torch_install.resolver.choose import resolve
    from torch_install.resolver.conda_forge import builds, driver_cuda
    from torch_install.resolver.matrix import load_matrix
    from torch_install.resolver.plan import Request
    from torch_install.resolver.rules import cubin_or_ptx

    matrix, checked = load_matrix(), 0
    for os_name, arch, subdir in GRID_PLATFORMS:
        for sm in GRID_SM:
            for driver in GRID_DRIVERS:
                machine = Machine(os=os_name, arch=arch, python="3.12", glibc="2.35" if os_name == "linux" else None,
                                  nvidia_driver=driver, gpus=(Gpu("nvidia", f"GPU sm {sm}", None, sm),))
                plan = resolve(machine, Request(packages=("torch",)), matrix)
                text = render_conda(plan, "conda-forge")
                (document,) = documents(text)
                specs = [s for s in conda_part(document) if s != "pip"]
                pytorch = next(s for s in specs if s.startswith("pytorch="))
                _, version, pattern = pytorch.split("=")
                solved = solve(channel, subdir, specs, virtual_packages(subdir, override(text)))
                build = str(solved["pytorch"].build)
                assert build.startswith(pattern.rstrip("*")), (machine, specs, build)
                capability = int(sm.replace(".", ""))
                have = int((driver_cuda(machine) or "0").split(".")[0])
                runs = [b for b in builds() if b.version == version and b.subdir == subdir and b.arch and
                        b.arm_variant != "tegra" and cubin_or_ptx(b.arch, capability) and
                        int((b.cuda or "0").split(".")[0]) <= have]
                assert build.startswith("cuda") == bool(runs), (machine, build, [b.cuda for b in runs])
                checked += 1
    assert checked == len(GRID_SM) * len(GRID_DRIVERS) * len(GRID_PLATFORMS)


def test_a_missing_solver_fails_where_its_wheel_installs_and_skips_only_elsewhere(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from conda_channel import rattler_wheel_installs

    monkeypatch.setitem(sys.modules, "rattler", None)  # import rattler: ImportError
    expected = pytest.fail.Exception if rattler_wheel_installs() else pytest.skip.Exception
    with pytest.raises(expected) as raised:
        need_rattler()
    assert ("install the test extra" if rattler_wheel_installs() else "no wheel for this platform") in str(raised.value)


WHEEL = "https://h.example/whl/cu128/torch-2.7.1%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl"


@pytest.mark.parametrize("fmt", ["conda", "pixi"])
def test_a_wheel_the_request_names_is_the_files_torch_and_reads_back_to_the_same_build(
        fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``torch @ URL`` written as a conda or pixi file keeps that wheel (conda-forge's build is another), and the
    file reads back to the same build and reference."""
    code, out, err = run(tmp_path, capsys, fmt, LINUX_580, packages=(f"torch @ {WHEEL}", "torchvision"))
    assert code == 0, err
    if fmt == "conda":
        document = documents(out)[0]
        assert f"torch @ {WHEEL}" in pip_part(document) and not any(d.startswith("pytorch") for d in
                                                                      conda_part(document))
    else:
        assert f'torch = {{ url = "{WHEEL}" }}' in out
    name = "environment.yml" if fmt == "conda" else "pixi.toml"
    (tmp_path / name).write_text(out)
    target = tmp_path / "target0.json"
    assert main(["plan", "--project", str(tmp_path / name), "--target", str(target), "--format", "json"]) == 0
    choice = json.loads(capsys.readouterr().out)["choice"]
    assert (choice["torch"], choice["variant"], choice["references"]) == ("2.7.1", "cu128",
                                                                        {"torch": f"torch @ {WHEEL}"})
