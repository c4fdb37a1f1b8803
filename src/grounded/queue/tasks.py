"""Task definitions. Each task is thin: it unpacks its arguments and calls a domain."""

from __future__ import annotations

import os
import socket
from typing import Any

import procrastinate

blueprint = procrastinate.Blueprint()


@blueprint.task(name="probe", queue="default", pass_context=True)
def probe(context: procrastinate.JobContext, probe_id: str) -> None:
    """Prove the queue works end to end: a worker picks this up and records itself."""
    from grounded.queue.probe import complete_probe

    database = context.additional_context["database"]
    complete_probe(database, probe_id, worker=f"{socket.gethostname()}:{os.getpid()}")


def task_names() -> list[str]:
    tasks: dict[str, Any] = blueprint.tasks
    return sorted(tasks)
