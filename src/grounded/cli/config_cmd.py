"""`grounded config`: what the platform will actually use."""

from __future__ import annotations

import typer
from rich.table import Table

from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.config import field_docs

app = typer.Typer(help="Inspect settings.", no_args_is_help=True)


@app.command("show")
def show(as_json: bool = JsonOption) -> None:
    """Print the effective settings (environment, config file, defaults), secrets masked."""
    settings = load_settings()
    values = settings.masked()
    if as_json:
        print_json(values)
        return
    docs = field_docs()
    table = Table("setting", "value", "meaning")
    for name, value in values.items():
        table.add_row(f"GROUNDED_{name.upper()}", "" if value is None else str(value), docs[name])
    console.print(table)
