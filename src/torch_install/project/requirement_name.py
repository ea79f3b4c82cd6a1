"""The project name a requirement names: a plain one ("numpy<2", "torch[opt-einsum]>=2.8") read without
packaging, a path or URL by its file or ``#egg=`` name, any other by packaging's parser."""

from __future__ import annotations

import os
import re

from ..display import excerpt
from ..errors import InputError
from ..resolver.request import NAME, canonical_name
from ..versions import MAX_DIGITS, has_long_number, release_part

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from ..resolver.plan import Wanted

URL = r"^[A-Za-z][A-Za-z0-9+.-]*://"  # patterns are compiled where first used (re's cache)
_EGG = r"[#&]egg=([A-Za-z0-9_.-]+)"

# "numpy<2", "torch[opt-einsum]>=2.8,!=2.9.0": a name, extras and PEP 440 version clauses, nothing else; read
# without packaging (whose import costs more than the rest of a plan); anything else goes to packaging. Two small
# patterns, the clauses lowercased (PEP 440 versions are case-insensitive): one pattern for all of it compiled
# for 4 ms.
_RELEASE = r"(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*"
_SUFFIXES = r"(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?"
# as packaging reads a clause: a ".*" or a local version only after == and !=; ~= needs two release numbers
_CLAUSE = (rf"[ \t]*(?:(?:==|!=)[ \t]*{_RELEASE}(?:\.\*|{_SUFFIXES}(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?)"
           rf"|(?:<=|>=|<|>)[ \t]*{_RELEASE}{_SUFFIXES}|~=[ \t]*(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)+{_SUFFIXES})[ \t]*\Z")
NAME_AND_EXTRAS = rf"[ \t]*({NAME})[ \t]*(?:\[[ \t]*{NAME}(?:[ \t]*,[ \t]*{NAME})*[ \t]*\])?(.*)\Z"


def plain_requirement_name(text: str) -> str | None:
    """The name of a requirement that is a name, extras and version clauses only (as written); None for any other."""
    found = re.match(NAME_AND_EXTRAS, text)
    if found is None:
        return None
    clauses = found[2].lower()
    if clauses.strip(" \t") and not all(_release_clause(c) or re.match(_CLAUSE, c) for c in clauses.split(",")):
        return None
    return found[1]


def _release_clause(clause: str) -> bool:
    """Whether ``clause`` is the common kind, an order and a release ("<2", ">= 1.26.4"), read without a pattern."""
    clause = clause.strip(" \t")
    operator = clause[:2] if clause[:2] in ("==", "!=", "<=", ">=") else clause[:1] if clause[:1] in ("<", ">") else ""
    release = clause[len(operator):].lstrip(" \t")
    return bool(operator and release) and release_part(release) == release


def requirement_name(text: str, origin: str) -> str | None:
    """The canonical project name a requirement names; None for a path or URL that names none. A requirement that
    is not one, or whose versions or markers hold a number longer than any version's, is an InputError naming
    ``origin``."""
    head, _, marker = text.partition(";")
    named = _named_location(text)
    location = _is_location(text, head, named)
    check_digits(marker if location else text, text, origin)  # a URL's own digits are no version
    if location:
        if named:  # "name @ URL": the name it gives
            return canonical_name(named[1])
        egg = re.search(_EGG, text)
        if egg:
            return canonical_name(egg[1])
        wheel = os.path.basename(head.split("#", 1)[0].strip())
        if wheel.endswith(".whl") and "-" in wheel:
            return canonical_name(wheel.split("-", 1)[0])
        return None
    plain = plain_requirement_name(text)
    if plain:
        return canonical_name(plain)
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return canonical_name(Requirement(text).name)
    except InvalidRequirement as exc:
        raise InputError(f"{origin}: {excerpt(text, 80)!r} is not a requirement ({str(exc).splitlines()[0]})"
                         ) from None


def _named_location(text: str) -> re.Match[str] | None:
    """``name @ URL`` (or ``name[extras] @ path``): its name; None for any other requirement."""
    return None if re.match(URL, text) else re.match(rf"[ \t]*({NAME})[ \t]*(?:\[[^\]]*\])?[ \t]*@", text)


def _is_location(text: str, head: str, named: re.Match[str] | None) -> bool:
    """Whether the requirement ``text`` (``head``: before its marker) is a URL or a path, named or not (``file:.``,
    a file URL without a host, as rye writes its project: pip reads any ``file:`` as a URL)."""
    return named is not None or bool(re.match(URL, text)) or text[:5].lower() == "file:" \
        or text.startswith((".", "/", "~")) \
        or _path_like(head.split("@", 1)[0]) or head.strip().endswith((".whl", ".tar.gz", ".zip"))


def versions_part(text: str) -> str:
    """The part of a requirement where its versions are written: all of it, or the marker of a URL or a path (a
    URL's digits, a ``#sha256=`` or a token, are no version)."""
    head, _, marker = text.partition(";")
    return marker if _is_location(text, head, _named_location(text)) else text


def _path_like(text: str) -> bool:
    """Whether ``text`` (what comes before any "@") is a path as pip tells one: a separator in it, and no blank
    unless it is a directory here ("torch --index-url https://…" is a requirement with an option, not a path)."""
    text = text.strip()
    return os.sep in text and (not any(c.isspace() for c in text) or os.path.isdir(text))


def check_digits(part: str, text: str, origin: str) -> None:
    """An InputError naming ``origin`` when ``part`` of the requirement ``text`` holds a number of more digits than
    a version has (which packaging would fail to convert)."""
    if has_long_number(part):
        raise InputError(f"{origin}: {excerpt(text, 40)!r}…: a version number of more than {MAX_DIGITS} digits")


def requirement_strings(path: str, where: str, value: Any) -> list[Wanted]:
    """The requirements of the list at ``where`` of the file at ``path``, each named by its place in it."""
    from ..resolver.plan import Wanted

    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"--project: {path}: {where} is not a list of requirement strings")
    origin = f"{path}: {where}"
    return [Wanted(text=v.strip(), name=requirement_name(v.strip(), f"{origin}[{i}]"), origin=f"{origin}[{i}]")
            for i, v in enumerate(value)]
