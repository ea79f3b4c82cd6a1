"""The lanes' share of the counted properties: the property tests that hold a fast path equal to its reference
(packaging's parsers, ``json.dumps``, the full wheel reading: ``@equivalence``) and those that feed a reader random
input and hold that it never raises (``@robustness``) draw a few examples in the fast lane and their full count in
the slow lane.

``@equivalence(800)`` in place of ``@settings(max_examples=800, deadline=None)``: a run that leaves the slow tests
out (``pytest -m "not slow"``) draws a twentieth of the count (at least ``FEW``), any other run (``pytest``,
``pytest -m slow``) the whole count, and ``pytest -m slow`` selects these tests too (``conftest.py`` marks them
slow there). Their ``@example`` inputs run in both lanes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis import settings

FEW = 25
full_counts = True  # set by conftest.py's pytest_configure from the run's -m expression

Test = TypeVar("Test", bound=Callable[..., Any])


def lane_count(full: int) -> int:
    """The examples an equivalence property of ``full`` examples draws in this run."""
    return full if full_counts else min(full, max(full // 20, FEW))


MARKS = ("equivalence", "robustness")  # the counted properties' marks


def _counted(mark: str, full: int, options: dict[str, Any]) -> Callable[[Test], Test]:
    def apply(test: Test) -> Test:
        marked: Test = getattr(pytest.mark, mark)(settings(max_examples=lane_count(full), deadline=None,
                                                           **options)(test))
        return marked

    return apply


def equivalence(full: int, **options: Any) -> Callable[[Test], Test]:
    """Hypothesis settings of an equivalence property (``full`` examples in the slow lane, no deadline) and its
    ``equivalence`` mark."""
    return _counted("equivalence", full, options)


def robustness(full: int, **options: Any) -> Callable[[Test], Test]:
    """Hypothesis settings of a property that random input never makes a reader raise (``full`` examples in the
    slow lane, no deadline) and its ``robustness`` mark."""
    return _counted("robustness", full, options)
