"""The install transaction's failure points, tested once here for every caller (install, doctor --fix): files a
pin edits refused before anything runs; a step that fails, an interrupt, the pin put back exactly as it was; the
lock held by the installer itself, so a killed torch-install never lets a second install in; a lock file that is
no regular file. Steps are real processes (the slow lane); the refusals before any process need none."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from torch_install.environment import pin as pins
from torch_install.environment.interpreter import Interpreter
from torch_install.environment.lock import environment_lock, start_time
from torch_install.environment.transaction import Step, run_transaction
from torch_install.errors import EXIT_INTERRUPTED, EnvironmentFailure, InputError
from torch_install.machine import Machine
from torch_install.resolver.plan import Choice, Plan, Request

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals, FIFOs and flock")


def _plan(torch: str) -> Plan:
    choice = Choice(variant="cpu", torch=torch.split("+")[0], index_url="https://download.pytorch.org/whl/cpu",
                    packages={"torch": torch})
    return Plan(machine=Machine(os="linux", arch="x86_64"), request=Request(), choice=choice, gpu_accelerated=False)


def _environment(tmp_path: Path, pinned: str | None = "torch==2.13.0+cpu") -> Interpreter:
    """An environment's layout (prefix, an empty site-packages), with torch-install's pin when ``pinned``."""
    prefix = tmp_path / "env"
    (prefix / "site").mkdir(parents=True)
    if pinned:
        (prefix / pins.CONSTRAINTS_FILE).write_text(f"{pins.HEADER}\n{pinned}\n")
    return Interpreter(executable=sys.executable, version="3.12.4", site_packages=(str(prefix / "site"),),
                       prefix=str(prefix), base_prefix="/usr")


def _step(code: str) -> Step:
    return Step((sys.executable, "-c", textwrap.dedent(code)))


@posix_only
@pytest.mark.parametrize("kind", ["fifo", "invalid"])
def test_a_pin_file_that_cannot_be_edited_stops_the_transaction_before_any_step(tmp_path: Path, kind: str) -> None:
    interpreter = _environment(tmp_path)
    conf = Path(interpreter.prefix) / "pip.conf"
    if kind == "fifo":
        os.mkfifo(conf)
    else:
        conf.write_text("[install]\nconstraint = a\nconstraint = b\n")
    marker = tmp_path / "ran"
    with pytest.raises(InputError, match=rf"pip configuration: {conf}: ") as refused:
        run_transaction(interpreter, _plan("2.14.1+cpu"), [_step(f"open({str(marker)!r}, 'w')")], pin=True)
    assert "\n" not in str(refused.value) and not marker.exists()
    assert (Path(interpreter.prefix) / pins.CONSTRAINTS_FILE).read_text().endswith("torch==2.13.0+cpu\n")


@posix_only
def test_a_lock_file_that_is_no_regular_file_is_one_line(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".torch-install.lock")
    with pytest.raises(EnvironmentFailure, match=r"\.torch-install\.lock, the lock of .* is not a regular file: "
                                                 r"remove it"), environment_lock(str(tmp_path), 0):
        pass


@posix_only
def test_the_holder_is_named_by_pid_and_start_time(tmp_path: Path) -> None:
    """A live holder is named; a torch-install gone while its installer runs on is named as such; a pid that lives
    again under another start time is not taken for its holder."""
    import fcntl

    with environment_lock(str(tmp_path), 0), pytest.raises(
            EnvironmentFailure, match=rf"^torch-install \(pid {os.getpid()}\) is "), environment_lock(str(tmp_path), 0):
        pass
    lock = tmp_path / ".torch-install.lock"
    ours = f"{os.getpid()} {start_time(os.getpid())}"
    for text, holder in [(f"torch-install 999999999 1\ninstaller {ours}\n",
                          rf"the installer \(pid {os.getpid()}\), which torch-install \(pid 999999999, since stopped\) "
                          "started, is installing"),
                         (f"torch-install {os.getpid()} 1\n", "another torch-install is installing")]:
        lock.write_text(text)
        fd = os.open(lock, os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            with pytest.raises(EnvironmentFailure, match=holder), environment_lock(str(tmp_path), 0):
                pass
        finally:
            os.close(fd)


@pytest.mark.slow
@posix_only
def test_a_failing_step_puts_the_followed_pin_back_and_says_what_the_first_did(tmp_path: Path) -> None:
    interpreter = _environment(tmp_path)
    constraints = Path(interpreter.prefix) / pins.CONSTRAINTS_FILE
    before = constraints.read_bytes()
    seen = tmp_path / "seen.txt"
    first = Step(_step(f"import shutil; shutil.copy({str(constraints)!r}, {str(seen)!r})").argv,
                 installs_build=True)
    with pytest.raises(EnvironmentFailure) as failed:
        run_transaction(interpreter, _plan("2.14.1+cpu"), [first, _step("raise SystemExit(1)")])
    assert "torch==2.14.1+cpu" in seen.read_text()  # the pin followed the new build while the steps ran
    assert constraints.read_bytes() == before  # and is back as it was
    assert str(failed.value).startswith("python failed (exit code 1)") or "failed (exit code 1)" in str(failed.value)
    assert "step 2 of 2 failed; step 1 had installed the chosen build (torch 2.14.1+cpu)" in str(failed.value)


@pytest.mark.slow
@posix_only
def test_an_interrupt_is_passed_on_and_the_pin_put_back(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    interpreter = _environment(tmp_path)
    constraints = Path(interpreter.prefix) / pins.CONSTRAINTS_FILE
    before = constraints.read_bytes()
    stopped = tmp_path / "stopped"
    step = _step(f"""
        import os, signal, time
        try:
            os.kill(os.getppid(), signal.SIGINT)  # as a Ctrl-C reaches torch-install alone
            time.sleep(30)
        except KeyboardInterrupt:  # passed on by torch-install
            open({str(stopped)!r}, "w").close()
            raise SystemExit(130)
    """)
    outcome = run_transaction(interpreter, _plan("2.14.1+cpu"), [step, _step("raise SystemExit('never run')")])
    assert outcome.code == EXIT_INTERRUPTED and stopped.exists()
    assert constraints.read_bytes() == before
    assert "interrupted; pip stopped (exit code 130)" in capfd.readouterr().err


@pytest.mark.slow
@posix_only
def test_the_lock_outlives_a_killed_torch_install_while_its_installer_runs(tmp_path: Path) -> None:
    """torch-install is killed (SIGKILL: nothing of it runs on) while its installer works: the lock stays held by
    the installer, a second run is refused naming it, and the lock is free once the installer ends."""
    interpreter = _environment(tmp_path, pinned=None)
    started = tmp_path / "started"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from torch_install.environment.interpreter import Interpreter
        from torch_install.environment.transaction import Step, run_transaction
        interpreter = Interpreter(executable=sys.executable, version="3.12.4", prefix={interpreter.prefix!r},
                                  site_packages={interpreter.site_packages!r})
        step = Step((sys.executable, "-c", "import time; open({str(started)!r}, 'w').close(); time.sleep(60)"))
        run_transaction(interpreter, None, [step])
    """)], start_new_session=True)
    deadline = time.monotonic() + 60
    while not started.exists():
        assert time.monotonic() < deadline and holder.poll() is None
        time.sleep(0.05)
    lines = (Path(interpreter.prefix) / ".torch-install.lock").read_text().splitlines()
    installer = int(next(line for line in lines if line.startswith("installer")).split()[1])
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    try:
        with pytest.raises(EnvironmentFailure, match=rf"the installer \(pid {installer}\), which torch-install "
                                                     rf"\(pid {holder.pid}, since stopped\) started, is installing"), \
                environment_lock(interpreter.prefix, 0):
            pass
    finally:
        os.kill(installer, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while True:  # the installer's end frees the lock
        try:
            with environment_lock(interpreter.prefix, 0):
                break
        except EnvironmentFailure:
            assert time.monotonic() < deadline
            time.sleep(0.1)
