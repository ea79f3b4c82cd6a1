"""A conda or pixi project's requirements: an ``environment.yml`` (its conda ``dependencies`` and its ``pip:`` list)
and a ``pixi.toml`` (``[dependencies]``, ``[pypi-dependencies]``, their ``[target.<platform>.…]`` tables and, with
``--extra NAME``, ``[feature.NAME.…]``), read as ``--project`` reads a pyproject.toml.

The torch family comes from either part: conda-forge's ``pytorch`` (and its ``pytorch-gpu``/``pytorch-cpu``
selectors) is torch, its conda version spec read as the PEP 440 range it means (``pytorch=2.13`` is ``==2.13.*``,
``>=2.8,<3`` stays); a family package's ``[pypi-dependencies]`` index of the PyTorch index's layout (``index =
".../whl/cu124"``) is the user's choice of build, as a ``[tool.uv.sources]`` index is (for its target's platform where
a ``[target.<platform>]`` table names it). What the pip part or ``[pypi-dependencies]`` asks besides rides along as
written. The other
conda packages are the environment's own (conda installs them; ``--format conda``/``pixi`` write the torch part),
and the request's notes say they were left to it. Every problem is an InputError naming the file and the entry.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError
from ..resolver.plan import BuildSource, FileOption, Wanted
from ..resolver.request import canonical_name
from .requirement_name import requirement_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

MAX_ENVIRONMENT = 4 * 1024 * 1024
# conda names of the torch family (conda-forge's), as the PyPI names the resolver knows them by
FAMILY = {"pytorch": "torch", "pytorch-gpu": "torch", "pytorch-cpu": "torch", "torchvision": "torchvision",
          "torchaudio": "torchaudio"}
# conda packages that pin the CUDA of the environment's CUDA builds: conda-forge's cuda-version (which
# constrains __cuda and every CUDA package, pytorch's builds among them), the pytorch channel's pytorch-cuda, and
# the cudatoolkit of CUDA 11 and before; each is the user's choice of the CUDA build
CUDA_PINS = ("cuda-version", "pytorch-cuda", "cudatoolkit")
ENVIRONMENT_FILES = ("environment.yml", "environment.yaml")
# A pixi target's platform as a PEP 508 marker: the system, and the machine where the platform names one
_PIXI_SYSTEMS = {"linux": "sys_platform == 'linux'", "osx": "sys_platform == 'darwin'",
                 "win": "sys_platform == 'win32'", "unix": "sys_platform != 'win32'"}
_PIXI_MACHINES = {("linux", "64"): "x86_64", ("linux", "aarch64"): "aarch64", ("linux", "ppc64le"): "ppc64le",
                  ("osx", "64"): "x86_64", ("osx", "arm64"): "arm64", ("win", "64"): "AMD64",
                  ("win", "arm64"): "ARM64"}
_CONDA_NAME = re.compile(r"^(?:[A-Za-z0-9_.\-/:]+::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.\-]*)(?P<rest>.*)$")


class Read:
    """What a conda or pixi file asks for: requirements (Wanted) and notes on what was left to it."""

    def __init__(self) -> None:
        self.wanted: list[Wanted] = []
        self.notes: list[str] = []
        self.builds: list[BuildSource] = []  # the family's builds a pixi manifest's indexes name
        self.python: tuple[str, str] | None = None  # the environment's Python: (PEP 440 range, what names it)
        self.conda: list[str] = []  # an environment.yml's other conda packages, as written
        self.includes: list[tuple[str, bool]] = []  # the files its pip list includes (-r, -c: a constraint)
        self.options: list[FileOption] = []  # its pip list's index options


def project_file(project: str) -> tuple[str, str]:
    """("pyproject" | "pixi" | "conda" | "pipfile", path) for ``--project DIR`` (its pyproject.toml, else
    pixi.toml, else environment.yml, else Pipfile) or ``--project FILE``."""
    if os.path.isdir(project):
        for kind, name in (("pyproject", "pyproject.toml"), ("pixi", "pixi.toml"),
                           *(("conda", n) for n in ENVIRONMENT_FILES), ("pipfile", "Pipfile")):
            if os.path.isfile(os.path.join(project, name)):
                return kind, os.path.join(project, name)
        return "pyproject", os.path.join(project, "pyproject.toml")  # its error names the file looked for
    name = os.path.basename(project)
    if name.endswith((".yml", ".yaml")):
        return "conda", project
    if name == "Pipfile":
        return "pipfile", project
    return ("pixi", project) if name == "pixi.toml" else ("pyproject", project)


def conda_range(spec: str) -> str | None:
    """A conda version spec as the PEP 440 specifier it means (``2.13`` -> ``==2.13``, ``2.13.*`` -> ``==2.13.*``,
    ``>=2.8,<3`` as it is, ``*`` -> ""), None for what PEP 440 cannot say (``|``)."""
    spec = spec.strip()
    if spec in ("", "*"):
        return ""
    if "|" in spec:
        return None
    parts = []
    for part in spec.split(","):
        part = part.strip()
        found = re.fullmatch(r"(==|!=|>=|<=|~=|>|<|=)?\s*([0-9][0-9A-Za-z.*+!_-]*)", part)
        if not found:
            return None
        op, version = found[1] or "==", found[2]
        if op == "=":  # conda's fuzzy =2.13 is 2.13.*
            op, version = "==", version if version.endswith("*") else f"{version}.*"
        parts.append(f"{op}{version}")
    return ",".join(parts)


def _family(conda_name: str, version: str, build: str | None, origin: str, read: Read, where: str = "") -> None:
    name = FAMILY[conda_name]
    pep440 = conda_range(version)
    if pep440 is None:
        read.notes.append(f"{origin}: {conda_name}'s version {version!r} is not a range torch-install reads: "
                          f"{name} is left unconstrained")
        pep440 = ""
    if build:
        read.notes.append(f"{origin}: {conda_name}'s build {build!r} is conda-forge's; torch-install chooses the "
                          "build for the machine")
    read.wanted.append(Wanted(text=f"{name}{pep440}{where}", name=name, origin=origin))


def _cuda_pin(name: str, version: str, text: str, read: Read, marker: str | None = None) -> None:
    """The CUDA build a CUDA pin (``cuda-version=12.4``, ``pytorch-cuda=12.1``, ``cudatoolkit=11.8``) names: the
    PyTorch index's build of that CUDA, else its newest of an older one of the same major version (as conda's CUDA
    12 packages built for 12.x each run with any cuda-version from 12.x on); a range of several, or one the index
    has no build for, is a note."""
    from ..resolver.matrix import load_matrix
    from ..resolver.plan import DEFAULT_INDEX_BASE
    from ..resolver.variants import cuda_version

    pep440 = conda_range(version)
    found = re.fullmatch(r"==([0-9]+)\.([0-9]+)(?:\.[0-9]+)*(?:\.\*)?", pep440 or "")
    if found is None:
        read.notes.append(f"{text}: {'no CUDA version' if not pep440 else 'a range of CUDA versions'}, not one "
                          "build: torch-install chooses the build for the machine")
        return
    pinned = (int(found[1]), int(found[2]))
    known = {v: cuda_version(v) for r in load_matrix().releases for vs in r.variant_lists.values() for v in vs}
    fitting = sorted((c, v) for v, c in known.items() if c and c[0] == pinned[0] and c <= pinned)
    if not fitting:
        read.notes.append(f"{text}: the PyTorch index has no build for CUDA {pinned[0]}.{pinned[1]} or an older "
                          f"CUDA {pinned[0]}: torch-install chooses the build for the machine")
        return
    variant = fitting[-1][1]
    if fitting[-1][0] != pinned:
        text += f" (the PyTorch index has no CUDA {pinned[0]}.{pinned[1]} build; {variant} is its newest before it)"
    read.builds.append(BuildSource("torch", variant, f"{DEFAULT_INDEX_BASE}/{variant}", text, marker))


def _python(version: str, text: str, read: Read) -> None:
    """The Python the environment is made with, as its ``python`` spec says (the plan is for that Python, which
    conda installs, not the one running here)."""
    pep440 = conda_range(version)
    if pep440:
        read.python = (pep440, text)


def _matchspec(text: str, origin: str) -> tuple[str, str, str | None]:
    """(name, version spec, build) of a MatchSpec as environment.yml writes one: ``pytorch``, ``pytorch=2.13``,
    ``pytorch=2.13.0=cuda129*``, ``pytorch>=2.8``, ``pytorch 2.13.* cuda*``, ``conda-forge::pytorch``,
    ``pytorch[version='>=2.8',build='cuda*']``."""
    found = _CONDA_NAME.match(text.strip())
    if not found:
        raise InputError(f"--project: {origin}: {text[:60]!r} is not a conda package spec")
    name, rest = found["name"].lower(), found["rest"].strip()
    if rest.startswith("["):
        fields = dict(re.findall(r"(\w+)\s*=\s*['\"]?([^'\",\]]*)['\"]?", rest))
        return name, fields.get("version", ""), fields.get("build")
    if rest.startswith("=") and not rest.startswith("=="):
        version, _, build = rest[1:].partition("=")
        return name, f"={version}" if version and version != "*" else version, build or None
    words = rest.split()
    return name, words[0] if words else "", words[1] if len(words) > 1 else None


def read_environment_yml(path: str) -> Read:
    """An environment.yml's torch family (conda and pip parts) and what rides along (its pip part)."""
    from ..probe import read_regular
    from .simple_yaml import YamlError, loads

    try:
        data = read_regular(path, MAX_ENVIRONMENT + 1)
    except OSError as exc:
        raise InputError(f"--project: {path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > MAX_ENVIRONMENT:
        raise InputError(f"--project: {path}: over {MAX_ENVIRONMENT >> 20} MiB, not an environment.yml")
    try:
        document = loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"--project: {path}: not UTF-8 text") from None
    except YamlError as exc:
        raise InputError(f"--project: {path}: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("dependencies", []), list):
        raise InputError(f"--project: {path}: not an environment file (a mapping with a dependencies list)")
    read = Read()
    left: list[str] = []
    for i, entry in enumerate(document.get("dependencies") or []):
        origin = f"{path}: dependencies[{i}]"
        if isinstance(entry, dict) and set(entry) == {"pip"} and isinstance(entry["pip"], list):
            for j, line in enumerate(entry["pip"]):
                if not isinstance(line, str):
                    raise InputError(f"--project: {origin}.pip[{j}] is not a string")
                _pip_line(line.strip(), f"{origin}.pip[{j}]", read, os.path.dirname(os.path.abspath(path)))
            continue
        if not isinstance(entry, str):
            raise InputError(f"--project: {origin} is neither a package spec nor a pip: list")
        name, version, build = _matchspec(entry, origin)
        if name == "python":
            _python(version, f"{os.path.basename(path)} dependencies: {entry.strip()}", read)
        if name in FAMILY:
            _family(name, version, build, origin, read)
        if name in CUDA_PINS:
            _cuda_pin(name, version, f"{os.path.basename(path)} dependencies: {entry.strip()}", read)
        if name not in FAMILY and name != "pip":
            left.append(name)
            read.conda.append(entry.strip())
    if left:
        read.notes.append(f"{path}: its other conda packages ({', '.join(left)}) are the environment's own")
    return read


def _pip_line(line: str, origin: str, read: Read, base: str) -> None:
    """One line of an environment.yml's pip list; a relative path in it starts at ``base``, the file's directory,
    where conda runs pip."""
    if not line or line.startswith("#"):
        return
    if line.startswith(("-e ", "--editable ")):
        target = line.split(None, 1)[1].strip()
        read.wanted.append(Wanted(text=target, name=None, origin=origin, editable=True, base=base))
        return
    include = re.fullmatch(r"(-r|--requirement|-c|--constraint)(?:\s+|=)(\S.*)", line)
    if include:  # conda hands the list to pip as a requirements file in this directory: it includes the file
        read.includes.append((os.path.join(base, os.path.expanduser(include[2].strip())),
                              include[1] in ("-c", "--constraint")))
        return
    option = re.fullmatch(r"(--index-url|-i|--extra-index-url|--find-links|-f)(?:\s+|=)(\S+)", line)
    from .uv_sources import variant_index

    if option and variant_index(option[2]) is None:  # the list's own index serves what rides along, as a
        # requirements file's does (one of the PyTorch index is the build's, which the plan chooses)
        long = {"-i": "--index-url", "-f": "--find-links"}.get(option[1], option[1])
        read.options.append(FileOption(long, option[2], origin))
        return
    if line.startswith("-"):
        read.notes.append(f"{origin}: the pip option {line.split()[0]} is the file's own (torch-install chooses "
                          "torch's index)")
        return
    read.wanted.append(Wanted(text=line, name=requirement_name(line, origin), origin=origin, base=base))


def read_pixi(path: str, features: Sequence[str] = ()) -> Read:
    """A pixi manifest's torch family and PyPI requirements: the workspace's tables, every target's, and those of
    the features named (``--extra``). A target's entries hold on its platform (``linux-64``, ``osx``, ``unix``, or
    a platform the workspace names, ``{ name = "linux-64-cuda", platform = "linux-64", cuda = "12" }``, which pixi
    selects where the machine runs that CUDA and no platform listed before it is selected), and there in place of
    the workspace's entry for the same package; a target that is no platform read here is left out, with a note."""
    from .pyproject import load_toml

    document = load_toml(path, toml_1_1=True)
    read = Read()
    tables: list[tuple[str, Any]] = [("", document)]
    feature_tables = document.get("feature", {})
    if not isinstance(feature_tables, dict):
        raise InputError(f"--project: {path}: feature is not a table")
    for feature in features:
        if feature not in feature_tables:
            raise InputError(f"--extra {feature}: {path} defines no such feature (has: "
                             f"{', '.join(sorted(feature_tables)) or 'none'})")
        tables.append((f"feature.{feature}.", feature_tables[feature]))
    named = _named_platforms(path, document)
    seen: set[tuple[str, str]] = set()
    left: list[str] = []
    for where, table in tables:
        targets = table.get("target", {}) if isinstance(table, dict) else {}
        scopes = [(where, table, None), *((f"{where}target.{name}.", t, name) for name, t in
                                          (targets.items() if isinstance(targets, dict) else ()))]
        for scope, body, target in scopes:
            if not isinstance(body, dict):
                raise InputError(f"--project: {path}: {scope.rstrip('.')} is not a table")
            holds = _target_holds(str(target), named) if target is not None else [("", "")]
            if not holds:
                if any(body.get(kind) for kind in ("dependencies", "pypi-dependencies")):
                    read.notes.append(f"{path}: {scope.rstrip('.')}: a target ({target}) this tool does not read as "
                                      "a platform: its entries are left out")
                continue
            marker = " or ".join(f"({m})" for m, _ in holds) if target is not None else ""
            for kind in ("dependencies", "pypi-dependencies"):
                entries = body.get(kind, {})
                if not isinstance(entries, dict):
                    raise InputError(f"--project: {path}: {scope}{kind} is not a table")
                for name, value in entries.items():
                    origin = f"{path}: {scope}{kind}.{name}"
                    _pixi_entry(kind, str(name), value, origin, read, seen, left, marker)
                    if kind == "pypi-dependencies" and isinstance(value, dict) and "index" in value:
                        _pixi_build(canonical_name(str(name)), str(value["index"]), scope, origin, read, holds)
    _targets_in_place(read)
    if left:
        read.notes.append(f"{path}: its other conda packages ({', '.join(dict.fromkeys(left))}) are the "
                          "workspace's own")
    return read


def _named_platforms(path: str, document: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """The workspace's named platforms: name -> (its marker, the CUDA range pixi selects it in: its own ``cuda``
    and none of the same platform listed before it); one never selected (after one without ``cuda``) is left out."""
    workspace = document.get("workspace", document.get("project", {}))
    platforms = workspace.get("platforms", []) if isinstance(workspace, dict) else []
    if not isinstance(platforms, list):
        raise InputError(f"--project: {path}: workspace.platforms is not a list")
    out: dict[str, tuple[str, str]] = {}
    before: dict[str, list[str]] = {}  # platform -> the CUDA of each listed before ("" for one without)
    for entry in platforms:
        platform = entry if isinstance(entry, str) else str(entry.get("platform", "")) if isinstance(entry, dict) \
            else ""
        cuda = str(entry.get("cuda", "")) if isinstance(entry, dict) else ""
        marker = _pixi_marker(platform)
        earlier = before.setdefault(platform, [])
        if marker is not None and "" not in earlier and isinstance(entry, dict) and entry.get("name"):
            below = min(earlier, key=lambda v: tuple(int(p) for p in re.findall(r"[0-9]+", v))) if earlier else ""
            out[str(entry["name"])] = (marker, ",".join(([f">={cuda}"] if cuda else []) +
                                                        ([f"<{below}"] if below else [])))
        earlier.append(cuda)
    return out


def _target_holds(target: str, named: dict[str, tuple[str, str]]) -> list[tuple[str, str]]:
    """Where a target's tables hold: (marker, CUDA range) for each platform it names; [] for none read here."""
    import fnmatch

    marker = _pixi_marker(target)
    if marker is not None:
        return [(marker, "")]
    return [held for name, held in named.items() if fnmatch.fnmatchcase(name, target)]


def _targets_in_place(read: Read) -> None:
    """A target's entry for a package stands for the workspace's (or a feature's) on the target's platform: the
    latter holds where no target's does; so for the family's builds."""
    from ..markers import negated

    targeted: dict[str, list[str]] = {}
    for w in read.wanted:
        if w.origin.count("target.") and ";" in w.text and w.name:
            targeted.setdefault(w.name, []).append(w.text.split(";", 1)[1].strip())
    for i, w in enumerate(read.wanted):
        if w.name in targeted and ";" not in w.text:
            opposite = negated(" or ".join(f"({m})" for m in targeted[w.name]))
            if opposite is not None:
                read.wanted[i] = w._replace(text=f"{w.text} ; {opposite}")
    plain = {(b.name, b.marker) for b in read.builds if b.marker and not b.cuda}
    read.builds = [b._replace(unless=tuple(m for n, m in plain if n == b.name)) if b.marker is None else b
                   for b in read.builds]


def _pixi_build(name: str, url: str, scope: str, origin: str, read: Read, holds: list[tuple[str, str]]) -> None:
    """The build a family package's pixi index names (``…/whl/cu124``), where its target holds."""
    from .uv_sources import variant_index

    if name not in FAMILY.values():
        return
    found = variant_index(url)
    if found is None:
        read.notes.append(f"{origin}: index {url}: a URL that names no build of the PyTorch index; the plan chooses "
                          "the build for the machine")
        return
    table = f"{os.path.basename(origin.rsplit(': ', 1)[0])} [{scope}pypi-dependencies]"
    for marker, cuda in holds:
        read.builds.append(BuildSource(name, found[2], url, f"{table} {name} = {{ index = \"{url}\" }}",
                                       marker or None, cuda=cuda))


def _pixi_marker(target: str) -> str | None:
    """A pixi target (``linux-64``, ``osx``, ``unix``) as a marker; None for one not read here."""
    system, _, machine = target.partition("-")
    if system not in _PIXI_SYSTEMS or (machine and (system, machine) not in _PIXI_MACHINES):
        return None
    return _PIXI_SYSTEMS[system] + (f" and platform_machine == '{_PIXI_MACHINES[system, machine]}'"
                                    if machine else "")


def _pixi_entry(kind: str, name: str, value: Any, origin: str, read: Read, seen: set[tuple[str, str]], left: list[str],
                marker: str = "") -> None:
    """One entry of a pixi table, as a requirement holding where ``marker`` does (everywhere: "")."""
    where = f" ; {marker}" if marker else ""
    if isinstance(value, str):
        version, extras, location = value, [], None
    elif isinstance(value, dict):
        version = str(value.get("version", "*"))
        extras = [str(e) for e in value.get("extras", [])] if isinstance(value.get("extras", []), list) else []
        location = next((str(value[k]) for k in ("url", "path", "git") if k in value), None)
        if kind == "dependencies" and value.get("build"):
            version = f"{version} {value['build']}"
    else:
        raise InputError(f"--project: {origin} is neither a version string nor a table")
    conda_name = name.lower()
    if kind == "dependencies" and conda_name == "python" and not marker:  # the workspace's Python, everywhere
        _python(version.partition(" ")[0], f"{os.path.basename(origin.rsplit(': ', 1)[0])} [dependencies] "
                                           f"python = \"{version}\"", read)
    if kind == "dependencies":
        if conda_name in FAMILY:
            key = FAMILY[conda_name]
            if (key, marker) not in seen:
                seen.add((key, marker))
                spec, _, build = version.partition(" ")
                _family(conda_name, spec, build or None, origin, read, where)
        else:
            if conda_name in CUDA_PINS:
                spec, _, _ = version.partition(" ")
                table = origin.rsplit(": ", 1)
                _cuda_pin(conda_name, spec, f"{os.path.basename(table[0])} [{table[1].rsplit('.', 1)[0]}] {name} = "
                          f"\"{version}\"", read, marker or None)
            left.append(name)
        return
    canonical = canonical_name(name)
    if canonical in FAMILY.values():
        if location and isinstance(value, dict) and "git" not in value:  # a wheel names its build, as pip reads it
            if "path" in value:
                manifest = origin.rsplit(": ", 1)[0]
                location = Path(os.path.dirname(os.path.abspath(manifest)), location).as_uri()
            read.wanted.append(Wanted(text=f"{canonical} @ {location}{where}", name=canonical, origin=origin))
            return
        if location:
            raise InputError(f"--project: {origin}: a git source for {canonical}; torch-install chooses its wheel "
                             "(a url or path of a wheel names one)")
        if (canonical, marker) not in seen:
            seen.add((canonical, marker))
            read.wanted.append(Wanted(text=f"{canonical}{'' if version == '*' else version}{where}", name=canonical,
                                      origin=origin))
        return
    extra = f"[{','.join(extras)}]" if extras else ""
    text = f"{name}{extra} @ {location}" if location and "://" in location else f"{location}{extra}" if location \
        else f"{name}{extra}{'' if version == '*' else version}"  # a path with its extras, as pip reads "./p[x]"
    if where and not (location and "://" not in location):  # a path takes no marker
        text += where
    read.wanted.append(Wanted(text=text, name=canonical, origin=origin, editable=bool(
        isinstance(value, dict) and value.get("editable")), base=os.path.dirname(os.path.abspath(
            origin.rsplit(": ", 1)[0]))))  # a path source starts at the manifest's directory
