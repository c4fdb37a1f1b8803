"""Procrastinate wiring: one App per process, tasks registered from blueprints."""

from __future__ import annotations

import socket
from typing import Any

import procrastinate

from grounded.db import Database
from grounded.queue import tasks

DB_CONTEXT_KEY = "database"


def build_queue(conninfo: str) -> procrastinate.App:
    """An App on ``conninfo`` (the application role) with grounded's tasks."""
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo))
    app.add_tasks_from(tasks.blueprint, namespace="grounded")
    return app


def run_worker(
    database: Database,
    *,
    concurrency: int,
    queues: list[str] | None = None,
    name: str | None = None,
    wait: bool = True,
) -> None:
    """Run a worker until SIGINT/SIGTERM (or, with ``wait=False``, until the queue is empty).

    A SIGTERM lets running jobs finish; a killed worker's jobs are retried by
    the next worker once its heartbeat goes stale (procrastinate's stalled-job
    recovery), so the stages themselves must be idempotent.
    """
    app = build_queue(database.app_url)
    options: dict[str, Any] = {
        "concurrency": concurrency,
        "name": name or f"{socket.gethostname()}:{__import__('os').getpid()}",
        "wait": wait,
        "additional_context": {DB_CONTEXT_KEY: database},
        "install_signal_handlers": True,
    }
    if queues:
        options["queues"] = queues
    with app.open():
        app.run_worker(**options)
