"""`grounded worker` and `grounded queue`: background jobs."""

from __future__ import annotations

import typer

from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.db import Database
from grounded.errors import DatabaseUnavailable
from grounded.queue import request_probe, run_worker, wait_for_probe

queue_app = typer.Typer(help="Inspect and exercise the job queue.", no_args_is_help=True)


def worker(
    concurrency: int = typer.Option(
        None, help="Jobs at once [default: GROUNDED_WORKER_CONCURRENCY]."
    ),
    queue: list[str] = typer.Option(None, "--queue", help="Only these queues (repeatable)."),
    burst: bool = typer.Option(False, help="Exit when the queue is empty instead of waiting."),
) -> None:
    """Run a background worker (SIGTERM finishes running jobs, then exits)."""
    settings = load_settings()
    with Database.open(settings) as database:
        run_worker(
            settings,
            database,
            concurrency=concurrency or settings.worker_concurrency,
            queues=queue or None,
            wait=not burst,
        )


@queue_app.command("probe")
def probe(
    timeout: float = typer.Option(30.0, help="Seconds to wait for a worker."),
    as_json: bool = JsonOption,
) -> None:
    """Send a probe job and wait until a worker completes it (proves the queue path)."""
    settings = load_settings()
    with Database.open(settings) as database:
        probe_id = request_probe(database)
        worker_name = wait_for_probe(database, probe_id, timeout)
    if worker_name is None:
        raise DatabaseUnavailable(
            f"no worker completed probe {probe_id} within {timeout:g}s; "
            "start one with `grounded worker`"
        )
    if as_json:
        print_json({"probe_id": str(probe_id), "worker": worker_name})
    else:
        console.print(f"probe {probe_id} completed by worker {worker_name}")
