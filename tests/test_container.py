"""Container mode: base-image hints (nvidia/cuda, rocm/dev, oneAPI), device checks, target profiles, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_install.container import (
    container_marker,
    container_targets,
    gpu_device,
    image_hints,
    no_target_error,
    target_from_hints,
)
from torch_install.drivers import driver_for_toolkit
from torch_install.errors import InputError
from torch_install.machine import Machine
from torch_install.probe import Probe

# Environment baked into nvidia/cuda:12.4.1-runtime-ubuntu22.04 and nvidia/cuda:13.0.2-base-ubuntu24.04
CUDA_12_4_1 = {"CUDA_VERSION": "12.4.1", "NV_CUDA_CUDART_VERSION": "12.4.127-1",
               "NV_CUDA_COMPAT_PACKAGE": "cuda-compat-12-4", "NVIDIA_VISIBLE_DEVICES": "all",
               "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
               "NVIDIA_REQUIRE_CUDA": "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,"
                                      "driver<471 brand=nvidia,driver>=535,driver<536"}
CUDA_13_0_2 = {"CUDA_VERSION": "13.0.2", "NV_CUDA_CUDART_VERSION": "13.0.96-1",
               "NVIDIA_REQUIRE_CUDA": "cuda>=13.0 brand=unknown,driver>=535,driver<536", "NVARCH": "x86_64"}
PLATFORM = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35")


def tree(tmp_path: Path, env: dict[str, str], files: dict[str, str] | None = None) -> Probe:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "_env.json").write_text(json.dumps(env))
    for path, text in (files or {}).items():
        target = tmp_path / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return Probe(root=tmp_path)


def test_nvidia_cuda_12_4_1_image_means_driver_of_that_toolkit(tmp_path):
    hints = image_hints(tree(tmp_path, CUDA_12_4_1))
    assert [(h.kind, h.version) for h in hints] == [("cuda", "12.4.1")]
    target = target_from_hints(hints, PLATFORM)
    assert target.cuda_driver_api == "12.4"
    assert target.nvidia_driver == "550.54.15"  # CUDA 12.4 Update 1's Linux driver
    assert [g.vendor for g in target.gpus] == ["nvidia"] and target.gpus[0].compute_capability is None
    assert "not a detected GPU" in target.sources["nvidia_driver"]
    assert (target.os, target.python, target.glibc) == ("linux", "3.12", "2.35")


def test_nvidia_cuda_13_0_2_image(tmp_path):
    target = target_from_hints(image_hints(tree(tmp_path, CUDA_13_0_2)), PLATFORM)
    assert (target.cuda_driver_api, target.nvidia_driver) == ("13.0", "580.95.05")


def test_require_cuda_alone_gives_the_floor(tmp_path):
    hints = image_hints(tree(tmp_path, {"NVIDIA_REQUIRE_CUDA": CUDA_12_4_1["NVIDIA_REQUIRE_CUDA"]}))
    assert [(h.kind, h.version) for h in hints] == [("cuda", "12.4")]
    assert driver_for_toolkit("12.4")[:2] == ("550.54.14", "12.4.0")


def test_rocm_dev_image_version_file(tmp_path):
    # rocm/dev-ubuntu-22.04: ROCM_VERSION is a build ARG (gone at run time); the image keeps /opt/rocm/.info/version
    hints = image_hints(tree(tmp_path, {"PATH": "/opt/rocm/bin:/usr/bin"}, {"/opt/rocm/.info/version": "7.1.1-38\n"}))
    assert [(h.kind, h.version) for h in hints] == [("rocm", "7.1.1")]
    target = target_from_hints(hints, PLATFORM)
    assert target.rocm == "7.1.1" and [g.vendor for g in target.gpus] == ["amd"]


def test_rocm_build_arg_visible_during_run(tmp_path):
    hints = image_hints(tree(tmp_path, {"ROCM_VERSION": "6.4.1", "AMDGPU_VERSION": "6.4.1"}))
    assert [(h.kind, h.version, h.source) for h in hints] == [("rocm", "6.4.1", "$ROCM_VERSION=6.4.1")]


def test_oneapi_image(tmp_path):
    hints = image_hints(tree(tmp_path, {"ONEAPI_ROOT": "/opt/intel/oneapi"}))
    assert [h.kind for h in hints] == ["xpu"]
    assert [g.vendor for g in target_from_hints(hints, PLATFORM).gpus] == ["intel"]


def test_no_hints(tmp_path):
    probe = tree(tmp_path, {"PATH": "/usr/bin", "NVIDIA_VISIBLE_DEVICES": "all"})
    assert image_hints(probe) == []


def test_markers_and_devices(tmp_path):
    probe = tree(tmp_path, {}, {"/.dockerenv": ""})
    assert container_marker(probe) == "/.dockerenv"
    assert gpu_device(probe) is None
    (tmp_path / "dev" / "dri").mkdir(parents=True)
    (tmp_path / "dev" / "dri" / "renderD128").write_text("")
    assert gpu_device(Probe(root=tmp_path)) == "/dev/dri/renderD128"


def test_error_lists_the_flags():
    err = no_target_error("--for-container")
    assert err.exit_code == 2
    for flag in ("--target FILE", "--gpu NAME", "--nvidia-driver VERSION", "--variant ID", "CUDA_VERSION"):
        assert flag in str(err)


def test_cli_for_container_without_target_or_hint_exits_2(tmp_path, capsys, monkeypatch):
    from torch_install.cli import main

    for name in ("CUDA_VERSION", "NVIDIA_REQUIRE_CUDA", "NV_CUDA_CUDART_VERSION", "NV_CUDA_COMPAT_PACKAGE",
                 "ROCM_VERSION", "ROCM_PATH", "ONEAPI_ROOT", "CMPLR_ROOT"):
        monkeypatch.delenv(name, raising=False)
    tree(tmp_path, {}, {"/etc/os-release": "ID=ubuntu\nVERSION_ID=\"22.04\"\n",
                        "_host.json": json.dumps({"system": "Linux", "machine": "x86_64", "python_version": "3.12.3",
                                                  "libc": "glibc 2.35"})})
    code = main(["plan", "--for-container", "--sysroot", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "no target machine and no base-image hint" in err and "Traceback" not in err


def test_automatic_container_mode_keeps_platform_flags(tmp_path, capsys):
    """In a GPU-less container, --os/--arch describe the target and --python replaces this machine's Python."""
    import shutil

    from torch_install.cli import main

    root = tmp_path / "root"
    shutil.copytree(Path(__file__).parent / "fixtures" / "sysroots" / "cpu-x86_64", root, symlinks=True)
    (root / ".dockerenv").write_text("")
    code = main(["plan", "--sysroot", str(root), "--os", "macos", "--arch", "x86_64", "--python", "3.12",
                 "--format", "json"])
    plan = json.loads(capsys.readouterr().out)
    assert code == 0  # a choice, with warnings
    assert (plan["machine"]["os"], plan["machine"]["arch"]) == ("macos", "x86_64")
    assert plan["choice"]["torch"] == "2.2.2"  # the last release with Intel Mac wheels
    code = main(["plan", "--sysroot", str(root), "--python", "3.10", "--format", "json"])
    plan = json.loads(capsys.readouterr().out)
    assert plan["machine"]["python"] == "3.10"
    assert plan["choice"]["torch"] == "2.14.1"  # 2.15 needs Python ≥ 3.11
    assert [w["code"] for w in plan["warnings"]] == ["python-unsupported"]


def _cuda_image(tmp_path: Path, env: dict[str, str], machine: str = "x86_64") -> Path:
    """A GPU-less build container FROM an nvidia/cuda image: its baked-in environment, a Python 3.12 host."""
    tree(tmp_path, env)
    (tmp_path / "_host.json").write_text(json.dumps({"system": "Linux", "machine": machine,
                                                     "python_version": "3.12.7", "libc": "glibc 2.35"}))
    (tmp_path / ".dockerenv").write_text("")
    return tmp_path


def test_container_mode_requirements_golden(tmp_path, capsys):
    from torch_install.cli import main

    root = _cuda_image(tmp_path, CUDA_12_4_1)
    code = main(["plan", "--for-container", "--sysroot", str(root), "--format", "requirements"])
    assert code == 0  # a choice (warnings: GPU model unknown, newest release needs a newer driver)
    assert capsys.readouterr().out == (
        "# cu126 build of torch 2.14.1 for linux x86_64 (glibc 2.35); Python 3.12.7; nvidia GPU; "
        "NVIDIA driver 550.54.15\n"
        "--index-url https://download.pytorch.org/whl/cu126\n"
        "torch==2.14.1+cu126\n")


def test_container_mode_variant_env_golden(tmp_path, capsys):
    from torch_install.cli import main

    root = _cuda_image(tmp_path, CUDA_12_4_1)
    main(["plan", "--for-container", "--sysroot", str(root), "--format", "variant-env"])
    assert capsys.readouterr().out == (
        "# WheelNext variant-provider overrides for: linux x86_64 (glibc 2.35); Python 3.12.7; nvidia GPU; "
        "NVIDIA driver 550.54.15\n"
        "# resolved build: torch 2.14.1 cu126\n"
        "# NV_VARIANT_PROVIDER_FORCE_SM_ARCH not set: the target's GPU architecture is unknown, and without it the "
        "nvidia provider matches no CUDA variant; give the GPU (--target FILE with gpus[].compute_capability)\n"
        "# nvidia: GPU architecture unknown, so no sm_arch: variants that declare sm_arch (every CUDA build of "
        "torch) do not match\n"
        "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=12.4\n")


def test_platform_flags_keep_the_base_image_hardware(tmp_path, capsys):
    """--arch/--os/--python say what the image's platform is; the CUDA hint still says what its GPU driver is."""
    from torch_install.cli import main

    root = _cuda_image(tmp_path, {"CUDA_VERSION": "12.8.1"})
    code = main(["plan", "--for-container", "--sysroot", str(root), "--arch", "aarch64", "--format", "json"])
    plan = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    assert plan["machine"]["arch"] == "aarch64" and plan["machine"]["nvidia_driver"] == "570.124.06"
    assert plan["choice"]["variant"].startswith("cu") and plan["gpu_accelerated"]
    code = main(["plan", "--for-container", "--sysroot", str(root), "--arch", "aarch64", "--variant", "cpu",
                 "--format", "json"])
    assert json.loads(capsys.readouterr().out)["choice"]["variant"] == "cpu"
    # a hardware flag replaces the hint
    main(["plan", "--for-container", "--sysroot", str(root), "--rocm", "6.4.1", "--format", "json"])
    assert json.loads(capsys.readouterr().out)["machine"].get("nvidia_driver") is None


def test_contradicting_target_is_caught_in_container_mode(tmp_path, capsys):
    from torch_install.cli import main

    root = _cuda_image(tmp_path, CUDA_12_4_1)
    code = main(["plan", "--for-container", "--sysroot", str(root), "--os", "windows", "--variant", "rocm6.4"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "--variant rocm6.4: the PyTorch index has no ROCm builds for windows" in err


# ---- overrides and flags on a GPU-less build host -----------------------------------------------------------

def _build_host(tmp_path: Path, env: dict[str, str]) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    tree(tmp_path, env, {"/etc/os-release": "ID=ubuntu\nVERSION_ID=\"22.04\"\n",
                         "_host.json": json.dumps({"system": "Linux", "machine": "x86_64", "python_version": "3.12.3",
                                                   "libc": "glibc 2.35"}),
                         ".dockerenv": ""})
    return str(tmp_path)


def _container_plan(capsys, root: str, *flags: str) -> dict:  # noqa: ANN001
    from torch_install.cli import main

    code = main(["plan", "--sysroot", root, "--format", "json", *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_override_variables_define_the_target_of_a_gpu_less_build(tmp_path, capsys):
    """UV_CUDA_DRIVER_VERSION (a driver) or CONDA_OVERRIDE_CUDA (a CUDA: the driver runs at least that) in a build
    container with no base-image hint: the target, where it was an exit 2 before."""
    plan = _container_plan(capsys, _build_host(tmp_path / "a", {"UV_CUDA_DRIVER_VERSION": "550.54.15"}))
    assert (plan["choice"]["variant"], plan["machine"]["nvidia_driver"]) == ("cu126", "550.54.15")
    assert plan["machine"]["sources"]["nvidia_driver"] == "hint $UV_CUDA_DRIVER_VERSION"
    plan = _container_plan(capsys, _build_host(tmp_path / "b", {"CONDA_OVERRIDE_CUDA": "13.0"}))
    assert plan["choice"]["variant"].startswith("cu13") and plan["machine"]["cuda_driver_api"] == "13.0"
    assert plan["machine"]["sources"]["cuda_driver_api"] == "hint $CONDA_OVERRIDE_CUDA"


def test_an_override_outranks_the_base_images_cuda(tmp_path, capsys):
    root = _build_host(tmp_path, {**CUDA_13_0_2, "CONDA_OVERRIDE_CUDA": "12.4"})
    plan = _container_plan(capsys, root, "--for-container")
    assert plan["machine"]["cuda_driver_api"] == "12.4" and plan["choice"]["variant"] == "cu126"
    assert plan["machine"]["nvidia_driver"] == "550.54.14"  # 12.4's GA driver, not CUDA 13.0's


def test_gpu_combines_with_the_base_image_hints(tmp_path, capsys):
    """--gpu names the model; the driver still comes from the image (CUDA 12.4.1: driver 550): not cu13x."""
    plan = _container_plan(capsys, _build_host(tmp_path, CUDA_12_4_1), "--for-container", "--gpu", "RTX 4090")
    assert plan["machine"]["gpus"][0]["compute_capability"] == "8.9"
    assert plan["machine"]["nvidia_driver"] == "550.54.15"
    assert plan["choice"]["variant"] == "cu126"
    explicit = _container_plan(capsys, _build_host(tmp_path / "x", CUDA_12_4_1), "--for-container", "--gpu",
                               "RTX 4090", "--nvidia-driver", "580.82.07")  # a flag still wins
    assert explicit["machine"]["nvidia_driver"] == "580.82.07" and explicit["choice"]["variant"].startswith("cu13")


def test_container_mode_is_one_call_on_plain_values(tmp_path):
    """container_targets: off unless asked or in a container without GPU devices; a described machine keeps what
    it states and takes the image's hardware for what it leaves open; asked with no target at all: exit 2."""
    cuda = tree(tmp_path / "cuda", CUDA_12_4_1)
    assert container_targets(cuda, False, [PLATFORM]) is None  # --no-for-container
    assert container_targets(cuda, None, [PLATFORM]) is None  # no container marker
    (target,) = container_targets(cuda, True, [PLATFORM])
    driver = driver_for_toolkit("12.4.1")
    assert driver is not None and (target.nvidia_driver, target.cuda_driver_api) == (driver[0], "12.4")
    assert [g.vendor for g in target.gpus] == ["nvidia"] and target.container == "image"
    (stated,) = container_targets(cuda, True, [PLATFORM._replace(nvidia_driver="580.65.06")])
    assert stated.nvidia_driver == "580.65.06"  # what the flags state wins over the image
    marked = tree(tmp_path / "bare", {}, {"/.dockerenv": ""})
    assert container_targets(marked, None, [PLATFORM]) == [PLATFORM._replace(container="image")]
    with pytest.raises(InputError, match="container mode \\(--for-container\\): no target machine"):
        container_targets(marked, True, None)


@pytest.mark.parametrize("text", ["6.4.1-120\n", "7.1.1-38\n", "6.2\n", "6.4.3.60403-128~24.04\n", "garbage\n", ""])
def test_a_rocm_version_file_reads_the_same_as_a_base_image_hint_and_as_detection(tmp_path, text):
    """One reader of .info/version: container mode's hint and the AMD detector agree on every file."""
    from torch_install.detectors import detect

    probe = tree(tmp_path, {"ROCM_PATH": "/opt/rocm-x"}, {"/opt/rocm-x/.info/version": text})
    hinted = [h.version for h in image_hints(probe) if h.kind == "rocm"]
    assert hinted == ([detect(probe).rocm] if detect(probe).rocm else [])
