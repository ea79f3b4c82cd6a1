"""Every byte the command writes: no secret in any output format, whatever channel brought it in, and every
command printable on a stream that cannot encode the product's few non-ASCII characters."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from profiles import profile
from torch_install.cli import main
from torch_install.display import OutputStream, excerpt, redact

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


# ---- output that cannot be written ------------------------------------------------------------------------------

class Unwritable(io.StringIO):
    """A stream whose writes (or flushes) fail as a full disk's, a broken pipe's or a closed file's do."""

    def __init__(self, error: Exception, on_flush: bool = False) -> None:
        super().__init__()
        self.error, self.on_flush = error, on_flush

    def write(self, text: str) -> int:
        if not self.on_flush:
            raise self.error
        return super().write(text)

    def flush(self) -> None:
        if self.on_flush:
            raise self.error


FULL = OSError(28, "No space left on device")
PLAIN = ["plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12"]
WARNED = ["plan", "--gpu", "Tesla K80", "--nvidia-driver", "470.82.01", "--os", "linux", "--arch", "x86_64",
          "--python", "3.12"]


@pytest.mark.parametrize("on_flush", [False, True])
def test_a_full_stdout_exits_74_saying_so(monkeypatch: pytest.MonkeyPatch, on_flush: bool) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", Unwritable(FULL, on_flush))
    monkeypatch.setattr(sys, "stderr", err)
    assert main(PLAIN) == 74
    assert err.getvalue() == ("torch-install: error: the output could not be written "
                              "(stdout: No space left on device)\n")


def test_a_closed_stdout_exits_74(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stderr", err)
    assert main(PLAIN) == 74
    assert err.getvalue() == "torch-install: error: the output could not be written (stdout: closed)\n"


def test_a_reader_that_stops_reading_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", Unwritable(BrokenPipeError(32, "Broken pipe")))
    monkeypatch.setattr(sys, "stderr", err)
    assert main(PLAIN) == 0 and err.getvalue() == ""


def test_warnings_lost_on_a_full_stderr_make_the_code_74(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", Unwritable(FULL))
    assert main(WARNED) == 74 and "Choice:" in out.getvalue()


def test_a_command_that_failed_keeps_its_own_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", Unwritable(FULL))
    monkeypatch.setattr(sys, "stderr", Unwritable(FULL))
    assert main(["plan", "--python", "3.x"]) == 2
    monkeypatch.setattr(sys, "stdout", None)
    with pytest.raises(SystemExit) as exited:
        main(["plan", "--help"])
    assert exited.value.code == 74


# (command, how its stdout and stderr are given): a full disk, a closed descriptor, a reader that leaves
REAL_COMMANDS = [PLAIN, [*PLAIN, "--format", "dockerfile"], [*PLAIN, "--format", "json"], WARNED, ["detect"],
                 ["doctor"], ["matrix", "--os", "linux", "--arch", "x86_64", "--python", "3.12"],
                 ["completion", "bash"], ["--help"], ["install", "--dry-run", "--offline"]]


def _run(argv: list[str], redirect: str = "") -> tuple[int, str]:
    """The command as a process, its stdout (1>) or stderr (2>) on /dev/full or closed (>&-), the other one read;
    (code, what reached stderr)."""
    env = {**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none", "VIRTUAL_ENV": sys.prefix}
    done = subprocess.run(["sh", "-c", f'exec "$@" {redirect}', "sh", sys.executable, "-m", "torch_install", *argv],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, timeout=120)
    return done.returncode, done.stderr.decode("utf-8", "replace")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("redirect", [">/dev/full", ">&-", "2>/dev/full", "2>&-"])
def test_unwritable_output_is_a_code_and_never_a_traceback(redirect: str) -> None:
    """Output lost on a full disk or a closed descriptor: exit 74 where the command succeeded (0, or the doctor's
    and --strict's 1) and wrote to that stream, its own code otherwise; never a traceback."""
    for argv in REAL_COMMANDS:
        code0, err0 = _run(argv)
        code, err = _run(argv, redirect)
        for noise in ("Traceback", "Exception ignored", "internal error"):
            assert noise not in err, (argv, redirect, err)
        wrote = redirect.startswith(">") or bool(err0)  # every command here writes to stdout
        assert code == (74 if wrote and code0 in (0, 1) else code0), (argv, redirect, code, err)
        if redirect.startswith(">"):
            assert "the output could not be written (stdout: " in err, (argv, redirect, err)


@pytest.mark.slow
def test_a_reader_that_leaves_early_gets_a_quiet_end() -> None:
    """``torch-install … | head -c 1``: the rest is dropped without a word and the exit code is the command's."""
    env = {**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none"}
    for argv in REAL_COMMANDS:
        child = subprocess.Popen([sys.executable, "-m", "torch_install", *argv], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env)
        assert child.stdout is not None and child.stderr is not None
        child.stdout.read(1)
        child.stdout.close()
        err = child.stderr.read().decode("utf-8", "replace")
        code = child.wait(timeout=120)
        assert code in (0, 1) and "Traceback" not in err and "Exception ignored" not in err, (argv, code, err)
        assert "could not be written" not in err, (argv, err)


# ---- credentials of every alphabet -----------------------------------------------------------------------------

# what a user name or password can hold in a URL as urllib and pip read it: every printable ASCII character but the
# blanks and the three that end the host part ("/", "?", "#"), letters of other scripts, and percent escapes
URL_CHARACTERS = st.sampled_from([c for c in map(chr, range(0x21, 0x7f)) if c not in "/?#"] + list("éü中🙂")
                                 + ["%40", "%2F", "%3A", "%20", "%23", "%25"])
USERINFO = st.lists(URL_CHARACTERS, max_size=12).map("".join)


def secret_url(user: str, password: str) -> tuple[str, tuple[str, ...]]:
    """A URL whose user and password are marked at both ends, and the marks: any of them printed is a leak."""
    marks = ("Uq7", "Uz9", "Pq7", "Pz9")
    return f"https://Uq7{user}Uz9:Pq7{password}Pz9@mirror.invalid/simple", marks


def no_credential_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                          user: str, password: str) -> None:
    url, marks = secret_url(user, password)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(f"--extra-index-url {shlex.quote(url)}\nnumpy\n"
                            f"pkg @ {shlex.quote(url.replace('/simple', '/pkg-1.0-py3-none-any.whl'))}\n")
    target = profile(tmp_path)
    after = ["--", "--extra-index-url", url]
    runs = [["plan", "--target", target, "--format", fmt, *after] for fmt in PLAN_FORMATS]
    runs += [["plan", "--target", target, "--format", fmt, "-r", str(requirements)]
             for fmt in ("text", "requirements", "json", "pyproject")]
    runs += [["plan", "--target", target, "--index-base", url], ["plan", "--target", target, "-v", *after],
             ["install", "--dry-run", "--offline", *after], ["doctor", "--json"], ["doctor", "-v"],
             ["plan", "--target", target, f"pkg @ {url}/x.whl garbage"]]
    monkeypatch.setenv("PIP_INDEX_URL", url)
    monkeypatch.setenv("TORCH_INSTALL_DEFAULT_INDEX", "none")
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    for argv in runs:
        code = main(argv)
        out, err = capsys.readouterr()
        assert code != 3, (argv, err)
        for mark in marks:
            assert mark not in out and mark not in err, (argv, url, out + err)
    monkeypatch.setenv("TORCH_INSTALL_INDEX_BASE", url)
    assert main(["plan", "--target", target]) == 2  # refused: credentials, or no URL a pip would read
    out, err = capsys.readouterr()
    assert err.startswith("torch-install: error: TORCH_INSTALL_INDEX_BASE 'https://***@")
    assert not any(mark in out + err for mark in marks), err


CREDENTIALS = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@CREDENTIALS
@example(user="alice@example.com", password="S3CRET-one")
@example(user="alice", password="pa@ss-S3CRET")
@example(user="a'b\"c\\d", password="p'\"@:;$`!&|<>*")
@given(user=USERINFO, password=USERINFO)
def test_no_credential_of_any_alphabet_is_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str], user: str,
                                                  password: str) -> None:
    no_credential_printed(tmp_path, monkeypatch, capsys, user, password)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=USERINFO, password=USERINFO)
def test_no_credential_of_any_alphabet_is_printed_many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], user: str,
                                                       password: str) -> None:
    no_credential_printed(tmp_path, monkeypatch, capsys, user, password)


@pytest.mark.parametrize(("text", "expected"), [
    ("https://alice@example.com:S3cret@mirror.invalid/simple", "https://***@mirror.invalid/simple"),
    ("https://alice:pa@ss@mirror.invalid/simple", "https://***@mirror.invalid/simple"),
    ("'https://u:p'\"'\"'w@h.invalid/simple'", "'https://***@h.invalid/simple'"),  # as shlex.quote writes it
    ('"https://u:p\\"w@h.invalid/x"', '"https://***@h.invalid/x"'),  # as JSON writes it
    ("git+https://git:tok@h.invalid/r.git", "git+https://***@h.invalid/r.git"),
    ("https://git@evil:pw@h.invalid/", "https://***@h.invalid/"),
    ("hf_token=abc123", "hf_token=***"),
    ('HF_TOKEN="a b c" next', 'HF_TOKEN="***" next'),
    ("export NPM_AUTH='x y'", "export NPM_AUTH='***'"),
    ('{"name": "HF_TOKEN", "value": "hf_abc"}', '{"name": "HF_TOKEN", "value": "***"}'),
    ('{"value": "hf_abc", "name": "my_api_key"}', '{"value": "***", "name": "my_api_key"}'),
    ('{"hf_token": "x"}', '{"hf_token": "***"}'),
])
def test_redact_reads_credentials_as_pip_does(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected


@pytest.mark.parametrize("text", ["tokenizers==0.19.1", "author=me", "pkg @ https://h.invalid/a@b.whl",
                                  "https://h.invalid:8080/simple", '{"url":"https://h.invalid/x"}'])
def test_redact_leaves_requirements_and_plain_urls(text: str) -> None:
    assert redact(text) == text


def test_an_excerpt_is_redacted_before_it_is_cut() -> None:
    url = "https://alice:" + "s" * 100 + "@mirror.invalid/simple"
    assert excerpt(url, 40) == "https://***@mirror.invalid/simple"[:40]
