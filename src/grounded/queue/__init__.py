"""Background work on a real job queue (procrastinate) over the same PostgreSQL.

Public surface: ``build_queue`` (an App for a connection string), ``run_worker``
and the task blueprint. Tasks receive the process's ``Database`` through the
job context, never through a global, and bind a tenant like any other code.
"""

from grounded.queue.app import build_queue, run_worker
from grounded.queue.probe import request_probe, wait_for_probe

__all__ = ["build_queue", "request_probe", "run_worker", "wait_for_probe"]
