"""The shipped tables' JSON Schemas, with the facts the code holds filled in.

The schema files name no vendor, variant kind or WheelNext namespace, so that a new vendor is its registry row and
its data, nor the torch family, which the code writes once. Their ``$defs`` entries ``variant`` (every variant
id), ``<kind>_variant`` (one kind's ids), ``vendor`` (a vendor's name), ``vendor_namespaces`` (the WheelNext
namespaces the providers' table must describe), ``torch_family`` and ``torch_family_others`` (the family, and it
without torch) hold a placeholder there, set here from ``vendors.VENDORS`` and ``resolver.request.PACKAGES`` when
a test reads a schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from torch_install import vendors
from torch_install.resolver.request import PACKAGES
from torch_install.resolver.variants import BUILT_IN_KINDS


def _one_of(patterns: list[str]) -> dict[str, str]:
    return {"type": "string", "pattern": f"^(?:{'|'.join(patterns)})$"}


def registry_defs() -> dict[str, Any]:
    """The ``$defs`` entries the registry and the family decide, as they stand now."""
    rows = [row for row in vendors.VENDORS if row.kind and row.variant_id]
    defs: dict[str, Any] = {
        "variant": _one_of([*BUILT_IN_KINDS, *(row.variant_id for row in rows if row.variant_id)]),
        "vendor": {"enum": list(vendors.names())},
        "vendor_namespaces": {"required": [row.wheelnext for row in vendors.VENDORS
                                           if row.wheelnext and row.wheelnext_properties]},
        "torch_family": {"enum": list(PACKAGES)},
        "torch_family_others": {"enum": list(PACKAGES[1:])},
    }
    defs.update({f"{row.kind}_variant": _one_of([row.variant_id]) for row in rows if row.variant_id})
    return defs


def schema_path(table: Path) -> Path:
    return table.with_name(table.name.removesuffix(".json") + ".schema.json")


def schema_of(table: Path) -> dict[str, Any]:
    """The schema of a table (``name.json`` -> ``name.schema.json`` beside it), the registry's entries set."""
    schema: dict[str, Any] = json.loads(schema_path(table).read_text(encoding="utf-8"))
    defs = schema.get("$defs", {})
    defs.update({name: value for name, value in registry_defs().items() if name in defs})
    return schema
