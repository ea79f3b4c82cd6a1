"""The answer of a parser that could not read its input: "unknown", with the reason why."""

# NamedTuple value types, and no `from __future__ import annotations`: see docs/architecture.md, "Value types".
from typing import NamedTuple


class Unknown(NamedTuple):
    """A value that could not be established; ``reason`` says why, in one line."""

    reason: str

    def __bool__(self) -> bool:  # an Unknown never reads as a found value
        return False
