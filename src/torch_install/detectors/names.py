"""GPU marketing names -> architecture (``data/gpu-names.json``).

``gpu_from_name("RTX 4090")`` gives the GPU behind ``--gpu NAME``; ``complete_gpu`` fills in the
architecture of a profile GPU that is given only by name. Names match case-insensitively, ignoring
brand words (NVIDIA, GeForce, AMD, Radeon, Instinct, Intel, Tesla, Apple), "Graphics", trademark
signs, punctuation and spacing: "GeForce RTX 4090", "rtx4090" and "NVIDIA GeForce RTX 4090" are one.
"""

from __future__ import annotations

import re
from functools import cache

from ..errors import InputError
from ..machine import Gpu
from ..package_data import load_json

NAMES_FILE = "gpu-names.json"  # in detectors/data/
_BRAND_WORDS = frozenset({"nvidia", "geforce", "amd", "ati", "radeon", "instinct", "intel", "tesla", "apple",
                          "graphics", "gpu", "pcie", "sxm", "sxm2", "sxm4", "sxm5"})
_FORM_FACTOR_WORDS = frozenset({"laptop", "mobile", "notebook", "maxq"})  # same architecture as the desktop part
_NOISE = r"(?i)\((?:r|tm|c)\)|[®™©]"
_MEMORY = r"^\d+gb$|^hbm\d*e?$"
_ARCH_FIELDS = ("compute_capability", "gfx", "family", "integrated")


def name_key(name: str, drop: frozenset[str] = frozenset()) -> str:
    """The matching key of a GPU name: lower case, brand words, memory sizes and separators removed."""
    text = re.sub(_NOISE, " ", name.lower()).replace("max-q", "maxq")
    words = re.split(r"[^0-9a-z]+", text)
    return "".join(w for w in words if w and w not in _BRAND_WORDS and w not in drop and not re.match(_MEMORY, w))


@cache
def _index() -> tuple[dict[str, Gpu], dict[str, str]]:
    """key -> Gpu, and key -> the canonical name shown in suggestions."""
    by_key: dict[str, Gpu] = {}
    shown: dict[str, str] = {}
    for entry in load_json(f"detectors/data/{NAMES_FILE}")["gpus"]:
        gpu = Gpu(vendor=entry["vendor"], name=entry["name"],
                  **{f: entry[f] for f in _ARCH_FIELDS if f in entry})
        for spelling in (entry["name"], *entry.get("aliases", ())):
            key = name_key(spelling)
            if key:
                by_key.setdefault(key, gpu)
                shown.setdefault(key, entry["name"])
    return by_key, shown


def lookup_gpu_name(name: str) -> Gpu | None:
    """The table's GPU for a name, or None. Laptop/Max-Q forms fall back to the desktop part's architecture."""
    by_key, _ = _index()
    found = by_key.get(name_key(name))
    if found is None and name_key(name) != name_key(name, _FORM_FACTOR_WORDS):
        found = by_key.get(name_key(name, _FORM_FACTOR_WORDS))
    return found


def gpu_from_name(name: str) -> Gpu:
    """The GPU a marketing name or short form denotes; an unknown name is an InputError with close matches."""
    if not isinstance(name, str) or not name_key(name):
        raise InputError(f"GPU name {name!r} names no GPU model (try e.g. \"RTX 4090\", \"MI300X\", \"Arc A770\")")
    found = lookup_gpu_name(name)
    if found is not None:
        return found
    raise InputError(f"unknown GPU name {name!r}{_suggestions(name)}")


def _suggestions(name: str) -> str:
    import difflib  # only on the error path

    by_key, shown = _index()
    close = difflib.get_close_matches(name_key(name), list(by_key), n=8, cutoff=0.6)
    names = list(dict.fromkeys(shown[k] for k in close))[:5]
    if not names:
        return "; see the GPU name table (detectors/data/gpu-names.json)"
    return f"; close matches: {', '.join(names)}"


def complete_gpu(gpu: Gpu, strict: bool = False) -> Gpu:
    """Fill a named GPU's missing architecture fields (compute capability, gfx, family, integrated) from the table.

    Fields the GPU already has are kept. A name the table does not know leaves the GPU as it is (its
    architecture stays unknown) unless ``strict``, where it is an InputError. A name that belongs to
    another vendor than the GPU's is an InputError: the profile contradicts itself.
    """
    if not gpu.name:
        return gpu
    found = gpu_from_name(gpu.name) if strict else lookup_gpu_name(gpu.name)
    if found is None:
        return gpu
    if found.vendor != gpu.vendor:
        raise InputError(f"GPU {gpu.name!r} is a {found.vendor} GPU ({found.name}), but the profile says vendor "
                         f"{gpu.vendor!r}")
    updates = {f: getattr(found, f) for f in _ARCH_FIELDS
               if getattr(gpu, f) is None and getattr(found, f) is not None}
    return gpu._replace(**updates) if updates else gpu
