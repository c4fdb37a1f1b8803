"""Task definitions. Each task is thin: it unpacks its arguments and calls a domain."""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from typing import Any

import procrastinate

from grounded.logging import get_logger

logger = get_logger("grounded.queue")

WORKER_ID = uuid.uuid5(uuid.NAMESPACE_URL, "grounded:worker")
STALLED_AFTER_S = 30
REFRESH_ATTEMPTS = 5


def probe(context: procrastinate.JobContext, probe_id: str) -> None:
    """Prove the queue works end to end: a worker picks this up and records itself."""
    from grounded.queue.probe import complete_probe

    worker = context.additional_context["worker"]
    complete_probe(worker.database, probe_id, worker=f"{socket.gethostname()}:{os.getpid()}")


def ingest(context: procrastinate.JobContext, tenant_id: str, run_id: str) -> None:
    """Run one document version through the write path (resumable per stage)."""
    from grounded.auth.principal import Principal
    from grounded.ingest.pipeline import PipelineContext, run_ingest

    worker = context.additional_context["worker"]
    principal = Principal("system", WORKER_ID, uuid.UUID(tenant_id), frozenset({"admin"}))
    context_ = PipelineContext(worker.database, worker.gateway, worker.blobs)
    run = run_ingest(context_, principal, uuid.UUID(run_id))
    if run.status == "done":
        request_index_refresh(context.app, tenant_id)


def request_index_refresh(
    app: procrastinate.App, tenant_id: str, *, attempt: int = 0, delay_s: int = 0
) -> None:
    """Queue one incremental index refresh for the tenant (at most one waiting)."""
    from procrastinate.exceptions import AlreadyEnqueued

    with contextlib.suppress(AlreadyEnqueued):
        app.configure_task(
            "grounded:index_refresh",
            queueing_lock=f"index-refresh:{tenant_id}",
            schedule_in={"seconds": delay_s} if delay_s else None,
        ).defer(tenant_id=tenant_id, attempt=attempt)


def index_refresh(context: procrastinate.JobContext, tenant_id: str, attempt: int = 0) -> None:
    """Make new and changed documents searchable: an incremental snapshot, published
    atomically (issue 7 freshness). Serialised per tenant by the index's own lock.

    A failed refresh is retried by queueing a new one, not by procrastinate's
    retry: a retried job goes back to 'todo' and collides with the twin that a
    finished ingest may already have queued under the same queueing lock (a
    UniqueViolation inside the worker, found by bench/answer_quality.py). If a
    twin is waiting it does the work; otherwise the new job, after a backoff.
    """
    try:
        _refresh(context, tenant_id)
    except Exception:
        if attempt + 1 >= REFRESH_ATTEMPTS:
            raise
        logger.warning(
            "index_refresh_retry", tenant_id=tenant_id, attempt=attempt + 1, exc_info=True
        )
        request_index_refresh(
            context.app, tenant_id, attempt=attempt + 1, delay_s=2 ** (attempt + 1)
        )


def _refresh(context: procrastinate.JobContext, tenant_id: str) -> None:
    from grounded.auth.principal import Principal
    from grounded.index import Builder, refresh
    from grounded.index import status as index_status
    from grounded.index.embedder import GatewayEmbedder

    worker = context.additional_context["worker"]
    principal = Principal("system", WORKER_ID, uuid.UUID(tenant_id), frozenset({"admin"}))
    live = index_status(worker.database, principal, limit=1).live
    embedder = GatewayEmbedder(
        worker.gateway, principal, require_model=live.embedding_model if live else None
    )
    refresh(Builder(worker.database, worker.settings.index, embedder), principal)


async def retry_stalled(context: procrastinate.JobContext, timestamp: int) -> None:
    """Requeue jobs whose worker stopped sending heartbeats (killed, lost host)."""
    from grounded.queue.stalled import requeue_stalled

    await requeue_stalled(context.app, STALLED_AFTER_S)


def blueprint() -> procrastinate.Blueprint:
    """A new blueprint with every task, for one App.

    One per App because ``App.add_tasks_from`` renames a blueprint's tasks in
    place and points them at that App: sharing one module-level blueprint
    between two Apps in a process (a test run, an eval that imports in process
    and then runs a burst worker) made the second App's tasks
    ``grounded:grounded:...`` and sent a job's own ``defer`` through the other,
    closed App (``AppNotOpen``).
    """
    bp = procrastinate.Blueprint()
    bp.task(name="probe", queue="default", pass_context=True)(probe)
    bp.task(
        name="ingest",
        queue="ingest",
        pass_context=True,
        retry=procrastinate.RetryStrategy(max_attempts=3, exponential_wait=2),
    )(ingest)
    bp.task(name="index_refresh", queue="index", pass_context=True)(index_refresh)
    stalled = bp.task(
        name="retry_stalled", queue="default", pass_context=True, queueing_lock="retry_stalled"
    )(retry_stalled)
    bp.periodic(cron="* * * * *")(stalled)
    return bp


def task_names() -> list[str]:
    tasks: dict[str, Any] = blueprint().tasks
    return sorted(tasks)
