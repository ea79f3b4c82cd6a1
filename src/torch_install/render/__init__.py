"""Front-end rendering: a Plan in each ``--format``. ``FORMATS`` lists the format names (the CLI's help reads them
without loading a renderer); ``render(plan, name)`` writes one."""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..resolver.plan import Plan

# format name -> (module of this package, function)
_RENDERERS = {
    "text": ("plan", "render_text"),
    "url": ("plan", "render_url"),
    "pip": ("plan", "render_pip"),
    "uv": ("plan", "render_uv"),
    "requirements": ("project", "render_requirements"),
    "constraints": ("project", "render_constraints"),
    "pyproject": ("project", "render_pyproject"),
    "json": ("plan", "render_json"),
    "dockerfile": ("container", "render_dockerfile"),
    "variant-env": ("container", "render_variant_env"),
    "conda": ("conda", "render_conda"),
    "pixi": ("conda", "render_pixi"),
}
FORMATS = tuple(_RENDERERS)


def render(plan: Plan, name: str) -> str:
    """The plan in format ``name`` (one of FORMATS; a KeyError names any other)."""
    module, function = _RENDERERS[name]
    text: str = getattr(import_module(f"{__name__}.{module}"), function)(plan)
    return text
