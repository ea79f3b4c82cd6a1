"""Indented JSON, exactly as ``json.dumps(value, indent=N)`` writes it, at the C encoder's speed.

``json.dumps`` writes indented JSON with its pure-Python encoder, a generator step for every value: a plan of a
2,000-package lock (its request lists every requirement) spends more on that than on all the rest. Here the C
encoder writes what holds no container (a requirement's record, a list of names) and every list of such records, in
one call each, and only the containers above them are walked in Python.

The C encoder writes no line breaks, but it puts its item separator between the items of every container. With
``",\\x00"`` for it (a NUL is written ``\\u0000`` inside a string, so a raw one is only ever a separator) a list of
records comes out as ``[{…},\\x00{…}]``: a separator after ``}`` and before ``{`` is the list's, every other one a
record's, and each is replaced by the line break and indent ``json.dumps`` puts there.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

_SCALARS = frozenset({str, int, float, bool, type(None)})  # exact types: a subclass may be written otherwise
_MARKED = json.JSONEncoder(separators=(",\x00", ": "))


def indented(value: Any, indent: int = 2) -> str:
    """``json.dumps(value, indent=indent)``."""
    return _write(value, "\n", " " * indent)


def _flat(items: Iterable[Any]) -> bool:
    return all(map(_SCALARS.__contains__, map(type, items)))


def _write(value: Any, newline: str, step: str) -> str:
    """``value`` at the depth whose line break (and indent) is ``newline``."""
    items: Iterable[Any]
    if isinstance(value, dict):
        items = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        return json.dumps(value)
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    inner = newline + step
    if _flat(items):  # "[a,\0b]" -> "[<inner>a,<inner>b<newline>]"
        flat = _MARKED.encode(value)
        return flat[0] + inner + flat[1:-1].replace(",\x00", "," + inner) + newline + flat[-1]
    if type(value) is list and all(type(item) is dict and item and _flat(item.values()) for item in value):
        record = inner + step  # "[{a,\0b},\0{c}]": the list's separators, then the records'
        body = _MARKED.encode(value)[2:-2].replace("},\x00{", f"{inner}}},{inner}{{{record}")
        return f"[{inner}{{{record}{body.replace(',' + chr(0), ',' + record)}{inner}}}{newline}]"
    if isinstance(value, dict):
        parts = [f"{_key(key)}: {_write(item, inner, step)}" for key, item in value.items()]
        return "{" + inner + ("," + inner).join(parts) + newline + "}"
    return "[" + inner + ("," + inner).join([_write(item, inner, step) for item in value]) + newline + "]"


def _key(key: Any) -> str:
    """A key as json writes it: a string as it is, a number, boolean or None as its JSON text, quoted."""
    return json.dumps(key) if isinstance(key, str) else json.dumps({key: 0}, separators=(",", ":"))[1:-3]
