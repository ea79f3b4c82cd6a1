#!/usr/bin/env python3
"""Capture what each PyTorch release branch builds, from pytorch/test-infra's binary build matrix.

    python scripts/capture_release_builds.py --repo PATH/TO/test-infra [-o scripts/reference/evidence/...]

For every ``release/2.N`` branch of a test-infra clone, reads ``tools/scripts/generate_binary_build_matrix.py``
at that branch's tip and keeps the "test" channel's CUDA, aarch64 CUDA, ROCm and Python versions and its stable
CUDA (on a release branch, the "test" channel is what the release candidates, and so the release, are built
with), the Pythons it builds as a preview, the "release" channel's Pythons (a Python the test channel builds and
that list keeps out is not released), the Pythons built for torch alone (no torchvision/torchaudio for them), the
CUDA versions without a Windows build, whether it builds xpu wheels, and the CUDA versions its code adds for
Linux (x86_64 and aarch64) only. The file's literal assignments are read with ``ast.literal_eval``: nothing of it
runs. Writes ``scripts/reference/evidence/release-builds.json``, which ``scripts/audit_matrix.py`` checks variant
sets, stable CUDA variants and Python versions against.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference" / "evidence" / "release-builds.json"
SCRIPT = "tools/scripts/generate_binary_build_matrix.py"
# the "test" channel's entry of each table: what the release candidates, and so the release, are built with
NAMES = {"CUDA_ARCHES_DICT": "cuda", "ROCM_ARCHES_DICT": "rocm", "PYTHON_ARCHES_DICT": "python",
         "PREVIEW_PYTHON_ARCHES_DICT": "preview_python", "CUDA_AARCH64_ARCHES_DICT": "cuda_aarch64",
         "STABLE_CUDA_VERSIONS": "stable_cuda"}
# the "release" channel's Pythons: a Python the test channel builds and this list keeps out is not released
RELEASE_NAMES = {"PYTHON_ARCHES_DICT": "release_python", "PREVIEW_PYTHON_ARCHES_DICT": "preview_release_python"}
# plain lists: Linux aarch64 CUDA builds, CUDA versions without a Windows build, Pythons built for torch alone
# (no torchvision/torchaudio wheels for them)
LISTS = {"CUDA_AARCH64_ARCHES": "cuda_aarch64", "CUDA_ARCHES_NO_WINDOWS": "cuda_no_windows",
         "TORCH_ONLY_PYTHON_ARCHES": "torch_only_python"}
# a CUDA version added for Linux only, in code rather than in the table ("CUDA_ARCHES.append("12.9")")
LINUX_EXTRA = re.compile(r'CUDA_ARCHES(?:\.append\(\s*|\s*=\s*CUDA_ARCHES\s*\+\s*\[\s*)"([0-9]+\.[0-9]+)"')
AARCH64_EXTRA = re.compile(r'CUDA_AARCH64_ARCHES\.append\(\s*"([0-9]+\.[0-9]+)-aarch64"')


def literals(source: str) -> dict[str, object]:
    """The module-level ``NAME = <literal>`` (and ``NAME: type = <literal>``) assignments of a Python file (others
    are skipped)."""
    out: dict[str, object] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        else:
            continue
        try:
            out[target] = ast.literal_eval(value)
        except ValueError:
            continue
    return out


def capture(repo: Path) -> dict[str, object]:
    git = ["git", "-C", str(repo)]
    branches = subprocess.run([*git, "for-each-ref", "--format=%(refname:short)", "refs/heads/"],
                              capture_output=True, text=True, check=True).stdout.split()
    releases: dict[str, object] = {}
    for branch in sorted(b for b in branches if re.fullmatch(r"release/2\.[0-9]+", b)):
        commit = subprocess.run([*git, "rev-parse", branch], capture_output=True, text=True, check=True).stdout.strip()
        shown = subprocess.run([*git, "show", f"{commit}:{SCRIPT}"], capture_output=True, text=True)
        if shown.returncode != 0:
            continue
        values = literals(shown.stdout)
        row: dict[str, object] = {"commit": commit}
        for name, key in LISTS.items():
            if isinstance(values.get(name), list):
                row[key] = values[name]
        for names, channel in ((NAMES, "test"), (RELEASE_NAMES, "release")):
            for name, key in names.items():
                table = values.get(name)
                if isinstance(table, dict) and isinstance(table.get(channel), (list, str)):
                    row[key] = table[channel]
        if "cuda_aarch64" in row:
            row["cuda_aarch64"] = [v.removesuffix("-aarch64") for v in row["cuda_aarch64"]]  # type: ignore[attr-defined]
        extra = sorted(set(LINUX_EXTRA.findall(shown.stdout)) - set(row.get("cuda", ())))  # type: ignore[arg-type]
        if extra:
            row["linux_extra_cuda"] = extra
        extra = sorted(set(AARCH64_EXTRA.findall(shown.stdout)) - set(row.get("cuda_aarch64", ())))  # type: ignore
        if extra:
            row["aarch64_extra_cuda"] = extra
        row["xpu"] = "XPU" in values  # the generator knows an xpu build (Linux and Windows wheels)
        releases[branch.split("/", 1)[1]] = row
    return {"source": f"pytorch/test-infra {SCRIPT}, the 'test' channel at each release branch's tip",
            "releases": releases}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a clone of pytorch/test-infra")
    parser.add_argument("-o", "--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = capture(args.repo)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {len(data['releases'])} release branches")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
