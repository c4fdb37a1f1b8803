"""`grounded token`: service identities' API tokens (local operator, database owner).

Batch jobs, the MCP server and scripts present one of these; each is scoped
to one tenant and a set of permissions (seed 001 ADR-010: internal jobs get a
service identity, never an unfiltered mode). The secret is printed once.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from uuid import UUID

import typer

from grounded.auth import local
from grounded.auth.permissions import PERMISSIONS
from grounded.cli.common import JsonOption, console, err_console, load_settings, print_json
from grounded.db import urls

app = typer.Typer(help="Create and revoke service API tokens.")


@app.command("create")
def create(
    tenant: str = typer.Option(..., "--tenant", "-t", help="Tenant slug."),
    name: str = typer.Option(..., "--name", help="What the token is for (1-100 characters)."),
    permission: list[str] = typer.Option(
        ..., "--permission", "-p", help=f"Repeatable: {', '.join(PERMISSIONS)}."
    ),
    group: list[str] = typer.Option(
        [], "--group", "-g", help="Repeatable: ACL groups of the service identity."
    ),
    expires_days: int | None = typer.Option(
        None, "--expires-days", min=1, help="Expire after this many days (default: never)."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Create a service token; the secret is shown this once."""
    settings = load_settings()
    expires = datetime.now(UTC) + timedelta(days=expires_days) if expires_days else None
    with local.connect(urls.resolve(settings).owner) as conn:
        secret, info = local.create_service_token(conn, tenant, name, permission, group, expires)
    if as_json:
        print_json({**dataclasses.asdict(info), "token": secret})
        return
    console.print(f"token {info.id} ({', '.join(info.permissions)}) for {tenant}:")
    console.print(secret, highlight=False, markup=False, soft_wrap=True)
    err_console.print("Store it now: it is not shown again. Use: Authorization: Bearer <token>")


@app.command("revoke")
def revoke(
    token_id: UUID = typer.Argument(..., help="The token's id (not the secret)."),
    as_json: bool = JsonOption,
) -> None:
    """Revoke a token at once; requests that present it get 401."""
    settings = load_settings()
    with local.connect(urls.resolve(settings).owner) as conn:
        local.revoke_token(conn, token_id, datetime.now(UTC))
    if as_json:
        print_json({"id": str(token_id), "revoked": True})
    else:
        console.print(f"revoked token {token_id}")
