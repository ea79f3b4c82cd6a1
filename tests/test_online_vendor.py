"""--online and the vendors' own indexes (index/vendor.py), served from loopback copies (vendor_index.py): what an
index lists now decides which of its builds exist (a newer one is taken, with the targets it is assumed to have; a
build it no longer lists is not), its pages read as HTML or as PEP 691 JSON, and an index that cannot be read
leaves the table's builds with one warning."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from servers import DirectoryServer, closed_port
from sysroot import FIXTURES
from torch_install.cli import main
from torch_install.resolver.vendor_builds import load_vendor_builds
from vendor_index import amd_wheels, jetson_wheels, write_index

TABLE = load_vendor_builds()
STABLE = [b for b in TABLE.builds if b.vendor_index.id == "amd-stable"]
NEWER = STABLE[0]._replace(variant="rocm10.2.0", packages={"torch": "2.15.0+rocm10.2.0",
                                                            "torchvision": "0.30.0+rocm10.2.0"})


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")  # a closed port is refused at once: no retry


@pytest.fixture
def server(tmp_path: Path) -> Iterator[DirectoryServer]:
    (tmp_path / "www" / "pytorch").mkdir(parents=True)  # PyTorch's index: no page here (a warning, the table)
    (tmp_path / "www" / "files").mkdir()
    served = DirectoryServer(str(tmp_path / "www"))
    yield served
    served.close()


def plan(capsys: pytest.CaptureFixture[str], server: DirectoryServer, *argv: str) -> tuple[dict, str]:
    code = main(["plan", "--online", "--index-base", server.url("pytorch"), *argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def amd_index(server: DirectoryServer, builds: list) -> str:  # noqa: ANN001
    root = Path(server.root)
    wheels = [w for b in builds for w in amd_wheels(root / "files", b)]
    write_index(root, "amd-stable", wheels)
    return f"amd-stable={server.url('amd-stable/')}"


def test_a_newer_build_on_amds_index_is_taken_with_its_targets_assumed(
        capsys: pytest.CaptureFixture[str], server: DirectoryServer, online: None) -> None:
    mirror = amd_index(server, [NEWER, *STABLE])
    data, err = plan(capsys, server, "--sysroot", str(FIXTURES / "windows-rx7900xtx"), "torch", "torchvision",
                     "--vendor-index", mirror, "--vendor-index", f"amd-multi-arch=http://127.0.0.1:{closed_port()}/")
    assert data["choice"]["packages"] == {"torch": "2.15.0+rocm10.2.0", "torchvision": "0.30.0+rocm10.2.0"}
    assert data["choice"]["extras"] == {"torch": ["device-gfx1100"], "torchvision": ["device-gfx1100"]}
    assert any(n.startswith("the targets of rocm10.2.0 from AMD's stable ROCm index (whl-next) are assumed: "
                            "inherited from rocm10.1.0") for n in data["notes"])
    assert not any("is secondary" in n for n in data["notes"])  # the index lists the build: it exists
    assert "AMD's ROCm 7.14 multi-arch index unreachable" in err  # its builds stay as the table has them


def test_a_build_the_index_no_longer_lists_is_not_chosen(capsys: pytest.CaptureFixture[str],
                                                         server: DirectoryServer, online: None) -> None:
    mirror = amd_index(server, [STABLE[1]])  # only 2.13.0+rocm10.0.0 left
    data, _ = plan(capsys, server, "--sysroot", str(FIXTURES / "windows-strix-halo"), "--vendor-index", mirror,
                   "--vendor-index", f"amd-multi-arch=http://127.0.0.1:{closed_port()}/")
    assert data["choice"]["packages"] == {"torch": "2.13.0+rocm10.0.0"}
    assert "rocm10.1.0" not in {r["variant"] for r in data["rejected"]}


def test_an_index_that_cannot_be_read_leaves_the_tables_builds(capsys: pytest.CaptureFixture[str],
                                                               server: DirectoryServer, online: None) -> None:
    dead = f"http://127.0.0.1:{closed_port()}/"
    data, err = plan(capsys, server, "--sysroot", str(FIXTURES / "windows-rx7900xtx"), "--vendor-index",
                     f"amd-stable={dead}", "--vendor-index", f"amd-multi-arch={dead}")
    assert data["choice"]["packages"] == {"torch": "2.14.0+rocm10.1.0"}
    assert "AMD's stable ROCm index (whl-next) unreachable" in err and "its builds as this tool's data has them" in err


def test_a_pep_691_page_of_the_jetson_index_is_read(capsys: pytest.CaptureFixture[str], server: DirectoryServer,
                                                    online: None, httpserver) -> None:  # noqa: ANN001
    build = next(b for b in TABLE.builds if b.vendor_index.id == "jetson-jp6-cu126" and b.torch == "2.11.0")
    wheels = jetson_wheels(Path(server.root) / "files", build)
    for project in ("torch", "torchvision", "torchaudio"):
        files = [{"filename": w.name, "url": f"/files/{w.name}", "hashes": {"sha256": hashlib.sha256(
            w.read_bytes()).hexdigest()}} for w in wheels if w.name.startswith(f"{project}-")]
        httpserver.expect_request(f"/jp6/{project}/").respond_with_json(
            {"meta": {"api-version": "1.1"}, "name": project, "files": files},
            content_type="application/vnd.pypi.simple.v1+json")
    data, _ = plan(capsys, server, "--sysroot", str(FIXTURES / "jetson-orin"), "torch", "torchvision",
                   "--vendor-index", f"jetson-jp6-cu126={httpserver.url_for('/jp6')}")
    assert data["choice"]["packages"] == {"torch": "2.11.0", "torchvision": "0.26.0"}
    assert data["choice"]["index_url"] == httpserver.url_for("/jp6")
    assert not any("Pythons of cu126" in n for n in data["notes"])  # read from the wheels: 3.10
