"""The API shell: health, readiness, OpenAPI and the one error format."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from fastapi.testclient import TestClient

from grounded.api.app import create_app
from grounded.config import Settings
from grounded.db import Database
from grounded.errors import Conflict

pytestmark = pytest.mark.integration


@pytest.fixture
def client(settings: Settings, database: Database) -> Iterator[TestClient]:
    app = create_app(settings, database)

    @app.get("/test-conflict", include_in_schema=False)
    def conflict() -> None:
        raise Conflict("version 3 is stale", details={"current_version": 4})

    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def test_healthz(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}


def test_readyz_reports_each_check(client: TestClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["ready"] is True
    assert [c["name"] for c in body["checks"]] == ["database", "migrations", "pgvector", "queue"]


def test_readyz_is_503_when_a_check_fails(client: TestClient, owner: psycopg.Connection) -> None:
    owner.execute("UPDATE alembic_version SET version_num = '0000_old'")
    response = client.get("/readyz")
    assert response.status_code == 503
    failed = [c for c in response.json()["checks"] if not c["ok"]]
    assert [c["name"] for c in failed] == ["migrations"]


def test_openapi_is_served(client: TestClient) -> None:
    assert client.get("/docs").status_code == 200
    schema = client.get("/openapi.json").json()
    assert {"/healthz", "/readyz"} <= set(schema["paths"])


def test_typed_errors_have_one_shape(client: TestClient) -> None:
    response = client.get("/test-conflict")
    assert response.status_code == 409
    assert response.json() == {
        "error": {
            "code": "conflict",
            "message": "version 3 is stale",
            "details": {"current_version": 4},
        }
    }
    missing = client.get("/no-such-route")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
