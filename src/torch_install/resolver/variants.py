"""Wheel-variant ids, the one place their syntax lives: ``cu128``, ``rocm6.4``, ``xpu``, ``cpu`` and ``default``.

A variant id is the PyTorch index's own name for a build: the directory under the index base
(``/whl/cu128/``) and the local version label of its wheels (``torch-2.9.1+cu128``). ``default`` stands for
the default index's unlabelled wheel (macOS). Every other module asks this one what kind a variant is, how
variants sort and which CUDA or ROCm version an id names.
"""

import re
from functools import lru_cache

from ..versions import numeric_key

# The one variant-id pattern: CUDA "cu" + major and one minor digit (cu117 … cu132), ROCm "rocm" + a dotted
# version (rocm6.4, rocm7.14), and the fixed names.
CUDA_ID = r"cu[0-9]{3}"
ROCM_ID = r"rocm[0-9]+(?:\.[0-9]+){1,2}"
VARIANT_ID = rf"(?:cpu|xpu|default|{CUDA_ID}|{ROCM_ID})"
# Variant kinds and the GPU vendor each GPU kind needs.
GPU_KINDS = {"cuda": "nvidia", "rocm": "amd", "xpu": "intel"}
_KIND_ORDER = {"cpu": 0, "cuda": 1, "rocm": 2, "xpu": 3}


# The caches below: a resolve asks these of every (release, variant) pair it walks; cached, the worst resolve (two
# mixed GPUs) takes 2.7 ms instead of 5.4 (bench/bench_resolve.py).
@lru_cache(maxsize=1024)
def variant_kind(variant: str) -> str:
    """cuda | rocm | xpu | cpu | default (the default index, macOS) | unknown."""
    if variant in ("cpu", "xpu", "default"):
        return variant
    if re.fullmatch(CUDA_ID, variant):
        return "cuda"
    if re.fullmatch(ROCM_ID, variant):
        return "rocm"
    return "unknown"


def is_variant(text: str) -> bool:
    """Whether ``text`` is a variant id (of any kind)."""
    return variant_kind(text) != "unknown"


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


def cuda_variant(cuda: str) -> str | None:
    """The variant id of a CUDA version: "12.8" -> "cu128", "13.0.2" -> "cu130"; None when unreadable."""
    match = re.match(r"^([0-9]+)\.([0-9])(?:\D|$)", cuda)
    return f"cu{match[1]}{match[2]}" if match else None


def variant_of_label(label: str | None, platform: str) -> str | None:
    """The variant of a wheel's local label (cu134, rocm7.14, xpu, cpu); an unlabelled macOS wheel is the
    default index's build (``default``); anything else is no variant (None)."""
    if not label:
        return "default" if platform.startswith("macos") else None
    return label if variant_kind(label) in ("cuda", "rocm", "xpu", "cpu") else None


@lru_cache(maxsize=1024)
def variant_order(variant: str) -> tuple[int, tuple[int, ...]]:
    """Sort key for variants: cpu, CUDA, ROCm, xpu, then the rest; numerically within a kind."""
    return _KIND_ORDER.get(variant_kind(variant), 4), numeric_key(variant)
