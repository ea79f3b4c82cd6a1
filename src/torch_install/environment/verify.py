"""The plan checked by the installer's own resolver before anything is installed.

- ``check``: the whole plan in one pass (the chosen build pinned, every other requirement as written, the
  constraints), resolved against the user's own indexes with the build's index beside them: pip ``install
  --dry-run --report -``, uv ``pip compile``. A plan the installer cannot resolve is known before its first step,
  and its conflict in one line (``Checked``), with the torch-family requirements it names, so the caller can take
  the next candidate build.
- ``build_packages``: the build's own step resolved alone against the build's index, with each file's hash
  (pip's report, uv's ``--generate-hashes``): what the build brings with it, so that the build's step of a hashed
  lock installs exactly that, each file checked against the index's own hash (``install.hashed_steps``).

Neither installs, uninstalls or imports anything; each runs with a time limit and without a shell.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence

from ..records import Record
from ..resolver.commands import installer_argv
from ..resolver.plan import Plan
from ..resolver.request import PACKAGES, canonical_name
from ..resolver.steps import RIDE_ALONG_OPTIONS, requirement_lines
from .install import UV_INDEX_VARIABLES, Resolved, write_step_file

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..child_process import Captured
    from ..machine import Machine

CHECK_TIMEOUT = 600.0  # seconds for one resolve against real indexes (a large project, a slow mirror)
# what pip and uv say when the requirements cannot be resolved (else the check itself failed)
UNRESOLVABLE = ("ResolutionImpossible", "conflicting dependencies", "No matching distribution found",
                "No solution found when resolving dependencies")


class Checked(Record):
    """What the installer's resolver said of a plan: resolvable (``ok``), or its conflict in one line and the
    torch-family requirements the conflict names (``asks``: "torch==2.14.1"); ``skipped``: why no check ran."""

    ok: bool
    conflict: str = ""
    asks: tuple[str, ...] = ()
    skipped: str = ""


def check_lines(plan: Plan) -> tuple[str, str]:
    """(the requirements, the constraints) of the whole plan for one resolve: the first step's pins, every other
    requirement as written (without its hashes, whatever file it is in), the requested packages built against torch
    from elsewhere (with their find-links pages), the files' options that say where packages come from; what builds
    from source is left out (its build needs the installed torch)."""
    assert plan.choice is not None
    lines = [f"{o.option}{f' {o.value}' if o.value is not None else ''}" for o in plan.request.options
             if o.option in RIDE_ALONG_OPTIONS]
    taken = {p.name for p in plan.choice.companions}
    lines += requirement_lines(plan)
    constraints = []
    for wanted in plan.request.requirements:
        if wanted.name in taken:
            continue
        if wanted.constraint:
            constraints.append(wanted.text)
        else:
            lines.append(f"-e {wanted.text}" if wanted.editable else wanted.text)
    for picked in plan.choice.companions:
        if picked.kind in ("default", "find-links", "url"):
            lines.append(picked.requirement)
            if picked.url:
                lines.append(f"--find-links {picked.url}")
    return "\n".join(lines) + "\n", "\n".join(constraints) + "\n"


def check(plan: Plan, python: str, installer: str, directory: str, uv: str = "uv",
          target: Sequence[str] = (), prefix: str | None = None, isolated: bool = False) -> Checked:
    """Resolve the whole plan (``check_lines``) with ``installer`` for ``python``'s environment: against the
    user's indexes (the installer's own configuration, the files' index options and the options after ``--``)
    and the build's index as one more; ``target``: uv's options naming another machine's Python and platform;
    ``prefix``: the environment, whose own pin (``install --pin``) pip's check leaves out, since the install makes
    it follow the new build first; ``isolated``: what is installed beside ``python`` counts for nothing (``plan``)."""
    assert plan.choice is not None
    requirements, constraints = check_lines(plan)
    paths = (write_step_file(directory, "check-requirements.txt", requirements),
             write_step_file(directory, "check-constraints.txt", constraints))
    extra = _index_args(plan, installer, extra=True)
    options = list(plan.request.installer_options)
    if installer == "uv":
        argv = installer_argv("uv", "compile", ["--quiet", "--no-header", "--output-file", os.devnull, paths[0],
                                                "-c", paths[1], *extra, "--index-strategy", "unsafe-best-match",
                                                *target, *options], python if not target else None, uv=uv)
    else:
        argv = installer_argv("pip", "install", ["--dry-run", *(["--ignore-installed"] if isolated else []),
                                                 "--report", os.path.join(directory, "check-report.json"), "-r",
                                                 paths[0], "-c", paths[1], *extra, *options], python)
    done = _run(argv, f"checking the plan with {installer}'s resolver",
                environ=_without_our_pin(prefix) if installer == "pip" and prefix else None)
    if isinstance(done, str):
        return Checked(False, skipped=done)
    if done.returncode == 0:
        return Checked(True)
    said = f"{done.stdout}\n{done.stderr}"  # pip says the causes of a conflict on stdout, the error on stderr
    if installer == "pip" and "no such option" in said:
        return Checked(False, skipped=f"{python}'s pip has no --dry-run --report (pip 22.2 and newer have): "
                                      "upgrade it to have the plan checked first")
    if not any(mark in said for mark in UNRESOLVABLE):  # the check itself failed (an index unreachable …)
        return Checked(False, skipped=f"{installer} failed (exit code {done.returncode}): {conflict_line(said)}")
    return Checked(False, conflict=conflict_line(said), asks=family_asks(said))


def uv_target(machine: Machine) -> list[str]:
    """uv's options that resolve for the machine's Python and platform: ``--python-version 3.12 --python-platform
    x86_64-manylinux_2_28`` (its glibc's manylinux, at most the newest uv names), ``x86_64-pc-windows-msvc``,
    ``aarch64-apple-darwin``; none that are not known."""
    out = ["--python-version", machine.python.rstrip("t")] if machine.python else []
    arch = {"arm64": "aarch64"}.get(machine.arch or "", machine.arch or "")
    if machine.os == "linux" and arch in ("x86_64", "aarch64"):
        glibc = [int(x) for x in (machine.glibc or "").split(".")[:2] if x.isdigit()]
        if machine.musl:
            platform = f"{arch}-unknown-linux-musl"
        elif len(glibc) == 2 and glibc[0] == 2 and glibc[1] >= 17:
            platform = f"{arch}-manylinux_2_{min(glibc[1], 40)}"
        else:
            platform = f"{arch}-unknown-linux-gnu"
    elif machine.os == "windows" and arch in ("x86_64", "aarch64"):
        platform = f"{arch}-pc-windows-msvc"
    elif machine.os == "macos" and arch in ("x86_64", "aarch64"):
        platform = f"{arch}-apple-darwin"
    else:
        return out
    return [*out, "--python-platform", platform]


def build_packages(plan: Plan, python: str, installer: str, directory: str, uv: str = "uv") -> list[Resolved] | str:
    """What the build's own step installs, resolved alone against the build's index for ``python`` (whatever is
    installed there already counts for nothing): each distribution with its file's sha256 from the index; or one
    line saying why that is not known."""
    assert plan.choice is not None
    pins = requirement_lines(plan)
    index = _index_args(plan, installer, extra=False)
    if installer == "uv":
        path = write_step_file(directory, "build-request.txt", "\n".join(pins) + "\n")
        argv = installer_argv("uv", "compile", ["--quiet", "--no-header", "--generate-hashes", path, *index], python,
                              uv=uv)
        done = _run(argv, "reading the build's packages with uv's resolver", own_index=True)
        if isinstance(done, str):
            return done
        return _compiled(done.stdout) if done.returncode == 0 else conflict_line(done.stderr)
    report = os.path.join(directory, "build-report.json")
    argv = installer_argv("pip", "install", ["--dry-run", "--ignore-installed", "--report", report, *pins, *index],
                          python)
    done = _run(argv, "reading the build's packages with pip's resolver")
    if isinstance(done, str):
        return done
    if done.returncode != 0:
        return conflict_line(f"{done.stdout}\n{done.stderr}")
    try:
        with open(report, encoding="utf-8") as file:
            return _reported(file.read())
    except OSError as exc:
        return f"pip wrote no installation report ({exc.strerror or exc})"


def _index_args(plan: Plan, installer: str, extra: bool) -> list[str]:
    """The build's index as the installer's only index (``extra`` False: pip ``--index-url``, uv
    ``--default-index``) or as one more (pip and uv ``--extra-index-url``), its host trusted where the user allowed
    plain http, and the pre-release switch of its channel."""
    from ..hosts import insecure_host
    from ..resolver.commands import PRE_RELEASE_CHANNEL

    assert plan.choice is not None
    args: list[str] = []
    if plan.request.channel == PRE_RELEASE_CHANNEL:
        args += ["--pre"] if installer == "pip" else ["--prerelease", "allow"]
    url = plan.choice.index_url
    if url:
        args += ["--extra-index-url" if extra else "--index-url" if installer == "pip" else "--default-index", url]
        trusted = insecure_host(url)
        if trusted:
            args += ["--trusted-host", trusted] if installer == "pip" else ["--allow-insecure-host", trusted]
    return args


def _without_our_pin(prefix: str) -> dict[str, str] | None:
    """pip's environment with the constraint files in force less the environment's own pin, when they name it
    (None: they do not)."""
    from .pin import config_value, constraints_path
    from .pip_config import configured, pip_config_files

    setting = configured("constraint", os.environ, pip_config_files(os.environ, prefix))
    ours = {constraints_path(prefix), config_value(constraints_path(prefix))}
    if setting is None or not ours & set(setting.value.split()):
        return None
    rest = " ".join(v for v in setting.value.split() if v not in ours)
    # pip ignores an option set empty, the files' value then stands: an empty file in its place
    return {**os.environ, "PIP_CONSTRAINT": rest or os.devnull}


def _run(argv: list[str], label: str, own_index: bool = False, environ: dict[str, str] | None = None
         ) -> Captured | str:
    """The installer's answer (``child_process.Captured``), or one line saying why it could not run."""
    from ..child_process import run_captured

    if own_index:  # uv's index variables name indexes searched before --default-index
        environ = {k: v for k, v in os.environ.items() if k not in UV_INDEX_VARIABLES}
    try:
        done = run_captured(argv, CHECK_TIMEOUT, env=environ, label=label)
    except OSError as exc:
        return f"cannot run {argv[0]}: {exc.strerror or exc}"
    if done.timed_out:
        return f"{argv[0]} gave no answer within {CHECK_TIMEOUT:.0f} s"
    return done


def _reported(report: str) -> list[Resolved] | str:
    """The distributions of pip's installation report (``--report``): name, version, the sha256 of its file."""
    try:
        data = json.loads(report)
        out = []
        for item in data["install"]:
            info = item.get("download_info", {}).get("archive_info", {})
            digests = dict(info.get("hashes") or {})
            if "sha256" not in digests and str(info.get("hash", "")).startswith("sha256="):
                digests["sha256"] = info["hash"].split("=", 1)[1]
            meta = item["metadata"]
            out.append(Resolved(canonical_name(meta["name"]), meta["version"],
                                (f"sha256:{digests['sha256']}",) if "sha256" in digests else ()))
        return out
    except (ValueError, KeyError, TypeError, AttributeError):
        return "pip's installation report could not be read"


def _compiled(text: str) -> list[Resolved]:
    """The distributions of ``uv pip compile --generate-hashes`` output: each pin and its hashes."""
    out: list[Resolved] = []
    for line in text.replace("\\\n", " ").splitlines():
        line = line.split("#", 1)[0].strip()
        found = re.match(r"([A-Za-z0-9._-]+)(\[[^\]]*\])?==(\S+)", line)
        if found:
            hashes = tuple(re.findall(r"--hash=(\S+)", line))
            out.append(Resolved(canonical_name(found[1]), found[3], hashes))
    return out


def conflict_line(stderr: str) -> str:
    """An installer's failure in one line: pip's "The conflict is caused by:" lines or its last ERROR line, uv's
    explanation after "╰─▶"; at most 400 characters."""
    lines = [line.strip() for line in stderr.splitlines()]
    if "The conflict is caused by:" in lines:
        start = lines.index("The conflict is caused by:") + 1
        causes = []
        for line in lines[start:]:
            if not line or line.startswith(("To fix", "ERROR")):
                break
            causes.append(line)
        text = "; ".join(causes)
    elif any("╰─▶" in line or line.startswith("cause:") for line in lines):  # uv: on a terminal, or not
        start = next(i for i, line in enumerate(lines) if "╰─▶" in line or line.startswith("cause:"))
        body = [lines[start].split("╰─▶", 1)[-1].removeprefix("cause:").strip()]
        for line in lines[start + 1:]:
            if not line or line.startswith(("hint:", "help:")):
                break
            body.append(line)
        text = " ".join(body)
    else:
        errors = [line.removeprefix("ERROR: ").removeprefix("error: ") for line in lines
                  if line.startswith(("ERROR:", "error:"))]
        text = errors[-1] if errors else next((line for line in reversed(lines) if line), "no output")
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= 400 else text[:399] + "…"


def family_asks(stderr: str) -> tuple[str, ...]:
    """The torch-family requirements of other packages an installer's conflict names, in its order ("sglang 0.5.23
    depends on torch==2.14.1" → "torch==2.14.1"); the user's own (the plan's pins) are not among them."""
    family = "|".join(PACKAGES)
    found = re.findall(rf"(\S+)(?: (\S+))? depends? on ({family})((?:[<>=!~]=?[^\s,;]+)(?:,[<>=!~]=?[^\s,;]+)*)",
                       stderr)
    return tuple(dict.fromkeys(f"{name}{spec.rstrip('.')}" for first, second, name, spec in found
                               if not {canonical_name(w.split("==")[0]) for w in (first, second) if w} & set(PACKAGES)))
