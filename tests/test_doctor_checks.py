"""Doctor checks on site-packages fixtures (real dist-info/version.py formats) × hardware profiles.

Every broken case must be diagnosed with the right code and a fix command that, applied (the fixture's torch
rewritten to the fix's pinned version and label), makes the doctor report healthy.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from doctor_cases import LINUX, RTX4090, case_site, codes, copy_case, interpreter, run
from resolve_cases import TEST_MATRIX
from torch_install.doctor.checks import wheel_glibc
from torch_install.doctor.inspect import inspect_environment
from torch_install.machine import Gpu, Machine
from torch_install.probe import Probe
from torch_install.resolver.matrix import CudaArch
from torch_install.resolver.rules import check_cuda, hsa_override, runs_on


def apply_fix(site: Path, command: str) -> None:
    """Simulate running the fix: replace the torch family's dist-info and version.py with the pinned builds."""
    pins = dict(re.findall(r"(torch|torchvision|torchaudio)==(\S+)", command))
    assert "torch" in pins, command
    for package, pinned in pins.items():
        for old in site.glob(f"{package}-*.dist-info"):
            shutil.rmtree(old)
        for old in site.glob("~*"):
            shutil.rmtree(old)
        public, _, label = pinned.partition("+")
        info = site / f"{package}-{pinned}.dist-info"
        info.mkdir()
        requires = "" if package == "torch" else f"Requires-Dist: torch=={pins['torch'].partition('+')[0]}\n"
        (info / "METADATA").write_text(f"Metadata-Version: 2.4\nName: {package}\nVersion: {pinned}\n{requires}\n")
        (info / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: bdist_wheel (0.45.1)\nRoot-Is-Purelib: false\n"
                                    "Tag: cp311-cp311-manylinux_2_28_x86_64\n\n")
        (info / "INSTALLER").write_text("pip\n")
        (info / "RECORD").write_text(f"{package}/version.py,,\n{info.name}/RECORD,,\n")
        (site / package).mkdir(exist_ok=True)
        (site / package / "__init__.py").write_text("")
        if package == "torch":
            cuda = f"'{label[2:-1]}.{label[-1]}'" if label.startswith("cu") else "None"
            hip = f"'{label[4:]}.0-0'" if label.startswith("rocm") else "None"
            xpu = "'20250201'" if label == "xpu" else "None"
            (site / "torch" / "version.py").write_text(
                f"from typing import Optional\n\n__version__ = '{pinned}'\ndebug = False\n"
                f"cuda: Optional[str] = {cuda}\n"
                f"git_version = 'a1cb3cc05d46d198467bebbb6e8fba50a325d4e7'\nhip: Optional[str] = {hip}\n"
                f"xpu: Optional[str] = {xpu}\n")
        else:
            (site / package / "version.py").write_text(f"__version__ = '{pinned}'\n")


CASES = [
    # (fixture, machine, expected error/warning code, the version the fix keeps or moves to, variant)
    ("cpu-2.9.1", "rtx4090-570", "cpu-build-on-gpu-machine", "2.9.1", "cu"),
    ("default-index-2.15.0-cu132", "rtx4090-550", "cuda-build-driver-too-old", "2.14.1", "cu126"),
    ("cu128-2.8.0", "gtx1080-570", "gpu-arch-not-in-build", "2.8.0", "cu126"),
    ("cu121-2.4.0-torchvision-cu124", "rtx4090-570", "companion-mismatch", "2.4.0", "cu121"),
    ("duplicate", "rtx4090-570", "duplicate-torch-install", "2.9.1", "cu"),
    ("half-deleted", "rtx4090-570", "broken-install", "2.8.0", "cu128"),
    ("bad-version-py", "rtx4090-570", "broken-install", "2.8.0", "cu128"),
    ("cu128-2.8.0", "no-gpu", "cuda-wheel-on-cpu-machine", "2.8.0", "cpu"),
    ("empty", "rtx4090-570", "no-torch", None, "cu"),
]


@pytest.mark.parametrize(("case", "machine", "code", "version", "variant"), CASES)
def test_broken_install_is_diagnosed_and_its_fix_makes_it_healthy(tmp_path, case, machine, code, version, variant):
    site = copy_case(case, tmp_path)
    report = run(site, machine)
    assert not report.healthy and report.exit_code == 1
    assert code in codes(report, "error", "warning"), codes(report)
    finding = next(f for f in report.findings if f.code == code)
    assert finding.evidence and finding.fix
    assert report.fix is not None
    command = report.fix.command
    assert command in finding.fix
    assert command.startswith("/env/bin/python -m pip install ") or command.startswith("uv pip install --python")
    if version:
        assert f"torch=={version}+" in command
    assert re.search(rf"torch==\S+\+{variant}", command), command
    assert re.search(r"--(index-url|default-index) https://download\.pytorch\.org/whl/", command), command
    for package, pinned in re.findall(r"(torch|torchvision|torchaudio)==(\S+)", command):
        if code == "broken-install" and (site / f"{package}-{pinned}.dist-info").is_dir():
            # a damaged install whose dist-info names the pin: pip would call it satisfied and do nothing
            assert "--force-reinstall" in command, command
    apply_fix(site, command)
    after = run(site, machine)
    if variant.startswith("cu1") and codes(after, "error", "warning") == ("nvidia-libs-stale-major",):
        # a move across CUDA majors leaves the old major's nvidia-* packages (other names): the doctor names
        # them next, and uninstalling those (nothing else) leaves a healthy install
        for name in after.findings[0].fix.split(" uninstall -y ")[1].split():
            shutil.rmtree(next(site.glob(f"{name.replace('-', '_')}-*.dist-info")))
        after = run(site, machine)
    assert after.healthy, [(f.code, f.evidence) for f in after.problems]
    assert after.exit_code == 0 and after.fix is None


def test_healthy_install_reports_no_problem():
    report = run(case_site("healthy-2.9.1-cu128"), "rtx4090-570")
    assert report.healthy and report.findings == () and report.fix is None
    assert report.torch is not None and (report.torch.version, report.torch.variant) == ("2.9.1", "cu128")


def test_rocm_build_on_gfx1031_needs_the_override_and_is_healthy_with_it():
    site = case_site("rocm6.4-2.8.0")
    report = run(site, "rx6700xt")
    finding = next(f for f in report.findings if f.code == "rocm-gfx-not-in-build")
    assert finding.severity == "error" and finding.fix == "export HSA_OVERRIDE_GFX_VERSION=10.3.0"
    assert any("[inferred]" in line for line in finding.evidence)  # the gfx list is inferred data: say so
    fixed = run(site, "rx6700xt", environ={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    assert fixed.healthy and codes(fixed) == ("rocm-gfx-not-in-build", "install-guard-missing")
    wrong = run(site, "rx6700xt", environ={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
    assert not wrong.healthy and any("'11.0.0'" in e for f in wrong.findings for e in f.evidence)


def test_companion_mismatch_names_both_version_and_flavour():
    report = run(case_site("cu121-2.4.0-torchvision-cu124"), "rtx4090-570")
    evidence = " | ".join(next(f for f in report.findings if f.code == "companion-mismatch").evidence)
    assert "requires torch==2.5.1 but torch is 2.4.0" in evidence
    assert "built for cu124, torch for cu121" in evidence
    assert "torchvision==0.19.0+cu121" in report.fix.command


def test_same_version_other_flavour_mismatch_is_seen_where_pip_check_is_blind(tmp_path):
    site = copy_case("healthy-2.9.1-cu128", tmp_path)
    (site / "torchvision" / "version.py").write_text("__version__ = '0.24.1+cpu'\n")
    report = run(site, "rtx4090-570")
    assert codes(report, "error") == ("companion-mismatch",)
    assert "torchvision is a cpu build, torch a cu128 build" in report.findings[0].evidence[0]


def test_driver_floor_comes_from_the_matrix():
    site = case_site("default-index-2.15.0-cu132")
    new_driver = Machine(**LINUX, nvidia_driver="580.65.06", gpus=(RTX4090,))
    assert "cuda-build-driver-too-old" not in codes(run(site, new_driver))
    report = run(site, "rtx4090-550")
    assert any("≥ 580.65.06" in line for line in report.findings[0].evidence)
    assert "nearest: 2.14.1" in report.fix.reason


def test_cpu_wheel_on_gpu_machine_keeps_version_and_adds_no_force_when_labels_differ():
    report = run(case_site("cpu-2.9.1"), "rtx4090-570")
    assert report.fix.reason == "keeps torch 2.9.1" and report.fix.flavour_change
    assert "--force-reinstall" not in report.fix.command  # 2.9.1+cpu -> 2.9.1+cu128: pip replaces it anyway


def test_force_reinstall_only_when_pip_would_keep_the_wrong_flavour():
    from torch_install.doctor.fix import install_command, needs_force
    from torch_install.resolver.plan import Choice, Plan, Request

    installed = inspect_environment(interpreter(case_site("healthy-2.9.1-cu128")))
    torch = run(Path(installed.interpreter.path[0]), "rtx4090-570").torch
    unlabelled = Plan(Machine(), Request(), Choice("cpu", "2.9.1", None, {"torch": "2.9.1"}), False)
    labelled = Plan(Machine(), Request(), Choice("cpu", "2.9.1", "https://download.pytorch.org/whl/cpu",
                                                 {"torch": "2.9.1+cpu"}), False)
    same = Plan(Machine(), Request(), Choice("cu128", "2.9.1", "https://download.pytorch.org/whl/cu128",
                                             {"torch": "2.9.1"}), True)
    assert needs_force(installed, torch, unlabelled)  # dist says 2.9.1: pip would keep the CUDA build
    assert not needs_force(installed, torch, labelled) and not needs_force(installed, torch, same)
    command = install_command(unlabelled, installed, True)
    assert command.startswith("/env/bin/python -m pip install --force-reinstall torch==2.9.1")


def test_cuda_libraries_left_behind_by_a_cpu_torch_are_info_only(tmp_path):
    site = copy_case("cu128-2.8.0", tmp_path)
    apply_fix(site, "/env/bin/python -m pip install torch==2.8.0+cpu")
    report = run(site, "no-gpu")
    assert report.healthy and codes(report, "info") == ("orphaned-cuda-libraries", "install-guard-missing")
    assert "nvidia-cudnn-cu12" in report.findings[0].fix and "1.3 GB" in report.findings[0].title


def test_visible_devices_minus_one_hides_the_gpu():
    site = case_site("healthy-2.9.1-cu128")
    for value in ("-1", ""):
        report = run(site, "rtx4090-570", environ={"CUDA_VISIBLE_DEVICES": value})
        assert codes(report) == ("visible-devices-hide-all",)
        assert report.findings[0].fix == "unset CUDA_VISIBLE_DEVICES"
    assert run(site, "rtx4090-570", environ={"CUDA_VISIBLE_DEVICES": "0,1"}).healthy


def test_python_without_matching_wheel_tag():
    report = run(case_site("healthy-2.9.1-cu128"), "rtx4090-570", version="3.12.4")
    finding = next(f for f in report.findings if f.code == "python-unsupported")
    assert "cp312" in finding.evidence[0] and "cp311-cp311-manylinux_2_28_x86_64" in finding.evidence[0]


def test_glibc_older_than_the_wheel_tag():
    old = Machine(os="linux", arch="x86_64", glibc="2.27", nvidia_driver="570.133.07", gpus=(RTX4090,))
    report = run(case_site("healthy-2.9.1-cu128"), old)
    finding = next(f for f in report.findings if f.code == "glibc-too-old")
    assert "needs glibc ≥ 2.28" in finding.evidence[0] and "glibc 2.27" in finding.evidence[1]


def test_rosetta_python_on_apple_silicon(tmp_path):
    mac = Machine(os="macos", arch="arm64", rosetta=True, gpus=(Gpu("apple", "Apple M1", family="m1"),))
    report = run(copy_case("empty", tmp_path), mac)
    assert "rosetta-python" in codes(report, "error")


def test_captured_machine_files(tmp_path):
    """Driver/library mismatch, stub libcuda and shadowing system CUDA libraries, read through a Probe tree."""
    root = tmp_path / "root"
    (root / "sys/module/nvidia").mkdir(parents=True)
    (root / "sys/module/nvidia/version").write_text("570.133.07\n")
    libdir = root / "usr/lib/x86_64-linux-gnu"
    libdir.mkdir(parents=True)
    for name in ("libcuda.so.570.172.08", "libnvidia-ml.so.570.172.08", "libcuda.so.1"):
        (libdir / name).write_text("")
    (root / "usr/local/cuda-12.4/lib64/stubs").mkdir(parents=True)
    (root / "usr/local/cuda-12.4/lib64/stubs/libcuda.so").write_text("")
    (root / "usr/local/cuda-12.4/lib64/libcudnn.so.8").write_text("")
    (root / "usr/local/cuda-12.4/lib64/libnvJitLink.so.12").write_text("")
    env = {"LD_LIBRARY_PATH": "/usr/local/cuda-12.4/lib64:/usr/local/cuda-12.4/lib64/stubs"}
    probe = Probe(root=root, env=env)
    report = run(case_site("healthy-2.9.1-cu128"), "rtx4090-570", environ=env, probe=probe)
    found = codes(report)
    assert found.count("nvidia-libs-shadowed") == 2 and "driver-library-mismatch" in found
    mismatch = next(f for f in report.findings if f.code == "driver-library-mismatch")
    assert "kernel module 570.133.07 (/sys/module/nvidia/version)" in mismatch.evidence[0]
    assert "reboot" in mismatch.fix
    shadow = " ".join(e for f in report.findings if f.code == "nvidia-libs-shadowed" for e in f.evidence)
    assert "libcudnn.so.8" in shadow and "stubs/libcuda.so" in shadow
    assert report.environment["LD_LIBRARY_PATH"] == env["LD_LIBRARY_PATH"]


def test_wsl_without_the_windows_driver_libraries(tmp_path):
    root = tmp_path / "root"
    (root / "usr/lib/wsl/lib").mkdir(parents=True)
    wsl = Machine(**LINUX, wsl=True, gpus=(RTX4090,))
    report = run(case_site("healthy-2.9.1-cu128"), wsl, probe=Probe(root=root, env={}))
    finding = next(f for f in report.findings if f.code == "wsl-gpu-driver-missing")
    assert len(finding.evidence) == 2 and "Windows" in finding.fix


def test_xpu_build_without_level_zero(tmp_path):
    site = copy_case("cpu-2.9.1", tmp_path)
    apply_fix(site, "pip install torch==2.9.1+xpu")
    arc = Machine(**LINUX, gpus=(Gpu("intel", "Intel Arc A770", "8086:56a0", family="alchemist", driver="i915"),))
    report = run(site, arc, probe=Probe(root=tmp_path / "empty-root", env={}))
    finding = next(f for f in report.findings if f.code == "xpu-runtime-missing")
    assert any("libze_loader" in e for e in finding.evidence)


@pytest.mark.parametrize(("sm", "ptx", "cc", "runs"), [
    ((70, 75, 80, 86, 90, 100, 120), (), 61, False),
    ((50, 60, 70), (), 61, True),  # sm_60 cubin runs on 6.1
    ((80, 90), (), 87, True),  # Orin runs sm_80 code
    ((75, 80, 86, 90), (90,), 120, True),  # PTX JIT
    ((75, 80, 86, 90), (), 120, False),
])
def test_binary_compatibility_rule(sm, ptx, cc, runs):
    assert (runs_on(CudaArch(sm=sm, ptx=ptx), cc) is not None) is runs


@pytest.mark.parametrize("cc", ["5.0", "6.1", "7.0", "7.5", "8.6", "8.7", "9.0", "10.0", "12.0", "12.1"])
def test_doctor_and_resolver_agree_on_kernels(cc):
    """The doctor flags a GPU exactly when the resolver would reject the installed (release, variant) for it."""
    site = case_site("cu128-2.8.0")
    gpu = Gpu("nvidia", "GPU", compute_capability=cc)
    machine = Machine(**LINUX, nvidia_driver="580.65.06", gpus=(gpu,))
    matrix = TEST_MATRIX
    verdict = check_cuda(matrix, matrix.release("2.8.0"), "cu128", machine.platform or "", (gpu,), machine)
    assert not any("not known" in note for note in verdict.notes)  # the arch list was really checked
    report = run(site, machine)
    assert ("gpu-arch-not-in-build" in codes(report)) is (not verdict.arch_ok)


def test_small_parsers():
    assert hsa_override("gfx1030") == "10.3.0" and hsa_override("gfx90a") == "9.0.10"
    assert wheel_glibc(("cp311-cp311-manylinux_2_28_x86_64",)) == "2.28"
    assert wheel_glibc(("cp311-cp311-manylinux1_x86_64",)) == "2.5"
    assert wheel_glibc(("py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64",)) == "2.27"
    assert wheel_glibc(("cp311-cp311-linux_x86_64",)) is None


def test_wsl_with_the_windows_driver_is_healthy_and_without_libcuda_is_not(tmp_path):
    """The WSL fixture as the Windows driver leaves it (libcuda in /usr/lib/wsl/lib) raises no WSL finding;
    the same tree without libcuda does."""
    from torch_install.detectors import detect

    tree = tmp_path / "wsl"
    shutil.copytree(Path(__file__).parent / "fixtures" / "sysroots" / "wsl2-nvidia", tree)
    site = case_site("cu128-2.8.0")
    probe = Probe(root=tree)
    assert "wsl-gpu-driver-missing" not in codes(run(site, detect(probe), probe=probe))
    for lib in (tree / "usr/lib/wsl/lib").glob("libcuda.so*"):
        lib.unlink()
    probe = Probe(root=tree)
    finding = next(f for f in run(site, detect(probe), probe=probe).findings if f.code == "wsl-gpu-driver-missing")
    assert any("/usr/lib/wsl/lib has no libcuda.so" in e for e in finding.evidence)


def test_the_text_report_keeps_its_values_in_one_column():
    from torch_install.doctor.report import render_text

    text = render_text(run(case_site("cu121-2.4.0-torchvision-cu124"), "rtx4090-570"))
    head = text.split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in head] == ["Python", "torch", "torchvision", "machine"]
    assert len({len(line) - len(line[len(line.split()[0]):].lstrip()) for line in head}) == 1, head


@pytest.mark.parametrize("tag", ["cp312-cp312-manylinux_2_28_x86_64", "py2.py3-none-any", "cp313-cp313t-win_amd64",
                                 "cp38-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64",
                                 "CP311-CP311-MACOSX_11_0_ARM64", "not-a", "a--b"])
def test_wheel_tags_are_read_as_packaging_reads_them(tag: str) -> None:
    from packaging.tags import parse_tag

    from torch_install.wheel_tags import _parsed

    try:
        expected = sorted((t.interpreter, t.abi, t.platform) for t in parse_tag(tag))
    except ValueError:
        expected = []
    assert sorted(_parsed((tag,))) == expected


@pytest.mark.parametrize("line", ["torch==2.9.1", "torch (==2.11.0)", "torch>=2.14.0", "torch (>=2.0,<3)",
                                  "torch==2.8.0; extra == 'x'", "torchaudio==2.9.1", "torch-geometric", "numpy"])
def test_a_companions_torch_requirement_is_read_as_packaging_reads_it(line: str) -> None:
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    from torch_install.doctor.checks import _TORCH_REQUIREMENT

    req = Requirement(line)
    found = _TORCH_REQUIREMENT.match(line)
    if req.name != "torch":
        assert found is None
    else:
        assert found is not None and req.specifier == SpecifierSet(found["spec"] or "")
        assert ("extra" in (found["marker"] or "")) == (req.marker is not None)
