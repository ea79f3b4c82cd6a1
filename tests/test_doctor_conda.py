"""The doctor in a conda environment: conda-meta records, the activation script's arch list and the dist-info
conda wrote (tests/conda_prefixes.py makes them in conda's own formats), read without importing torch; each
wrong build a finding whose fix is a conda (mamba) command, or pixi's for a prefix pixi made."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from conda_channel import need_rattler
from conda_prefixes import ACTIVATE, CASES, SITE, write_prefix
from resolve_cases import TEST_MATRIX
from torch_install.doctor import diagnose
from torch_install.doctor.inspect import inspect_environment
from torch_install.environment.conda_meta import read_prefix
from torch_install.environment.interpreter import Interpreter
from torch_install.machine import Gpu, Machine

LINUX = {"os": "linux", "arch": "x86_64", "glibc": "2.35"}
RTX_4090 = Gpu("nvidia", "NVIDIA GeForce RTX 4090", "10de:2684", "8.9")
GTX_1080 = Gpu("nvidia", "NVIDIA GeForce GTX 1080", "10de:1b80", "6.1")
ORIN = Gpu("nvidia", "Jetson AGX Orin", None, "8.7", family="jetson-orin", integrated=True)
XAVIER = Gpu("nvidia", "Jetson AGX Xavier", None, "7.2", family="jetson-xavier", integrated=True)
MACHINES = {
    "4090-560": Machine(**LINUX, nvidia_driver="560.35.03", gpus=(RTX_4090,)),
    "4090-550": Machine(**LINUX, nvidia_driver="550.54.15", gpus=(RTX_4090,)),
    "1080-580": Machine(**LINUX, nvidia_driver="580.82.07", gpus=(GTX_1080,)),
    "k40-580": Machine(**LINUX, nvidia_driver="580.82.07", gpus=(Gpu("nvidia", "Tesla K40", None, "3.5"),)),
    "no-gpu": Machine(**LINUX, gpus=()),
    "orin": Machine(os="linux", arch="aarch64", glibc="2.35", jetson="36.4.3", cuda_driver_api="12.6", gpus=(ORIN,)),
    "xavier": Machine(os="linux", arch="aarch64", glibc="2.35", jetson="36.4.3", cuda_driver_api="12.6",
                      gpus=(XAVIER,)),
}


@pytest.fixture(scope="module")
def prefixes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("prefixes")
    for case in CASES:
        write_prefix(root, case)
    return root


def interpreter(prefix: Path) -> Interpreter:
    site = str(prefix / SITE)
    return Interpreter(executable=str(prefix / "bin" / "python"), version="3.12.7", system="Linux",
                       machine="aarch64" if "tegra" in prefix.name else "x86_64", path=(site,), site_packages=(site,),
                       prefix=str(prefix), base_prefix=str(prefix))


def doctor(prefixes: Path, case: str, machine: str):
    return diagnose(MACHINES[machine], inspect_environment(interpreter(prefixes / case)), TEST_MATRIX, environ={})


def finding(report, code: str):
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, [f.code for f in report.findings]
    return found[0]


def test_a_cpu_build_on_a_gpu_machine_is_found_and_fixed_with_conda(prefixes: Path) -> None:
    report = doctor(prefixes, "cpu-build", "4090-560")
    found = finding(report, "conda-cpu-build-on-gpu-machine")
    assert found.severity == "error" and not report.healthy
    assert shlex.split(found.fix.split(" (mamba")[0]) == [
        "conda", "install", "--prefix", str(prefixes / "cpu-build"), "--channel", "conda-forge",
        "pytorch=2.13.0=cuda129_*", "cuda-version=12.9"]
    assert any("pytorch 2.13.0 build cpu_mkl_py312_" in e for e in found.evidence)
    assert "cpu-build-on-gpu-machine" not in [f.code for f in report.findings]  # pip's check stands aside


def test_in_a_prefix_pixi_made_the_fix_is_pixis(prefixes: Path) -> None:
    found = finding(doctor(prefixes, "cpu-build-pixi", "4090-560"), "conda-cpu-build-on-gpu-machine")
    assert found.fix.startswith("pixi add --manifest-path /home/user/project/pixi.toml 'pytorch=2.13.0=cuda129_*'")
    assert 'cuda = "12.6"' in found.fix


def test_a_cpu_build_without_a_gpu_and_a_cuda_build_that_fits_are_healthy(prefixes: Path) -> None:
    assert doctor(prefixes, "cpu-build", "no-gpu").healthy
    report = doctor(prefixes, "cuda129-healthy", "4090-560")
    assert report.healthy, [(f.code, f.title) for f in report.problems]


def test_a_cpu_torchvision_next_to_a_cuda_pytorch_is_found(prefixes: Path) -> None:
    found = finding(doctor(prefixes, "torchvision-cpu-next-to-cuda", "4090-560"), "conda-companion-cpu-build")
    assert "torchvision is a CPU build, pytorch a CUDA 12.9 build" in found.title
    assert "'torchvision=*=cuda129_*'" in found.fix and "--prefix" in found.fix


def test_a_torchvision_of_another_cuda_version_is_found(prefixes: Path) -> None:
    found = finding(doctor(prefixes, "torchvision-other-cuda", "4090-560"), "conda-companion-mismatch")
    assert "built for CUDA 12.9, pytorch a CUDA 13.0 build" in found.title


def test_a_cuda_version_newer_than_the_driver_runs_is_found(prefixes: Path) -> None:
    found = finding(doctor(prefixes, "cuda130", "4090-550"), "conda-cuda-version-too-new")
    assert any("cuda-version 13.0" in e for e in found.evidence) and "CUDA 12.4" in found.title
    assert "pytorch=2.13.0=cuda129_*" in found.fix


def test_an_arch_list_without_the_gpus_arch_is_found_from_the_activation_script(prefixes: Path) -> None:
    found = finding(doctor(prefixes, "cuda130", "1080-580"), "conda-gpu-arch-not-in-build")
    assert any(e.endswith("libtorch_activate.sh: CF_TORCH_CUDA_ARCH_LIST=7.5;8.0;8.6;9.0;10.0;11.0;12.0+PTX")
               for e in found.evidence)
    assert "pytorch=2.13.0=cuda129_*" in found.fix  # the CUDA 12.9 build still carries sm_60, which runs sm_61


def test_before_the_activation_script_the_tables_arch_list_is_read(prefixes: Path) -> None:
    assert not os.path.exists(prefixes / "cuda129-2.9.1" / "etc" / "conda" / "activate.d")
    report = doctor(prefixes, "cuda129-2.9.1", "k40-580")
    found = finding(report, "conda-gpu-arch-not-in-build")
    assert any(e.startswith("the conda-forge table (recipe)") for e in found.evidence)


def test_the_tegra_build_serves_orin_and_not_xavier(prefixes: Path) -> None:
    assert not [f for f in doctor(prefixes, "tegra", "orin").problems if f.code.startswith("conda-")]
    found = finding(doctor(prefixes, "tegra", "xavier"), "conda-gpu-arch-not-in-build")
    assert any("8.7+PTX" in e for e in found.evidence)


def test_a_pip_torch_over_conda_torch_is_found_with_a_conda_fix(prefixes: Path) -> None:
    report = doctor(prefixes, "pip-over-conda", "4090-560")
    found = finding(report, "pip-torch-over-conda-torch")
    assert "installed by pip" in " ".join(found.evidence)
    assert "pip uninstall" in found.fix and "--force-reinstall" in found.fix and "conda install --prefix" in found.fix
    assert not [f for f in report.findings if f.code.startswith("conda-")]  # the torch it loads is pip's


def test_records_are_read_as_conda_writes_them(prefixes: Path) -> None:
    rattler = need_rattler()
    conda = read_prefix(str(prefixes / "torchvision-cpu-next-to-cuda"))
    assert conda is not None and conda.problems == ()
    for record in conda.records.values():
        theirs = rattler.PrefixRecord.from_path(record.path)
        assert (theirs.name.normalized, str(theirs.version), str(theirs.build), theirs.build_number, theirs.subdir) == \
            (record.name, record.version, record.build, record.build_number, record.subdir)
    assert conda.manager == "conda" and conda.arch_list == "5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX"


def test_a_damaged_record_or_a_fifo_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    meta = tmp_path / "conda-meta"
    meta.mkdir()
    (meta / "pytorch-2.13.0-cuda129_mkl_py312_h0_302.json").write_text('{"name": "pytorch", "vers', encoding="utf-8")
    if hasattr(os, "mkfifo"):
        os.mkfifo(meta / "torchvision-0.28.0-cuda129_py312_h0_1.json")
    conda = read_prefix(str(tmp_path))
    assert conda is not None and conda.records == {}
    assert any("not JSON" in p for p in conda.problems)
    assert not hasattr(os, "mkfifo") or any("not a regular file" in p for p in conda.problems)


def test_the_json_report_names_what_conda_installed(prefixes: Path) -> None:
    document = doctor(prefixes, "torchvision-cpu-next-to-cuda", "4090-560").to_dict()
    conda = document["conda"]
    assert conda["manager"] == "conda" and conda["arch_list"] == "5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX"
    builds = {r["name"]: (r["build"], r["build_number"]) for r in conda["records"]}
    assert builds["pytorch"][0].startswith("cuda129_mkl_py312_") and builds["pytorch"][1] == 302
    assert builds["torchvision"][0].startswith("cpu_py312_")


def test_the_windows_activation_script_records_the_arch_list_too(tmp_path: Path) -> None:
    """bld.bat writes the recipe's activate.bat with the list in place of its placeholder (sed, as bld.bat runs it)."""
    (tmp_path / "conda-meta").mkdir()
    script = tmp_path / "etc" / "conda" / "activate.d" / "libtorch_activate.bat"
    script.parent.mkdir(parents=True)
    recipe = (ACTIVATE.parent / "activate.bat").read_bytes()
    assert b"@cf_torch_cuda_arch_list@" in recipe
    script.write_bytes(recipe.replace(b"@cf_torch_cuda_arch_list@", b"7.5;8.0;8.6;9.0;10.0;11.0;12.0+PTX"))
    conda = read_prefix(str(tmp_path))
    assert conda is not None and conda.arch_list == "7.5;8.0;8.6;9.0;10.0;11.0;12.0+PTX"
    assert conda.arch_script == str(script)


def test_every_fix_names_specs_the_conda_solver_reads(prefixes: Path) -> None:
    """Each conda finding's fix is a command whose package arguments are MatchSpecs conda, mamba and pixi parse."""
    rattler = need_rattler()
    checked = 0
    for case in CASES:
        for machine in MACHINES:
            if ("tegra" in case) != (machine in ("orin", "xavier")):
                continue
            for found in doctor(prefixes, case, machine).findings:
                for command in re.findall(r"(?:conda install|pixi add) [^(`]*", found.fix):
                    words = shlex.split(command)
                    specs = [w for i, w in enumerate(words[2:], 2) if not w.startswith("-") and
                             words[i - 1] not in ("--prefix", "--channel", "--manifest-path")]
                    assert specs, command
                    for spec in specs:
                        assert rattler.MatchSpec(spec).name.normalized == spec.split("=")[0], spec
                    checked += 1
    assert checked >= 12
