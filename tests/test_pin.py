"""The build stays installed: `install --pin` writes a constraints file into the environment and names it in
the environment's pip.conf, so a later `pip install torchvision` from a default index that offers a newer plain
torch keeps the chosen build. Real pip, real venvs, loopback indexes; the machine's own pip configuration is
replaced by the test's (XDG_CONFIG_DIRS, HOME)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wheels import build_wheel, serve_wheels

pytestmark = pytest.mark.slow  # real pip, uv, venvs or processes

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout and pip.conf")


@pytest.fixture
def pip_env(tmp_path: Path) -> dict[str, str]:
    """pip reading only the test's configuration: a site-wide pip.conf that sets a constraint of its own."""
    xdg = tmp_path / "xdg"
    (xdg / "pip").mkdir(parents=True)
    site_wide = tmp_path / "site-wide-constraints.txt"
    site_wide.write_text("numpy<3\n")
    (xdg / "pip" / "pip.conf").write_text(f"[global]\nconstraint = {site_wide}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV", "UV_"))}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
               XDG_CONFIG_DIRS=str(xdg), PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1",
               TORCH_INSTALL_DEFAULT_INDEX="none")
    return env


def _installed(python: Path, name: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({name!r}))"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@posix_only
@pytest.mark.parametrize("pin", [True, False], ids=["pinned", "not pinned (the control)"])
def test_a_later_pip_install_keeps_the_pinned_build(httpserver, tmp_path: Path, pip_env: dict[str, str],
                                                    pin: bool, make_venv) -> None:
    python = make_venv(tmp_path / "env")
    base = httpserver.url_for("/whl").rstrip("/")
    torch_install = [sys.executable, "-m", "torch_install", "install", "--python", str(python), "--variant", "cpu",
                     "--index-base", base]
    dry = subprocess.run([*torch_install, "--dry-run"], capture_output=True, text=True, env=pip_env, check=True)
    chosen = next(a for a in dry.stdout.split() if a.startswith("torch==")).split("==")[1]
    public = chosen.split("+")[0]
    serve_wheels(httpserver, "/whl/cpu", [build_wheel(tmp_path, "torch", chosen)])
    default = tmp_path / "default"
    default.mkdir()
    serve_wheels(httpserver, "/simple", [build_wheel(default, "torch", "99.0"),  # a newer plain torch there
                                         build_wheel(default, "torchvision", "0.99", requires=["torch==99.0"]),
                                         build_wheel(default, "torchvision", "0.50", requires=[f"torch=={public}"])])
    done = subprocess.run([*torch_install, *(["--pin"] if pin else [])], capture_output=True, text=True, env=pip_env)
    assert done.returncode == 0, done.stderr
    assert _installed(python, "torch") == chosen
    if pin:
        prefix = tmp_path / "env"
        assert f"pinned torch=={chosen}: later pip installs in this environment keep them" in done.stderr
        assert (prefix / "torch-install-constraints.txt").read_text().splitlines()[1:] == [f"torch=={chosen}"]
        conf = (prefix / "pip.conf").read_text()  # the site-wide constraint stays in force beside the pin
        assert f"constraint = {tmp_path / 'site-wide-constraints.txt'} {prefix / 'torch-install-constraints.txt'}" \
            in conf
    later = subprocess.run([str(python), "-m", "pip", "install", "torchvision", "--index-url",
                            httpserver.url_for("/simple/")], capture_output=True, text=True, env=pip_env)
    assert later.returncode == 0, later.stderr
    if pin:
        assert (_installed(python, "torch"), _installed(python, "torchvision")) == (chosen, "0.50")
    else:
        assert (_installed(python, "torch"), _installed(python, "torchvision")) == ("99.0", "0.99")


@posix_only
def test_the_doctor_reports_a_missing_or_stale_pin(tmp_path: Path, pip_env: dict[str, str], make_venv) -> None:
    python = make_venv(tmp_path / "env", with_pip=False)
    site = next((tmp_path / "env" / "lib").glob("python3*/site-packages"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site),
                    str(build_wheel(tmp_path, "torch", "2.9.1+cpu"))], check=True,
                   env={**pip_env, "PIP_CONFIG_FILE": os.devnull})

    def codes() -> list[str]:
        done = subprocess.run([sys.executable, "-m", "torch_install", "doctor", "--json", "--python", str(python),
                               "--target", str(profile)], capture_output=True, text=True, env=pip_env)
        return [f["code"] for f in json.loads(done.stdout)["findings"] if f["code"].startswith("install-guard")]

    profile = tmp_path / "cpu.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.11", "glibc": "2.35", "gpus": []}))
    assert codes() == ["install-guard-missing"]
    (tmp_path / "env" / "torch-install-constraints.txt").write_text("torch==2.9.1+cpu\n")
    assert codes() == ["install-guard-stale"]  # written, but no pip.conf names it
    (tmp_path / "env" / "pip.conf").write_text(
        f"[install]\nconstraint = {tmp_path / 'env' / 'torch-install-constraints.txt'}\n")
    assert codes() == []
    (tmp_path / "env" / "torch-install-constraints.txt").write_text("torch==2.8.0+cpu\n")
    assert codes() == ["install-guard-stale"]
