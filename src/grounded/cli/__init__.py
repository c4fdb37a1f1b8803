"""`grounded`: the command line. Commands are thin compositions of domain calls."""

from __future__ import annotations

import sys

import typer

from grounded.cli import (
    admin_cmd,
    ask_cmd,
    config_cmd,
    db_cmd,
    doctor_cmd,
    eval_cmd,
    index_cmd,
    ingest_cmd,
    knowledge_cmd,
    models_cmd,
    search_cmd,
    serve_cmd,
    tenant_cmd,
    token_cmd,
    worker_cmd,
)
from grounded.cli.common import err_console
from grounded.errors import GroundedError

app = typer.Typer(
    name="grounded",
    help="grounded: answers from your own documents with verified citations.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(config_cmd.app, name="config")
app.add_typer(db_cmd.app, name="db")
app.command("serve")(serve_cmd.serve)
app.command("worker")(worker_cmd.worker)
app.add_typer(worker_cmd.queue_app, name="queue")
app.command("doctor")(doctor_cmd.doctor)
app.add_typer(knowledge_cmd.app, name="knowledge")
app.add_typer(index_cmd.app, name="index")
app.command("ingest")(ingest_cmd.ingest)
app.command("search")(search_cmd.search)
app.command("ask")(ask_cmd.ask)
app.add_typer(ask_cmd.answers_app, name="answers")
app.add_typer(ingest_cmd.documents_app, name="documents")
app.add_typer(models_cmd.app, name="models")
app.add_typer(tenant_cmd.app, name="tenant")
app.add_typer(admin_cmd.app, name="admin")
app.add_typer(token_cmd.app, name="token")
app.add_typer(eval_cmd.app, name="eval")

# Exit codes: 1 a check failed or the request was refused; 2 usage (typer);
# 3 configuration or data directory; 4 database unavailable or not current.
_EXIT = {
    "config_invalid": 3,
    "data_dir_unusable": 3,
    "database_unavailable": 4,
    "pgvector_missing": 4,
    "schema_not_current": 4,
    "database_error": 4,
}


def main() -> None:
    """Entry point: typed errors become one clear line and an exit code, never a traceback."""
    try:
        app()
    except GroundedError as exc:
        err_console.print(
            f"[bold red]error[/] ({exc.code}): {exc.message}", highlight=False, soft_wrap=True
        )
        sys.exit(_EXIT.get(exc.code, 1))
