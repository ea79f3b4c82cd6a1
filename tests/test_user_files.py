"""The one editor of user files: a regular file only (a link followed), read whole or refused, everything it does
not own kept (line ends, byte order mark, mode, owner), the result checked as its format reads it, a concurrent
change refused, and an undo journal that puts back exactly what was there."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from special_files import KINDS, make_special
from torch_install import user_files
from torch_install.errors import EnvironmentFailure, InputError
from torch_install.user_files import PIP_INI, PLAIN, TOML, read, with_line_ends, write

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file kinds and modes")


def _edit(path: Path, change: str, fmt: user_files.Format = PLAIN, journal: str | None = None) -> bool:
    opened = read(str(path), fmt)
    return write(opened, (opened.text or "") + change, fmt, journal=journal)


def test_an_edit_keeps_every_line_end_and_the_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    for original, edited in [
        (b'[project]\r\nname = "x"\r\n', b'[project]\r\nname = "x"\r\n# added\r\n'),
        (b'[a]\rb = 1\r', b'[a]\rb = 1\r# added\r'),
        (b'[a]\nb = 1\r\nc = 2\n', b'[a]\nb = 1\r\nc = 2\n# added\n'),  # mixed: the added line takes the commoner
        (b'\xef\xbb\xbf[a]\r\nb = 1\r\n', b'\xef\xbb\xbf[a]\r\nb = 1\r\n# added\r\n'),
    ]:
        path.write_bytes(original)
        opened = read(str(path))
        assert "\r" not in (opened.text or "") and not (opened.text or "").startswith("\ufeff")
        assert write(opened, (opened.text or "") + "# added\n")
        assert path.read_bytes() == edited


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), max_size=8), st.booleans(), st.data())
def test_each_kept_line_keeps_its_own_end(ends: list[str], last_ended: bool, data: st.DataObject) -> None:
    lines = [f"line {i}" for i in range(len(ends) + (not last_ended or not ends))]
    original = "".join(line + end for line, end in zip(lines, [*ends, ""], strict=False))
    at = data.draw(st.integers(0, len(lines)))
    edited = [*lines[:at], "ADDED", *lines[at:]]
    result = with_line_ends(original, "\n".join(edited) + ("\n" if len(ends) == len(lines) else ""))
    common = max(["\n", "\r\n", "\r"], key=ends.count) if ends else "\n"  # a tie: LF, then CRLF
    if len(ends) < len(lines) and at == len(lines):  # added after a last line without an end: it gets one
        assert result == original + common + "ADDED"
    elif len(set(ends)) <= 1:  # one kind of end: every line takes it
        assert result == common.join(edited) + (common if len(ends) == len(lines) else "")
    else:  # each kept line keeps its own; the added one takes the commonest
        assert result.replace("ADDED" + common, "", 1) == original


@posix_only
@pytest.mark.parametrize("kind", KINDS)
def test_anything_but_a_regular_file_is_refused_without_blocking(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "pyproject.toml"
    make_special(path, kind)
    before = os.lstat(path)
    with pytest.raises(InputError, match=rf"--merge: {path}: a {kind}, not a regular file") as refused:
        read(str(path), TOML, "--merge")
    assert "\n" not in str(refused.value) and refused.value.exit_code == 2
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)


@posix_only
def test_a_link_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    shared = tmp_path / "shared.toml"
    shared.write_text("[project]\n")
    link = tmp_path / "pyproject.toml"
    link.symlink_to(shared.name)
    assert _edit(link, "# added\n", TOML)
    assert link.is_symlink() and shared.read_text() == "[project]\n# added\n"
    (tmp_path / "dangling.toml").symlink_to("nowhere.toml")
    with pytest.raises(InputError, match="a link to .*nowhere.toml, which does not exist"):
        read(str(tmp_path / "dangling.toml"))


@posix_only
def test_mode_and_owner_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "pip.conf"
    path.write_text("[global]\n")
    for mode in (0o644, 0o640, 0o604, 0o755):
        os.chmod(path, mode)
        _edit(path, f"# {mode:o}\n")
        assert stat.S_IMODE(os.stat(path).st_mode) == mode
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534)
        _edit(path, "# as another user's\n")
        assert (os.stat(path).st_uid, os.stat(path).st_gid) == (65534, 65534)
    created = tmp_path / "new.txt"
    write(read(str(created)), "made\n")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(created).st_mode) == 0o666 & ~umask


@posix_only
def test_a_file_that_cannot_be_edited_in_place_is_refused_and_left(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[project]\n")
    (tmp_path / "other-name.toml").hardlink_to(path)
    with pytest.raises(InputError, match="has 2 hard links, and an edit replaces the file"):
        _edit(path, "# x\n")
    os.unlink(tmp_path / "other-name.toml")
    os.chmod(path, 0o444)
    with pytest.raises(InputError, match=r"read-only \(mode 0444\)"):
        _edit(path, "# x\n")
    os.chmod(path, 0o644)
    os.chmod(tmp_path, 0o555)
    try:
        if os.geteuid() != 0:  # root writes into any directory
            with pytest.raises(EnvironmentFailure, match="cannot write into"):
                _edit(path, "# x\n")
    finally:
        os.chmod(tmp_path, 0o755)
    assert path.read_text() == "[project]\n" and sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml"]


def test_a_file_over_the_limit_or_not_utf8_is_refused_never_cut(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_bytes(b"# x\n" * 300)
    with pytest.raises(InputError, match="larger than 0 MiB: not read"):
        read(str(path), limit=1000)
    assert len(read(str(path), limit=1200).data) == 1200
    path.write_bytes(b"name = '\xe9'\n")
    with pytest.raises(InputError, match=r"not UTF-8 text \(byte 8\)"):
        read(str(path))


def test_the_result_must_read_as_its_format(tmp_path: Path) -> None:
    path = tmp_path / "pip.conf"
    path.write_text("[install]\nconstraint = a\n")
    with pytest.raises(InputError, match="would not read back as meant .*already exists"):
        _edit(path, "Constraint = b\n", PIP_INI)
    path.write_text("[project]\n")
    with pytest.raises(InputError, match="would not read back as meant"):
        _edit(path, "[project]\n", TOML)
    with pytest.raises(InputError, match="would not read back as meant .*other values"):
        opened = read(str(path), TOML)
        write(opened, "[project]\nname = 1\n", user_files.toml_reading_as({"project": {}}))
    assert path.read_text() == "[project]\n"
    path.write_text("[project\n")
    with pytest.raises(InputError, match="not valid TOML"):
        read(str(path), TOML)


def test_a_change_made_since_the_read_is_refused_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[project]\nname = 'a'\n")
    opened = read(str(path))
    stats = os.stat(path)
    path.write_text("[project]\nname = 'b'\n")  # same size
    os.utime(path, ns=(stats.st_atime_ns, stats.st_mtime_ns))  # and the same time
    with pytest.raises(InputError, match="changed while torch-install was editing it"):
        write(opened, "[project]\nname = 'c'\n")
    assert path.read_text() == "[project]\nname = 'b'\n"
    missing = read(str(tmp_path / "new.toml"))
    (tmp_path / "new.toml").write_text("theirs\n")
    with pytest.raises(InputError, match="changed while"):
        write(missing, "ours\n")
    assert (tmp_path / "new.toml").read_text() == "theirs\n"


def test_an_unchanged_text_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "pip.conf"
    path.write_bytes(b"[global]\r\ntimeout = 1\r\n")
    before = os.stat(path)
    opened = read(str(path))
    assert not write(opened, opened.text or "")
    assert os.stat(path).st_ino == before.st_ino


def test_the_journal_puts_back_exactly_what_was_there(tmp_path: Path) -> None:
    journal = str(tmp_path / "undo.json")
    conf, made, theirs = tmp_path / "pip.conf", tmp_path / "constraints.txt", tmp_path / "uv.toml"
    conf.write_bytes(b"# mine\r\n[global]\r\ntimeout = 1\r\n")
    os.chmod(conf, 0o640)
    theirs.write_text("x = 1\n")
    original = conf.read_bytes()
    _edit(conf, "[install]\nconstraint = a\n", PIP_INI, journal)
    _edit(conf, "# twice\n", PIP_INI, journal)  # a second edit keeps the first state
    write(read(str(made)), "torch==1\n", journal=journal)
    _edit(theirs, "y = 2\n", TOML, journal)
    theirs.write_text("x = 1\ny = 2\nz = 3\n")  # someone else's change since
    assert user_files.journal_files(journal) == sorted(str(p.resolve()) for p in (conf, made, theirs))
    undone = user_files.undo(journal)
    assert conf.read_bytes() == original and stat.S_IMODE(os.stat(conf).st_mode) == 0o640
    assert not made.exists() and theirs.read_text() == "x = 1\ny = 2\nz = 3\n"
    assert len(undone.done) == 2 and undone.left == (f"{theirs.resolve()}: changed since torch-install wrote it: "
                                                     "left as it is (undo its edit by hand)",)
    assert user_files.journal_files(journal) == [str(theirs.resolve())]  # what is left stays in the journal
