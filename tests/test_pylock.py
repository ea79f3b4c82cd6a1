"""A PEP 751 lock given with -r (pylock.toml, as uv pip compile -o pylock.toml and uv export write it): each
package pinned under its marker with its files' hashes, a vcs, archive or directory entry its direct reference;
the torch family's build named by its label or its PyTorch index; the lock's own CUDA runtime wheels left to the
chosen build; the file never handed to the installer."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.project.gather import gather
from wheels import build_wheel, uv_env

CPU = ["--os", "linux", "--arch", "x86_64", "--python", "3.12", "--offline", "--format", "json"]
GPU = ["--os", "linux", "--arch", "x86_64", "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06", "--python", "3.12",
       "--offline", "--format", "json"]
DIGEST = "0123456789abcdef" * 4
CU126 = "https://download.pytorch.org/whl/cu126"
CUBLAS = (f'{{ url = "{CU126}/nvidia_cublas_cu12-12.6.4.1-py3-none-manylinux_2_27_x86_64.whl", '
          f'hashes = {{ sha256 = "{DIGEST}" }} }}')
TORCH = (f'{{ url = "{CU126}/torch-2.7.1%2Bcu126-cp312-cp312-manylinux_2_28_x86_64.whl", '
         f'hashes = {{ sha256 = "{DIGEST}" }} }}')

LOCK = f"""lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.12"

[[packages]]
name = "einops"
version = "0.8.0"
wheels = [{{ url = "https://files.example.org/einops-0.8.0-py3-none-any.whl", hashes = {{ sha256 = "{DIGEST}" }} }}]

[[packages]]
name = "nvidia-cublas-cu12"
version = "12.6.4.1"
marker = "platform_machine == 'x86_64' and sys_platform == 'linux'"
index = "https://download.pytorch.org/whl/cu126"
wheels = [{CUBLAS}]

[[packages]]
name = "tool"
vcs = {{ type = "git", url = "https://git.example.org/tool.git", commit-id = "0d1c2b3a" }}

[[packages]]
name = "torch"
version = "{{torch}}"
index = "https://download.pytorch.org/whl/cu126"
wheels = [{TORCH}]
"""


def plan(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, machine: list[str],
         name: str = "pylock.toml") -> dict:
    (tmp_path / name).write_text(text)
    code = main(["plan", "-r", str(tmp_path / name), *machine])
    out, err = capsys.readouterr()
    found = json.loads(out)
    assert code == (4 if any(w["blocking"] for w in found["warnings"]) else 0), err
    return found


@pytest.mark.parametrize("version", ["2.7.1+cu126", "2.7.1"])  # a label, or the PyTorch index the entry names
@pytest.mark.parametrize("name", ["pylock.toml", "pylock.gpu.toml"])
def test_the_locks_torch_build_is_the_users_and_its_packages_install_as_locked(
        version: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = plan(tmp_path, capsys, LOCK.replace("{torch}", version), GPU, name)
    assert (found["choice"]["torch"], found["choice"]["variant"]) == ("2.7.1", "cu126")
    requirements = {r["requirement"]: r for r in found["request"]["requirements"]}
    assert requirements["einops==0.8.0"]["hashes"] == 1
    assert "tool @ git+https://git.example.org/tool.git@0d1c2b3a" in requirements
    assert not any(r.startswith("nvidia-cublas") for r in found["request"]["others"])  # the build brings its own
    assert found["request"]["files"] == [{"path": str(tmp_path / name), "constraint": False, "passthrough": False}]


def test_a_marker_holds_where_it_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = LOCK.replace("{torch}", "2.7.1+cu126").replace(
        'name = "torch"\n', 'name = "torch"\nmarker = "sys_platform == \'linux\'"\n') + (
        '\n[[packages]]\nname = "torch"\nversion = "2.7.1"\nmarker = "sys_platform == \'darwin\'"\n'
        f'wheels = [{{ url = "https://files.example.org/torch-2.7.1-cp312-none-macosx_11_0_arm64.whl", hashes = '
        f'{{ sha256 = "{DIGEST}" }} }}]\n')
    mac = plan(tmp_path, capsys, text, ["--os", "macos", "--arch", "arm64", "--python", "3.12", "--offline",
                                        "--format", "json"])
    assert (mac["choice"]["torch"], mac["choice"]["variant"]) == ("2.7.1", "default")
    assert plan(tmp_path, capsys, text, GPU)["choice"]["variant"] == "cu126"


@pytest.mark.parametrize(("text", "message"), [
    ('lock-version = "2.0"\n', "lock-version '2.0': not a PEP 751 lock of version 1"),
    ('lock-version = "1.0"\n[[packages]]\nversion = "1"\n', "packages[0] is not a table with a name"),
    ('lock-version = "1.0"\n[[packages]]\nname = "x"\n', "x has neither a version nor a vcs, archive or directory"),
    ('lock-version = "1.0"\n[[packages]]\nname = "x"\nversion = "1"\nwheels = [{ url = "u" }]\n',
     "packages[0]: a file without a hashes table"),
    ('lock-version = "1.0"\n[[packages]]\nname = "x"\nversion = "1"\nmarker = 3\n', "packages[0].marker is not"),
])
def test_a_lock_pep_751_does_not_allow_is_one_line(text: str, message: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pylock.toml").write_text(text)
    assert main(["plan", "-r", str(tmp_path / "pylock.toml"), *CPU]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_a_lock_real_uv_writes_is_read_with_its_hashes(tmp_path: Path) -> None:
    """uv pip compile -o pylock.toml over local wheels: every package is read pinned, with the sha256 of its
    wheel file, and torch is the family's requirement."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    built = [build_wheel(wheels, "torch", "2.7.1"), build_wheel(wheels, "numpy", "1.26.4"),
             build_wheel(wheels, "einops", "0.8.0", requires=["numpy"])]
    (tmp_path / "req.in").write_text('torch==2.7.1\neinops\nnumpy ; python_version >= "3.9"\n')
    uv = Path(sys.executable).with_name("uv")
    subprocess.run([str(uv), "pip", "compile", "req.in", "--no-index", "--find-links", str(wheels), "-o",
                    "pylock.toml", "--python-version", "3.12"], cwd=tmp_path, check=True, capture_output=True,
                   env=uv_env(tmp_path, wheels.as_uri()), timeout=120)
    found = gather([], [str(tmp_path / "pylock.toml")])
    assert found.family == ["torch==2.7.1"]
    digests = {w.name: w.hashes for w in found.others}
    for wheel in built[1:]:
        name = wheel.name.split("-")[0]
        assert digests[name] == (f"sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}",)
