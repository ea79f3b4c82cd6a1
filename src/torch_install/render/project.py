"""A plan as the files a project keeps: a requirements file, a constraints file, pyproject.toml entries (for one
target, or several with platform markers), and those entries merged into an existing pyproject.toml.

Every format carries every package the user asked for (the torch family with its extras, the packages built
against torch, the rest as written), or an InputError says what it cannot carry (a source build in a requirements
file, a path in a constraints file).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

from ..errors import InputError
from ..hosts import insecure_host
from ..markers import platform_markers
from ..resolver.commands import PRE_RELEASE_CHANNEL
from ..resolver.pins import OWN_INDEX_PREFIX, index_name
from ..resolver.plan import Plan, Wanted
from ..resolver.steps import RIDE_ALONG_OPTIONS, family_extras, requirement_lines
from .plan import machine_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from ..resolver.matrix import Matrix

# pip's --require-hashes mode wants every package of the install pinned and hashed, dependencies included; the
# plan pins the torch family only (its dependencies are the installer's to resolve)
HASHES_LIMIT = ["# The hashes cover the torch family's own wheels. pip --require-hashes also wants each dependency",
                "# (filelock, sympy, nvidia-* ...) pinned and hashed: for a complete locked file, run",
                "#   uv pip compile --generate-hashes THIS_FILE -o requirements.lock"]


def riding(plan: Plan) -> list[Wanted]:
    """The requirements that ride along, every line of every file (a file's own lines, written out)."""
    assert plan.choice is not None
    taken = {p.name for p in plan.choice.companions}
    return [w for w in plan.request.requirements if not w.constraint and w.name not in taken]


def _sources_of_builds(plan: Plan) -> list[str]:
    """What builds from source: a requirements or constraints file cannot say "without build isolation"."""
    assert plan.choice is not None
    return [p.name for p in plan.choice.companions if p.kind == "source"]


def render_requirements(plan: Plan, hashes: Mapping[str, Sequence[str]] | None = None) -> str:
    """A requirements file: the index and pre-release options, one pinned line per package of the chosen build
    (with its ``--hash=sha256:`` options when ``hashes`` maps the package to digests), then what rides along with
    its hashes and its files' options. Alone, the build comes from its index (``--index-url``); with other
    packages, the user's index stays the first and the build's is an extra one (its labelled pins exist only
    there)."""
    if plan.choice is None:
        return ""
    others = riding(plan)
    sourced = _sources_of_builds(plan)
    if sourced:
        raise InputError(f"--format requirements: {', '.join(sourced)} builds from source, which needs pip's "
                         "--no-build-isolation, and a requirements file cannot say so: use --format pip, or install")
    if any(w.hashes for w in others) and not hashes:
        raise InputError("--format requirements: the project's files have --hash options, and pip's hash-checking "
                         "mode wants the chosen build's lines hashed too: add --hashes")
    elsewhere = [p for p in plan.choice.companions if p.kind in ("default", "find-links", "url")]
    alone = not others and not elsewhere and not family_extras(plan)
    lines = [f"# {plan.choice.variant} build of torch {plan.choice.torch} for {machine_line(plan)}"]
    if plan.request.channel == PRE_RELEASE_CHANNEL:
        lines.append("--pre")
    if plan.choice.index_url:
        if not alone:
            lines.append("# uv reads this file with: uv pip install -r FILE --index-strategy unsafe-best-match")
        lines.append(f"{'--index-url' if alone else '--extra-index-url'} {plan.choice.index_url}")
        trusted = insecure_host(plan.choice.index_url)
        if trusted:
            lines.append(f"--trusted-host {trusted}")
    seen_options = set()
    for option in plan.request.options:
        line = f"{option.option}{f' {option.value}' if option.value is not None else ''}"
        if option.option in RIDE_ALONG_OPTIONS and line not in seen_options:
            seen_options.add(line)
            lines.append(line)
    lines += [f"--find-links {p.url}" for p in elsewhere if p.url]
    pins = requirement_lines(plan)
    extras = family_extras(plan)
    pins = [pin.replace("==", f"{extras[pin.split('==')[0]]}==", 1) if pin.split("==")[0] in extras else pin
            for pin in pins]
    if hashes:
        lines += HASHES_LIMIT
        names = [pin.split("==")[0].split("[")[0] for pin in pins]
        pins = [" \\\n    ".join([pin, *(f"--hash=sha256:{h}" for h in hashes.get(name, ()))])
                for pin, name in zip(pins, names, strict=True)]
    lines += pins
    for wanted in others:
        text = f"-e {wanted.text}" if wanted.editable else wanted.text
        lines.append(" \\\n    ".join([text, *(f"--hash={h}" for h in wanted.hashes)]))
    lines += [p.requirement for p in elsewhere]
    return "\n".join(lines)


def render_constraints(plan: Plan) -> str:
    """A constraints file keeping the chosen build (``resolver/pins.py``), then the version constraints of what
    rides along (a constraint carries a name and versions only: extras are left out; a path or URL cannot be one)."""
    from ..resolver.pins import render_constraints as constraints

    text = constraints(plan)
    if plan.choice is None or not text:
        return text
    extra: list[str] = []
    for wanted in riding(plan):
        if wanted.editable or wanted.name is None or "://" in wanted.text or " @ " in wanted.text:
            raise InputError(f"--format constraints: {wanted.text} ({wanted.origin}) is a path or URL, which pip "
                             "does not take as a constraint: use --format requirements")
        extra.append(_without_extras(wanted.text))
    return text + "".join(f"{line}\n" for line in extra)


def _without_extras(text: str) -> str:
    from packaging.requirements import Requirement

    requirement = Requirement(text)
    requirement.extras = set()
    return str(requirement)


def render_platforms(plans: Sequence[Plan], fmt: str, hashes: Sequence[Mapping[str, Sequence[str]] | None] = ()
                     ) -> str:
    """A requirements or constraints file for several targets: each target's lines under its platform marker
    (a line every target has, once and unmarked), every target's index and options at the top."""
    render = render_requirements if fmt == "requirements" else render_constraints
    chosen = [p for p in plans if p.choice is not None]
    options: list[str] = []
    bodies: list[list[str]] = []
    for i, plan in enumerate(chosen):
        text = (render_requirements(plan, hashes[i]) if hashes and fmt == "requirements" else render(plan))
        body = []
        for entry in text.split("\n"):
            if entry.startswith("#") or not entry.strip():
                continue
            if entry.startswith("-") and not entry.startswith(("-e ", "-r ", "-c ")):
                entry = entry.replace("--index-url ", "--extra-index-url ", 1)
                if entry not in options:
                    options.append(entry)
                continue
            body.append(entry)
        bodies.append(body)
    markers = platform_markers([p.machine for p in chosen])
    lines = [f"# torch-install: {len(chosen)} targets, each under its platform marker",
             *(f"#   {marker}: torch {p.choice.torch} ({p.choice.variant})"  # type: ignore[union-attr]
               for p, marker in zip(chosen, markers, strict=True)), *options]
    everywhere = set.intersection(*(set(b) for b in bodies)) if bodies else set()
    written: set[str] = set()
    for marker, body in zip(markers, bodies, strict=True):
        for entry in body:
            if entry in everywhere:
                if entry not in written:
                    written.add(entry)
                    lines.append(entry)
                continue
            head, sep, tail = entry.partition(" \\\n")
            joined = f"{head} and ({marker})" if ";" in head else f"{head} ; {marker}"
            lines.append(joined + sep + tail)
    return "\n".join(lines)


# ---- pyproject ---------------------------------------------------------------------------------------------------

def _brings_runtime(plan: Plan) -> bool:
    """Whether the build's own dependencies live on its vendor's index only (AMD's ``rocm[libraries]`` and device
    packages): uv takes an explicit index's packages only for the dependencies that name it, so that index is
    written as one uv searches (before the default index) for every package."""
    if plan.choice is None or plan.choice.vendor_index is None:
        return False
    from ..resolver.vendor_builds import load_vendor_builds

    index = load_vendor_builds().indexes.get(plan.choice.vendor_index.id)
    return bool(index and index.runtime)


def _dependency(plan: Plan, name: str) -> str:
    """A family package's line among several platforms' builds: its extras and its public version (the platform's
    build comes from its source), or no version where the installer picks."""
    assert plan.choice is not None
    version = (plan.choice.packages.get(name) or "").split("+")[0]
    return f"{name}{_extras(plan, name)}=={version}" if version else f"{name}{_extras(plan, name)}"


def _extras(plan: Plan, name: str) -> str:
    """The extras of a family package in a dependency line: those asked of it, and those its build installs with
    (a vendor build's device extras): ``[device-gfx1100,opt-einsum]``."""
    assert plan.choice is not None
    asked = family_extras(plan).get(name, "").strip("[]")
    wanted = {e for e in asked.split(",") if e} | set(plan.choice.extras.get(name, ()))
    return "[" + ",".join(sorted(wanted)) + "]" if wanted else ""


def _page_index_name(url: str) -> str:
    """A uv index name for a find-links page, after its host's domain and its file: ``https://data.pyg.org/whl/
    torch-2.13.0+cu130.html`` is ``torch-install-pyg-torch-2-13-0-cu130``."""
    host = url.split("://", 1)[-1].split("/", 1)[0].split(":")[0].split(".")
    base = os.path.basename(url).removesuffix(".html")
    name = f"{host[-2] if len(host) > 1 else host[0]}-{base}"
    return OWN_INDEX_PREFIX + "-".join(filter(None, "".join(c if c.isalnum() else "-" for c in name).split("-")))


def _reference_source(requirement: str) -> dict[str, str]:
    """uv's source for a direct reference to a wheel (``torch @ URL``): ``{url = …}``, or ``{path = …}`` for a
    file on this machine."""
    location = requirement.split(" @ ", 1)[-1]
    if location.startswith(("https://", "http://")):
        return {"url": location}
    return {"path": location.removeprefix("file://")}


class Tables:
    """The pyproject entries of one or more plans, as plain data: ``dependencies`` (PEP 508 strings), uv's
    ``index`` list and ``sources`` table, its ``no-build-isolation-package`` list and settings."""

    def __init__(self) -> None:
        self.dependencies: list[str] = []
        self.indexes: dict[str, dict[str, Any]] = {}
        self.sources: dict[str, list[dict[str, str]]] = {}
        self.no_build_isolation: list[str] = []
        self.settings: dict[str, Any] = {}
        self.requires_python: str | None = None
        self.owned: set[str] = set()  # the package names whose dependency strings these tables replace

    def add_source(self, name: str, entry: dict[str, str]) -> None:
        if entry not in self.sources.setdefault(name, []):
            self.sources[name].append(entry)


def pyproject_tables(plans: Sequence[Plan], requires_python: str | None = None) -> Tables:
    """One plan: its build's pins (labelled, from its index). Several: one build per platform, through sources
    with markers (a platform whose build is the default index's has no source entry)."""
    chosen = [p for p in plans if p.choice is not None]
    tables = Tables()
    if not chosen:
        return tables
    tables.requires_python = f">={requires_python}" if requires_python else None
    many = len(plans) > 1
    first = chosen[0]
    assert first.choice is not None
    markers = dict(zip((id(p) for p in chosen), platform_markers([p.machine for p in chosen]), strict=True))
    names = list(dict.fromkeys(name for p in chosen for name in p.choice.packages))  # type: ignore[union-attr]
    tables.owned.update(names)
    for name in names:
        if not many:
            version = first.choice.packages.get(name) or ""
            tables.dependencies.append(f"{name}{_extras(first, name)}=={version}" if version else
                                       f"{name}{_extras(first, name)}")
            continue
        lines = {id(p): _dependency(p, name) for p in chosen}
        if len(set(lines.values())) == 1 and "==" in next(iter(lines.values())):  # one release on every platform
            tables.dependencies.append(next(iter(lines.values())))
            continue
        tables.dependencies += [f"{lines[id(p)]}; {markers[id(p)]}" for p in chosen]
    for p in chosen:
        assert p.choice is not None
        where = markers[id(p)] if many else None
        if p.choice.index_url:
            tables.indexes[index_name(p)] = {"name": index_name(p), "url": p.choice.index_url,
                                             "explicit": not _brings_runtime(p)}
            for name in [*p.choice.packages, *(c.name for c in p.choice.from_index())]:
                entry = _reference_source(p.choice.references[name]) if name in p.choice.references else \
                    {"index": index_name(p)}
                tables.add_source(name, {**entry, "marker": where} if where else entry)
        for picked in p.choice.companions:
            if picked.kind == "left-out":
                continue
            tables.owned.add(picked.name)
            dependency = (f"{picked.name}=={picked.version}" if picked.version else picked.name) \
                if picked.kind == "url" else picked.requirement
            if many:
                dependency = f"{dependency}; {where}"
            if dependency not in tables.dependencies:
                tables.dependencies.append(dependency)
            if picked.kind == "find-links" and picked.url:
                name = _page_index_name(picked.url)
                tables.indexes[name] = {"name": name, "url": picked.url, "format": "flat", "explicit": True}
                entry = {"index": name}
                tables.add_source(picked.name, {**entry, "marker": where} if where else entry)
            elif picked.kind == "url":
                entry = {"url": picked.requirement.split(" @ ", 1)[1]}
                tables.add_source(picked.name, {**entry, "marker": where} if where else entry)
            elif picked.kind == "source" and picked.name not in tables.no_build_isolation:
                tables.no_build_isolation.append(picked.name)
        if p.request.channel == PRE_RELEASE_CHANNEL:
            tables.settings["prerelease"] = "allow"
    for wanted in riding(first):
        if wanted.editable or wanted.name is None:
            raise InputError(f"--format pyproject: {wanted.text} ({wanted.origin}) is a path without a project name: "
                             "add it with uv add --editable PATH")
        if wanted.hashes:
            raise InputError(f"--format pyproject: {wanted.origin} has --hash options; a pyproject does not carry "
                             "hashes (uv lock records them)")
        if wanted.text not in tables.dependencies:
            tables.dependencies.append(wanted.text)
    return tables


def requires_python_floor(plans: Sequence[Plan], matrices: Sequence[Matrix]) -> str | None:
    """The ``requires-python`` floor a pyproject for several targets needs (None for one): the highest of each
    chosen release's lowest Python with wheels on its target's platform (free-threaded tags aside)."""
    from ..wheel_tags import python_sort_key

    floors = []
    for plan, matrix in zip(plans, matrices, strict=True):
        release = matrix.release(plan.choice.torch) if plan.choice and matrix.has_release(plan.choice.torch) \
            else None
        pythons = release.python_tags(plan.machine.platform or "") if release else ()
        if pythons:
            floors.append(min((p for p in pythons if not p.endswith("t")), key=python_sort_key, default=pythons[0]))
    return max(floors, key=python_sort_key) if floors and len(plans) > 1 else None


def render_pyproject(plan: Plan) -> str:
    """pyproject.toml entries for a uv project: dependencies, an explicit index, and sources pinning to it."""
    return render_pyproject_platforms([plan], None) if plan.choice is not None else ""


def render_pyproject_platforms(plans: Sequence[Plan], requires_python: str | None) -> str:
    """pyproject.toml entries for a uv project: for one target its build; for several, each platform's build,
    chosen for it, through ``[tool.uv.sources]`` entries with ``sys_platform``/``platform_machine`` markers and one
    explicit ``[[tool.uv.index]]`` per index, and the ``requires-python`` floor of the chosen releases (a wider range
    makes ``uv lock`` fail for the Pythons they have no wheels for)."""
    tables = pyproject_tables(plans, requires_python)
    if not tables.dependencies:
        return ""
    lines = ["# Merge into pyproject.toml" + (": one build per platform" if len(plans) > 1 else ""),
             "# (or let torch-install do it: --merge pyproject.toml)", "[project]"]
    if tables.requires_python:
        lines.append(f"requires-python = {json.dumps(tables.requires_python)}")
    lines += ["dependencies = [", *(f"  {json.dumps(d)}," for d in tables.dependencies), "]"]
    uv = {**tables.settings, **({"no-build-isolation-package": tables.no_build_isolation}
                                if tables.no_build_isolation else {})}
    if uv:
        lines += ["", "[tool.uv]", *(f"{k} = {json.dumps(v)}" for k, v in uv.items())]
    for entry in tables.indexes.values():
        lines += ["", "[[tool.uv.index]]", *(f"{k} = {json.dumps(v)}" for k, v in entry.items())]
    if tables.sources:
        lines += ["", "[tool.uv.sources]"]
        for name, entries in tables.sources.items():
            if len(entries) == 1 and "marker" not in entries[0]:
                lines.append(f"{name} = {_inline(entries[0])}")
            else:
                lines.append(f"{name} = [\n  " + ",\n  ".join(_inline(e) for e in entries) + ",\n]")
    return "\n".join(lines)


def _inline(entry: Mapping[str, str]) -> str:
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in entry.items()) + " }"


__all__ = ["render_constraints", "render_pyproject", "render_pyproject_platforms", "render_requirements"]
