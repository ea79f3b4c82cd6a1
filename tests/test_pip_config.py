"""pip's configuration as pip reads it (file order, key spelling, precedence) and the one-option edit that keeps
everything else of the user's file; the real-pip behaviour of the edits is in test_pin.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_install.environment.pip_config import (
    configured,
    duplicate_keys,
    option_values,
    pip_config_files,
    set_option,
)


def test_an_existing_key_is_edited_in_place_as_spelled() -> None:
    text = "# lab proxy\n[global]\ntimeout = 60\n\n[install]\n; ours too\nConstraint = a.txt\n  b.txt\nno-deps = 1\n"
    assert option_values(text, "install", "constraint") == ["a.txt", "b.txt"]
    edited = set_option(text, "install", "constraint", ["a.txt", "b.txt", "pin.txt"])
    assert edited == ("# lab proxy\n[global]\ntimeout = 60\n\n[install]\n; ours too\nConstraint = a.txt b.txt pin.txt\n"
                      "no-deps = 1\n")


def test_a_missing_key_goes_to_the_end_of_its_section_or_a_new_one() -> None:
    text = "[install]\nno-deps = 1\n\n[global]\ntimeout = 60\n"
    assert set_option(text, "install", "constraint", ["p.txt"]) == (
        "[install]\nno-deps = 1\nconstraint = p.txt\n\n[global]\ntimeout = 60\n")
    assert set_option("[global]\ntimeout = 60", "install", "constraint", ["p.txt"]) == (
        "[global]\ntimeout = 60\n\n[install]\nconstraint = p.txt\n")
    assert set_option("", "install", "constraint", ["p.txt"]) == "[install]\nconstraint = p.txt\n"


def test_windows_line_ends_and_underscore_spellings() -> None:
    text = "[install]\r\nCONSTRAINT: a.txt\r\n"
    assert set_option(text, "install", "constraint", ["a.txt", "p.txt"]) == "[install]\r\nCONSTRAINT = a.txt p.txt\r\n"
    assert option_values("[install]\nindex_url = https://x/\n", "install", "index-url") == ["https://x/"]
    assert duplicate_keys("[install]\nconstraint = a\nConstraint = b\n[global]\nconstraint = c\n") == [
        "[install] Constraint"]


def test_each_line_keeps_its_own_line_end() -> None:
    text = "[global]\r\ntimeout = 1\n[install]\rConstraint = a.txt\n  b.txt\r\nno-deps = 1"
    assert set_option(text, "install", "constraint", ["a.txt", "p.txt"]) == (
        "[global]\r\ntimeout = 1\n[install]\rConstraint = a.txt p.txt\nno-deps = 1\r\n")
    assert set_option("[global]\ntimeout = 1\r[install]\rno-deps = 1\r", "install", "constraint", ["p.txt"]) == (
        "[global]\ntimeout = 1\r[install]\rno-deps = 1\rconstraint = p.txt\n")


@pytest.mark.parametrize("inside", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028"])
def test_a_line_holding_a_character_only_str_splitlines_breaks_at_is_kept_whole(inside: str) -> None:
    """pip reads its configuration in text mode, where only \\n, \\r\\n and \\r end a line: "a\\x0c= 1" is one key."""
    import configparser

    text = f"[global]\na{inside}= 1\n"
    edited = set_option(text, "install", "constraint", ["p.txt"])
    assert edited == f"[global]\na{inside}= 1\n\n[install]\nconstraint = p.txt\n"
    before, after = configparser.RawConfigParser(), configparser.RawConfigParser()
    before.read_string(text)
    after.read_string(edited)
    assert dict(after.items("global")) == dict(before.items("global"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["# note", "; note", "[global]", "[install]", "timeout = 1", "Constraint = x.txt",
                                 "  y.txt", "", "no_deps=1"]), max_size=12))
def test_every_other_line_survives_an_edit(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    edited = set_option(text, "install", "constraint", ["pin.txt"])
    assert option_values(edited, "install", "constraint") == ["pin.txt"]
    kept = [line for line in text.splitlines()]
    for line in kept:  # nothing of the user's is dropped, save the value being replaced
        if line.strip() and not line.startswith(("Constraint", "  y.txt")):
            assert line in edited.splitlines()


def test_the_files_pip_reads_in_its_order(tmp_path: Path) -> None:
    env = {"HOME": "/home/u", "XDG_CONFIG_DIRS": "/etc/a:/etc/b"}
    assert [str(p) for p in pip_config_files(env, "/venv", platform="linux")] == [
        "/etc/b/pip/pip.conf", "/etc/a/pip/pip.conf", "/etc/pip.conf", "/home/u/.pip/pip.conf",
        "/home/u/.config/pip/pip.conf", "/venv/pip.conf"]
    assert [str(p) for p in pip_config_files({"HOME": "/Users/u"}, "/venv", platform="darwin")][-2:] == [
        "/Users/u/Library/Application Support/pip/pip.conf", "/venv/pip.conf"]
    assert pip_config_files({**env, "PIP_CONFIG_FILE": os.devnull}, "/venv") == []  # pip then reads none at all
    own = tmp_path / "own.conf"
    own.write_text("[global]\nconstraint = own.txt\n")
    files = [str(p) for p in pip_config_files({**env, "PIP_CONFIG_FILE": str(own)}, "/venv", platform="linux")]
    assert "/home/u/.config/pip/pip.conf" not in files and files[-1] == str(own)  # no user files beside it


def test_install_over_global_a_later_file_over_an_earlier_the_variable_over_all(tmp_path: Path) -> None:
    site, env_file = tmp_path / "site.conf", tmp_path / "env.conf"
    site.write_text("[install]\nconstraint = site.txt\n")
    env_file.write_text("[global]\nConstraint = env.txt\n")
    assert configured("constraint", {}, [site, env_file]) == ("env.txt", f"{env_file} [global]")
    env_file.write_text("[global]\nconstraint = env.txt\n[install]\nconstraint = install.txt\n")
    assert configured("constraint", {}, [site, env_file]).value == "install.txt"  # type: ignore[union-attr]
    assert configured("constraint", {"PIP_CONSTRAINT": "var.txt"}, [site]) == ("var.txt", "$PIP_CONSTRAINT")
    assert configured("index-url", {}, [site]) is None


@pytest.mark.parametrize("home", ["", "rel", "./x"])
def test_a_home_that_is_no_absolute_path_is_not_used(home: str) -> None:
    from torch_install.user_dirs import cache_root

    assert os.path.isabs(cache_root({"HOME": home}, "linux"))
