"""A direct reference to a wheel is the user's choice of build: ``torch @ URL`` (or a bare URL or path of a wheel)
plans the release and variant its file name says, where it installs (its Python and platform tags) and runs (its
variant on the machine's GPU and driver), keeps the reference in every command and file, and is a blocker naming
what would run where it does not. Credentials in its URL are never printed."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.errors import InputError
from torch_install.resolver.references import reference_of

LINUX = ["--os", "linux", "--arch", "x86_64", "--python", "3.12"]
RTX = [*LINUX, "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06"]
CU128 = "https://download.pytorch.org/whl/cu128/torch-2.7.1%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl"
REF = f"torch @ {CU128}"


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main(["plan", *argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code in (0, 4), err
    return json.loads(out)


def blockers(p: dict) -> list[dict]:
    return [w for w in p["warnings"] if w["blocking"]]


@pytest.mark.parametrize(("text", "name", "version", "requirement"), [
    (REF, "torch", "2.7.1+cu128", REF),
    (CU128, "torch", "2.7.1+cu128", REF),  # pip's bare URL: written as name @ URL
    (f"Torch @ {CU128} ; sys_platform == 'linux'", "torch", "2.7.1+cu128", REF),
    ("./wheels/torch-2.6.0+cpu-cp312-cp312-linux_x86_64.whl", "torch", "2.6.0+cpu",
     "./wheels/torch-2.6.0+cpu-cp312-cp312-linux_x86_64.whl"),
    ("torchvision @ file:///w/torchvision-0.22.1%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=ab",
     "torchvision", "0.22.1+cu128",
     "torchvision @ file:///w/torchvision-0.22.1%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=ab"),
])
def test_a_wheels_file_name_says_its_project_release_and_label(text: str, name: str, version: str,
                                                              requirement: str) -> None:
    found = reference_of(text)
    assert found is not None and (found.name, found.version, found.requirement) == (name, version, requirement)


@pytest.mark.parametrize(("text", "expected"), [
    ("torch @ https://h/torch-2.7.1.tar.gz", "not a wheel file"),
    ("torch @ git+https://github.com/pytorch/pytorch@v2.7.1", "not a wheel file"),
    ("torch @ https://h/torchvision-0.22.1-cp312-cp312-linux_x86_64.whl", "the wheel 'torchvision-0.22.1"),
])
def test_a_location_that_is_no_wheel_of_its_project_is_one_input_error(text: str, expected: str) -> None:
    with pytest.raises(InputError, match=expected):
        reference_of(text)


def test_torch_at_a_cu128_wheel_plans_that_build_and_keeps_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *RTX, REF, "torchvision", "numpy")
    choice = p["choice"]
    assert (choice["torch"], choice["variant"], p["gpu_accelerated"]) == ("2.7.1", "cu128", True)
    assert choice["packages"] == {"torch": "2.7.1+cu128", "torchvision": "0.22.1+cu128"}
    assert choice["references"] == {"torch": REF} and not blockers(p)
    first, second = p["commands"]["pip"].split(" && ")
    assert shlex.split(first)[4:] == [REF, "torchvision==0.22.1+cu128", "--index-url",
                                      "https://download.pytorch.org/whl/cu128"]
    assert shlex.split(second)[4:] == ["numpy", "torch==2.7.1+cu128", "torchvision==0.22.1+cu128"]
    assert shlex.split(p["commands"]["uv"].split(" && ")[0])[3] == REF
    assert any("torch @ …/torch-2.7.1+cu128-cp312-cp312-manylinux_2_28_x86_64.whl names it" in r
               for r in p["reasons"])


@pytest.mark.parametrize(("argv", "code", "runs"), [
    ([*LINUX], "gpu-arch-unsupported", "torch 2.7.1+cpu runs here on the CPU: ask for torch==2.7.1 instead"),
    ([*RTX[:-1], "520.61.05"], "driver-too-old", "torch 2.7.1+cu118 runs here on the GPU"),
    (["--os", "linux", "--arch", "x86_64", "--python", "3.11"], "python-unsupported",
     "the wheel is built for cp312-cp312, not Python 3.11; torch 2.7.1+cpu runs here"),
    (["--os", "windows", "--arch", "x86_64", "--python", "3.12"], "platform-unsupported",
     "the wheel is built for manylinux_2_28_x86_64, not windows_x86_64; torch 2.7.1+cpu runs here"),
    (["--os", "linux", "--arch", "aarch64", "--python", "3.12"], "platform-unsupported", "not linux_aarch64"),
])
def test_a_wheel_that_does_not_run_here_is_a_blocker_naming_what_would(argv: list[str], code: str, runs: str,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *argv, REF)
    found = [w for w in blockers(p) if w["code"] == code]
    assert found and runs in found[0]["message"], p["warnings"]
    assert "no torch release" not in json.dumps(p["warnings"])


def test_a_wheel_without_a_label_is_the_default_indexs_build_of_its_platform(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The default index's torch 2.7.1 for Linux x86_64 is its cu126 build (the matrix's ``pypi``), installed as
    the file it is: the later step pins its own version, which has no label."""
    wheel = "torch @ https://files.example/torch-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl"
    p = plan(capsys, *RTX, wheel, "torchvision", "numpy")
    assert (p["choice"]["variant"], p["choice"]["packages"]["torch"]) == ("cu126", "2.7.1")
    first, second = p["commands"]["pip"].split(" && ")
    assert wheel in shlex.split(first) and "torch==2.7.1" in shlex.split(second)
    mac = plan(capsys, "--os", "macos", "--arch", "arm64", "--python", "3.12",
               "torch @ https://files.example/torch-2.7.1-cp312-none-macosx_11_0_arm64.whl")
    assert (mac["choice"]["variant"], mac["gpu_accelerated"]) == ("default", True) and not blockers(mac)


def test_credentials_in_the_reference_are_never_printed(capsys: pytest.CaptureFixture[str]) -> None:
    secret = "torch @ https://me:s3cr3t-t0ken@wheels.example/torch-2.7.1%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl"
    for fmt in ("text", "json", "pip", "requirements", "pyproject"):
        assert main(["plan", *RTX, secret, "--format", fmt]) == 0
        out, err = capsys.readouterr()
        assert "s3cr3t" not in out + err and "wheels.example" in out + err, fmt
    assert main(["plan", *LINUX[:-1], "3.11", secret]) == 4
    out, err = capsys.readouterr()
    assert "s3cr3t" not in out + err
    assert main(["plan", *LINUX, secret.replace(".whl", ".tar.gz")]) == 2  # the error line too
    err = capsys.readouterr().err
    assert "not a wheel file" in err and "s3cr3t" not in err


@pytest.mark.parametrize("fmt", ["requirements", "pyproject"])
def test_what_the_product_writes_for_a_reference_reads_back_to_the_same_plan(
        fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = plan(capsys, *RTX, REF, "torchvision")
    assert main(["plan", *RTX, REF, "torchvision", "--format", fmt]) == 0
    written = capsys.readouterr().out
    assert CU128 in written
    name = "pyproject.toml" if fmt == "pyproject" else "requirements.txt"
    (tmp_path / name).write_text(written)
    again = plan(capsys, *RTX, *(["-r", str(tmp_path / name)] if fmt == "requirements"
                                 else ["--project", str(tmp_path)]))
    assert again["choice"]["packages"] == first["choice"]["packages"]
    assert again["commands"]["pip"].split(" && ")[0] == first["commands"]["pip"].split(" && ")[0]


def test_a_file_line_and_a_pinned_label_that_name_two_builds_are_one_input_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.txt").write_text(f"{REF}\ntorchvision==0.22.1+cpu\n")
    assert main(["plan", *RTX, "-r", str(tmp_path / "r.txt")]) == 2
    err = capsys.readouterr().err
    assert "name two builds (cu128, cpu)" in err and len(err.splitlines()) == 1


def test_an_editable_or_source_torch_is_one_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.txt").write_text("torch @ git+https://github.com/pytorch/pytorch@v2.7.1\n")
    assert main(["plan", *RTX, "-r", str(tmp_path / "r.txt")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'r.txt'}:1:" in err and "not a wheel file" in err and len(err.splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_install_takes_the_users_wheel_with_real_pip_and_uv(httpserver, tmp_path: Path, make_venv,
                                                            installer: str) -> None:
    """``torch @ URL`` from a loopback file host (credentials in the URL), torchvision from the PyTorch-index
    stand-in's cpu index, numpy from the user's index: each installs from where it should, and the credentials
    reach the installer but not the output."""
    import subprocess
    import sys

    from wheels import build_wheel, installer_env, serve_wheels

    default, pytorch, files = (tmp_path / d for d in ("default", "pytorch", "files"))
    for d in (default, pytorch, files):
        d.mkdir()
    serve_wheels(httpserver, "/simple", [build_wheel(default, "numpy", "1.26.4"),
                                         build_wheel(default, "torch", "2.7.1", requires=["numpy"])])
    serve_wheels(httpserver, "/whl/cpu", [build_wheel(pytorch, "numpy", "1.26.4"),
                                          build_wheel(pytorch, "torchvision", "0.22.1+cpu",
                                                      requires=["torch==2.7.1", "numpy"])])
    wheel = build_wheel(files, "torch", "2.7.1+cpu", requires=["numpy"])
    httpserver.expect_request(f"/mine/{wheel.name}").respond_with_data(wheel.read_bytes())
    url = httpserver.url_for(f"/mine/{wheel.name}").replace("://", "://me:s3cr3t@").replace("+", "%2B")
    simple = httpserver.url_for("/simple").rstrip("/") + "/"
    python = make_venv(tmp_path / "env", with_pip=installer == "pip")
    done = subprocess.run([sys.executable, "-m", "torch_install", "install", f"torch @ {url}", "torchvision", "numpy",
                           "--python", str(python), "--index-base", httpserver.url_for("/whl").rstrip("/"),
                           "--installer", installer], capture_output=True, text=True,
                          env=installer_env(tmp_path, simple), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    # torch-install's own lines (the plan, the commands it runs) are redacted, and so is what the installer prints
    # (pip's "Collecting torch@ URL" line)
    assert "s3cr3t" not in done.stdout + done.stderr
    assert f"torch @ {url.replace('me:s3cr3t', '***')}" in done.stdout + done.stderr
    code = "import importlib.metadata as m; print(m.version('torch'), m.version('torchvision'), m.version('numpy'))"
    versions = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert versions == ["2.7.1+cpu", "0.22.1+cpu", "1.26.4"]
    assert any(f"/mine/{wheel.name}" in str(entry[0].path) for entry in httpserver.log)


# ---- other packages' direct references --------------------------------------------------------------------------

XFORMERS = "xformers @ https://wheels.example/xformers-0.0.28.post3-cp312-cp312-manylinux_2_28_x86_64.whl"
FLASH = ("flash-attn @ https://github.com/Dao-AILab/flash-attention/releases/download/v2.7.4.post1/"
         "flash_attn-2.7.4.post1+cu12torch2.5cxx11abiFALSE-cp312-cp312-linux_x86_64.whl")


def test_a_table_packages_wheel_holds_torch_to_what_its_release_needs(capsys: pytest.CaptureFixture[str]) -> None:
    """xformers 0.0.28.post3's METADATA (the table's) pins torch==2.5.1: the wheel moves torch there, offline, and
    installs from its URL in the step that follows the build."""
    p = plan(capsys, *RTX, "torch", XFORMERS)
    assert (p["choice"]["torch"], p["choice"]["variant"]) == ("2.5.1", "cu124")
    assert [(c["name"], c["version"], c["from"], c["requirement"]) for c in p["choice"]["companions"]] == [
        ("xformers", "0.0.28.post3", "url", XFORMERS)]
    assert p["commands"]["pip"].split(" && ")[1].count(XFORMERS) == 1
    assert any(w["code"] == "constrained-by" and "needs torch==2.5.1" in w["message"] for w in p["warnings"])


def test_a_release_wheels_label_names_the_torch_and_cuda_it_was_built_for(
        capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *RTX, "torch", FLASH)
    assert (p["choice"]["torch"], p["choice"]["variant"]) == ("2.5.1", "cu124")
    assert any("is the build for torch 2.5, CUDA 12" in r["reason"] for r in p["rejected"])
    pinned = plan(capsys, *RTX, "torch==2.5.1+cu118", FLASH)
    left = [w["message"] for w in pinned["warnings"] if "left out of the commands" in w["message"]]
    assert left and "is the build for torch 2.5, CUDA 12" in left[0]  # never silently dropped


def test_a_wheel_unknown_to_the_table_is_named_offline_and_adds_no_constraint(
        capsys: pytest.CaptureFixture[str]) -> None:
    p = plan(capsys, *LINUX, "torch", "sglang @ https://wheels.example/sglang-0.5.3-py3-none-any.whl")
    assert p["choice"]["torch"] == "2.15.0"
    unknown = [w["message"] for w in p["warnings"] if w["code"] == "requirement-unknown"]
    assert unknown and "sglang" in unknown[0] and "--online" in unknown[0]


def test_online_the_wheels_own_metadata_constrains_torch(httpserver, monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With --online the wheel's METADATA is read by PEP 658 (``URL.metadata``), or where there is none by ranged
    reads of the wheel itself; its Requires-Dist on torch moves the plan."""
    from servers import closed_port
    from wheels import build_wheel

    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")
    monkeypatch.setenv("TORCH_INSTALL_DEFAULT_INDEX", httpserver.url_for("/simple/"))
    httpserver.expect_request("/w/sglang-0.5.3-py3-none-any.whl.metadata").respond_with_data(
        "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.3\nRequires-Dist: torch==2.8.0\n"
        "Requires-Dist: nvidia-ml-py\n")
    wheel = build_wheel(tmp_path, "servekit", "1.0", requires=["torch<2.10,>=2.9"])
    data = wheel.read_bytes()

    def ranged(request):  # noqa: ANN001, ANN202 - werkzeug's request; a 206 answer as a file server gives it
        from werkzeug import Response

        first, _, last = request.headers["Range"].removeprefix("bytes=").partition("-")
        start, end = (len(data) - int(last), len(data) - 1) if not first else (int(first), min(int(last),
                                                                                                len(data) - 1))
        start = max(start, 0)
        return Response(data[start:end + 1], status=206,
                        headers={"Content-Range": f"bytes {start}-{end}/{len(data)}"})

    httpserver.expect_request(f"/w/{wheel.name}.metadata").respond_with_data("", status=404)
    httpserver.expect_request(f"/w/{wheel.name}").respond_with_handler(ranged)
    down = f"http://127.0.0.1:{closed_port()}/whl"
    for ref, torch in ((f"sglang @ {httpserver.url_for('/w/sglang-0.5.3-py3-none-any.whl')}", "2.8.0"),
                       (httpserver.url_for(f"/w/{wheel.name}"), "2.9.1")):
        assert main(["plan", *LINUX, "--online", "--index-base", down, "torch", ref, "--format", "json"]) == 0
        out, err = capsys.readouterr()
        p = json.loads(out)
        assert p["choice"]["torch"] == torch, err
        assert "requirement-unknown" not in [w["code"] for w in p["warnings"]]
        assert ref.split(" @ ")[-1] in p["commands"]["pip"]


def test_an_installer_given_a_credential_is_read_through_the_redaction(tmp_path: Path) -> None:
    """On the command line or in a step file it names: the installer's output is then piped and masked."""
    from torch_install.environment.install import carries_secret

    step = tmp_path / "requirements.txt"
    step.write_text("numpy\n")
    assert not carries_secret(["python", "-m", "pip", "install", "-r", str(step), "torch==2.7.1+cpu"])
    assert carries_secret(["python", "-m", "pip", "install", "torch @ https://me:s3cr3t@wheels.example/t.whl"])
    step.write_text("--extra-index-url https://__token__:abc@mirror.example/simple\nnumpy\n")
    assert carries_secret(["python", "-m", "pip", "install", "-r", str(step)])
