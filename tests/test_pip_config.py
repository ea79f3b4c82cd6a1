"""pip's configuration as pip reads it (configparser with pip's options, file order, precedence) and the one-option
edit that keeps everything else of the user's file; each spelling checked against real pip in the slow tests here
and in test_pin.py."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_install.environment.pip_config import configured, option_values, pip_config_files, set_option


def test_an_existing_key_is_edited_in_place_as_spelled() -> None:
    text = "# lab proxy\n[global]\ntimeout = 60\n\n[install]\n; ours too\nConstraint = a.txt\n  b.txt\nno-deps = 1\n"
    assert option_values(text, "install", "constraint") == ["a.txt", "b.txt"]
    edited = set_option(text, "install", "constraint", ["a.txt", "b.txt", "pin.txt"])
    assert edited == ("# lab proxy\n[global]\ntimeout = 60\n\n[install]\n; ours too\nConstraint = a.txt b.txt pin.txt\n"
                      "no-deps = 1\n")


@pytest.mark.parametrize(("text", "edited"), [
    ("[install]\n    constraint = mine.txt\n", "[install]\n    constraint = mine.txt pin.txt\n"),  # indented key
    ("[install]\n\tconstraint = mine.txt\n", "[install]\n\tconstraint = mine.txt pin.txt\n"),
    ("[install] extra\nconstraint = mine.txt\n", "[install] extra\nconstraint = mine.txt pin.txt\n"),  # pip: [install]
    ("[install]\n  timeout = 5\n  constraint = mine.txt\n",  # every key indented alike: two keys
     "[install]\n  timeout = 5\n  constraint = mine.txt pin.txt\n"),
    ("[install]\nconstraint = mine.txt\n# a note\n  more.txt\nno-deps = 1\n",  # a comment inside the value
     "[install]\nconstraint = mine.txt more.txt pin.txt\nno-deps = 1\n"),
    ("[install]\nconstraint: mine.txt\n", "[install]\nconstraint = mine.txt pin.txt\n"),
    ("[install]\n--constraint = mine.txt\n", "[install]\n--constraint = mine.txt pin.txt\n"),
])
def test_each_spelling_pip_reads_is_the_key_edited(text: str, edited: str) -> None:
    values = [*option_values(text, "install", "constraint"), "pin.txt"]  # type: ignore[misc]
    assert values[0] == "mine.txt"
    assert set_option(text, "install", "constraint", values) == edited


def test_a_section_pip_does_not_read_gets_an_install_section_beside_it() -> None:
    """``[ install ]`` is a section named " install " to configparser, and pip reads only ``install``."""
    text = "[ install ]\nconstraint = mine.txt\n[INSTALL]\nno-deps = 1\n"
    assert option_values(text, "install", "constraint") is None
    edited = set_option(text, "install", "constraint", ["pin.txt"])
    assert edited == text + "\n[install]\nconstraint = pin.txt\n"
    assert option_values(edited, " install ", "constraint") == ["mine.txt"]


def test_a_missing_key_goes_to_the_end_of_its_section_or_a_new_one() -> None:
    text = "[install]\nno-deps = 1\n\n[global]\ntimeout = 60\n"
    assert set_option(text, "install", "constraint", ["p.txt"]) == (
        "[install]\nno-deps = 1\nconstraint = p.txt\n\n[global]\ntimeout = 60\n")
    assert set_option("[global]\ntimeout = 60", "install", "constraint", ["p.txt"]) == (
        "[global]\ntimeout = 60\n\n[install]\nconstraint = p.txt\n")
    assert set_option("", "install", "constraint", ["p.txt"]) == "[install]\nconstraint = p.txt\n"
    assert set_option("[install]\n# only a note\n", "install", "constraint", ["p.txt"]) == (
        "[install]\n# only a note\nconstraint = p.txt\n")


def test_defaults_count_as_pip_counts_them() -> None:
    """``[DEFAULT]``'s keys are every section's: an [install] added beside them is refused only where it would
    change what pip install reads (a [global] value that overrode the default)."""
    assert option_values("[DEFAULT]\nconstraint = d.txt\n[install]\n", "install", "constraint") == ["d.txt"]
    kept = "[DEFAULT]\ntimeout = 3\n[global]\nx = 1\n"
    assert set_option(kept, "install", "constraint", ["p.txt"]) == kept + "\n[install]\nconstraint = p.txt\n"
    with pytest.raises(ValueError, match="would change other options pip reads"):
        set_option("[DEFAULT]\ntimeout = 3\n[global]\ntimeout = 10\n", "install", "constraint", ["p.txt"])


@pytest.mark.parametrize("text", ["[install]\nconstraint = a\nConstraint = b\n", "[install]\n[install]\n",
                                  "constraint = a\n", "[install]\nno key here\n"])
def test_a_file_pip_refuses_is_refused(text: str) -> None:
    with pytest.raises(configparser.Error):
        set_option(text, "install", "constraint", ["p.txt"])


@pytest.mark.parametrize("inside", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028"])
def test_a_line_holding_a_character_only_str_splitlines_breaks_at_is_kept_whole(inside: str) -> None:
    """pip reads its configuration in text mode, where only \\n, \\r\\n and \\r end a line: "a\\x0c= 1" is one key."""
    text = f"[global]\na{inside}= 1\n"
    edited = set_option(text, "install", "constraint", ["p.txt"])
    assert edited == f"[global]\na{inside}= 1\n\n[install]\nconstraint = p.txt\n"


LINES = st.sampled_from(["# note", "; note", "[global]", "[install]", "[install] x", "[ install ]", "[DEFAULT]",
                         "timeout = 1", "Constraint = x.txt", "  y.txt", "\tconstraint = z.txt", "", "no_deps=1",
                         "  index-url = https://mirror.example/simple", "[freeze]"])


@settings(max_examples=60, deadline=None)  # 150 more in the slow lane: test_fuzz.py
@given(st.lists(LINES, max_size=12), st.lists(st.text("abcxyz/._-", min_size=1, max_size=8), min_size=1, max_size=3))
def test_an_edit_changes_only_the_option_as_pip_reads_every_command(lines: list[str], values: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    try:
        before = configparser.RawConfigParser()
        before.read_string(text)
    except configparser.Error:
        with pytest.raises(configparser.Error):
            set_option(text, "install", "constraint", values)
        return
    try:
        edited = set_option(text, "install", "constraint", values)
    except ValueError:
        assert "DEFAULT" in text  # the one case an edit would change another option pip reads
        return
    assert option_values(edited, "install", "constraint") == values
    after = configparser.RawConfigParser()
    after.read_string(edited)
    for section in before.sections():  # every other option of every section reads as before
        for key, value in before.items(section):
            if (section, key) != ("install", "constraint"):
                assert after.get(section, key) == value
    import difflib

    gone = [line for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, lines, edited.splitlines()).get_opcodes()
            if tag in ("delete", "replace") for line in lines[i1:i2]]
    assert all("onstraint" in line or line[:1] in (" ", "\t") or line.startswith("#") for line in gone), gone


def test_the_files_pip_reads_in_its_order(tmp_path: Path) -> None:
    env = {"HOME": "/home/u", "XDG_CONFIG_DIRS": "/etc/a:/etc/b"}
    assert [str(p) for p in pip_config_files(env, "/venv", platform="linux")] == [
        "/etc/a/pip/pip.conf", "/etc/b/pip/pip.conf", "/etc/pip.conf", "/home/u/.pip/pip.conf",
        "/home/u/.config/pip/pip.conf", "/venv/pip.conf"]
    assert [str(p) for p in pip_config_files({"HOME": "/Users/u"}, "/venv", platform="darwin")][-2:] == [
        "/Users/u/Library/Application Support/pip/pip.conf", "/venv/pip.conf"]
    assert pip_config_files({**env, "PIP_CONFIG_FILE": os.devnull}, "/venv") == []  # pip then reads none at all
    own = tmp_path / "own.conf"
    own.write_text("[global]\nconstraint = own.txt\n")
    files = [str(p) for p in pip_config_files({**env, "PIP_CONFIG_FILE": str(own)}, "/venv", platform="linux")]
    assert "/home/u/.config/pip/pip.conf" not in files and files[-1] == str(own)  # no user files beside it
    relative = pip_config_files({**env, "XDG_CONFIG_HOME": "conf"}, "/venv", platform="linux")
    assert Path("conf/pip/pip.conf") in relative  # pip uses a relative XDG_CONFIG_HOME as it is


def test_install_of_any_file_over_global_of_every_file_the_variable_over_all(tmp_path: Path) -> None:
    site, venv, env_file = tmp_path / "site.conf", tmp_path / "venv.conf", tmp_path / "env.conf"
    site.write_text("[install]\nconstraint = site.txt\n")
    env_file.write_text("[global]\nConstraint = env.txt\n")
    assert configured("constraint", {}, [site, env_file]).value == "site.txt"  # type: ignore[union-attr]
    venv.write_text("[global]\nconstraint = venv.txt\n")
    assert configured("constraint", {}, [venv, env_file]) == ("env.txt", f"{env_file} [global]", str(env_file),
                                                               "global")
    env_file.write_text("[global]\nconstraint = env.txt\n[install]\nconstraint = install.txt\n")
    assert configured("constraint", {}, [site, env_file]).value == "install.txt"  # type: ignore[union-attr]
    assert configured("constraint", {"PIP_CONSTRAINT": "var.txt"}, [site]) == ("var.txt", "$PIP_CONSTRAINT", None,
                                                                                None)
    assert configured("index-url", {}, [site]) is None


@pytest.mark.parametrize("home", ["", "rel", "./x"])
def test_a_home_that_is_no_absolute_path_is_not_used(home: str) -> None:
    from torch_install.user_dirs import cache_root

    assert os.path.isabs(cache_root({"HOME": home}, "linux"))


def _pip(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True,
                          env={**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_the_order_and_the_winner_are_real_pips(tmp_path: Path) -> None:
    """Two site-wide directories, the user's file and PIP_CONFIG_FILE, each setting options: pip's own `config
    debug` lists the files in the order computed here, and `config list` takes the value `configured` takes."""
    a, b, home = tmp_path / "a", tmp_path / "b", tmp_path / "home"
    for directory, text in ((a, "[global]\ntimeout = 1\nretries = 1\n"), (b, "[global]\ntimeout = 2\n"),
                            (home / ".config", "[install]\nretries = 3\n")):
        (directory / "pip").mkdir(parents=True)
        (directory / "pip" / "pip.conf").write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), XDG_CONFIG_DIRS=f"{a}:{b}", XDG_CONFIG_HOME=str(home / ".config"))
    groups: dict[str, list[str]] = {}
    for line in _pip(env, "config", "debug").splitlines():  # pip's own list: each kind's files in its order
        if not line.startswith(" "):
            kind = groups.setdefault(line.rstrip(":"), [])
        elif ", exists:" in line:
            kind.append(line.strip().split(", exists:")[0])
    assert [str(p) for p in pip_config_files(env, sys.prefix)] == [*groups["global"], *groups["user"],
                                                                    *groups["site"]]  # pip loads them so
    shown = dict(line.split("=", 1) for line in _pip(env, "config", "list").splitlines())
    files = pip_config_files(env, sys.prefix)
    assert shown["global.timeout"] == "'2'" == repr(configured("timeout", {}, files).value)  # type: ignore[union-attr]
    assert configured("retries", {}, files) == ("3", f"{home / '.config/pip/pip.conf'} [install]",
                                                str(home / ".config/pip/pip.conf"), "install")
    assert shown["install.retries"] == "'3'"
