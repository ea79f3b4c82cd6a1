"""Doctor checks on the CUDA libraries around torch: the pip nvidia-* packages its METADATA pins, leftovers of
another CUDA major, and a forward-compat libcuda on a GPU that cannot use it.

Each case is diagnosed on a site-packages fixture (real dist-info METADATA/RECORD, nvidia/<lib>/lib/*.so* files as
RECORD lists them) and its fix, applied to the fixture, gives a healthy report.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doctor_cases import FIXTURES, case_site, codes, copy_case, interpreter, run
from lanes import equivalence
from resolve_cases import TEST_MATRIX
from torch_install.doctor import diagnose
from torch_install.doctor.checks import cuda_library_pins, wheel_shared_libraries
from torch_install.doctor.inspect import inspect_environment

HEALTHY = "healthy-2.9.1-cu128"


def reinstall_torch_with_its_pins(site: Path, command: str) -> None:
    """What ``pip install --force-reinstall torch==2.9.1+cu128 --index-url …/cu128`` leaves behind: torch
    (the same build, same METADATA pins) and every nvidia-* package it pins, at the pinned version, with all
    the files its wheel installs. The pristine fixture is that install."""
    assert "--force-reinstall" in command and "torch==2.9.1+cu128" in command, command
    assert "--index-url https://download.pytorch.org/whl/cu128" in command, command
    pinned = {info.name.split("-")[0] for info in (FIXTURES / HEALTHY).glob("nvidia_*.dist-info")}
    for info in site.glob("nvidia_*.dist-info"):
        if info.name.split("-")[0] in pinned:  # any installed version of a pinned package is replaced
            shutil.rmtree(info)
    shutil.copytree(FIXTURES / HEALTHY / "nvidia", site / "nvidia", dirs_exist_ok=True)
    for info in (FIXTURES / HEALTHY).glob("nvidia_*.dist-info"):
        shutil.copytree(info, site / info.name)


def uninstall(site: Path, dist_info: str) -> None:
    """``pip uninstall -y``: remove every file the dist's RECORD lists, then the dist-info."""
    info = site / dist_info
    for line in (info / "RECORD").read_text().splitlines():
        (site / line.split(",")[0]).unlink(missing_ok=True)
    shutil.rmtree(info, ignore_errors=True)


def break_not_installed(site: Path) -> str:
    uninstall(site, "nvidia_cudnn_cu12-9.10.2.21.dist-info")
    return "nvidia-cudnn-cu12==9.10.2.21: not installed"


def break_other_version(site: Path) -> str:
    """torch 2.7.0's NCCL pin (nvidia-nccl-cu12==2.26.2) left in place of 2.9.1's."""
    old = site / "nvidia_nccl_cu12-2.27.5.dist-info"
    new = site / "nvidia_nccl_cu12-2.26.2.dist-info"
    old.rename(new)
    (new / "METADATA").write_text((new / "METADATA").read_text().replace("Version: 2.27.5", "Version: 2.26.2"))
    return "nvidia-nccl-cu12==2.27.5: 2.26.2 is installed"


def break_files_gone(site: Path) -> str:
    (site / "nvidia/cublas/lib/libcublasLt.so.12").unlink()
    return ("nvidia_cublas_cu12-12.8.4.1.dist-info/RECORD lists 1 shared libraries, 1 missing on disk: "
            "nvidia/cublas/lib/libcublasLt.so.12")


@pytest.mark.parametrize("damage", [break_not_installed, break_other_version, break_files_gone])
def test_missing_pinned_cuda_libraries_are_an_error_fixed_by_a_forced_reinstall(tmp_path, damage):
    site = copy_case(HEALTHY, tmp_path)
    expected = damage(site)
    report = run(site, "rtx4090-570")
    assert codes(report, "error", "warning") == ("nvidia-libs-missing",), codes(report)
    finding = report.findings[0]
    evidence = " | ".join(finding.evidence)
    assert expected in evidence, evidence
    assert "torch/version.py: cuda = '12.8'" in evidence
    assert finding.fix == report.fix.command and report.fix.reason == "keeps torch 2.9.1"
    reinstall_torch_with_its_pins(site, finding.fix)
    after = run(site, "rtx4090-570")
    assert after.healthy and after.findings == (), [(f.code, f.evidence) for f in after.findings]


def test_record_lists_the_files_that_are_compared_with_the_disk(tmp_path):
    site = copy_case(HEALTHY, tmp_path)
    uninstall(site, "nvidia_nccl_cu12-2.27.5.dist-info")
    nccl = "nvidia_nccl_cu12-2.27.5.dist-info"
    shutil.copytree(FIXTURES / HEALTHY / nccl, site / nccl)  # the dist-info back, its library still gone
    installed = inspect_environment(interpreter(site))
    assert wheel_shared_libraries(installed.dist("nvidia-nccl-cu12")) == ("nvidia/nccl/lib/libnccl.so.2",)
    finding = next(f for f in run(site, "rtx4090-570").findings if f.code == "nvidia-libs-missing")
    assert ("nvidia_nccl_cu12-2.27.5.dist-info/RECORD lists 1 shared libraries, 1 missing on disk: "
            "nvidia/nccl/lib/libnccl.so.2") in finding.evidence


def test_pins_follow_the_inspected_interpreters_markers(tmp_path):
    """cu12 pins carry ``platform_machine == "x86_64"``: on an aarch64 Python they are not required."""
    site = copy_case(HEALTHY, tmp_path)
    uninstall(site, "nvidia_cudnn_cu12-9.10.2.21.dist-info")
    installed = inspect_environment(interpreter(site))
    torch = installed.dist("torch")
    assert len(cuda_library_pins(installed, torch)) == 14
    arm = installed._replace(interpreter=installed.interpreter._replace(machine="aarch64"))
    assert cuda_library_pins(arm, torch) == []
    from doctor_cases import MACHINES

    machine = MACHINES["rtx4090-570"]._replace(arch="aarch64")
    assert "nvidia-libs-missing" not in codes(diagnose(machine, arm, TEST_MATRIX, environ={}))


def test_cuda_toolkit_pin_of_a_cu13_build_is_checked_too():
    """torch 2.15.0 from the default index pins ``cuda-toolkit[…]==13.2.2`` (any Linux arch)."""
    report = run(case_site("default-index-2.15.0-cu132"), "rtx4090-570")
    finding = next(f for f in report.findings if f.code == "nvidia-libs-missing")
    assert any(re.search(r"requires cuda-toolkit==13\.2\.2: not installed", e) for e in finding.evidence)
    assert not any("nvidia-cudnn-cu13" in e for e in finding.evidence)  # installed at its pin, files in place
    assert "--force-reinstall" in finding.fix


def test_cuda13_leftovers_next_to_a_cuda12_torch_are_named_and_only_they_are_uninstalled(tmp_path):
    """torch 2.11.0 (cu13 pins) downgraded to 2.9.1 (cu12): pip installs the cu12 packages but never removes
    nvidia-cudnn-cu13/nvidia-nccl-cu13, whose files sit at the same nvidia/cudnn, nvidia/nccl paths."""
    site = copy_case(HEALTHY, tmp_path)
    shutil.copytree(FIXTURES / "leftover-cu13-from-2.11.0", site, dirs_exist_ok=True)
    report = run(site, "rtx4090-570")
    assert codes(report, "error", "warning") == ("nvidia-libs-stale-major",), codes(report)
    finding = report.findings[0]
    assert finding.severity == "warning" and finding.title == "CUDA 13 libraries left next to a CUDA 12 torch"
    evidence = " | ".join(finding.evidence)
    assert "nvidia-cudnn-cu13 9.19.0.56 (CUDA 13" in evidence and "nvidia-nccl-cu13 2.28.9 (CUDA 13" in evidence
    assert "nvidia-cudnn-cu13 and nvidia-cudnn-cu12 both install nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9" \
        in evidence
    uninstall_part, _, reinstall_part = finding.fix.partition(", then reinstall torch's own CUDA libraries: ")
    assert uninstall_part == "/env/bin/python -m pip uninstall -y nvidia-cudnn-cu13 nvidia-nccl-cu13"
    assert reinstall_part == report.fix.command
    from torch_install.doctor.apply import runnable_commands

    assert runnable_commands(report) == [uninstall_part, report.fix.command]  # --fix runs both, in that order
    for name in re.findall(r"nvidia-\S+", uninstall_part):
        info = next(site.glob(name.replace("-", "_") + "-*.dist-info"))
        uninstall(site, info.name)
    halfway = run(site, "rtx4090-570")  # the uninstall took the cu12 packages' shared files with it
    assert codes(halfway, "error", "warning") == ("nvidia-libs-missing",)
    reinstall_torch_with_its_pins(site, reinstall_part)
    after = run(site, "rtx4090-570")
    assert after.healthy and after.findings == (), [(f.code, f.evidence) for f in after.findings]


def test_leftovers_sharing_no_file_are_only_uninstalled(tmp_path):
    site = copy_case(HEALTHY, tmp_path)
    shutil.copytree(FIXTURES / "leftover-cu13-from-2.11.0" / "nvidia_nccl_cu13-2.28.9.dist-info",
                    site / "nvidia_nccl_cu13-2.28.9.dist-info")
    record = site / "nvidia_nccl_cu13-2.28.9.dist-info" / "RECORD"
    record.write_text("\n".join(line for line in record.read_text().splitlines() if "/lib/" not in line) + "\n")
    report = run(site, "rtx4090-570")
    finding = next(f for f in report.findings if f.code == "nvidia-libs-stale-major")
    assert finding.fix == "/env/bin/python -m pip uninstall -y nvidia-nccl-cu13" and report.fix is None
    uninstall(site, "nvidia_nccl_cu13-2.28.9.dist-info")
    assert run(site, "rtx4090-570").healthy


@pytest.mark.parametrize(("name", "major"), [("nvidia-cudnn-cu12", 12), ("nvidia-nccl-cu13", 13),
                                             ("nvidia-cublas", 13), ("nvidia-cuda-runtime-cu11", 11),
                                             ("nvidia-ml-py", None), ("nvidia-cudnn-frontend", None)])
def test_cuda_major_of_a_package_name(name, major):
    from torch_install.doctor.checks import cuda_major_of

    assert cuda_major_of(name) == major


def compat_tree(tmp_path: Path, conf: str | None = None) -> Path:
    """A container on a 550 kernel module with cuda-compat 12.8's libcuda (570.124.06) installed."""
    root = tmp_path / "root"
    (root / "sys/module/nvidia").mkdir(parents=True)
    (root / "sys/module/nvidia/version").write_text("550.54.15\n")
    compat = root / "usr/local/cuda-12.8/compat"
    compat.mkdir(parents=True)
    for name in ("libcuda.so.570.124.06", "libcuda.so.1", "libcuda.so", "libnvidia-ptxjitcompiler.so.570.124.06"):
        (compat / name).write_text("")
    if conf is not None:
        (root / "etc/ld.so.conf.d").mkdir(parents=True)
        (root / "etc/ld.so.conf.d/000_cuda-compat.conf").write_text(conf)
        (root / "etc/ld.so.conf.d/libc.conf").write_text("# libc default configuration\n/usr/local/lib\n")
    return root


def test_forward_compat_libcuda_on_ld_library_path_of_a_geforce_is_error_804(tmp_path):
    from torch_install.probe import Probe

    site = case_site(HEALTHY)
    root = compat_tree(tmp_path)
    env = {"LD_LIBRARY_PATH": "/usr/local/cuda-12.8/compat:/usr/local/nvidia/lib64"}
    report = run(site, "rtx4090-550", environ=env, probe=Probe(root=root, env=env))
    assert codes(report, "error", "warning") == ("cuda-compat-forward",), codes(report)
    finding = report.findings[0]
    assert finding.severity == "error"
    assert finding.evidence[:3] == (
        "/usr/local/cuda-12.8/compat/libcuda.so.570.124.06 (forward-compatibility libcuda) is on the loader path "
        "through LD_LIBRARY_PATH", "kernel module 550.54.15 (/sys/module/nvidia/version)",
        "GPU NVIDIA GeForce RTX 4090 is not a datacenter GPU (by its name)")
    assert finding.fix == "remove /usr/local/cuda-12.8/compat from LD_LIBRARY_PATH"
    fixed = {"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64"}
    assert run(site, "rtx4090-550", environ=fixed, probe=Probe(root=root, env=fixed)).healthy


def test_forward_compat_libcuda_in_ld_so_conf_names_the_file_and_line(tmp_path):
    from torch_install.probe import Probe

    site = case_site(HEALTHY)
    root = compat_tree(tmp_path, "/usr/local/cuda-12.8/compat\n")
    report = run(site, "rtx4090-550", probe=Probe(root=root, env={}))
    finding = next(f for f in report.findings if f.code == "cuda-compat-forward")
    assert finding.fix == ("remove the line /usr/local/cuda-12.8/compat from /etc/ld.so.conf.d/000_cuda-compat.conf, "
                           "then run `ldconfig`")
    (root / "etc/ld.so.conf.d/000_cuda-compat.conf").write_text("")
    assert run(site, "rtx4090-550", probe=Probe(root=root, env={})).healthy


def test_forward_compat_is_fine_on_a_datacenter_gpu_or_when_not_newer(tmp_path):
    from torch_install.machine import Gpu, Machine
    from torch_install.probe import Probe

    site = case_site(HEALTHY)
    root = compat_tree(tmp_path, "/usr/local/cuda-12.8/compat\n")
    h100 = Machine(os="linux", arch="x86_64", glibc="2.35", nvidia_driver="550.54.15",
                   gpus=(Gpu("nvidia", "NVIDIA H100 80GB HBM3", "10de:2330", "9.0"),))
    assert run(site, h100, probe=Probe(root=root, env={})).healthy
    unknown = h100._replace(gpus=(Gpu("nvidia", None, "10de:2330", "9.0"),))
    warning = next(f for f in run(site, unknown, probe=Probe(root=root, env={})).findings
                   if f.code == "cuda-compat-forward")
    assert warning.severity == "warning"
    (root / "sys/module/nvidia/version").write_text("570.124.06\n")  # the kernel module is as new: no forward compat
    assert run(site, "rtx4090-550", probe=Probe(root=root, env={})).healthy


@pytest.mark.parametrize(("name", "datacenter"), [
    ("NVIDIA H100 80GB HBM3", True), ("NVIDIA A100-SXM4-40GB", True), ("Tesla T4", True), ("NVIDIA L4", True),
    ("NVIDIA A10G", True), ("NVIDIA L40S", True), ("NVIDIA GH200 480GB", True), ("Tesla V100-SXM2-16GB", True),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", True), ("NVIDIA GeForce RTX 4090", False),
    ("NVIDIA GeForce GTX 1650", False), ("NVIDIA RTX A6000", False), ("Quadro RTX 5000", False),
    ("NVIDIA TITAN RTX", False),
    ("NVIDIA T600", None), ("NVIDIA RTX A500 Laptop GPU", False),
    ("NVIDIA RTX 6000 Ada Generation", False), (None, None), ("NVIDIA Graphics", None)])
def test_datacenter_gpu_by_name(name, datacenter):
    from torch_install.doctor.checks import datacenter_gpu

    assert datacenter_gpu(name) is datacenter


REFERENCE_METADATA = Path(__file__).resolve().parents[1] / "scripts" / "reference" / "default-index" / "metadata"
ENVIRONMENTS = [("Linux", "x86_64"), ("Linux", "aarch64"), ("Windows", "AMD64"), ("Darwin", "arm64")]


def _environment(system: str, machine: str) -> dict[str, str]:
    """The marker values of a CPython 3.12.4 on ``system``/``machine`` (what the doctor reads of the interpreter)."""
    return {"platform_system": system, "platform_machine": machine, "python_version": "3.12",
            "python_full_version": "3.12.4", "extra": "", "os_name": "nt" if system == "Windows" else "posix",
            "sys_platform": {"Linux": "linux", "Windows": "win32", "Darwin": "darwin"}[system],
            "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def _read_by_packaging(requires: tuple[str, ...], env: dict[str, str]) -> list[tuple[str, str]]:
    """(name, specifier) of each library pin packaging reads in ``requires`` whose marker holds in ``env``."""
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    pins = []
    for line in requires:
        try:
            req = Requirement(line)
            holds = req.marker is None or Marker(str(req.marker)).evaluate(env)
        except (InvalidRequirement, InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
            continue
        if canonicalize_name(req.name).startswith(("nvidia-", "cuda-toolkit")) and holds:
            pins.append((canonicalize_name(req.name), str(req.specifier)))
    return pins


def _installed_on(tmp_path: Path, system: str, machine: str):  # noqa: ANN202
    empty = inspect_environment(interpreter(tmp_path))
    return empty._replace(interpreter=empty.interpreter._replace(system=system, machine=machine, version="3.12.4"))


@pytest.mark.parametrize(("system", "machine"), ENVIRONMENTS)
def test_the_pins_read_without_packaging_are_the_pins_packaging_reads(system: str, machine: str,
                                                                      tmp_path: Path) -> None:
    """Every captured torch METADATA (28 releases, each platform), read by the fast path and by packaging alone."""
    from torch_install.environment.dists import Dist

    installed = _installed_on(tmp_path, system, machine)
    files = sorted(REFERENCE_METADATA.glob("torch-*.metadata"))
    assert len(files) >= 28
    read = 0
    for path in files:
        requires = tuple(line.split(": ", 1)[1] for line in path.read_text().splitlines()
                         if line.startswith("Requires-Dist: "))
        dist = Dist(name="torch", version="2.0", path="/x/torch.dist-info", location="/x", requires=requires)
        expected = _read_by_packaging(requires, _environment(system, machine))
        assert [(p.name, p.specifier) for p in cuda_library_pins(installed, dist)] == expected, path.name
        read += len(expected)
    assert read > 0 or system != "Linux"


def _one_of(*choices: str) -> st.SearchStrategy[str]:
    return st.sampled_from(choices)


# a Requires-Dist line in torch's own shape, each part also in the spellings around it
PIN_LINES = st.builds(
    lambda *parts: "".join(parts),
    _one_of("", " ", "\t"),
    _one_of("nvidia-cudnn-cu12", "NVIDIA_Cublas.cu12", "cuda-toolkit", "nvidia-", "nvidia-x-", "nvidia..x",
            "cudatoolkit", "nvidia-nccl-cu13", "filelock"),
    _one_of("", "", "[cublas,cudart]", "[cublas]", "[,]", "[a b]", "[]", "[ cublas , nvrtc ]"),
    _one_of("", " ", "\t"),
    _one_of("==", "==", "===", "~=", ">=", "=", "<=", "!="),
    _one_of("", " ", "\t"),
    _one_of("9.10.2.21", "12.8", "1", "1.", ".1", "13.0.2rc1", "1!2.0", "1.0.*", "1.0+cu1", "", "12.8,<13"),
    _one_of("", "", " ", "\t"),
    _one_of("", "", ";", "; ", " ;", ";\t", ";;"),
    _one_of("", 'platform_system == "Linux"', 'platform_system == "Linux" and platform_machine == "x86_64"',
            "platform_machine != 'aarch64'", 'platform_system == "Linux" or platform_machine == "x86_64"',
            'extra == "x"', 'python_version < "3.15"', 'platform_system=="Linux"', '(platform_system == "Linux")',
            'platform_system == "Linux" and', 'os_name == "nt"', 'sys_platform == "Linux"'),
    _one_of("", "", " ", "\t"))


@equivalence(1500)
@given(st.lists(PIN_LINES, min_size=1, max_size=4), st.sampled_from(ENVIRONMENTS))
def test_pins_of_any_shape_read_as_packaging_reads_them(requires: list[str], where: tuple[str, str]) -> None:
    """Lines near torch's own shape (other spellings, extras, blanks, specifiers, markers): the fast path takes
    only those packaging reads alike, and leaves the rest to packaging."""
    from torch_install.environment.dists import Dist

    installed = _installed_on(Path("/nonexistent"), *where)
    dist = Dist(name="torch", version="2.0", path="/x/torch.dist-info", location="/x", requires=tuple(requires))
    assert [(p.name, p.specifier) for p in cuda_library_pins(installed, dist)] == \
        _read_by_packaging(tuple(requires), _environment(*where))


@pytest.mark.parametrize("marker", [
    'platform_system == "Linux"', 'platform_system == "Linux" and platform_machine == "x86_64"',
    "platform_machine != 'aarch64'", 'sys_platform == "win32" and platform_machine == "AMD64"',
    'os_name == "nt"', 'platform_system == "Darwin" and platform_machine != "x86_64"',
    'platform_system == "Linux" or platform_machine == "x86_64"', '(platform_system == "Linux")',
    'platform_system == "Linux" and python_version < "3.15"', 'extra == "opt-einsum"', 'platform_system=="Linux"',
    'platform_release == "6.1"', 'platform_machine == "x86_64" and platform_system == "linux"',
])
@pytest.mark.parametrize(("system", "machine"), ENVIRONMENTS)
def test_a_simple_marker_is_true_where_packaging_says_so(marker: str, system: str, machine: str) -> None:
    from packaging.markers import Marker

    from torch_install.markers import simple_marker

    env = {"platform_system": system, "platform_machine": machine, "python_version": "3.12", "extra": "",
           "python_full_version": "3.12.4", "os_name": "nt" if system == "Windows" else "posix",
           "sys_platform": {"Linux": "linux", "Windows": "win32", "Darwin": "darwin"}[system],
           "platform_release": "6.1", "implementation_name": "cpython", "platform_python_implementation": "CPython"}
    fast = simple_marker(marker, env)
    if " or " in marker or "(" in marker or "python_version" in marker or "extra" in marker or "==\"" in marker \
            or "release" in marker:
        assert fast is None  # left to packaging
    else:
        assert fast is Marker(marker).evaluate(env)
