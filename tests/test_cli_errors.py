"""How the command ends when a sub-command fails: an expected error, a bug, or a stopped pipe."""

from __future__ import annotations

import argparse

import pytest

from torch_install import cli
from torch_install.cli import main, matrix
from torch_install.errors import InputError


@pytest.fixture(autouse=True)
def _fresh_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parsers these tests build register the handler they put in place (a parser is built once per process
    and keeps the handler it was built with)."""
    monkeypatch.setattr(cli, "_PARSERS", {})


def _failing(exc: BaseException):  # noqa: ANN202 - a sub-command handler
    def run(args: argparse.Namespace) -> int:
        raise exc

    return run


def test_an_unexpected_exception_is_one_line_and_exit_code_3(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("TORCH_INSTALL_DEBUG", raising=False)
    monkeypatch.setattr(matrix, "run", _failing(KeyError("cu999")))
    assert main(["matrix"]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("torch-install: internal error: KeyError: 'cu999' "
                   "(set TORCH_INSTALL_DEBUG=1 for the traceback)\n")


def test_a_multi_line_message_stays_on_one_line(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TORCH_INSTALL_DEBUG", "0")
    monkeypatch.setattr(matrix, "run", _failing(RuntimeError("first\nsecond")))
    assert main(["matrix"]) == 3
    err = capsys.readouterr().err
    assert err.splitlines() == ["torch-install: internal error: RuntimeError: first second "
                                "(set TORCH_INSTALL_DEBUG=1 for the traceback)"]


def test_debug_variable_adds_the_traceback(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TORCH_INSTALL_DEBUG", "1")
    monkeypatch.setattr(matrix, "run", _failing(ZeroDivisionError("division by zero")))
    assert main(["matrix"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n")
    assert "in run\n" in err and "ZeroDivisionError: division by zero\n" in err
    assert err.endswith("torch-install: internal error: ZeroDivisionError: division by zero "
                        "(set TORCH_INSTALL_DEBUG=1 for the traceback)\n")


def test_expected_errors_keep_their_own_line_and_code(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(matrix, "run", _failing(InputError("--python 3.x: not a version")))
    assert main(["matrix"]) == 2
    assert capsys.readouterr().err == "torch-install: error: --python 3.x: not a version\n"
