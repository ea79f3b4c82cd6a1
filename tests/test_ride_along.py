"""Other packages ride along: `install torch transformers "numpy<2" -r req.txt -- --no-cache-dir` installs the
chosen build from the PyTorch index, then the rest from the user's own index with the build pinned. The torch
index never serves the others (it offers a trap numpy here), the default index never replaces the build (it
offers a newer plain torch). Real pip, a real venv, two loopback indexes."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from wheels import build_wheel, serve_wheels

pytestmark = pytest.mark.slow  # real pip, uv, venvs or processes


def _version(python: Path, name: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({name!r}))"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout")
def test_other_packages_come_from_the_users_index_and_keep_the_build(httpserver, tmp_path: Path, make_venv) -> None:
    python = make_venv(tmp_path / "env")
    default_index = httpserver.url_for("/simple/")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))},
           "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_INDEX_URL": default_index,
           "TORCH_INSTALL_DEFAULT_INDEX": "none"}
    base = httpserver.url_for("/whl").rstrip("/")
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# the project's own\nsix>=1.0\n")
    command = [sys.executable, "-m", "torch_install", "install", "torch", "transformers", "numpy<2", "-r",
               str(requirements), "--python", str(python), "--variant", "cpu", "--index-base", base, "--",
               "--no-cache-dir"]
    dry = subprocess.run([*command[:-2], "--dry-run", *command[-2:]], capture_output=True, text=True, env=env)
    assert dry.returncode == 0, dry.stderr
    first, second = (shlex.split(line) for line in dry.stdout.splitlines())
    chosen = next(a for a in first if a.startswith("torch==")).split("==")[1]
    assert first[-3:] == ["--index-url", f"{base}/cpu", "--no-cache-dir"] and "transformers" not in first
    assert second[4:] == ["transformers", "numpy<2", "-r", str(requirements), f"torch=={chosen}", "--no-cache-dir"]
    pytorch = tmp_path / "pytorch"
    pytorch.mkdir()
    serve_wheels(httpserver, "/whl/cpu", [build_wheel(pytorch, "torch", chosen),
                                          build_wheel(pytorch, "numpy", "1.99")])  # a trap
    default = tmp_path / "default"
    default.mkdir()
    serve_wheels(httpserver, "/simple", [build_wheel(default, "torch", "99.0"), build_wheel(default, "numpy", "1.26.4"),
                                         build_wheel(default, "numpy", "2.1.0"), build_wheel(default, "six", "1.16.0"),
                                         build_wheel(default, "transformers", "4.50.0", requires=["torch", "numpy"])])
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _version(python, "torch") == chosen  # not the default index's 99.0
    assert _version(python, "numpy") == "1.26.4"  # from the user's index, under "numpy<2"; never the trap
    assert (_version(python, "transformers"), _version(python, "six")) == ("4.50.0", "1.16.0")
