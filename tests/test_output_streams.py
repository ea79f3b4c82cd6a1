"""Every byte the command writes: no secret in any output format, whatever channel brought it in, and every
command printable on a stream that cannot encode the product's few non-ASCII characters."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from profiles import profile
from torch_install.cli import main
from torch_install.display import OutputStream, redact

SECRET = "S3cretPassw0rd"
TOKEN = "ghp_T0kenValue123"


@pytest.mark.parametrize(("text", "expected"), [
    ("https://alice:S3cret@mirror.invalid/simple", "https://***@mirror.invalid/simple"),
    ("--extra-index-url=https://eve:p%40ss@mirror.invalid/simple", "--extra-index-url=https://***@mirror.invalid/simple"),
    ("https://ghp_T0ken@host.invalid/x", "https://***@host.invalid/x"),          # a token as the user name
    ("ftp://u:@host.invalid/", "ftp://***@host.invalid/"),
    ('"https://a:b@h.invalid/simple"', '"https://***@h.invalid/simple"'),
    ("HF_TOKEN=hf_abc123 torch-install", "HF_TOKEN=*** torch-install"),
    ("PIP_PASSWORD=x1", "PIP_PASSWORD=***"),
    ('{"GITHUB_TOKEN": "ghp_abc", "PATH": "/usr/bin"}', '{"GITHUB_TOKEN": "***", "PATH": "/usr/bin"}'),
    ('{"MY_API_KEY":"a\\"b"}', '{"MY_API_KEY":"***"}'),
    ("APIKEY=k1 DB_PASSWD=k2 X_SECRET=k3 AWS_CREDENTIALS=k4 GIT_CREDENTIAL=k5 NPM_AUTH=k6",
     "APIKEY=*** DB_PASSWD=*** X_SECRET=*** AWS_CREDENTIALS=*** GIT_CREDENTIAL=*** NPM_AUTH=***"),
    ('{"hf": 1, "MY_PASSWORD": "p"}', '{"hf": 1, "MY_PASSWORD": "***"}'),
])
def test_redact_masks_every_spelling_of_a_secret(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "torch==2.9.1+cu128 --index-url https://download.pytorch.invalid/whl/cu128",
    "pkg @ git+https://github.invalid/org/repo@v1.0",                         # a revision, not a user
    "git+ssh://git@github.invalid/org/repo.git",                              # git's conventional user
    "CUDA_VISIBLE_DEVICES=0,1 TORCH_CUDA_ARCH_LIST=8.9",
    "contact: someone@example.invalid",
])
def test_redact_leaves_what_is_not_a_secret(text: str) -> None:
    assert redact(text) == text


def test_a_secret_written_in_pieces_is_still_redacted() -> None:
    sink = io.StringIO()
    stream = OutputStream(sink)
    for piece in ("index: https://al", "ice:S3cr", "et@h.invalid/simple", "\nnext line, no end"):
        stream.write(piece)
    assert sink.getvalue() == "index: https://***@h.invalid/simple\n"
    stream.flush()
    assert sink.getvalue().endswith("next line, no end")


# Every command and output format, with credentials brought in by every channel the product reads.
PLAN_FORMATS = ["text", "url", "pip", "uv", "requirements", "constraints", "pyproject", "json", "dockerfile",
                "variant-env"]
CREDENTIAL_ENVIRONMENT = {
    "PIP_INDEX_URL": f"https://alice:{SECRET}@mirror.invalid/simple",
    "PIP_EXTRA_INDEX_URL": f"https://bob:{SECRET}@mirror.invalid/extra",
    "UV_INDEX_URL": f"https://carol:{SECRET}@mirror.invalid/uv",
    "UV_EXTRA_INDEX_URL": f"https://{TOKEN}@mirror.invalid/uv-extra",
    "UV_INDEX": f"named=https://dan:{SECRET}@mirror.invalid/named",
    "HF_TOKEN": TOKEN,
    "PIP_CONFIG_FILE": "",  # set per test to a pip.conf carrying a password
}


def _commands(tmp_path: Path) -> list[list[str]]:
    target = profile(tmp_path, notes=f"mirror https://eve:{SECRET}@mirror.invalid/simple")
    passthrough = ["--", "--extra-index-url", f"https://eve:{SECRET}@mirror.invalid/simple"]
    commands = [["plan", "--target", target, "--format", fmt, *passthrough] for fmt in PLAN_FORMATS]
    commands += [
        ["detect"], ["detect", "--json"],
        ["doctor"], ["doctor", "--json"],
        ["matrix", "--target", target], ["matrix", "--target", target, "--json"],
        ["plan", "--target", target, "--index-base", f"https://eve:{SECRET}@mirror.invalid/whl"],
        ["plan", "--target", target, "--format", "json", "--index-base", f"https://{TOKEN}@mirror.invalid/whl"],
        ["install", "--dry-run", "--offline", *passthrough],
        ["install", "--dry-run", "--offline", "--index-base", f"https://eve:{SECRET}@mirror.invalid/whl"],
        ["plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--format", "pip", *passthrough],
    ]
    return commands


@pytest.fixture
def credentials_everywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    conf = tmp_path / "pip.conf"
    conf.write_text(f"[global]\nindex-url = https://frank:{SECRET}@mirror.invalid/simple\n"
                    f"extra-index-url = https://{TOKEN}@mirror.invalid/extra\n")
    for name, value in CREDENTIAL_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    return tmp_path


def test_no_command_or_format_prints_a_secret(credentials_everywhere: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    ran = 0
    for argv in _commands(credentials_everywhere):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code != 3, (argv, err)
        for secret in (SECRET, TOKEN):
            assert secret not in out and secret not in err, (argv, out, err)
        ran += 1
    assert ran == len(PLAN_FORMATS) + 11


def test_doctor_json_keeps_the_variables_it_reports_but_masks_their_passwords(
        credentials_everywhere: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["doctor", "--json"])
    out = capsys.readouterr().out
    assert SECRET not in out and "mirror.invalid" in out
    json.loads(out)  # redaction keeps the document valid JSON


def test_a_credential_in_the_options_after_the_separator_is_masked_in_the_json_plan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--format", "json", "--",
          "--extra-index-url", f"https://eve:{SECRET}@mirror.invalid/simple"])
    plan = json.loads(capsys.readouterr().out)
    rendered = json.dumps(plan)
    assert SECRET not in rendered and "https://***@mirror.invalid/simple" in rendered


ENCODINGS = ["cp1252", "ascii", "latin-1"]


def _commands_for_encoding(tmp_path: Path) -> list[list[str]]:
    target = profile(tmp_path)
    plans = [["plan", "--target", target, "--format", fmt] for fmt in PLAN_FORMATS]
    return [*plans, ["detect"], ["doctor"], ["matrix", "--target", target],
            ["plan", "--gpu", "RTX 4090", "--nvidia-driver", "550.54.15", "--os", "linux", "--arch", "x86_64",
             "--python", "3.12"],
            ["plan", "--gpu", "Tesla K80", "--nvidia-driver", "470.82.01", "--os", "linux", "--arch", "x86_64",
             "--python", "3.12"],
            ["plan", "--os", "macos", "--arch", "arm64", "--python", "3.12"],
            ["completion", "bash"], ["--help"], ["plan", "--help"]]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_command_prints_on_a_stream_without_unicode(encoding: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """As Windows' cp1252 console or a redirected stream with PYTHONIOENCODING=ascii: the output is the same
    answer with ASCII stand-ins, never an encoding error."""
    for argv in _commands_for_encoding(tmp_path):
        out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
        out = io.TextIOWrapper(out_bytes, encoding=encoding, errors="strict")
        err = io.TextIOWrapper(err_bytes, encoding=encoding, errors="strict")
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        try:
            code = main(argv)
        except SystemExit as stop:  # --help
            code = int(stop.code or 0)
        out.flush()
        err.flush()
        monkeypatch.undo()
        printed = out_bytes.getvalue().decode(encoding) + err_bytes.getvalue().decode(encoding)
        assert code in (0, 1), (argv, printed)
        assert "internal error" not in printed and "Traceback" not in printed, (argv, printed)
        assert printed.strip(), argv


def test_the_stand_ins_replace_the_unicode_signs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out_bytes = io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", out)
    main(["plan", "--gpu", "RTX 4090", "--nvidia-driver", "550.54.15", "--os", "linux", "--arch", "x86_64",
          "--python", "3.12"])
    out.flush()
    monkeypatch.undo()
    text = out_bytes.getvalue().decode("ascii")
    assert ">=" in text and "?" not in text.replace("?)", "")


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["cp1252", "ascii"])
def test_a_real_process_with_a_narrow_stdout_encoding_exits_0(encoding: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONIOENCODING": encoding, "TORCH_INSTALL_DEFAULT_INDEX": "none"}
    argv = [sys.executable, "-m", "torch_install", "plan", "--gpu", "RTX 4090", "--nvidia-driver", "550.54.15",
            "--os", "linux", "--arch", "x86_64", "--python", "3.12"]
    done = subprocess.run(argv, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode(encoding, "replace")
    assert b">=" in done.stdout
