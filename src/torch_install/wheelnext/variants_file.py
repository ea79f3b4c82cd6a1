"""WheelNext ``{name}-{version}-variants.json`` files: reading them and choosing a label.

``read_variants_text`` / ``parse_variants`` read a file in any dialect in use (v0.0.2/0.0.3 as PyTorch
published, PEP 825 v0.1.1, Providers draft v0.2.0); ``rank_variants`` orders its labels the way PEP 825 says an
installer must, against a machine's ``SupportedProperties``, explaining every step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cmp_to_key

from ..errors import InputError
from ..machine import Machine
from ..resolver.variants import is_index_variant
from .properties import FeatureConfig, SupportedProperties, provider_data

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

NAME = re.compile(r"^[a-z0-9_]+$")
VALUE = re.compile(r"^[a-z0-9_.]+$")
LABEL = re.compile(r"^[0-9a-z_.]+$")
NULL_LABEL = "null"


# --------------------------------------------------------------------------------------------------------------
# *-variants.json: dialects and reading
# --------------------------------------------------------------------------------------------------------------

DIALECTS = {
    "0.0.2": "v0.0.2 (PyTorch 2.8/2.9 index metadata: enable-if, install-time, top-level static-properties)",
    "0.0.3": "v0.0.3 (PyTorch 2.10 index metadata: enable-if, install-time, top-level static-properties)",
    "0.1.1": "v0.1.1 (PEP 825 package format: no provider information)",
    "0.2.0": "v0.2.0 (Providers draft, variantlib 0.2.x, uv: provider-level static-properties)",
}
INSTALLERS = {
    "0.0.2": "plain pip ignores variant wheels; mainline uv (0.13.9) and variantlib 0.2 refuse metadata with "
             "enable-if; WheelNext uv builds read it",
    "0.0.3": "plain pip ignores variant wheels; mainline uv (0.13.9) and variantlib 0.2 refuse metadata with "
             "enable-if; WheelNext uv builds read it",
    "0.1.1": "plain pip ignores variant wheels; with no providers, uv (0.13.9) can only pick the null variant",
    "0.2.0": "plain pip ignores variant wheels; mainline uv (0.13.9) runs only its built-in nvidia, x86_64, "
             "aarch64 and tpu providers (AMD and Intel variants are skipped); variantlib 0.2 reads it",
}
_PROVIDER_KEYS = {
    "0.0.2": {"requires", "plugin-api", "enable-if", "install-time", "plugin-use", "optional"},
    "0.0.3": {"requires", "plugin-api", "enable-if", "install-time", "plugin-use", "optional"},
    "0.2.0": {"requires", "build-requires", "plugin-api", "static-properties", "feature-order", "optional",
              "builtin"},
}
_TOP_KEYS = {
    "0.0.2": {"$schema", "default-priorities", "providers", "static-properties", "variants"},
    "0.0.3": {"$schema", "default-priorities", "providers", "static-properties", "variants"},
    "0.1.1": {"$schema", "default-priorities", "variants"},
    "0.2.0": {"$schema", "default-priorities", "providers", "variants"},
}

Properties = Mapping[str, Mapping[str, tuple[str, ...]]]  # namespace -> feature -> values


def dialect_of(schema: Any) -> str | None:
    """The metadata dialect a ``$schema`` URL names, or None when unknown."""
    if not isinstance(schema, str):
        return None
    if schema.rstrip("/") == "https://variants-schema.wheelnext.dev":
        return "0.0.2"  # the bare URL of the first published files
    match = re.search(r"/v(0\.0\.2|0\.0\.3|0\.1\.1|0\.2\.0)\.json$", schema)
    return match.group(1) if match else None


@dataclass(frozen=True)
class Provider:
    """A namespace's provider entry, normalised across dialects."""

    namespace: str
    requires: tuple[str, ...] = ()
    enable_if: str | None = None
    optional: bool = False
    install_time: bool = True
    static: Mapping[str, tuple[str, ...]] | None = None  # ahead-of-time: feature -> values, ordered
    feature_order: tuple[str, ...] = ()


@dataclass(frozen=True)
class VariantsFile:
    """A ``*-variants.json`` (or a wheel's ``variant.json``), normalised to one model."""

    origin: str
    schema: str
    dialect: str
    namespace_order: tuple[str, ...]
    providers: Mapping[str, Provider]
    variants: Mapping[str, Properties]  # label -> properties, in file order
    feature_priorities: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    property_priorities: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)


def _strings(value: Any, where: str, pattern: re.Pattern[str] | None = None) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: expected a list of strings")
    bad = [v for v in value if pattern and not pattern.match(v.strip())]
    if bad:
        raise InputError(f"{where}: {bad[0]!r} is not a valid name or value")
    return tuple(v.strip() for v in value)


def _properties(value: Any, where: str) -> dict[str, dict[str, tuple[str, ...]]]:
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected an object of namespace -> feature -> values")
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for ns, features in value.items():
        if not NAME.match(ns):
            raise InputError(f"{where}: namespace {ns!r} is not a valid name")
        if not isinstance(features, dict):
            raise InputError(f"{where}.{ns}: expected an object of feature -> values")
        out[ns] = {}
        for feature, values in features.items():
            if not NAME.match(feature):
                raise InputError(f"{where}.{ns}: feature {feature!r} is not a valid name")
            out[ns][feature] = _strings(values, f"{where}.{ns}.{feature}", VALUE)
            if not out[ns][feature]:
                raise InputError(f"{where}.{ns}.{feature}: needs at least one value")
    return out


def parse_variants(data: Any, origin: str = "variants JSON") -> VariantsFile:
    """Validate and normalise variants metadata of any known dialect; problems are InputErrors naming the key."""
    if not isinstance(data, dict):
        raise InputError(f"{origin}: expected a JSON object")
    dialect = dialect_of(data.get("$schema"))
    if dialect is None:
        raise InputError(f"{origin}: $schema {data.get('$schema')!r} is not a known variants metadata schema "
                         f"(known: v{', v'.join(DIALECTS)})")
    unknown = set(data) - _TOP_KEYS[dialect]
    if unknown:
        raise InputError(f"{origin}: unexpected key {sorted(unknown)[0]!r} for schema v{dialect}")
    priorities = data.get("default-priorities")
    if not isinstance(priorities, dict) or "namespace" not in priorities:
        raise InputError(f"{origin}: default-priorities.namespace is required")
    order = _strings(priorities["namespace"], f"{origin}: default-priorities.namespace", NAME)
    if len(set(order)) != len(order):
        raise InputError(f"{origin}: default-priorities.namespace lists a namespace twice")
    feature_priorities = {ns: _strings(v, f"{origin}: default-priorities.feature.{ns}", NAME)
                          for ns, v in (priorities.get("feature") or {}).items()}
    property_priorities = {ns: {f: _strings(v, f"{origin}: default-priorities.property.{ns}.{f}", VALUE)
                                for f, v in feats.items()}
                           for ns, feats in _properties_raw(priorities.get("property"), origin).items()}
    top_static = _properties(data.get("static-properties") or {}, f"{origin}: static-properties")
    providers: dict[str, Provider] = {}
    raw_providers = data.get("providers") or {}
    if not isinstance(raw_providers, dict):
        raise InputError(f"{origin}: providers must be an object")
    for ns, raw in raw_providers.items():
        where = f"{origin}: providers.{ns}"
        if not isinstance(raw, dict):
            raise InputError(f"{where}: expected an object")
        extra = set(raw) - _PROVIDER_KEYS[dialect]
        if extra:
            raise InputError(f"{where}: unexpected key {sorted(extra)[0]!r} for schema v{dialect}")
        static = None
        if dialect == "0.2.0" and "static-properties" in raw:
            static = _properties({ns: raw["static-properties"]}, f"{where}.static-properties")[ns]
        elif ns in top_static:
            static = top_static[ns]
        enable_if = raw.get("enable-if")
        if enable_if is not None and not isinstance(enable_if, str):
            raise InputError(f"{where}.enable-if: expected a marker string")
        install_time = raw.get("install-time", raw.get("plugin-use", "all") != "none")
        providers[ns] = Provider(
            namespace=ns, requires=_strings(raw.get("requires", []), f"{where}.requires"),
            enable_if=enable_if, optional=raw.get("optional") is True, install_time=install_time is not False,
            static=static, feature_order=_strings(raw.get("feature-order", []), f"{where}.feature-order", NAME))
    for ns, static in top_static.items():
        providers.setdefault(ns, Provider(namespace=ns, install_time=False, static=static))
    raw_variants = data.get("variants")
    if not isinstance(raw_variants, dict):
        raise InputError(f"{origin}: variants must be an object of label -> properties")
    variants: dict[str, Properties] = {}
    for label, props in raw_variants.items():
        if not LABEL.match(label):
            raise InputError(f"{origin}: variant label {label!r} does not match ^[0-9a-z_.]+$")
        variants[label] = _properties(props, f"{origin}: variants.{label}")
        if label == NULL_LABEL and variants[label]:
            raise InputError(f"{origin}: the null variant must have no properties")
        missing = [ns for ns in variants[label] if ns not in order]
        if missing:
            raise InputError(f"{origin}: variants.{label} uses namespace {missing[0]!r}, which "
                             "default-priorities.namespace does not list")
    return VariantsFile(origin, data["$schema"], dialect, order, providers, variants, feature_priorities,
                        property_priorities)


def _properties_raw(value: Any, origin: str) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise InputError(f"{origin}: default-priorities.property must be namespace -> feature -> values")
    return value


def read_variants_text(text: str, origin: str) -> VariantsFile:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{origin}: not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # a 4,300-digit integer, or nesting past the recursion limit
        raise InputError(f"{origin}: not a variants file ({str(exc).split(':')[0] or 'nested too deeply'})") from None
    return parse_variants(data, origin)


# --------------------------------------------------------------------------------------------------------------
# Choosing a label (PEP 825 ordering)
# --------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PropertyMatch:
    namespace: str
    feature: str
    value: str  # the best supported value the variant lists
    key: tuple[int, int, int]  # (namespace index, feature index, value index)

    def __str__(self) -> str:
        return f"{self.namespace} :: {self.feature} :: {self.value}"


@dataclass(frozen=True)
class LabelVerdict:
    """One label: compatible or not, and why; ``matches`` sorted by key for compatible labels."""

    label: str
    compatible: bool
    matches: tuple[PropertyMatch, ...] = ()
    reasons: tuple[str, ...] = ()

    @property
    def is_null(self) -> bool:
        return not self.matches and self.compatible


@dataclass(frozen=True)
class Ranking:
    """Compatible labels best first, incompatible ones with reasons, and how each namespace was served."""

    ranked: tuple[LabelVerdict, ...]
    incompatible: tuple[LabelVerdict, ...]
    providers: Mapping[str, str]  # namespace -> how its supported values were obtained (or why none)

    @property
    def choice(self) -> LabelVerdict | None:
        return self.ranked[0] if self.ranked else None


def marker_environment(machine: Machine) -> dict[str, str]:
    """Environment-marker values for the target (what ``enable-if`` markers are evaluated against)."""
    from packaging.markers import default_environment

    env = {k: str(v) for k, v in default_environment().items()}
    system = {"linux": "Linux", "windows": "Windows", "macos": "Darwin"}.get(machine.os or "")
    if system:
        env["platform_system"] = system
        env["sys_platform"] = {"Linux": "linux", "Windows": "win32", "Darwin": "darwin"}[system]
        env["os_name"] = "nt" if system == "Windows" else "posix"
    if machine.arch:
        env["platform_machine"] = "AMD64" if machine.os == "windows" and machine.arch == "x86_64" else machine.arch
    if machine.python:
        env["python_version"] = machine.python.rstrip("t")
        env["python_full_version"] = machine.python.rstrip("t") + ".0"
    return env


def _enabled(provider: Provider, env: Mapping[str, str], enabled_optional: Iterable[str]) -> str | None:
    """None when the provider is on for the target, else why not."""
    if provider.optional and provider.namespace not in set(enabled_optional):
        return "optional provider, not enabled"
    if provider.enable_if:
        from packaging.markers import InvalidMarker, Marker

        try:
            on = Marker(provider.enable_if).evaluate(dict(env))
        except InvalidMarker as exc:
            raise InputError(f"providers.{provider.namespace}.enable-if: invalid marker ({exc})") from None
        if not on:
            return f"enable-if {provider.enable_if!r} is false for the target"
    return None


def _namespace_support(vfile: VariantsFile, target: SupportedProperties, env: Mapping[str, str],
                       enabled_optional: Iterable[str]) -> tuple[dict[str, tuple[FeatureConfig, ...]], dict[str, str]]:
    """Per namespace the supported features (ordered) and a line saying where they came from."""
    support: dict[str, tuple[FeatureConfig, ...]] = {}
    how: dict[str, str] = {}
    for ns in vfile.namespace_order:
        provider = vfile.providers.get(ns, Provider(namespace=ns))
        off = _enabled(provider, env, enabled_optional)
        if off:
            support[ns], how[ns] = (), f"off: {off}"
            continue
        if provider.static is not None:
            order = provider.feature_order or vfile.feature_priorities.get(ns, ()) or tuple(provider.static)
            names = [f for f in order if f in provider.static] + [f for f in provider.static if f not in order]
            support[ns] = tuple(FeatureConfig(f, provider.static[f]) for f in names)
            how[ns] = "static properties in the metadata (ahead of time, always compatible)"
            continue
        if ns in target.namespaces:
            support[ns] = target.namespaces[ns]
            how[ns] = "the target's properties, as the provider reports them"
        elif ns in provider_data()["namespace_order"]:
            support[ns], how[ns] = (), "the target has nothing this provider reports"
        else:
            need = ", ".join(provider.requires) or "a plugin"
            support[ns], how[ns] = (), f"no built-in provider (needs {need}); torch-install runs no plugin code"
        support[ns] = _apply_priorities(vfile, ns, support[ns])
    return support, how


def _apply_priorities(vfile: VariantsFile, ns: str, feats: tuple[FeatureConfig, ...]) -> tuple[FeatureConfig, ...]:
    """default-priorities.feature/.property (older dialects) move listed features/values to the front."""
    first = vfile.feature_priorities.get(ns, ())
    feats = tuple(sorted(feats, key=lambda f: first.index(f.name) if f.name in first else len(first)))
    props = vfile.property_priorities.get(ns, {})

    def reorder(config: FeatureConfig) -> FeatureConfig:
        pref = props.get(config.name, ())
        return FeatureConfig(config.name, tuple(sorted(
            config.values, key=lambda v: pref.index(v) if v in pref else len(pref))))

    return tuple(reorder(f) for f in feats)


def _summary(values: tuple[str, ...]) -> str:
    return ", ".join(values) if len(values) <= 4 else f"{', '.join(values[:3])}, … {values[-1]}"


def _judge(label: str, props: Properties, order: tuple[str, ...],
           support: Mapping[str, tuple[FeatureConfig, ...]], how: Mapping[str, str]) -> LabelVerdict:
    matches: list[PropertyMatch] = []
    reasons: list[str] = []
    for ns, features in props.items():
        feats = support.get(ns, ())
        if not feats:
            reasons.append(f"{ns}: nothing supported ({how.get(ns, 'no provider')}); needs "
                           + ", ".join(f"{f} in {_summary(v)}" for f, v in features.items()))
            continue
        for feature, values in features.items():
            config = next((i, f) for i, f in enumerate(feats) if f.name == feature) if any(
                f.name == feature for f in feats) else None
            if config is None:
                reasons.append(f"{ns} :: {feature}: the target supports no value; needs one of {_summary(values)}")
                continue
            index, supported = config
            best = min((supported.values.index(v), v) for v in values if v in supported.values) if any(
                v in supported.values for v in values) else None
            if best is None:
                reasons.append(f"{ns} :: {feature}: needs one of {_summary(values)}; the target supports "
                               f"{_summary(supported.values)}")
                continue
            matches.append(PropertyMatch(ns, feature, best[1], (order.index(ns), index, best[0])))
    if reasons:
        return LabelVerdict(label, False, reasons=tuple(reasons))
    return LabelVerdict(label, True, tuple(sorted(matches, key=lambda m: m.key)))


def _compare(a: LabelVerdict, b: LabelVerdict) -> int:
    """PEP 825: null-like last; compare sorted keys; a prefix loses to the longer list; then the label."""
    if a.is_null != b.is_null:
        return 1 if a.is_null else -1
    for x, y in zip(a.matches, b.matches, strict=False):
        if x.key != y.key:
            return -1 if x.key < y.key else 1
    if len(a.matches) != len(b.matches):
        return -1 if len(a.matches) > len(b.matches) else 1
    return -1 if a.label < b.label else (1 if a.label > b.label else 0)


def rank_variants(vfile: VariantsFile, target: SupportedProperties, machine: Machine,
                  enabled_optional: Iterable[str] = ()) -> Ranking:
    """Order ``vfile``'s labels for the target the way a variant-aware installer must (PEP 825)."""
    env = marker_environment(machine)
    support, how = _namespace_support(vfile, target, env, tuple(enabled_optional))
    verdicts = [_judge(label, props, vfile.namespace_order, support, how) for label, props in vfile.variants.items()]
    ranked = sorted((v for v in verdicts if v.compatible), key=cmp_to_key(_compare))
    return Ranking(tuple(ranked), tuple(v for v in verdicts if not v.compatible), how)


def why_first(a: LabelVerdict, b: LabelVerdict, vfile: VariantsFile) -> str:
    """One line: why ``a`` ranks before ``b``."""
    if b.is_null and not a.is_null:
        return f"{b.label} has no properties, and such a variant ranks after every variant with properties"
    for x, y in zip(a.matches, b.matches, strict=False):
        if x.key != y.key:
            level = ("namespace order (default-priorities.namespace)" if x.key[0] != y.key[0]
                     else "the provider's feature order" if x.key[1] != y.key[1] else "the provider's value order")
            return f"{x} comes before {y} in {level}"
    if len(a.matches) != len(b.matches):
        return f"{a.label} matches more properties ({len(a.matches)} vs {len(b.matches)}) with the same leading keys"
    return f"tie on every property; {a.label} sorts first by label"


def index_variant(label: str, props: Properties | None = None) -> str | None:
    """The classic PyTorch index variant for a variant label: cuda12.8 -> cu128, null -> cpu, xpu, rocm7.1."""
    if label == NULL_LABEL or (props is not None and not props):
        return "cpu"
    if match := re.fullmatch(r"cuda([0-9]+)\.([0-9]+)", label):
        return f"cu{match.group(1)}{match.group(2)}"
    if is_index_variant(label):
        return label
    return None
