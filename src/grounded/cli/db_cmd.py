"""`grounded db`: migrations and the embedded server."""

from __future__ import annotations

import psycopg
import typer

from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.db import embedded, migrate, urls
from grounded.errors import DatabaseUnavailable

app = typer.Typer(help="Database: migrations and the embedded PostgreSQL.", no_args_is_help=True)


@app.command("upgrade")
def upgrade(as_json: bool = JsonOption) -> None:
    """Apply pending migrations (starts the embedded server if needed)."""
    settings = load_settings()
    found = urls.resolve(settings)
    before, after = migrate.upgrade(settings, found)
    if as_json:
        print_json({"before": before, "after": after, "embedded": found.embedded})
    elif before == after:
        console.print(f"database already at head {after}")
    else:
        console.print(f"database upgraded {before or '(empty)'} -> {after}")


@app.command("current")
def current(as_json: bool = JsonOption) -> None:
    """Show the database's schema revision and this code's head."""
    settings = load_settings()
    found = urls.resolve(settings)
    try:
        with psycopg.connect(found.owner, connect_timeout=10) as conn:
            revision = migrate.current_revision(conn)
    except psycopg.OperationalError as exc:
        raise DatabaseUnavailable(f"cannot connect to the database: {exc}".strip()) from exc
    head = migrate.head_revision()
    if as_json:
        print_json({"current": revision, "head": head, "up_to_date": revision == head})
    else:
        state = "up to date" if revision == head else "run `grounded db upgrade`"
        console.print(f"current: {revision or '(not migrated)'}  head: {head}  ({state})")


@app.command("start")
def start() -> None:
    """Start the embedded PostgreSQL (it keeps running until `grounded db stop`)."""
    settings = load_settings()
    if not settings.embedded:
        console.print("DATABASE_URL is set: nothing to start")
        return
    server = embedded.ensure_running(settings.data_dir)
    console.print(f"embedded PostgreSQL running (pid {server.pid}, socket {server.socket_dir})")


@app.command("stop")
def stop() -> None:
    """Stop the embedded PostgreSQL of this data directory."""
    settings = load_settings()
    stopped = embedded.stop(settings.data_dir)
    console.print("stopped" if stopped else "was not running")


@app.command("status")
def status(as_json: bool = JsonOption) -> None:
    """Is the embedded PostgreSQL running, and where?"""
    settings = load_settings()
    server = embedded.running_server(settings.data_dir) if settings.embedded else None
    info = {
        "embedded": settings.embedded,
        "running": server is not None,
        "pid": server.pid if server else None,
        "socket_dir": str(server.socket_dir) if server else None,
        "data_dir": str(settings.data_dir),
    }
    if as_json:
        print_json(info)
    elif not settings.embedded:
        console.print("using DATABASE_URL (external server)")
    else:
        console.print(
            f"embedded PostgreSQL {'running, pid ' + str(server.pid) if server else 'stopped'}"
            f" in {settings.data_dir}"
        )
