"""`--online` reads the default index too (a loopback replica serving its captured pages): a release published
there after the embedded data is learned and planned, labelled as learned; the default index is the one the
user's installer is configured with; a default index that is down costs one warning line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from resolve_cases import TEST_MATRIX
from servers import closed_port
from torch_install.cli import main
from torch_install.index.default_index import default_index_url
from torch_install.index.learn import online_matrix
from torch_install.machine import Gpu, Machine
from torch_install.resolver import Request, resolve
from torch_install.resolver.matrix import version_key

PAGES = Path(__file__).resolve().parents[1] / "scripts" / "reference" / "default-index"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
# The product as it was before the newest captured release: the frozen test matrix without 2.15.0
OLDER = TEST_MATRIX._replace(releases=TEST_MATRIX.releases[1:])
NEWEST = TEST_MATRIX.releases[0].version
LINUX = Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35")
MAC = Machine(os="macos", arch="arm64", python="3.12", os_version="15.5", gpus=(Gpu("apple", "Apple M2", family="m2",
                                                                                      integrated=True),))


@pytest.fixture
def replica(httpserver, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    for project in ("torch", "torchvision", "torchaudio"):
        body = (PAGES / f"{project}.json").read_text(encoding="utf-8")
        httpserver.expect_request(f"/simple/{project}/").respond_with_data(body, content_type=JSON_TYPE)
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TIMEOUT", "2")
    url = httpserver.url_for("/simple/")
    monkeypatch.setenv("TORCH_INSTALL_DEFAULT_INDEX", url)
    return url


def pytorch_index_down() -> str:
    return f"http://127.0.0.1:{closed_port()}/whl"


@pytest.mark.parametrize(("machine", "variant"), [(LINUX, "cpu"), (MAC, "default")])
def test_a_release_newer_than_the_data_is_learned_and_planned(replica: str, machine: Machine, variant: str) -> None:
    result = online_matrix(OLDER, machine, pytorch_index_down())
    assert result.matrix.releases[0].version == NEWEST
    plan = resolve(machine, Request(), result.matrix)
    assert plan.choice is not None and (plan.choice.torch, plan.choice.variant) == (NEWEST, variant)
    lines = (result.matrix.provenance or {}).get(f"{NEWEST}+{variant}", ())
    assert lines[0] == (f"torch {NEWEST}: learned from the default index (TORCH_INSTALL_DEFAULT_INDEX), not in the "
                        "embedded matrix")
    assert "index unreachable" in (result.warning or "")  # the PyTorch index is down; the default index is not


def test_the_plan_says_its_release_was_learned(replica: str, capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from torch_install.resolver import matrix

    monkeypatch.setattr(matrix, "load_matrix", lambda: OLDER)  # a torch-install older than the release
    target = tmp_path / "mac.json"
    target.write_text(MAC.to_json())
    assert main(["plan", "--online", "--index-base", pytorch_index_down(), "--target", str(target),
                 "--format", "json"]) in (0, 1)
    plan = json.loads(capsys.readouterr().out)
    assert any("learned from the default index" in n for n in plan["notes"])


def test_macos_pythons_and_floors_come_from_the_default_index(replica: str) -> None:
    shrunk = OLDER._replace(releases=tuple(r._replace(python={**r.python, "macos_arm64": ("3.12",)})
                                           if r.version == "2.10.0" else r for r in OLDER.releases))
    result = online_matrix(shrunk, MAC, pytorch_index_down())
    assert "3.13" in result.matrix.release("2.10.0").python_tags("macos_arm64")


def test_the_default_index_is_cached(replica: str, httpserver) -> None:
    online_matrix(OLDER, LINUX, pytorch_index_down())
    served = len(httpserver.log)
    again = online_matrix(OLDER, LINUX, pytorch_index_down(), offline=True)
    assert len(httpserver.log) == served and again.matrix.releases[0].version == NEWEST


def test_a_default_index_that_is_down_is_one_warning(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")
    monkeypatch.setenv("TORCH_INSTALL_DEFAULT_INDEX", f"http://127.0.0.1:{closed_port()}/simple/")
    result = online_matrix(OLDER, LINUX, pytorch_index_down())
    assert result.matrix.releases == OLDER.releases
    assert result.warning is not None and "default index unreachable" in result.warning


def test_the_default_index_is_the_installers() -> None:
    assert default_index_url({"PIP_INDEX_URL": "https://mirror.example/simple"}) == (
        "https://mirror.example/simple/", "PIP_INDEX_URL")
    assert default_index_url({"UV_DEFAULT_INDEX": "https://uv.example/simple/"}) == (
        "https://uv.example/simple/", "UV_DEFAULT_INDEX")
    assert default_index_url({"TORCH_INSTALL_DEFAULT_INDEX": "none", "PIP_INDEX_URL": "https://x.example/"}) is None


def test_pip_configuration_is_read(tmp_path: Path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = https://global.example/simple\n[install]\nindex-url = "
                    "https://install.example/simple\n")
    assert default_index_url({"PIP_CONFIG_FILE": str(conf), "HOME": str(tmp_path)}) == (
        "https://install.example/simple/", "pip configuration")


def test_the_target_environments_pip_configuration_is_read_not_the_active_ones(tmp_path: Path) -> None:
    for name in ("active", "target"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pip.conf").write_text(f"[global]\nindex-url = https://{name}.example/simple\n")
    environ = {"HOME": str(tmp_path), "VIRTUAL_ENV": str(tmp_path / "active")}
    assert default_index_url(environ) == ("https://active.example/simple/", "pip configuration")
    assert default_index_url(environ, str(tmp_path / "target")) == ("https://target.example/simple/",
                                                                     "pip configuration")


@pytest.mark.slow
def test_a_plain_http_default_index_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_INSTALL_DEFAULT_INDEX", "http://mirror.example/simple/")
    result = online_matrix(OLDER, LINUX, pytorch_index_down())
    assert "plain http is refused" in (result.warning or "")


@pytest.mark.skipif(os.environ.get("TORCH_INSTALL_TEST_DEFAULT_INDEX") != "1",
                    reason="opt-in: TORCH_INSTALL_TEST_DEFAULT_INDEX=1 reads the real default index")
def test_the_real_default_index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TORCH_INSTALL_DEFAULT_INDEX")
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    result = online_matrix(OLDER, LINUX, pytorch_index_down())
    assert version_key(result.matrix.releases[0].version) >= version_key(NEWEST)
    assert "default index" not in (result.warning or "")
    assert result.matrix.release(NEWEST).pypi["linux_x86_64"] == TEST_MATRIX.release(NEWEST).pypi["linux_x86_64"]


def wheel_bytes(version: str, requires: list[str]) -> bytes:
    """A wheel in the real format (zip, .dist-info/METADATA first, a large payload after it, RECORD last), with the
    Requires-Dist lines torch's wheel of that release declares."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        lines = ["Metadata-Version: 2.4", "Name: torch", f"Version: {version}", "Requires-Python: >=3.11",
                 *(f"Requires-Dist: {r}" for r in requires)]
        wheel.writestr(f"torch-{version}.dist-info/METADATA", "\n".join(lines) + "\n")
        wheel.writestr("torch/lib/libtorch_cuda.so", bytes(range(256)) * 4096, zipfile.ZIP_STORED)
        wheel.writestr(f"torch-{version}.dist-info/RECORD", "")
    return buffer.getvalue()


def serve_with_ranges(httpserver, path: str, body: bytes) -> list[str]:
    """Serve ``body`` at ``path`` answering Range requests (206) as a file host does; returns the ranges asked."""
    from werkzeug import Response

    asked: list[str] = []

    def handler(request):  # type: ignore[no-untyped-def]
        wanted = request.headers.get("Range", "")
        asked.append(wanted)
        if not wanted.startswith("bytes="):
            return Response(body, 200)
        first, _, last = wanted[6:].partition("-")
        start, end = (len(body) - int(last), len(body) - 1) if not first else (int(first), min(int(last or
                                                                                                   len(body) - 1),
                                                                                               len(body) - 1))
        return Response(body[start:end + 1], 206, headers={"Content-Range": f"bytes {start}-{end}/{len(body)}"})

    httpserver.expect_request(path + ".metadata").respond_with_data("", status=404)
    httpserver.expect_request(path).respond_with_handler(handler)
    return asked


def test_the_default_wheels_build_is_read_from_its_metadata_by_range_requests(replica: str, httpserver) -> None:
    page = json.loads((PAGES / "torch.json").read_text(encoding="utf-8"))
    name = f"torch-{NEWEST}-cp312-cp312-manylinux_2_28_x86_64.whl"
    entry = next(f for f in page["files"] if f["filename"] == name)
    path = "/" + entry["url"].split("../../", 1)[1]  # relative to /simple/torch/
    asked = serve_with_ranges(httpserver, path, wheel_bytes(NEWEST, [
        'cuda-toolkit[cublas,cudart,cufft,curand,cusolver,cusparse]==13.2.2; platform_system == "Linux"',
        'triton==3.7.0; platform_system == "Linux" and python_version < "3.16"']))
    result = online_matrix(OLDER, LINUX, pytorch_index_down())
    learned = result.matrix.release(NEWEST)
    assert learned is not None and learned.pypi["linux_x86_64"] == "cu132"
    assert asked and all(a.startswith("bytes=") for a in asked)  # never the whole wheel
    lines = (result.matrix.provenance or {})[f"{NEWEST}+cpu"]
    assert "the default index's wheel is a cu132 build (its METADATA's pins)" in lines


@pytest.mark.parametrize(("requires", "build"), [
    (['nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux" and platform_machine == "x86_64"'], "cu128"),
    (["cuda-toolkit[cudart]==13.0.2; platform_system == \"Linux\""], "cu130"),
    (["filelock", "sympy>=1.13.3"], "cpu"),
    # torch 2.6.0's Linux x86_64 wheel on the default index writes its pins in parentheses
    (['nvidia-cuda-runtime-cu12 (==12.4.127) ; platform_system == "Linux" and platform_machine == "x86_64"'], "cu124")])
def test_the_build_a_wheels_pins_name(requires: list[str], build: str) -> None:
    from torch_install.index.wheel_metadata import build_of

    assert build_of(requires) == build


def test_a_parenthesised_pin_is_read_for_the_wheels_own_platform() -> None:
    from torch_install.index.wheel_metadata import build_of

    pins = ['nvidia-cuda-runtime-cu12 (==12.4.127) ; platform_system == "Linux" and platform_machine == "x86_64"']
    assert build_of(pins, "torch-2.6.0-cp312-cp312-manylinux1_x86_64.whl") == "cu124"
    assert build_of(pins, "torch-2.6.0-cp312-cp312-win_amd64.whl") == "cpu"


CAPTURED_METADATA = Path(__file__).resolve().parents[1] / "scripts" / "reference" / "default-index" / "metadata"


@pytest.mark.parametrize(("wheel", "build"), [
    ("torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl", "cu132"),
    ("torch-2.15.0-cp312-cp312-win_amd64.whl", "cpu"),
    ("torch-2.15.0-cp312-cp312-manylinux_2_28_aarch64.whl", "cu132"),
    ("torch-2.11.0-cp312-cp312-win_amd64.whl", "cpu"),
    ("torch-2.10.0-3-cp312-cp312-manylinux_2_28_x86_64.whl", "cu128"),
    ("torch-2.10.0-cp312-cp312-win_amd64.whl", "cpu"),
    ("torch-2.10.0-cp312-cp312-manylinux_2_28_aarch64.whl", "cpu"),
    ("torch-2.9.1-cp312-cp312-manylinux_2_28_aarch64.whl", "cpu"),
    ("torch-2.6.0-cp312-cp312-manylinux_2_28_aarch64.whl", "cpu"),
    ("torch-2.9.1-cp312-none-macosx_11_0_arm64.whl", "cpu")])
def test_a_real_wheels_pins_count_only_where_their_markers_hold(wheel: str, build: str) -> None:
    """The captured METADATA of the default index's wheels: Windows and (before 2.11) aarch64 wheels carry the
    Linux x86_64 CUDA pins under markers, and are CPU builds."""
    from torch_install.index.wheel_metadata import build_of, requires_dist

    text = (CAPTURED_METADATA / f"{wheel}.metadata").read_text(encoding="utf-8")
    assert build_of(requires_dist(text), wheel) == build


def _package_page(httpserver, name: str, releases: dict[str, list[str]], tmp_path: Path) -> None:
    """``/simple/{name}/`` in the PEP 691 form, each wheel with a PEP 658 metadata file (``core-metadata``)."""
    import hashlib

    from wheels import build_wheel

    files = []
    for version, requires in releases.items():
        wheel = build_wheel(tmp_path, name, version, requires=requires)
        data = wheel.read_bytes()
        with __import__("zipfile").ZipFile(wheel) as archive:
            metadata = archive.read(f"{name}-{version}.dist-info/METADATA")
        httpserver.expect_request(f"/files/{wheel.name}").respond_with_data(data)
        httpserver.expect_request(f"/files/{wheel.name}.metadata").respond_with_data(metadata)
        files.append({"filename": wheel.name, "url": f"/files/{wheel.name}",
                      "hashes": {"sha256": hashlib.sha256(data).hexdigest()},
                      "core-metadata": {"sha256": hashlib.sha256(metadata).hexdigest()}})
    httpserver.expect_request(f"/simple/{name}/").respond_with_data(
        json.dumps({"meta": {"api-version": "1.1"}, "name": name, "files": files}), content_type=JSON_TYPE)


def test_a_package_whose_metadata_pins_an_older_torch_moves_torch_there(replica: str, httpserver, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    _package_page(httpserver, "oldpkg", {"0.9": ["torch==2.8.0"], "1.0": ["numpy", "torch==2.9.1"],
                                         "2.0.dev1": ["torch>=2.16"]}, tmp_path)
    _package_page(httpserver, "plainpkg", {"3.0": ["numpy"]}, tmp_path)
    profile = tmp_path / "cpu.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    code = main(["plan", "--online", "--index-base", pytorch_index_down(), "--target", str(profile), "oldpkg",
                 "plainpkg", "--format", "json"])
    out, err = capsys.readouterr()
    plan = json.loads(out)
    assert code == 0 and plan["choice"]["torch"] == "2.9.1", err
    held = next(w for w in plan["warnings"] if w["code"] == "constrained-by")
    assert held["message"].startswith("oldpkg (command line) needs torch ==2.9.1 or ==2.8.0: torch 2.9.1 is the newest")
    steps = plan["commands"]["pip"].split(" && ")
    assert steps[1] == "python -m pip install plainpkg oldpkg==1.0 torch==2.9.1+cpu"
    offline = main(["plan", "--offline", "--online", "--index-base", pytorch_index_down(), "--target", str(profile),
                    "oldpkg", "--format", "json"])
    assert offline == 0 and json.loads(capsys.readouterr().out)["choice"]["torch"] == "2.9.1"  # from the cache


def test_metadata_whose_torch_version_has_5000_digits_is_one_warning(replica: str, httpserver, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _package_page(httpserver, "longpkg", {"1.0": ["torch==" + "9" * 5000]}, tmp_path)
    profile = tmp_path / "cpu.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    code = main(["plan", "--online", "--index-base", pytorch_index_down(), "--target", str(profile), "longpkg"])
    out, err = capsys.readouterr()
    assert code == 0 and "internal error" not in err, err
    assert "longpkg: what it needs of torch was not read (Requires-Dist 'torch==999" in err
    assert "a version number of more than 18 digits" in err


def test_metadata_naming_a_wheel_by_url_with_a_long_hash_is_read(replica: str, httpserver, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    digest = "1" * 64  # a sha256 of digits only: no version, though longer than any
    _package_page(httpserver, "urlpkg", {"1.0": ["torch==2.9.1",
                                                 f"helper @ https://example.org/helper-1.0-py3-none-any.whl"
                                                 f"#sha256={digest}"]}, tmp_path)
    profile = tmp_path / "cpu.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    code = main(["plan", "--online", "--index-base", pytorch_index_down(), "--target", str(profile), "urlpkg",
                 "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0 and "was not read" not in err, err
    assert json.loads(out)["choice"]["torch"] == "2.9.1"
