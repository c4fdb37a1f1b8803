"""Helpers shared by the auth, session and cross-tenant tests.

Argon2id runs with tiny parameters here (tests are about behaviour, not
cost); the app gets a ManualClock so timeouts are tested by moving time.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
import structlog
from fastapi.testclient import TestClient

from grounded.api.app import create_app
from grounded.auth.clock import ManualClock
from grounded.auth.passwords import hasher_for
from grounded.auth.settings import AuthSettings
from grounded.config import Settings
from grounded.db import Database, DatabaseUrls
from tests.conftest import make_tenant, settings_for

ORIGIN = "http://testserver"
PASSWORD = "correct horse battery staple"
FAST: dict[str, Any] = {
    "argon2_time_cost": 1,
    "argon2_memory_kib": 1024,
    "argon2_parallelism": 1,
    "allowed_origins": [ORIGIN, "https://testserver"],
}


def auth_settings(data_dir: Path, urls: DatabaseUrls, **auth: Any) -> Settings:
    return settings_for(data_dir, urls, auth=AuthSettings(**{**FAST, **auth}))


def add_user(
    owner: psycopg.Connection[Any],
    tenant_id: uuid.UUID,
    email: str,
    *,
    password: str = PASSWORD,
    role: str = "user",
    groups: tuple[str, ...] = (),
    settings: AuthSettings | None = None,
) -> uuid.UUID:
    hashed = hasher_for(settings or AuthSettings(**FAST)).hash(password)
    row = owner.execute(
        "INSERT INTO users (tenant_id, email, password_hash, role, groups)"
        " VALUES (%s, %s, %s, %s, %s) RETURNING id",
        (tenant_id, email, hashed, role, list(groups)),
    ).fetchone()
    assert row is not None
    return row[0]  # type: ignore[no-any-return]


class Browser:
    """A TestClient that behaves like a same-origin page: Origin + CSRF header."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.csrf: str | None = None

    def login(self, tenant: str, email: str, password: str = PASSWORD) -> Any:
        response = self.client.post(
            "/v1/auth/login",
            json={"tenant": tenant, "email": email, "password": password},
            headers={"Origin": ORIGIN},
        )
        if response.status_code == 200:
            self.csrf = response.json()["csrf_token"]
        return response

    def headers(self) -> dict[str, str]:
        return {"Origin": ORIGIN, "X-CSRF-Token": self.csrf or ""}

    def post(self, url: str, **kwargs: Any) -> Any:
        return self.client.post(url, headers=self.headers(), **kwargs)

    def patch(self, url: str, **kwargs: Any) -> Any:
        return self.client.patch(url, headers=self.headers(), **kwargs)

    def delete(self, url: str, **kwargs: Any) -> Any:
        return self.client.delete(url, headers=self.headers(), **kwargs)

    def get(self, url: str, **kwargs: Any) -> Any:
        return self.client.get(url, **kwargs)


@contextmanager
def clean_logging() -> Iterator[None]:
    """Logging as a fresh process has it, restored afterwards.

    An in-process CLI test elsewhere (CliRunner) may leave structlog writing to
    a stream that is closed by now, which would turn every logged login into a
    500 here; these tests are about auth, not about that leftover.
    """
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    saved = structlog.get_config()
    root.handlers[:] = []
    structlog.reset_defaults()
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        structlog.configure(**saved)


@contextmanager
def serve(
    settings: Settings, database: Database, clock: ManualClock, base_url: str = ORIGIN
) -> Iterator[TestClient]:
    app = create_app(settings, database)
    app.state.clock = clock
    with (
        clean_logging(),
        TestClient(app, base_url=base_url, raise_server_exceptions=False) as client,
    ):
        yield client


class World:
    """Two tenants (a, b), each with an admin and a user, and a served app."""

    def __init__(
        self,
        settings: Settings,
        database: Database,
        clock: ManualClock,
        client: TestClient,
        owner: psycopg.Connection[Any],
    ) -> None:
        self.settings = settings
        self.database = database
        self.clock = clock
        self.client = client
        self.owner = owner
        self.tenant_a = make_tenant(owner, "acme")
        self.tenant_b = make_tenant(owner, "globex")
        self.admin_a = add_user(owner, self.tenant_a, "admin@acme.test", role="admin")
        self.user_a = add_user(owner, self.tenant_a, "user@acme.test")
        self.admin_b = add_user(owner, self.tenant_b, "admin@globex.test", role="admin")
        self.user_b = add_user(owner, self.tenant_b, "user@globex.test")

    def browser(self) -> Browser:
        """A fresh cookie jar on the same app (another device of a user)."""
        return Browser(TestClient(self.client.app, base_url=ORIGIN, raise_server_exceptions=False))


@pytest.fixture
def world(
    pg_data_dir: Path, db_urls: DatabaseUrls, owner: psycopg.Connection[Any]
) -> Iterator[World]:
    settings = auth_settings(pg_data_dir, db_urls)
    clock = ManualClock()
    with Database.open(settings) as database, serve(settings, database, clock) as client:
        yield World(settings, database, clock, client, owner)
