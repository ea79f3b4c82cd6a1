#!/usr/bin/env python3
"""Build the conda-forge table (``src/torch_install/resolver/data/conda-forge.json``) from the captured recipes.

    python scripts/build_conda_forge.py            # write the table
    python scripts/build_conda_forge.py --check    # exit 1 when the committed table is not what the files give

Reads ``scripts/reference/conda-forge/`` (``capture_conda_forge.py``): for each pytorch release, the variant files
of its CI (``.ci_support/*.yaml``: subdir, CUDA version, BLAS, ARM variant, C library floor, Pythons), the recipe
(``meta.yaml``: build number and its +200 CUDA / +100 MKL offsets, the build-string template, the ``__cuda`` run
dependency and the ``pytorch-gpu``/``pytorch-cpu`` constraints) and the build scripts (``build.sh``, ``bld.bat``:
the ``TORCH_CUDA_ARCH_LIST`` each variant compiles, worked out by following their ``if``/``case`` branches for
that variant's values); torchvision's and torchaudio's recipes and variants; the ``cuda-version`` and
``arm-variant`` selector recipes. A recipe shape this script does not know stops it with the file named: a table
built from a guess is worse than none.

Confidence: what the recipe or a CI variant file states is ``recipe``; that a package built from them was
published, and the virtual-package floors the packages carry through conda-forge's compilers (``__glibc``,
``__osx``, ``cuda-version``), are ``inferred``: the channel itself was not read.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from torch_install.project.simple_yaml import loads  # noqa: E402

REFERENCE = HERE / "reference" / "conda-forge"
TABLE = HERE.parent / "src" / "torch_install" / "resolver" / "data" / "conda-forge.json"
SUBDIRS = ("linux-64", "linux-aarch64", "win-64", "osx-64", "osx-arm64")


class RecipeError(ValueError):
    """A recipe shape this script does not read."""


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# ---- the build scripts: which TORCH_CUDA_ARCH_LIST a variant compiles ---------------------------------------------

def _value(word: str, env: dict[str, str]) -> str | None:
    """A shell word's value: a quoted or bare literal, or ``$var``/``${var}`` (None for a variable not known)."""
    word = word.strip()
    if len(word) >= 2 and word[0] == word[-1] == '"':
        word = word[1:-1]
    found = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", word)
    if found:
        return env.get(found[1])
    if "$" in word:
        return None
    return word


def _test(condition: str, env: dict[str, str]) -> bool | None:
    """``[[ A == B ]]`` / ``[[ A != B ]]`` (B may be a glob), or None when a side is not known."""
    found = re.fullmatch(r"\[\[\s*(\S+)\s*(==|!=)\s*(\S+)\s*\]\]", condition.strip())
    if not found:
        return None
    left, op, right = _value(found[1], env), found[2], found[3]
    quoted = right.startswith('"') and right.endswith('"')
    pattern = _value(right, env)
    if left is None or pattern is None:
        return None
    result = left == pattern if quoted else fnmatch.fnmatchcase(left, pattern)
    return result if op == "==" else not result


def _and(*values: bool | None) -> bool | None:
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def _not(value: bool | None) -> bool | None:
    return None if value is None else not value


class _Frame:
    """One open ``if`` or ``case``: whether its current branch runs, and whether an earlier branch already ran."""

    def __init__(self, kind: str, subject: str | None = None) -> None:
        self.kind, self.subject = kind, subject
        self.active: bool | None = False
        self.taken: bool | None = False

    def branch(self, test: bool | None) -> None:
        self.active = _and(_not(self.taken), test)
        self.taken = True if self.taken is True or test is True else (None if None in (self.taken, test) else False)


def _assigned(found: re.Match[str] | None, stack: list[_Frame], value: str | None, where: str) -> str | None:
    """The arch list after an assignment line (``found``): its value where its branch runs, else ``value``."""
    if not found:
        return value
    runs = _and(*(f.active for f in stack))
    if runs is None:
        raise RecipeError(f"{where}: TORCH_CUDA_ARCH_LIST set under a test of a variable the variant does not give")
    return found[1] if runs else value


def shell_arch_list(script: str, env: dict[str, str], name: str) -> str | None:
    """The last ``export TORCH_CUDA_ARCH_LIST="…"`` that runs for ``env`` in a build.sh; RecipeError where one
    might run under a branch whose test reads a variable the variant does not give."""
    stack: list[_Frame] = []
    value: str | None = None
    for number, raw in enumerate(script.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        opening = re.fullmatch(r"(if|elif)\s+(.*?);\s*then", line)
        if opening:
            if opening[1] == "if":
                stack.append(_Frame("if"))
            elif not stack or stack[-1].kind != "if":
                raise RecipeError(f"{name}:{number}: elif outside an if")
            stack[-1].branch(_test(opening[2], env))
            continue
        if line == "else" and stack and stack[-1].kind == "if":
            stack[-1].branch(True)
            continue
        if line == "fi":
            stack.pop()
            continue
        case = re.fullmatch(r"case\s+(\S+)\s+in", line)
        if case:
            stack.append(_Frame("case", _value(case[1], env)))
            continue
        if line == "esac":
            stack.pop()
            continue
        if stack and stack[-1].kind == "case":
            pattern = re.fullmatch(r"\(?\s*(\S+?)\s*\)", line)
            if pattern and not line.startswith("$"):
                subject, glob = stack[-1].subject, pattern[1].strip('"')
                stack[-1].branch(None if subject is None else fnmatch.fnmatchcase(subject, glob))
                continue
            if line == ";;":
                stack[-1].active = False
                continue
        value = _assigned(re.fullmatch(r'export\s+TORCH_CUDA_ARCH_LIST="([^"]*)"', line), stack, value,
                          f"{name}:{number}")
    return value


def _bat_value(word: str, env: dict[str, str]) -> str | None:
    found = re.fullmatch(r"%([A-Za-z_][A-Za-z0-9_]*)(?::~(\d+),(\d+))?%", word)
    if found:
        known = env.get(found[1])
        if known is None:
            return None
        return known[int(found[2]): int(found[2]) + int(found[3])] if found[2] else known
    return None if "%" in word else word


def _bat_test(condition: str, env: dict[str, str]) -> bool | None:
    found = re.fullmatch(r'(not\s+)?"([^"]*)"\s*==\s*"([^"]*)"', condition.strip(), re.I)
    if not found:
        return None
    left, right = _bat_value(found[2], env), _bat_value(found[3], env)
    if left is None or right is None:
        return None
    return (left != right) if found[1] else (left == right)


def batch_arch_list(script: str, env: dict[str, str], name: str) -> str | None:
    """The same for a bld.bat: ``if "A"=="B" (`` blocks, ``) else if … (``, ``) else (``, ``)``."""
    stack: list[_Frame] = []
    value: str | None = None
    for number, raw in enumerate(script.splitlines(), 1):
        line = raw.strip()
        if not line or line.upper().startswith(("REM", "@REM", "::")):
            continue
        chained = re.fullmatch(r"\)\s*else\s+if\s+(.*)\(", line, re.I)
        if chained:
            stack[-1].branch(_bat_test(chained[1], env))
            continue
        if re.fullmatch(r"\)\s*else\s*\(", line, re.I):
            stack[-1].branch(True)
            continue
        if line == ")":
            stack.pop()
            continue
        opening = re.fullmatch(r"if\s+(.*)\(", line, re.I)
        if opening:
            frame = _Frame("if")
            frame.branch(_bat_test(opening[1], env))
            stack.append(frame)
            continue
        if line.endswith("("):  # a for loop or another block: its body runs as its enclosing block does
            frame = _Frame("block")
            frame.branch(True)
            stack.append(frame)
            continue
        value = _assigned(re.fullmatch(r'set\s+"TORCH_CUDA_ARCH_LIST=([^"]*)"', line, re.I), stack, value,
                          f"{name}:{number}")
    return value


# ---- the recipe ---------------------------------------------------------------------------------------------------

_JINJA = {"{{ cuda_compiler_version | replace('.', '') }}": "{cuda}", "{{ blas_impl }}": "{blas}",
          "{{ CONDA_PY }}": "{py}", "{{ PKG_HASH }}": "{hash}", "{{ build }}": "{number}"}


def _template(jinja: str, name: str) -> str:
    out = jinja
    for source, target in _JINJA.items():
        out = out.replace(source, target)
    if "{{" in out or "${{" in out:
        raise RecipeError(f"{name}: build string {jinja!r} has a part this script does not read")
    return out


def pytorch_recipe(meta: str, name: str) -> dict[str, Any]:
    """Build number, offsets, the pytorch output's build strings, and its ``__cuda`` / selector lines."""
    base = re.search(r"{%\s*set\s+build\s*=\s*([0-9]+)\s*%}", meta)
    if not base:
        raise RecipeError(f"{name}: no '{{% set build = N %}}'")
    cuda_offset = re.search(r'{%\s*if\s+cuda_compiler_version\s*!=\s*"None"\s*%}\s*{%\s*set\s+build\s*=\s*build\s*\+'
                            r'\s*([0-9]+)\s*%}', meta)
    mkl_offset = re.search(r'{%\s*if\s+blas_impl\s*==\s*"mkl"\s*%}\s*{%\s*set\s+build\s*=\s*build\s*\+\s*([0-9]+)'
                           r'\s*%}', meta)
    if not cuda_offset or not mkl_offset:
        raise RecipeError(f"{name}: the CUDA and MKL build-number offsets are not where this script reads them")
    output = re.search(r"^  - name: pytorch\s*$(.*?)^  - name: ", meta, re.M | re.S)
    if not output:
        raise RecipeError(f"{name}: no 'pytorch' output")
    section = output[1]
    found = re.findall(r'string:\s*(\S.*?)\s+#\s*\[cuda_compiler_version\s*(!=|==)\s*"None"\]', section)
    strings = {("cuda" if op == "!=" else "cpu"): text for text, op in found}
    if set(strings) != {"cuda", "cpu"}:
        raise RecipeError(f"{name}: the pytorch output's two build strings are not where this script reads them")
    return {
        "build_number": int(base[1]), "cuda_offset": int(cuda_offset[1]), "mkl_offset": int(mkl_offset[1]),
        "build_string": {kind: _template(text, name) for kind, text in strings.items()},
        # the osx builds' test asserts MPS (torch's Metal backend): the macOS arm64 build runs on the GPU
        "mps": bool(re.search(r'torch\.backends\.mps\.is_available\(\)"\s*#\s*\[osx\]', meta)),
        "cuda_run_dependency": bool(re.search(r'^\s*-\s*__cuda\s*#\s*\[cuda_compiler_version\s*!=\s*"None"\]',
                                               section, re.M)),
        "selectors": all(re.search(line, section, re.M) for line in (
            r'-\s*pytorch-gpu\s*{{\s*version\s*}}\s*#\s*\[cuda_compiler_version\s*!=\s*"None"\]',
            r'-\s*pytorch-cpu\s*<0\.0a0\s*#\s*\[cuda_compiler_version\s*!=\s*"None"\]',
            r'-\s*pytorch-cpu\s*{{\s*version\s*}}\s*#\s*\[cuda_compiler_version\s*==\s*"None"\]',
            r'-\s*pytorch-gpu\s*<0\.0a0\s*#\s*\[cuda_compiler_version\s*==\s*"None"\]')),
    }


def _python(pins: list[str]) -> list[str]:
    """``3.12.* *_cpython`` -> ``3.12``."""
    out = []
    for pin in pins:
        found = re.match(r"([0-9]+\.[0-9]+)\.\*", pin)
        if not found:
            raise RecipeError(f"python pin {pin!r} is not 'X.Y.* build'")
        out.append(found[1])
    return out


def _first(config: dict[str, Any], key: str) -> str | None:
    value = config.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 1:
        raise RecipeError(f"{key}: {value!r} is not one value")
    return str(value[0])


def pytorch_variants(directory: Path) -> list[dict[str, Any]]:
    """Each CI variant: subdir, CUDA, BLAS, ARM variant, C library floor, Pythons (per-Python files merged)."""
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for path in sorted((directory / ".ci_support").glob("*.yaml")):
        config = loads(read(path))
        if not isinstance(config, dict):
            raise RecipeError(f"{path.name}: not a mapping")
        if _first(config, "channel_targets") != "conda-forge main" or _first(config, "is_rc") not in (None, "False"):
            continue
        subdir = _first(config, "target_platform")
        if subdir not in SUBDIRS:
            raise RecipeError(f"{path.name}: target_platform {subdir!r}")
        cuda = _first(config, "cuda_compiler_version")
        cuda = None if cuda in (None, "None") else cuda
        blas = _first(config, "blas_impl") or "mkl"
        arm = _first(config, "arm_variant_type") if subdir == "linux-aarch64" and cuda else None
        stdlib = _first(config, "c_stdlib_version")
        floor_key = "macos" if subdir.startswith("osx") else "glibc" if subdir.startswith("linux") else None
        floor = (_first(config, "MACOSX_DEPLOYMENT_TARGET") or stdlib) if floor_key == "macos" else stdlib
        key = (subdir, cuda, blas, arm)
        row = merged.setdefault(key, {"subdir": subdir, "cuda": cuda, "blas": blas, "arm_variant": arm,
                                      "floor": {floor_key: floor} if floor_key and floor else {}, "python": []})
        row["python"] = sorted(set(row["python"]) | set(_python(config.get("python") or [])),
                               key=lambda v: tuple(map(int, v.split("."))))
    return list(merged.values())


def _arches(arch_list: str) -> dict[str, Any]:
    """``5.0;6.0;…;12.0+PTX`` -> cubins ``[50, 60, …, 120]`` and PTX ``[120]`` (CC × 10)."""
    sm: list[int] = []
    ptx: list[int] = []
    for part in arch_list.split(";"):
        found = re.fullmatch(r"([0-9]+)\.([0-9])(\+PTX)?", part.strip())
        if not found:
            raise RecipeError(f"arch list entry {part!r}")
        value = int(found[1]) * 10 + int(found[2])
        sm.append(value)
        if found[3]:
            ptx.append(value)
    return {"list": arch_list, "sm": sm, "ptx": ptx}


def activation(directory: Path) -> dict[str, str] | None:
    """Where a CUDA build records its arch list in the environment: build.sh writes the recipe's activate.sh, its
    ``@cf_torch_cuda_arch_list@`` replaced, as ``etc/conda/activate.d/libtorch_activate.sh`` (None before)."""
    script = directory / "recipe" / "activate.sh"
    build = read(directory / "recipe" / "build.sh")
    if not script.is_file():
        return None
    if 'export CF_TORCH_CUDA_ARCH_LIST="@cf_torch_cuda_arch_list@"' not in read(script) or \
            '"${PREFIX}/etc/conda/${CHANGE}.d/libtorch_${CHANGE}.sh"' not in build:
        raise RecipeError(f"{script}: the arch list's activation script is not written where this script reads it")
    return {"script": "etc/conda/activate.d/libtorch_activate.sh", "variable": "CF_TORCH_CUDA_ARCH_LIST"}


def pytorch_release(version: str, where: dict[str, str]) -> dict[str, Any]:
    directory = REFERENCE / "pytorch" / version
    recipe = pytorch_recipe(read(directory / "recipe" / "meta.yaml"), f"pytorch/{version}/recipe/meta.yaml")
    builds = []
    for variant in pytorch_variants(directory):
        number = recipe["build_number"] + (recipe["cuda_offset"] if variant["cuda"] else 0) + \
            (recipe["mkl_offset"] if variant["blas"] == "mkl" else 0)
        arches = None
        if variant["cuda"]:
            env = {"cuda_compiler_version": variant["cuda"], "target_platform": variant["subdir"],
                   "blas_impl": variant["blas"], "arm_variant_type": variant["arm_variant"] or "sbsa",
                   "PKG_NAME": "libtorch", "OSTYPE": "darwin" if variant["subdir"].startswith("osx") else
                   "linux-gnu"}
            if variant["subdir"] == "win-64":
                arch_list = batch_arch_list(read(directory / "recipe" / "bld.bat"), env,
                                            f"pytorch/{version}/recipe/bld.bat")
            else:
                arch_list = shell_arch_list(read(directory / "recipe" / "build.sh"), env,
                                            f"pytorch/{version}/recipe/build.sh")
            if not arch_list:
                raise RecipeError(f"pytorch {version} {variant['subdir']} CUDA {variant['cuda']}: no arch list")
            arches = _arches(arch_list)
        builds.append({**variant, "number": number, "arches": arches})
    builds.sort(key=lambda b: (SUBDIRS.index(b["subdir"]), b["cuda"] is None,
                               tuple(map(int, (b["cuda"] or "0").split("."))), b["blas"], b["arm_variant"] or ""))
    return {"version": version, "commit": where["commit"], "date": where["date"][:10], "ref": where["ref"],
            "build_number": recipe["build_number"], "build_string": recipe["build_string"],
            "cuda_run_dependency": recipe["cuda_run_dependency"], "selectors": recipe["selectors"],
            "activation": activation(directory), "mps": recipe["mps"],
            "python": sorted({p for b in builds for p in b["python"]}, key=lambda v: tuple(map(int, v.split(".")))),
            "builds": builds}


# ---- torchvision, torchaudio ----------------------------------------------------------------------------------------

_COMPANION_STRINGS = {
    # (prefix definition in the recipe's context, the string template) -> (cuda prefix, cpu prefix)
    "torchvision": (r'build_string_prefix:\s*\$\{\{\s*\("cuda"\s*~\s*\(cuda_compiler_version\s*\|\s*replace\("\.",'
                    r'\s*""\)\)\)\s*if\s+cuda_compiler_version\s*!=\s*"None"\s+else\s+"cpu"\s*\}\}',
                    r"string:\s*\$\{\{\s*build_string_prefix\s*\}\}_py\$\{\{\s*python\s*\|\s*version_to_buildstring"
                    r"\s*\}\}_h\$\{\{\s*hash\s*\}\}_\$\{\{\s*build_number\s*\}\}",
                    ("cuda{cuda}_py{py}_h{hash}_{number}", "cpu_py{py}_h{hash}_{number}")),
    "torchaudio": (r'cuda_build_string:\s*cuda\$\{\{\s*cuda_compiler_version\s*\|\s*version_to_buildstring\s*\}\}_\s*'
                   r'\n\s*string_prefix:\s*\$\{\{\s*"cpu_"\s+if\s+cuda_compiler_version\s*==\s*"None"\s+else\s+'
                   r'cuda_build_string\s*\}\}',
                   r"string:\s*\$\{\{\s*string_prefix\s*\}\}py\$\{\{\s*python\s*\|\s*version_to_buildstring\s*\}\}h"
                   r"\$\{\{\s*hash\s*\}\}_\$\{\{\s*build_number\s*\}\}",
                   ("cuda{cuda}_py{py}h{hash}_{number}", "cpu_py{py}h{hash}_{number}")),
}


def companion(package: str, sources: dict[str, Any]) -> dict[str, Any]:
    directory = REFERENCE / package
    recipe = read(directory / "recipe" / "recipe.yaml")
    name = f"{package}/recipe/recipe.yaml"
    version = re.search(r'^\s+version:\s*"([^"]+)"', recipe, re.M)
    number = re.search(r"^\s+build_number:\s*([0-9]+)", recipe, re.M)
    prefix, string, (cuda_template, cpu_template) = _COMPANION_STRINGS[package]
    if not version or not number or not re.search(prefix, recipe) or not re.search(string, recipe):
        raise RecipeError(f"{name}: version, build number or build string not where this script reads them")
    groups: dict[str, list[str]] = {}  # a variant's files, one per Python: the name without its Python
    for file_name in read(directory / "ci_support.txt").split():
        python = re.search(r"python([0-9]+\.[0-9]+)\.", file_name)
        if not python:
            raise RecipeError(f"{package}: no Python in {file_name}")
        groups.setdefault(re.sub(r"python[0-9.]+\.____cp[a-z0-9]*", "", file_name), []).append(file_name)
    builds: dict[tuple[Any, ...], dict[str, Any]] = {}
    pytorch = None
    for file_names in groups.values():
        file_name = file_names[0]
        found = re.match(r"(linux_64|linux_aarch64|win_64|osx_64|osx_arm64)_", file_name)
        if not found:
            raise RecipeError(f"{package}: variant file {file_name}")
        subdir = found[1].replace("_", "-", 1)
        cuda = re.search(r"cuda_compiler_version([0-9]+\.[0-9]+|None)", file_name)
        cuda_version = None if not cuda or cuda[1] == "None" else cuda[1]
        sample = next((n for n in file_names if "python3.12." in n), None)
        if sample is None:
            raise RecipeError(f"{package}: variant {file_name} has no Python 3.12 file")
        config = loads(read(directory / ".ci_support" / sample))
        arm = _first(config, "arm_variant_type") if subdir == "linux-aarch64" and cuda_version else None
        pytorch = _first(config, "pytorch") or pytorch
        builds[(subdir, cuda_version, file_name)] = {
            "subdir": subdir, "cuda": cuda_version, "arm_variant": arm,
            "python": [re.search(r"python([0-9]+\.[0-9]+)\.", n)[1] for n in file_names]}  # type: ignore[index]
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in builds.values():
        key = (row["subdir"], row["cuda"], row["arm_variant"])
        target = merged.setdefault(key, {**row, "python": []})
        target["python"] = sorted(set(target["python"]) | set(row["python"]),
                                  key=lambda v: tuple(map(int, v.split("."))))
    rows = sorted(merged.values(), key=lambda b: (SUBDIRS.index(b["subdir"]), b["cuda"] is None,
                                                  tuple(map(int, (b["cuda"] or "0").split("."))),
                                                  b["arm_variant"] or ""))
    where = sources["repositories"][package]
    return {"version": version[1], "build_number": int(number[1]), "pytorch": pytorch, "commit": where["commit"],
            "date": where["date"][:10], "build_string": {"cuda": cuda_template, "cpu": cpu_template},
            "builds": rows}


# ---- the selector packages ------------------------------------------------------------------------------------------

def cuda_version_package(sources: dict[str, Any]) -> dict[str, Any]:
    meta = read(REFERENCE / "cuda-version" / "recipe" / "meta.yaml")
    if not re.search(r'-\s*__cuda\s*>=\{\{\s*version\.split\("\.",\s*1\)\[0\]\s*\}\}', meta):
        raise RecipeError("cuda-version/recipe/meta.yaml: its __cuda constraint is not where this script reads it")
    config = loads(read(REFERENCE / "cuda-version" / "recipe" / "conda_build_config.yaml"))
    where = sources["repositories"]["cuda-version"]
    return {"versions": [str(v) for v in config["version"]], "constrains": "__cuda >={major}",
            "commit": where["commit"], "date": where["date"][:10]}


def arm_variant_package(sources: dict[str, Any]) -> dict[str, Any]:
    meta = read(REFERENCE / "arm-variant" / "recipe" / "meta.yaml")
    if not re.search(r"run_exports:\s*\n\s*strong:\s*\n\s*-\s*arm-variant \* \{\{ arm_variant_type \}\}", meta) or \
            "arm-variant=*=tegra" not in meta:
        raise RecipeError("arm-variant/recipe/meta.yaml: its run export or tegra advice is not where this script "
                          "reads it")
    where = sources["repositories"]["arm-variant"]
    return {"spec": "arm-variant=*={variant}", "run_export": "arm-variant * {variant}", "commit": where["commit"],
            "date": where["date"][:10]}


def build_table() -> dict[str, Any]:
    sources = json.loads(read(REFERENCE / "sources.json"))
    releases = [pytorch_release(version, where) for version, where in sources["pytorch"].items()]
    releases.sort(key=lambda r: tuple(map(int, r["version"].split("."))), reverse=True)
    return {
        "schema": 1,
        "channel": "conda-forge",
        "confidence_levels": {
            "observed": "seen in the channel's own metadata of a published package",
            "recipe": "read from the feedstock's recipe and CI variant files at the commit named",
            "inferred": "follows from the recipe and conda-forge's conventions, not read from a published package",
        },
        "confidence": {"builds": "recipe", "published": "inferred", "floor": "inferred", "cuda_version": "inferred",
                       "companions": "recipe"},
        "notes": {
            "published": "a variant of the recipe's CI was published: inferred (the channel was not read)",
            "floor": "a build's C library floor (glibc or macOS) is its CI variant's c_stdlib_version / "
                     "MACOSX_DEPLOYMENT_TARGET; that the package requires it (__glibc, __osx) comes from "
                     "conda-forge's sysroot and SDK run exports: inferred",
            "cuda_version": "a CUDA X.Y build depends on cuda-version >=X.Y,<X+1 through the CUDA compiler's run "
                            "export (cuda-version-feedstock README): inferred",
            "order": "within a release, conda's solver prefers the highest build number: the recipe adds 200 to "
                     "CUDA builds and 100 to MKL builds (recipe)",
        },
        "sources": {name: entry["url"] for name, entry in sources["repositories"].items()},
        "pytorch": releases,
        "torchvision": companion("torchvision", sources),
        "torchaudio": companion("torchaudio", sources),
        "cuda_version": cuda_version_package(sources),
        "arm_variant": arm_variant_package(sources),
    }


def dumps(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed table instead of writing")
    args = parser.parse_args(argv)
    try:
        text = dumps(build_table())
    except (RecipeError, OSError, KeyError) as exc:
        print(f"build_conda_forge: {exc}", file=sys.stderr)
        return 2
    if args.check:
        same = TABLE.is_file() and TABLE.read_text(encoding="utf-8") == text
        print("the committed table is what the captured files give" if same else
              f"{TABLE} differs from what the captured files give: run scripts/build_conda_forge.py")
        return 0 if same else 1
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
