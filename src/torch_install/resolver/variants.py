"""Wheel-variant ids: ``cu128``, ``rocm6.4``, ``xpu``, ``cpu`` and ``default``.

A variant id is the PyTorch index's own name for a build: the directory under the index base
(``/whl/cu128/``) and the local version label of its wheels (``torch-2.9.1+cu128``). ``default`` stands for
the default index's unlabelled wheel (macOS). The syntax of each GPU vendor's ids is its row's ``variant_id``
(``vendors.py``); every other module asks this one what kind a variant is, how variants sort and which CUDA or
ROCm version an id names.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .. import vendors
from ..versions import numeric_key

BUILT_IN_KINDS = ("cpu", "default")  # the kinds no vendor owns


def variant_kind(variant: str) -> str:
    """cpu | default (the default index, macOS) | a vendor's kind (cuda, rocm, xpu …) | unknown."""
    return _variant_kind(variant, vendors.generation)


# The caches below: a resolve asks these of every (release, variant) pair it walks; cached, the worst resolve (two
# mixed GPUs) takes 2.7 ms instead of 5.4 (bench/bench_resolve.py). They key on the registry's generation.
@lru_cache(maxsize=1024)
def _variant_kind(variant: str, generation: int) -> str:
    if variant in BUILT_IN_KINDS:
        return variant
    for row in vendors.VENDORS:
        if row.variant_id and re.fullmatch(row.variant_id, variant):
            return row.kind or "unknown"
    return "unknown"


def is_variant(text: str) -> bool:
    """Whether ``text`` is a variant id (of any kind)."""
    return variant_kind(text) != "unknown"


def is_index_variant(text: str | None) -> bool:
    """Whether ``text`` names a build of the PyTorch index: cpu or a vendor's GPU build (not the default index's)."""
    kind = variant_kind(text) if text else "unknown"
    return kind not in ("default", "unknown")


@lru_cache(maxsize=1024)
def cuda_version(variant: str) -> tuple[int, int] | None:
    """ "cu128" -> (12, 8); "cu130" -> (13, 0); None for a non-CUDA variant."""
    if variant_kind(variant) != "cuda":
        return None
    digits = variant[2:]
    return int(digits[:-1]), int(digits[-1])


def rocm_version(variant: str) -> tuple[int, ...] | None:
    """ "rocm6.2.4" -> (6, 2, 4); None for a non-ROCm variant."""
    return tuple(int(x) for x in variant[4:].split(".")) if variant_kind(variant) == "rocm" else None


def variant_of_build(template: str, version: str) -> str | None:
    """A ``torch/version.py`` build version as a variant id, by the vendor's template: ("cu{major}{minor}", "12.8")
    -> "cu128", ("rocm{major}.{minor}", "6.4.43484") -> "rocm6.4", ("xpu", "20250201") -> "xpu"; None when the
    version has not the numbers the template needs, or they make no variant id."""
    if "{" not in template:
        return template
    numbers = re.match(r"^([0-9]{1,6})\.([0-9]{1,6})", version)
    found = template.format(major=int(numbers[1]), minor=int(numbers[2])) if numbers else None
    return found if found and is_variant(found) else None


# torch's pin of the CUDA runtime in its Requires-Dist: "nvidia-cuda-runtime-cu12==12.8.90", (torch 2.6 and older)
# "nvidia-cuda-runtime-cu12 (==12.4.127)", or (CUDA 13 builds) "cuda-toolkit[cudart]==13.0.2"
_CUDA_PIN = r"^(?:nvidia-cuda-runtime(?:-cu[0-9]+)?|cuda-toolkit(?:\[[^\]]*\])?)\s*\(?\s*==\s*([0-9]+)\.([0-9]+)"


def variant_of_cuda_pin(requirement: str) -> str | None:
    """The CUDA variant a ``Requires-Dist`` line of torch pins ("nvidia-cuda-runtime-cu12==12.8.90" -> "cu128"),
    read from its start (a marker after it is the caller's to judge); None for any other line."""
    found = re.match(_CUDA_PIN, requirement.lstrip(), re.IGNORECASE)
    return f"cu{found[1]}{found[2]}" if found else None


def variant_of_label(label: str | None, platform: str) -> str | None:
    """The variant of a wheel's local label (cu134, rocm7.14, xpu, cpu); an unlabelled macOS wheel is the
    default index's build (``default``); anything else is no variant (None)."""
    if not label:
        return "default" if platform.startswith("macos") else None
    return label if is_index_variant(label) else None


def variant_order(variant: str) -> tuple[int, tuple[int, ...]]:
    """Sort key for variants: cpu, then each vendor's kind in the registry's order (CUDA, ROCm, xpu …), then the
    rest; numerically within a kind."""
    return _variant_order(variant, vendors.generation)


@lru_cache(maxsize=1024)
def _variant_order(variant: str, generation: int) -> tuple[int, tuple[int, ...]]:
    kinds = ("cpu", *vendors.gpu_kinds())
    kind = variant_kind(variant)
    return (kinds.index(kind) if kind in kinds else len(kinds)), numeric_key(variant)
