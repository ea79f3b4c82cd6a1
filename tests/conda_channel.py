"""A local conda channel shaped like conda-forge's pytorch, written from the shipped conda-forge table, for
py-rattler (the solver pixi is built on) to solve torch-install's MatchSpecs against.

    python tests/conda_channel.py OUT      # writes OUT/<subdir>/repodata.json and OUT/noarch/repodata.json

Every build of the table becomes the records conda-forge publishes for it, with the real build strings (the
recipe's template; the hash part is a stand-in) and dependencies in the recipe's shape: ``pytorch`` needs
``libtorch`` of the same build, ``__cuda`` (CUDA builds), ``cuda-version >=X.Y,<X+1`` (what the CUDA compiler's
run export adds), ``arm-variant * <variant>`` where the recipe builds one, ``__glibc``/``__osx`` at the build's
floor and its Python; it constrains ``pytorch-gpu``/``pytorch-cpu`` the way the recipe does, and those selector
packages depend back on their pytorch. torchvision and torchaudio are built for the newest pytorch they pair with
(``pytorch * cuda*`` or ``cpu*``, the pytorch minor pinned); ``cuda-version`` constrains ``__cuda >=X``;
``arm-variant`` has its tegra build tracked (down-weighted). Python, pip and numpy close the set.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from torch_install.resolver.conda_forge import load_table  # noqa: E402

TIMESTAMP = 1767225600000  # 2026-01-01, the same for every record (the solver prefers newer ones otherwise)


def _hash(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:7]


def _record(name: str, version: str, build: str, number: int, subdir: str, depends: list[str],
            constrains: list[str] = (), **extra: Any) -> tuple[str, dict[str, Any]]:
    filename = f"{name}-{version}-{build}.conda"
    return filename, {"name": name, "version": version, "build": build, "build_number": number, "subdir": subdir,
                      "depends": depends, "constrains": list(constrains), "license": "BSD-3-Clause",
                      "md5": hashlib.md5(filename.encode()).hexdigest(),  # noqa: S324 - a stand-in checksum
                      "sha256": hashlib.sha256(filename.encode()).hexdigest(), "size": 1024,
                      "timestamp": TIMESTAMP, **extra}


def _python_pin(python: str) -> str:
    major, minor = python.split(".")
    return f"python >={python},<{major}.{int(minor) + 1}.0a0"


def _floor(build: dict[str, Any]) -> list[str]:
    floor = build["floor"]
    if "glibc" in floor:
        return [f"__glibc >={floor['glibc']},<3.0.a0"]
    if "macos" in floor:
        return [f"__osx >={floor['macos']}"]
    return []


def _cuda(build: dict[str, Any]) -> list[str]:
    if not build["cuda"]:
        return []
    major, _ = build["cuda"].split(".")
    return ["__cuda", f"cuda-version >={build['cuda']},<{int(major) + 1}"]


def _arm(build: dict[str, Any]) -> list[str]:
    return [f"arm-variant * {build['arm_variant']}"] if build["arm_variant"] else []


def pytorch_records(release: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """subdir -> filename -> record, for one pytorch release: libtorch, pytorch per Python, the selector."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    version = release["version"]
    for build in release["builds"]:
        subdir = build["subdir"]
        kind = "cuda" if build["cuda"] else "cpu"
        cuda = (build["cuda"] or "").replace(".", "")
        template = release["build_string"][kind]
        lib_hash = _hash("libtorch", version, subdir, build["cuda"], build["blas"], build["arm_variant"])
        lib_build = f"{kind}{cuda}_{build['blas']}_h{lib_hash}_{build['number']}"
        records = out.setdefault(subdir, {})
        name, record = _record("libtorch", version, lib_build, build["number"], subdir,
                               [*_floor(build), *_cuda(build), *_arm(build)])
        records[name] = record
        own = [f"pytorch-gpu {version}", "pytorch-cpu <0.0a0"] if kind == "cuda" else \
            [f"pytorch-cpu {version}", "pytorch-gpu <0.0a0"]
        for python in build["python"]:
            string = template.format(cuda=cuda, blas=build["blas"], py=python.replace(".", ""),
                                     hash=_hash("pytorch", version, subdir, build["cuda"], build["blas"],
                                                build["arm_variant"], python), number=build["number"])
            name, record = _record("pytorch", version, string, build["number"], subdir,
                                   [f"libtorch {version} {lib_build}", _python_pin(python), *_floor(build),
                                    *_cuda(build), *_arm(build)], own)
            records[name] = record
        selector = "pytorch-gpu" if kind == "cuda" else "pytorch-cpu"
        sel_build = f"{kind}{cuda}_{build['blas']}_h{_hash(selector, version, subdir, build['cuda'])}_" \
                    f"{build['number']}"
        wanted = f"cuda*_{build['blas']}*{build['number']}" if kind == "cuda" else \
            f"cpu_{build['blas']}*{build['number']}"
        name, record = _record(selector, version, sel_build, build["number"], subdir,
                               [f"pytorch {version} {wanted}", *_arm(build)])
        records[name] = record
    return out


def companion_records(package: str, entry: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    major, minor = entry["pytorch"].split(".")
    for build in entry["builds"]:
        kind = "cuda" if build["cuda"] else "cpu"
        cuda = (build["cuda"] or "").replace(".", "")
        for python in build["python"]:
            string = entry["build_string"][kind].format(
                cuda=cuda, py=python.replace(".", ""), number=entry["build_number"],
                hash=_hash(package, build["subdir"], build["cuda"], build["arm_variant"], python))
            name, record = _record(package, entry["version"], string, entry["build_number"], build["subdir"],
                                   [_python_pin(python), f"pytorch >={major}.{minor},<{major}.{int(minor) + 1}.0a0",
                                    f"pytorch * {kind}*", *_cuda(build), *_arm(build)])
            out.setdefault(build["subdir"], {})[name] = record
    return out


def noarch_records(table: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for version in table["cuda_version"]["versions"]:
        major = version.split(".")[0]
        name, record = _record("cuda-version", version, "h0_3", 3, "noarch", [],
                               [f"__cuda >={major}", f"cudatoolkit {version}|{version}.*"], noarch="generic")
        out[name] = record
    for variant in ("sbsa", "tegra"):
        extra = {"track_features": "arm_tegra"} if variant == "tegra" else {}
        name, record = _record("arm-variant", "1.2.0", variant, 0, "noarch", [], noarch="generic", **extra)
        out[name] = record
    name, record = _record("pip", "25.2", "pyh8b19718_0", 0, "noarch", ["python >=3.9"], noarch="python")
    out[name] = record
    return out


def python_records(subdir: str) -> dict[str, dict[str, Any]]:
    """Python 3.9 to 3.14, and a numpy for each (a package of the user's own beside the torch family)."""
    out = {}
    for minor in range(9, 15):
        name, record = _record("python", f"3.{minor}.0", f"h0_0_cp3{minor}", 0, subdir, [])
        out[name] = record
        name, record = _record("numpy", "2.3.0", f"py3{minor}h0_0", 0, subdir, [_python_pin(f"3.{minor}")])
        out[name] = record
    return out


def write_channel(directory: Path) -> Path:
    """The channel under ``directory``; returns it."""
    table = load_table()
    subdirs: dict[str, dict[str, dict[str, Any]]] = {}
    for release in table["pytorch"]:
        for subdir, records in pytorch_records(release).items():
            subdirs.setdefault(subdir, {}).update(records)
    for package in ("torchvision", "torchaudio"):
        for subdir, records in companion_records(package, table[package]).items():
            subdirs.setdefault(subdir, {}).update(records)
    for subdir, records in subdirs.items():
        records.update(python_records(subdir))
    subdirs["noarch"] = noarch_records(table)
    for subdir, records in subdirs.items():
        path = directory / subdir / "repodata.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"info": {"subdir": subdir}, "packages": {}, "packages.conda": records,
                                    "removed": [], "repodata_version": 1}, indent=1, sort_keys=True),
                        encoding="utf-8")
    return directory


# py-rattler 0.28.0's wheels on the default index (its JSON API): where none installs, the solver tests skip; where
# one does, the test extra installs it and they run (a missing one there is a failure, never a skip)
RATTLER_WHEELS = (
    "py_rattler-0.28.0-cp310-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "py_rattler-0.28.0-cp310-abi3-manylinux_2_28_aarch64.whl",
    "py_rattler-0.28.0-cp310-abi3-manylinux_2_17_i686.manylinux2014_i686.whl",
    "py_rattler-0.28.0-cp310-abi3-manylinux_2_17_ppc64.manylinux2014_ppc64.whl",
    "py_rattler-0.28.0-cp310-abi3-manylinux_2_28_ppc64le.whl",
    "py_rattler-0.28.0-cp310-abi3-manylinux_2_28_armv7l.whl",
    "py_rattler-0.28.0-cp310-abi3-manylinux_2_31_riscv64.whl",
    "py_rattler-0.28.0-cp310-abi3-musllinux_1_2_x86_64.whl",
    "py_rattler-0.28.0-cp310-abi3-musllinux_1_2_aarch64.whl",
    "py_rattler-0.28.0-cp310-abi3-musllinux_1_2_i686.whl",
    "py_rattler-0.28.0-cp310-abi3-musllinux_1_2_armv7l.whl",
    "py_rattler-0.28.0-cp310-abi3-musllinux_1_2_riscv64.whl",
    "py_rattler-0.28.0-cp310-abi3-macosx_10_12_x86_64.whl",
    "py_rattler-0.28.0-cp310-abi3-macosx_10_12_x86_64.macosx_11_0_arm64.macosx_10_12_universal2.whl",
    "py_rattler-0.28.0-cp310-abi3-win_amd64.whl",
    "py_rattler-0.28.0-cp310-abi3-win32.whl",
    "py_rattler-0.28.0-cp310-abi3-win_arm64.whl",
)


def rattler_wheel_installs() -> bool:
    """Whether one of py-rattler's wheels installs on this interpreter (its tags among the interpreter's)."""
    from packaging.tags import sys_tags
    from packaging.utils import parse_wheel_filename

    ours = set(sys_tags())
    return any(tag in ours for name in RATTLER_WHEELS for tag in parse_wheel_filename(name)[3])


def need_rattler() -> Any:
    """py-rattler, the solver pixi is built on: the test skips where it publishes no wheel for this platform, and
    fails where it does but is missing (the test extra installs it)."""
    import pytest

    try:
        import rattler
    except ImportError:
        if rattler_wheel_installs():
            pytest.fail("py-rattler is missing, and a wheel of it installs here: install the test extra "
                        "(pip install -e '.[test]')")
        pytest.skip("py-rattler publishes no wheel for this platform: the conda solver tests cannot run here")
    return rattler


def virtual_packages(subdir: str, cuda: str | None, glibc: str = "2.35", macos: str = "14.5") -> list[Any]:
    """The virtual packages of a machine of ``subdir`` (``__cuda`` only with ``cuda``), as py-rattler takes them."""
    from rattler import BuildString, GenericVirtualPackage, PackageName, Version

    found = [("__unix", "0", "0")] if not subdir.startswith("win") else [("__win", "0", "0")]
    if subdir.startswith("linux"):
        found += [("__linux", "6.1", "0"), ("__glibc", glibc, "0")]
    if subdir.startswith("osx"):
        found.append(("__osx", macos, "0"))
    if cuda:
        found.append(("__cuda", cuda, "0"))
    return [GenericVirtualPackage(PackageName(n), Version(v), BuildString(b)) for n, v, b in found]


def solve(channel: Path, subdir: str, specs: list[str], virtual: list[Any]) -> dict[str, Any]:
    """py-rattler's solution (name -> record) for ``specs`` on ``subdir`` of the channel, offline; the solver's
    error (``rattler.exceptions.SolverError``) when there is none."""
    import asyncio

    from rattler import Channel, MatchSpec, SparseRepoData, solve_with_sparse_repodata

    source = Channel(str(channel))
    data = [SparseRepoData(source, s, channel / s / "repodata.json") for s in (subdir, "noarch")]
    records = asyncio.run(solve_with_sparse_repodata([MatchSpec(s) for s in specs], data,
                                                     virtual_packages=virtual))
    return {r.name.normalized: r for r in records}


if __name__ == "__main__":
    print(write_channel(Path(sys.argv[1])))
