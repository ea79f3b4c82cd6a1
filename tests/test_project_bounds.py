"""A project's input is bounded: a file included twice (or by two files) is read once, includes and include-groups
nest at most 32 deep, all the files of one command come to at most 1,000 files and 16 MiB and are read within a
time budget, and every reader is linear in its input. Malformed input is one line naming the file, the line or
key, and the problem, with exit 2: never an internal error, never a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torch_install.cli import main
from torch_install.errors import InputError
from torch_install.project import bounds
from torch_install.project.bounds import ReadBudget
from torch_install.project.pyproject import read_pyproject
from torch_install.project.requirements_file import read_requirements

CPU_LINUX = ["plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12"]


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main([*CPU_LINUX, *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1, err
    assert "internal error" not in err and "Traceback" not in err
    return err


def diamond(tmp_path: Path, depth: int, leaf: str = "numpy\n") -> Path:
    """Files each including the next twice: 2**depth paths to the leaf, depth + 1 files."""
    for i in range(depth):
        (tmp_path / f"f{i}.txt").write_text(f"-r f{i + 1}.txt\n-r f{i + 1}.txt\n")
    (tmp_path / f"f{depth}.txt").write_text(leaf)
    return tmp_path / "f0.txt"


def test_a_file_included_on_many_paths_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from torch_install import probe

    reads: list[str] = []
    read_regular = probe.read_regular
    monkeypatch.setattr(probe, "read_regular", lambda path, limit: reads.append(path) or read_regular(path, limit))
    parsed = read_requirements(str(diamond(tmp_path, 30, "numpy\nscipy\n")))  # 2**30 paths
    assert [w.text for w in parsed.entries] == ["numpy", "scipy"]
    assert len(reads) == 31 == len(set(map(os.path.realpath, reads)))


def test_a_file_read_as_requirements_and_as_constraints_is_read_as_each(tmp_path: Path) -> None:
    (tmp_path / "pins.txt").write_text("numpy<2\n")
    (tmp_path / "req.txt").write_text("-r pins.txt\n-c pins.txt\n-r ./pins.txt\n")
    entries = read_requirements(str(tmp_path / "req.txt")).entries
    assert [(w.text, w.constraint) for w in entries] == [("numpy<2", False), ("numpy<2", True)]


def test_includes_nest_at_most_32_deep(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for i in range(40):
        (tmp_path / f"n{i}.txt").write_text(f"-r n{i + 1}.txt\n")
    (tmp_path / "n40.txt").write_text("numpy\n")
    err = one_line_error(capsys, ["-r", str(tmp_path / "n0.txt")])
    assert "n31.txt:1: -r" in err and "files nested more than 32 deep" in err


def test_more_files_than_one_command_reads(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = []
    for i in range(bounds.MAX_FILES + 1):
        (tmp_path / f"w{i}.txt").write_text(f"pkg{i}\n")
        lines.append(f"-r w{i}.txt")
    (tmp_path / "wide.txt").write_text("\n".join(lines) + "\n")
    err = one_line_error(capsys, ["-r", str(tmp_path / "wide.txt")])
    assert f"wide.txt:{bounds.MAX_FILES}: more files included than the {bounds.MAX_FILES}" in err


def test_more_bytes_than_one_command_reads(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    block = ("# " + "x" * 1000 + "\n") * (bounds.MAX_FILE // 1003)  # just under one file's limit
    for i in range(5):
        (tmp_path / f"big{i}.txt").write_text(block)
    (tmp_path / "all.txt").write_text("".join(f"-r big{i}.txt\n" for i in range(5)))
    err = one_line_error(capsys, ["-r", str(tmp_path / "all.txt")])
    assert "all.txt:5: the files included come to more than the 16 MiB one command reads" in err


def test_reading_past_its_time_is_one_line_naming_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "req.txt"
    path.write_text("numpy\n")
    with pytest.raises(InputError, match=r"req\.txt: reading the project's files took over 0 s"):
        read_requirements(str(path), budget=ReadBudget(seconds=0))
    clock = iter(range(1000))  # a clock one second on at every look: the file, then every 1,024 lines
    monkeypatch.setattr(bounds.time, "monotonic", lambda: next(clock))
    many = tmp_path / "many.txt"
    many.write_text("-e ./x\n" * 5000)
    with pytest.raises(InputError, match=r"many\.txt:2048: reading the project's files took over 2\.5 s"):
        read_requirements(str(many), budget=ReadBudget(seconds=2.5))


@pytest.mark.parametrize(("line", "where"), [
    ("torch==" + "9" * 5000, "req.txt:2: 'torch=="),
    ("numpy>=1," + "1" * 30, "req.txt:2: 'numpy>=1,1111"),
    ("pkg ; python_version > '3." + "9" * 40 + "'", 'req.txt:2: "pkg ; python_version'),
    ("./local.whl ; python_version > '3." + "9" * 40 + "'", 'req.txt:2: "./local.whl'),
])
def test_a_version_of_5000_digits_in_a_file_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        line: str, where: str) -> None:
    path = tmp_path / "req.txt"
    path.write_text(f"# first\n{line}\n")
    err = one_line_error(capsys, ["-r", str(path)])
    assert where in err and "a version number of more than 18 digits" in err


def test_a_url_of_long_digits_is_no_version(tmp_path: Path) -> None:
    path = tmp_path / "req.txt"
    path.write_text("pkg @ https://files.invalid/" + "1" * 40 + "/pkg-1.0-py3-none-any.whl\n")
    assert [w.name for w in read_requirements(str(path)).entries] == ["pkg"]


WHEEL = "https://h.example/whl/torch-2.8.0%2Bcpu-cp312-cp312-manylinux_2_28_x86_64.whl"
LONG_DIGITS = ["?token=" + "1" * 23, "#sha256=" + "0123456789" * 6 + "abcd", "?x=" + "9" * 40 + "&y=1"]


@pytest.mark.parametrize("tail", LONG_DIGITS, ids=["token", "sha256", "query"])
@pytest.mark.parametrize("where", ["command line", "requirements", "pyproject", "environment.yml", "pixi"])
def test_the_digits_of_a_direct_references_url_are_no_version(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch, where: str,
                                                              tail: str) -> None:
    """A URL may hold digits of any length (a hash, a token, a query): its torch and another package are planned
    from every file kind, as pip reads the same lines."""
    monkeypatch.chdir(tmp_path)
    torch, other = f"torch @ {WHEEL}{tail}", f"mylib @ https://h.example/mylib-1.0-py3-none-any.whl{tail}"
    argv = {"command line": [torch, other], "requirements": ["-r", "r.txt"], "pyproject": ["--project", "."],
            "environment.yml": ["--project", "environment.yml"], "pixi": ["--project", "pixi.toml"]}[where]
    (tmp_path / "r.txt").write_text(f"{torch}\n{other}\n")
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\nversion = "0"\ndependencies = ["{torch}", '
                                             f'"{other}"]\n')
    (tmp_path / "environment.yml").write_text(f"name: x\ndependencies:\n  - python=3.12\n  - pip\n  - pip:\n"
                                              f"    - {torch}\n    - {other}\n")
    (tmp_path / "pixi.toml").write_text(f'[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n'
                                        f'[dependencies]\npython = "3.12.*"\n[pypi-dependencies]\n'
                                        f'torch = {{ url = "{WHEEL}{tail}" }}\n'
                                        f'mylib = {{ url = "https://h.example/mylib-1.0-py3-none-any.whl{tail}" }}\n')
    assert main([*CPU_LINUX, "--format", "json", *argv]) in (0, 1)
    plan = json.loads(capsys.readouterr().out)
    assert plan["choice"]["torch"] == "2.8.0" and plan["choice"]["variant"] == "cpu"
    assert tail.split("=", 1)[0] in plan["choice"]["references"]["torch"]


def test_a_long_number_in_a_direct_references_marker_is_still_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, [f"torch @ {WHEEL} ; python_version > '3.{'9' * 40}'"])
    assert "a version number of more than 18 digits" in err


def write_project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(text)
    return tmp_path


@pytest.mark.parametrize(("text", "args", "message"), [
    ('[project]\nname = "x"\nx = ' + "[" * 50_000 + "]" * 50_000 + "\n", [],
     r"pyproject\.toml:3: arrays or tables nested too deep to read"),
    ('[project]\nname = "x"\n\n[tool.x]\ny = ' + "{a = " * 5000 + "1" + "}" * 5000 + "\n", [],
     r"pyproject\.toml:5: arrays or tables nested too deep to read"),
    ('[project]\nname = "x"\nx = ' + "9" * 5000 + "\n", [], r"pyproject\.toml:3: not valid TOML \(Exceeds the limit"),
    ('[project]\nname = "x"\ndependencies = ["torch==' + "9" * 5000 + '"]\n', [],
     r"project\.dependencies\[0\]: 'torch==9+'…: a version number of more than 18 digits"),
    ('project = "x"\n', [], r"has no \[project\] table"),
    ('[project]\nname = "caf\xe9"\n'.encode("latin-1"), [], r"pyproject\.toml:2: not UTF-8 text"),
    ('[project]\nname = "x"\n[dependency-groups]\n'
     + "".join(f'g{i} = [{{include-group = "g{i + 1}"}}]\n' for i in range(3000)) + 'g3000 = ["numpy"]\n',
     ["--group", "g0"], r"dependency-groups\.g0: include-group nested more than 32 deep \(g0 -> g1 -> … -> g32\)"),
    ('[project]\nname = "x"\n[dependency-groups]\na = [{include-group = "nope"}]\n', ["--group", "a"],
     r"dependency-groups\.a\[0\] includes 'nope', which is no dependency group \(has: a\)"),
])
def test_malformed_pyprojects_are_one_line_naming_where(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        text: str | bytes, args: list[str], message: str) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    err = one_line_error(capsys, ["--project", str(tmp_path), *args])
    assert __import__("re").search(message, err), err


def test_a_group_diamond_is_expanded_once_each(tmp_path: Path) -> None:
    groups = "".join(f'g{i} = [{{include-group = "g{i + 1}"}}, {{include-group = "g{i + 1}"}}, "p{i}"]\n'
                     for i in range(30))
    write_project(tmp_path, f'[project]\nname = "x"\ndependencies = []\n[dependency-groups]\n{groups}g30 = ["numpy"]\n')
    wanted = read_pyproject(str(tmp_path), groups=["g0", "g3"])  # 2**30 paths; g3 is in already
    assert [w.text for w in wanted] == ["numpy", *(f"p{i}" for i in reversed(range(30)))]


def test_a_group_that_includes_itself_is_named(tmp_path: Path) -> None:
    write_project(tmp_path, '[project]\nname = "x"\n[dependency-groups]\na = [{include-group = "b"}]\n'
                            'b = ["six", {include-group = "A"}]\n')
    with pytest.raises(InputError, match=r"dependency-groups include themselves \(a -> b -> a\)"):
        read_pyproject(str(tmp_path), groups=["a"])


# ---- the inputs that ran for minutes or hours, as a user's machine runs them -----------------------------------

def run_plan(argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none"}
    return subprocess.run([sys.executable, "-m", "torch_install", *CPU_LINUX, *argv], capture_output=True,
                          text=True, env=env, timeout=timeout)


@pytest.mark.slow
def test_small_inputs_that_hung_finish(tmp_path: Path) -> None:
    """Each ran minutes to hours (blank runs before a comment, 2**22 include paths, a 24-deep group diamond,
    500,000 continuation lines, a 1 MB hash); a time-out here is the hang coming back."""
    (tmp_path / "spaces.txt").write_text("numpy" + " " * 1_000_000 + "# a comment\n")
    (tmp_path / "continued.txt").write_text("numpy\\\n" * 500_000 + "\n")
    (tmp_path / "hash.txt").write_text("numpy --hash=sha256:" + "a" * 1_000_000 + "\n")
    (tmp_path / "quoted.txt").write_text('numpy --hash="sha256:' + "a" * 1_000_000 + '"\n')
    groups = "".join(f'g{i} = [{{include-group = "g{i + 1}"}}, {{include-group = "g{i + 1}"}}]\n' for i in range(24))
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "pyproject.toml").write_text(
        f'[project]\nname = "x"\nversion = "1"\ndependencies = []\n[dependency-groups]\n{groups}g24 = ["numpy"]\n')
    runs = [["-r", str(tmp_path / "spaces.txt")], ["-r", str(diamond(tmp_path, 22))],
            ["--project", str(tmp_path / "proj"), "--group", "g0"], ["-r", str(tmp_path / "continued.txt")],
            ["-r", str(tmp_path / "hash.txt")], ["-r", str(tmp_path / "quoted.txt")]]
    for argv in runs:
        done = run_plan(argv)
        assert done.returncode == 0, (argv, done.stderr[-300:])
        assert "numpy" in done.stdout + done.stderr or "Choice:" in done.stdout


@pytest.mark.slow
def test_malformed_project_input_never_ends_in_an_internal_error(tmp_path: Path) -> None:
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "1"\nx = ' + "[" * 50000 + "]" * 50000 + "\n")
    (tmp_path / "chain").mkdir()
    chain = "".join(f'g{i} = [{{include-group = "g{i + 1}"}}]\n' for i in range(3000))
    (tmp_path / "chain" / "pyproject.toml").write_text(
        f'[project]\nname = "x"\nversion = "1"\n[dependency-groups]\n{chain}g3000 = ["numpy"]\n')
    (tmp_path / "big.txt").write_text("torch==" + "9" * 5000 + "\n")
    for argv in (["--project", str(tmp_path / "deep")], ["--project", str(tmp_path / "chain"), "--group", "g0"],
                 ["-r", str(tmp_path / "big.txt")]):
        done = run_plan(argv)
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, (argv, done.stderr[-300:])
        assert "internal error" not in done.stderr
