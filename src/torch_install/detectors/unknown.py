"""The answer of a parser that could not read its input: "unknown", with the reason why."""

from __future__ import annotations

from ..records import Record


class Unknown(Record):
    """A value that could not be established; ``reason`` says why, in one line."""

    reason: str

    def __bool__(self) -> bool:  # an Unknown never reads as a found value
        return False
