"""`torch-install detect`: summary, --json, -v, --sysroot (directory or archive), --capture, --target."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from sysroot import FIXTURES, SysrootBuilder
from torch_install.cli import main
from torch_install.machine import machine_from_dict


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_summary_of_the_8_gpu_server(capsys) -> None:
    code, out, _ = cli(capsys, "detect", "--sysroot", str(FIXTURES / "nvidia-8xh100"))
    assert code == 0
    assert out.splitlines() == [
        "linux x86_64 · ubuntu 22.04 · Python 3.12 · glibc 2.35",
        "NVIDIA driver 550.54.15 (CUDA ≤ 12.4)",
        "GPU 0-7  NVIDIA H100 80GB HBM3  10de:2330  sm_90",
    ]


def test_summary_lists_each_gpu_and_hidden_ones(capsys, monkeypatch) -> None:
    code, out, _ = cli(capsys, "detect", "--sysroot", str(FIXTURES / "rtx4090-intel-igpu"))
    lines = out.splitlines()
    assert lines[2].startswith("GPU 0  ") and "8086:a780" in lines[2]
    assert lines[3].startswith("GPU 1  NVIDIA GeForce RTX 4090") and lines[3].endswith("sm_89")


def test_verbose_names_sources(capsys) -> None:
    _, out, _ = cli(capsys, "detect", "-v", "--sysroot", str(FIXTURES / "wsl2-nvidia"))
    assert "    nvidia_driver: nvidia-smi --query-gpu=driver_version" in out
    assert "    wsl: /proc/version, /dev/dxg, /usr/lib/wsl/lib" in out
    assert "    gpus[0].compute_capability: nvidia-smi compute_cap" in out


def test_json_is_a_valid_profile_with_sources(capsys) -> None:
    _, out, _ = cli(capsys, "detect", "--json", "--sysroot", str(FIXTURES / "gh200"))
    data = json.loads(out)
    assert data["sources"]["nvidia_driver"] == "/sys/module/nvidia/version"
    machine = machine_from_dict(data)
    assert machine.gpus[0].compute_capability == "9.0" and machine.arch == "aarch64"


def test_no_gpu_line(capsys) -> None:
    _, out, _ = cli(capsys, "detect", "--sysroot", str(FIXTURES / "graviton-aarch64"))
    assert out.splitlines() == ["linux aarch64 · amzn 2023 · Python 3.11 · glibc 2.34", "GPU none found (CPU only)"]


@pytest.mark.parametrize("fixture", ["nvidia-8xh100", "wsl2-nvidia", "container-masked-procfs", "jetson-orin"])
def test_capture_reproduces_the_machine(capsys, tmp_path: Path, fixture: str) -> None:
    archive = tmp_path / "capture.tar.gz"
    _, direct, err = cli(capsys, "detect", "--json", "--sysroot", str(FIXTURES / fixture), "--capture", str(archive))
    assert "wrote" in err and archive.exists()
    _, replayed, _ = cli(capsys, "detect", "--json", "--sysroot", str(archive))
    assert json.loads(replayed) == json.loads(direct)


def test_capture_holds_only_what_was_read_and_redacts_identifiers(capsys, tmp_path: Path) -> None:
    archive = tmp_path / "c.tar.gz"
    env = tmp_path / "tree"
    b = SysrootBuilder(env, env={"CUDA_VISIBLE_DEVICES": "GPU-00000103-0000-4000-8000-000000000103",
                                 "UNRELATED_SECRET": "hunter2"})
    for path in (FIXTURES / "nvidia-8xh100").rglob("*"):
        rel = path.relative_to(FIXTURES / "nvidia-8xh100")
        if path.is_symlink():
            (env / rel).parent.mkdir(parents=True, exist_ok=True)
            (env / rel).symlink_to(path.readlink())
        elif path.is_file() and rel.name not in ("_env.json",):
            b.file(str(rel), path.read_bytes())
    _, before, _ = cli(capsys, "detect", "--json", "--sysroot", str(env), "--capture", str(archive))
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        blob = b"".join(tar.extractfile(m).read() for m in tar.getmembers() if m.isfile())
        captured_env = json.loads(tar.extractfile("_env.json").read())
    assert "GPU-00000103" not in blob.decode() and "hunter2" not in blob.decode()
    assert "UNRELATED_SECRET" not in captured_env
    assert captured_env["CUDA_VISIBLE_DEVICES"].startswith("GPU-00000000-0000-4000-8000-")
    assert "sys/bus/pci/devices/0000:18:00.0/driver" in names and "_host.json" in names
    _, after, _ = cli(capsys, "detect", "--json", "--sysroot", str(archive))
    # the same GPU (the 4th) is still the visible one after its UUID was replaced
    assert json.loads(after)["gpus"] == json.loads(before)["gpus"]
    assert [g.get("visible", True) for g in json.loads(after)["gpus"]] == [False, True, False]


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_archive_escaping_its_directory_is_refused(capsys, tmp_path: Path) -> None:
    evil = tmp_path / "evil.tar.gz"
    _tar(evil, [(tarfile.TarInfo("../../outside.txt"), b"x")])
    code, out, err = cli(capsys, "detect", "--sysroot", str(evil))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "'../../outside.txt': a path outside the capture" in err
    assert not (tmp_path.parent / "outside.txt").exists()


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    return info


def test_the_cve_2025_4517_chain_writes_nothing_outside(capsys, tmp_path: Path) -> None:
    """Directories and symlinks nested past PATH_MAX, a hard link to a file outside, then a write through it: the
    chain that bypasses tarfile's data filter on Pythons before 3.11.13/3.12.11/3.13.4."""
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n")
    comp = "d" * 200
    members: list[tuple[tarfile.TarInfo, bytes]] = []
    path = ""
    for step in "abcdefghijklmnop":
        members.append((_member(os.path.join(path, comp), tarfile.DIRTYPE), b""))
        members.append((_member(os.path.join(path, step), tarfile.SYMTYPE, comp), b""))
        path = os.path.join(path, comp)
    longlink = os.path.join(*"abcdefghijklmnop", "l" * 254)
    members += [(_member(longlink, tarfile.SYMTYPE, os.path.join(*[".."] * 16)), b""),
                (_member("escape", tarfile.SYMTYPE, os.path.join(longlink, "..", "..")), b""),
                (_member("flaglink", tarfile.LNKTYPE, os.path.join("escape", str(victim).lstrip("/"))), b""),
                (_member("flaglink"), b"overwritten\n"),
                (_member("_host.json"), b'{"system": "Linux", "machine": "x86_64"}\n')]
    evil = tmp_path / "evil.tar.gz"
    _tar(evil, members)
    code, out, err = cli(capsys, "detect", "--sysroot", str(evil))
    assert code == 2 and out == "" and "characters, longer than a capture's" in err
    assert victim.read_text() == "the user's file\n"
    short = [(m, d) for m, d in members if len(m.name) < 1000 and not m.name.startswith(("a", "escape"))]
    _tar(evil, short)  # without the long names: the hard link is refused, and nothing is ever written
    code, out, err = cli(capsys, "detect", "--sysroot", str(evil))
    assert code == 2 and "'flaglink': a hard link" in err and victim.read_text() == "the user's file\n"


@pytest.mark.parametrize("target", ["/etc", "../../../../../../etc"])
def test_a_link_leading_anywhere_is_only_text(capsys, tmp_path: Path, target: str) -> None:
    evil = tmp_path / "evil.tar"
    _tar(evil, [(_member("sys/bus/pci/devices/0000:01:00.0/driver", tarfile.SYMTYPE, target), b""),
                (_member("_host.json"), b'{"system": "Linux", "machine": "x86_64"}\n')])
    code, out, _ = cli(capsys, "detect", "--sysroot", str(evil), "--json")
    assert code == 0 and json.loads(out)["gpus"] == []  # no PCI vendor file: nothing read through the link


@pytest.mark.parametrize(("member", "words"), [
    (_member("proc/version", tarfile.LNKTYPE, "etc/passwd"), "a hard link"),
    (_member("dev/nvidia0", tarfile.CHRTYPE), "a special file"),
    (_member("fifo", tarfile.FIFOTYPE), "a special file"),
    (_member("/etc/passwd"), "a path outside the capture"),
    (_member("sys/../../x"), "a path outside the capture"),
])
def test_members_a_capture_cannot_hold_are_refused(capsys, tmp_path: Path, member: tarfile.TarInfo,
                                                   words: str) -> None:
    evil = tmp_path / "evil.tar"
    _tar(evil, [(member, b"")])
    code, _, err = cli(capsys, "detect", "--sysroot", str(evil))
    assert code == 2 and words in err


def test_a_write_through_a_driver_link_is_refused(capsys, tmp_path: Path) -> None:
    link = "sys/bus/pci/devices/0000:01:00.0/driver"
    evil = tmp_path / "evil.tar.gz"
    _tar(evil, [(_member(link, tarfile.SYMTYPE, "../../../bus/pci/drivers/nvidia"), b""),
                (_member(f"{link}/new_id"), b"x")])
    code, _, err = cli(capsys, "detect", "--sysroot", str(evil))
    assert code == 2 and "a path through a link" in err


def test_a_huge_pax_header_is_refused_before_it_is_read(capsys, tmp_path: Path) -> None:
    evil = tmp_path / "pax.tar.gz"
    with tarfile.open(evil, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("proc/version")
        info.pax_headers = {"comment": "a" * (2 << 20)}
        tar.addfile(info, io.BytesIO(b""))
    code, _, err = cli(capsys, "detect", "--sysroot", str(evil))
    assert code == 2 and "an archive header of" in err


def test_a_capture_with_its_driver_links_replays(capsys, tmp_path: Path) -> None:
    capture = tmp_path / "c.tar.gz"
    assert cli(capsys, "detect", "--sysroot", str(FIXTURES / "rtx5090"), "--capture", str(capture))[0] == 0
    code, out, _ = cli(capsys, "detect", "--sysroot", str(capture), "--json")
    assert code == 0 and json.loads(out)["gpus"][0]["driver"] == "nvidia"


def test_oversized_archive_is_refused(capsys, tmp_path: Path, monkeypatch) -> None:
    import torch_install.capture as capture

    monkeypatch.setattr(capture, "MAX_ARCHIVE_BYTES", 10)
    big = tmp_path / "big.tar.gz"
    _tar(big, [(tarfile.TarInfo("proc/version"), b"x" * 100)])
    code, _, err = cli(capsys, "detect", "--sysroot", str(big))
    assert code == 2 and "archive too large" in err


@pytest.mark.parametrize("argv, message", [
    (["--sysroot", "/nonexistent/dir"], "--sysroot /nonexistent/dir: not a directory or a .tar.gz capture"),
    (["--capture", "out.zip"], "--capture out.zip: the file name must end in .tar.gz"),
    (["--target", "x.json", "--sysroot", str(FIXTURES / "gtx1080")], "--target shows a profile file"),
])
def test_bad_flags_are_one_line_and_exit_2(capsys, argv: list[str], message: str) -> None:
    code, out, err = cli(capsys, "detect", *argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err


def test_every_committed_sysroot_is_what_its_generator_writes(tmp_path: Path) -> None:
    """tests/sysroot.py writes every fixture tree: regenerated, they are byte for byte (and link for link) the
    committed ones, so no fixture is an unexplained hand edit."""
    from sysroot import build_fixtures

    build_fixtures(tmp_path)

    def tree(root: Path) -> dict[str, bytes | str]:
        return {str(p.relative_to(root)): (f"-> {os.readlink(p)}" if p.is_symlink() else p.read_bytes())
                for p in sorted(root.rglob("*")) if p.is_symlink() or p.is_file()}

    assert tree(tmp_path) == tree(FIXTURES)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in FIXTURES.iterdir())
