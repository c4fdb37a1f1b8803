"""`grounded admin create`: the only way an admin comes to exist (seed 002 ADR-009).

The password is read from a hidden prompt (asked twice), or from standard
input with ``--password-stdin`` for scripts; never from an argument, where it
would land in shell history and the process list.
"""

from __future__ import annotations

import sys

import typer

from grounded.auth import local
from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.db import urls
from grounded.errors import InvalidInput

app = typer.Typer(help="Create tenant admins (runs locally as the database owner).")


def read_password(from_stdin: bool) -> str:
    if from_stdin:
        value = sys.stdin.readline().rstrip("\r\n")
        if not value:
            raise InvalidInput("no password on standard input")
        return value
    value = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    return str(value)


@app.command("create")
def create(
    tenant: str = typer.Option(..., "--tenant", "-t", help="Tenant slug."),
    email: str = typer.Option(..., "--email", help="The admin's e-mail (login name)."),
    password_stdin: bool = typer.Option(
        False, "--password-stdin", help="Read the password from the first line of stdin."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Create an admin of TENANT with a password that passes the policy."""
    settings = load_settings()
    password = read_password(password_stdin)
    with local.connect(urls.resolve(settings).owner) as conn:
        user_id = local.create_admin(conn, settings.auth, tenant, email, password)
    if as_json:
        print_json({"id": str(user_id), "tenant": tenant, "email": email.strip().lower()})
    else:
        console.print(f"created admin {email.strip().lower()} in {tenant} ({user_id})")
