"""Every format carries the whole project: the torch family with its extras, the packages built against torch from
where their builds are, and the rest as written -- or exits 2 naming what the format cannot carry."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from torch_install.cli import main

CPU = ["--os", "linux", "--arch", "x86_64", "--python", "3.12"]
RTX_4090 = [*CPU, "--gpu", "RTX 4090", "--nvidia-driver", "580.65.06"]
FORMATS = ["pip", "uv", "requirements", "constraints", "pyproject", "dockerfile", "json", "variant-env"]


def render(capsys: pytest.CaptureFixture[str], fmt: str, *argv: str) -> tuple[int, str, str]:
    cut = argv.index("--") if "--" in argv else len(argv)  # what follows "--" is the installer's
    code = main(["plan", *argv[:cut], "--format", fmt, *argv[cut:]])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_extra_of_torch_alone_is_in_every_format(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = render(capsys, fmt, *CPU, "torch[opt-einsum]")
    assert code == 0, err
    if fmt == "constraints":
        assert "torch==2.15.0+cpu" in out  # a constraint carries versions, not extras
    else:
        assert "torch[opt-einsum]" in out, out


@pytest.mark.parametrize("fmt", ["pip", "requirements", "pyproject"])
def test_a_name_given_twice_keeps_the_extras_of_both(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = render(capsys, fmt, *CPU, "torch", "torch[opt-einsum]", "torch[optree]")
    assert code == 0, err
    assert "torch[opt-einsum,optree]" in out, out


@pytest.mark.parametrize("fmt", FORMATS)
def test_other_packages_and_a_file_are_in_every_format(fmt: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    req = tmp_path / "req.txt"
    req.write_text("requests>=2\n")
    code, out, err = render(capsys, fmt, *CPU, "torch", "numpy<2", "-r", str(req))
    assert code == 0, err
    assert "numpy<2" in out, out
    if fmt in ("pip", "uv", "dockerfile"):
        assert "-r " in out  # the file as it is (copied into the image for a Dockerfile)
    else:
        assert "requests>=2" in out, out


def test_the_requirements_file_of_a_project_keeps_the_users_index_first(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = render(capsys, "requirements", *RTX_4090, "torch", "xformers", "numpy<2")
    assert code == 0
    lines = out.splitlines()
    assert "--extra-index-url https://download.pytorch.org/whl/cu130" in lines and "--index-url" not in out
    assert lines[-3:] == ["torch==2.15.0+cu130", "xformers==0.0.35", "numpy<2"]
    assert "uv pip install -r FILE --index-strategy unsafe-best-match" in out


def test_what_a_format_cannot_carry_is_an_error_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    req = tmp_path / "req.txt"
    req.write_text("torch\n-e ./mine\n")
    assert main(["plan", *CPU, "-r", str(req), "--format", "constraints"]) == 2
    err = capsys.readouterr().err
    assert "./mine (" in err and "does not take as a constraint" in err
    assert main(["plan", *CPU, "-r", str(req), "--format", "pyproject"]) == 2
    assert "a path without a project name" in capsys.readouterr().err
    assert main(["plan", *RTX_4090, "torch", "flash-attn", "--format", "requirements"]) == 2
    assert "flash-attn builds from source, which needs pip's --no-build-isolation" in capsys.readouterr().err


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_pyproject_routes_each_package_to_where_its_build_is(capsys: pytest.CaptureFixture[str]) -> None:
    import tomllib

    code, out, _ = render(capsys, "pyproject", *RTX_4090, "torch<2.9", "xformers", "flash-attn", "numpy<2")
    assert code == 0
    data = tomllib.loads(out)
    assert data["project"]["dependencies"] == ["torch==2.8.0+cu128", "xformers==0.0.32.post2",
                                               "flash-attn==2.8.3.post1", "numpy<2"]
    sources = data["tool"]["uv"]["sources"]
    assert sources["torch"] == sources["xformers"] == {"index": "torch-install-cu128"}
    assert sources["flash-attn"]["url"].endswith("flash_attn-2.8.3.post1+cu12torch2.8cxx11abiTRUE-cp312-cp312-"
                                                 "linux_x86_64.whl")
    code, out, _ = render(capsys, "pyproject", *RTX_4090, "torch", "flash-attn", "pyg-lib")
    data = tomllib.loads(out)
    assert data["tool"]["uv"]["no-build-isolation-package"] == ["flash-attn"]
    page = next(i for i in data["tool"]["uv"]["index"] if i.get("format") == "flat")
    assert page["url"] == "https://data.pyg.org/whl/torch-2.13.0+cu130.html"
    assert data["tool"]["uv"]["sources"]["pyg-lib"] == {"index": page["name"]}


def test_json_carries_every_requirement_with_where_it_came_from(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    req = tmp_path / "req.txt"
    req.write_text("requests>=2\n")
    code, out, _ = render(capsys, "json", *RTX_4090, "torch", "xformers", "-r", str(req))
    plan = json.loads(out)
    assert code == 0 and plan["request"]["others"] == ["xformers", "requests>=2"]
    assert [(r["requirement"], r["origin"]) for r in plan["request"]["requirements"]] == [
        ("xformers", "command line"), ("requests>=2", f"{req}:1")]
    assert plan["request"]["files"] == [{"path": str(req), "constraint": False, "passthrough": True}]


@pytest.mark.parametrize("given", [["--index-url", "https://mirror.example/simple"], ["-i", "https://mirror.example/simple"],
                                   ["--index-url=https://mirror.example/simple"],
                                   ["--extra-index-url", "https://mirror.example/simple"],
                                   ["--default-index", "https://mirror.example/simple"],
                                   ["--index", "mine=https://mirror.example/simple"]])
def test_an_index_after_the_dashes_serves_the_other_packages_never_the_build(
        given: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = render(capsys, "json", *CPU, "transformers", "--", *given, "--no-cache-dir")
    assert code == 0, err
    plan = json.loads(out)
    first, second = plan["commands"]["pip"].split(" && ")
    assert "mirror.example" not in first and "--index-url https://download.pytorch.org/whl/cpu --no-cache-dir" in first
    assert second.endswith(" ".join([*given, "--no-cache-dir"]))
    assert any("(after --): the packages from your index come from there" in n for n in plan["notes"])


def test_an_offline_install_keeps_its_local_wheels_for_the_build(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = render(capsys, "pip", *CPU, "--", "--no-index", "--find-links", "./wheels")
    assert code == 0, err
    assert out.strip().endswith("--index-url https://download.pytorch.org/whl/cpu --no-index --find-links ./wheels")


def test_an_index_after_the_dashes_serves_a_build_of_the_default_index(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "--os", "macos", "--arch", "arm64", "--python", "3.12", "--format", "pip", "--",
                 "--index-url", "https://mirror.example/simple"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.strip() == "python -m pip install torch==2.15.0 --index-url https://mirror.example/simple"
