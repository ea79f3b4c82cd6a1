#!/usr/bin/env python3
"""Write the compiled-lock fixtures of the requirements-file tests with the real tools.

    python scripts/make_requirements_fixtures.py [-o tests/fixtures/requirements]

It builds small wheels in the shapes of torch 2.9.1 (its CUDA dependencies: nvidia-*, triton, with markers),
torchvision 0.24.1, numpy, pillow, filelock, sympy and mpmath (tests/wheels.py), puts them in a find-links
directory, and compiles ``requirements.in`` (torch, torchvision, "numpy<2", and ``-r base.in``) with
``uv pip compile --generate-hashes`` (for one platform, and ``--universal``: lines with markers) and with
pip-tools' ``pip-compile --generate-hashes`` (installed into a
throw-away virtual environment). The outputs are written as the tools wrote them, their find-links paths
replaced by ``./wheels``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from wheels import build_wheel  # noqa: E402

TORCH_REQUIRES = ["filelock", "sympy>=1.13.3",
                  'nvidia-cublas-cu12==12.8.4.1 ; platform_system == "Linux" and platform_machine == "x86_64"',
                  'nvidia-cudnn-cu12==9.10.2.21 ; platform_system == "Linux" and platform_machine == "x86_64"',
                  'triton==3.5.1 ; platform_system == "Linux" and platform_machine == "x86_64"']


def wheels(directory: Path) -> None:
    tag = "py3-none-manylinux_2_28_x86_64"  # any CPython 3 here, so pip-compile runs on the Python it has
    build_wheel(directory, "torch", "2.9.1", requires=TORCH_REQUIRES, tag=tag)
    build_wheel(directory, "torchvision", "0.24.1", requires=["numpy", "torch==2.9.1", "pillow!=8.3.*,>=5.3.0"],
                tag=tag)
    build_wheel(directory, "nvidia-cublas-cu12", "12.8.4.1", tag="py3-none-manylinux_2_27_x86_64")
    build_wheel(directory, "nvidia-cudnn-cu12", "9.10.2.21", requires=["nvidia-cublas-cu12"],
                tag="py3-none-manylinux_2_27_x86_64")
    build_wheel(directory, "triton", "3.5.1", tag=tag)
    for name, version, requires in (("numpy", "1.26.4", ()), ("pillow", "11.3.0", ()), ("filelock", "3.20.0", ()),
                                    ("sympy", "1.14.0", ("mpmath<1.4,>=1.1.0",)), ("mpmath", "1.3.0", ()),
                                    ("requests", "2.32.5", ())):
        build_wheel(directory, name, version, requires=requires)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=HERE.parent / "tests" / "fixtures" / "requirements")
    args = parser.parse_args(argv)
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "wheels").mkdir()
        wheels(work / "wheels")
        (work / "base.in").write_text("requests\n")
        (work / "requirements.in").write_text("-r base.in\ntorch==2.9.1\ntorchvision\nnumpy<2\n")
        env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "UV_NO_CACHE": "1", "PIP_CONFIG_FILE": "/dev/null"}
        outputs = {}
        subprocess.run([uv, "pip", "compile", "requirements.in", "--generate-hashes", "--no-index", "--find-links",
                        "wheels", "--python-version", "3.12", "--python-platform", "x86_64-manylinux_2_28",
                        "-o", "uv-compiled.txt", "--quiet"], cwd=work, env=env, check=True)
        outputs["uv-compiled.txt"] = (work / "uv-compiled.txt").read_text()
        subprocess.run([uv, "pip", "compile", "requirements.in", "--generate-hashes", "--no-index", "--find-links",
                        "wheels", "--universal", "--python-version", "3.12", "-o", "uv-universal.txt", "--quiet"],
                       cwd=work, env=env, check=True)
        outputs["uv-universal.txt"] = (work / "uv-universal.txt").read_text()
        venv.EnvBuilder(with_pip=True).create(work / "tools")
        pip = work / "tools" / "bin" / "pip"
        subprocess.run([str(pip), "install", "-q", "pip-tools"], env={**env, "PIP_CONFIG_FILE": ""}, check=True)
        subprocess.run([str(work / "tools" / "bin" / "pip-compile"), "requirements.in", "--generate-hashes",
                        "--no-index", "--find-links", "wheels", "-o", "pip-compiled.txt"], cwd=work,
                       env=env, check=True)
        outputs["pip-compiled.txt"] = (work / "pip-compiled.txt").read_text()
        args.output.mkdir(parents=True, exist_ok=True)
        for name, text in outputs.items():
            (args.output / name).write_text(text.replace(str(work), "."), encoding="utf-8")
            print(f"wrote {args.output / name}", file=sys.stderr)
        for name in ("requirements.in", "base.in"):
            shutil.copy(work / name, args.output / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
