"""Text for a terminal, a log or a rendered file: what every output of torch-install passes through.

- ``one_line``: values that come from captures, profiles, environments and indexes can neither break a line nor
  drive the terminal.
- ``redact``: the one redaction of secrets, used by every output path (text, ``--json``, printed commands and the
  options after ``--``, logs, Dockerfiles, the doctor's environment report, error messages): URL credentials
  (``https://user:token@host`` -> ``https://***@host``) and the values of variables named like secrets
  (``*_TOKEN``, ``*_PASSWORD``, ``*_SECRET``, ``*_API_KEY``, ``*_CREDENTIALS``) written ``NAME=value`` or as JSON.
- ``OutputStream``: stdout and stderr as the CLI writes them: redacted, and encodable whatever the stream's
  encoding (a cp1252 or ASCII stream gets ``>=``, ``->``, ``...`` for ``≥``, ``→``, ``…``).
"""

from __future__ import annotations

import codecs
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, TextIO

# A user (not git's conventional password-less ``git@``) and password before a URL's host.
_URL_CREDENTIALS = r"(?i)\b([a-z][a-z0-9+.-]{1,15}://)(?!git@)[^/\s:@'\"<>]+(?::[^/\s@'\"<>]*)?@"
_SECRET_NAME = r"[A-Za-z0-9_]*(?:TOKEN|PASSWORD|PASSWD|SECRET|API_?KEY|CREDENTIALS?|AUTH)[A-Za-z0-9_]*"
_SECRET_ASSIGNMENT = rf"\b({_SECRET_NAME})=(?!\*\*\*)[^\s'\"]+"
_SECRET_JSON = rf"(\"{_SECRET_NAME}\"\s*:\s*\")(?!\*\*\*\")(?:[^\"\\]|\\.)*\""
_SECRET_WORDS = ("TOKEN", "PASSW", "SECRET", "KEY", "CREDENTIAL", "AUTH")  # one is in every _SECRET_NAME
MASK = "***"

# What a stream that cannot encode the product's few non-ASCII characters gets instead.
ASCII_FALLBACK = {"≥": ">=", "≤": "<=", "→": "->", "…": "...", "·": "-", "–": "-", "—": "--", "×": "x", "±": "+/-",
                  "’": "'", "‘": "'", "“": '"', "”": '"', "™": "(TM)", "®": "(R)", "©": "(C)", "²": "2"}
ERRORS = "torch-install-ascii"


def one_line(text: str) -> str:
    """``text`` kept on one line of a rendered file or terminal: line breaks, escape sequences and other
    unprintable characters (from a GPU name, a profile note, an environment variable) written escaped."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def redact(text: str) -> str:
    """``text`` with every URL credential and secret-named variable's value replaced by ``***``."""
    if "@" in text:
        text = re.sub(_URL_CREDENTIALS, rf"\1{MASK}@", text)
    if not any(word in text for word in _SECRET_WORDS):  # no name to mask: the patterns are not even compiled
        return text
    if "=" in text:
        text = re.sub(_SECRET_ASSIGNMENT, rf"\1={MASK}", text)
    if '":' in text:
        text = re.sub(_SECRET_JSON, rf'\1{MASK}"', text)
    return text


def _fallback(error: UnicodeError) -> tuple[str, int]:
    """The codec error handler: each character the stream cannot encode as its ASCII stand-in, else ``?``."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    bad = error.object[error.start:error.end]
    return "".join(ASCII_FALLBACK.get(c, "?") for c in bad), error.end


codecs.register_error(ERRORS, _fallback)


class OutputStream:
    """A text stream of the CLI: what is written is redacted, and written with the ASCII stand-ins where the
    underlying stream's encoding has no such character."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._pending = ""
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            # a stream that cannot be reconfigured encodes on its own (no contextlib: it is not imported at start-up)
            try:  # noqa: SIM105
                reconfigure(errors=ERRORS)
            except (ValueError, TypeError, OSError):
                pass

    def write(self, text: str) -> int:
        """Whole lines are redacted and passed on; a partial line waits for its end (or ``flush``), so a secret
        written in two pieces is still one match."""
        self._pending += text
        end = max(self._pending.rfind("\n"), self._pending.rfind("\r"))
        if end >= 0:
            self.stream.write(redact(self._pending[:end + 1]))
            self._pending = self._pending[end + 1:]
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.stream.write(redact(self._pending))
            self._pending = ""
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding … are the stream's own
        return getattr(self.stream, name)
