"""Requirements files read as pip reads them, and a project's pyproject: the compiled locks real uv and
pip-compile write (tests/fixtures/requirements, from scripts/make_requirements_fixtures.py), pip's line syntax,
and every problem reported with its file and line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lanes import equivalence
from torch_install.cli import main
from torch_install.errors import InputError
from torch_install.project.gather import gather
from torch_install.project.pyproject import read_pyproject
from torch_install.project.requirements_file import read_requirements
from torch_install.resolver.request import canonical_name

FIXTURES = Path(__file__).parent / "fixtures" / "requirements"
CPU_LINUX = ["--os", "linux", "--arch", "x86_64", "--python", "3.12"]


def write(path: Path, text: str) -> str:
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(path)


@pytest.mark.parametrize("lock", ["uv-compiled.txt", "pip-compiled.txt", "uv-universal.txt"])
def test_a_compiled_lock_reads_every_line_with_its_hashes_and_annotations(lock: str) -> None:
    parsed = read_requirements(str(FIXTURES / lock))
    by_name = {w.name: w for w in parsed.entries}
    assert set(by_name) == {"filelock", "mpmath", "numpy", "nvidia-cublas-cu12", "nvidia-cudnn-cu12", "pillow",
                            "requests", "sympy", "torch", "torchvision", "triton"}
    assert all(len(w.hashes) == 1 and w.hashes[0].startswith("sha256:") for w in parsed.entries)
    assert by_name["torch"].text.startswith("torch==2.9.1")
    assert by_name["numpy"].via == ("-r requirements.in", "torchvision")
    assert by_name["nvidia-cublas-cu12"].via == ("nvidia-cudnn-cu12", "torch")
    assert by_name["torch"].origin.startswith(str(FIXTURES / lock) + ":")
    if lock == "pip-compiled.txt":
        assert [(o.option, o.value) for o in parsed.options] == [("--find-links", "wheels")]
    if lock == "uv-universal.txt":
        assert by_name["triton"].text == "triton==3.5.1 ; platform_machine == 'x86_64' and sys_platform == 'linux'"


def test_a_lock_splits_into_the_family_and_what_rides_along_leaving_the_torch_build_to_the_choice() -> None:
    found = gather([], [str(FIXTURES / "uv-compiled.txt")])
    assert found.family == ["torch==2.9.1", "torchvision==0.24.1"]
    assert sorted(w.name for w in found.others) == ["filelock", "mpmath", "numpy", "pillow", "requests", "sympy"]
    assert [f.passthrough for f in found.files] == [False]
    assert any("3 lines are its lock's own torch build's packages (nvidia-cublas-cu12, nvidia-cudnn-cu12, triton)"
               in n for n in found.notes)
    assert any("hashes of torch's line are for one build" in n for n in found.notes)
    assert any("--hash options" in n and "cannot carry them" in n for n in found.notes)


def test_pips_line_syntax(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIRROR_TOKEN", "t0k")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "base.txt", """
        --extra-index-url https://mirror.example/${MIRROR_TOKEN}/simple
        requests>=2 \\
            --hash=sha256:aa
    """)
    path = write(tmp_path / "req.txt", """
        # a comment line \\
        -r sub/base.txt
        numpy<2 # trailing comment
        torch>=2.7 ; sys_platform == "linux"
        pkg @ https://files.example/pkg-1.0-py3-none-any.whl#sha256=00
        https://files.example/other-2.0-py3-none-any.whl
        git+https://git.example/repo.git#egg=from-git
        -e ./local
        --index-url=https://mirror.example/simple
        -rsub/base.txt
        scipy\\
        >=1.10
    """)
    parsed = read_requirements(path)
    texts = [(w.text, w.name, w.editable) for w in parsed.entries]
    assert texts == [("requests>=2", "requests", False), ("numpy<2", "numpy", False),
                     ('torch>=2.7 ; sys_platform == "linux"', "torch", False),
                     ("pkg @ https://files.example/pkg-1.0-py3-none-any.whl#sha256=00", "pkg", False),
                     ("https://files.example/other-2.0-py3-none-any.whl", "other", False),
                     ("git+https://git.example/repo.git#egg=from-git", "from-git", False),
                     ("./local", None, True), ("scipy>=1.10", "scipy", False)]  # sub/base.txt again adds nothing
    assert parsed.entries[0].origin == f"{tmp_path / 'sub' / 'base.txt'}:2"
    assert parsed.entries[0].hashes == ("sha256:aa",)
    assert [(o.option, o.value) for o in parsed.options] == [
        ("--extra-index-url", "https://mirror.example/t0k/simple"), ("--index-url", "https://mirror.example/simple")]
    assert all(w.file == path for w in parsed.entries)


def test_crlf_a_byte_order_mark_and_a_continuation_at_the_end(tmp_path: Path) -> None:
    path = tmp_path / "req.txt"
    path.write_bytes(b"\xef\xbb\xbfnumpy<2\r\nscipy \\\r\n")
    assert [w.text for w in read_requirements(str(path)).entries] == ["numpy<2", "scipy"]


@pytest.mark.parametrize(("text", "message"), [
    ("numpy<2\ntorch>=>2\n", r"req\.txt:2: 'torch>=>2' is not a requirement"),
    ("--frobnicate\n", r"req\.txt:1: --frobnicate: not an option pip reads"),
    ("numpy --hash=md5\n", r"req\.txt:1: --hash md5: not algorithm:hexdigest"),
    ("numpy --no-deps\n", r"req\.txt:1: --no-deps: not an option of a requirement line"),
    ("-r missing.txt\n", r"req\.txt:1: -r .*missing\.txt: cannot read"),
    ("-r req.txt\n", r"include loop"),
    ("--index-url\n", r"req\.txt:1: --index-url takes one value"),
    ("-e\n", r"req\.txt:1: -e needs a path or URL"),
    ("--index-url 'unclosed\n", r"req\.txt:1: No closing quotation"),
    ("-r https://example.com/req.txt\n", r"a file from a URL is not read"),
])
def test_a_bad_line_names_its_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "req.txt", text)
    with pytest.raises(InputError, match=message) as err:
        read_requirements(path)
    assert "\n" not in str(err.value)


def test_a_files_option_on_a_requirement_line_is_read_and_ignored_as_pip_does(tmp_path: Path) -> None:
    path = write(tmp_path / "req.txt", """
        torch==2.3.0 --index-url https://download.pytorch.org/whl/cu121
        xformers==0.0.26.post1 --extra-index-url=https://example.org/simple --hash=sha256:00ff
        """)
    parsed = read_requirements(path)
    assert [(w.text, w.hashes) for w in parsed.entries] == [("torch==2.3.0", ()),
                                                            ("xformers==0.0.26.post1", ("sha256:00ff",))]
    assert not parsed.options  # pip applies them only on a line of their own
    assert [n.split(": ", 1)[0] for n in parsed.notes] == [f"{path}:1", f"{path}:2"]
    assert "--index-url https://download.pytorch.org/whl/cu121 on a requirement line" in parsed.notes[0]
    assert any("req.txt:1: --index-url" in n for n in gather([], [path]).notes)


def test_a_missing_file_and_binary_input_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="-r .*nope.txt: cannot read"):
        read_requirements(str(tmp_path / "nope.txt"))
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match="not UTF-8"):
        read_requirements(str(tmp_path / "bin.txt"))


def test_the_plan_takes_the_lock_torch_version_and_says_a_command_line_cannot_carry_its_hashes(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", *CPU_LINUX, "-r", str(FIXTURES / "uv-compiled.txt"), "--format", "json"])
    plan = json.loads(capsys.readouterr().out)
    assert code == 0 and plan["choice"]["packages"] == {"torch": "2.9.1+cpu", "torchvision": "0.24.1+cpu"}
    assert plan["commands"] == {} and any("cannot carry them" in n for n in plan["notes"])
    assert main(["plan", *CPU_LINUX, "-r", str(FIXTURES / "uv-compiled.txt"), "--format", "pip"]) == 2
    assert "has --hash options, which a command line cannot carry" in capsys.readouterr().err


def test_a_marker_is_evaluated_for_the_target_not_this_machine(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "req.txt", """
        torch>=2.8,<2.10 ; sys_platform == "linux"
        torch<2.5 ; sys_platform == "win32"
        numpy<2 ; sys_platform == "win32"
    """)
    assert main(["plan", *CPU_LINUX, "-r", path, "--format", "pip"]) == 0
    linux = capsys.readouterr().out
    assert "torch==2.9.1+cpu" in linux and "numpy<2 ; sys_platform == \"win32\"" in linux  # pip evaluates it there
    assert main(["plan", "--os", "windows", "--arch", "x86_64", "--python", "3.12", "-r", path, "--format",
                 "pip"]) == 0
    assert "torch==2.4.1+cpu" in capsys.readouterr().out


def test_a_file_without_torch_lines_rides_along_as_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "req.txt", "numpy<2 --hash=sha256:aa\nrequests\n")
    constraints = write(tmp_path / "c.txt", "torch<2.9\nnumpy<1.27\n")
    assert main(["plan", *CPU_LINUX, "torch", "-r", path, "-c", constraints, "--format", "pip"]) == 0
    out = capsys.readouterr().out.strip()
    assert out == (f"python -m pip install torch==2.8.0+cpu --index-url https://download.pytorch.org/whl/cpu && "
                   f"python -m pip install -r {path} -c {constraints} torch==2.8.0+cpu")


def test_the_options_of_a_written_out_file_go_with_what_rides_along(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "req.txt", """
        --extra-index-url https://mirror.example/simple
        --find-links ./wheels
        torch
        -e ./mine
        numpy<2
    """)
    assert main(["plan", *CPU_LINUX, "-r", path, "--format", "pip"]) == 0
    assert capsys.readouterr().out.strip() == (
        "python -m pip install torch==2.15.0+cpu --index-url https://download.pytorch.org/whl/cpu --find-links ./wheels"
        " && python -m pip install -e ./mine 'numpy<2' --extra-index-url https://mirror.example/simple "
        "--find-links ./wheels torch==2.15.0+cpu")  # a wheelhouse may hold the build too: both steps read it


def test_torch_given_as_a_source_url_is_refused_naming_the_line(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A wheel names its build (tests/test_direct_references.py); a source archive does not."""
    path = write(tmp_path / "req.txt", "numpy\ntorch @ https://files.example/torch-2.9.1.tar.gz\n")
    assert main(["plan", *CPU_LINUX, "-r", path]) == 2
    assert f"{path}:2: 'torch @ https://files.example" in capsys.readouterr().err


# ---- pyproject --------------------------------------------------------------------------------------------------

PYPROJECT = """
[project]
name = "demo"
version = "1.0"
dependencies = ["torch>=2.8", "numpy<2", "Pillow"]

[project.optional-dependencies]
Vision = ["torchvision"]
serve = ["vllm"]

[dependency-groups]
test = ["pytest>=8"]
dev = [{include-group = "test"}, "ruff"]
"""


def test_a_pyproject_gives_its_dependencies_extras_and_groups(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", PYPROJECT)
    wanted = read_pyproject(str(tmp_path), extras=["vision"], groups=["dev"])
    assert [(w.text, w.name) for w in wanted] == [("torch>=2.8", "torch"), ("numpy<2", "numpy"),
                                                  ("Pillow", "pillow"), ("torchvision", "torchvision"),
                                                  ("pytest>=8", "pytest"), ("ruff", "ruff")]
    assert wanted[3].origin == f"{tmp_path / 'pyproject.toml'}: project.optional-dependencies.Vision[0]"


@pytest.mark.parametrize(("text", "args", "message"), [
    (PYPROJECT, {"extras": ["gpu"]}, r"--extra gpu: .* defines no such extra \(has: Vision, serve\)"),
    (PYPROJECT, {"groups": ["docs"]}, r"--group docs: .* no such dependency group \(has: dev, test\)"),
    ('[project]\nname = "x"\n[dependency-groups]\na = [{include-group = "b"}]\nb = [{include-group = "a"}]\n',
     {"groups": ["a"]}, r"include themselves \(a -> b -> a\)"),
    ('[tool.x]\n', {}, r"has no \[project\] table"),
    ('[project\n', {}, r"not valid TOML"),
    ('[project]\ndependencies = "torch"\n', {}, r"project.dependencies is not a list of requirement strings"),
    ('[project]\ndependencies = ["torch>>2"]\n', {}, r"project.dependencies\[0\]: 'torch>>2' is not a requirement"),
])
def test_a_bad_pyproject_is_one_line_naming_it(tmp_path: Path, text: str, args: dict, message: str) -> None:
    write(tmp_path / "pyproject.toml", text)
    with pytest.raises(InputError, match=message):
        read_pyproject(str(tmp_path), **args)


def test_plan_reads_the_project_here_with_its_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "pyproject.toml", PYPROJECT)
    monkeypatch.chdir(tmp_path)
    assert main(["plan", *CPU_LINUX, "--project", "--extra", "vision", "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["choice"]["packages"] == {"torch": "2.15.0+cpu", "torchvision": "0.29.2"}
    assert plan["request"]["others"] == ["numpy<2", "Pillow"]
    assert main(["plan", *CPU_LINUX, "--extra", "vision"]) == 2
    assert "give --project too" in capsys.readouterr().err


@equivalence(300)
@given(st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,8}[A-Za-z0-9](\[[a-z]{1,5}\])?((==|!=|<=|>=|<|>|~=)[0-9]{1,2}(\.[0-9]{1,2})"
                     r"{1,2}(rc1|\.post1|\.dev2)?(,(<|>=)[0-9](\.[0-9])?)?)?", fullmatch=True))
def test_the_fast_reading_of_a_plain_requirement_agrees_with_packaging(text: str) -> None:
    from packaging.requirements import Requirement

    from torch_install.project.requirement_name import plain_requirement_name, requirement_name

    assert plain_requirement_name(text), text  # the fast path takes it
    assert requirement_name(text, "test") == canonical_name(Requirement(text).name)


@equivalence(1500)
@given(st.text(alphabet="aAbBrRcCpPoOsStTdDeEvV0123456789.<>=!~,[]* -_+\t\n", max_size=24))
def test_what_the_fast_path_reads_packaging_reads_the_same(text: str) -> None:
    from packaging.requirements import InvalidRequirement, Requirement

    from torch_install.project.requirement_name import plain_requirement_name

    name = plain_requirement_name(text)
    if name is None:
        return
    try:
        parsed = Requirement(text)
    except InvalidRequirement:
        pytest.fail(f"the fast path took {text!r}, which packaging refuses")
    assert canonical_name(name) == canonical_name(parsed.name)
    assert not parsed.url and not parsed.marker


@pytest.mark.parametrize("text", ["numpy<>2", "numpy==2.x", "numpy>=", "num py", "numpy[a b]",
                                  "numpy,<2", "numpy<2 >3", "numpy==1.0RCx"])
def test_what_packaging_refuses_the_fast_path_leaves_to_it(text: str) -> None:
    from torch_install.project.requirement_name import requirement_name

    with pytest.raises(InputError):
        requirement_name(text, "test")


def test_a_pin_a_constraint_rules_out_names_the_constraint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No release fits the pin and a -c line (or pip's configured constraint) together: the error says the
    constraint, not only the pin, which the matrix holds."""
    cap = write(tmp_path / "cap.txt", "torch<=2.14.1\n")
    assert main(["plan", *CPU_LINUX, "torch==2.15.0+cpu", "-c", cap]) == 2
    err = capsys.readouterr().err
    assert "torch==2.15.0+cpu (constraints: torch<=2.14.1): no torch release" in err, err


def test_a_path_is_told_from_a_requirement_with_an_option_as_pip_tells_it(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A separator makes a path unless a blank is in it; a path with a blank is one where it is a directory."""
    from torch_install.project.requirement_name import requirement_name

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my pkg").mkdir()
    assert requirement_name("pkgs/foo", "x") is None
    assert requirement_name("my pkg/", "x") is None
    assert requirement_name("torch @ https://host.example/w/torch-2.7.1-cp312-cp312-linux_x86_64.whl", "x") == "torch"
    with pytest.raises(InputError, match="is not a requirement"):
        requirement_name("torch --index-url https://host.example/simple", "x")
    with pytest.raises(InputError, match="is not a requirement"):
        requirement_name("not a/dir here", "x")


def test_the_lines_a_hashed_lock_leaves_without_a_hash_are_named(tmp_path: Path) -> None:
    """pip's hash-checking mode needs a hash on every line to install once one has one: the family's lines aside
    (their build comes with its index's hashes), a #sha256= fragment counting, a constraint file and a file without
    hashes untouched."""
    from torch_install.project.gather import gather
    from torch_install.resolver.steps import unhashed

    digest = "sha256:" + "0" * 64
    (tmp_path / "lock.txt").write_text(f"torch==2.8.0\nalpha==1.0 --hash={digest}\nbeta==1.0\n"
                                       f"gamma @ https://h.example/gamma-1.0-py3-none-any.whl#sha256={'1' * 64}\n")
    (tmp_path / "plain.txt").write_text("delta==1.0\n")
    (tmp_path / "pins.txt").write_text("epsilon==1.0\n")
    found = gather([], [str(tmp_path / "lock.txt"), str(tmp_path / "plain.txt")], [str(tmp_path / "pins.txt")])
    assert [w.text for w in unhashed(found.others)] == ["beta==1.0"]
    from torch_install.machine import Machine
    from torch_install.project.gather import request_of
    from torch_install.resolver import load_matrix, resolve
    from torch_install.resolver.plan import DEFAULT_INDEX_BASE

    plan = resolve(Machine(os="linux", arch="x86_64", python="3.12", glibc="2.35", gpus_known=True),
                   request_of(found, None, "stable", DEFAULT_INDEX_BASE), load_matrix())
    said = [w for w in plan.warnings if w.code == "hash-missing"]
    assert len(said) == 1 and said[0].message.startswith(f"{tmp_path / 'lock.txt'} has --hash options, and beta==1.0 (")
    assert "refuses the whole file" in said[0].message and not said[0].blocking
