"""The probe job: a request row, a job, a worker that completes the row.

It proves the whole queue path (defer -> PostgreSQL -> worker -> database
write) and gives `doctor` and `/readyz` a "last worker seen" time.
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime

from grounded.db import Database
from grounded.queue.app import build_queue


def request_probe(database: Database) -> uuid.UUID:
    """Insert a probe row and defer the job that completes it."""
    probe_id = uuid.uuid4()
    with database.unscoped() as conn:
        conn.execute("INSERT INTO worker_probes (id) VALUES (%s)", (probe_id,))
    app = build_queue(database.app_url)
    with app.open():
        app.configure_task("grounded:probe").defer(probe_id=str(probe_id))
    return probe_id


def complete_probe(database: Database, probe_id: str, *, worker: str) -> None:
    with database.unscoped() as conn:
        conn.execute(
            "UPDATE worker_probes SET completed_at = now(), worker = %s WHERE id = %s",
            (worker, uuid.UUID(probe_id)),
        )


def wait_for_probe(database: Database, probe_id: uuid.UUID, timeout_s: float) -> str | None:
    """The worker that completed the probe, or None if none did within the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        with database.unscoped() as conn:
            row = conn.execute(
                "SELECT worker FROM worker_probes WHERE id = %s AND completed_at IS NOT NULL",
                (probe_id,),
            ).fetchone()
        if row is not None:
            return str(row["worker"])
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.2)


def last_worker_seen(database: Database) -> tuple[str, datetime] | None:
    with database.unscoped() as conn:
        row = conn.execute(
            "SELECT worker, completed_at FROM worker_probes WHERE completed_at IS NOT NULL "
            "ORDER BY completed_at DESC LIMIT 1"
        ).fetchone()
    return None if row is None else (str(row["worker"]), row["completed_at"])
