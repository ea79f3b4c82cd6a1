"""The block YAML that conda and conda-smithy write (``environment.yml``, ``conda env export``, a feedstock's
``.ci_support/*.yaml``), read into plain values: mappings (dicts), sequences (lists) and scalars (strings).

What such files use is read: block mappings and sequences (a sequence may sit at its key's own indentation, as
conda-smithy writes it, and items may hold mappings or sequences), plain, single- and double-quoted scalars, flow
sequences of scalars (``[conda-forge, nodefaults]``), an empty ``{}``, comments and a leading ``---``. Anything
else (anchors, aliases, tags, block scalars, flow mappings) is a ``YamlError`` naming its line: a reader that
guessed would hand the resolver something the file does not say. Every scalar stays a string (``3.10`` is the
version "3.10", not a float), as conda reads package specs. Nesting is bounded (``MAX_DEPTH``).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 32
_KEY = re.compile(r"""^(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s'"#\-?:,\[\]{}&*!|>%@`][^#]*?|-[^\s#][^#]*?)"""
                  r""":(?:\s+(?P<value>.*))?$""")
_DOUBLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r", "0": "\0"}


class YamlError(ValueError):
    """What the reader does not read, with its line number (1-based)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


class _Line:
    __slots__ = ("indent", "text", "number")

    def __init__(self, indent: int, text: str, number: int) -> None:
        self.indent, self.text, self.number = indent, text, number


def _strip_comment(text: str) -> str:
    """The line without a trailing ``# comment`` (a ``#`` inside quotes, or not after a space, is kept)."""
    quote = None
    for i, char in enumerate(text):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"" and (i == 0 or text[i - 1] in " \t[,:-"):
            quote = char
        elif char == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text.rstrip()


def _lines(text: str) -> list[_Line]:
    out: list[_Line] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise YamlError(number, "a tab in the indentation (YAML indents with spaces)")
        content = _strip_comment(raw)
        stripped = content.lstrip(" ")
        if not stripped or (not out and stripped == "---"):
            continue
        if stripped in ("---", "..."):
            raise YamlError(number, "a second YAML document: one environment per file")
        out.append(_Line(len(content) - len(stripped), stripped, number))
    return out


def _scalar(text: str, number: int) -> str | list[str] | dict[str, Any]:
    """One value written on a line: a quoted or plain scalar, a flow sequence of scalars, or ``{}``."""
    if text.startswith("["):
        if not text.endswith("]"):
            raise YamlError(number, "a flow sequence that does not end on its line")
        inner = text[1:-1].strip()
        return [] if not inner else [str(_scalar(part.strip(), number)) for part in _split_flow(inner, number)]
    if text == "{}":
        return {}
    if text[0] in "&*!|>{%@`":
        raise YamlError(number, f"{text[:20]!r}: anchors, aliases, tags, block scalars and flow mappings are not "
                                "read here")
    if text[0] == '"':
        return _double_quoted(text, number)
    if text[0] == "'":
        if len(text) < 2 or not text.endswith("'"):
            raise YamlError(number, "an unterminated quoted string")
        return text[1:-1].replace("''", "'")
    return text


def _split_flow(inner: str, number: int) -> list[str]:
    parts, current, quote = [], "", None
    for char in inner:
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[]{}":
            raise YamlError(number, "a nested flow collection is not read here")
        elif char == ",":
            parts.append(current)
            current = ""
            continue
        current += char
    if quote:
        raise YamlError(number, "an unterminated quoted string")
    return [p for p in (*parts, current) if p.strip()]


def _double_quoted(text: str, number: int) -> str:
    if len(text) < 2 or not text.endswith('"') or text.endswith('\\"') and not text.endswith('\\\\"'):
        raise YamlError(number, "an unterminated quoted string")
    out, i, body = [], 0, text[1:-1]
    while i < len(body):
        char = body[i]
        if char == "\\":
            escaped = body[i + 1: i + 2]
            if escaped not in _DOUBLE_ESCAPES:
                raise YamlError(number, f"the escape \\{escaped} is not read here")
            out.append(_DOUBLE_ESCAPES[escaped])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


class _Reader:
    def __init__(self, lines: list[_Line]) -> None:
        self.lines = lines
        self.i = 0

    def node(self, indent: int, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise YamlError(self.lines[self.i].number, f"nested more than {MAX_DEPTH} levels deep")
        line = self.lines[self.i]
        if line.text == "-" or line.text.startswith("- "):
            return self.sequence(indent, depth)
        if _KEY.match(line.text):
            return self.mapping(indent, depth)
        self.i += 1
        if self.i < len(self.lines) and self.lines[self.i].indent > indent:
            raise YamlError(self.lines[self.i].number, "a multi-line plain scalar is not read here")
        return _scalar(line.text, line.number)

    def _child(self, indent: int, depth: int, same_indent_sequence: bool) -> Any:
        """The block under a ``key:`` or ``-`` with nothing after it (None when there is none)."""
        if self.i >= len(self.lines):
            return None
        following = self.lines[self.i]
        if following.indent > indent:
            return self.node(following.indent, depth + 1)
        if same_indent_sequence and following.indent == indent and (following.text == "-" or
                                                                     following.text.startswith("- ")):
            return self.sequence(indent, depth + 1)
        return None

    def sequence(self, indent: int, depth: int) -> list[Any]:
        items: list[Any] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.indent != indent or not (line.text == "-" or line.text.startswith("- ")):
                if line.indent > indent:
                    raise YamlError(line.number, "indented more than the sequence item above it")
                break
            rest = line.text[1:].lstrip(" ")
            if not rest:
                self.i += 1
                items.append(self._child(indent, depth, same_indent_sequence=False))
                continue
            column = indent + len(line.text) - len(rest)
            self.lines[self.i] = _Line(column, rest, line.number)  # the item's content, read at its own column
            items.append(self.node(column, depth + 1))
        return items

    def mapping(self, indent: int, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.indent != indent:
                if line.indent > indent:
                    raise YamlError(line.number, "indented more than the key above it")
                break
            found = _KEY.match(line.text)
            if found is None:
                raise YamlError(line.number, f"{line.text[:40]!r} is not a 'key: value' line")
            key = str(_scalar(found["key"].strip(), line.number))
            if key in out:
                raise YamlError(line.number, f"the key {key!r} is given twice")
            self.i += 1
            value = found["value"]
            out[key] = _scalar(value, line.number) if value else self._child(indent, depth,
                                                                            same_indent_sequence=True)
        return out


def loads(text: str) -> Any:
    """The document's value (None for an empty one); YamlError for what is not read here."""
    lines = _lines(text)
    if not lines:
        return None
    reader = _Reader(lines)
    value = reader.node(lines[0].indent, 0)
    if reader.i < len(lines):
        raise YamlError(lines[reader.i].number, "indented less than the first line, or a second top-level value")
    return value
