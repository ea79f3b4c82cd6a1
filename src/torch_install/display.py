"""Text for a terminal, a log or a rendered file: what every output of torch-install passes through.

- ``one_line``: values that come from captures, profiles, environments and indexes can neither break a line nor
  drive the terminal.
- ``redact``: the one redaction of secrets, used by every output path (text, ``--json``, printed commands and the
  options after ``--``, logs, Dockerfiles, the doctor's environment report, error messages, captures): URL
  credentials read as urllib and pip read them, up to the last "@" before the host
  (``https://alice@example.com:tok@host`` -> ``https://***@host``), and the values of variables named like secrets
  (``*_TOKEN``, ``*_PASSWORD``, ``*_SECRET``, ``*_API_KEY``, ``*_CREDENTIALS``, ``*_AUTH``, in any case) written
  ``NAME=value`` (bare or quoted), ``"NAME": "value"`` or ``{"name": "NAME", "value": "…"}``. ``excerpt`` cuts a
  value for a message after redacting it, so a cut can never leave a password without the "@" that marks it.
- ``OutputStream``: stdout and stderr as the CLI writes them: redacted, encodable whatever the stream's encoding
  (a cp1252 or ASCII stream gets ``>=``, ``->``, ``...`` for ``≥``, ``→``, ``…``), and never raising: a stream
  that cannot be written (a full disk, a closed descriptor, a reader that has gone) is noted and written no more,
  and the CLI turns that into its exit code.
"""

from __future__ import annotations

import codecs
import errno
import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, TextIO

# A URL's credentials as urllib (and so pip) reads them: after "scheme://", everything up to the last "@" before the
# host, the authority ending at the first "/", "?" or "#" (and, in text, at whitespace). Quotes, backslashes and
# "@" inside are part of it, so a URL quoted for a shell (''"'"''), escaped in JSON or TOML (\") or written by
# repr() is matched whole.
_URL_CREDENTIALS = r"(?i)\b([a-z][a-z0-9+.-]{1,15}://)([^\s/?#]*)@"
# A variable named like a secret, in any case; "auth" only as a whole part of the name (NPM_AUTH, auth_token), so
# "author" is not one. A word boundary before it keeps the search linear in the text.
_SECRET_NAME = (r"\b[A-Za-z0-9_]*(?:TOKEN|PASSWORD|PASSWD|SECRET|API_?KEY|CREDENTIALS?|AUTH(?![A-Za-z]))"
                r"[A-Za-z0-9_]*")
# NAME=value, NAME="value", NAME='value' (never NAME==version: "tokenizers==0.19" is a requirement); a bare value
# ends at whitespace or an unescaped quote (the end of the JSON string that holds it)
# (loops unrolled: a long value costs re no state per character)
_SECRET_ASSIGNMENT = (rf"(?i)({_SECRET_NAME})=(?!=)"
                      r"(\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\"?|'[^'\n]*'?|[^\s\"'\\]*(?:\\.[^\s\"'\\]*)+|[^\s\"'\\]+)")
_JSON_STRING = r"\"[^\"\\]*(?:\\.[^\"\\]*)*\""
_SECRET_JSON = rf"(?i)(\"{_SECRET_NAME[2:]}\"\s*:\s*){_JSON_STRING}"
# {"name": "HF_TOKEN", "value": "…"} (a container's or a CI system's list of variables), either order
_SECRET_NAMED = (rf"(?i)(\"name\"\s*:\s*\"{_SECRET_NAME[2:]}\"\s*,\s*\"value\"\s*:\s*){_JSON_STRING}"
                 rf"|(\"value\"\s*:\s*){_JSON_STRING}(?=\s*,\s*\"name\"\s*:\s*\"{_SECRET_NAME[2:]}\")")
_SECRET_WORDS = ("token", "passw", "secret", "key", "credential", "auth")  # one is in every _SECRET_NAME
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
        text = re.sub(_URL_CREDENTIALS, _mask_credentials, text)
    lowered = text.lower()
    if not any(word in lowered for word in _SECRET_WORDS):  # no name to mask: the patterns are not even compiled
        return text
    if "=" in text:
        text = re.sub(_SECRET_ASSIGNMENT, _mask_assignment, text)
    if '":' in text or '" :' in text:
        text = re.sub(_SECRET_JSON, rf'\1"{MASK}"', text)
        if '"name"' in lowered:
            text = re.sub(_SECRET_NAMED, _mask_named, text)
    return text


def _mask_credentials(match: re.Match[str]) -> str:
    # git's conventional password-less user (git+ssh://git@host/…) is no secret
    return match[0] if match[2].lower() == "git" else f"{match[1]}{MASK}@"


def _mask_assignment(match: re.Match[str]) -> str:
    quote = match[2][0] if match[2][0] in "'\"" else ""
    return f"{match[1]}={quote}{MASK}{quote}"


def _mask_named(match: re.Match[str]) -> str:
    return f'{match[1] or match[2]}"{MASK}"'


def excerpt(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text`` for a message, redacted before it is cut."""
    return redact(text)[:limit]


def _fallback(error: UnicodeError) -> tuple[str, int]:
    """The codec error handler: each character the stream cannot encode as its ASCII stand-in, else ``?``."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    bad = error.object[error.start:error.end]
    return "".join(ASCII_FALLBACK.get(c, "?") for c in bad), error.end


codecs.register_error(ERRORS, _fallback)


class _Closed:
    """The stream of a descriptor the command was started without (``>&-``): nothing written to it arrives."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "closed")

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "closed")


class OutputStream:
    """A text stream of the CLI: what is written is redacted, and written with the ASCII stand-ins where the
    underlying stream's encoding has no such character. It never raises: when the stream cannot be written
    (``lost``: a full disk, an I/O error, a closed descriptor; ``reader_gone``: the reader of a pipe stopped
    reading, as ``| head`` does) what follows is dropped, and ``failure`` says why."""

    def __init__(self, stream: TextIO | None, name: str = "output") -> None:
        self.stream: Any = _Closed() if stream is None else stream
        self.name = name
        self.failure: str | None = None
        self.reader_gone = False
        self._pending = ""
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            # a stream that cannot be reconfigured encodes on its own (no contextlib: it is not imported at start-up)
            try:  # noqa: SIM105
                reconfigure(errors=ERRORS)
            except (ValueError, TypeError, OSError):
                pass

    @property
    def lost(self) -> bool:
        """Output was dropped for a reason other than a reader that stopped reading."""
        return self.failure is not None and not self.reader_gone

    def write(self, text: str) -> int:
        """Whole lines are redacted and passed on; a partial line waits for its end (or ``flush``), so a secret
        written in two pieces is still one match."""
        self._pending += text
        end = max(self._pending.rfind("\n"), self._pending.rfind("\r"))
        if end >= 0:
            self._emit(redact(self._pending[:end + 1]))
            self._pending = self._pending[end + 1:]
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._emit(redact(self._pending))
            self._pending = ""
        if self.failure is None:
            self._guarded(self.stream.flush)

    def _emit(self, text: str) -> None:
        if self.failure is None:
            self._guarded(self.stream.write, text)

    def _guarded(self, action: Any, *args: str) -> None:
        try:
            action(*args)
        except UnicodeEncodeError as exc:  # a stream that would not take the stand-ins' handler: encode here
            encoding = getattr(self.stream, "encoding", None) or "ascii"
            safe = args[0].encode(encoding, ERRORS).decode(encoding) if args else ""
            if safe and safe != args[0]:
                self._guarded(action, safe)
            else:
                self.failure = str(exc)
        except OSError as exc:
            self.reader_gone = isinstance(exc, BrokenPipeError)
            self.failure = exc.strerror or str(exc) or type(exc).__name__
        except ValueError:  # the stream was closed under us
            self.failure = "closed"

    def isatty(self) -> bool:
        try:
            return bool(self.stream.isatty())
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str) -> Any:  # fileno, encoding … are the stream's own
        return getattr(self.stream, name)
