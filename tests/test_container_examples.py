"""The documented example Dockerfiles: each one's `torch-install plan` step resolves with its base image's hints."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from torch_install.cli import main

EXAMPLES = Path(__file__).parent.parent / "docs" / "examples"
# What each base image provides at build time (environment and files), from the images' Dockerfiles.
BASE_IMAGES = {
    "nvidia/cuda:12.4.1-runtime-ubuntu22.04": ({"CUDA_VERSION": "12.4.1", "NVIDIA_VISIBLE_DEVICES": "all",
                                                "NVIDIA_REQUIRE_CUDA": "cuda>=12.4 brand=tesla,driver>=470,driver<471"},
                                               {}),
    "rocm/dev-ubuntu-22.04:6.4.1": ({"ROCM_VERSION": "6.4.1"}, {"opt/rocm/.info/version": "6.4.1-83\n"}),
    "python:3.12-slim": ({"PYTHON_VERSION": "3.12.7"}, {}),
}


def plan_step(dockerfile: Path) -> tuple[str, list[str]]:
    """The FROM image and the argv of the `torch-install plan` RUN step (up to the shell redirection)."""
    text = dockerfile.read_text()
    image = re.search(r"^FROM\s+(\S+)", text, re.M).group(1)
    run = next(line for line in text.splitlines() if line.startswith("RUN torch-install plan"))
    argv = shlex.split(run[len("RUN "):].split(">")[0])
    return image, argv[1:]


@pytest.mark.parametrize("name", ["Dockerfile.cuda", "Dockerfile.rocm", "Dockerfile.cpu"])
def test_example_resolves(name, tmp_path, capsys):
    image, argv = plan_step(EXAMPLES / name)
    env, files = BASE_IMAGES[image]
    (tmp_path / "_env.json").write_text(json.dumps(env))
    (tmp_path / "_host.json").write_text(json.dumps({"system": "Linux", "machine": "x86_64",
                                                     "python_version": "3.12.7", "libc": "glibc 2.35"}))
    (tmp_path / ".dockerenv").write_text("")
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    code = main([*argv, "--sysroot", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out  # a chosen build: the RUN step goes on
    expected = {"Dockerfile.cuda": r"^RUN python3 -m pip install --no-cache-dir torch==2\.14\.1\+cu126 --index-url "
                                   r"https://download\.pytorch\.org/whl/cu126$",
                "Dockerfile.rocm": r"^torch==[\d.]+\+rocm[\d.]+$",
                "Dockerfile.cpu": r"^torch==[\d.]+\+cpu$"}[name]
    assert re.search(expected, out, re.M), out
