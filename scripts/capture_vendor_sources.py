#!/usr/bin/env python3
"""Capture the vendors' own statements about their PyTorch builds from git copies of their repositories.

    python scripts/capture_vendor_sources.py [--therock PATH] [--jetson-containers PATH]

Reads, at each repository's HEAD (``git show``, no work tree needed), and never runs anything of them:

- ROCm/TheRock: ``RELEASES.md`` (the nightly index URL, the table of ``[device-*]`` install extras, the torch /
  torchvision / torchaudio pairings), ``SUPPORTED_GPUS.md`` (each OS's table of gfx targets and their support
  level), ``build_tools/github_actions/configure_pytorch_release_matrix.py`` (the Pythons and PyTorch branches
  the release builds make, read with ``ast.literal_eval``) and ``docs/rfcs/RFC0012-Repo-Structure.md`` (the
  per-stream index layout) and ``version.json`` (the ROCm version its development branch, and so its nightly
  builds, carry);
- dusty-nv/jetson-containers: ``jetson_containers/l4t_version.py`` (L4T -> JetPack, the CUDA each L4T release
  ships, the CUDA architectures its JetPack builds compile, the compute capability of each Jetson module as its
  ``get_cuda_arch`` states it, the Python of each Ubuntu release),
  ``packages/cuda/cuda/config.py`` (the Jetson AI Lab index path and host) and ``docker-compose.yaml`` (the index
  URLs, each with its comment).

Writes ``scripts/reference/vendor/therock.json`` and ``scripts/reference/vendor/jetson-containers.json`` (each with
the commit read), which ``scripts/build_vendor_builds.py`` builds the embedded table from and
``scripts/audit_vendor_builds.py`` checks it against.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
from pathlib import Path

from capture_release_builds import literals  # the module-level literal assignments of a Python file

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference" / "vendor"

RELEASES = "RELEASES.md"
SUPPORTED = "SUPPORTED_GPUS.md"
RELEASE_MATRIX = "build_tools/github_actions/configure_pytorch_release_matrix.py"
RFC = "docs/rfcs/RFC0012-Repo-Structure.md"
VERSION = "version.json"
L4T = "jetson_containers/l4t_version.py"
CUDA_CONFIG = "packages/cuda/cuda/config.py"
COMPOSE = "docker-compose.yaml"


def git_show(repo: Path, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], capture_output=True, text=True,
                          check=True).stdout


def head(repo: Path) -> dict[str, str]:
    out = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%H %cI"], capture_output=True, text=True,
                         check=True).stdout.split()
    return {"commit": out[0], "date": out[1][:10]}


def markdown_tables(text: str) -> list[tuple[str, list[list[str]]]]:
    """Every table of a Markdown file: (the heading above it, its body rows as cells; the header row is the first
    row, the ``---`` rule is dropped). Cells lose their ``**`` and backticks."""
    tables: list[tuple[str, list[list[str]]]] = []
    heading, rows = "", []
    for line in [*text.splitlines(), ""]:
        stripped = line.strip().lstrip(">").strip()
        if stripped.startswith("|"):
            cells = [c.strip().replace("**", "").replace("`", "") for c in stripped.strip("|").split("|")]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                rows.append(cells)
            continue
        if rows:
            tables.append((heading, rows))
            rows = []
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
    return tables


def therock(repo: Path) -> dict[str, object]:
    releases, supported = git_show(repo, RELEASES), git_show(repo, SUPPORTED)
    extras: list[dict[str, str]] = []
    pairings: list[dict[str, str]] = []
    for _, rows in markdown_tables(releases):
        header = [c.lower() for c in rows[0]]
        if header[:3] == ["product name", "gfx target", "device extra"]:
            extras += [{"product": r[0], "gfx": r[1], "extra": r[2]} for r in rows[1:]]
        elif header[:3] == ["torch version", "torchaudio version", "torchvision version"]:
            pairings += [{"torch": r[0], "torchaudio": r[1], "torchvision": r[2]} for r in rows[1:]]
    index = re.search(r"published to a\s+unified index at (https://\S+?)\.?\s*$", releases, re.M)
    levels: dict[str, dict[str, dict[str, object]]] = {}
    for heading, rows in markdown_tables(supported):
        os_of = "windows" if heading.endswith("Windows") else "linux" if heading.endswith("Linux") else None
        header = [c.lower() for c in rows[0]]
        if os_of is None or header[:2] != ["architecture", "llvm target"]:
            continue
        columns = header[2:]
        for row in rows[1:]:
            levels.setdefault(os_of, {})[row[1]] = {
                "architecture": row[0], "group": heading,
                **{column.replace(" ", "-"): "✅" in cell for column, cell in zip(columns, row[2:], strict=False)}}
    matrix = literals(git_show(repo, RELEASE_MATRIX))
    rfc = git_show(repo, RFC)
    streams = sorted(set(re.findall(r"`([a-z]+)\.repo\.amd\.com`", rfc)) - {"archives"})
    return {"repository": "ROCm/TheRock", **head(repo),
            "files": {
                RELEASES: {"nightly_index": index[1] if index else None, "device_extras": extras,
                           "pairings": pairings},
                SUPPORTED: {"levels": levels},
                RELEASE_MATRIX: {k: _plain(matrix.get(k)) for k in ("RELEASE_PYTHON_VERSIONS",
                                                                    "RELEASE_STABLE_PYTORCH_REFS",
                                                                    "UNSUPPORTED_AMDGPU_FAMILIES")},
                VERSION: {"rocm-version": json.loads(git_show(repo, VERSION)).get("rocm-version")},
                RFC: {"stream_hosts": [f"{s}.repo.amd.com" for s in streams],
                      "indexes": sorted(set(re.findall(r"<stream>\.repo\.amd\.com/rocm/(whl(?:-next)?)/", rfc)))},
            }}


def _plain(value: object) -> object:
    """A literal as JSON holds it: a set (``{"gfx90c"}``; ``{}`` is a dict) as a sorted list."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset, list, tuple)):
        items = [_plain(v) for v in value]
        return sorted(items) if isinstance(value, (set, frozenset)) else items  # type: ignore[type-var]
    return value


def _value(node: ast.AST) -> object:
    """A literal, where ``Version('3.10')`` stands for its string."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Version" and node.args:
        return _value(node.args[0])
    if isinstance(node, ast.Dict):
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
    return ast.literal_eval(node)


def _function(tree: ast.Module, name: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def _assigned(body: list[ast.stmt], name: str) -> object | None:
    for statement in body:
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                    for t in statement.targets):
            return _value(statement.value)
    return None


def _chain(node: ast.If) -> list[ast.If]:
    """An if / elif chain, each branch once."""
    out = [node]
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        out.append(node)
    return out


def _l4t_condition(test: ast.expr) -> tuple[str, list[str]] | None:
    """``l4t_version.major >= 36`` -> ("major>=", ["36"]); ``l4t_version == Version('36.4') or …`` -> ("==",
    ["36.4", …]); anything else None."""
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.Attribute) and test.left.attr == "major":
        op = {ast.GtE: "major>=", ast.Eq: "major=="}.get(type(test.ops[0]))
        return (op, [str(_value(test.comparators[0]))]) if op else None
    parts = test.values if isinstance(test, ast.BoolOp) else [test]
    versions = []
    for part in parts:
        if not (isinstance(part, ast.Compare) and isinstance(part.ops[0], ast.Eq)):
            return None
        versions.append(str(_value(part.comparators[0])))
    return "==", versions


def jetson_containers(repo: Path) -> dict[str, object]:
    source = git_show(repo, L4T)
    tree = ast.parse(source)
    jetpack = _assigned(_function(tree, "get_jetpack_version").body, "NVIDIA_JETPACK")
    python = next((_value(n.value) for n in tree.body if isinstance(n, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "DEFAULT_PYTHON_VERSIONS" for t in n.targets)), None)
    cuda: list[dict[str, object]] = []  # the CUDA an L4T release ships (when none is installed on the host)
    for node in ast.walk(_function(tree, "get_cuda_version")):
        if isinstance(node, ast.If) and _l4t_condition(node.test) and _assigned(node.body, "cuda_version"):
            for branch in _chain(node):
                condition = _l4t_condition(branch.test)
                value = _assigned(branch.body, "cuda_version")
                if condition and value is not None and {"op": condition[0], "l4t": condition[1],
                                                        "cuda": value} not in cuda:
                    cuda.append({"op": condition[0], "l4t": condition[1], "cuda": value})
    arches: list[dict[str, object]] = []  # the CUDA architectures its builds compile on a Jetson (IS_TEGRA)
    for node in ast.walk(_function(tree, "get_cuda_arch")):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "IS_TEGRA":
            inner = next(s for s in node.body if isinstance(s, ast.If))
            for branch in _chain(inner):
                condition = _l4t_condition(branch.test)
                value = _assigned(branch.body, "cuda_architectures")
                if condition and value is not None:
                    arches.append({"op": condition[0], "l4t": condition[1], "sm": value})
    modules: dict[str, str] = {}  # get_cuda_arch's "# Nano/TX1 = 5.3, TX2 = 6.2, …"
    if comment := re.search(r"#\s*((?:[A-Za-z0-9/ ]+ = [0-9]+\.[0-9]+,?\s*)+)$",
                            ast.get_source_segment(source, _function(tree, "get_cuda_arch")) or "", re.M):
        for names, cc in re.findall(r"([A-Za-z0-9/ ]+?) = ([0-9]+\.[0-9]+)", comment[1]):
            modules.update({name.strip(): cc for name in names.split("/")})
    config = git_show(repo, CUDA_CONFIG)
    host = re.search(r"os\.environ\.get\('INDEX_HOST', '([^']+)'\)", config)
    tegra_path = re.search(r'f"(jp\{JETPACK_VERSION\.major\}/\{short_version\})" if IS_TEGRA', config)
    url = re.search(r'remote_pip_url = f"(https://pypi\.\{index_host\}/\{pip_path\})"', config)
    compose = git_show(repo, COMPOSE)
    indexes = [{"url": m[2], "comment": m[1].strip()} for m in
               re.finditer(r"^\s*pypi_cu[0-9]+: # (.*)\n(?:.*\n)*?\s*--fallback-url (\S+)", compose, re.M)]
    return {"repository": "dusty-nv/jetson-containers", **head(repo),
            "files": {
                L4T: {"jetpack_of_l4t": jetpack, "python_of_ubuntu": python, "cuda_of_l4t": cuda,
                      "tegra_cuda_architectures": arches, "module_compute_capability": modules},
                CUDA_CONFIG: {"index_host": host[1] if host else None,
                              "tegra_path": tegra_path[1] if tegra_path else None,
                              "index_url": url[1] if url else None},
                COMPOSE: {"indexes": indexes},
            }}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--therock", type=Path, help="a git copy of ROCm/TheRock")
    parser.add_argument("--jetson-containers", type=Path, help="a git copy of dusty-nv/jetson-containers")
    parser.add_argument("-o", "--output", type=Path, default=OUT, help="the directory to write into")
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    if not (args.therock or args.jetson_containers):
        parser.error("name --therock, --jetson-containers or both")
    for name, data in ((n, read(repo)) for n, read, repo in (("therock.json", therock, args.therock),
                                                              ("jetson-containers.json", jetson_containers,
                                                               args.jetson_containers)) if repo):
        (args.output / name).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.output / name} ({data['repository']} {data['commit'][:12]}, {data['date']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
