"""What each common command imports, read from ``python -X importtime`` of the command run as its console script
runs it: a heavy module on the plain ``plan``/``detect`` path, or ``requests`` on a warm ``--online`` plan, fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from index_pages import html_page, parse_row
from profiles import profile

pytestmark = pytest.mark.slow

# start-up costs a plain plan or detect never needs (CPU ms on a 2-core machine: typing 9, requests 220)
HEAVY = ("typing", "packaging", "packaging.requirements", "requests", "urllib3", "inspect", "dataclasses",
         "tempfile", "shutil", "configparser", "html.parser", "email", "logging", "subprocess", "tomllib", "tomlkit",
         "locale")
CONSOLE_SCRIPT = "import sys; from torch_install.cli import console; sys.exit(console())"


def imported(args: list[str], env: dict[str, str] | None = None) -> set[str]:
    """The modules a run of ``torch-install ARGS`` imports (every name importtime lists)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", CONSOLE_SCRIPT, *args], capture_output=True,
                          text=True, env={**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none", **(env or {})},
                          timeout=60)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize("args", [
    ["plan", "--target", "PROFILE", "--format", "json"],
    ["plan", "--target", "PROFILE"],
    ["plan"],
    ["plan", "--format", "pip"],
    ["detect"],
    ["detect", "--json"],
    ["matrix", "--target", "PROFILE"],
], ids=" ".join)
def test_a_plain_command_imports_nothing_heavy(args: list[str], tmp_path: Path) -> None:
    args = [profile(tmp_path) if a == "PROFILE" else a for a in args]
    modules = imported(args)
    assert "torch_install.cli" in modules  # the parse did see the run
    assert sorted(modules.intersection(HEAVY)) == []


def test_a_plain_plan_for_a_profile_loads_neither_the_companion_table_nor_a_detector(tmp_path: Path) -> None:
    modules = imported(["plan", "--target", profile(tmp_path), "--format", "json"])
    assert "torch_install.resolver.choose" in modules
    assert sorted(m for m in modules if m.startswith(("torch_install.resolver.companion", "torch_install.project.",
                                                      "torch_install.detectors.n", "torch_install.detectors.a"))
                  ) == ["torch_install.project.gather"]


def test_other_packages_are_planned_without_packagings_parser(tmp_path: Path) -> None:
    modules = imported(["plan", "torch", "torchvision", "transformers", "numpy<2", "accelerate>=1.0,!=1.2",
                        "--target", profile(tmp_path), "--format", "json"])
    assert "torch_install.project.gather" in modules
    assert sorted(modules.intersection(HEAVY)) == []


@pytest.mark.parametrize("packages", [["xformers"], ["vllm==0.7.3"], ["torch", "torchao", "torch-scatter"]],
                         ids=" ".join)
def test_packages_of_the_companion_table_are_planned_without_packaging(packages: list[str], tmp_path: Path) -> None:
    modules = imported(["plan", *packages, "--target", profile(tmp_path), "--format", "json"])
    assert "torch_install.resolver.companions" in modules
    assert sorted(modules.intersection(HEAVY)) == []


def test_a_warm_online_plan_imports_no_http_client(httpserver, tmp_path: Path) -> None:
    rows = [parse_row("cu134 torch-2.16.0+cu134-cp312-cp312-manylinux_2_28_x86_64.whl >=3.11")]
    tag = '"page-1"'
    httpserver.expect_request("/whl/torch/", headers={"If-None-Match": tag}).respond_with_data(
        "", status=304, headers={"ETag": tag})
    httpserver.expect_request("/whl/torch/").respond_with_data(html_page("torch", rows), content_type="text/html",
                                                                headers={"ETag": tag})
    env = {"TORCH_INSTALL_CACHE_DIR": str(tmp_path / "cache"), "TORCH_INSTALL_INDEX_RETRIES": "0"}
    args = ["plan", "--online", "--index-base", httpserver.url_for("/whl"), "--target", profile(tmp_path),
            "--format", "json"]
    assert "requests" in imported(args, env)  # cold: the page is fetched
    requests_made = len(httpserver.log)
    warm = imported(args, env)
    assert len(httpserver.log) == requests_made
    assert "torch_install.index.learn" in warm
    assert sorted(warm.intersection(HEAVY)) == []
    revalidated = imported(args, {**env, "TORCH_INSTALL_INDEX_TTL": "0"})  # a conditional GET, answered 304
    assert len(httpserver.log) == requests_made + 1 and httpserver.log[-1][1].status_code == 304
    assert "requests" in revalidated
    assert sorted(revalidated.intersection({"dataclasses", "inspect", "html", "html.parser", "packaging"})) == []
    assert "torch_install.index.pages" not in revalidated  # the page is not read, nor its patterns compiled


LOADED = """
import contextlib, io, json, sys
from torch_install.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    main(sys.argv[1:])
print(json.dumps(sorted(sys.modules)))
"""


def loaded(args: list[str]) -> set[str]:
    """The modules in the process after ``main(ARGS)``: every one imported, however late."""
    done = subprocess.run([sys.executable, "-c", LOADED, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none"})
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    return set(json.loads(done.stdout.splitlines()[-1]))


ARCHIVES = {"tarfile", "gzip", "bz2", "lzma", "shutil", "zipfile"}


@pytest.mark.parametrize("command", [["detect", "--json"], ["plan", "--format", "json"]], ids=" ".join)
def test_a_captured_tree_loads_no_archive_module(command: list[str]) -> None:
    sysroot = Path(__file__).parent / "fixtures" / "sysroots" / "nvidia-8xh100"
    modules = loaded([*command, "--sysroot", str(sysroot)])
    assert "torch_install.capture" in modules  # --sysroot was read
    assert sorted(modules & ARCHIVES) == []


def test_each_plan_format_loads_its_own_renderer_and_the_plans(tmp_path: Path) -> None:
    from torch_install.render import _RENDERERS

    for fmt, (module, _) in _RENDERERS.items():
        modules = loaded(["plan", "--target", profile(tmp_path), "--format", fmt])
        renderers = {m.rsplit(".", 1)[1] for m in modules if m.startswith("torch_install.render.")}
        writer = {"json_text"} if fmt == "json" else set()  # the JSON format's writer of indented JSON
        assert renderers == {"plan", module, *writer}, fmt
