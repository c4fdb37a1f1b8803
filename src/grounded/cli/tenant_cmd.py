"""`grounded tenant`: create and list tenants (local operator, database owner)."""

from __future__ import annotations

import dataclasses

import typer
from rich.table import Table

from grounded.auth import local
from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.db import urls

app = typer.Typer(help="Create and list tenants (runs locally as the database owner).")


@app.command("create")
def create(
    slug: str = typer.Argument(..., help="Login name: 2-63 of a-z, 0-9 and '-'."),
    name: str | None = typer.Option(None, "--name", help="Display name (default: the slug)."),
    as_json: bool = JsonOption,
) -> None:
    """Create a tenant; then `grounded admin create --tenant SLUG --email E`."""
    settings = load_settings()
    with local.connect(urls.resolve(settings).owner) as conn:
        tenant = local.create_tenant(conn, slug, name)
    if as_json:
        print_json(dataclasses.asdict(tenant))
    else:
        console.print(f"created tenant [bold]{tenant.slug}[/] ({tenant.id})", highlight=False)


@app.command("list")
def list_(as_json: bool = JsonOption) -> None:
    """Every live tenant, by slug."""
    settings = load_settings()
    with local.connect(urls.resolve(settings).owner) as conn:
        tenants = local.list_tenants(conn)
    if as_json:
        print_json([dataclasses.asdict(t) for t in tenants])
        return
    table = Table("slug", "name", "id", "created")
    for t in tenants:
        table.add_row(t.slug, t.name, str(t.id), t.created_at.isoformat(timespec="seconds"))
    console.print(table)
