"""The installer: argv, PEP 668 refusal, and pip's rollback keeping the old torch when an install fails.

The rollback tests use a real virtual environment and a local PEP 503 index of tiny wheels built here with
zipfile; nothing touches the network.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.environment import install
from torch_install.environment import interpreter as interpreter_module
from torch_install.environment.interpreter import Interpreter, query_interpreter, this_interpreter
from torch_install.errors import EnvironmentFailure, InputError, NoBuild
from torch_install.machine import Machine
from torch_install.resolver.plan import Choice, Plan, Request
from wheels import build_wheel

pytestmark = pytest.mark.slow  # real pip, uv, venvs or processes


def make_plan(packages: dict[str, str], index_url: str | None, channel: str = "stable") -> Plan:
    choice = Choice(variant="cpu", torch=packages["torch"].split("+")[0], index_url=index_url, packages=packages)
    return Plan(machine=Machine(os="linux", arch="x86_64"), request=Request(packages=tuple(packages), channel=channel),
                choice=choice, gpu_accelerated=False)


def simple_index(root: Path, wheels: list[Path]) -> str:
    """A PEP 503 index (file:// URL) listing ``wheels`` under their project names."""
    projects: dict[str, list[Path]] = {}
    for wheel in wheels:
        projects.setdefault(wheel.name.split("-")[0], []).append(wheel)
    for project, files in projects.items():
        page = root / project
        page.mkdir(parents=True)
        links = "".join(f'<a href="{w.as_uri()}">{w.name}</a>\n' for w in files)
        (page / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    (root / "index.html").write_text("".join(f'<a href="{p}/">{p}</a>\n' for p in projects))
    return root.as_uri() + "/"


def venv_python(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def installed_version(python: Path, name: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({name!r}))"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("wheels")
    good_dir, broken_dir = root / "good", root / "broken"
    good_dir.mkdir()
    broken_dir.mkdir()
    return {
        "old": build_wheel(good_dir, "torch", "1.0.0+cpu"),
        "new": build_wheel(good_dir, "torch", "2.0.0+cpu"),
        # A wheel member that would land outside site-packages: pip refuses it while installing, after it
        # has already moved the old torch aside, so only its rollback can bring the old one back.
        "broken": build_wheel(broken_dir, "torch", "2.0.0+cpu", {"../../../../outside-site-packages.py": b"x = 1\n"}),
    }


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, make_venv) -> Path:
    path = tmp_path_factory.mktemp("venv") / "env"
    make_venv(path)
    return path


@pytest.fixture
def pip_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    monkeypatch.setenv("PIP_NO_INPUT", "1")
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)


def install_old_torch(env: Path, wheels: dict[str, Path]) -> None:
    subprocess.run([str(venv_python(env)), "-m", "pip", "install", "-q", "--no-index", "--force-reinstall",
                    str(wheels["old"])], check=True, env={**os.environ, "PIP_CONFIG_FILE": os.devnull})
    assert installed_version(venv_python(env), "torch") == "1.0.0+cpu"


def test_failed_install_keeps_the_previous_torch(env: Path, wheels: dict[str, Path], tmp_path: Path,
                                                 pip_offline: None) -> None:
    install_old_torch(env, wheels)
    index = simple_index(tmp_path / "simple", [wheels["broken"]])
    interpreter = query_interpreter(str(venv_python(env)))
    argv = install.plan_steps(make_plan({"torch": "2.0.0+cpu"}, index), interpreter)[0]
    assert "uninstall" not in argv and "--no-deps" not in argv
    with pytest.raises(EnvironmentFailure, match=r"pip failed \(exit code 1\)"):
        install.run_installer(argv)
    python = venv_python(env)
    assert installed_version(python, "torch") == "1.0.0+cpu"
    assert not (env.parent / "outside-site-packages.py").exists()
    code = "import torch; print(torch.__version__)"
    assert subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "1.0.0+cpu"


def test_successful_install_replaces_torch_in_one_transaction(env: Path, wheels: dict[str, Path], tmp_path: Path,
                                                              pip_offline: None) -> None:
    install_old_torch(env, wheels)
    index = simple_index(tmp_path / "simple", [wheels["old"], wheels["new"]])
    interpreter = query_interpreter(str(venv_python(env)))
    argv = install.plan_steps(make_plan({"torch": "2.0.0+cpu"}, index), interpreter)[0]
    assert argv[:4] == [interpreter.executable, "-m", "pip", "install"]
    assert install.run_installer(argv) == 0
    assert installed_version(venv_python(env), "torch") == "2.0.0+cpu"


def test_a_stash_left_by_a_killed_install_is_named_by_the_next_install(env: Path, wheels: dict[str, Path],
                                                                       tmp_path: Path, pip_offline: None,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """pip and torch-install killed together (a container stop, the OOM killer) right after pip moved torch aside:
    the next install says where the stash is, and installs."""
    install_old_torch(env, wheels)
    interpreter = query_interpreter(str(venv_python(env)))
    site = Path(interpreter.site_packages[0])
    for name in ("torch", "torch-1.0.0+cpu.dist-info"):
        (site / name).rename(site / ("~" + name[1:]))
    index = simple_index(tmp_path / "simple", [wheels["new"]])
    argv = install.plan_steps(make_plan({"torch": "2.0.0+cpu"}, index), interpreter)[0]
    assert install.run_installer(argv, interpreter) == 0
    err = capsys.readouterr().err
    assert "pip's stash from an earlier install that was stopped is still there" in err
    assert str(site / "~orch") in err and str(site / "~orch-1.0.0+cpu.dist-info") in err
    assert installed_version(venv_python(env), "torch") == "2.0.0+cpu"
    for name in ("~orch", "~orch-1.0.0+cpu.dist-info"):  # the environment is the module's: as the note advises
        shutil.rmtree(site / name)


def test_query_interpreter_reads_a_venv(env: Path) -> None:
    interpreter = query_interpreter(str(venv_python(env)))
    assert interpreter.in_venv is True
    assert interpreter.python.rstrip("t") == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert interpreter.externally_managed is False


@pytest.mark.skipif(os.name == "nt", reason="a shell-script interpreter wrapper")
def test_query_interpreter_never_waits_on_our_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrapper (pyenv shim, conda run) that reads stdin before starting Python must not hang the query
    on the terminal: it gets end-of-file at once."""
    wrapper = tmp_path / "python-wrapper"
    wrapper.write_text(f'#!/bin/sh\nIFS= read -r line\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(interpreter_module, "FACTS_TIMEOUT", 10.0)  # without the fix: an InputError after 10 s
    read_end, write_end = os.pipe()  # our stdin: a pipe that stays open and never delivers a line
    saved_stdin = os.dup(0)
    os.dup2(read_end, 0)
    try:
        interpreter = query_interpreter(str(wrapper))
    finally:
        os.dup2(saved_stdin, 0)
        for fd in (saved_stdin, read_end, write_end):
            os.close(fd)
    assert interpreter.python.rstrip("t") == f"{sys.version_info[0]}.{sys.version_info[1]}"


def test_query_interpreter_rejects_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^--python .*missing: no such file$"):
        query_interpreter(str(tmp_path / "missing"))
    script = tmp_path / "not-python"
    script.write_text("#!/bin/sh\necho hello\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    if os.name != "nt":
        with pytest.raises(InputError, match="not a Python 3 interpreter"):
            query_interpreter(str(script))


def test_externally_managed_python_is_refused_with_venv_commands(tmp_path: Path) -> None:
    (tmp_path / "EXTERNALLY-MANAGED").write_text("[externally-managed]\nError=use a venv\n")
    system = Interpreter(executable="/usr/bin/python3", version="3.12.4", stdlib=str(tmp_path), prefix="/usr",
                         base_prefix="/usr")
    plan = make_plan({"torch": "2.9.1+cpu"}, "https://download.pytorch.org/whl/cpu")
    assert system.externally_managed
    with pytest.raises(EnvironmentFailure) as caught:
        install.check_installable(plan, system)
    lines = str(caught.value).splitlines()
    assert "externally managed" in lines[0] and "PEP 668" in lines[0]
    assert lines[1:3] == ["  python3 -m venv .venv", "  .venv/bin/python -m pip install torch==2.9.1+cpu "
                                                     "--index-url https://download.pytorch.org/whl/cpu"]
    assert caught.value.exit_code == 3


def test_marker_inside_a_venv_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "EXTERNALLY-MANAGED").write_text("[externally-managed]\n")
    inside = Interpreter(executable="/tmp/env/bin/python", version="3.12.4", stdlib=str(tmp_path), prefix="/tmp/env",
                         base_prefix="/usr")
    install.check_installable(make_plan({"torch": "2.9.1+cpu"}, None), inside)


def test_uv_argv_targets_the_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_uv = tmp_path / "uv"
    fake_uv.write_text("#!/bin/sh\nexit 0\n")
    fake_uv.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    interpreter = Interpreter("/envs/a/bin/python", "3.12.4", prefix="/envs/a", base_prefix="/usr")
    plan = make_plan({"torch": "2.10.0.dev20251201+cpu"}, "https://download.pytorch.org/whl/nightly/cpu", "nightly")
    assert install.plan_steps(plan, interpreter, "uv")[0] == [
        str(fake_uv), "pip", "install", "--python", "/envs/a/bin/python", "torch==2.10.0.dev20251201+cpu",
        "--prerelease", "allow", "--default-index", "https://download.pytorch.org/whl/nightly/cpu"]


def test_missing_uv_is_an_environment_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentFailure, match="uv not found on PATH"):
        install.plan_steps(make_plan({"torch": "2.9.1+cpu"}, None), this_interpreter(), "uv")[0]
    dry = install.plan_steps(make_plan({"torch": "2.9.1+cpu"}, None), this_interpreter(), "uv",
                                 need_uv=False)[0]
    assert dry[:3] == ["uv", "pip", "install"]


def test_installer_runs_without_a_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[object, dict[str, object]]] = []

    class FakePopen:
        pid = 0

        def __init__(self, argv: object, **kwargs: object) -> None:
            calls.append((argv, kwargs))

        def wait(self) -> int:
            return 7

    monkeypatch.setattr(subprocess, "Popen", FakePopen)
    with pytest.raises(EnvironmentFailure, match=r"exit code 7"):
        install.run_installer(["/env/bin/python", "-m", "pip", "install", "torch==2.9.1+cpu; echo pwned"])
    ((argv, kwargs),) = calls
    assert isinstance(argv, list) and argv[-1] == "torch==2.9.1+cpu; echo pwned"
    assert not kwargs.get("shell")


def test_plan_without_choice_installs_nothing() -> None:
    plan = Plan(machine=Machine(), request=Request(), choice=None, gpu_accelerated=False)
    with pytest.raises(NoBuild, match="nothing to install") as raised:
        install.plan_steps(plan, this_interpreter())[0]
    assert raised.value.exit_code == 4


def test_cli_install_failure_exits_3_and_keeps_the_previous_torch(env: Path, wheels: dict[str, Path],
                                                                  tmp_path: Path, pip_offline: None,
                                                                  httpserver: object,
                                                                  capfd: pytest.CaptureFixture[str]) -> None:
    """`torch-install install` end to end against a loopback mirror whose torch wheel is broken."""
    import shlex

    from torch_install.cli import main

    install_old_torch(env, wheels)
    python = str(venv_python(env))
    base = httpserver.url_for("/whl").rstrip("/")  # type: ignore[attr-defined]
    common = ["install", "--python", python, "--variant", "cpu", "--index-base", base]
    assert main([*common, "--dry-run"]) == 0
    argv = shlex.split(capfd.readouterr().out)
    assert argv[-2:] == ["--index-url", f"{base}/cpu"]
    pin = argv[4]
    version = pin.split("==")[1]
    broken = build_wheel(tmp_path, "torch", version, {"../../../../outside-site-packages.py": b"x = 1\n"})
    httpserver.expect_request(f"/whl/cpu/{broken.name}").respond_with_data(  # type: ignore[attr-defined]
        broken.read_bytes(), content_type="application/octet-stream")
    page = f'<!DOCTYPE html><html><body><a href="/whl/cpu/{broken.name}">{broken.name}</a></body></html>'
    httpserver.expect_request("/whl/cpu/torch/").respond_with_data(page, content_type="text/html")  # type: ignore[attr-defined]

    code = main(common)
    out, err = capfd.readouterr()
    assert code == 3
    assert out.splitlines()[0] == shlex.join(argv)  # the command is printed before pip's own progress
    assert "Rolling back uninstall of torch" in out + err  # pip's own progress is streamed
    assert err.splitlines()[-1] == ("torch-install: error: pip failed (exit code 1); "
                                    "the packages installed before it ran are unchanged")
    assert installed_version(venv_python(env), "torch") == "1.0.0+cpu"
