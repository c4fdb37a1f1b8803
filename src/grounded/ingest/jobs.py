"""Putting runs on the queue (one job per run, ever queued at once)."""

from __future__ import annotations

from uuid import UUID

import procrastinate
from procrastinate.exceptions import AlreadyEnqueued

from grounded.ingest.runs import Run


def defer_run(queue: procrastinate.App, tenant_id: UUID, run: Run) -> bool:
    """Queue ``run``; False if a job for it is already waiting (the queueing lock)."""
    try:
        queue.configure_task("grounded:ingest", queueing_lock=f"ingest:{run.id}").defer(
            tenant_id=str(tenant_id), run_id=str(run.id)
        )
    except AlreadyEnqueued:
        return False
    return True
