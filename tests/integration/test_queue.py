"""The job queue, end to end: defer -> PostgreSQL -> a real worker process -> database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import psycopg
import pytest

from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import Database
from grounded.index import status
from grounded.index.snapshots import build_lock_key
from grounded.queue import build_queue, request_probe, run_worker, wait_for_probe
from grounded.queue.probe import last_worker_seen
from grounded.queue.tasks import request_index_refresh
from tests.conftest import make_tenant
from tests.integration.index_corpus import add_document

pytestmark = pytest.mark.integration


def test_probe_job_runs_in_a_worker_process(settings: Settings, database: Database) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url.get_secret_value(),  # type: ignore[union-attr]
        "GROUNDED_APP_DATABASE_URL": settings.app_database_url.get_secret_value(),  # type: ignore[union-attr]
        "GROUNDED_DATA_DIR": str(settings.data_dir),
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "grounded", "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        probe_id = request_probe(database)
        name = wait_for_probe(database, probe_id, timeout_s=60)
        assert name is not None and name.endswith(f":{worker.pid}")
        seen = last_worker_seen(database)
        assert seen is not None and seen[0] == name
    finally:
        worker.send_signal(signal.SIGTERM)
        _, stderr = worker.communicate(timeout=60)
    assert worker.returncode == 0, stderr[-2000:]


def test_probe_without_worker_is_not_completed(database: Database) -> None:
    probe_id = request_probe(database)
    assert wait_for_probe(database, probe_id, timeout_s=0.5) is None


def test_a_failed_index_refresh_requeues_without_colliding_with_its_twin(
    settings: Settings, database: Database, owner: psycopg.Connection[tuple[object, ...]]
) -> None:
    """A refresh that fails (here: another build holds the tenant's lock) must not be
    retried by procrastinate into the queueing lock of a twin queued meanwhile; it
    queues a successor itself, which publishes once the lock is free."""
    tenant = make_tenant(owner, "refresh-retry")
    add_document(owner, tenant, "Manual", ["The boiler pressure limit is 3 bar."])
    app = build_queue(database.app_url)  # the worker below runs on this same App
    key = build_lock_key(tenant)
    dsn = settings.database_url.get_secret_value()  # type: ignore[union-attr]
    with psycopg.connect(dsn, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
        with app.open():
            request_index_refresh(app, str(tenant))
        run_worker(settings, database, concurrency=1, wait=False)
        # The successor is queued with a backoff; a new request while it waits is the twin.
        with app.open():
            request_index_refresh(app, str(tenant))
        jobs = owner.execute(
            "SELECT status::text, args->>'attempt' FROM procrastinate_jobs"
            " WHERE task_name = 'grounded:index_refresh' ORDER BY id"
        ).fetchall()
        assert jobs == [("succeeded", "0"), ("todo", "1")]
        holder.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
    time.sleep(2.5)
    run_worker(settings, database, concurrency=1, wait=False)
    statuses = owner.execute(
        "SELECT status::text FROM procrastinate_jobs WHERE task_name = 'grounded:index_refresh'"
    ).fetchall()
    assert statuses == [("succeeded",), ("succeeded",)]
    admin = Principal("system", uuid.uuid4(), tenant, frozenset({"admin"}))
    live = status(database, admin, limit=1).live
    assert live is not None and live.generation == 1
