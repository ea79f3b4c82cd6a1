"""pixi manifests as pixi reads them, for the tests: TOML 1.0 held to pixi's own JSON Schema, and the conda
MatchSpecs one platform of the manifest solves (the workspace's tables overlaid by the target tables that apply
to the platform, as pixi's target selectors do), with the virtual packages the platform declares (pixi's defaults
where it declares none)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA = Path(__file__).parent / "fixtures" / "pixi" / "schema.json"
DEFAULTS = {"glibc": "2.28", "macos": "13.0"}  # pixi's declared defaults for a platform that says nothing
FAMILIES = {"linux": ("linux",), "unix": ("linux", "osx"), "win": ("win",), "osx": ("osx",), "macos": ("osx",)}


def read_toml(text: str) -> dict[str, Any]:
    """TOML as Python's own reader reads it (3.11 on), else as tomlkit does."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomlkit

        return tomlkit.parse(text).unwrap()
    return tomllib.loads(text)


def manifest(text: str) -> dict[str, Any]:
    """The pixi manifest, read as TOML 1.0 and held to pixi's JSON Schema."""
    import jsonschema  # the test extra

    data = read_toml(text)
    errors = [e.message for e in jsonschema.Draft7Validator(json.loads(SCHEMA.read_text())).iter_errors(data)]
    assert errors == []
    return data


def _applies(selector: str, name: str, subdir: str) -> bool:
    return selector in (name, subdir) or subdir.startswith(FAMILIES.get(selector, ("-",)))


def tables(data: dict[str, Any], platform: dict[str, Any] | str, kind: str = "dependencies") -> dict[str, Any]:
    """The ``kind`` table one platform takes: the workspace's, overlaid by each target table that applies."""
    name = platform if isinstance(platform, str) else platform.get("name", platform["platform"])
    subdir = platform if isinstance(platform, str) else platform["platform"]
    out = dict(data.get(kind, {}))
    for selector, body in data.get("target", {}).items():
        if _applies(selector, name, subdir):
            out.update(body.get(kind, {}))
    return out


def pixi_specs(data: dict[str, Any], platform: dict[str, Any] | str) -> tuple[str, list[str]]:
    """(subdir, MatchSpecs) pixi solves for one platform entry."""
    subdir = platform if isinstance(platform, str) else platform["platform"]
    specs = []
    for package, value in tables(data, platform).items():
        if isinstance(value, str):
            specs.append(f"{package} {value}")
        else:
            specs.append(f"{package} {value.get('version', '*')} {value.get('build', '')}".strip())
    return subdir, specs


def declared(platform: dict[str, Any] | str) -> dict[str, str]:
    """The virtual packages a platform entry declares (cuda, glibc, macos), pixi's defaults filled in."""
    own = {} if isinstance(platform, str) else platform
    return {"cuda": own.get("cuda"), "glibc": own.get("glibc", DEFAULTS["glibc"]),
            "macos": own.get("macos", DEFAULTS["macos"])}
