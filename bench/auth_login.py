"""Login and request-authentication latency with the default Argon2id parameters.

Run: .venv/bin/python bench/auth_login.py [--runs N]
Starts a throw-away embedded PostgreSQL, migrates it, creates one tenant and
user, and times (through the real app, in process) a successful login, each
kind of failed login (which must be in the same timing class), and an
authenticated request by cookie and by bearer token. Not a test: figures go to
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient

from grounded.api.app import create_app
from grounded.auth import local
from grounded.auth.settings import AuthSettings
from grounded.config import Settings
from grounded.db import Database, embedded, migrate, urls

PASSWORD = "a reasonably long passphrase"


def timed(runs: int, action: Callable[[], object]) -> tuple[float, float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[0], samples[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        embedded.ensure_running(data_dir)
        try:
            auth = AuthSettings(login_attempts_per_account=10_000, login_attempts_per_client=10_000)
            settings = Settings(data_dir=data_dir, auth=auth)
            found = urls.resolve(settings)
            migrate.upgrade(settings, found)
            with local.connect(found.owner) as conn:
                local.create_tenant(conn, "bench")
                local.create_admin(conn, auth, "bench", "admin@bench.test", PASSWORD)
                conn.commit()
            run(settings, args.runs)
        finally:
            embedded.stop(data_dir)


def run(settings: Settings, runs: int) -> None:
    auth = settings.auth
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(
        f"Argon2id t={auth.argon2_time_cost} m={auth.argon2_memory_kib} KiB "
        f"p={auth.argon2_parallelism}; {runs} runs each; median (min-max) ms"
    )
    with Database.open(settings) as database:
        app = create_app(settings, database)
        with TestClient(app, raise_server_exceptions=False) as client:

            def login(tenant: str, email: str, password: str) -> Callable[[], object]:
                body = {"tenant": tenant, "email": email, "password": password}
                return lambda: client.post("/v1/auth/login", json=body)

            cases = {
                "login ok": login("bench", "admin@bench.test", PASSWORD),
                "login wrong password": login("bench", "admin@bench.test", "not it at all"),
                "login unknown user": login("bench", "nobody@bench.test", PASSWORD),
                "login unknown tenant": login("nowhere", "admin@bench.test", PASSWORD),
            }
            for name, action in cases.items():
                median, low, high = timed(runs, action)
                print(f"{name:28} {median:7.1f} ({low:.1f}-{high:.1f})")
            client.post(
                "/v1/auth/login",
                json={"tenant": "bench", "email": "admin@bench.test", "password": PASSWORD},
            )
            median, low, high = timed(runs, lambda: client.get("/v1/auth/me"))
            print(f"{'GET /v1/auth/me by cookie':28} {median:7.1f} ({low:.1f}-{high:.1f})")
            me = client.get("/v1/auth/me").json()
            token = client.post(
                "/v1/tokens",
                json={"name": "bench", "permissions": ["read"]},
                headers={"Origin": "http://127.0.0.1:8000", "X-CSRF-Token": me["csrf_token"]},
            ).json()["token"]
            client.cookies.clear()
            headers = {"Authorization": f"Bearer {token}"}
            median, low, high = timed(runs, lambda: client.get("/v1/auth/me", headers=headers))
            print(f"{'GET /v1/auth/me by token':28} {median:7.1f} ({low:.1f}-{high:.1f})")


if __name__ == "__main__":
    main()
