"""The fast lane starts no process (``conftest.py``): a fast test that starts one fails, naming what it started."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def test_a_fast_test_that_runs_a_process_fails() -> None:
    with pytest.raises(pytest.fail.Exception, match=r"test_fast_lane\.py::.* started a process \(subprocess\)"):
        subprocess.run([sys.executable, "-c", ""], check=False)


@pytest.mark.skipif(not hasattr(os, "posix_spawn"), reason="no posix_spawn on this OS")
def test_a_fast_test_that_spawns_a_process_fails() -> None:
    with pytest.raises(pytest.fail.Exception, match=r"started a process \(os\.posix_spawn\)"):
        os.posix_spawn("/bin/true", ["true"], {})


@pytest.mark.slow
def test_a_slow_test_runs_processes() -> None:
    assert subprocess.run([sys.executable, "-c", "print('ran')"], capture_output=True, text=True,
                          check=True).stdout == "ran\n"
