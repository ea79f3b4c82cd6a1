"""`torch-install completion bash|zsh|fish`: scripts made from the parser, run by the real shells here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.skipif(os.name != "posix", reason="POSIX shells"), pytest.mark.slow]


def _script(shell: str) -> str:
    done = subprocess.run([sys.executable, "-m", "torch_install", "completion", shell], capture_output=True,
                          text=True, check=True)
    return done.stdout


@pytest.mark.parametrize(("words", "expected", "absent"), [
    (["torch-install", "ins"], ["install"], ["plan"]),
    (["torch-install", "plan", "--for"], ["--format", "--for-container"], ["--pin"]),
    (["torch-install", "plan", "--format", "con"], ["constraints"], ["json"]),
    (["torch-install", "install", "--p"], ["--pin", "--python"], []),
    (["torch-install", "doctor", "-"], ["-q", "--quiet", "--python"], []),
])
def test_bash_completes_commands_options_and_values(words: list[str], expected: list[str],
                                                    absent: list[str]) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    program = (_script("bash") + f"COMP_WORDS=({' '.join(words)}); COMP_CWORD={len(words) - 1}; _torch_install; "
               'printf "%s\\n" "${COMPREPLY[@]}"')
    done = subprocess.run([bash, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    offered = done.stdout.split()
    assert all(e in offered for e in expected) and not any(a in offered for a in absent), offered


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_the_zsh_and_fish_scripts_parse(shell: str) -> None:
    found = shutil.which(shell)
    script = _script(shell)
    assert "torch-install" in script and "install" in script
    if found is None:
        pytest.skip(f"no {shell} here to parse the script")
    done = subprocess.run([found, "-n"], input=script, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_quiet_leaves_only_errors_on_stderr() -> None:
    argv = [sys.executable, "-m", "torch_install", "plan", "--os", "linux", "--arch", "x86_64", "--python", "3.12",
            "--gpu", "rtx 4090"]
    env = {**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none"}
    loud = subprocess.run(argv, capture_output=True, text=True, env=env)
    quiet = subprocess.run([*argv, "-q"], capture_output=True, text=True, env=env)
    assert "warning:" in loud.stderr and quiet.stderr == "" and quiet.stdout == loud.stdout
    verbose = subprocess.run([*argv[:-2], "--gpu", "gtx 1080", "--nvidia-driver", "470.82", "-v"], capture_output=True,
                             text=True, env=env)
    assert verbose.stdout.count("Rejected:") > 1 and "more, see --format json" not in verbose.stdout


@pytest.mark.parametrize("command", ["detect", "plan", "install", "doctor", "matrix", "variants", "completion"])
def test_every_command_takes_q_and_v(command: str) -> None:
    done = subprocess.run([sys.executable, "-m", "torch_install", command, "--help"], capture_output=True, text=True)
    assert "-q, --quiet" in done.stdout and "-v, --verbose" in done.stdout
