"""Front-end rendering: a Plan in each ``--format``. ``FORMATS`` maps a format name to its renderer; the CLI's
help lists these names."""

from collections.abc import Callable

from ..resolver.plan import Plan
from .container import render_dockerfile, render_variant_env
from .plan import (
    render_json,
    render_pip,
    render_pyproject,
    render_requirements,
    render_text,
    render_url,
    render_uv,
)

FORMATS: dict[str, Callable[[Plan], str]] = {
    "text": render_text,
    "url": render_url,
    "pip": render_pip,
    "uv": render_uv,
    "requirements": render_requirements,
    "pyproject": render_pyproject,
    "json": render_json,
    "dockerfile": render_dockerfile,
    "variant-env": render_variant_env,
}
