"""A plan as a conda or pixi user writes it: an ``environment.yml`` (``--format conda``) and a pixi manifest
(``--format pixi``), for one target or several.

Each target takes torch from one of two places (``resolver.conda_forge.SOURCES``): conda-forge's ``pytorch``,
pinned to the build that serves the machine by its build string (``pytorch=2.13.0=cuda129_*``), with
``cuda-version`` and, for a Jetson, ``arm-variant=*=tegra``; or PyTorch's index, as pip lines (conda) or
``pypi-dependencies`` with the index (pixi). Without ``--torch-source`` each target gets what serves it best
(``preferred_source``), and the file says which and why. The other requested packages ride along from the
default index (``pip:`` / ``[pypi-dependencies]``); a package built against one torch (xformers …) only goes with
PyTorch's index, and the file says so rather than leaving it out.

pixi: one manifest for every target, each a platform of ``[workspace].platforms`` with its CUDA declaration
(``{ name = "linux-64-cuda", platform = "linux-64", cuda = "12.6" }``, pixi 0.71 and later) and its own
``[target.<platform>.…]`` tables, written as TOML 1.0 (one-line inline tables) so every TOML reader reads it.
conda has no per-platform dependencies: several targets give one ``environment.yml`` document each, separated by
``---``. Both say which ``CONDA_OVERRIDE_CUDA`` lets a machine without a GPU (a ``docker build``, CI) install it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ..errors import InputError
from ..records import Record
from ..resolver.conda_forge import CHANNEL, SOURCES, CondaAnswer, choose, conda_specs, preferred_source
from ..resolver.plan import Plan
from ..versions import numeric_key
from .plan import machine_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from ..resolver.conda_forge import CondaChoice

    Entry = str | dict[str, Any]  # a pixi table's value: a version string or an inline table

REQUIRES_PIXI = ">=0.71.0"  # platforms with a CUDA declaration (rich platforms) came in pixi 0.71.0
_PLAIN_YAML = re.compile(r"^(?:[A-Za-z0-9_.]|-(?=[^\s-])|--(?=[a-z]))[A-Za-z0-9_.=*<>!,/~+\-\[\]@: ]*$")


class Target(Record):
    """One machine's part of the file: its plan (PyTorch's index), its conda-forge answer, the source it takes
    torch from and why, and its pixi platform name."""

    plan: Plan
    answer: CondaAnswer
    source: str
    why: str
    name: str = ""

    @property
    def choice(self) -> CondaChoice:
        assert self.answer.choice is not None
        return self.answer.choice

    @property
    def subdir(self) -> str:
        from ..resolver.conda_forge import subdir_of

        return self.answer.choice.subdir if self.answer.choice else subdir_of(self.plan.machine) or "unknown"

    @property
    def cuda(self) -> str | None:
        """The ``__cuda`` the target's platform declares: the driver's CUDA (else the build's) for a CUDA build."""
        if self.source == "conda-forge":
            return self.choice.declared_cuda
        variant = self.plan.choice.variant if self.plan.choice else ""
        if not variant.startswith("cu"):
            return None
        from ..resolver.conda_forge import driver_cuda
        from ..resolver.variants import cuda_version

        found = cuda_version(variant)
        return driver_cuda(self.plan.machine) or (f"{found[0]}.{found[1]}" if found else None)


def targets(plans: Sequence[Plan], source: str | None) -> tuple[list[Target], list[str]]:
    """Each plan's target (plans without a build are left out), and the warning lines: a ``--torch-source
    conda-forge`` target conda-forge has no build for takes PyTorch's index, and says so."""
    if source is not None and source not in SOURCES:
        raise InputError(f"--torch-source {source}: not one of {', '.join(SOURCES)}")
    out: list[Target] = []
    warnings: list[str] = []
    for plan in plans:
        answer = choose(plan.machine, plan.request)
        best, why = preferred_source(plan, answer)
        chosen = source or best
        if chosen == "conda-forge" and answer.choice is None:
            warnings.append(f"{plan.machine.platform}: conda-forge has no build here ({'; '.join(answer.why_not)}): "
                            "torch from PyTorch's index")
            chosen, why = "pytorch-index", "conda-forge has no build here"
        elif source is not None:
            why = f"--torch-source {source}" + (f" (without it: {best}, {why})" if best != source else "")
        elif chosen == "conda-forge" and plan.choice is not None and answer.choice is not None and \
                numeric_key(plan.choice.torch) > numeric_key(answer.choice.build.version):
            why += f"; PyTorch's index has torch {plan.choice.torch} here: --torch-source pytorch-index"
        if chosen == "pytorch-index" and plan.choice is None:
            warnings.append(f"{plan.machine.platform}: no build fits (see the plan's warnings): left out")
            continue
        if chosen == "conda-forge":
            warnings += [f"{plan.machine.platform}: {w}" for w in answer.choice.warnings]  # type: ignore[union-attr]
        out.append(Target(plan, answer, chosen, why))
    return _named(out), warnings


def _named(found: list[Target]) -> list[Target]:
    """pixi platform names: the bare subdir where it is the only target of its subdir and declares no CUDA, else
    ``<subdir>-cuda<major>`` / ``<subdir>-cpu`` (a number added where two still share a name)."""
    by_subdir: dict[str, int] = {}
    for target in found:
        by_subdir[target.subdir] = by_subdir.get(target.subdir, 0) + 1
    names: list[str] = []
    out = []
    for target in found:
        if by_subdir[target.subdir] == 1 and not target.cuda:
            name = target.subdir
        else:
            name = f"{target.subdir}-cuda{target.cuda.split('.')[0]}" if target.cuda else f"{target.subdir}-cpu"
        base, n = name, 2
        while name in names:
            name, n = f"{base}-{n}", n + 1
        names.append(name)
        out.append(target._replace(name=name))
    return out


# ---- the conda-forge MatchSpecs as pixi writes them ----------------------------------------------------------

def _pixi_specs(choice: CondaChoice) -> dict[str, Entry]:
    """The same as pixi ``[dependencies]`` entries."""
    build = choice.build
    out: dict[str, Entry] = {"python": f"{choice.python}.*"} if choice.python else {}
    out["pytorch"] = {"version": f"=={build.version}", "build": build.build_glob}
    out.update((name, {"build": glob}) for name, glob in choice.companions)
    if build.cuda:
        out["cuda-version"] = f"{build.cuda}.*"
    if build.arm_variant:
        out["arm-variant"] = {"build": build.arm_variant}
    return out


def override_line(target: Target, tool: str) -> str | None:
    """How a machine without this target's GPU (a ``docker build``, CI) installs it."""
    if not target.cuda:
        return None
    command = {"conda": "conda env create -f environment.yml", "pixi": "pixi install"}[tool]
    return (f"# Installing without a GPU (docker build, CI): CONDA_OVERRIDE_CUDA={target.cuda} {command}"
            + (f" --platform {target.name}" if tool == "pixi" and target.name != target.subdir else ""))


def _header(target: Target) -> list[str]:
    plan = target.plan
    if target.source == "conda-forge":
        choice = target.choice
        what = f"conda-forge's pytorch {choice.build.version} ({choice.build.label} build)"
        reasons, notes = choice.reasons, choice.notes
    else:
        assert plan.choice is not None
        pin = plan.choice.packages.get("torch")
        what = (f"torch=={pin}" if pin else f"torch {plan.choice.torch}") + f" ({plan.choice.variant}) from " + (
            "PyTorch's index" if plan.choice.index_url else "the default index")
        reasons, notes = plan.reasons, plan.notes
    lines = [f"# torch-install: {what} for {machine_line(plan)}", f"#   source: {target.source}: {target.why}"]
    lines += [f"#   why: {r}" for r in reasons]
    lines += [f"#   note: {n}" for n in notes]
    return lines


# ---- what rides along ---------------------------------------------------------------------------------------------

def riding(plan: Plan, fmt: str) -> list[str]:
    """The other requested packages, as written (an InputError for what the file cannot carry)."""
    taken = {p.name for p in plan.choice.companions} if plan.choice else set()
    out = []
    for wanted in (w for w in plan.request.requirements if not w.constraint and w.name not in taken):
        if wanted.hashes:
            raise InputError(f"--format {fmt}: {wanted.origin} has --hash options, which an {fmt} file does not "
                             "carry (its lock file records hashes)")
        out.append(f"-e {wanted.text}" if wanted.editable else wanted.text)
    return out


def _torch_built(plan: Plan, target: Target, fmt: str) -> None:
    if target.source == "conda-forge" and plan.choice is not None and plan.choice.companions:
        names = ", ".join(p.name for p in plan.choice.companions)
        raise InputError(f"--format {fmt}: {names} is built against one torch build, which conda-forge's pytorch is "
                         "not: use --torch-source pytorch-index")


# ---- environment.yml -----------------------------------------------------------------------------------------------

def _yaml(value: str) -> str:
    """A YAML scalar: plain where YAML reads it back as the same string, else double-quoted (JSON's form)."""
    if _PLAIN_YAML.match(value) and ": " not in value and " #" not in value and not value.endswith(" "):
        return value
    return json.dumps(value)


def environment_yml(target: Target) -> str:
    """One target's environment.yml."""
    plan = target.plan
    _torch_built(plan, target, "conda")
    lines = [*_header(target)]
    line = override_line(target, "conda") if target.source == "conda-forge" else None  # pip wheels need no __cuda
    if line:
        lines.append(line)
    lines += ["channels:", f"  - {CHANNEL}", "  - nodefaults", "dependencies:"]
    pip: list[str] = []
    if target.source == "conda-forge":
        specs = _keeping_cuda_pin(conda_specs(target.choice), plan.request.conda)
        pip = riding(plan, "conda")
        if pip:  # pip sees the conda build installed: this pin keeps any requirement from replacing it
            pip.append(f"torch=={target.choice.build.version}")
    else:
        python = plan.machine.python
        specs = [f"python={python.removesuffix('t')}"] if python else []
        pip = _requirements_lines(plan)
    lines += [f"  - {_yaml(s)}" for s in [*specs, *_own_conda(plan, specs)]]
    if pip:
        lines += ["  - pip", "  - pip:", *(f"    - {_yaml(p)}" for p in pip)]
    return "\n".join(lines)


def _keeping_cuda_pin(specs: list[str], own: Sequence[str]) -> list[str]:
    """The build's specs without its ``cuda-version`` where the file's own pin of one is of the same CUDA major and
    not older (the build runs with it: conda's CUDA packages built for 12.x run with any cuda-version from 12.x on),
    so the file keeps its line."""
    import re

    ours = next((s for s in specs if s.startswith("cuda-version=")), None)
    theirs = next((m for c in own if (m := re.fullmatch(r"cuda-version\s*=*\s*([0-9]+)\.([0-9]+)(?:\.\*)?", c))),
                  None)
    if ours is None or theirs is None:
        return specs
    major, minor = (int(p) for p in ours.split("=", 1)[1].split(".")[:2])
    if int(theirs[1]) != major or int(theirs[2]) < minor:
        return specs
    return [s for s in specs if s is not ours]


def _own_conda(plan: Plan, specs: Sequence[str]) -> list[str]:
    """The environment file's other conda packages, as written, but for those the build's specs name
    (python, cuda-version …): the environment keeps them."""
    import re

    written = {re.split(r"[\s=<>!~\[]", s, maxsplit=1)[0].lower() for s in specs}
    return [c for c in plan.request.conda if re.split(r"[\s=<>!~\[]", c.split("::")[-1], maxsplit=1)[0].lower()
            not in written]


def _requirements_lines(plan: Plan) -> list[str]:
    """The build from PyTorch's index as a requirements file's lines (conda hands a ``pip:`` list to pip as one)."""
    from .project import render_requirements

    text = render_requirements(plan)
    if " \\\n" in text:
        raise InputError("--format conda: a line with --hash options, which a pip: list does not carry")
    return [line for line in text.split("\n") if line and not line.startswith("#")]


def render_conda(plan: Plan, source: str | None = None) -> str:
    return render_conda_platforms([plan], source)


def render_conda_platforms(plans: Sequence[Plan], source: str | None = None) -> str:
    """One environment.yml per target (identical ones once), YAML documents separated by ``---``."""
    found, _ = targets(plans, source)
    documents = list(dict.fromkeys(environment_yml(t) for t in found))
    if len(documents) > 1:
        head = [f"# torch-install: {len(documents)} environments, one per platform (conda reads one file per "
                "environment: save each document as its own environment.yml)"]
        return "\n".join(head + [f"---\n{d}" for d in documents])
    return documents[0] if documents else ""


# ---- pixi.toml ------------------------------------------------------------------------------------------------------

def toml_value(value: Entry) -> str:
    """A pixi entry as TOML 1.0: a string, or a one-line inline table (of strings, string arrays, booleans)."""
    if isinstance(value, str):
        return json.dumps(value)
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items()) + " }"


# what pixi declares for a platform entry that does not say (its system-requirements docs)
PIXI_DEFAULTS = {"glibc": "2.28", "macos": "13.0"}


def platform_entry(target: Target) -> Entry:
    """The target's ``[workspace].platforms`` entry: its subdir, the CUDA it declares, and its C library where the
    build needs more than pixi assumes (the tegra build's glibc 2.34); the bare subdir where it declares nothing."""
    entry: dict[str, str] = {"name": target.name, "platform": target.subdir}
    if target.cuda:
        entry["cuda"] = target.cuda
    if target.source == "conda-forge":
        build = target.choice.build
        machine = target.plan.machine
        for key, floor, have in (("glibc", build.glibc, machine.glibc), ("macos", build.macos, machine.os_version)):
            if floor and numeric_key(floor) > numeric_key(PIXI_DEFAULTS[key]):
                entry[key] = have if have and numeric_key(have) >= numeric_key(floor) else floor
    if len(entry) == 2 and target.name == target.subdir:
        return target.subdir
    return entry


_REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[(?P<extras>[^\]]*)\])?\s*(?P<spec>[^;@]*)$")


def pypi_entry(text: str, fmt: str = "pixi") -> tuple[str, Entry]:
    """A requirement as written, as a pixi ``[pypi-dependencies]`` entry: (name, value)."""
    editable = text.startswith("-e ")
    body = text[3:].strip() if editable else text.strip()
    if ";" in body:
        raise InputError(f"--format {fmt}: {text}: a marker, which pypi-dependencies do not carry (pixi's targets "
                         "take a dependency per platform)")
    if " @ " in body:
        name, url = (part.strip() for part in body.split(" @ ", 1))
        return name, {"url": url}
    if editable or body.startswith((".", "/")) or "://" in body:
        from os.path import basename

        name = re.sub(r"[^A-Za-z0-9._-]", "-", basename(body.rstrip("/"))) or "project"
        entry: dict[str, Any] = {"url": body} if "://" in body else {"path": body}
        return name, {**entry, "editable": True} if editable else entry
    found = _REQUIREMENT.match(body)
    if not found:
        raise InputError(f"--format {fmt}: {text}: not a requirement pixi's pypi-dependencies take")
    spec = found["spec"].replace(" ", "") or "*"
    extras = [e.strip() for e in (found["extras"] or "").split(",") if e.strip()]
    if extras:
        return found["name"], {"version": spec, "extras": extras}
    return found["name"], spec


def _pypi_torch(plan: Plan) -> dict[str, Entry]:
    """torch (and its family) from the plan's index: ``{ version = "==2.15.0+cu130", index = "…/cu130" }``; one
    the request names by its wheel, that wheel: ``{ url = "…" }`` (``{ path = "…" }`` for a local file)."""
    assert plan.choice is not None
    out: dict[str, Entry] = {}
    for name, version in plan.choice.packages.items():  # the exact build, its local label included
        if name in plan.choice.references:
            location = plan.choice.references[name].split(" @ ", 1)[1].strip()
            from ..project.requirements_file import local_path

            path = local_path(location)
            out[name] = {"url": location} if path == location else {"path": path}
            continue
        entry = {"version": f"=={version}" if version else "*"}
        if plan.choice.index_url:
            entry["index"] = plan.choice.index_url
        out[name] = entry if len(entry) > 1 else entry["version"]
    for picked in plan.choice.from_index():
        out[picked.name] = {"version": f"=={picked.version}", "index": plan.choice.index_url or ""}
    for picked in plan.choice.companions:
        if picked.kind in ("default", "find-links", "url", "source"):
            raise InputError(f"--format pixi: {picked.name} comes from {picked.kind}, which pixi's "
                             "pypi-dependencies cannot say per platform yet: use --format pyproject")
    return out


def pixi_tables(target: Target) -> tuple[dict[str, Entry], dict[str, Entry]]:
    """(conda dependencies, pypi dependencies) of one target."""
    plan = target.plan
    _torch_built(plan, target, "pixi")
    along = dict(pypi_entry(text) for text in riding(plan, "pixi"))
    if target.source == "conda-forge":
        return _pixi_specs(target.choice), along
    python = plan.machine.python
    conda: dict[str, Entry] = {"python": f"{python.removesuffix('t')}.*"} if python else {}
    return conda, {**_pypi_torch(plan), **along}


def render_pixi(plan: Plan, source: str | None = None) -> str:
    return render_pixi_platforms([plan], source)


def render_pixi_platforms(plans: Sequence[Plan], source: str | None = None) -> str:
    """One pixi manifest for every target: its platform (with the CUDA it declares) and its dependencies; what
    every target shares in the common tables, the rest in ``[target.<platform>.…]``."""
    found, _ = targets(plans, source)
    if not found:
        return ""
    lines: list[str] = []
    for target in found:
        lines += _header(target)
        line = override_line(target, "pixi")
        if line:
            lines.append(line)
    lines += ["", "[workspace]", f"channels = [{json.dumps(CHANNEL)}]",
              "platforms = [" + ", ".join(toml_value(platform_entry(t)) for t in found) + "]"]
    if any(t.cuda for t in found):
        lines.append(f"requires-pixi = {json.dumps(REQUIRES_PIXI)}")
    tables = [pixi_tables(t) for t in found]
    for kind, title in ((0, "dependencies"), (1, "pypi-dependencies")):
        shared = {k: v for k, v in tables[0][kind].items() if all(t[kind].get(k) == v for t in tables)}
        if shared:
            lines += ["", f"[{title}]", *(f"{_key(k)} = {toml_value(v)}" for k, v in shared.items())]
        if len(found) == 1:
            continue
        for target, table in zip(found, tables, strict=True):
            own = {k: v for k, v in table[kind].items() if k not in shared}
            if own:
                lines += ["", f"[target.{_key(target.name)}.{title}]",
                          *(f"{_key(k)} = {toml_value(v)}" for k, v in own.items())]
    return "\n".join(lines)


def _key(name: str) -> str:
    """A TOML key: bare where TOML allows it, else quoted."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


__all__ = ["render_conda", "render_conda_platforms", "render_pixi", "render_pixi_platforms", "targets"]
