"""The requests read without packaging (bare names, a pinned release) ask what packaging would read in them."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet

from lanes import equivalence
from resolve_cases import TEST_MATRIX
from torch_install.machine import Machine
from torch_install.resolver import Request
from torch_install.resolver.matrix import load_matrix
from torch_install.resolver.request import ExactRelease, parse_request

RELEASE = st.lists(st.integers(0, 12), min_size=1, max_size=4).map(lambda n: ".".join(map(str, n)))
SUFFIX = st.sampled_from(["", "", "rc1", "a2", ".post1", ".dev0", "+cu128", "+cpu", ".0", ".0.0", "rc1+cu128",
                          "rc1.post2", "a1.dev0", ".post1.dev3", "b2.post0.dev1", ".post0+cpu",  # normalized
                          "-1", "-post1", ".r1", "c1", "pre2", "-dev", "RC1", "_post2", "alpha1", ".0-1"])  # not
PREFIX = st.sampled_from(["", "", "", "v", "0!", "1!"])


@equivalence(800)
@given(RELEASE, RELEASE, SUFFIX, PREFIX)
@example("2.9.1", "2.9.1", ".post1", "")
@example("2.9.1", "2.9.1", "", "0!")
@example("2.9.1", "2.9.1", "", "v")
@example("2.9", "2.9.0", "-0", "")
def test_a_pinned_release_matches_what_packaging_matches(pinned: str, release: str, suffix: str, prefix: str) -> None:
    version = prefix + release + suffix
    assert ExactRelease(pinned).contains(version, prereleases=True) == \
        SpecifierSet(f"=={pinned}").contains(version, prereleases=True), (pinned, version)


@pytest.mark.parametrize(("pinned", "version", "expected"), [
    ("2.9", "2.9.0", True), ("2.9.0", "2.9", True), ("2.9.1", "2.9.1+cu128", True), ("2.9.1", "2.9.10", False),
    ("2.10.0", "2.10.0rc1", False), ("2.10", "2.1.0", False), ("1.0", "1.0.post1", False),
])
def test_a_pinned_release_by_example(pinned: str, version: str, expected: bool) -> None:
    assert ExactRelease(pinned).contains(version, prereleases=True) is expected
    assert SpecifierSet(f"=={pinned}").contains(version, prereleases=True) is expected


def test_every_release_of_the_matrix_is_pinned_alike() -> None:
    machine = Machine(os="linux", arch="x86_64", python="3.12")
    versions = [r.version for r in (*load_matrix().releases, *TEST_MATRIX.releases)]
    for pinned in versions:
        fast = parse_request(Request(packages=(f"torch=={pinned}", "torchvision")), machine)
        slow = parse_request(Request(packages=(f"torch=={pinned}", "torchvision"), constraints=("torchaudio",)),
                             machine)  # a constraint sends the request through packaging
        assert isinstance(fast.torch, ExactRelease) and str(fast.torch) == str(slow.torch) == f"=={pinned}"
        assert [v for v in versions if fast.torch.contains(v, prereleases=True)] == \
            [v for v in versions if slow.torch.contains(v, prereleases=True)]
        assert fast.pinned and slow.pinned and set(fast.companions) == set(slow.companions) == {"torchvision"}


REQUEST_TEXTS = st.builds("{}{}{}{}{}".format, st.sampled_from(["", " ", "\t", "\u00a0", "\n"]),
                          st.sampled_from(["torch", "Torch", "torchvision", "torch_audio", "torchaudio"]),
                          st.sampled_from(["", "-", ".", "_", "-x"]),
                          st.sampled_from(["", "==2.9.1", " == 2.9", "==2.9.1rc1", "==02.9", "==2.9.1+cu128",
                                           "==2.9.1+CPU", "== 2.9+rocm6.4", "==2.9.1+cu-128", "==2.9.1+git1",
                                           "==2.9.1+", "===2.9.1+cpu", "==2.9.1+xpu"]),
                          st.sampled_from(["", " ", "\t", "\n", "\u2028"]))


@equivalence(400)
@given(st.lists(REQUEST_TEXTS, min_size=1, max_size=3))
def test_a_request_read_without_packaging_reads_as_packaging_reads_it(texts: list[str]) -> None:
    """Bare names and pinned releases are read by patterns (no constraint given); with a constraint the same
    texts go through packaging. Both refuse the same texts, and read the others alike."""
    from torch_install.errors import InputError

    machine = Machine(os="linux", arch="x86_64", python="3.12")
    readings = []
    for constraints in ((), ("torchaudio",)):
        try:
            request = parse_request(Request(packages=tuple(texts), constraints=constraints), machine)
        except InputError:
            readings.append(None)
        else:
            readings.append((str(request.torch), sorted(request.companions), request.pinned,
                             sorted((p.name, p.release, p.variant) for p in request.pins if p.name != "torchaudio")))
    fast, slow = readings
    assert (fast is None) == (slow is None), (texts, fast, slow)
    if fast is not None and slow is not None:
        assert fast[3] == slow[3], (texts, fast, slow)  # the pins' local labels name the same builds
    if fast is not None and slow is not None:
        assert fast[0] == slow[0] and fast[2] == slow[2], (texts, fast, slow)
        assert set(fast[1]) - {"torchaudio"} == set(slow[1]) - {"torchaudio"}, (texts, fast, slow)


@equivalence(400)
@given(st.text(alphabet="aZ09_-.²ıK", min_size=1, max_size=12))
def test_a_name_is_canonical_as_packaging_makes_it(name: str) -> None:
    from packaging.utils import canonicalize_name

    from torch_install.resolver.request import canonical_name

    assert canonical_name(name) == canonicalize_name(name), name
