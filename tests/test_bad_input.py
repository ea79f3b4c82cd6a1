"""Bad input is one line and exit 2, never a guess: duplicate keys, deep nesting and an impossible macOS version in
a profile, empty paths, contradictions under doctor --target; and a pre-release plan keeps the user's specifiers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from torch_install.cli import main


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize(("text", "words"), [
    ('{"os": "linux", "os": "macos", "arch": "x86_64"}', "key 'os' appears twice in one object"),
    ('{"os": "linux", "gpus": [{"vendor": "nvidia", "vendor": "amd"}]}', "key 'vendor' appears twice"),
    ('{"os": "linux", "notes": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"os": "macos", "arch": "arm64", "python": "3.12", "os_version": "1000000"}', "is not a macOS version"),
    ('{"os": "macos", "arch": "arm64", "python": "3.12", "os_version": "14.5.1.9"}', "is not a macOS version"),
])
def test_profiles_that_no_machine_writes(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str,
                                         words: str) -> None:
    target = tmp_path / "p.json"
    target.write_text(text)
    assert words in one_line_error(capsys, ["plan", "--offline", "--target", str(target)])


@pytest.mark.parametrize("argv", [["plan", "--sysroot", ""], ["detect", "--sysroot", " "],
                                  ["doctor", "--python", ""], ["install", "--dry-run", "--python", ""]])
def test_an_empty_path_is_an_error_not_this_machine(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2 and "empty value" in capsys.readouterr().err


def test_doctor_target_runs_the_contradiction_checks_of_plan(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    target = tmp_path / "p.json"
    target.write_text(json.dumps({"os": "macos", "arch": "arm64", "python": "3.12", "rocm": "6.4.1"}))
    assert "AMD publishes no ROCm for macOS" in one_line_error(capsys, ["doctor", "--target", str(target)])


def test_a_real_macos_version_is_taken(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "p.json"
    target.write_text(json.dumps({"os": "macos", "arch": "arm64", "python": "3.12", "os_version": "15.5"}))
    assert main(["plan", "--offline", "--target", str(target), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["choice"] is not None


def test_a_pre_release_plan_keeps_the_version_specifiers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--offline", "--channel", "nightly", "torch>=2.9", "torchvision", "--os", "linux",
                 "--arch", "x86_64", "--python", "3.12", "--format", "pip"]) == 0
    assert capsys.readouterr().out.strip() == ("python -m pip install 'torch>=2.9' torchvision --pre --index-url "
                                               "https://download.pytorch.org/whl/nightly/cpu")


# Output cannot be forged: control characters and line breaks from a profile or capture are escaped in text mode
FORGED = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35", "notes": ["x\nCommand: rm -rf /"],
          "gpus": [{"vendor": "nvidia", "name": "NVIDIA \u001b]0;owned\u0007\u001b[2J GTX 1080",
                    "compute_capability": "6.1"}]}


@pytest.mark.parametrize("command", ["detect", "plan", "doctor"])
def test_text_output_escapes_what_a_profile_holds(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  command: str) -> None:
    target = tmp_path / "p.json"
    target.write_text(json.dumps(FORGED))
    main([command, "--target", str(target), *(["--offline"] if command == "plan" else [])])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert not any(line.startswith("Command: rm") for line in out.splitlines())
    if command != "plan":  # plan shows no machine notes; detect and doctor show the GPU's name, escaped
        assert "\\x1b]0;owned\\x07" in out


def test_command_sidecars_that_link_out_of_a_capture_are_not_read(tmp_path: Path) -> None:
    import os
    import shutil

    from sysroot import FIXTURES
    from torch_install.probe import Probe, command_slug

    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "gtx1080", root, symlinks=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n")
    base = root / "_commands" / command_slug(["nvidia-smi"])
    base.parent.mkdir(exist_ok=True)
    base.write_text("ok\n")
    os.symlink(secret, str(base) + ".stderr")
    result = Probe(root=root).run(["nvidia-smi"])
    assert result.stdout == "ok\n" and "host secret" not in result.stderr


@pytest.mark.parametrize("command", ["detect", "plan", "doctor"])
def test_a_directory_that_is_no_capture_is_an_error_not_an_empty_machine(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path, command: str) -> None:
    (tmp_path / "etc").mkdir()
    with pytest.raises(SystemExit) as exited:
        main([command, "--sysroot", str(tmp_path)])
    assert exited.value.code == 2 and "not a captured tree (no _host.json" in capsys.readouterr().err


def test_install_says_what_it_installs_and_why_before_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--dry-run", "--offline", "--variant", "cpu"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("Choice:   torch ") and "\nWhy:      " in err
    assert out.strip().endswith("--index-url https://download.pytorch.org/whl/cpu")


@pytest.mark.parametrize("command", [["plan", "--offline"], ["matrix", "--offline"]])
def test_json_is_an_alias_of_format_json(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    assert main([*command, "--json"]) == 0
    assert isinstance(json.loads(capsys.readouterr().out), (dict, list))


@pytest.mark.parametrize(("base", "pip_tail", "uv_tail"), [
    ("http://mirror.example/whl", "--trusted-host mirror.example", "--allow-insecure-host mirror.example"),
    ("http://mirror.example:8080/whl", "--trusted-host mirror.example:8080",
     "--allow-insecure-host mirror.example:8080"),
    ("http://127.0.0.1:8080/whl", "/whl/cpu", "/whl/cpu"),  # loopback: pip trusts it already
    ("https://mirror.example/whl", "/whl/cpu", "/whl/cpu")])
def test_an_allowed_plain_http_mirror_is_trusted_in_the_commands(capsys: pytest.CaptureFixture[str], base: str,
                                                                  pip_tail: str, uv_tail: str) -> None:
    argv = ["plan", "--offline", "--os", "linux", "--arch", "x86_64", "--python", "3.12", "--index-base", base,
            "--allow-insecure-index", "--format"]
    assert main([*argv, "pip"]) == 0
    assert capsys.readouterr().out.strip().endswith(pip_tail)
    assert main([*argv, "uv"]) == 0
    assert capsys.readouterr().out.strip().endswith(uv_tail)


@pytest.mark.slow
def test_the_doctors_fix_uses_the_mirror(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path, make_venv) -> None:
    python = str(make_venv(tmp_path / "env", with_pip=False))
    main(["doctor", "--python", python, "--json", "--index-base", "https://mirror.example/whl"])
    command = json.loads(capsys.readouterr().out)["fix"]["command"]
    assert re.search(r"--(index-url|default-index) https://mirror\.example/whl/", command), command
    monkeypatch.setenv("TORCH_INSTALL_INDEX_BASE", "http://mirror.example/whl")
    main(["doctor", "--python", python, "--json", "--allow-insecure-index"])
    assert "--allow-insecure-host mirror.example" in json.loads(capsys.readouterr().out)["fix"]["command"]  # uv: no pip


def test_an_integer_python_cannot_convert_is_input_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "p.json"
    target.write_text('{"schema": 1' + "0" * 5000 + "}")
    assert "not a machine profile (Exceeds the limit (4300 digits)" in one_line_error(
        capsys, ["plan", "--offline", "--target", str(target)])


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "1e9"])
def test_an_import_timeout_that_is_no_time_is_input_error(capsys: pytest.CaptureFixture[str], value: str) -> None:
    assert "--import-timeout: must be a number of seconds from 0 to 3600" in one_line_error(
        capsys, ["doctor", "--import-torch", "--import-timeout", value])


def test_a_variants_file_with_a_huge_integer_is_input_error(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    bad = tmp_path / "torch-2.15.0-variants.json"
    bad.write_text('{"x": 1' + "0" * 5000 + "}")
    assert "not a variants file" in one_line_error(capsys, ["variants", str(bad)])


def _script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/bin/sh").exists(), reason="needs a POSIX shell")
def test_a_command_that_prints_without_end_is_killed_at_the_output_cap(tmp_path: Path) -> None:
    import time

    from torch_install.child_process import MAX_OUTPUT, run_captured

    started = time.monotonic()
    done = run_captured([_script(tmp_path, "forever", "while :; do echo yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy; done\n")], 60)
    assert done.returncode == -9 and len(done.stdout) == MAX_OUTPUT and "output over" in done.stderr
    assert time.monotonic() - started < 30


@pytest.mark.slow
@pytest.mark.skipif(not Path("/usr/bin/setsid").exists(), reason="needs setsid")
def test_a_grandchild_that_leaves_the_group_and_holds_the_pipes_is_not_waited_for(tmp_path: Path) -> None:
    import subprocess
    import time

    from torch_install.child_process import run_captured

    started = time.monotonic()
    done = run_captured([_script(tmp_path, "setsid", "setsid sleep 20.25 &\necho answer\n")], 60)
    took = time.monotonic() - started
    subprocess.run(["pkill", "-f", "sleep 20\\.25"], check=False)
    assert done.returncode == 0 and done.stdout == "answer\n" and took < 5


# ---- each root cause the report's F12 lists, as it was reproduced ----------------------------------------------

NINES = "9" * 5000


@pytest.mark.parametrize(("argv", "words"), [
    (["plan", f"torch=={NINES}"], "a version number of more than 18 digits"),
    (["plan", "--sysroot", NINES], "not a directory or a .tar.gz capture"),
    (["plan", "--os", "linux", "--arch", "x86_64", "--nvidia-driver", "٥٥٠.٥٤.١٥"], "is not a version"),
    (["plan", "--os", "linux", "--arch", "x86_64", "--python", "3.١٢"], "is malformed"),
])
def test_digits_past_the_limit_or_of_other_scripts_are_input_errors(capsys: pytest.CaptureFixture[str],
                                                                    argv: list[str], words: str) -> None:
    assert words in one_line_error(capsys, argv)


@pytest.mark.parametrize(("profile", "words"), [
    ({"os": "linux", "arch": "x86_64", "python": "3.12", "gpus": 5}, "gpus: expected a list, got 5"),
    ({"os": "linux", "gpus": [{"vendor": None}]}, "gpus[0].vendor: required"),
    ({"os": "linux", "gpus": [{"vendor": "nvidia", "compute_capability": "٨.٩"}]}, "is malformed"),
    ({"os": "linux", "arch": "x86_64", "glibc": "2.999999999"}, "is not plausible"),
])
def test_a_profile_of_the_wrong_types_or_digits_is_input_error(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               profile: dict[str, object], words: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile, ensure_ascii=False), encoding="utf-8")
    assert words in one_line_error(capsys, ["plan", "--target", str(path)])


def test_a_musl_version_without_a_minor_still_plans_online(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "musl": "1"}))
    assert main(["plan", "--target", str(path), "--online", "--offline"]) == 4  # no musl wheels: declined, said why
    assert "glibc-based" in capsys.readouterr().out


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 302 Found\r\nLocation: http://[::1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 80\r\nConnection: close\r\n\r\n"
    b'<a href="http://[::1">torch-2.9.1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl</a>'.ljust(80),
    b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pypi.simple.v1+json\r\nContent-Length: 100000\r\n"
    b"Connection: close\r\n\r\n" + b"[" * 100000,
], ids=["redirect", "listing", "nested-json"])
def test_a_malformed_url_or_page_from_the_index_is_a_warning(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch, answer: bytes) -> None:
    from servers import RawServer

    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")
    server = RawServer(answer)
    try:
        code = main(["plan", "--online", "--index-base", f"http://127.0.0.1:{server.port}/whl", "--os", "linux",
                     "--arch", "x86_64", "--python", "3.12", "--format", "json"])
    finally:
        server.close()
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["choice"]["variant"] == "cpu"
    assert len(err.splitlines()) == 1 and "using the embedded matrix" in err, err


@pytest.mark.slow
def test_a_record_and_version_py_past_the_parsers_limits_are_findings(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    fixtures = Path(__file__).parent / "fixtures" / "site-packages"
    tree = tmp_path / "sp"
    shutil.copytree(fixtures / "healthy-2.9.1-cu128", tree)
    record = next(tree.glob("nvidia_cuda_runtime*.dist-info")) / "RECORD"
    with open(record, "a", encoding="utf-8") as file:
        file.write("nvidia/cuda_runtime/lib/x.so,,²\n" + "x,," + NINES + "\n"
                   + "nvidia/cuda_runtime/lib/y.so," + "a" * 200_000 + ",1\n")
    (tree / "torch" / "version.py").write_text("x = " + "(" * 5000 + "1")
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "torch_install", "doctor"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tree)})
    assert done.returncode == 1 and "internal error" not in done.stderr, done.stderr
    assert re.search(r"^torch +2\.9\.1 \(cu128\)", done.stdout, re.M)  # read from the metadata
    from torch_install.doctor.inspect import read_version_py

    assert read_version_py("torch", str(tree / "torch" / "version.py")).problem is not None


@pytest.mark.slow
def test_doctor_python_runs_nothing_of_the_inspected_environment(tmp_path: Path, make_venv) -> None:
    """F7: a .pth file of the inspected venv neither runs nor spoils the interpreter's answer."""
    import os
    import subprocess
    import sys

    make_venv(tmp_path / "v", with_pip=False)
    site = next((tmp_path / "v" / "lib").glob("python3*/site-packages")) if os.name == "posix" else \
        tmp_path / "v" / "Lib" / "site-packages"
    marker = tmp_path / "PTH-RAN"
    (site / "x.pth").write_text(f"import sys; open({str(marker)!r}, 'w').write('ran'); print('hello from a .pth')\n")
    python = tmp_path / "v" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    done = subprocess.run([sys.executable, "-m", "torch_install", "doctor", "--python", str(python)],
                          capture_output=True, text=True, env={**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none"})
    assert done.returncode in (0, 1), done.stderr
    assert not marker.exists()
    assert re.search(r"^torch +not installed", done.stdout, re.M)


@pytest.mark.slow
def test_a_page_of_millions_of_anchors_keeps_only_the_wheels() -> None:
    from torch_install.index.pages import parse_page

    wheel = "torch-2.9.1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl"
    body = ("<a href='x'>x</a>" * 200_000 + f'<a href="{wheel}#sha256={"a" * 64}">w</a>').encode()
    files = parse_page(body, "text/html", "https://mirror.example/whl/torch/")
    assert [f.filename for f in files] == [wheel]
