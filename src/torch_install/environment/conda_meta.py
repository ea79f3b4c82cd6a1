"""What conda (or mamba, or pixi) installed in an environment, read from its ``conda-meta/`` without running any of
them: the records of the packages that make up a PyTorch install, which tool manages the prefix, and the CUDA arch
list conda-forge's CUDA builds record in the activation script.

A record is ``conda-meta/<name>-<version>-<build>.json`` (conda's ``PrefixRecord``: ``name``, ``version``,
``build``, ``build_number``, ``channel``, ``subdir``, ``depends``, ``constrains``, ``files`` …); pixi marks the
prefixes it made with ``conda-meta/pixi`` (``manifest_path``, ``environment_name``), conda and mamba write
``conda-meta/history``. conda-forge's libtorch (CUDA builds, from 2.10.0) writes
``etc/conda/activate.d/libtorch_activate.sh`` (``.bat`` on Windows), which exports ``CF_TORCH_CUDA_ARCH_LIST``.
Every file is read bounded (``dists.read_file``): an inspected environment is never trusted to be small or regular.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from types import MappingProxyType

from ..records import Record
from .dists import read_file

# the packages whose records say which PyTorch build conda installed
PACKAGES = ("pytorch", "libtorch", "torchvision", "torchaudio", "cuda-version", "pytorch-gpu", "pytorch-cpu",
            "arm-variant", "python")
_RECORD_NAME = re.compile(r"^(?P<name>" + "|".join(re.escape(p) for p in PACKAGES) + r")-(?P<version>[0-9][^-]*)-"
                          r"(?P<build>[^-]+)\.json$")
MAX_RECORD = 64 << 20  # a libtorch record lists every file with its hash: a few MiB
MAX_SCRIPT = 64 << 10
ACTIVATION_SCRIPTS = ("etc/conda/activate.d/libtorch_activate.sh", "etc/conda/activate.d/libtorch_activate.bat")
_ARCH_LIST = re.compile(r"""CF_TORCH_CUDA_ARCH_LIST=["']?(?P<list>[0-9][0-9.;+A-Za-z]*)["']?""")


class CondaRecord(Record):
    """One package conda installed, as its conda-meta record says."""

    name: str
    version: str
    build: str
    build_number: int
    channel: str
    subdir: str
    depends: tuple[str, ...]
    path: str

    @property
    def cuda(self) -> str | None:
        """The CUDA ``major.minor`` conda-forge's build string names (``cuda129_…`` -> "12.9"), None for CPU."""
        found = re.match(r"^cuda([0-9]+)([0-9])_", self.build)
        return f"{found[1]}.{found[2]}" if found else None

    @property
    def cpu(self) -> bool:
        return self.build.startswith("cpu_")

    @property
    def spec(self) -> str:
        """``pytorch=2.13.0=cuda129_mkl_py312_h…_302``: the record as a MatchSpec."""
        return f"{self.name}={self.version}={self.build}"


class CondaPrefix(Record):
    """A conda environment's PyTorch records, who manages it, and the arch list its activation script records."""

    prefix: str
    records: Mapping[str, CondaRecord] = MappingProxyType({})
    manager: str = "conda"  # "pixi" when pixi made it (conda-meta/pixi), else conda (or mamba: same records)
    pixi_manifest: str | None = None
    arch_list: str | None = None  # CF_TORCH_CUDA_ARCH_LIST, as recorded
    arch_script: str | None = None  # the activation script it was read from
    problems: tuple[str, ...] = ()  # records that could not be read, one line each

    def get(self, name: str) -> CondaRecord | None:
        return self.records.get(name)


def _record(path: str) -> tuple[CondaRecord | None, str | None]:
    text, why = read_file(path, MAX_RECORD)
    if text is None:
        return None, f"{path}: {why}"
    try:
        data = json.loads(text)
    except ValueError:
        return None, f"{path}: not JSON"
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("name", "version", "build")):
        return None, f"{path}: no name, version and build"
    depends = data.get("depends")
    number = data.get("build_number")
    return CondaRecord(name=data["name"], version=data["version"], build=data["build"],
                       build_number=number if isinstance(number, int) and not isinstance(number, bool) else 0,
                       channel=str(data.get("channel") or ""), subdir=str(data.get("subdir") or ""),
                       depends=tuple(d for d in depends if isinstance(d, str)) if isinstance(depends, list) else (),
                       path=path), None


def read_prefix(prefix: str) -> CondaPrefix | None:
    """The conda environment at ``prefix`` (None when it has no ``conda-meta/``)."""
    meta = os.path.join(prefix, "conda-meta")
    try:
        names = sorted(os.listdir(meta))
    except OSError:
        return None
    records: dict[str, CondaRecord] = {}
    problems: list[str] = []
    for entry in names:
        found = _RECORD_NAME.match(entry)
        if not found:
            continue
        record, problem = _record(os.path.join(meta, entry))
        if problem:
            problems.append(problem)
        elif record is not None and record.name == found["name"]:
            records.setdefault(record.name, record)
    manager, manifest = "conda", None
    if "pixi" in names:
        manager = "pixi"
        text, _ = read_file(os.path.join(meta, "pixi"), MAX_SCRIPT)
        try:
            data = json.loads(text or "")
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("manifest_path"), str):
            manifest = data["manifest_path"]
    arch_list = arch_script = None
    for script in ACTIVATION_SCRIPTS:
        path = os.path.join(prefix, *script.split("/"))
        text, _ = read_file(path, MAX_SCRIPT)
        found_list = _ARCH_LIST.search(text or "")
        if found_list and "@cf_torch" not in found_list["list"]:
            arch_list, arch_script = found_list["list"], path
            break
    return CondaPrefix(prefix=prefix, records=MappingProxyType(records), manager=manager, pixi_manifest=manifest,
                       arch_list=arch_list, arch_script=arch_script, problems=tuple(problems))


def conda_torch(prefix: str | None, site_packages: tuple[str, ...]) -> CondaRecord | None:
    """conda's pytorch record when conda (mamba, pixi) installed the torch on the path: the record, and a
    ``torch-*.dist-info`` whose INSTALLER is not pip's or uv's (None otherwise, and where no record is)."""
    conda = read_prefix(prefix) if prefix else None
    record = conda.get("pytorch") if conda else None
    if record is None:
        return None
    for site in site_packages:
        try:
            names = os.listdir(site)
        except OSError:
            continue
        for name in names:
            if name.startswith("torch-") and name.endswith(".dist-info"):
                installer, _ = read_file(os.path.join(site, name, "INSTALLER"), MAX_SCRIPT)
                return None if (installer or "").strip().lower() in ("pip", "uv") else record
    return record
