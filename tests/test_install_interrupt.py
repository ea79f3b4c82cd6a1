"""install never loses the working torch: real pip, a real venv, real signals, a loopback index.

Ctrl-C (SIGINT to torch-install's process group, as a terminal sends it) or SIGINT to torch-install alone after
pip has moved the old torch aside: torch-install passes one interrupt on, waits, and afterwards torch imports —
the old one put back from pip's stash, or the new one if pip finished. A companion that fails after torch was
replaced is reported as such, with the command that goes back.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wheels import build_wheel, serve_wheels

pytestmark = pytest.mark.slow  # real pip, uv, venvs or processes

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and process groups")
PIP_ENV = {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
           "TORCH_INSTALL_DEFAULT_INDEX": "none"}


def _versions(python: Path, *names: str) -> list[str]:
    """What ``import`` gives for each package, and the metadata's version (they must agree)."""
    code = ("import importlib, importlib.metadata as m, sys\n"
            "for n in sys.argv[1:]:\n"
            "    mod = importlib.import_module(n); assert mod.__version__ == m.version(n), (mod.__version__, n)\n"
            "    print(mod.__version__)")
    done = subprocess.run([str(python), "-c", code, *names], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory: pytest.TempPathFactory, make_venv) -> Path:
    return make_venv(tmp_path_factory.mktemp("venv") / "env")


def _pins(python: Path, base: str, *packages: str) -> list[str]:
    argv = [sys.executable, "-m", "torch_install", "install", *packages, "--python", str(python), "--variant", "cpu",
            "--index-base", base, "--dry-run"]
    out = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **PIP_ENV}, check=True).stdout
    return [a for a in shlex.split(out.splitlines()[-1]) if "==" in a]


def _reset(python: Path, *wheels: Path) -> None:
    subprocess.run([str(python), "-m", "pip", "uninstall", "-q", "-y", "torch", "torchvision"],
                   env={**os.environ, **PIP_ENV}, capture_output=True)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    for leftover in site.glob("~*"):
        subprocess.run(["rm", "-rf", str(leftover)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", *map(str, wheels)],
                   env={**os.environ, **PIP_ENV}, check=True)


@posix_only
@pytest.mark.parametrize("whom", ["the process group (Ctrl-C)", "torch-install alone"])
def test_an_interrupt_after_pip_moved_torch_aside_leaves_a_working_torch(httpserver, tmp_path: Path,
                                                                          venv_python: Path, whom: str) -> None:
    base = httpserver.url_for("/whl").rstrip("/")
    (pin,) = _pins(venv_python, base)
    new_version = pin.split("==")[1]
    _reset(venv_python, build_wheel(tmp_path, "torch", "1.0.0+cpu"))
    serve_wheels(httpserver, "/whl/cpu", [build_wheel(tmp_path, "torch", new_version, files=20000)])
    log = tmp_path / "out.txt"
    with open(log, "wb") as out:
        ti = subprocess.Popen([sys.executable, "-m", "torch_install", "install", "--python", str(venv_python),
                               "--variant", "cpu", "--index-base", base], stdout=out, stderr=subprocess.STDOUT,
                              env={**os.environ, **PIP_ENV}, start_new_session=True)
        deadline = time.monotonic() + 120
        while b"Successfully uninstalled torch" not in log.read_bytes() and ti.poll() is None:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.01)
        if whom.startswith("the process group"):
            os.killpg(ti.pid, signal.SIGINT)
        else:
            os.kill(ti.pid, signal.SIGINT)
        code = ti.wait(timeout=120)
    text = log.read_text()
    assert code in (130, 0), text  # 0 only if pip had finished before the interrupt arrived
    (now,) = _versions(venv_python, "torch")
    assert now in ("1.0.0+cpu", new_version), text
    if code == 130 and now == "1.0.0+cpu":
        assert "torch 1.0.0+cpu put back from pip's stash" in text, text
    site = next(venv_python.parent.parent.glob("lib/python3*/site-packages"))
    assert sorted(p.name for p in site.glob("~*")) == [] or "pip's stash of the old files is left" in text, text
    assert "Traceback" not in text.split("Successfully uninstalled torch")[0]


def test_a_failing_companion_after_torch_was_replaced_says_what_changed(httpserver, tmp_path: Path,
                                                                         venv_python: Path) -> None:
    base = httpserver.url_for("/whl").rstrip("/")
    pins = dict(p.split("==") for p in _pins(venv_python, base, "torch", "torchvision"))
    _reset(venv_python, build_wheel(tmp_path, "torch", "1.0.0+cpu"),
           build_wheel(tmp_path, "torchvision", "0.1.0+cpu", requires=["torch"]))
    broken = tmp_path / "broken"
    broken.mkdir()
    serve_wheels(httpserver, "/whl/cpu", [build_wheel(tmp_path, "torch", pins["torch"]),
                        build_wheel(broken, "torchvision", pins["torchvision"], requires=["torch"],
                               extra={"../../../../evil.txt": b"x"})])  # pip refuses it at install time
    done = subprocess.run([sys.executable, "-m", "torch_install", "install", "torch", "torchvision", "--python",
                           str(venv_python), "--variant", "cpu", "--index-base", base],
                          capture_output=True, text=True, env={**os.environ, **PIP_ENV})
    assert done.returncode == 3, done.stderr
    error = done.stderr[done.stderr.index("torch-install: error:"):]
    assert "unchanged" not in error
    assert f"changed: torch 1.0.0+cpu -> {pins['torch']}" in error, error
    back = f"{venv_python} -m pip install torch==1.0.0+cpu --index-url {base}/cpu"
    assert f"to return to what was installed before: {back}" in error, error
    assert _versions(venv_python, "torch", "torchvision") == [pins["torch"], "0.1.0+cpu"]
