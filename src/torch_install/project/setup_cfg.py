"""A setuptools project's declarative ``setup.cfg``, read as setuptools reads it where its pyproject.toml has no
``[project]`` table (or it has none): ``[options] install_requires`` and the ``[options.extras_require]`` an
``--extra`` chooses. A value over several lines is one requirement a line; one on a single line is split at
``;`` (setuptools' "list-semi"). What ``setup.py`` adds in code is not read (it is not run): a note says so."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..errors import InputError
from ..resolver.plan import Wanted
from ..resolver.request import canonical_name
from .bounds import ReadBudget, read_bounded
from .requirement_name import requirement_name


def read_setup_cfg(directory: str, extras: Sequence[str], budget: ReadBudget, notes: list[str]) -> list[Wanted]:
    """The requirements ``directory``'s setup.cfg declares, with the chosen extras'."""
    import configparser

    path = os.path.join(directory, "setup.cfg")
    data = read_bounded(path, f"--project: {path}", "a setup.cfg", budget)
    parser = configparser.RawConfigParser()  # as setuptools reads it: no interpolation, full-line comments only
    try:
        parser.read_string(data.decode("utf-8"), path)
    except (UnicodeDecodeError, configparser.Error) as exc:
        raise InputError(f"--project: {path}: not a setup.cfg ({str(exc).splitlines()[0]})") from None
    wanted = _listed(path, "options.install_requires", parser.get("options", "install_requires", fallback=""))
    defined = dict(parser.items("options.extras_require")) if parser.has_section("options.extras_require") else {}
    by_name = {canonical_name(k): k for k in defined}
    for extra in extras:
        key = by_name.get(canonical_name(extra))
        if key is None:
            raise InputError(f"--extra {extra}: {path} defines no such extra (has: "
                             f"{', '.join(sorted(defined)) or 'none'})")
        wanted += _listed(path, f"options.extras_require.{key}", defined[key])
    notes.append(f"{path}: read as setuptools reads it ([options] install_requires"
                 f"{', its extras' if extras else ''}); what setup.py adds in code is not read (it is not run)")
    return wanted


def _listed(path: str, where: str, value: str) -> list[Wanted]:
    """One requirement a line of a value over several lines; a one-line value split at ``;``."""
    if value.startswith("file:"):
        raise InputError(f"--project: {path}: {where} = {value.strip()}: a file: directive (read it with -r)")
    lines = value.splitlines() if "\n" in value else value.split(";")  # as setuptools' _parse_list
    texts = [line.split(" #", 1)[0].strip() for line in lines]
    out = []
    for i, text in enumerate(t for t in texts if t and not t.startswith("#")):
        origin = f"{path}: {where}[{i}]"
        out.append(Wanted(text=text, name=requirement_name(text, origin), origin=origin))
    return out
