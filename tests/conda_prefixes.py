"""conda environments for the doctor, in the formats conda, mamba and pixi write, made from the conda-forge table.

    python tests/conda_prefixes.py OUT     # writes OUT/<case>/ for every case in CASES

A prefix holds what a conda-forge PyTorch install leaves: ``conda-meta/<name>-<version>-<build>.json`` records in
conda's ``PrefixRecord`` form (``build``, ``build_number``, ``channel``, ``depends``, ``files``, ``fn``,
``link``, ``paths_data``, ``requested_spec(s)``, ``subdir``, ``url`` …, py-rattler's ``PrefixRecord`` reads
them), ``conda-meta/history`` (conda, mamba) or ``conda-meta/pixi`` (pixi's marker), the activation script
conda-forge's CUDA libtorch writes (the recipe's ``activate.sh`` with ``@cf_torch_cuda_arch_list@`` replaced, as
its ``build.sh`` does), and in site-packages the ``torch-<version>.dist-info`` (``INSTALLER`` "conda", as
conda-build and rattler-build rewrite it) and ``torch/version.py`` setup.py writes. A case may put a pip-installed
torch over conda's.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from torch_install.resolver.conda_forge import load_table  # noqa: E402

ACTIVATE = ROOT / "scripts" / "reference" / "conda-forge" / "pytorch" / "2.13.0" / "recipe" / "activate.sh"
SITE = "lib/python3.12/site-packages"
CHANNEL = "https://conda.anaconda.org/conda-forge"
PKGS = "/home/user/miniforge3/pkgs"


def _hash(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:7]


def _build(version: str, subdir: str, cuda: str | None, arm: str | None = None) -> dict[str, Any]:
    release = next(r for r in load_table()["pytorch"] if r["version"] == version)
    return next(b for b in release["builds"] if b["subdir"] == subdir and b["cuda"] == cuda and
                b["arm_variant"] == arm and (b["blas"] == "mkl" or subdir != "linux-64"))


def _strings(version: str, build: dict[str, Any], python: str = "312") -> tuple[str, str]:
    """(pytorch's build string, libtorch's), as the recipe's templates make them."""
    release = next(r for r in load_table()["pytorch"] if r["version"] == version)
    kind = "cuda" if build["cuda"] else "cpu"
    cuda = (build["cuda"] or "").replace(".", "")
    py = release["build_string"][kind].format(cuda=cuda, blas=build["blas"], py=python,
                                              hash=_hash(version, kind, cuda, python), number=build["number"])
    lib = f"{kind}{cuda}_{build['blas']}_h{_hash('libtorch', version, kind, cuda)}_{build['number']}"
    return py, lib


def record(prefix: Path, name: str, version: str, build: str, number: int, subdir: str, depends: list[str],
           files: dict[str, bytes], requested: str | None = None) -> None:
    """Write the package's files into the prefix and its conda-meta record, in conda's PrefixRecord form."""
    paths = []
    for path, data in files.items():
        target = prefix / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        paths.append({"_path": path, "path_type": "hardlink", "sha256": digest, "sha256_in_prefix": digest,
                      "size_in_bytes": len(data)})
    fn = f"{name}-{version}-{build}.conda"
    extracted = f"{PKGS}/{name}-{version}-{build}"
    entry: dict[str, Any] = {
        "build": build, "build_number": number, "channel": f"{CHANNEL}/{subdir}", "constrains": [],
        "depends": depends, "extracted_package_dir": extracted, "features": "", "files": sorted(files),
        "fn": fn, "license": "BSD-3-Clause", "link": {"source": extracted, "type": 1},
        "md5": hashlib.md5(fn.encode()).hexdigest(),  # noqa: S324 - a stand-in checksum, as the sha256
        "name": name, "package_tarball_full_path": f"{PKGS}/{fn}",
        "paths_data": {"paths": sorted(paths, key=lambda p: p["_path"]), "paths_version": 1},
        "sha256": hashlib.sha256(fn.encode()).hexdigest(), "size": 1024 + sum(len(d) for d in files.values()),
        "subdir": subdir, "timestamp": 1767225600000, "track_features": "", "url": f"{CHANNEL}/{subdir}/{fn}",
        "version": version}
    if requested:
        entry.update(requested_spec=requested, requested_specs=[requested])
    meta = prefix / "conda-meta" / f"{name}-{version}-{build}.json"
    meta.parent.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps(entry, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _dist_info(package: str, version: str, installer: str, files: dict[str, bytes]) -> dict[str, bytes]:
    """A dist-info for ``files`` (METADATA, WHEEL, INSTALLER, RECORD with each file's hash)."""
    info = f"{SITE}/{package}-{version}.dist-info"
    meta = {f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n".encode(),
            f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: setuptools\nRoot-Is-Purelib: false\n"
                             b"Tag: cp312-cp312-linux_x86_64\n",
            f"{info}/INSTALLER": f"{installer}\n".encode()}
    every = {**files, **meta}
    lines = []
    for path, data in sorted(every.items()):
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{path.removeprefix(SITE + '/')},sha256={digest},{len(data)}")
    lines.append(f"{package}-{version}.dist-info/RECORD,,")
    return {**every, f"{info}/RECORD": ("\n".join(lines) + "\n").encode()}


def _version_py(version: str, cuda: str | None) -> bytes:
    """torch/version.py as torch's setup.py writes it."""
    return (f"from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', "
            f"'xpu']\n__version__ = '{version}'\ndebug = False\ncuda: Optional[str] = "
            f"{repr(cuda) if cuda else 'None'}\ngit_version = '{_hash('git', version)}0000000000000000000000000000000"
            "00000'\nhip: Optional[str] = None\nxpu: Optional[str] = None\n").encode()


def pytorch(prefix: Path, version: str, subdir: str, cuda: str | None, arm: str | None = None) -> None:
    """conda-forge's libtorch and pytorch of that build, with cuda-version (and arm-variant) beside a CUDA one."""
    build = _build(version, subdir, cuda, arm)
    py, lib = _strings(version, build)
    lib_files: dict[str, bytes] = {"lib/libtorch_cpu.so": b"\x7fELF libtorch_cpu", "lib/libc10.so": b"\x7fELF c10"}
    depends = [f"libtorch {version} {lib}"]
    release = next(r for r in load_table()["pytorch"] if r["version"] == version)
    if cuda:
        lib_files["lib/libtorch_cuda.so"] = b"\x7fELF libtorch_cuda"
    if cuda and release["activation"]:  # from 2.10.0: the arch list, as build.sh writes it into the script
        script = ACTIVATE.read_text(encoding="utf-8").replace("@cf_torch_cuda_arch_list@", build["arches"]["list"])
        lib_files[release["activation"]["script"]] = script.encode()
        major = cuda.split(".")[0]
        depends += ["__cuda", f"cuda-version >={cuda},<{int(major) + 1}"]
        record(prefix, "cuda-version", cuda, "h0_3", 3, "noarch", [], {})
    if arm:
        record(prefix, "arm-variant", "1.2.0", arm, 0, "noarch", [], {})
    record(prefix, "libtorch", version, lib, build["number"], subdir, depends[1:], lib_files)
    torch = {f"{SITE}/torch/__init__.py": b"", f"{SITE}/torch/version.py": _version_py(version, cuda)}
    record(prefix, "pytorch", version, py, build["number"], subdir,
           [*depends, "python >=3.12,<3.13.0a0", "python_abi 3.12.* *_cp312"],
           _dist_info("torch", version, "conda", torch), requested="pytorch")


def companion(prefix: Path, package: str, subdir: str, cuda: str | None) -> None:
    entry = load_table()[package]
    kind = "cuda" if cuda else "cpu"
    build = entry["build_string"][kind].format(cuda=(cuda or "").replace(".", ""), py="312",
                                               hash=_hash(package, cuda), number=entry["build_number"])
    files = {f"{SITE}/{package}/__init__.py": b"", f"{SITE}/{package}/version.py":
             f"__version__ = '{entry['version']}'\ncuda = {cuda!r}\n".encode()}
    record(prefix, package, entry["version"], build, entry["build_number"], subdir,
           ["python >=3.12,<3.13.0a0", f"pytorch * {kind}*"], _dist_info(package, entry["version"], "conda", files),
           requested=package)


def pip_torch(prefix: Path, version: str) -> None:
    """A torch pip installed over conda's: its dist-info next to conda's, its version.py over conda's."""
    local = version.split("+")[1] if "+" in version else None
    files = {f"{SITE}/torch/__init__.py": b"", f"{SITE}/torch/version.py":
             _version_py(version, f"{local[2:4]}.{local[4:]}" if local and local.startswith("cu") else None)}
    conda_info = next((prefix / SITE).glob("torch-*.dist-info"))
    for path in conda_info.iterdir():  # pip uninstalled conda's dist-info (its files are still in conda's record)
        path.unlink()
    conda_info.rmdir()
    for path, data in _dist_info("torch", version, "pip", files).items():
        (prefix / path).parent.mkdir(parents=True, exist_ok=True)
        (prefix / path).write_bytes(data)


def history(prefix: Path, specs: list[str]) -> None:
    lines = ["==> 2026-09-01 10:00:00 <==", f"# cmd: conda create --prefix {prefix.name} " + " ".join(specs),
             "# conda version: 26.7.0", *(f"+conda-forge/{p}" for p in specs)]
    (prefix / "conda-meta" / "history").write_text("\n".join(lines) + "\n", encoding="utf-8")


def pixi_marker(prefix: Path) -> None:
    (prefix / "conda-meta" / "pixi").write_text(json.dumps(
        {"manifest_path": "/home/user/project/pixi.toml", "environment_name": "default", "pixi_version": "0.76.2",
         "environment_lock_file_hash": "0" * 16}) + "\n", encoding="utf-8")


# case -> what it holds
CASES = {
    "cuda129-healthy": lambda p: (pytorch(p, "2.13.0", "linux-64", "12.9"), companion(p, "torchvision", "linux-64",
                                                                                     "12.9")),
    "cpu-build": lambda p: pytorch(p, "2.13.0", "linux-64", None),
    "cpu-build-pixi": lambda p: (pytorch(p, "2.13.0", "linux-64", None), pixi_marker(p)),
    "torchvision-cpu-next-to-cuda": lambda p: (pytorch(p, "2.13.0", "linux-64", "12.9"),
                                               companion(p, "torchvision", "linux-64", None)),
    "torchvision-other-cuda": lambda p: (pytorch(p, "2.13.0", "linux-64", "13.0"),
                                         companion(p, "torchvision", "linux-64", "12.9")),
    "cuda130": lambda p: pytorch(p, "2.13.0", "linux-64", "13.0"),
    "cuda129-2.9.1": lambda p: pytorch(p, "2.9.1", "linux-64", "12.9"),
    "pip-over-conda": lambda p: (pytorch(p, "2.13.0", "linux-64", "12.9"), pip_torch(p, "2.15.0+cu130")),
    "tegra": lambda p: pytorch(p, "2.13.0", "linux-aarch64", "12.9", "tegra"),
}


def write_prefix(root: Path, case: str) -> Path:
    prefix = root / case
    (prefix / SITE).mkdir(parents=True, exist_ok=True)
    CASES[case](prefix)
    if not (prefix / "conda-meta" / "pixi").exists():
        history(prefix, sorted(p.name.removesuffix(".json") for p in (prefix / "conda-meta").glob("*.json")))
    return prefix


if __name__ == "__main__":
    for name in CASES:
        print(write_prefix(Path(sys.argv[1]), name))
