#!/usr/bin/env python3
"""What the default index's metadata says each project of the corpus may install, per target machine.

    python scripts/corpus_expectations.py [--cache DIR] [-o tests/fixtures/projects-corpus/expected.json]

The corpus (``tests/fixtures/projects-corpus/<case>/``) holds real requirement files, locks, pyprojects, pixi
manifests and conda environments as their repositories have them, with a ``source.json`` naming where each file
was read, how the project is handed to ``torch-install`` (``invoke``) and for which machines (``profiles``, files
of ``profiles/``). For every case and profile this script reads the case's files with a reader of its own (pip's
requirement-file syntax, PEP 621 and PEP 735 tables, a poetry project's ``[tool.poetry.dependencies]``, pixi's
``pypi-dependencies`` with the targets of the machine's platform, an environment.yml's conda and pip lists;
markers evaluated for the profile), then asks the default index (as pip finds it: ``PIP_INDEX_URL``,
pip's configuration, else pip's default) for each named package: its PEP 691 project page (releases, files,
Requires-Python, yanked flags) and the PEP 658 metadata of a wheel that installs on the profile, whose
``Requires-Dist`` lines on torch, torchvision and torchaudio are what the package declares. It writes, per case
and profile:

* ``torch``: the torch releases with a wheel for the profile that the project's own torch lines allow;
* ``constraints``: for each named package that declares a torch requirement in some candidate version, the
  torch releases its candidates allow together (a candidate without such a requirement allows them all);
* ``labels`` and ``variant``: the builds the files name themselves (a pin's local label, a ``[tool.uv.sources]``
  or pixi index for torch), which no index metadata decides;

and, once for all cases, ``packages``: the evidence (each version read: the wheel, its torch-family requirements).
The plan is right when its torch is in ``torch`` and in every constraint's set, and each package it installs is a
version whose declared needs admit that torch. Nothing here runs the product: the answer is the index's.

The reading is one level deep (what each named package declares itself, not what its own dependencies declare),
and a direct reference or a wheel URL is read from its file name only (it is not on the default index). Fetches
are cached in ``--cache`` (default ``~/.cache/torch-install-corpus``); run it again to refresh the file.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import io
import json
import re
import sys
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from torch_install.index.default_index import default_index_url  # noqa: E402

CORPUS = HERE.parent / "tests" / "fixtures" / "projects-corpus"
FAMILY = ("torch", "torchvision", "torchaudio")
ACCEPT = "application/vnd.pypi.simple.v1+json"
MAX_BYTES = 64 << 20
MAX_CANDIDATES = 160  # versions of one package read, newest first
CONDA_TORCH = {"pytorch": "torch", "pytorch-gpu": "torch", "pytorch-cpu": "torch", "torchvision": "torchvision",
               "torchaudio": "torchaudio"}
PYTORCH_INDEX = re.compile(r"^https://download\.pytorch\.org/whl/(?:test/|nightly/)?([a-z]+[0-9.]*)/?$")


# -- the machine ---------------------------------------------------------------------------------------------------

@dataclass(eq=False)
class Profile:
    name: str
    python: tuple[int, int]
    glibc: tuple[int, int]
    arch: str
    cuda: bool  # an NVIDIA driver: pixi's platforms that need CUDA are selected

    @property
    def environment(self) -> dict[str, str]:
        version = "{}.{}".format(*self.python)
        return {"implementation_name": "cpython", "implementation_version": version + ".0", "os_name": "posix",
                "platform_machine": self.arch, "platform_release": "", "platform_system": "Linux",
                "platform_version": "", "python_full_version": version + ".0",
                "platform_python_implementation": "CPython", "python_version": version, "sys_platform": "linux"}

    @functools.cached_property
    def tags(self) -> frozenset[Tag]:
        platforms = [f"manylinux_{self.glibc[0]}_{minor}_{self.arch}" for minor in range(self.glibc[1], 4, -1)]
        platforms += [f"manylinux2014_{self.arch}", f"manylinux2010_{self.arch}", f"manylinux1_{self.arch}",
                      f"linux_{self.arch}"]
        return frozenset([*cpython_tags(self.python, platforms=platforms),
                          *compatible_tags(self.python, "cp{}{}".format(*self.python), platforms)])


def load_profile(path: Path) -> Profile:
    data = json.loads(path.read_text())
    if data.get("os") != "linux":
        raise SystemExit(f"{path}: only Linux profiles are read here")
    major, minor = (int(x) for x in data["python"].rstrip("t").split(".")[:2])
    g_major, g_minor = (int(x) for x in data["glibc"].split(".")[:2])
    return Profile(path.stem, (major, minor), (g_major, g_minor), data["arch"], bool(data.get("nvidia_driver")))


# -- the project's files, read as their tools read them -------------------------------------------------------------

@dataclass
class Want:
    """One requirement of the project: a package, the versions it allows, and a build it names."""

    name: str
    specifier: SpecifierSet
    extras: frozenset[str] = frozenset()
    label: str | None = None  # the local label of an exact pin or a wheel URL's version
    direct: str | None = None  # a direct reference's URL
    constraint: bool = False  # from -c: bounds versions, adds no package
    where: str = ""


@dataclass
class Project:
    wants: list[Want] = field(default_factory=list)
    variant: dict[str, str] = field(default_factory=dict)  # package -> variant its source names, and "evidence"


def _public(req_spec: SpecifierSet) -> tuple[SpecifierSet, str | None]:
    """The specifier with an exact pin's local label taken off (what the default index's versions are matched
    against), and that label."""
    label = None
    parts = []
    for spec in req_spec:
        if spec.operator in ("==", "===") and "+" in spec.version:
            version, _, label = spec.version.partition("+")
            parts.append(f"=={version}")
        else:
            parts.append(str(spec))
    return SpecifierSet(",".join(parts)), label


def _wheel_want(url: str, marker: str | None, env: dict[str, str], where: str) -> Want | None:
    if marker and not Marker(marker).evaluate({**env, "extra": ""}):
        return None
    filename = urllib.parse.unquote(url.rsplit("/", 1)[-1].split("#")[0])
    if not filename.endswith(".whl"):
        return None  # a source archive, a VCS checkout: no version to read without building it
    name, version, _, _ = parse_wheel_filename(filename)
    return Want(str(name), SpecifierSet(f"=={version.public}"), label=version.local, direct=url, where=where)


def want_of(text: str, env: dict[str, str], where: str, extras: frozenset[str] = frozenset()) -> Want | None:
    """A requirement string, marker evaluated for the profile (and the extras being read); None when it does not
    apply or names no package version (a VCS or local path)."""
    text = text.strip()
    if re.match(r"^(https?|file)://", text):
        url, _, marker = text.partition(";")
        return _wheel_want(url.strip(), marker.strip() or None, env, where)
    if text.startswith(("git+", "hg+", "svn+", "bzr+", ".", "/")):
        return None
    try:
        req = Requirement(text)
    except InvalidRequirement as error:
        raise SystemExit(f"{where}: {text!r}: {error}") from error
    if req.marker is not None and not any(req.marker.evaluate({**env, "extra": e}) for e in (extras or {""})):
        return None
    if req.url:
        if req.url.endswith(".whl") or ".whl#" in req.url:
            found = _wheel_want(req.url, None, env, where)
            if found is not None:
                found.name, found.extras = req.name, frozenset(req.extras)
            return found
        return Want(req.name, SpecifierSet(), frozenset(req.extras), direct=req.url, where=where)
    specifier, label = _public(req.specifier)
    return Want(req.name, specifier, frozenset(req.extras), label=label, where=where)


def read_requirements(path: Path, env: dict[str, str], constraint: bool = False,
                      seen: frozenset[Path] = frozenset()) -> list[Want]:
    """A pip requirements file: continuations, comments, -r/-c (relative to the including file), per-line options;
    other option lines are the installer's, not requirements."""
    if path.resolve() in seen:
        raise SystemExit(f"{path}: an include loop")
    out: list[Want] = []
    logical = re.sub(r"\\\r?\n", "", path.read_text(encoding="utf-8"))
    for number, raw in enumerate(logical.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        where = f"{path.name}:{number}"
        option = re.match(r"^(-r|--requirement|-c|--constraint)(?:\s+|=)(\S+)$", line)
        if option:
            nested = (path.parent / option.group(2)).resolve()
            out += read_requirements(nested, env, constraint or option.group(1) in ("-c", "--constraint"),
                                     seen | {path.resolve()})
            continue
        if line.startswith("-"):
            continue  # -e, --index-url, --extra-index-url, --find-links, --pre …: where packages come from
        line = re.split(r"\s+(?=-)", line, maxsplit=1)[0]  # pip's own cut: options (--hash, --index-url …) follow
        found = want_of(line, env, where)
        if found is not None:
            found.constraint = constraint
            out.append(found)
    return out


def _expand(project: str, items: list[str], table: dict[str, list[str]], env: dict[str, str], where: str,
            active: tuple[str, ...] = ()) -> list[Want]:
    """Requirements of an extra or the dependencies, an extra naming the project itself read as that extra."""
    out: list[Want] = []
    for item in items:
        req = Requirement(item)
        if canonicalize_name(req.name) == canonicalize_name(project):
            if req.marker is None or req.marker.evaluate({**env, "extra": ""}):
                for extra in sorted(req.extras):
                    if extra in active:
                        raise SystemExit(f"{where}: extra {extra!r} includes itself")
                    out += _expand(project, table.get(extra, []), table, env, f"{where}[{extra}]", (*active, extra))
            continue
        found = want_of(item, env, where)
        if found is not None:
            out.append(found)
    return out


def _group(groups: dict[str, list[Any]], name: str, env: dict[str, str], where: str) -> list[Want]:
    out: list[Want] = []
    for item in groups.get(name, []):
        if isinstance(item, dict):
            out += _group(groups, item["include-group"], env, where)
        else:
            found = want_of(item, env, f"{where}[{name}]")
            if found is not None:
                out.append(found)
    return out


def _uv_sources(data: dict[str, Any], extras: list[str], groups: list[str], env: dict[str, str]) -> dict[str, str]:
    """The variant a [tool.uv.sources] entry of the torch family names for this profile, through its index."""
    uv = data.get("tool", {}).get("uv", {})
    urls = {index.get("name"): index.get("url", "") for index in uv.get("index", [])}
    out: dict[str, str] = {}
    for name, entries in uv.get("sources", {}).items():
        if canonicalize_name(name) not in FAMILY:
            continue
        for entry in entries if isinstance(entries, list) else [entries]:
            if "marker" in entry and not Marker(entry["marker"]).evaluate({**env, "extra": ""}):
                continue
            chosen = ("extra" not in entry or entry["extra"] in extras,
                      "group" not in entry or entry["group"] in groups)
            if not all(chosen):
                continue
            found = PYTORCH_INDEX.match(urls.get(entry.get("index"), "") or "")
            if found:
                out[canonicalize_name(name)] = found.group(1)
                out["evidence"] = f"[tool.uv.sources] {name}: index {entry['index']} ({urls[entry['index']]})"
            break
    return out


def load_toml(text: str, toml_1_1: bool = False) -> dict[str, Any]:
    """TOML 1.0 as pip and uv read a pyproject (tomllib; tomlkit before Python 3.11); ``toml_1_1``: as pixi reads
    its manifest (tomlkit reads an inline table over several lines, which TOML 1.0 refuses)."""
    import tomlkit

    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            if not toml_1_1:
                raise
    document: dict[str, Any] = tomlkit.parse(text).unwrap()
    return document


def _poetry_range(text: str) -> str:
    """A poetry version constraint as PEP 440 (poetry's dependency specification: ``^`` keeps the left-most
    non-zero part, ``~`` the minor where one is written, a bare version is exact)."""
    out = []
    for clause in re.split(r"\s*,\s*|\s+(?=[<>=!~^0-9*])", re.sub(r"([<>=!~^])\s+", r"\1", text.strip())):
        if clause in ("", "*"):
            continue
        found = re.fullmatch(r"([~^])([0-9][0-9.]*)(.*)", clause)
        if found and not clause.startswith("~="):
            parts = [int(p) for p in found[2].split(".")]
            if found[1] == "^":
                keep = next((i for i, p in enumerate(parts[:3]) if p), min(len(parts), 3) - 1)
            else:
                keep = 1 if len(parts) > 1 else 0
            out += [f">={found[2]}{found[3]}", "<" + ".".join(map(str, [*parts[:keep], parts[keep] + 1]))]
        elif re.match(r"[0-9]", clause):
            out.append(f"=={clause}")
        else:
            out.append(clause)
    return ",".join(out)


def _poetry_wants(table: dict[str, Any], optional_ok: set[str], env: dict[str, str], where: str) -> list[Want]:
    out = []
    for name, value in table.items():
        if name.lower() == "python":
            continue
        for item in value if isinstance(value, list) else [value]:
            item = {"version": item} if isinstance(item, str) else item
            if item.get("optional") and canonicalize_name(name) not in optional_ok:
                continue
            if any(k in item for k in ("git", "path", "url")):
                continue  # not a release of the default index
            marker = [f"({item['markers']})"] if "markers" in item else []
            if "platform" in item:
                marker.append(f"sys_platform == '{item['platform']}'")
            if "python" in item:
                marker += [f"python_full_version {m[1]} '{m[2]}'" for m in
                           re.finditer(r"(<=|>=|==|!=|<|>)([^,]+)", _poetry_range(item["python"]))]
            extras = f"[{','.join(item['extras'])}]" if item.get("extras") else ""
            text = f"{name}{extras}{_poetry_range(str(item.get('version', '*')))}"
            found = want_of(text + (f"; {' and '.join(marker)}" if marker else ""), env, f"{where}.{name}")
            if found is not None:
                out.append(found)
    return out


def read_poetry(path: Path, data: dict[str, Any], extras: list[str], groups: list[str],
                env: dict[str, str]) -> Project:
    """A poetry project: [tool.poetry.dependencies] (optional ones where a chosen extra lists them) and the chosen
    groups' dependencies."""
    poetry = data["tool"]["poetry"]
    named = {canonicalize_name(n.split("[")[0]) for e in extras for n in poetry.get("extras", {})[e]}
    wants = _poetry_wants(poetry.get("dependencies", {}), named, env, f"{path.name} tool.poetry.dependencies")
    for group in groups:
        table = poetry["group"][group]["dependencies"]
        wants += _poetry_wants(table, set(), env, f"{path.name} tool.poetry.group.{group}")
    return Project(wants)


def read_pyproject(path: Path, extras: list[str], groups: list[str], env: dict[str, str]) -> Project:
    data = load_toml(path.read_text(encoding="utf-8"))
    if "project" not in data and "dependencies" in data.get("tool", {}).get("poetry", {}):
        return read_poetry(path, data, extras, groups, env)
    table = data.get("project", {})
    optional = table.get("optional-dependencies", {})
    name = table.get("name", "")
    wants = _expand(name, table.get("dependencies", []), optional, env, path.name)
    for extra in extras:
        wants += _expand(name, optional[extra], optional, env, f"{path.name}[{extra}]", (extra,))
    for group in groups:
        wants += _group(data.get("dependency-groups", {}), group, env, path.name)
    return Project(wants, _uv_sources(data, extras, groups, env))


def _pixi_targets(data: dict[str, Any], cuda: bool) -> set[str]:
    """The target names whose tables apply on a Linux x86_64 machine (with or without a CUDA driver), as pixi
    selects its platform: the first of ``platforms`` for linux-64 whose ``cuda`` (if any) the machine has."""
    import fnmatch

    workspace = data.get("workspace") or data.get("project") or {}
    chosen = "linux-64"
    for entry in workspace.get("platforms", []):
        if isinstance(entry, dict) and entry.get("platform") == "linux-64" and (cuda or "cuda" not in entry):
            chosen = entry.get("name", "linux-64")
            break
        if entry == "linux-64":
            break
    keys = set(data.get("target", {}))
    return {k for k in keys if k in ("linux-64", "linux", "unix") or fnmatch.fnmatchcase(chosen, k)}


def read_pixi(path: Path, env: dict[str, str], cuda: bool) -> Project:
    """A pixi manifest's workspace tables, a target's entry in place of the workspace's where the target applies
    (``_pixi_targets``)."""
    data = load_toml(path.read_text(encoding="utf-8"), toml_1_1=True)
    project = Project()
    tables = [("", data), *((f"target.{k}.", data["target"][k]) for k in sorted(_pixi_targets(data, cuda)))]
    pypi: dict[str, tuple[str, Any]] = {}
    conda: dict[str, tuple[str, Any]] = {}
    for scope, table in tables:
        pypi.update({canonicalize_name(n): (f"{scope}pypi-dependencies {n}", v)
                     for n, v in table.get("pypi-dependencies", {}).items()})
        conda.update({n: (f"{scope}dependencies", v) for n, v in table.get("dependencies", {}).items()})
    for name, (where, value) in pypi.items():
        spec = value if isinstance(value, str) else value.get("version", "*")
        found = want_of(name if spec in ("*", "") else f"{name}{spec}", env, f"{path.name} {where}")
        if found is not None:
            project.wants.append(found)
        index = PYTORCH_INDEX.match(value.get("index", "")) if isinstance(value, dict) else None
        if index and name in FAMILY:
            project.variant[name] = index.group(1)
            project.variant["evidence"] = f"{where}: index {value['index']}"
    for name, (where, value) in conda.items():
        if name in CONDA_TORCH:
            spec = value if isinstance(value, str) else value.get("version", "*")
            project.wants.append(Want(CONDA_TORCH[name], _conda_spec(spec), where=f"{path.name} {where}"))
    return project


def _conda_spec(spec: str) -> SpecifierSet:
    """A conda match spec's version part as a PEP 440 specifier: ``2.5`` and ``=2.5`` are ``2.5.*``."""
    spec = spec.strip()
    if spec in ("", "*"):
        return SpecifierSet()
    if re.match(r"^=?[0-9][0-9.]*(\.\*)?$", spec):
        version = spec.lstrip("=").removesuffix(".*")
        return SpecifierSet(f"=={version}.*")
    return SpecifierSet(spec.replace(" ", ""))


def read_environment(path: Path, env: dict[str, str]) -> Project:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    project = Project()
    for item in data.get("dependencies", []):
        if isinstance(item, dict):
            for line in item.get("pip", []):  # conda hands these to pip as a requirements file
                line = re.sub(r"(^|\s)#.*$", "", str(line)).strip()
                nested = re.match(r"^(-r|--requirement|-c|--constraint)(?:\s+|=)(\S+)$", line)
                if nested:
                    project.wants += read_requirements(path.parent / nested.group(2), env,
                                                       nested.group(1) in ("-c", "--constraint"))
                    continue
                if not line or line.startswith("-"):
                    continue  # --extra-index-url, --find-links, -e …: where packages come from
                found = want_of(line, env, f"{path.name} pip")
                if found is not None:
                    project.wants.append(found)
            continue
        found_conda = re.match(r"^(?:[\w.-]+::)?([A-Za-z0-9_.-]+)\s*(.*)$", str(item).strip())
        if found_conda and found_conda.group(1) in CONDA_TORCH:
            project.wants.append(Want(CONDA_TORCH[found_conda.group(1)], _conda_spec(found_conda.group(2)),
                                      where=f"{path.name} dependencies"))
    return project


def read_case(case: Path, source: dict[str, Any], env: dict[str, str], cuda: bool) -> Project:
    invoke = list(source["invoke"])
    project = Project()
    extras = [invoke[i + 1] for i, a in enumerate(invoke) if a == "--extra"]
    groups = [invoke[i + 1] for i, a in enumerate(invoke) if a == "--group"]
    for i, arg in enumerate(invoke):
        if arg in ("-r", "-c"):
            project.wants += read_requirements(case / invoke[i + 1], env, arg == "-c")
        elif arg == "--project":
            folder = case / invoke[i + 1]
            if folder.is_file():  # --project FILE: read as its name says
                found = (read_environment(folder, env) if folder.suffix in (".yml", ".yaml")
                         else read_pixi(folder, env, cuda) if folder.name == "pixi.toml"
                         else read_pyproject(folder, extras, groups, env))
            elif (folder / "pyproject.toml").is_file():
                found = read_pyproject(folder / "pyproject.toml", extras, groups, env)
            elif (folder / "pixi.toml").is_file():
                found = read_pixi(folder / "pixi.toml", env, cuda)
            else:
                found = read_environment(folder / "environment.yml", env)
            project.wants += found.wants
            project.variant.update(found.variant)
    return project


# -- the default index ----------------------------------------------------------------------------------------------

class Index:
    """The default index's PEP 691 pages and PEP 658 metadata, each response cached on disk."""

    def __init__(self, root: str, cache: Path) -> None:
        self.root = root
        self.cache = cache
        self.cache.mkdir(parents=True, exist_ok=True)
        self.pages: dict[str, dict[str, Any] | None] = {}

    def _get(self, url: str, accept: str = "*/*") -> bytes | None:
        stored = self.cache / hashlib.sha256(f"{accept} {url}".encode()).hexdigest()
        if stored.exists():
            body = stored.read_bytes()
            return None if body == b"\0missing" else body
        if not url.startswith("https://"):
            raise SystemExit(f"{url}: not an https URL")
        request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "torch-install corpus"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 (https only, above)
                body = response.read(MAX_BYTES + 1)
        except urllib.error.HTTPError as error:
            if error.code != 404:
                raise
            stored.write_bytes(b"\0missing")
            return None
        if len(body) > MAX_BYTES:
            raise SystemExit(f"{url}: larger than {MAX_BYTES} bytes")
        stored.write_bytes(body)
        return body

    def page(self, name: str) -> dict[str, Any] | None:
        key = canonicalize_name(name)
        if key not in self.pages:
            body = self._get(f"{self.root}{key}/", ACCEPT)
            self.pages[key] = json.loads(body) if body else None
        return self.pages[key]

    def metadata(self, url: str) -> str | None:
        """A wheel's METADATA: its PEP 658 file, else the member read from the wheel with HTTP range requests."""
        body = self._get(url + ".metadata")
        if body is None:
            stored = self.cache / hashlib.sha256(f"METADATA {url}".encode()).hexdigest()
            if not stored.exists():
                stored.write_bytes(_wheel_member(url) or b"\0missing")
            body = None if stored.read_bytes() == b"\0missing" else stored.read_bytes()
        return body.decode("utf-8", "replace") if body else None


class _Ranges(io.RawIOBase):
    """A remote file read through HTTP range requests, in blocks, for zipfile."""

    BLOCK = 1 << 18

    def __init__(self, url: str) -> None:
        self.url, self.pos, self.blocks = url, 0, dict[int, bytes]()
        request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "torch-install corpus"})
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 (https only, checked)
            self.size = int(response.headers["Content-Length"])

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else self.size + offset
        return self.pos

    def _block(self, number: int) -> bytes:
        if number not in self.blocks:
            if len(self.blocks) * self.BLOCK > MAX_BYTES:
                raise ValueError("too much of the wheel read")
            start = number * self.BLOCK
            last = min(start + self.BLOCK, self.size) - 1
            request = urllib.request.Request(self.url, headers={"Range": f"bytes={start}-{last}",
                                                                "User-Agent": "torch-install corpus"})
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 (https only, checked)
                self.blocks[number] = response.read(self.BLOCK + 1)
        return self.blocks[number]

    def readinto(self, buffer: Any) -> int:
        end = min(self.pos + len(buffer), self.size)
        data = b"".join(self._block(n) for n in range(self.pos // self.BLOCK, (end - 1) // self.BLOCK + 1)) \
            if end > self.pos else b""
        chunk = data[self.pos % self.BLOCK:][:end - self.pos]
        buffer[:len(chunk)] = chunk
        self.pos += len(chunk)
        return len(chunk)


def _wheel_member(url: str) -> bytes | None:
    """The .dist-info/METADATA of a remote wheel, or None when it cannot be read."""
    try:
        with zipfile.ZipFile(io.BufferedReader(_Ranges(url), buffer_size=1 << 16)) as wheel:
            names = [n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            return wheel.read(names[0]) if len(names) == 1 else None
    except (OSError, ValueError, zipfile.BadZipFile, KeyError) as error:
        print(f"{url}: {error}", file=sys.stderr)
        return None


@dataclass
class Release:
    version: Version
    wheels: list[dict[str, Any]]  # the files that install on the profile
    sdist: bool
    yanked: bool


@functools.cache
def releases(index: Index, name: str, profile: Profile) -> dict[Version, Release]:
    """Every release of a package with what of it installs on the profile."""
    page = index.page(name)
    out: dict[Version, Release] = {}
    python = Version("{}.{}.0".format(*profile.python))
    for file in page["files"] if page else []:
        filename = file["filename"]
        try:
            if filename.endswith(".whl"):
                _, version, _, tags = parse_wheel_filename(filename)
                fits = bool(tags & profile.tags)
            elif filename.endswith((".tar.gz", ".zip")):
                _, version = parse_sdist_filename(filename)
                tags, fits = frozenset(), False
            else:
                continue
        except (ValueError, InvalidVersion):
            continue
        release = out.setdefault(version, Release(version, [], False, True))
        release.yanked = release.yanked and bool(file.get("yanked"))
        needs_python = file.get("requires-python")
        try:
            if needs_python and python not in SpecifierSet(needs_python):
                continue
        except ValueError:
            pass
        if fits:
            release.wheels.append(file)
        elif not filename.endswith(".whl"):
            release.sdist = True
    return out


def declared(index: Index, name: str, release: Release, extras: frozenset[str],
             env: dict[str, str]) -> tuple[dict[str, str], str] | None:
    """What a release declares of the torch family (with the extras asked for, its own extras expanded), and the
    wheel it was read from; None when no wheel of it installs here or its metadata cannot be read."""
    for file in release.wheels[:3]:  # the PEP 658 file, whether or not the page announces it
        text = index.metadata(file["url"])
        if text is None:
            continue
        head = text.split("\n\n", 1)[0]
        lines = [line.split(":", 1)[1].strip() for line in head.splitlines() if line.startswith("Requires-Dist:")]
        return _family_needs(name, lines, extras, env), file["filename"]
    return None


def _family_needs(name: str, texts: list[str], extras: frozenset[str], env: dict[str, str]) -> dict[str, str]:
    wanted, needs = set(extras) | {""}, dict[str, SpecifierSet]()
    lines = []
    for text in texts:
        try:
            lines.append(Requirement(text))
        except InvalidRequirement:  # old metadata that today's parsers refuse (``numpy (>=1.19.*)``)
            continue
    grew = True
    while grew:  # an extra that names the package's own extras adds theirs
        grew = False
        for req in lines:
            if canonicalize_name(req.name) == canonicalize_name(name) and _applies(req, wanted, env):
                grew |= not req.extras <= wanted
                wanted |= req.extras
    for req in lines:
        key = canonicalize_name(req.name)
        if key in FAMILY and not req.url and _applies(req, wanted, env):
            needs[key] = needs.get(key, SpecifierSet()) & req.specifier
    return {k: str(v) for k, v in sorted(needs.items())}


def _applies(req: Requirement, extras: set[str], env: dict[str, str]) -> bool:
    return req.marker is None or any(req.marker.evaluate({**env, "extra": e}) for e in extras)


# -- the answer -----------------------------------------------------------------------------------------------------

def candidates(found: dict[Version, Release], specifier: SpecifierSet) -> list[Release]:
    """The releases a requirement lets pip choose, newest first: installable here, allowed, not yanked (unless
    pinned exactly), pre-releases only where the specifier names one."""
    exact = any(s.operator in ("==", "===") and "*" not in s.version for s in specifier)
    out = [r for r in found.values() if (r.wheels or r.sdist) and specifier.contains(r.version)
           and (exact or not r.yanked)]
    return sorted(out, key=lambda r: r.version, reverse=True)


def answer(index: Index, project: Project, profile: Profile, evidence: dict[str, dict[str, Any]]) -> dict[str, Any]:
    env = profile.environment
    torch_releases = releases(index, "torch", profile)
    torch_spec = SpecifierSet()
    for want in project.wants:
        if canonicalize_name(want.name) == "torch":
            torch_spec &= want.specifier
    allowed = [str(r.version) for r in sorted(candidates(torch_releases, torch_spec), key=lambda r: r.version)
               if r.wheels]
    constraints, requirements, labels, unknown = [], {}, {}, []
    named: dict[str, list[Want]] = {}
    for want in project.wants:
        named.setdefault(canonicalize_name(want.name), []).append(want)
    for key, wants in sorted(named.items()):
        spec = SpecifierSet()
        for want in wants:
            spec &= want.specifier
            if want.label and not want.constraint:
                labels[key] = want.label
        line = {"specifier": str(spec), "direct": next((w.direct for w in wants if w.direct), None),
                "constraint_only": all(w.constraint for w in wants), "where": wants[0].where}
        if key in FAMILY or line["direct"] or key in labels:
            requirements[key] = line
        if key == "torch" or line["direct"]:
            continue  # torch's own lines are ``torch`` above; a direct reference is not on the default index
        extras = frozenset().union(*(w.extras for w in wants))
        reads, allows, free = evidence.setdefault(key, {}), set(), False
        found = releases(index, key, profile)
        chosen = candidates(found, spec)
        if not chosen:
            unknown.append(key)
            continue
        for release in chosen[:MAX_CANDIDATES]:
            got = declared(index, key, release, extras, env)
            tag = str(release.version) + (f"[{','.join(sorted(extras))}]" if extras else "")
            if got is None:  # a source release, or metadata not published: its needs are unknown here
                reads[tag] = {"wheel": None}
                free = True
                break
            needs, wheel = got
            reads[tag] = {"wheel": wheel, **needs}
            if "torch" not in needs:
                free = True
                break
            allows |= {t for t in allowed if SpecifierSet(needs["torch"]).contains(t, prereleases=True)}
        if any(set(needs) - {"wheel"} for needs in reads.values()):
            requirements[key] = line  # a package that declares something of the torch family: what may install
        if not free:
            constraints.append({"package": key, "requirement": str(spec), "allows": sorted(allows, key=Version)})
    return {"torch": allowed, "torch_requirement": str(torch_spec), "constraints": constraints,
            "solvable": bool(set(allowed).intersection(*[set(c["allows"]) for c in constraints])),
            "requirements": requirements, "labels": labels,
            "variant": {k: v for k, v in project.variant.items() if k != "evidence"},
            "variant_evidence": project.variant.get("evidence"), "not_on_index": unknown}


def dump(out: dict[str, Any]) -> str:
    """The answer as JSON a diff can be read in: one field of an answer, one package's evidence to a line."""
    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"))

    def table(mapping: dict[str, Any], indent: str, inner: Any = compact) -> str:
        rows = [f"{indent} {json.dumps(k)}: {inner(v)}" for k, v in mapping.items()]
        return "{\n" + ",\n".join(rows) + f"\n{indent}}}"

    cases = table(out["cases"], " ", lambda profiles: table(
        profiles, "  ", lambda answer: table(answer, "   ")))
    return ("{\n" + "".join(f" {json.dumps(k)}: {compact(out[k])},\n" for k in ("schema", "index"))
            + f' "cases": {cases},\n "packages": {table(out["packages"], " ")},\n'
            + f' "torch_wheels": {table(out["torch_wheels"], " ")}\n}}\n')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "torch-install-corpus")
    parser.add_argument("-o", "--output", type=Path, default=CORPUS / "expected.json")
    args = parser.parse_args(argv)
    found = default_index_url()
    if found is None:
        raise SystemExit("no default index is configured")
    index = Index(found[0], args.cache)
    profiles = {p.stem: load_profile(p) for p in sorted((CORPUS / "profiles").glob("*.json"))}
    evidence: dict[str, dict[str, Any]] = {}
    cases: dict[str, Any] = {}
    for folder in sorted(p.parent for p in CORPUS.glob("*/source.json")):
        source = json.loads((folder / "source.json").read_text())
        cases[folder.name] = {}
        for name in source["profiles"]:
            profile = profiles[name]
            project = read_case(folder, source, profile.environment, profile.cuda)
            cases[folder.name][name] = answer(index, project, profile, evidence)
            print(f"{folder.name} {name}: torch {cases[folder.name][name]['torch'][-3:]} …", file=sys.stderr)
    torch_evidence = {name: {str(v): r.wheels[0]["filename"] for v, r in sorted(releases(index, "torch", p).items())
                             if r.wheels} for name, p in profiles.items()}
    out = {"schema": 1, "index": "the default index: PEP 691 project pages, PEP 658 metadata",
           "cases": cases, "packages": {k: dict(sorted(v.items())) for k, v in sorted(evidence.items())},
           "torch_wheels": torch_evidence}
    args.output.write_text(dump(out))
    print(f"{args.output}: {sum(len(c) for c in cases.values())} answers for {len(cases)} cases", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
