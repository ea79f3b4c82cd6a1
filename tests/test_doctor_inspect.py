"""Inspecting environments: a real second venv through --python, the CLI's exit codes and JSON, bad input."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.doctor.inspect import inspect_environment, read_version_py
from torch_install.doctor.runtime import import_torch
from torch_install.environment.dists import parse_headers
from torch_install.environment.interpreter import query_interpreter

FIXTURES = Path(__file__).parent / "fixtures" / "site-packages"


@pytest.fixture(scope="module")
def venv(tmp_path_factory, make_venv) -> Path:
    """A real venv (no pip, for speed) holding the 2.8.0+cu128 fixture's torch metadata."""
    root = tmp_path_factory.mktemp("venv") / "env"
    make_venv(root, with_pip=False)
    site = next(root.glob("lib/python*/site-packages"))
    shutil.copytree(FIXTURES / "cu128-2.8.0", site, dirs_exist_ok=True)
    return root


@pytest.mark.slow
def test_python_flag_reads_another_venv_without_importing_torch(venv):
    installed = inspect_environment(query_interpreter(str(venv / "bin" / "python"), environ={}))
    interp = installed.interpreter
    assert Path(interp.prefix) == venv and interp.in_venv and not interp.user_site_active
    assert interp.version.startswith(f"{sys.version_info.major}.{sys.version_info.minor}.")
    torch = installed.dist("torch")
    assert torch is not None and torch.version == "2.8.0+cu128" and torch.installer == "pip"
    assert torch.wheel_tags == ("cp311-cp311-manylinux_2_28_x86_64",)
    assert any(r.startswith("nvidia-cudnn-cu12==9.10.2.21") for r in torch.requires)
    assert installed.builds["torch"].text("cuda") == "12.8"
    assert {d.name for d in installed.dists} >= {"torch", "nvidia-cudnn-cu12", "nvidia-cublas-cu12"}
    assert installed.dist("nvidia-cublas-cu12").record_size() > 700_000_000


@pytest.mark.slow
def test_python_flag_sees_pythonpath_like_a_normal_start(venv, tmp_path):
    extra = tmp_path / "extra"
    shutil.copytree(FIXTURES / "cpu-2.9.1", extra)
    installed = inspect_environment(query_interpreter(str(venv / "bin" / "python"), environ={"PYTHONPATH": str(extra)}))
    assert [d.version for d in installed.all_named("torch")] == ["2.9.1+cpu", "2.8.0+cu128"]
    assert installed.packages["torch"] == str(extra / "torch")


@pytest.mark.slow
def test_cli_doctor_on_a_second_venv_with_a_target_machine(venv, tmp_path, capsys):
    target = tmp_path / "gtx1080.json"
    target.write_text(json.dumps({"os": "linux", "arch": "x86_64", "glibc": "2.35", "nvidia_driver": "570.133.07",
                                  "gpus": [{"vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080",
                                            "compute_capability": "6.1"}]}))
    code = main(["doctor", "--python", str(venv / "bin" / "python"), "--target", str(target), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["exit_code"] == 1 and not out["healthy"]
    assert [f["code"] for f in out["findings"]] == ["gpu-arch-not-in-build", "install-guard-missing"]
    assert out["torch"] == {**out["torch"], "version": "2.8.0", "variant": "cu128", "installer": "pip"}
    assert "torch==2.8.0+cu126" in out["fix"]["command"]
    assert out["fix"]["command"].startswith(str(venv / "bin" / "python"))  # the env inspected, not ours
    code = main(["doctor", "--python", str(venv / "bin" / "python"), "--target", str(target)])
    text = capsys.readouterr().out
    assert code == 1 and "Errors (1)" in text and "[gpu-arch-not-in-build]" in text and "fix:" in text


@pytest.mark.slow
def test_cli_doctor_target_without_gpus_says_unknown_not_none(venv, tmp_path, capsys):
    """A profile that leaves out ``gpus`` does not state the hardware: the report must not claim "no GPU"."""
    target = tmp_path / "platform-only.json"
    target.write_text(json.dumps({"os": "linux", "arch": "x86_64", "glibc": "2.35"}))
    code = main(["doctor", "--python", str(venv / "bin" / "python"), "--target", str(target)])
    text = capsys.readouterr().out
    assert code == 0 and "GPUs not stated in the profile" in text and "no GPU found" not in text
    target.write_text(json.dumps({"os": "linux", "arch": "x86_64", "glibc": "2.35", "gpus": []}))
    main(["doctor", "--python", str(venv / "bin" / "python"), "--target", str(target)])
    assert "no GPU found" in capsys.readouterr().out


@pytest.mark.slow
def test_cli_healthy_exit_zero_with_a_captured_sysroot(tmp_path, capsys):
    """A --sysroot tree supplies the hardware; no GPU there and a CPU torch: healthy."""
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    (root / "_env.json").write_text("{}")
    (root / "_host.json").write_text(json.dumps({"system": "Linux", "machine": "x86_64", "libc": "glibc 2.35"}))
    site = tmp_path / "env" / "lib" / "site-packages"
    shutil.copytree(FIXTURES / "cpu-2.9.1", site)
    py = tmp_path / "env" / "python"
    facts = {"executable": str(py), "version": "3.11.7", "implementation": "cpython", "free_threaded": False,
             "system": "Linux", "machine": "x86_64", "path": [str(site)], "site_packages": [str(site)],
             "user_site": None, "user_site_allowed": False, "prefix": str(tmp_path / "env"),
             "base_prefix": "/usr", "isolated": True}
    py.write_text(f"#!/bin/sh\necho '{json.dumps(facts)}'\n")
    py.chmod(py.stat().st_mode | stat.S_IEXEC)
    code = main(["doctor", "--sysroot", str(root), "--python", str(py)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Healthy" in out and "torch    2.9.1 (cpu)" in out


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: None, "no such file"),
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: (p.write_text("#!/bin/sh\necho hello\n"), p.chmod(0o755)), "not a Python 3 interpreter"),
    (lambda p: (p.write_text("#!/bin/sh\nexec sleep 30\n"), p.chmod(0o755)), "did not answer within"),
    (lambda p: (p.write_text("plain text"), p.chmod(0o644)), "cannot run it"),
])
@pytest.mark.slow
def test_bad_python_flag_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, make, message):
    import torch_install.environment.interpreter as interpreter_module

    monkeypatch.setattr(interpreter_module, "FACTS_TIMEOUT", 1.0)
    bad = tmp_path / "python"
    make(bad)
    target = tmp_path / "target.json"
    target.write_text('{"os": "linux", "arch": "x86_64"}')
    code = main(["doctor", "--python", str(bad), "--target", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bad_target_and_timeout_are_usage_errors(tmp_path, capsys):
    assert main(["doctor", "--target", str(tmp_path / "missing.json")]) == 2
    assert "cannot read machine profile" in capsys.readouterr().err
    assert main(["doctor", "--import-timeout", "0"]) == 2


def test_unreadable_dist_info_and_odd_version_py(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(FIXTURES / "bad-version-py", site)
    build = read_version_py("torch", str(site / "torch" / "version.py"))
    assert build.problem == "not valid Python (syntax error at line 4)"
    (site / "torch" / "version.py").write_text("import os\n__version__ = os.environ['X']\ncuda = None\n")
    assert read_version_py("torch", str(site / "torch" / "version.py")).problem == "has no __version__ string"
    assert read_version_py("torch", str(site / "nothing.py")).problem == "missing"
    headers = parse_headers("Name: torch\nRequires-Dist: a\nRequires-Dist: b;\n  extra == 'x'\n\nBody: no\n")
    assert headers == {"name": ["torch"], "requires-dist": ["a", "b; extra == 'x'"]}


def _fake_python(tmp_path: Path, torch_init: str) -> str:
    """A real interpreter whose import path holds a torch package with the given __init__ (for the child runner)."""
    (tmp_path / "pkgs" / "torch").mkdir(parents=True)
    (tmp_path / "pkgs" / "torch" / "__init__.py").write_text(torch_init)
    return str(tmp_path / "pkgs")


@pytest.mark.slow
def test_import_torch_crash_and_hang_are_findings_not_doctor_failures(tmp_path):
    crash = _fake_python(tmp_path / "a", "import os\nos.abort()\n")
    report = import_torch(sys.executable, {**os.environ, "PYTHONPATH": crash}, expect_gpu=True, timeout=20)
    assert not report.ok and report.findings[0].code == "import-torch-crashed"
    assert "SIGABRT" in report.findings[0].evidence[0]
    hang = _fake_python(tmp_path / "b", "import time\ntime.sleep(60)\n")
    report = import_torch(sys.executable, {**os.environ, "PYTHONPATH": hang}, expect_gpu=True, timeout=1)
    assert report.findings[0].code == "import-torch-hung"
    broken = _fake_python(tmp_path / "c", "raise ImportError('libcudnn.so.9: cannot open shared object file')\n")
    report = import_torch(sys.executable, {**os.environ, "PYTHONPATH": broken}, expect_gpu=True, timeout=20)
    assert report.findings[0].code == "import-torch-failed"
    assert "libcudnn.so.9: cannot open shared object file" in report.findings[0].evidence[0]


# Fixtures whose torch/version.py is deliberately not the file their RECORD describes.
_RECORD_MISMATCH_ON_PURPOSE = {"duplicate/torch/version.py",  # 2.9.1+cpu overwrote 2.8.0's file
                               "bad-version-py/torch/version.py"}  # truncated


def test_fixture_records_describe_their_files_and_git_versions_are_commits():
    """Fixture wheels look like real installs: RECORD's sha256 and size match each file present, and every
    version.py carries a 40-hex git_version (a release commit, or all zeros where marked as an example)."""
    import base64
    import csv
    import hashlib
    import re

    for record in FIXTURES.glob("*/*.dist-info/RECORD"):
        site = record.parent.parent
        for row in csv.reader(record.read_text(encoding="utf-8").splitlines()):
            path = site / row[0]
            relative = f"{site.name}/{row[0]}"
            if not row[1] or not path.is_file() or relative in _RECORD_MISMATCH_ON_PURPOSE:
                continue
            if re.fullmatch(r"nvidia/[^/]+/lib/[^/]+\.so[.\d]*", row[0]) and path.stat().st_size == 0:
                continue  # an empty stand-in for a shared library whose RECORD row keeps the wheel's size
            data = path.read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert row[1:] == [f"sha256={digest}", str(len(data))], relative
    for version_py in FIXTURES.glob("*/*/version.py"):
        text = version_py.read_text(encoding="utf-8")
        match = re.search(r"^git_version = '([^']*)'$", text, re.M)
        if match is None:
            continue  # truncated on purpose
        assert re.fullmatch(r"[0-9a-f]{40}", match[1]), version_py
        if set(match[1]) == {"0"}:
            assert "# example value" in text, f"{version_py}: an example hash must say so"


@pytest.mark.slow
def test_import_torch_failure_gets_a_reinstall_that_pip_will_not_skip(tmp_path, capsys, make_venv):
    """A torch whose import fails is reinstalled by the fix, forced, since its dist-info names the pinned version."""
    root = tmp_path / "env"
    make_venv(root, with_pip=False)
    site = next(root.glob("lib/python*/site-packages"))
    shutil.copytree(FIXTURES / "cu128-2.8.0", site, dirs_exist_ok=True)
    (site / "torch" / "__init__.py").write_text("raise ImportError('libcudnn.so.9: cannot open shared object file')\n")
    target = tmp_path / "h100.json"
    target.write_text(json.dumps({"os": "linux", "arch": "x86_64", "glibc": "2.35", "nvidia_driver": "570.133.07",
                                  "gpus": [{"vendor": "nvidia", "name": "NVIDIA H100 80GB HBM3",
                                            "compute_capability": "9.0"}]}))
    code = main(["doctor", "--python", str(root / "bin" / "python"), "--target", str(target), "--json",
                 "--import-torch", "--import-timeout", "30"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    finding = next(f for f in out["findings"] if f["code"] == "import-torch-failed")
    assert finding["fix"] == out["fix"]["command"]
    assert "--force-reinstall" in finding["fix"] and "torch==2.8.0+cu128" in finding["fix"]
