"""Loopback copies of the vendors' own indexes: stub wheels named and shaped like AMD's multi-arch wheels and the
Jetson AI Lab's, for every build of the vendor table, in a static PEP 503 tree that a loopback HTTP server serves.

    python tests/vendor_index.py DIR          # writes DIR/<index id>/<project>/index.html and DIR/files/*.whl
    python -m http.server -d DIR 8000         # then --vendor-index amd-stable=http://127.0.0.1:8000/amd-stable/

The wheels hold no code; their names, tags and METADATA are what installers resolve on:

- AMD (TheRock's multi-arch packaging): ``torch-2.14.0+rocm10.1.0-cp312-cp312-win_amd64.whl`` requires
  ``rocm[libraries]==10.1.0`` and ``rocm-bootstrap``, and for each gfx target ``Provides-Extra: device-gfx1201`` with
  ``Requires-Dist: amd-torch-device-gfx1201 == 2.14.0+rocm10.1.0; extra == "device-gfx1201"`` (and every target
  under ``device-all``); ``amd_torch_device_gfx1201-2.14.0+rocm10.1.0-py3-none-win_amd64.whl`` requires
  ``rocm-sdk-device-gfx1201==10.1.0``; torchvision's device extras name ``amd-torchvision-device-…``; ``rocm``
  takes ``libraries`` and ``device-…`` extras (AMD publishes ``rocm`` as an sdist that picks its platform's
  packages as it builds; here it is a wheel, so a cross-platform ``pip download --only-binary :all:`` resolves it).
  ``torch/version.py`` says ``hip`` and the ``+rocm…`` label, as TheRock's builds write it.
- Jetson AI Lab (jetson-containers' builds): ``torch-2.11.0-cp310-cp310-linux_aarch64.whl`` without a local label,
  ``torch/version.py`` with ``cuda = '12.6'``; torchvision and torchaudio require that torch.
"""

from __future__ import annotations

import hashlib
import html
import re
import sys
from collections.abc import Iterable
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from servers import DirectoryServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from torch_install.resolver.vendor_builds import VendorBuild, VendorBuilds, load_vendor_builds  # noqa: E402
from wheels import build_wheel  # noqa: E402

PLATFORM_TAG = {"windows_x86_64": "win_amd64", "linux_x86_64": "linux_x86_64", "linux_aarch64": "linux_aarch64"}


def _cp(python: str) -> str:
    tag = "cp" + python.rstrip("t").replace(".", "")
    return f"{tag}-{tag}{'t' if python.endswith('t') else ''}"


def _companion_version_py(version: str) -> str:
    """torchvision's and torchaudio's ``version.py``: the version and the commit."""
    return f"__version__ = {version!r}\ngit_version = '0' * 40\n"


def amd_wheels(directory: Path, build: VendorBuild) -> list[Path]:
    """The wheels of one AMD multi-arch build, for every platform and Python it has."""
    torch, rocm = build.packages["torch"], build.variant.removeprefix("rocm")
    out: list[Path] = []
    for platform, targets in build.targets.items():
        plat = PLATFORM_TAG[platform]
        gfx = sorted(targets)
        for python in build.python[platform]:
            tag = f"{_cp(python)}-{plat}"
            device = [f'amd-torch-device-{g} == {torch}; extra == "{e}"' for g in gfx for e in (f"device-{g}",
                                                                                              "device-all")]
            version_py = (f"__version__ = {torch!r}\ndebug = False\ncuda = None\n"
                          f"git_version = '0' * 40\nhip = '{rocm}.25000-0'\nxpu = None\n")
            out.append(build_wheel(directory, "torch", torch, tag=tag, version_py=version_py,
                                   requires=[f"rocm[libraries]=={rocm}", "rocm-bootstrap", *device],
                                   extras=[*(f"device-{g}" for g in gfx), "device-all"]))
            for name in ("torchvision", "torchaudio"):
                version = build.packages.get(name)
                if not version:
                    continue
                per_device = [f'amd-{name}-device-{g} == {version}; extra == "{e}"' for g in gfx
                              for e in (f"device-{g}", "device-all")] if name == "torchvision" else []
                out.append(build_wheel(directory, name, version, tag=tag, requires=[f"torch=={torch}", *per_device],
                                       extras=[*(f"device-{g}" for g in gfx), "device-all"] if per_device else (),
                                       version_py=_companion_version_py(version)))
        for g in gfx:
            out.append(build_wheel(directory, f"amd-torch-device-{g}", torch, tag=f"py3-none-{plat}",
                                   requires=[f"rocm-sdk-device-{g}=={rocm}"], package=f"amd_torch_device_{g}"))
            if build.packages.get("torchvision"):
                out.append(build_wheel(directory, f"amd-torchvision-device-{g}", build.packages["torchvision"],
                                       tag=f"py3-none-{plat}", package=f"amd_torchvision_device_{g}"))
            out.append(build_wheel(directory, f"rocm-sdk-device-{g}", rocm, tag=f"py3-none-{plat}",
                                   requires=[f"rocm-sdk-libraries=={rocm}"]))
        out.append(build_wheel(directory, "rocm-sdk-core", rocm, tag=f"py3-none-{plat}"))
        out.append(build_wheel(directory, "rocm-sdk-libraries", rocm, tag=f"py3-none-{plat}",
                               requires=[f"rocm-sdk-core=={rocm}"]))
    gfx_all = sorted({g for t in build.targets.values() for g in t})
    out.append(build_wheel(directory, "rocm", rocm, requires=[
        f"rocm-sdk-core=={rocm}", f'rocm-sdk-libraries=={rocm}; extra == "libraries"',
        *(f'rocm-sdk-device-{g}=={rocm}; extra == "device-{g}"' for g in gfx_all)],
        extras=["libraries", *(f"device-{g}" for g in gfx_all)], package="rocm_sdk"))
    out.append(build_wheel(directory, "rocm-bootstrap", "1.0.0", package="rocm_bootstrap"))
    return out


def jetson_wheels(directory: Path, build: VendorBuild) -> list[Path]:
    """The wheels of one Jetson AI Lab build: torch, torchvision and torchaudio for its Pythons."""
    torch = build.packages["torch"]
    cuda = build.vendor_index.cuda or ""
    out: list[Path] = []
    for platform, pythons in build.python.items():
        for python in pythons:
            tag = f"{_cp(python)}-{PLATFORM_TAG[platform]}"
            version_py = (f"__version__ = {torch!r}\ndebug = False\ncuda = {cuda!r}\ngit_version = '0' * 40\n"
                          "hip = None\nxpu = None\n")
            out.append(build_wheel(directory, "torch", torch, tag=tag, version_py=version_py))
            for name in ("torchvision", "torchaudio"):
                if build.packages.get(name):
                    out.append(build_wheel(directory, name, build.packages[name], tag=tag,
                                           requires=[f"torch=={torch}"],
                                           version_py=_companion_version_py(build.packages[name])))
    return out


def unpack(site: Path, wheels: Iterable[Path], installer: str = "pip") -> Path:
    """The wheels as an installer leaves them in ``site`` (their files, and INSTALLER in each dist-info)."""
    import zipfile

    site.mkdir(parents=True, exist_ok=True)
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
            dist_info = next(n.split("/")[0] for n in archive.namelist() if n.split("/")[0].endswith(".dist-info"))
        (site / dist_info / "INSTALLER").write_text(installer + "\n")
    return site


def write_index(root: Path, index_id: str, wheels: Iterable[Path]) -> None:
    """``root/<index id>/<project>/index.html``, PEP 503 pages linking ``root/files/<wheel>#sha256=…`` (an index id
    may be a path: ``pytorch/cpu``)."""
    up = "../" * (index_id.count("/") + 2)
    projects: dict[str, set[Path]] = {}
    for wheel in wheels:
        projects.setdefault(re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower(), set()).add(wheel)
    (root / index_id).mkdir(parents=True, exist_ok=True)
    for project, files in sorted(projects.items()):
        page = root / index_id / project
        page.mkdir(exist_ok=True)
        links = "".join(f'<a href="{up}files/{html.escape(w.name)}#sha256='
                        f'{hashlib.sha256(w.read_bytes()).hexdigest()}">{html.escape(w.name)}</a><br>\n'
                        for w in sorted(files))
        page.joinpath("index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n",
                                               encoding="utf-8")
    names = "".join(f'<a href="{p}/">{p}</a><br>\n' for p in sorted(projects))
    (root / index_id / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{names}</body></html>\n",
                                                encoding="utf-8")


def write_indexes(root: Path, table: VendorBuilds | None = None) -> dict[str, list[Path]]:
    """A loopback copy of every vendor index of the table that has versioned builds: index id -> its wheels."""
    table = table or load_vendor_builds()
    files = root / "files"
    files.mkdir(parents=True, exist_ok=True)
    out: dict[str, list[Path]] = {}
    for build in table.builds:
        if not build.torch:  # a nightly stream: its versions are the installer's to pick
            continue
        make = amd_wheels if build.vendor_index.vendor == "amd" else jetson_wheels
        out.setdefault(build.vendor_index.id, []).extend(make(files, build))
    for index_id, wheels in out.items():
        write_index(root, index_id, wheels)
    return out


def serve_indexes(root: Path) -> DirectoryServer:
    """A loopback server of every vendor index's copy under ``root``, with two empty directories: ``empty/`` (a
    default index with nothing on it) and ``pytorch/`` (a PyTorch index with no page)."""
    from servers import DirectoryServer

    write_indexes(root)
    (root / "empty").mkdir()
    (root / "pytorch").mkdir()
    return DirectoryServer(str(root))


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("vendor-indexes")
    written = write_indexes(target)
    for index_id, wheels in written.items():
        print(f"{target / index_id}/: {len(set(wheels))} wheels")
