"""`grounded config`: what the platform will actually use."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer
from pydantic import BaseModel
from rich.table import Table

from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.config import Settings

app = typer.Typer(help="Inspect settings.", no_args_is_help=True)


@app.command("show")
def show(as_json: bool = JsonOption) -> None:
    """Print the effective settings (environment, config file, defaults), secrets masked."""
    settings = load_settings()
    values = settings.masked()
    if as_json:
        print_json(values)
        return
    table = Table("setting", "value", "meaning")
    for name, value, meaning in _rows(Settings, values, "GROUNDED_"):
        table.add_row(name, "" if value is None else str(value), meaning)
    console.print(table)


def _rows(
    model: type[BaseModel], values: dict[str, Any], prefix: str
) -> Iterator[tuple[str, Any, str]]:
    """Flatten nested settings groups into their environment names (``__`` nesting)."""
    for name, field in model.model_fields.items():
        value = values.get(name)
        nested = field.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel) and isinstance(value, dict):
            yield from _rows(nested, value, f"{prefix}{name.upper()}__")
        else:
            yield f"{prefix}{name.upper()}", value, field.description or ""
