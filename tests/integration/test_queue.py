"""The job queue, end to end: defer -> PostgreSQL -> a real worker process -> database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from grounded.config import Settings
from grounded.db import Database
from grounded.queue import request_probe, wait_for_probe
from grounded.queue.probe import last_worker_seen

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
