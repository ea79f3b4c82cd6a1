"""GPU names -> architecture (``data/gpu-names.json``, and ``data/jetson.json`` for Jetson modules).

``gpu_from_name("RTX 4090")`` gives the GPU behind ``--gpu NAME``; ``complete_gpu`` fills in the
architecture of a profile GPU that is given only by name. Names are taken as people and tools write them:

* case, spacing, punctuation, trademark signs, memory sizes and brand words (NVIDIA, GeForce, AMD, Radeon,
  Instinct, Intel, Tesla, Apple, "Graphics"), also glued on ("TeslaP40", "GeForceRTX3090"), do not matter;
* an lspci line names the product in its last brackets: "NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)";
* a trailing parenthesis is dropped when the whole name is unknown: "Orin (nvgpu)", "… (rev c8)";
* "Radeon RX 7900 XT/7900 XTX" names several models: they must agree on the architecture, except Intel
  families, which are kept as alternatives ("meteor-lake|arrow-lake") for the resolver to weigh;
* a laptop, mobile or Max-Q form falls back to the desktop part's architecture;
* every product name of the PCI tables (generated from pci.ids) is known too, bracketed marketing names of
  mining, OEM and data-center parts included ("CMP 100-210", "Quadro M2200 Mobile");
* an AMD APU reported by its CPU model ("AMD Ryzen 9 8945HS w/ Radeon 780M Graphics", "Ryzen 7 7840U with Radeon
  Graphics") is its integrated GPU; a cloud instance type whose GPU is public ("p4d.24xlarge", "g2-standard-8")
  is that GPU (``amd_apu_cpus`` and ``instance_types`` in the names file).
"""

from __future__ import annotations

import re
from functools import cache

from .. import vendors
from ..errors import InputError
from ..machine import Gpu
from ..package_data import load_json

NAMES_FILE = "gpu-names.json"  # in detectors/data/
JETSON_FILE = "jetson.json"
_BRAND_WORDS = frozenset({"nvidia", "geforce", "amd", "ati", "radeon", "instinct", "intel", "tesla", "apple",
                          "graphics", "gpu", "pcie", "sxm", "sxm2", "sxm4", "sxm5", "corporation"})
_GLUED_BRANDS = ("nvidia", "geforce", "radeon", "instinct", "intel", "tesla", "amd")  # "TeslaP40", "GeForceRTX3090"
_FORM_FACTOR_WORDS = frozenset({"laptop", "mobile", "notebook", "maxq"})  # same architecture as the desktop part
_NOISE = r"(?i)\((?:r|tm|c)\)|[®™©]"
_MEMORY = r"^[0-9]+gb$|^hbm[0-9]*e?$"
_PCI_BRACKET = r"^[0-9a-f]{4}(?::[0-9a-f]{4})?$"  # lspci -nn's "[10de:2204]" and class "[0300]"
_ARCH_FIELDS = ("compute_capability", "gfx", "family", "integrated")


def _unglue(word: str) -> str:
    """A word without brand prefixes glued to it: "teslap40" -> "p40", "geforcertx3090" -> "rtx3090"."""
    stripped = True
    while stripped:
        stripped = False
        for brand in _GLUED_BRANDS:
            if word.startswith(brand) and len(word) > len(brand):
                word, stripped = word[len(brand):], True
    return word


def name_key(name: str, drop: frozenset[str] = frozenset()) -> str:
    """The matching key of a GPU name: lower case, brand words, memory sizes and separators removed."""
    text = re.sub(_NOISE, " ", name.lower()).replace("max-q", "maxq").replace("advanced micro devices", " ")
    words = [_unglue(w) for w in re.split(r"[^0-9a-z]+", text)]
    return "".join(w for w in words if w and w not in _BRAND_WORDS and w not in drop and not re.match(_MEMORY, w))


def _index() -> tuple[dict[str, Gpu], dict[str, str]]:
    """key -> Gpu, and key -> the canonical name shown in suggestions."""
    return _index_of(vendors.generation)


@cache
def _index_of(generation: int) -> tuple[dict[str, Gpu], dict[str, str]]:
    """``_index`` for one state of the vendor registry (``vendors.generation``: each vendor's PCI table)."""
    by_key: dict[str, Gpu] = {}
    shown: dict[str, str] = {}
    entries = list(load_json(f"detectors/data/{NAMES_FILE}")["gpus"])
    jetson = load_json(f"detectors/data/{JETSON_FILE}")["modules"]
    entries += [{"vendor": "nvidia", "integrated": True, **module} for module in jetson]
    for entry in entries:
        gpu = Gpu(vendor=entry["vendor"], name=entry["name"],
                  **{f: entry[f] for f in _ARCH_FIELDS if f in entry})
        for spelling in (entry["name"], *entry.get("aliases", ())):
            key = name_key(spelling)
            if key:
                by_key.setdefault(key, gpu)
                shown.setdefault(key, entry["name"])
    from_pci: dict[str, Gpu | None] = {}  # None: a product name parts of two architectures share
    for entry in _pci_entries():
        gpu = Gpu(vendor=str(entry["vendor"]), name=str(entry["name"]),
                  **{f: entry[f] for f in _ARCH_FIELDS if f in entry})  # type: ignore[arg-type]
        key = name_key(gpu.name or "")
        if key and key not in by_key:
            seen = from_pci.get(key, gpu)
            same = seen is not None and seen._replace(name=gpu.name) == gpu
            from_pci[key] = seen if same else None
    for key, found in from_pci.items():
        if found is not None:
            by_key[key] = found
            shown[key] = found.name or key
    return by_key, shown


class PciNames(vendors.Protocol):
    """A vendor's names from its PCI table (its row's ``pci_names``): each text names GPUs (several models joined
    by "/", as pci.ids writes them) of the architecture beside it ({Gpu field: value})."""

    def __call__(self, row: vendors.Vendor) -> list[tuple[str, dict[str, object]]]: ...


PCI_NAMES: vendors.Hook[PciNames] = vendors.Hook("pci_names", PciNames, "torch_install.detectors")


def _pci_entries() -> list[dict[str, object]]:
    """Name entries from the product names of every vendor's PCI table (its ``pci_names`` hook), each model of a
    "/"-joined list its own (after the names file's own: those win)."""
    out: list[dict[str, object]] = []
    for row in vendors.VENDORS:
        if row.pci_table and row.pci_names:
            for text, facts in PCI_NAMES.load(row)(row):
                out += [{"vendor": row.name, "name": name, **facts} for name in _alternatives(text)
                        if re.search(r"[A-Za-z]", name)]
    return out


def table_names(row: vendors.Vendor) -> list[tuple[str, dict[str, object]]]:
    """The GPU names a PCI table of the common shape gives (the registry's default ``pci_names``): each device's
    chip (or its name before the brackets) and the products pci.ids lists in its name's last brackets ("Navi 31
    [Radeon RX 7900 XT/7900 XTX]"), with the device's architecture; a device of unknown architecture gives none."""
    from .pci import pci_table

    out: list[tuple[str, dict[str, object]]] = []
    for device in pci_table(row)["devices"].values():
        if not device.get(row.arch_field):
            continue
        facts = {f: device[f] for f in (row.arch_field, "integrated") if f in device}
        name = device.get("name") or ""
        products = re.findall(r"\[([^\[\]]+)\]", name)[-1:]
        chip = device.get("chip") or re.sub(r"\s*\[[^\[\]]*\]", "", name).strip()
        out += [(text, facts) for text in (chip, *products) if text]
    return out


@cache
def _patterns() -> tuple[list[tuple[re.Pattern[str], str]], list[tuple[re.Pattern[str], str]]]:
    """(AMD APU CPU-model patterns -> the integrated GPU's name, cloud instance-type patterns -> the GPU's name)."""
    data = load_json(f"detectors/data/{NAMES_FILE}")
    return ([(re.compile(row["match"], re.IGNORECASE), row["gpu"]) for row in data.get("amd_apu_cpus", ())],
            [(re.compile(row["match"], re.IGNORECASE), row["gpu"]) for row in data.get("instance_types", ())])


def _lookup_one(name: str) -> Gpu | None:
    by_key, _ = _index()
    found = by_key.get(name_key(name))
    if found is None and name_key(name) != name_key(name, _FORM_FACTOR_WORDS):
        found = by_key.get(name_key(name, _FORM_FACTOR_WORDS))
    return found


def _readings(name: str) -> list[str]:
    """The texts a name may stand for, most specific first: itself, its bracketed product names (last first),
    and itself without a trailing parenthesis."""
    readings = [name]
    brackets = [b.strip() for b in re.findall(r"\[([^\[\]]+)\]", name)]
    readings += [b for b in reversed(brackets) if b and not re.fullmatch(_PCI_BRACKET, b.lower())]
    bare = re.sub(r"\s*\([^()]*\)\s*$", "", name).strip()
    if bare and bare != name:
        readings.append(bare)
    apu = re.search(r"\b(?:w/|with)\s+(Radeon\b.*)$", name, re.IGNORECASE)  # "Ryzen 9 8945HS w/ Radeon 780M"
    if apu and name_key(apu[1]) != name_key("Radeon Graphics"):
        readings.append(apu[1])
    apu_cpus, instances = _patterns()
    readings += [gpu for pattern, gpu in (*apu_cpus, *instances) if pattern.search(name.strip())]
    return readings


def _alternatives(text: str) -> list[str]:
    """The models a "/"-joined name lists, each completed with the first one's leading words:
    "Radeon RX 7900 XT/7900 XTX" -> ["Radeon RX 7900 XT", "Radeon RX 7900 XTX"]."""
    parts = [p.strip() for p in text.split("/") if p.strip()]
    if len(parts) < 2:
        return parts
    lead = re.match(r"^(.*?)(?=\S*[0-9])", parts[0])
    prefix = lead.group(1) if lead else ""
    return [parts[0]] + [p if not p[:1].isdigit() else prefix + p for p in parts[1:]]


def _agreeing(found: list[Gpu], text: str) -> Gpu | None:
    """One GPU for several models a name lists: theirs when they share the architecture, Intel families joined
    as alternatives; None when they disagree."""
    first = found[0]
    if all(g._replace(name=first.name) == first for g in found):
        return first
    if first.vendor == "intel" and all(g.vendor == "intel" and g.integrated == first.integrated for g in found):
        families = list(dict.fromkeys(f for g in found if g.family for f in g.family.split("|")))
        return first._replace(name=text, family="|".join(families))
    return None


def lookup_gpu_name(name: str) -> Gpu | None:
    """The table's GPU for a name as written (see the module docstring), or None."""
    for text in _readings(name):
        alternatives = _alternatives(text) if "/" in text else [text]
        found = [_lookup_one(a) for a in alternatives]
        if found and all(g is not None for g in found):
            agreed = _agreeing([g for g in found if g is not None], text)
            return agreed._replace(name=text) if agreed is not None and len(found) > 1 else agreed
    return None


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
