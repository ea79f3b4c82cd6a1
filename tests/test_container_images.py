"""Each documented example Dockerfile, built step by step in a simulated image: its Python (Ubuntu 22.04's 3.10,
python:3.12-slim's 3.12, from this machine's interpreters), its environment variables, no GPU, and a loopback
PyTorch index standing in for the real one (TORCH_INSTALL_INDEX_BASE). Each RUN step must succeed; ENV steps
apply to the later ones; absolute paths of the image (/tmp, /etc, /torch-…) live under a scratch root. The
distribution packages an image's apt-get step adds are what the simulated image already has."""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from wheels import build_wheel, serve_wheels

pytestmark = pytest.mark.slow  # real pip, uv, venvs or processes

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
IMAGES = {  # FROM -> (the image's Python, its environment), from the images' own Dockerfiles
    "nvidia/cuda:12.4.1-runtime-ubuntu22.04": ("3.10", {"CUDA_VERSION": "12.4.1", "NVIDIA_VISIBLE_DEVICES": "all"}),
    "rocm/dev-ubuntu-22.04:6.4.1": ("3.10", {"ROCM_VERSION": "6.4.1"}),
    "python:3.12-slim": ("3.12", {"PYTHON_VERSION": "3.12.1"}),
}


def _interpreter(version: str) -> str | None:
    """A real Python of that version on this machine (a pyenv install, else one on PATH that is not a shim)."""
    pyenv = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))
    if pyenv:
        return pyenv[-1]
    found = shutil.which(f"python{version}")
    return found if found and "shims" not in found else None


def _dependency_copies(target: Path) -> Path:
    """torch-install's runtime dependencies (pure Python), copied with their metadata from this environment."""
    from importlib.metadata import distribution

    site = Path(sysconfig.get_paths()["purelib"])
    own = distribution("torch-install").requires or ()  # the project's own runtime dependencies, as it declares them
    todo = [r.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip() for r in own if "extra ==" not in r]
    seen: set[str] = set()
    while todo:
        dist = distribution(todo.pop())
        if dist.metadata["Name"].lower() in seen:
            continue
        seen.add(dist.metadata["Name"].lower())
        for file in dist.files or ():
            source = Path(dist.locate_file(file))
            if source.is_file() and not file.parts[0].startswith(".."):
                (target / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, target / file)
        todo += [r.split(";")[0].split()[0].split("<")[0].split(">")[0].split("=")[0].split("[")[0].split("!")[0]
                 for r in dist.requires or () if "extra ==" not in r]
    assert site.is_dir()
    return target


@pytest.fixture(scope="module")
def project_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """torch-install's own wheel, built from this checkout as the examples' comment says."""
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist),
                    str(ROOT)], check=True, env={**os.environ, "PIP_CONFIG_FILE": os.devnull})
    (wheel,) = dist.glob("torch_install-*.whl")
    return wheel


@pytest.mark.parametrize("name", ["Dockerfile.cuda", "Dockerfile.rocm", "Dockerfile.cpu"])
def test_the_example_builds_in_its_image(name: str, tmp_path: Path, project_wheel: Path, httpserver) -> None:
    text = (EXAMPLES / name).read_text()
    image = re.search(r"^FROM\s+(\S+)", text, re.M).group(1)
    version, image_env = IMAGES[image]
    python = _interpreter(version)
    if python is None:
        pytest.skip(f"no Python {version} on this machine to stand in for {image}'s")
    root = tmp_path / "image"
    for directory in ("tmp", "etc"):
        (root / directory).mkdir(parents=True)
    subprocess.run([python, "-m", "venv", str(root / "usr")], check=True)  # the image's own Python, with pip
    (tmp_path / "context" / "dist").mkdir(parents=True)
    shutil.copy(project_wheel, tmp_path / "context" / "dist")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    served: set[tuple[str, str]] = set()

    def serve_pins(pins_text: str) -> None:  # the loopback PyTorch index offers what the plan pins
        for name, version in re.findall(r"(torch(?:vision|audio)?)==([0-9.]+\+[a-z0-9.]+)", pins_text):
            if (name, version) not in served:
                served.add((name, version))
                serve_wheels(httpserver, f"/whl/{version.split('+')[1]}", [build_wheel(wheels, name, version)])

    # the image's Python runs in a venv made from it; torch-install's dependencies are copies of this checkout's
    # (no network; copies, so the image's pip never touches the environment running the tests)
    deps = str(_dependency_copies(tmp_path / "deps"))
    env = {"PATH": f"{root / 'usr' / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin",  # the venv's python, python3
           "HOME": str(root / "root"), "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "PIP_NO_INPUT": "1", "PYTHONPATH": deps, "TORCH_INSTALL_DEFAULT_INDEX": "none",
           "TORCH_INSTALL_INDEX_BASE": httpserver.url_for("/whl").rstrip("/"), **image_env}

    def in_image(command: str) -> str:
        for path in ("/tmp/", "/etc/", "/torch-"):
            command = re.sub(rf"(?<![\w.]){re.escape(path)}", f"{root}{path}", command)
        return command

    ran = 0
    for line in text.splitlines():
        if line.startswith("COPY "):
            source, target = shlex.split(line[5:])
            for found in glob.glob(str(tmp_path / "context" / source)):
                shutil.copy(found, in_image(target))
        elif line.startswith("ENV "):
            for item in shlex.split(line[4:]):
                key, _, value = item.partition("=")
                env[key] = in_image(value)
        elif line.startswith("RUN ") and "apt-get" not in line:
            command = in_image(line[4:])
            for plan_file in root.glob("torch-*.txt"):  # what an earlier step planned, the index offers
                serve_pins(plan_file.read_text())
            if "grep '^RUN '" in command:  # the plan's own RUN lines write to the image's paths too
                plan_file = root / "torch-plan.txt"
                plan_file.write_text(in_image(plan_file.read_text()))
            done = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True, cwd=tmp_path)
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
            ran += 1
    assert ran >= 3
    check = subprocess.run([str(root / "usr" / "bin" / "python3"), "-c", "import torch, sys; print(torch.__version__)"],
                           env=env, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    installed = check.stdout.strip()
    expected = {"Dockerfile.cuda": "+cu126", "Dockerfile.rocm": "+rocm", "Dockerfile.cpu": "+cpu"}[name]
    assert expected in installed
    assert f"torch=={installed}" in Path(env["PIP_CONSTRAINT"]).read_text()  # later RUN lines keep it
