"""``versions.specifier_allows`` reads a Requires-Python specifier as packaging does, for every specifier and Python
version: plain bounds on its own path, the rest through packaging."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet

from lanes import equivalence
from torch_install.versions import specifier_allows

releases = st.lists(st.integers(0, 16), min_size=1, max_size=4).map(lambda parts: ".".join(map(str, parts)))
clause = st.tuples(st.sampled_from([">=", "<=", "==", "!=", "<", ">", "~=", "==="]), releases,
                   st.sampled_from(["", ".*", "rc1", "a2"]), st.sampled_from(["", " "]))
specifiers = st.lists(clause, max_size=3).map(lambda cs: ",".join(f"{sp}{op}{r}{s}" for op, r, s, sp in cs))
pythons = st.tuples(releases, st.sampled_from(["", "rc1", "a1", ".dev0"])).map("".join)


def valid(spec: str) -> bool:
    try:
        SpecifierSet(spec)
    except ValueError:
        return False
    return True


@equivalence(2000)
@given(specifiers, pythons)
@example("<3.15,>=3.10", "3.15")
@example("<3.15,>=3.10", "3.15.0rc1")
@example(">=3.10", "3.10.0")
@example("!=3.14.1,>=3.10", "3.14.1")
@example("==3.10", "3.10.0")
@example("", "3.12")
def test_specifier_allows_reads_a_specifier_as_packaging_does(spec: str, python: str) -> None:
    if valid(spec):
        assert specifier_allows(spec, python) is SpecifierSet(spec).contains(python, prereleases=True)


def test_the_common_bounds() -> None:
    assert specifier_allows("<3.15,>=3.10", "3.14")
    assert not specifier_allows("<3.15,>=3.10", "3.15")
    assert not specifier_allows(">=3.10", "3.9.18")
    assert specifier_allows(">=3.10", "3.10.0")
