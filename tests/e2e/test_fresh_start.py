"""A newcomer's path on the embedded default: upgrade, serve, ready, probe, restart."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from grounded.db import embedded

pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grounded", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _wait_ready(url: str, timeout: float = 60) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        try:
            response = httpx.get(url, timeout=5)
            if response.status_code == 200:
                return response
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} never became ready")
        time.sleep(0.3)


def test_fresh_data_dir_to_ready_server() -> None:
    # Outside pytest's temp tree: it is 0700 root-owned and pruned by other sessions.
    data_dir = Path(tempfile.mkdtemp(prefix="grounded-e2e-")) / "fresh" / ".grounded"
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_") and k != "DATABASE_URL"
    }
    env.update({"GROUNDED_DATA_DIR": str(data_dir), "GROUNDED_CONFIG": "/nonexistent.toml"})
    port = _free_port()
    try:
        upgrade = _cli("db", "upgrade", env=env)
        assert upgrade.returncode == 0, upgrade.stderr
        server = subprocess.Popen(
            [sys.executable, "-m", "grounded", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        worker = subprocess.Popen(
            [sys.executable, "-m", "grounded", "worker"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            ready = _wait_ready(f"http://127.0.0.1:{port}/readyz").json()
            assert ready["ready"] is True
            probe = _cli("queue", "probe", "--json", env=env)
            assert probe.returncode == 0, probe.stderr
            doctor = _cli("doctor", "--json", env=env)
            assert doctor.returncode == 0, doctor.stdout
            # Killing the API does not take the database down; a new API reuses it.
            pg_pid = embedded.running_server(data_dir)
            server.send_signal(signal.SIGKILL)
            server.wait(30)
            assert embedded.running_server(data_dir) == pg_pid
        finally:
            for proc in (server, worker):
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(60)
        again = subprocess.Popen(
            [sys.executable, "-m", "grounded", "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert _wait_ready(f"http://127.0.0.1:{port}/readyz").json()["ready"] is True
        finally:
            again.send_signal(signal.SIGTERM)
            again.wait(60)
        current = _cli("db", "current", "--json", env=env)
        assert '"up_to_date": true' in current.stdout
    finally:
        embedded.stop(data_dir)
        shutil.rmtree(data_dir.parent.parent, ignore_errors=True)
