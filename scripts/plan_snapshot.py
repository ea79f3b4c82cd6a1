"""The output of many plan and detect runs, one file per case: the snapshot ``tests/test_plan_snapshot.py`` holds
the code to (``tests/fixtures/plan-snapshot/``), and a way to compare two versions of the code byte for byte.

    python scripts/plan_snapshot.py tests/fixtures/plan-snapshot   # refresh the snapshot (a change meant)
    python scripts/plan_snapshot.py OUT_DIR                        # write every case to OUT_DIR
    python scripts/plan_snapshot.py OUT_DIR --list                 # only the case names

Cases: every sysroot fixture in every plan format and with a few requests (companions, a pin, nightly,
container mode), ``detect --json`` of each fixture, and a table of machines given by flags (GPU names, drivers,
platforms) in text and JSON. Each file holds the exit code, then stdout, then stderr. Runs in-process through
the CLI's ``main``, on a fixed machine: a machine given by flags takes its assumed platform fields from the
``cpu-x86_64`` fixture (``HOST``), and every case runs with a bare environment (no variable of the user's, the
default index none) in an empty working directory, so the output is the same on every machine. Writing OUT_DIR
replaces its case files and removes those of cases that no longer exist.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SYSROOTS = ROOT / "tests" / "fixtures" / "sysroots"
HOST = SYSROOTS / "cpu-x86_64"  # "this machine" of the cases that describe a machine by flags
PLAN_FORMATS = ("text", "json", "pip", "uv", "url", "requirements", "pyproject", "dockerfile", "variant-env")
REQUESTS = (("torch",), ("torch", "torchvision", "torchaudio"), ("torch<2.10",), ("torch==2.15.0",))
LINUX = ["--os", "linux", "--arch", "x86_64", "--python", "3.12"]
FLAG_MACHINES: dict[str, list[str]] = {
    "h100-550": [*LINUX, "--gpu", "H100", "--nvidia-driver", "550.54.15"],
    "h100-580": [*LINUX, "--gpu", "H100", "--nvidia-driver", "580.95.05"],
    "h100-nodriver": [*LINUX, "--gpu", "H100"],
    "rtx4090-550": [*LINUX, "--gpu", "RTX 4090", "--nvidia-driver", "550.54.15"],
    "rtx5090-560": [*LINUX, "--gpu", "RTX 5090", "--nvidia-driver", "560.35.03"],
    "rtx5090-570": [*LINUX, "--gpu", "RTX 5090", "--nvidia-driver", "570.124.06"],
    "gtx1080-580": [*LINUX, "--gpu", "GTX 1080", "--nvidia-driver", "580.95.05"],
    "v100-580": [*LINUX, "--gpu", "V100", "--nvidia-driver", "580.95.05"],
    "k80-470": [*LINUX, "--gpu", "Tesla K80", "--nvidia-driver", "470.256.02"],
    "5090-1080ti": [*LINUX, "--gpu", "RTX 5090", "--gpu", "GTX 1080 Ti", "--nvidia-driver", "580.95.05"],
    "mi300x": [*LINUX, "--gpu", "MI300X", "--rocm", "6.4.1"],
    "rx7900xtx-rocm7.1": [*LINUX, "--gpu", "RX 7900 XTX", "--rocm", "7.1.0"],
    "rx6700xt": [*LINUX, "--gpu", "RX 6700 XT", "--rocm", "6.4.1"],
    "rx9070xt": [*LINUX, "--gpu", "RX 9070 XT"],
    "arc-a770": [*LINUX, "--gpu", "Arc A770"],
    "arc-b580": [*LINUX, "--gpu", "Arc B580"],
    "uhd620": [*LINUX, "--gpu", "UHD 620"],
    "m2": ["--os", "macos", "--arch", "arm64", "--python", "3.12", "--gpu", "M2"],
    "intel-mac": ["--os", "macos", "--arch", "x86_64", "--python", "3.12"],
    "windows-3060-531": ["--os", "windows", "--arch", "x86_64", "--python", "3.12", "--gpu", "RTX 3060",
                         "--nvidia-driver", "531.79"],
    "windows-rx7900": ["--os", "windows", "--arch", "x86_64", "--python", "3.12", "--gpu", "RX 7900 XTX"],
    "py310-h100": ["--os", "linux", "--arch", "x86_64", "--python", "3.10", "--gpu", "H100",
                   "--nvidia-driver", "580.95.05"],
    "aarch64-gh200": ["--os", "linux", "--arch", "aarch64", "--python", "3.12", "--gpu", "GH200",
                      "--nvidia-driver", "580.95.05"],
    "cpu-only": [*LINUX],
}
FLAG_REQUESTS = (("torch",), ("torch==2.15.0",), ("torch==2.14.1",), ("torch<2.9", "torchvision"))


def cases() -> dict[str, list[str]]:
    """Case name -> argv of ``torch-install``."""
    out: dict[str, list[str]] = {}
    for sysroot in sorted(p for p in SYSROOTS.iterdir() if p.is_dir()):
        name = sysroot.name
        out[f"detect-{name}"] = ["detect", "--json", "--sysroot", str(sysroot)]
        out[f"detect-summary-{name}"] = ["detect", "-v", "--sysroot", str(sysroot)]
        for fmt in PLAN_FORMATS:
            out[f"plan-{name}-{fmt}"] = ["plan", "--sysroot", str(sysroot), "--format", fmt]
        for i, request in enumerate(REQUESTS[1:], 1):
            out[f"plan-{name}-req{i}"] = ["plan", *request, "--sysroot", str(sysroot), "--format", "json"]
        out[f"plan-{name}-nightly"] = ["plan", "--channel", "nightly", "--sysroot", str(sysroot)]
        out[f"plan-{name}-container"] = ["plan", "--for-container", "--variant", "cpu", "--sysroot", str(sysroot)]
    host = ["--sysroot", str(HOST)]
    for name, flags in FLAG_MACHINES.items():
        for i, request in enumerate(FLAG_REQUESTS):
            out[f"flags-{name}-req{i}"] = ["plan", *request, *flags, *host]
        out[f"flags-{name}-json"] = ["plan", *flags, "--format", "json", *host]
    return out


@contextlib.contextmanager
def _fixed_environment() -> Iterator[None]:
    """A bare environment (PATH kept, HOME and the cache in a new directory, the default index none, no pip
    configuration: a constraint there would bound the plans) and that directory as the working directory, for the
    cases' run; the caller's are put back after."""
    saved, cwd = dict(os.environ), os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.clear()
        os.environ.update({"PATH": saved.get("PATH", ""), "HOME": tmp, "LANG": "C.UTF-8",
                           "TORCH_INSTALL_DEFAULT_INDEX": "none", "PIP_CONFIG_FILE": os.devnull,
                           "TORCH_INSTALL_CACHE_DIR": os.path.join(tmp, "cache")})
        os.chdir(tmp)
        try:
            yield
        finally:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(saved)


def outputs() -> dict[str, str]:
    """Case name -> its output (exit code, stdout, stderr), the checkout's path written ``<repo>``."""
    with _fixed_environment():
        return {name: run(argv).replace(str(ROOT), "<repo>") for name, argv in cases().items()}


def run(argv: list[str]) -> str:
    from torch_install.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return f"exit {code}\n--- stdout\n{stdout.getvalue()}--- stderr\n{stderr.getvalue()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    table = cases()
    if args.list:
        print("\n".join(table))
        return 0
    written = outputs()
    args.out.mkdir(parents=True, exist_ok=True)
    for stale in set(args.out.glob("*.txt")) - {args.out / f"{name}.txt" for name in written}:
        stale.unlink()
    for name, text in written.items():
        (args.out / f"{name}.txt").write_text(text, encoding="utf-8")
    print(f"{len(written)} cases written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
