"""Procrastinate wiring: one App per process, tasks registered from blueprints."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any

import procrastinate

from grounded.config import Settings
from grounded.db import Database
from grounded.queue import tasks

CONTEXT_KEY = "worker"


@dataclass(frozen=True)
class WorkerContext:
    """What jobs of one worker process share (built once, passed via the job context)."""

    settings: Settings
    database: Database
    gateway: Any  # grounded.gateway.Gateway, imported lazily (models load on first use)
    blobs: Any  # grounded.storage.BlobStore


_APPS: dict[str, procrastinate.App] = {}


def build_queue(conninfo: str) -> procrastinate.App:
    """The App on ``conninfo`` (the application role) with grounded's tasks.

    One App per connection string per process, opened and closed as often as
    needed; each App gets its own blueprint (see ``tasks.blueprint``).
    """
    app = _APPS.get(conninfo)
    if app is None:
        app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo))
        app.add_tasks_from(tasks.blueprint(), namespace="grounded")
        _APPS[conninfo] = app
    return app


def worker_context(settings: Settings, database: Database) -> WorkerContext:
    from grounded.gateway import open_gateway
    from grounded.storage import BlobStore

    return WorkerContext(
        settings, database, open_gateway(settings, database), BlobStore(settings.raw_dir)
    )


def run_worker(
    settings: Settings,
    database: Database,
    *,
    concurrency: int,
    queues: list[str] | None = None,
    name: str | None = None,
    wait: bool = True,
) -> None:
    """Run a worker until SIGINT/SIGTERM (or, with ``wait=False``, until the queue is empty).

    A SIGTERM lets running jobs finish. A killed worker's jobs are found by the
    periodic ``retry_stalled`` task once its heartbeat is stale and run again;
    the pipeline stages are idempotent, so nothing is lost or duplicated.
    """
    context = worker_context(settings, database)
    app = build_queue(database.app_url)
    options: dict[str, Any] = {
        "concurrency": concurrency,
        "name": name or f"{socket.gethostname()}:{os.getpid()}",
        "wait": wait,
        "additional_context": {CONTEXT_KEY: context},
        "install_signal_handlers": True,
    }
    if queues:
        options["queues"] = queues
    try:
        with app.open():
            app.run_worker(**options)
    finally:
        context.gateway.close()
