"""The embedded PostgreSQL: shared by concurrent starters, durable across restarts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from grounded.db import embedded

pytestmark = pytest.mark.integration

START = (
    "import sys; from pathlib import Path; from grounded.db import embedded; "
    "print(embedded.ensure_running(Path(sys.argv[1])).pid)"
)


def test_concurrent_starts_share_one_server(scratch_dir: Path) -> None:
    data_dir = scratch_dir / "shared"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", START, str(data_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    try:
        results = [p.communicate(timeout=120) for p in procs]
        assert all(p.returncode == 0 for p in procs), results
        pids = {out.strip() for out, _ in results}
        assert len(pids) == 1, pids
        server = embedded.running_server(data_dir)
        assert server is not None and str(server.pid) in pids
        # Exactly one postmaster serves this data directory.
        postmasters = subprocess.run(
            ["pgrep", "-f", f"postgres -D {data_dir / 'pg'}"], capture_output=True, text=True
        ).stdout.split()
        assert len(postmasters) == 1, postmasters
    finally:
        embedded.stop(data_dir)


def test_restart_keeps_data(scratch_dir: Path) -> None:
    data_dir = scratch_dir / "durable"
    server = embedded.ensure_running(data_dir)
    try:
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (v text)")
            conn.execute("INSERT INTO kept VALUES ('survives restart')")
        assert embedded.stop(data_dir)
        assert embedded.running_server(data_dir) is None
        again = embedded.ensure_running(data_dir)
        assert again.pid != server.pid
        with psycopg.connect(again.url()) as conn:
            assert conn.execute("SELECT v FROM kept").fetchone() == ("survives restart",)
    finally:
        embedded.stop(data_dir)


def test_server_outlives_the_process_that_started_it(scratch_dir: Path) -> None:
    data_dir = scratch_dir / "detached"
    try:
        out = subprocess.run(
            [sys.executable, "-c", START, str(data_dir)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout.strip()
        server = embedded.running_server(data_dir)
        assert server is not None and str(server.pid) == out
    finally:
        embedded.stop(data_dir)


def test_socket_is_private(pg_server: embedded.EmbeddedServer) -> None:
    assert pg_server.socket_dir.stat().st_mode & 0o077 == 0
