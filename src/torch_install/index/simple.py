"""The simple-index protocol as the client speaks it: the content types of PEP 691 JSON and PEP 503 HTML pages, the
Accept header that asks for them, the largest page taken, and ``IndexUnavailable``. Nothing here reads a page, so a
revalidation the server answers 304 imports no page reader (``pages.py``)."""

from __future__ import annotations

from ..errors import EnvironmentFailure

JSON_CONTENT_TYPE = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{JSON_CONTENT_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
MAX_PAGE_BYTES = 64 * 1024 * 1024  # the full /whl/torch/ page is a few MiB; nightly pages are larger


class IndexUnavailable(EnvironmentFailure):
    """An index page could not be fetched or read (exit 3). ``str()`` is one line naming the URL;
    ``status`` is the HTTP status when the server answered with an error."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
