"""WheelNext wheel variants (PEP 817/825): a machine's variant properties, provider overrides, and label choice.

Two modules, one concept each:

* ``properties``: ``supported_properties(machine)``, what each variant provider would report for a machine
  (reproduced from ``data/variant-providers.json``, never by running a provider plugin), and
  ``override_env(machine, variant)``, the provider override variables for a GPU-less ``docker build``.
* ``variants_file``: ``read_variants_text`` / ``parse_variants`` read a ``*-variants.json`` in any dialect in
  use, and ``rank_variants`` orders its labels the way PEP 825 says an installer must, explaining every step.

Used by ``torch-install variants``, ``detect --format variant-properties`` and ``plan --format variant-env``.
"""

from .properties import (
    FeatureConfig,
    OverrideEnv,
    SupportedProperties,
    cpu_flags_from_cpuinfo,
    driver_cuda,
    major_minor,
    override_env,
    supported_properties,
    x86_64_level,
)
from .variants_file import (
    DIALECTS,
    INSTALLERS,
    LabelVerdict,
    Ranking,
    VariantsFile,
    dialect_of,
    index_variant,
    parse_variants,
    rank_variants,
    read_variants_text,
    why_first,
)

__all__ = [
    "DIALECTS", "INSTALLERS", "FeatureConfig", "OverrideEnv", "Ranking", "SupportedProperties", "VariantsFile",
    "LabelVerdict", "cpu_flags_from_cpuinfo", "dialect_of", "driver_cuda", "index_variant", "major_minor",
    "override_env", "parse_variants", "rank_variants", "read_variants_text", "supported_properties", "why_first",
    "x86_64_level",
]
