"""The doctor reads an inspected environment's files defensively: a FIFO, an endless or huge file, a directory or a
link loop where a dist-info file or version.py should be is a finding, never a hang or a crash."""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from doctor_cases import MACHINES, codes, interpreter
from resolve_cases import TEST_MATRIX
from torch_install.doctor import diagnose
from torch_install.doctor.inspect import Installed, inspect_environment
from torch_install.environment.dists import MAX_METADATA, MAX_RECORD, read_file

FIXTURES = Path(__file__).parent / "fixtures" / "site-packages"
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this OS")
TORCH_DIST = "torch-2.9.1.dist-info"
CUBLAS_DIST = "nvidia_cublas_cu12-12.8.4.1.dist-info"


def healthy_site(tmp_path: Path) -> Path:
    site = tmp_path / "site-packages"
    shutil.copytree(FIXTURES / "healthy-2.9.1-cu128", site)
    return site


def replace_with_fifo(path: Path) -> Path:
    path.unlink()
    os.mkfifo(path)
    return path


def within(seconds: float, fifos: list[Path], work: Callable[[], object]) -> object:
    """``work()``'s answer; a test failure (not a hung run) when it blocks, e.g. opening a FIFO."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in fifos:  # let a reader blocked in open() go
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(5)
        pytest.fail(f"blocked on one of {[f.name for f in fifos]}")
    assert result, "the work raised; see the thread's exception above"
    return result[0]


def diagnosis(site: Path, machine: str = "rtx4090-570", fifos: list[Path] | None = None):  # noqa: ANN201
    def work() -> tuple[Installed, object]:
        installed = inspect_environment(interpreter(site))
        return installed, diagnose(MACHINES[machine], installed, TEST_MATRIX, environ={})

    return within(30, fifos or [], work)


def broken_evidence(report: object) -> list[str]:
    return [line for f in report.findings if f.code == "broken-install" for line in f.evidence]  # type: ignore


@needs_fifo
def test_fifos_in_place_of_every_file_the_doctor_reads(tmp_path: Path) -> None:
    site = healthy_site(tmp_path)
    dist = site / TORCH_DIST
    fifos = [replace_with_fifo(site / "torch" / "version.py"),
             *(replace_with_fifo(dist / name) for name in ("METADATA", "WHEEL", "INSTALLER", "RECORD"))]
    os.mkfifo(site / "torchaudio.egg-link")
    fifos.append(site / "torchaudio.egg-link")
    installed, report = diagnosis(site, fifos=fifos)
    assert installed.builds["torch"].problem == "not a regular file"
    torch = installed.dist("torch")
    assert torch.problems == ("METADATA not a regular file", "INSTALLER not a regular file",
                              "WHEEL not a regular file", "RECORD not a regular file")
    assert torch.record_size() is None
    egg = next(d for d in installed.dists if d.kind == "egg-link")
    assert egg.problems == ("egg-link not a regular file",)
    assert report.exit_code == 1
    assert f"{site / 'torch' / 'version.py'}: not a regular file" in broken_evidence(report)
    assert f"{dist}: METADATA not a regular file" in broken_evidence(report)


@needs_fifo
def test_a_fifo_record_of_a_cuda_runtime_does_not_hang_the_size_count(tmp_path: Path) -> None:
    site = healthy_site(tmp_path)
    fifo = replace_with_fifo(site / CUBLAS_DIST / "RECORD")
    installed, report = diagnosis(site, "no-gpu", [fifo])
    assert "cuda-wheel-on-cpu-machine" in codes(report, "warning")
    cublas = installed.dist("nvidia-cublas-cu12")
    assert cublas.problems == ("RECORD not a regular file",) and cublas.record_size() is None


def test_files_over_their_size_cap_are_not_read(tmp_path: Path) -> None:
    site = healthy_site(tmp_path)
    dist = site / TORCH_DIST
    metadata = (dist / "METADATA").read_text()
    (dist / "METADATA").write_text(metadata + "\n" + "x" * MAX_METADATA)  # a huge description body
    (dist / "INSTALLER").write_text("pip" + " " * 300 + "\n")
    version_py = site / "torch" / "version.py"
    version_py.write_text(version_py.read_text() + "#" * MAX_METADATA + "\n")
    with (dist / "RECORD").open("ab") as record:
        record.truncate(MAX_RECORD + 1)  # sparse: no disk used
    installed, report = diagnosis(site)
    torch = installed.dist("torch")
    assert torch.problems == (f"METADATA larger than {MAX_METADATA} bytes, not read",
                              "INSTALLER larger than 256 bytes, not read",
                              f"RECORD larger than {MAX_RECORD} bytes, not read")
    assert torch.version == "2.9.1"  # from the directory name
    assert torch.record_size() is None
    assert installed.builds["torch"].problem == f"larger than {MAX_METADATA} bytes, not read"
    assert "broken-install" in codes(report, "error")


def test_a_directory_or_a_link_loop_instead_of_a_file(tmp_path: Path) -> None:
    site = healthy_site(tmp_path)
    dist = site / TORCH_DIST
    (dist / "WHEEL").unlink()
    (dist / "WHEEL").mkdir()
    (dist / "METADATA").unlink()
    (dist / "METADATA").symlink_to("METADATA.loop")
    (dist / "METADATA.loop").symlink_to("METADATA")
    (dist / "RECORD").unlink()
    (dist / "RECORD").symlink_to("RECORD")
    installed, report = diagnosis(site)
    problems = installed.dist("torch").problems
    assert problems[0].startswith("METADATA unreadable (too many levels of symbolic links")
    assert problems[1] == "WHEEL not a regular file"
    assert problems[2].startswith("RECORD unreadable (too many levels of symbolic links")
    assert len(problems) == 3 and "broken-install" in codes(report, "error")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_a_file_without_read_permission_is_a_finding(tmp_path: Path) -> None:
    site = healthy_site(tmp_path)
    version_py = site / "torch" / "version.py"
    version_py.chmod(0)
    try:
        installed, report = diagnosis(site)
    finally:
        version_py.chmod(0o644)
    assert installed.builds["torch"].problem == "unreadable (permission denied)"
    assert f"{version_py}: unreadable (permission denied)" in broken_evidence(report)


def test_read_file_answers(tmp_path: Path) -> None:
    (tmp_path / "WHEEL").write_text("Wheel-Version: 1.0\n")
    assert read_file(str(tmp_path / "WHEEL")) == ("Wheel-Version: 1.0\n", None)
    assert read_file(str(tmp_path / "WHEEL"), 19) == ("Wheel-Version: 1.0\n", None)  # exactly the cap: read
    assert read_file(str(tmp_path / "WHEEL"), 18) == (None, "larger than 18 bytes, not read")
    assert read_file(str(tmp_path / "absent")) == (None, "missing")
    assert read_file(str(tmp_path / "WHEEL" / "under-a-file")) == (None, "missing")
    assert read_file(str(tmp_path)) == (None, "not a regular file")
