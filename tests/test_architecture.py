"""The house rules, checked on the source: imports point down the floors and never form a cycle.

Every ``import`` counts, at module level or inside a function, type-only ones too, and so does each vendor hook:
the import a hook's caller makes of the code a registry row names (``vendors.Hook``).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

from hook_kinds import hook_kinds
from torch_install import vendors

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "torch_install"


Nodes = tuple[ast.AST, ...]


@functools.cache
def _nodes(path: Path) -> Nodes:
    """Every node of one module's source, parsed and walked once per run (the graph and each per-file rule read
    them)."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def _source_nodes(source: str) -> Nodes:
    return tuple(ast.walk(ast.parse(source)))


@pytest.fixture(scope="module", autouse=True)
def _nodes_dropped_after_the_module() -> Iterator[None]:
    """The parsed sources live while this module's tests run, not for the rest of the run."""
    yield
    _nodes.cache_clear()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Module -> the torch_install modules it imports."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        found: set[str] = set()
        for node in _nodes(path):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                # a submodule imported from its package is an edge to it; any other name, to the module holding it
                candidates = [f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target
                              for alias in node.names]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            found.update(c for c in candidates if c in modules and c != name)
        graph[name] = found
    return graph


def _hook_edges() -> set[tuple[str, str]]:
    """(caller, code's module) for every hook of every row: a kind's caller is the module that declares it."""
    return {(kind.protocol.__module__, kind.target(ref)[0]) for kind in hook_kinds() for row in vendors.VENDORS
            for ref in kind.refs(row)}


GRAPH = _imports()
HOOK_EDGES = _hook_edges()
for _caller, _code in HOOK_EDGES:
    if _code != _caller:
        GRAPH[_caller].add(_code)


def _reachable(start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in GRAPH[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_graph_is_read() -> None:
    assert "torch_install.resolver.plan" in GRAPH["torch_install.resolver.choose"]
    assert "torch_install.machine" in GRAPH["torch_install.resolver.plan"]


def test_the_hooks_are_edges() -> None:
    assert ("torch_install.resolver.choose", "torch_install.resolver.vendor_rules") in HOOK_EDGES
    assert ("torch_install.detectors.pci", "torch_install.detectors.nvidia") in HOOK_EDGES
    assert "torch_install.detectors.amd" in GRAPH["torch_install.detectors"]  # its detector, a hook


def test_no_import_cycle() -> None:
    cycles = sorted(name for name in GRAPH if name in _reachable(name))
    assert cycles == []


# The floors of the house, from the ground up (docs/architecture.md draws them): a room imports only rooms on
# floors below its own, hooks counted.
FLOORS = (
    ("errors", "versions", "records", "package_data", "user_dirs", "display", "hosts", "torch_install"),
    ("vendors", "drivers", "progress", "user_files"),
    ("child_process",),
    ("probe",),
    ("machine", "capture"),
    ("detectors", "profile_tags", "markers"),
    ("resolver", "container", "machine_completion", "wheel_tags"),
    ("environment", "project", "wheelnext"),
    ("doctor", "index", "render"),
    ("fleet",),
    ("cli",),
    ("__main__",),
)
FLOOR_OF = {room: floor for floor, rooms in enumerate(FLOORS) for room in rooms}


def _room(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def test_every_room_has_a_floor() -> None:
    assert sorted({_room(m) for m in GRAPH} - set(FLOOR_OF)) == []


def _not_down(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{source} -> {target}" for source, targets in graph.items() for target in targets
                  if _room(source) != _room(target) and FLOOR_OF[_room(target)] >= FLOOR_OF[_room(source)])


def test_no_import_points_up_or_across() -> None:
    """Between two rooms, every import (hooks counted) goes to a lower floor."""
    assert _not_down(GRAPH) == []
    # the registry naming the resolver's code (a hook written as a path from vendors.py) would point up
    assert _not_down({"torch_install.vendors": {"torch_install.resolver.rules"}}) != []
    assert _not_down({"torch_install.fleet": {"torch_install.render"}, "torch_install.render": {"torch_install.index"}}
                     ) == ["torch_install.render -> torch_install.index"]


RESOLVER_MAY_IMPORT = ("torch_install.resolver", "torch_install.machine", "torch_install.versions",
                       "torch_install.drivers", "torch_install.package_data", "torch_install.errors",
                       "torch_install.hosts", "torch_install.vendors", "torch_install.markers", "torch_install.records",
                       "torch_install.profile_tags")


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.startswith("torch_install.resolver")))
def test_the_resolver_imports_nothing_above_it(module: str) -> None:
    assert sorted(t for t in GRAPH[module] if not t.startswith(RESOLVER_MAY_IMPORT)) == []


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if not m.startswith("torch_install.cli")
                                          and m not in ("torch_install", "torch_install.__main__")))
def test_only_the_cli_imports_the_cli(module: str) -> None:
    assert sorted(t for t in GRAPH[module] if t.startswith("torch_install.cli")) == []


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.startswith("torch_install.detectors")))
def test_detection_imports_no_resolver_render_index_or_doctor(module: str) -> None:
    above = ("torch_install.resolver", "torch_install.render", "torch_install.index", "torch_install.doctor",
             "torch_install.fleet", "torch_install.environment", "torch_install.container")
    assert sorted(t for t in GRAPH[module] if t.startswith(above)) == []


def test_container_mode_is_hints_in_machine_out() -> None:
    assert sorted(t for t in GRAPH["torch_install.container"]
                  if t.startswith(("torch_install.resolver", "torch_install.render", "torch_install.cli"))) == []


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.startswith("torch_install.environment")))
def test_the_environment_wing_imports_no_doctor_render_or_index(module: str) -> None:
    """What acts on an environment (interpreter, distributions, install, guard, pin) is below the doctor."""
    above = ("torch_install.doctor", "torch_install.render", "torch_install.index", "torch_install.fleet")
    assert sorted(t for t in GRAPH[module] if t.startswith(above)) == []


# What a resolver module may import from outside the package: the resolver reads no file, directory, environment,
# network or process (the shipped tables come through package_data.load_json, a front end hands it the rest).
RESOLVER_OUTSIDE_IMPORTS = ("__future__", "collections", "functools", "importlib", "itertools", "packaging", "re",
                            "shlex", "types", "typing")
# Names that reach the file system or the working directory, whatever module they would come from: the builtin
# open, os's and os.path's functions, a path object's methods (os.walk is left out: the search has a walk of its own).
FILE_SYSTEM_NAMES = frozenset({
    "open", "Path", "abspath", "realpath", "relpath", "expanduser", "getcwd", "getcwdb", "chdir", "listdir",
    "scandir", "stat", "lstat", "exists", "isfile", "isdir", "islink", "read_text", "read_bytes", "write_text",
    "write_bytes", "glob", "iglob", "environ", "getenv", "system", "popen", "__import__"})


def _outside_imports(nodes: Nodes) -> list[str]:
    names: list[str] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.append(node.module or "")
    return [n for n in names if not n.startswith("torch_install")]


def _file_system_uses(nodes: Nodes) -> list[str]:
    uses = [(node.lineno, node.id) for node in nodes if isinstance(node, ast.Name)
            and node.id in FILE_SYSTEM_NAMES]
    uses += [(node.lineno, node.attr) for node in nodes if isinstance(node, ast.Attribute)
             and node.attr in FILE_SYSTEM_NAMES]
    return [f"line {line}: {name}" for line, name in sorted(uses)]


RESOLVER_FILES = sorted((PACKAGE / "resolver").glob("*.py"))


@pytest.mark.parametrize("path", RESOLVER_FILES, ids=lambda p: p.name)
def test_the_resolver_touches_no_file_system(path: Path) -> None:
    """Nothing in resolver/ reads a file, a directory or the working directory (``os.path.abspath`` included):
    no import of os, pathlib, io, shutil, subprocess …, and no name that reaches them."""
    nodes = _nodes(path)
    assert sorted({n for n in _outside_imports(nodes) if n.split(".")[0] not in RESOLVER_OUTSIDE_IMPORTS}) == []
    assert _file_system_uses(nodes) == []


@pytest.mark.parametrize("source", [
    "import os\n", "from pathlib import Path\n", "import io\n", "from os import path\n",
    "def f(x):\n    return open(x).read()\n", "def f(m, x):\n    return m.path.abspath(x)\n",
    "def f(m):\n    return m.getcwd()\n", "def f(p):\n    return p.read_text()\n",
])
def test_the_file_system_rule_sees_each_way_in(source: str) -> None:
    nodes = _source_nodes(source)
    assert [n for n in _outside_imports(nodes) if n.split(".")[0] not in RESOLVER_OUTSIDE_IMPORTS] or \
        _file_system_uses(nodes)


# The modules that write files, and what each writes; every other module writes none. A file the user owns (a
# pyproject, uv.toml, pip.conf, the pin beside it …) is written by the editor alone.
FILE_WRITERS = {
    "user_files.py": "the one editor of user files (and its undo journal)",
    "index/cache.py": "torch-install's own cache of index pages",
    "capture.py": "the new archive `detect --capture FILE` makes",
    "environment/lock.py": "the holders' line in the environment's lock file, through its locked descriptor",
    "environment/install.py": "what a step reads, into a temporary directory of its own",
    "environment/guard.py": "pip's stash renamed back into site-packages",
}
WRITING_CALLS = {  # module -> its functions that write, rename or delete a file
    "os": {"replace", "rename", "renames", "unlink", "remove", "rmdir", "truncate", "ftruncate", "write", "link",
           "symlink"},
    "shutil": {"copy", "copy2", "copyfile", "copytree", "move", "rmtree"},
    "tempfile": {"mkstemp", "NamedTemporaryFile", "TemporaryFile"},
}


def _writes(nodes: Nodes) -> list[str]:
    """What in ``nodes`` writes, renames or deletes a file: os/shutil/tempfile's functions that do (called through
    their module or imported by name), a path's ``write_text``/``write_bytes``, an ``open``/``fdopen`` in a mode
    that writes."""
    found = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module in WRITING_CALLS:
            found += [f"line {node.lineno}: {node.module}.{a.name}" for a in node.names
                      if a.name in WRITING_CALLS[node.module]]
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        owner = getattr(func.value, "id", "") if isinstance(func, ast.Attribute) else ""
        mode = next((a.value for a in [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "mode")]
                     if isinstance(a, ast.Constant) and isinstance(a.value, str)), "r")
        if name in WRITING_CALLS.get(owner, ()) or name in ("write_text", "write_bytes") or \
                (name in ("open", "fdopen") and set(mode) & set("wax+")):
            found.append(f"line {node.lineno}: {owner + '.' if owner else ''}{name}")
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_editor_writes_a_users_file(path: Path) -> None:
    """No module but those of FILE_WRITERS writes, renames or deletes a file (os.replace, open(…, "w"), …)."""
    relative = str(path.relative_to(PACKAGE))
    writes = _writes(_nodes(path))
    assert writes == [] or relative in FILE_WRITERS, writes
    assert writes or relative not in FILE_WRITERS  # a writer that no longer writes leaves the list


@pytest.mark.parametrize("source", [
    "import os\nos.replace(a, b)\n", "open(p, 'w').write(t)\n", "open(p, mode='a')\n", "Path(p).write_text(t)\n",
    "import tempfile\ntempfile.mkstemp()\n", "import os\nos.write(fd, b'x')\n", "shutil.copy(a, b)\n",
    "from os import replace\n", "os.fdopen(fd, 'wb')\n",
])
def test_the_writers_rule_sees_each_way_to_write(source: str) -> None:
    assert _writes(_source_nodes(source))
    assert not _writes(_source_nodes("open(p).read()\nopen(p, 'rb')\nsys.stderr.write('x')\ns.replace('a', 'b')\n"))


def _family_literals(nodes: Nodes) -> list[str]:
    """Tuples, lists and sets written in the source that name two or more of the torch family's members."""
    from torch_install.resolver.request import PACKAGES

    found = []
    for node in nodes:
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = {e.value for e in node.elts if isinstance(e, ast.Constant)}
            if len(names & set(PACKAGES)) >= 2:
                found.append(f"line {node.lineno}")
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_torch_family_is_written_once(path: Path) -> None:
    """The family's members are listed in resolver/request.py alone (PACKAGES, COMPANIONS); conda's own package
    names (environment/conda_meta.py) are another list."""
    relative = str(path.relative_to(PACKAGE))
    found = _family_literals(_nodes(path))
    assert found == [] or relative in ("resolver/request.py", "environment/conda_meta.py"), found


def test_the_family_rule_sees_a_literal() -> None:
    assert _family_literals(_source_nodes('x = ("torchvision", "torchaudio")\n'))
    assert not _family_literals(_source_nodes('x = ("torch", "numpy")\n'))
