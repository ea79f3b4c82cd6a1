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

A lookup is one dictionary access: every name's key ships in ``data/gpu-name-keys.json`` (made from the tables by
``scripts/build_name_keys.py``; ``tests/test_names.py`` checks it is what they give), and the rules above that
read a name another way are tried only when its key is not there. A vendor added at run time (the registry's
``generation`` moved) has its keys worked out from the tables.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from .. import vendors
from ..errors import InputError
from ..machine import Gpu
from ..package_data import load_json

NAMES_FILE = "gpu-names.json"  # in detectors/data/
JETSON_FILE = "jetson.json"
KEYS_FILE = "gpu-name-keys.json"  # every name's key, made from the tables above and the PCI tables
_BRAND_WORDS = frozenset({"nvidia", "geforce", "amd", "ati", "radeon", "instinct", "intel", "tesla", "apple",
                          "graphics", "gpu", "pcie", "sxm", "sxm2", "sxm4", "sxm5", "corporation"})
_GLUED_BRANDS = ("nvidia", "geforce", "radeon", "instinct", "intel", "tesla", "amd")  # "TeslaP40", "GeForceRTX3090"
_FORM_FACTOR_WORDS = frozenset({"laptop", "mobile", "notebook", "maxq"})  # same architecture as the desktop part
_NOISE = r"(?i)\((?:r|tm|c)\)|[®™©]"
_ASCII_SEPARATORS = {c: " " for c in range(128) if not chr(c).isdigit() and not "a" <= chr(c) <= "z"}
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
    text = name.lower()
    if "(" in text or not text.isascii():  # trademark signs
        text = re.sub(_NOISE, " ", text)
    text = text.replace("max-q", "maxq").replace("advanced micro devices", " ")
    # the words between what is not [0-9a-z] (an ASCII name without a regular expression)
    words = text.translate(_ASCII_SEPARATORS).split() if text.isascii() else re.split(r"[^0-9a-z]+", text)
    return "".join(w for w in map(_unglue, words) if w and w not in _BRAND_WORDS and w not in drop
                   and not _is_memory(w))


def _is_memory(word: str) -> bool:
    """A memory size or kind: "24gb", "hbm2e" (a word of [0-9a-z])."""
    if word.endswith("gb"):
        return word[:-2].isdigit()
    if word.startswith("hbm"):
        rest = word[3:].removesuffix("e")
        return not rest or rest.isdigit()
    return False


# The GPU a key names, as one text: "vendor|name|compute capability|gfx|integrated (1, 0 or empty)|family" (a family
# may itself be "a|b"). A file of texts reads in a third of the time of one of lists and objects.
_ROW_FIELDS = ("compute_capability", "gfx", "integrated", "family")


def _keys() -> dict[str, str]:
    """key -> the GPU it names: the shipped keys file while the vendor registry is as shipped, else worked out."""
    if vendors.generation == 0:
        return _shipped_keys()
    return key_rows()


@cache
def _shipped_keys() -> dict[str, str]:
    keys: dict[str, str] = load_json(f"detectors/data/{KEYS_FILE}")["keys"]
    return keys


def key_rows() -> dict[str, str]:
    """Every name's key and the GPU it names, worked out from the tables (what ``KEYS_FILE`` holds)."""
    rows = {key: "|".join([vendor, name, *(_row_value(fields.get(f)) for f in _ROW_FIELDS)])
            for key, (vendor, name, fields) in _key_rows(vendors.generation).items()}
    if any("|" in name for _, name, _ in _key_rows(vendors.generation).values()):
        raise ValueError("a GPU name holds '|', which the keys file's rows use between fields")
    return rows


def _row_value(value: object) -> str:
    return "" if value is None else ("1" if value else "0") if isinstance(value, bool) else str(value)


KeyRow = list  # [vendor, name, {architecture field: value}]


@cache
def _key_rows(generation: int) -> dict[str, KeyRow]:
    """``key_rows`` for one state of the vendor registry (``vendors.generation``: each vendor's PCI table). The
    names file's names and aliases first, then the Jetson modules; a PCI table's product name after them, unless
    parts of two architectures share it."""
    rows: dict[str, KeyRow] = {}
    entries = list(load_json(f"detectors/data/{NAMES_FILE}")["gpus"])
    jetson = load_json(f"detectors/data/{JETSON_FILE}")["modules"]
    entries += [{"vendor": "nvidia", "integrated": True, **module} for module in jetson]
    for entry in entries:
        row = [entry["vendor"], entry["name"], {f: entry[f] for f in _ARCH_FIELDS if f in entry}]
        for spelling in (entry["name"], *entry.get("aliases", ())):
            key = name_key(spelling)
            if key:
                rows.setdefault(key, row)
    from_pci: dict[str, KeyRow | None] = {}  # None: a product name parts of two architectures share
    for entry in _pci_entries():
        row = [str(entry["vendor"]), str(entry["name"]), {f: entry[f] for f in _ARCH_FIELDS if f in entry}]
        key = name_key(row[1])
        if key and key not in rows:
            seen = from_pci.get(key, row)
            from_pci[key] = seen if seen is not None and seen[0::2] == row[0::2] else None
    rows.update((key, found) for key, found in from_pci.items() if found is not None)
    return rows


def _gpu(row: str) -> Gpu:
    vendor, name, compute_capability, gfx, integrated, family = row.split("|", 5)
    return Gpu(vendor=vendor, name=name, compute_capability=compute_capability or None, gfx=gfx or None,
               family=family or None, integrated=integrated == "1" if integrated else None)


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
    keys = _keys()
    key = name_key(name)
    row = keys.get(key)
    if row is None and key != (bare := name_key(name, _FORM_FACTOR_WORDS)):
        row = keys.get(bare)
    return _gpu(row) if row is not None else None


def _readings(name: str) -> Iterator[str]:
    """The texts a name may stand for, most specific first: itself, its bracketed product names (last first),
    and itself without a trailing parenthesis; then the GPU of an APU's CPU model or of a cloud instance type. Each
    is worked out only when the ones before it named no GPU."""
    yield name
    brackets = [b.strip() for b in re.findall(r"\[([^\[\]]+)\]", name)] if "[" in name else []
    yield from (b for b in reversed(brackets) if b and not re.fullmatch(_PCI_BRACKET, b.lower()))
    bare = re.sub(r"\s*\([^()]*\)\s*$", "", name).strip()
    if bare and bare != name:
        yield bare
    apu = re.search(r"\b(?:w/|with)\s+(Radeon\b.*)$", name, re.IGNORECASE)  # "Ryzen 9 8945HS w/ Radeon 780M"
    if apu and name_key(apu[1]) != name_key("Radeon Graphics"):
        yield apu[1]
    apu_cpus, instances = _patterns()
    yield from (gpu for pattern, gpu in (*apu_cpus, *instances) if pattern.search(name.strip()))


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

    keys = _keys()
    close = difflib.get_close_matches(name_key(name), list(keys), n=8, cutoff=0.6)
    names = list(dict.fromkeys(keys[k].split("|")[1] for k in close))[:5]
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
