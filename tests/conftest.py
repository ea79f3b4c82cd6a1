"""Every test runs without the network: the default index (which --online also reads) is none unless a test
serves a loopback replica of it.

Two lanes: tests marked ``slow`` build virtual environments, run real pip or uv, start processes or wait out real
time limits; ``pytest -m "not slow"`` is the lane to run while working, ``pytest`` runs both.

The property tests (hypothesis) draw the same examples on every run, from a fixed seed per test, so a lane passes
or fails for the code and not for the draw; the counted properties (a fast path against its reference, a reader fed
random input) draw a few in the fast lane and their full count in the slow lane (``lanes.py``).
``TORCH_INSTALL_EXPLORE=1`` draws new ones each run (and ``TORCH_INSTALL_FUZZ_SCALE=N`` draws N times as many in
``tests/test_fuzz.py``). An input a search finds goes in as an ``@example``.

A test of the fast lane starts no process: one that does (a child Python, pip, uv, a venv) fails, naming what it
started; it belongs in the slow lane (``@pytest.mark.slow``).

Virtual environments come from one template per session (``make_venv``): building a venv with pip costs about
2 s of ensurepip, copying the template a fraction of that.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("explore" if os.environ.get("TORCH_INSTALL_EXPLORE") else "repeatable")

# The command line run in this process (cli.main) reads its messages as the console script's does: without argparse's
# search for a message catalogue on disk at each message (cli.console turns it off the same way).
setattr(argparse, "_", str)  # noqa: B010 (argparse's own name for gettext)


def pytest_configure(config: pytest.Config) -> None:
    """The counted properties' count for this run (``lanes.py``): few when the run leaves the slow tests out."""
    import lanes

    lanes.full_counts = "not slow" not in (config.getoption("markexpr") or "")


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[object]:
    """What collection builds (the modules, the tables they load, the items) lives for the whole run: built with
    the cyclic garbage collector off, then collected once and frozen, so that the collections the tests' own
    objects call for do not walk it again each time (the console script does the same: ``cli.console``). The
    tests' own objects are collected in batches of ``YOUNG_COLLECTION`` allocations rather than the default 700:
    most live for one test, and each early collection walks the survivors again."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.enable()
        gc.collect()
        gc.freeze()
        gc.set_threshold(YOUNG_COLLECTION, *gc.get_threshold()[1:])


YOUNG_COLLECTION = 10_000  # allocations between two collections of the youngest generation (CPython's default: 700)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a run of the full counts, the counted properties are slow tests too, so ``-m slow`` runs them."""
    import lanes

    if lanes.full_counts:
        for item in items:
            if any(item.get_closest_marker(mark) for mark in lanes.MARKS):
                item.add_marker(pytest.mark.slow)


# ---- a fast test starts no process ------------------------------------------------------------------------------

_fast_test: list[str] = []  # the fast test running now (its node id), while one is


def _refused(start: Callable[..., Any], what: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        if _fast_test:
            pytest.fail(f"{_fast_test[0]} started a process ({what}): a fast test starts none (mark it slow)",
                        pytrace=False)
        return start(*args, **kwargs)

    return refuse


def _guard_process_starts() -> None:
    """Every way this interpreter starts a process, refused while a fast test runs: subprocess (and asyncio's, which
    is built on it), the fork and spawn calls, os.system, and the fork-exec multiprocessing calls directly."""
    subprocess.Popen._execute_child = _refused(subprocess.Popen._execute_child, "subprocess")
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system"):
        if hasattr(os, name):
            setattr(os, name, _refused(getattr(os, name), f"os.{name}"))
    try:
        import _posixsubprocess
    except ImportError:  # Windows
        return
    _posixsubprocess.fork_exec = _refused(_posixsubprocess.fork_exec, "fork_exec")


_guard_process_starts()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """A test not marked slow runs (its fixtures' setup and teardown too) with process starts refused."""
    fast = item.get_closest_marker("slow") is None
    if fast:
        _fast_test.append(item.nodeid)
    try:
        yield
    finally:
        if fast:
            _fast_test.clear()


@pytest.fixture(scope="session")
def _no_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("no-config")


@pytest.fixture(autouse=True)
def no_default_index(monkeypatch: pytest.MonkeyPatch, _no_config: Path) -> None:
    """No default index, no environment chosen, and none of this machine's own pip configuration (its site-wide
    and user files: a constraint there would bound every plan); a test that wants one writes its own."""
    monkeypatch.setenv("TORCH_INSTALL_DEFAULT_INDEX", "none")
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX", "PIP_CONSTRAINT"):  # the environment is each test's to set
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(_no_config))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(_no_config))


def _copy_venv(template: Path, target: Path) -> None:
    """A copy of a venv at ``target``: links kept, and the template's path in its scripts (shebangs, activate)
    and pyvenv.cfg rewritten to the new place, so nothing of the copy acts on the template."""
    shutil.copytree(template, target, symlinks=True)
    old, new = str(template).encode(), str(target).encode()
    bindir = target / ("Scripts" if os.name == "nt" else "bin")
    for path in [*bindir.iterdir(), target / "pyvenv.cfg"]:
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if old in data:
            path.write_bytes(data.replace(old, new))


@pytest.fixture(scope="session")
def make_venv(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``make_venv(path, with_pip=True) -> python``: a fresh virtual environment at ``path`` (copied from the
    session's template), and its interpreter."""
    templates: dict[bool, Path] = {}

    def make(path: Path, with_pip: bool = True) -> Path:
        if with_pip not in templates:
            where = tmp_path_factory.mktemp("venv-template") / ("with-pip" if with_pip else "bare")
            argv = [sys.executable, "-m", "venv", *([] if with_pip else ["--without-pip"]), str(where)]
            subprocess.run(argv, check=True, capture_output=True)
            templates[with_pip] = where
        _copy_venv(templates[with_pip], path)
        return path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    return make
