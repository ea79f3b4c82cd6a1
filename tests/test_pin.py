"""The build stays installed: `install --pin` writes a constraints file into the environment and names it where pip
and uv read it, editing only its own part of the user's configuration. Real pip, real uv, real venvs, loopback
indexes; the machine's own pip configuration is replaced by the test's (XDG_CONFIG_DIRS, HOME)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wheels import build_wheel, serve_wheels

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout and pip.conf")]

TORCH = "2.13.0+cpu"  # a release whose companions carry the variant's label: a mismatched one can be told apart
VISION = "0.28.0"  # its torchvision, per the shipped matrix


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
               TORCH_INSTALL_DEFAULT_INDEX="none", UV_NO_CACHE="1", TORCH_INSTALL_CACHE_DIR=str(tmp_path / "cache"))
    return env


@pytest.fixture
def index(httpserver, tmp_path: Path) -> str:
    """A PyTorch-index stand-in (/whl/cpu: torch 2.13.0+cpu and 2.14.1+cpu, torchvision 0.28.0+cpu) and a default
    index stand-in (/simple: a newer plain torch, and the plain torchvision 0.28.0, a build for another variant)."""
    wheels = tmp_path / "wheels"
    (wheels / "default").mkdir(parents=True)
    serve_wheels(httpserver, "/whl/cpu", [build_wheel(wheels, "torch", TORCH),
                                          build_wheel(wheels, "torch", "2.14.1+cpu"),
                                          build_wheel(wheels, "torchvision", f"{VISION}+cpu",
                                                      requires=["torch==2.13.0"])])
    serve_wheels(httpserver, "/simple", [build_wheel(wheels / "default", "torch", "99.0"),
                                         build_wheel(wheels / "default", "torchvision", VISION,
                                                     requires=["torch==2.13.0"])])
    return httpserver.url_for("/whl").rstrip("/")


def _installed(python: Path, name: str) -> str | None:
    code = f"import importlib.metadata as m\ntry: print(m.version({name!r}))\nexcept m.PackageNotFoundError: print('-')"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    return None if out == "-" else out


def _torch_install(python: Path, base: str, env: dict[str, str], *args: str,
                   cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "torch_install", "install", "--python", str(python), "--variant",
                           "cpu", "--index-base", base, *args], capture_output=True, text=True, env=env, cwd=cwd)


def _pip(python: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "pip", *args], capture_output=True, text=True, env=env)


def test_a_later_install_of_a_companion_keeps_a_matching_pair_with_pip_and_uv(httpserver, index: str, tmp_path: Path,
                                                                             pip_env: dict[str, str],
                                                                             make_venv) -> None:
    project = tmp_path / "project"
    project.mkdir()
    python = make_venv(project / ".venv")
    done = _torch_install(python, index, pip_env, f"torch=={TORCH.split('+')[0]}", "--pin")
    assert done.returncode == 0, done.stderr
    pins = (project / ".venv" / "torch-install-constraints.txt").read_text().splitlines()[1:]
    assert pins == [f"torch=={TORCH}", f"torchvision=={VISION}+cpu", "torchaudio==2.11.1"]  # the release's match
    conf = (project / ".venv" / "pip.conf").read_text()  # the site-wide constraint stays in force beside the pin
    ours = project / ".venv" / "torch-install-constraints.txt"
    assert f"constraint = {tmp_path / 'site-wide-constraints.txt'} {ours}" in conf
    default = httpserver.url_for("/simple/")
    plain = _pip(python, pip_env, "install", "torchvision", "--index-url", default)  # its torchvision is another build
    assert plain.returncode != 0 and (_installed(python, "torch"), _installed(python, "torchvision")) == (TORCH, None)
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    assert f"uv pip reads no configuration of an environment: export UV_CONSTRAINT={ours} where uv pip installs " \
           "into it" in done.stderr
    by_uv = subprocess.run([uv, "pip", "install", "torchvision", "--index-url", default], capture_output=True,
                           text=True, env={**pip_env, "UV_CONSTRAINT": str(ours)}, cwd=project)  # finds ./.venv
    assert by_uv.returncode != 0 and "0.28.0+cpu" in by_uv.stderr, by_uv.stderr
    assert _installed(python, "torchvision") is None
    assert sorted(p.name for p in project.iterdir()) == [".venv"]  # no uv.toml: it would hold every uv run here
    right = _pip(python, pip_env, "install", "torchvision", "--index-url", f"{index}/cpu/")
    assert right.returncode == 0, right.stderr
    assert (_installed(python, "torch"), _installed(python, "torchvision")) == (TORCH, f"{VISION}+cpu")
    doctor = subprocess.run([sys.executable, "-m", "torch_install", "doctor", "--json", "--python", str(python),
                             "--target", str(_cpu_profile(tmp_path))], capture_output=True, text=True, env=pip_env)
    assert not [f["code"] for f in json.loads(doctor.stdout)["findings"] if f["code"].startswith("install-guard")]


def _cpu_profile(tmp_path: Path) -> Path:
    profile = tmp_path / "cpu.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.11", "glibc": "2.35", "gpus": []}))
    return profile


def test_without_the_pin_a_mismatched_companion_comes_in(httpserver, index: str, tmp_path: Path,
                                                          pip_env: dict[str, str], make_venv) -> None:
    """The control: what the pin prevents (the default index's torchvision, another build, beside the CPU torch;
    then its newer plain torch)."""
    python = make_venv(tmp_path / "env")
    assert _torch_install(python, index, pip_env, f"torch=={TORCH.split('+')[0]}").returncode == 0
    default = httpserver.url_for("/simple/")
    assert _pip(python, pip_env, "install", "torchvision", "--index-url", default).returncode == 0
    assert (_installed(python, "torch"), _installed(python, "torchvision")) == (TORCH, VISION)
    assert _pip(python, pip_env, "install", "-U", "torch", "--index-url", default).returncode == 0
    assert _installed(python, "torch") == "99.0"


def test_a_path_with_a_space_is_pinned_where_pip_reads_it(index: str, tmp_path: Path, pip_env: dict[str, str],
                                                          make_venv) -> None:
    """pip splits a configured constraint on whitespace: the file is named by its file: URL."""
    python = make_venv(tmp_path / "my env")
    assert _torch_install(python, index, pip_env, f"torch=={TORCH.split('+')[0]}", "--pin").returncode == 0
    conf = (tmp_path / "my env" / "pip.conf").read_text()
    assert "file://" in conf and "my%20env/torch-install-constraints.txt" in conf
    listed = _pip(python, pip_env, "install", "--dry-run", "--no-index", "--find-links", str(tmp_path / "wheels"),
                  "torch")
    assert listed.returncode == 0 and "Would install" not in listed.stdout, listed.stderr  # kept, not replaced


def test_an_existing_key_of_another_case_is_the_one_edited(index: str, tmp_path: Path, pip_env: dict[str, str],
                                                           make_venv) -> None:
    python = make_venv(tmp_path / "env")
    mine = tmp_path / "mine.txt"
    mine.write_text("")
    (tmp_path / "env" / "pip.conf").write_text(f"[install]\nConstraint = {mine}\n")
    assert _torch_install(python, index, pip_env, f"torch=={TORCH.split('+')[0]}", "--pin").returncode == 0
    assert (tmp_path / "env" / "pip.conf").read_text() == (
        f"[install]\nConstraint = {mine} {tmp_path / 'env' / 'torch-install-constraints.txt'}\n")
    assert _pip(python, pip_env, "list").returncode == 0  # pip still reads the file


def test_the_users_constraint_and_comments_stay(index: str, tmp_path: Path, pip_env: dict[str, str],
                                                make_venv) -> None:
    python = make_venv(tmp_path / "env")
    links = tmp_path / "links"
    links.mkdir()
    build_wheel(links, "userpkg", "1.0")
    build_wheel(links, "userpkg", "2.0")
    mine = tmp_path / "mine.txt"
    mine.write_text("userpkg==1.0\n")
    original = f"# proxy settings for the lab, keep\n[global]\n; set by our admin\nconstraint = {mine}\n"
    (tmp_path / "env" / "pip.conf").write_text(original)

    def would() -> str:
        done = _pip(python, pip_env, "install", "--dry-run", "--no-index", "--find-links", str(links), "userpkg")
        return next(line for line in done.stdout.splitlines() if "Would install" in line)

    assert would() == "Would install userpkg-1.0"
    assert _torch_install(python, index, pip_env, f"torch=={TORCH.split('+')[0]}", "--pin").returncode == 0
    after = (tmp_path / "env" / "pip.conf").read_text()
    assert after.startswith(original)  # every line the user wrote, in place
    # what was in force stays in force: this file's [global] value (it overrode the site-wide one), then the pin
    assert f"[install]\nconstraint = {mine} {tmp_path / 'env' / 'torch-install-constraints.txt'}\n" in after
    assert would() == "Would install userpkg-1.0"  # the user's constraint still in force


def test_its_own_pin_alone_in_force_follows_a_later_install(index: str, tmp_path: Path, pip_env: dict[str, str],
                                                              make_venv) -> None:
    """With no constraint of the user's in force, the resolver's check before the install leaves the pin out too."""
    (tmp_path / "xdg" / "pip" / "pip.conf").write_text("[global]\ntimeout = 30\n")
    python = make_venv(tmp_path / "env")
    assert _torch_install(python, index, pip_env, f"torch=={TORCH.split('+')[0]}", "--pin").returncode == 0
    other = _torch_install(python, index, pip_env, "torch==2.14.1")
    assert other.returncode == 0, other.stderr
    assert "the pin follows the new build: torch 2.13.0+cpu -> 2.14.1+cpu" in other.stderr
    assert _installed(python, "torch") == "2.14.1+cpu"


def test_an_install_that_installs_nothing_pins_nothing(index: str, tmp_path: Path, pip_env: dict[str, str],
                                                       make_venv) -> None:
    python = make_venv(tmp_path / "env")
    done = _torch_install(python, index, pip_env, f"torch=={TORCH.split('+')[0]}", "--pin", "--", "--dry-run")
    assert done.returncode == 0 and "not pinned: torch 2.13.0+cpu is not what is installed now" in done.stderr
    assert not (tmp_path / "env" / "torch-install-constraints.txt").exists()
    assert not (tmp_path / "env" / "pip.conf").exists()


def test_its_own_pin_follows_a_later_install_of_another_build(index: str, tmp_path: Path, pip_env: dict[str, str],
                                                             make_venv) -> None:
    python = make_venv(tmp_path / "env")
    assert _torch_install(python, index, pip_env, f"torch=={TORCH.split('+')[0]}", "--pin").returncode == 0
    other = _torch_install(python, index, pip_env, "torch==2.14.1")
    assert other.returncode == 0, other.stderr
    assert "the pin follows the new build: torch 2.13.0+cpu -> 2.14.1+cpu" in other.stderr
    assert _installed(python, "torch") == "2.14.1+cpu"
    assert "torch==2.14.1+cpu" in (tmp_path / "env" / "torch-install-constraints.txt").read_text()
    checked = _torch_install(python, index, pip_env, "torch==2.13.0", "--", "--no-index")  # pip finds nothing
    assert checked.returncode == 4 and "No matching distribution found for torch==2.13.0+cpu" in checked.stderr
    assert "torch==2.14.1+cpu" in (tmp_path / "env" / "torch-install-constraints.txt").read_text()  # not touched
    failed = _torch_install(python, index, pip_env, "torch==2.13.0", "--no-verify", "--", "--no-index")
    assert failed.returncode == 3 and _installed(python, "torch") == "2.14.1+cpu"
    assert "torch==2.14.1+cpu" in (tmp_path / "env" / "torch-install-constraints.txt").read_text()  # put back


def test_two_installs_into_one_environment_take_turns(index: str, tmp_path: Path, pip_env: dict[str, str],
                                                      make_venv) -> None:
    """The second run waits for the first (it says so) instead of interleaving with it: one torch at the end, its
    files and its metadata agreeing."""
    python = make_venv(tmp_path / "env")
    argv = [sys.executable, "-m", "torch_install", "install", "--python", str(python), "--variant", "cpu",
            "--index-base", index, "--no-verify"]  # each run reaches the lock at once
    first = subprocess.Popen([*argv, "torch==2.13.0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=pip_env)
    lock = tmp_path / "env" / ".torch-install.lock"
    import time

    deadline = time.monotonic() + 60
    while not (lock.exists() and lock.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.run([*argv, "torch==2.14.1"], capture_output=True, text=True, env=pip_env)
    first_out = first.communicate(timeout=120)
    assert first.returncode == 0 and second.returncode == 0, (first_out[1], second.stderr)
    assert "is installing into" in second.stderr and "waiting for it" in second.stderr
    site = next((tmp_path / "env" / "lib").glob("python3*/site-packages"))
    assert sorted(p.name for p in site.glob("torch-*.dist-info")) == ["torch-2.14.1+cpu.dist-info"]
    imported = subprocess.run([str(python), "-c", "import torch; print(torch.__version__)"], capture_output=True,
                              text=True).stdout.strip()
    assert imported == _installed(python, "torch") == "2.14.1+cpu"
    refused = subprocess.Popen([*argv, "torch==2.13.0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=pip_env)
    while not (lock.exists() and lock.read_text().strip()) and refused.poll() is None:
        time.sleep(0.02)
    at_once = subprocess.run([*argv, "torch==2.14.1", "--lock-timeout", "0"], capture_output=True, text=True,
                             env=pip_env)
    refused.communicate(timeout=120)
    if at_once.returncode == 3:  # the first still held the lock
        assert "runs one installer per environment at a time" in at_once.stderr


def test_the_doctor_reports_a_missing_or_stale_pin(tmp_path: Path, pip_env: dict[str, str], make_venv) -> None:
    python = make_venv(tmp_path / "env", with_pip=False)
    site = next((tmp_path / "env" / "lib").glob("python3*/site-packages"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site),
                    str(build_wheel(tmp_path, "torch", "2.9.1+cpu"))], check=True,
                   env={**pip_env, "PIP_CONFIG_FILE": os.devnull})

    def codes(**env: str) -> list[str]:
        done = subprocess.run([sys.executable, "-m", "torch_install", "doctor", "--json", "--python", str(python),
                               "--target", str(_cpu_profile(tmp_path))], capture_output=True, text=True,
                              env={**pip_env, **env})
        return [f["code"] for f in json.loads(done.stdout)["findings"] if f["code"].startswith("install-guard")]

    assert codes() == ["install-guard-missing"]
    (tmp_path / "env" / "torch-install-constraints.txt").write_text("torch==2.9.1+cpu\ntorchvision==0.24.1+cpu\n")
    assert codes() == ["install-guard-stale"]  # written, but no pip.conf names it
    (tmp_path / "env" / "pip.conf").write_text(
        f"[install]\nconstraint = {tmp_path / 'env' / 'torch-install-constraints.txt'}\n")
    assert codes() == []  # a pinned companion that is not installed is no stale pin
    assert codes(PIP_CONSTRAINT="/elsewhere.txt") == ["install-guard-stale"]  # pip takes the variable over the file
    (tmp_path / "env" / "torch-install-constraints.txt").write_text("torch==2.8.0+cpu\n")
    assert codes() == ["install-guard-stale"]


def test_a_package_built_against_torch_is_pinned_with_the_build_and_the_doctor_agrees(httpserver, tmp_path: Path,
                                                                                   pip_env: dict[str, str],
                                                                                   make_venv) -> None:
    """xformers from the build's own index: the pin keeps it, so a later plain `pip install -U xformers` (whose
    newest on the default index needs another torch) changes nothing."""
    wheels = tmp_path / "wheels"
    (wheels / "default").mkdir(parents=True)
    serve_wheels(httpserver, "/whl/cu126", [build_wheel(wheels, "torch", "2.10.0+cu126"),
                                            build_wheel(wheels, "xformers", "0.0.34+cu126",
                                                        requires=["torch==2.10.0"])])
    serve_wheels(httpserver, "/simple", [build_wheel(wheels / "default", "torch", "2.15.0"),
                                         build_wheel(wheels / "default", "xformers", "0.0.35",
                                                     requires=["torch>=2.15"])])
    index = httpserver.url_for("/whl").rstrip("/")
    python = make_venv(tmp_path / "env")
    done = subprocess.run([sys.executable, "-m", "torch_install", "install", "--python", str(python), "--variant",
                           "cu126", "--index-base", index, "torch", "xformers==0.0.34", "--pin"],
                          capture_output=True, text=True, env=pip_env)
    assert done.returncode == 0, done.stderr + done.stdout
    pins = (tmp_path / "env" / "torch-install-constraints.txt").read_text().splitlines()[1:]
    assert "torch==2.10.0+cu126" in pins and "xformers==0.0.34+cu126" in pins
    later = _pip(python, pip_env, "install", "-U", "xformers", "--index-url", httpserver.url_for("/simple/"))
    assert (_installed(python, "torch"), _installed(python, "xformers")) == ("2.10.0+cu126", "0.0.34+cu126"), \
        later.stdout + later.stderr
    doctor = subprocess.run([sys.executable, "-m", "torch_install", "doctor", "--json", "--python", str(python)],
                            capture_output=True, text=True, env=pip_env)
    assert not [f["code"] for f in json.loads(doctor.stdout)["findings"] if f["code"].startswith("install-guard")]


VERSION_PY = "__version__ = '{version}'\ndebug = False\ncuda = {cuda!r}\ngit_version = 'x'\nhip = None\nxpu = None\n"


def test_doctor_fix_installs_another_build_where_install_pin_pinned_this_one(httpserver, index: str, tmp_path: Path,
                                                                              pip_env: dict[str, str],
                                                                              make_venv) -> None:
    """`install --pin` of a CPU build, then `doctor --fix` on a GPU machine: the fix's build is not refused by the
    pin (pip's constraint), the pin follows it, and the environment has one torch."""
    python = make_venv(tmp_path / "env")
    pinned = _torch_install(python, index, pip_env, "torch==2.13.0", "--pin")
    assert pinned.returncode == 0, pinned.stderr
    gpu = tmp_path / "gpu.json"
    gpu.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.11", "glibc": "2.35",
                               "nvidia_driver": "550.54.15", "gpus": [{"vendor": "nvidia", "name": "RTX 4090"}]}))
    doctor = [sys.executable, "-m", "torch_install", "doctor", "--python", str(python), "--target", str(gpu),
              "--index-base", index]
    report = json.loads(subprocess.run([*doctor, "--json"], capture_output=True, text=True, env=pip_env).stdout)
    fix = report["fix"]
    assert fix["torch"] == "2.13.0" and fix["variant"].startswith("cu"), fix
    build = fix["packages"]["torch"]
    serve_wheels(httpserver, f"/whl/{fix['variant']}", [build_wheel(
        tmp_path, "torch", build, version_py=VERSION_PY.format(version=build, cuda=fix["variant"][2:4] + "." +
                                                               fix["variant"][4:]))])
    fixed = subprocess.run([*doctor, "--fix", "--yes"], capture_output=True, text=True, env=pip_env)
    assert "ResolutionImpossible" not in fixed.stdout + fixed.stderr and fixed.returncode != 3, fixed.stderr
    assert _installed(python, "torch") == build
    assert f"the pin follows the new build: torch {TORCH} -> {build}" in fixed.stderr
    assert f"torch=={build}" in (tmp_path / "env" / "torch-install-constraints.txt").read_text()
    site = next((tmp_path / "env" / "lib").glob("python3*/site-packages"))
    assert [p.name for p in site.glob("torch-*.dist-info")] == [f"torch-{build}.dist-info"]


def test_a_killed_torch_install_leaves_its_lock_to_its_pip(httpserver, tmp_path: Path, pip_env: dict[str, str],
                                                           make_venv) -> None:
    """torch-install killed (SIGKILL) while its pip installs: a second install waits for that pip, naming it, and
    the environment ends with one torch whose files match its RECORD. The first pip's download is held until the
    second is seen waiting."""
    import signal
    import threading
    import time

    from werkzeug import Response

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    held, newer = build_wheel(wheels, "torch", "2.13.0+cpu", files=200), build_wheel(wheels, "torch", "2.14.1+cpu")
    serve_wheels(httpserver, "/whl/cpu", [newer])
    release = threading.Event()

    def slow(_request: object) -> Response:
        release.wait(120)
        return Response(held.read_bytes())

    httpserver.expect_request(f"/whl/cpu/files/{held.name}").respond_with_handler(slow)
    page = "".join(f'<a href="/whl/cpu/files/{w.name}">{w.name}</a>\n' for w in (held, newer))
    httpserver.expect_request("/whl/cpu/torch/").respond_with_data(page, content_type="text/html")
    base = httpserver.url_for("/whl").rstrip("/")
    python = make_venv(tmp_path / "env")
    argv = [sys.executable, "-m", "torch_install", "install", "--python", str(python), "--variant", "cpu",
            "--index-base", base, "--no-verify"]  # the check would wait on the held file too
    first = subprocess.Popen([*argv, "torch==2.13.0"], env=pip_env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    lock = tmp_path / "env" / ".torch-install.lock"
    deadline = time.monotonic() + 120
    while "installer" not in (lock.read_text() if lock.exists() else ""):
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.02)
    installer = int(next(line for line in lock.read_text().splitlines() if line.startswith("installer")).split()[1])
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    second = subprocess.Popen([*argv, "torch==2.14.1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=pip_env)
    assert second.stderr is not None
    said = ""
    try:
        while "waiting for it" not in said:
            line = second.stderr.readline()
            assert line, said
            said += line
    finally:
        release.set()
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, said + err
    assert (f"the installer (pid {installer}), which torch-install (pid {first.pid}, since stopped) started, is "
            "installing into") in said
    site = next((tmp_path / "env" / "lib").glob("python3*/site-packages"))
    assert [p.name for p in site.glob("torch-*.dist-info")] == ["torch-2.14.1+cpu.dist-info"]
    import base64
    import csv
    import hashlib

    for row in csv.reader((site / "torch-2.14.1+cpu.dist-info" / "RECORD").read_text().splitlines()):
        if row[1]:
            digest = base64.urlsafe_b64encode(hashlib.sha256((site / row[0]).read_bytes()).digest()).rstrip(b"=")
            assert row[1] == f"sha256={digest.decode()}", row[0]


@pytest.mark.parametrize("conf", ["[install]\n    constraint = {mine}\n", "[install]\n\tconstraint = {mine}\n",
                                  "[install] extra\nconstraint = {mine}\n", "[ install ]\nconstraint = {mine}\n",
                                  "[install]\n  timeout = 60\n  constraint = {mine}\n"],
                         ids=["indented", "tab", "header-text", "spaced-header", "all-indented"])
def test_every_spelling_pip_reads_is_pinned_where_pip_reads_it(index: str, tmp_path: Path, pip_env: dict[str, str],
                                                              make_venv, conf: str) -> None:
    """After the pin, pip still reads the file (pip list works), the user's constraint is in force where it was,
    and a downgrade of torch is refused."""
    python = make_venv(tmp_path / "env")
    links = tmp_path / "links"
    links.mkdir()
    build_wheel(links, "torch", "1.0.0+cpu")
    for version in ("1.0", "2.0"):
        build_wheel(links, "userpkg", version)
    mine = tmp_path / "mine.txt"
    mine.write_text("userpkg==1.0\n")
    (tmp_path / "env" / "pip.conf").write_text(conf.format(mine=mine))
    in_force = "Would install userpkg-1.0" in _pip(python, pip_env, "install", "--dry-run", "--no-index",
                                                   "--find-links", str(links), "userpkg").stdout
    done = _torch_install(python, index, pip_env, "torch==2.13.0", "--pin")
    assert done.returncode == 0, done.stderr
    assert _pip(python, pip_env, "list").returncode == 0
    would = _pip(python, pip_env, "install", "--dry-run", "--no-index", "--find-links", str(links), "userpkg").stdout
    assert ("Would install userpkg-1.0" in would) == in_force  # the user's constraint as before
    down = _pip(python, pip_env, "install", "--dry-run", "--no-index", "--find-links", str(links), "torch==1.0.0+cpu")
    assert down.returncode != 0 and "torch==2.13.0+cpu" in down.stdout + down.stderr
    listed = _pip(python, pip_env, "config", "list").stdout
    assert "install.constraint='" in listed and "torch-install-constraints.txt" in listed


def test_a_constraint_in_pip_config_file_stays_in_force_beside_the_pin(index: str, tmp_path: Path,
                                                                       pip_env: dict[str, str], make_venv) -> None:
    """PIP_CONFIG_FILE's [global] constraint loses to any [install] one: the pin carries it, with a note; its
    [install] constraint would replace the pin: that is said."""
    python = make_venv(tmp_path / "env")
    links = tmp_path / "links"
    links.mkdir()
    for version in ("1.0", "2.0"):
        build_wheel(links, "userpkg", version)
    mine = tmp_path / "mine.txt"
    mine.write_text("userpkg==1.0\n")
    team = tmp_path / "team-pip.ini"
    team.write_text(f"[global]\nconstraint = {mine}\n")
    env = {**pip_env, "PIP_CONFIG_FILE": str(team)}
    done = _torch_install(python, index, env, "torch==2.13.0", "--pin")
    assert done.returncode == 0, done.stderr
    would = _pip(python, env, "install", "--dry-run", "--no-index", "--find-links", str(links), "userpkg").stdout
    assert "Would install userpkg-1.0" in would
    assert "replaces the pin" not in done.stderr and f"also names {mine}, in force from {team} [global]" in done.stderr
    team.write_text(f"[install]\nconstraint = {mine}\n")
    (tmp_path / "env" / "torch-install-constraints.txt").unlink()
    again = _torch_install(python, index, env, "torch==2.13.0", "--pin", "--", "--force-reinstall")
    assert f"{team} [install] sets constraint = {mine}, which replaces the pin" in again.stderr


def test_the_pin_keeps_each_files_mode_and_edits_a_linked_pyproject_through_its_link(index: str, tmp_path: Path,
                                                                                     pip_env: dict[str, str],
                                                                                     make_venv) -> None:
    import stat

    project = tmp_path / "project"
    project.mkdir()
    python = make_venv(project / ".venv")
    shared = tmp_path / "shared-pyproject.toml"
    shared.write_text('[project]\nname = "demo"\ndependencies = ["torch"]\n\n[tool.uv]\n'
                      'dev-dependencies = ["pytest"]\n')
    (project / "pyproject.toml").symlink_to(shared)
    (project / ".venv" / "pip.conf").write_text("[global]\ntimeout = 77\n")
    os.chmod(shared, 0o664)
    os.chmod(project / ".venv" / "pip.conf", 0o644)
    done = _torch_install(python, index, pip_env, "torch==2.13.0", "--pin")
    assert done.returncode == 0, done.stderr
    assert (project / "pyproject.toml").is_symlink() and 'index = "torch-install-cpu"' in shared.read_text()
    modes = {p.name: stat.S_IMODE(os.stat(p).st_mode) for p in (shared, project / ".venv" / "pip.conf")}
    assert modes == {"shared-pyproject.toml": 0o664, "pip.conf": 0o644}
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(project / ".venv" / "torch-install-constraints.txt").st_mode) == 0o666 & ~umask


def test_a_pyproject_the_pin_cannot_edit_is_left_whole_with_one_true_line(index: str, tmp_path: Path,
                                                                          pip_env: dict[str, str], make_venv) -> None:
    cases = {
        "over the limit": ('[project]\nname = "demo"\n[tool.uv]\n' + "# pad\n" * 800_000 + "[tool.ruff]\nx = 1\n",
                           "larger than 4 MiB: not read (torch-install never edits part of a file)"),
        "a string": ('[project]\nname = "demo"\n[tool.uv]\nsources = "numpy<2"\n',
                     "its tool.uv.sources is not a table (uv refuses it too)"),
        "not TOML": ('[project]\nname = "demo"\n[tool.uv]\nx = \n', "not valid TOML"),
        "tool not a table": ('tool = 5  # [tool.uv]\n[project]\nname = "demo"\n', "its tool.uv is not a table"),
    }
    for case, (text, line) in cases.items():
        project = tmp_path / case
        project.mkdir()
        python = make_venv(project / ".venv")
        pyproject = project / "pyproject.toml"
        pyproject.write_text(text)
        done = _torch_install(python, index, pip_env, "torch==2.13.0", "--pin")
        assert done.returncode == 0, done.stderr
        assert pyproject.read_text() == text  # never cut, never rewritten
        assert "uv's pin was not written: " in done.stderr and line in done.stderr, done.stderr


def test_a_uv_toml_is_never_written_nor_changed(index: str, tmp_path: Path, pip_env: dict[str, str],
                                                make_venv) -> None:
    """uv.toml is read by every uv run in its directory, for any environment, and uv sync takes no constraints from
    it: the pin of a project goes into its pyproject's sources, and a uv.toml there stays as it is."""
    project = tmp_path / "project"
    project.mkdir()
    python = make_venv(project / ".venv")
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\ndependencies = ["torch"]\n[tool.uv]\nx = 1\n')
    (project / "uv.toml").write_text("# ours\nnative-tls = true\n")
    done = _torch_install(python, index, pip_env, "torch==2.13.0", "--pin")
    assert done.returncode == 0, done.stderr
    assert (project / "uv.toml").read_text() == "# ours\nnative-tls = true\n"
    assert (project / "pyproject.toml").read_text().startswith('[project]\nname = "demo"\ndependencies = ["torch"]\n'
                                                               "[tool.uv]\nx = 1\n")
    assert "[tool.uv.sources]" in (project / "pyproject.toml").read_text()
    alone = tmp_path / "alone"
    alone.mkdir()
    assert _torch_install(make_venv(alone / ".venv"), index, pip_env, "torch==2.13.0", "--pin").returncode == 0
    assert sorted(p.name for p in alone.iterdir()) == [".venv"]


def test_unpin_puts_back_exactly_what_was_there(index: str, tmp_path: Path, pip_env: dict[str, str],
                                                make_venv) -> None:
    project = tmp_path / "project"
    project.mkdir()
    python = make_venv(project / ".venv")
    conf, pyproject = project / ".venv" / "pip.conf", project / "pyproject.toml"
    conf.write_bytes(b"# lab\r\n[install]\r\n    timeout = 60\r\n")
    pyproject.write_bytes(b'[project]\r\nname = "demo"\r\ndependencies = ["torch"]\r\n\r\n[tool.uv]\r\n'
                          b'constraint-dependencies = ["numpy<2"]\r\n')
    before = {p: p.read_bytes() for p in (conf, pyproject)}
    assert _torch_install(python, index, pip_env, "torch==2.13.0", "--pin").returncode == 0
    assert _torch_install(python, index, pip_env, "torch==2.14.1").returncode == 0  # the pin follows: still one undo
    assert b'index = "torch-install-cpu"' in pyproject.read_bytes() and b'"numpy<2"' in pyproject.read_bytes()
    unpin = [sys.executable, "-m", "torch_install", "unpin", "--python", str(python)]
    done = subprocess.run(unpin, capture_output=True, text=True, env=pip_env)
    assert done.returncode == 0, done.stderr
    assert {p: p.read_bytes() for p in (conf, pyproject)} == before
    assert sorted(p.name for p in (project / ".venv").glob("torch-install*")) == []
    down = _pip(python, pip_env, "install", "--dry-run", "--no-index", "--find-links", str(tmp_path / "wheels"),
                f"torch=={TORCH}")
    assert down.returncode == 0 and "Would install torch-2.13.0+cpu" in down.stdout  # no pin any more
    again = subprocess.run(unpin, capture_output=True, text=True, env=pip_env)
    assert again.returncode == 0 and "nothing to undo" in again.stderr
    assert _torch_install(python, index, pip_env, "torch==2.13.0", "--pin").returncode == 0
    conf.write_text(conf.read_text() + "# my own line since\n")
    left = subprocess.run(unpin, capture_output=True, text=True, env=pip_env)
    assert left.returncode == 1 and f"{conf}: changed since torch-install wrote it: left as it is" in left.stderr
    assert (project / ".venv" / "torch-install-constraints.txt").exists()  # pip.conf still names it
    assert pyproject.read_bytes() == before[pyproject]


def test_a_large_pyproject_under_the_limit_is_edited_whole(index: str, tmp_path: Path, pip_env: dict[str, str],
                                                          make_venv) -> None:
    project = tmp_path / "project"
    project.mkdir()
    python = make_venv(project / ".venv")
    text = ('[project]\nname = "demo"\nversion = "0.1"\ndependencies = ["torch"]\n\n[tool.uv]\n'
            'dev-dependencies = ["pytest"]\n'
            + "".join(f"# a long comment block, line {i:07d} {'x' * 40}\n" for i in range(22000))
            + "\n[tool.ruff]\nline-length = 100\n")
    (project / "pyproject.toml").write_text(text)
    assert len(text) > 1 << 20
    done = _torch_install(python, index, pip_env, "torch==2.13.0", "--pin")
    assert done.returncode == 0, done.stderr
    after = (project / "pyproject.toml").read_text()
    assert after.startswith(text.split("\n\n[tool.ruff]")[0]) and after.endswith("\n[tool.ruff]\nline-length = 100\n")
    assert 'index = "torch-install-cpu"' in after
