"""A capture archive's headers are read as tarfile reads them before tarfile does: sizes as ``nti`` parses them (a
sign, an underscore or a negative base-256 size is refused, never read as 0), data skipped only where tarfile skips
it, extended headers that resize or make a member sparse refused, and the totals bounded before any member is read.
Only a gzip-compressed or plain tar is read; anything else, and every refusal, is one line naming the path."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tar_headers import header, member, pax
from torch_install.capture import MAX_ARCHIVE_BYTES, MAX_HEADER_BYTES, read_capture
from torch_install.cli import main
from torch_install.errors import InputError

HOST = b'{"system": "Linux", "machine": "x86_64", "python_version": "3.12.1"}'


def archive(tmp_path: Path, *members: bytes, name: str = "capture.tar.gz") -> str:
    path = tmp_path / name
    path.write_bytes(gzip.compress(member(b"_host.json", HOST) + b"".join(members) + b"\0" * 1024))
    return str(path)


def refused(path: str, words: str) -> str:
    with pytest.raises(InputError) as err:
        read_capture(path)
    message = str(err.value)
    assert words in message and "\n" not in message, message
    assert message.count(f"--sysroot {path}") == 1, message
    return message


@pytest.mark.parametrize("size", [b"+0000000012\0", b"0_000000012\0", b"-0000000012\0", b" +12       \0",
                                  b"0000000012\t\0"])
def test_a_size_written_with_a_sign_or_an_underscore_is_refused(tmp_path: Path, size: bytes) -> None:
    refused(archive(tmp_path, member(b"proc/version", b"Linux version 6\n", size=size)),
            "which tar readers read differently")


def test_a_negative_base_256_size_is_refused(tmp_path: Path) -> None:
    negative = b"\xff" + b"\xff" * 10 + b"\xf0"
    refused(archive(tmp_path, member(b"x", b"", size=negative)), "which tar readers read differently")


def test_a_base_256_size_counts_against_the_total(tmp_path: Path) -> None:
    huge = b"\x80" + (MAX_ARCHIVE_BYTES * 4).to_bytes(11, "big")
    refused(archive(tmp_path, member(b"x", b"", size=huge)), "archive too large for a capture")


def test_the_plus_sign_pax_bomb_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A PAX header sized "+10000000000" (1 GiB to tarfile, 0 to a reader of octal digits only)."""
    bomb = header(b"././@PaxHeader", b"+%011o" % (1 << 30), b"x") + b"\0" * (1 << 20)
    refused(archive(tmp_path, bomb), "a member size written '+10000000000'")


def test_a_long_header_over_its_limit_is_refused(tmp_path: Path) -> None:
    refused(archive(tmp_path, member(b"././@LongLink", b"n" * (MAX_HEADER_BYTES + 1), b"L")),
            f"an archive header of {MAX_HEADER_BYTES + 1} bytes")


def test_a_link_with_a_size_hides_nothing(tmp_path: Path) -> None:
    """tarfile reads no data after a link, a directory or a device whatever its size says, so neither does the
    check: the 1 GiB PAX header that follows is seen (a check that skipped the link's "data" missed it)."""
    link = header(b"sys/driver", 1024, b"2")
    bomb = header(b"././@PaxHeader", 1 << 30, b"x") + b"\0" * 1024
    refused(archive(tmp_path, link, bomb), f"an archive header of {1 << 30} bytes")
    old_directory = header(b"sys/dir/", 1024, b"\0")  # a V7 directory: a regular type and a name ending in /
    refused(archive(tmp_path, old_directory, bomb), f"an archive header of {1 << 30} bytes")


@pytest.mark.parametrize(("records", "words"), [
    ({"size": "999999999999"}, "resizes a member"), ({"size": "12"}, "resizes a member"),
    ({"GNU.sparse.map": "0,1"}, "makes it sparse"), ({"GNU.sparse.major": "1"}, "makes it sparse"),
])
def test_extended_headers_that_resize_or_sparsify_are_refused(tmp_path: Path, records: dict[str, str],
                                                              words: str) -> None:
    refused(archive(tmp_path, pax(records), member(b"x", b"12")), words)


def test_a_malformed_extended_header_is_refused(tmp_path: Path) -> None:
    bad = member(b"././@PaxHeader", b"99 path=x\n", b"x")  # its length says 99, it holds 10
    refused(archive(tmp_path, bad, member(b"x", b"")), "a malformed extended (PAX) header at byte 0")


def test_a_sparse_member_is_refused(tmp_path: Path) -> None:
    refused(archive(tmp_path, member(b"sparse", b"x", b"S")), "'sparse': a sparse file")


def test_an_extended_header_with_a_path_is_read(tmp_path: Path) -> None:
    long_name = "sys/" + "d" * 150 + "/version"
    tree = read_capture(archive(tmp_path, pax({"path": long_name}), member(b"ignored", b"1.0\n")))
    assert tree.files[long_name] == b"1.0\n"


@pytest.mark.parametrize(("compress", "words"), [
    (lzma.compress, "an xz-compressed file"), (bz2.compress, "a bzip2-compressed file"),
    (lambda data: _zipped(data), "a zip archive"),
])
def test_another_format_named_tar_gz_is_named(tmp_path: Path, compress: object, words: str) -> None:
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w") as out:
        info = tarfile.TarInfo("_host.json")
        info.size = len(HOST)
        out.addfile(info, io.BytesIO(HOST))
    path = tmp_path / "capture.tar.gz"
    path.write_bytes(compress(tar.getvalue()))  # type: ignore[operator]
    refused(str(path), f"{words}; a capture is a gzip-compressed tar (.tar.gz)")


def _zipped(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive_file:
        archive_file.writestr("capture.tar", data)
    return out.getvalue()


def test_a_file_that_is_no_archive_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "capture.tar.gz"
    path.write_bytes(os.urandom(4096) + b"\x1f\x8b")
    assert main(["detect", "--sysroot", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a readable capture archive" in err, err
    gz = tmp_path / "junk.tar.gz"
    gz.write_bytes(gzip.compress(os.urandom(4096)))
    assert main(["detect", "--sysroot", str(gz)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.count("--sysroot") == 1, err


def test_too_large_is_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = archive(tmp_path, member(b"big", b"", size=MAX_ARCHIVE_BYTES * 2))  # found at its header
    assert main(["detect", "--sysroot", path]) == 2
    err = capsys.readouterr().err
    assert err == f"torch-install: error: --sysroot {path}: archive too large for a capture\n"


@pytest.mark.slow
def test_a_pax_bomb_costs_no_memory(tmp_path: Path) -> None:
    """256 MiB of PAX header behind a "+" size, as a 1 MiB .tar.gz: refused at its header, in a few MiB."""
    path = tmp_path / "capture.tar.gz"
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write(header(b"././@PaxHeader", b"+%011o" % (256 << 20), b"x"))
        for _ in range(256):
            out.write(b"\0" * (1 << 20))
        out.write(member(b"_host.json", HOST) + b"\0" * 1024)
    done = subprocess.run([sys.executable, "-c", "import resource, subprocess, sys; "
                           "r = subprocess.run(sys.argv[1:], capture_output=True); "
                           "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                           sys.executable, "-m", "torch_install", "detect", "--sysroot", str(path)],
                          capture_output=True, text=True, timeout=120)
    code, peak_kib = map(int, done.stdout.split())
    assert code == 2 and peak_kib < 100 * 1024, (code, peak_kib)
