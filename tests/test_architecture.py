"""The house rules, checked on the source: imports point down the floors and never form a cycle.

Every ``import`` counts, at module level or inside a function, type-only ones too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "torch_install"


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
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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


GRAPH = _imports()


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


def test_no_import_cycle() -> None:
    cycles = sorted(name for name in GRAPH if name in _reachable(name))
    assert cycles == []


RESOLVER_MAY_IMPORT = ("torch_install.resolver", "torch_install.machine", "torch_install.versions",
                       "torch_install.drivers", "torch_install.package_data", "torch_install.errors",
                       "torch_install.hosts", "torch_install.vendors", "torch_install.markers", "torch_install.records")


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


def _outside_imports(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.append(node.module or "")
    return [n for n in names if not n.startswith("torch_install")]


def _file_system_uses(tree: ast.AST) -> list[str]:
    uses = [(node.lineno, node.id) for node in ast.walk(tree) if isinstance(node, ast.Name)
            and node.id in FILE_SYSTEM_NAMES]
    uses += [(node.lineno, node.attr) for node in ast.walk(tree) if isinstance(node, ast.Attribute)
             and node.attr in FILE_SYSTEM_NAMES]
    return [f"line {line}: {name}" for line, name in sorted(uses)]


RESOLVER_FILES = sorted((PACKAGE / "resolver").glob("*.py"))


@pytest.mark.parametrize("path", RESOLVER_FILES, ids=lambda p: p.name)
def test_the_resolver_touches_no_file_system(path: Path) -> None:
    """Nothing in resolver/ reads a file, a directory or the working directory (``os.path.abspath`` included):
    no import of os, pathlib, io, shutil, subprocess …, and no name that reaches them."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert sorted({n for n in _outside_imports(tree) if n.split(".")[0] not in RESOLVER_OUTSIDE_IMPORTS}) == []
    assert _file_system_uses(tree) == []


@pytest.mark.parametrize("source", [
    "import os\n", "from pathlib import Path\n", "import io\n", "from os import path\n",
    "def f(x):\n    return open(x).read()\n", "def f(m, x):\n    return m.path.abspath(x)\n",
    "def f(m):\n    return m.getcwd()\n", "def f(p):\n    return p.read_text()\n",
])
def test_the_file_system_rule_sees_each_way_in(source: str) -> None:
    tree = ast.parse(source)
    assert [n for n in _outside_imports(tree) if n.split(".")[0] not in RESOLVER_OUTSIDE_IMPORTS] or \
        _file_system_uses(tree)
