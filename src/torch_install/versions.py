"""Ordering dotted version numbers (drivers, CUDA, ROCm, glibc, macOS) without importing ``packaging``.

``packaging.version`` is the right tool for torch release versions read from an index; the versions
compared here are plain dotted numbers from the machine and the shipped tables, compared on every plan,
where importing ``packaging`` would cost more start-up time than the whole comparison.
"""

from __future__ import annotations

import re
from functools import lru_cache

_NUMBER = r"[0-9]+"  # patterns are compiled at their first use (re caches them): start-up pays for those it uses
MAX_DIGITS = 18  # more digits than any real version part, size or count has; below Python's int-conversion limit


@lru_cache(maxsize=1024)  # asked for every driver and floor a resolve compares (see resolver/variants.py)
def numeric_key(version: str) -> tuple[int, ...]:
    """The numbers of a version, in order, as a sort key: "550.54.15" -> (550, 54, 15), "rocm6.2.4" -> (6, 2, 4),
    "7.1.1-38" -> (7, 1, 1, 38). Anything that is not a digit only separates numbers."""
    return tuple(int(x) if len(x) <= MAX_DIGITS else 10**MAX_DIGITS for x in re.findall(_NUMBER, version))


def has_long_number(text: str) -> bool:
    """Whether ``text`` holds a run of more than ``MAX_DIGITS`` digits: no version has one, and converting it may
    be refused (Python's limit on converting long digit strings, which packaging meets too)."""
    return re.search(f"[0-9]{{{MAX_DIGITS + 1}}}", text) is not None


def small_int(text: str, digits: int = MAX_DIGITS) -> int | None:
    """``text`` as an int when it is 1 to ``digits`` ASCII digits (no sign, no Unicode digits like "²"), else None:
    how numbers read from users, captures and files are converted."""
    return int(text) if 0 < len(text) <= digits and text.isascii() and text.isdigit() else None


_RELEASE = r"[0-9]+(?:\.[0-9]+)*"


def release_part(version: str) -> str:
    """The first run of dotted numbers of a version: "6.4.0rc1" -> "6.4.0", "7.1.0-38" -> "7.1.0",
    "rocm6.2.4" -> "6.2.4"; "" when there is none."""
    found = re.search(_RELEASE, version)
    return found.group() if found else ""


def release_numbers(version: str) -> tuple[int, ...]:
    """The numbers of ``release_part``: what rules compare when a version may carry a pre-release or build suffix."""
    return numeric_key(release_part(version))


_PLAIN_CLAUSE = r"[ \t]*(>=|<=|==|!=|<|>)[ \t]*([0-9]{1,9}(?:\.[0-9]{1,9}){0,3})[ \t]*\Z"
_PLAIN_RELEASE = r"[0-9]{1,9}(?:\.[0-9]{1,9}){0,3}\Z"


def plain_release_key(release: str) -> tuple[int, ...]:
    """A plain release ("3.10", "2.9.0") as PEP 440 compares it: trailing zeros do not count (2.9 == 2.9.0)."""
    numbers = list(map(int, release.split(".")))
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


_COMPARE = {">=": tuple.__ge__, "<=": tuple.__le__, "==": tuple.__eq__, "!=": tuple.__ne__,
            "<": tuple.__lt__, ">": tuple.__gt__}


@lru_cache(maxsize=1024)
def specifier_allows(specifier: str, version: str) -> bool:
    """Whether a specifier (a Requires-Python ">=3.9", "<3.15,>=3.10"; a package's "torch==2.5.1") admits
    ``version`` ("3.12", "2.5.1"), pre-releases included, as PEP 440 reads it. Plain releases compared by plain
    bounds are read here, on every plan; anything else (wildcards, ``~=``, pre-releases, local labels) is
    packaging's to decide, and a specifier it cannot read raises its ``InvalidSpecifier`` (a ``ValueError``)."""
    clauses = [re.match(_PLAIN_CLAUSE, part) for part in specifier.split(",")] if specifier.strip() else []
    if re.match(_PLAIN_RELEASE, version) and all(clauses):
        key = plain_release_key(version)
        return all(_COMPARE[c[1]](key, plain_release_key(c[2])) for c in clauses if c)
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(specifier).contains(version, prereleases=True)
