"""`torch-install unpin`: every file the pin changed put back exactly as it was, in a real environment; nothing to
undo is no error. (install --pin, then unpin, with real pip: test_pin.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.environment.pin import write_pin

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout")]


def _unpin(python: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    return subprocess.run([sys.executable, "-m", "torch_install", "unpin", "--python", str(python)],
                          capture_output=True, text=True, env=env)


def test_unpin_puts_back_the_pip_configuration_and_removes_the_pin(tmp_path: Path, make_venv) -> None:
    prefix = tmp_path / "env"
    python = make_venv(prefix)
    nothing = _unpin(python)
    assert nothing.returncode == 0 and f"nothing to undo: {prefix} has no pin of torch-install's" in nothing.stderr
    conf = prefix / "pip.conf"
    conf.write_bytes(b"[global]\r\n  timeout = 5\r\n")
    os.chmod(conf, 0o640)
    write_pin(str(prefix), ["torch==2.9.1+cpu"], {"HOME": str(tmp_path)})
    assert b"constraint = " in conf.read_bytes()
    done = _unpin(python)
    assert done.returncode == 0, done.stderr
    assert conf.read_bytes() == b"[global]\r\n  timeout = 5\r\n" and oct(os.stat(conf).st_mode & 0o777) == "0o640"
    assert sorted(p.name for p in prefix.glob("torch-install*")) == []
    assert f"{conf}: put back as it was" in done.stderr
