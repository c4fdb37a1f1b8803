"""Recovering jobs whose worker died (SIGKILL, lost host): requeue, or retire duplicates.

A stalled job is put back on the queue. When the job carries a queueing lock
(one index refresh per tenant) and an equivalent job is already waiting, the
stalled one is redundant: it is finished as failed instead, so the waiting job
does the work once.
"""

from __future__ import annotations

import procrastinate
from procrastinate import exceptions, jobs


async def requeue_stalled(app: procrastinate.App, seconds_since_heartbeat: float) -> int:
    """Requeue (or retire) jobs of workers silent for ``seconds_since_heartbeat``."""
    manager = app.job_manager
    count = 0
    for job in await manager.get_stalled_jobs(seconds_since_heartbeat=seconds_since_heartbeat):
        try:
            await manager.retry_job(job)
        except exceptions.UniqueViolation:
            await manager.finish_job(job, status=jobs.Status.FAILED, delete_job=False)
        count += 1
    return count
