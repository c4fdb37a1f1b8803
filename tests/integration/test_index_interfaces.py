"""`grounded index ...` and /v1/index/* as an operator would use them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from grounded.auth.clock import ManualClock
from grounded.db import Database, DatabaseUrls
from tests.conftest import cli_env, make_tenant
from tests.integration.auth_support import Browser, add_user, auth_settings, serve
from tests.integration.index_corpus import CORPUS, add_document, bump

pytestmark = pytest.mark.integration


def test_cli_status_build_publish_refusals(
    db_urls: DatabaseUrls, pg_data_dir: Path, owner: psycopg.Connection
) -> None:
    tenant = make_tenant(owner, "demo")
    for title, chunks in CORPUS:
        add_document(owner, tenant, title, chunks)
    env = cli_env(db_urls, pg_data_dir)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "grounded", "index", *args, "--tenant", "demo"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    empty = cli("status", "--json")
    assert empty.returncode == 0, empty.stderr
    assert json.loads(empty.stdout)["live"] is None
    built = cli("build", "--no-vectors", "--json")
    assert built.returncode == 0, built.stderr
    generation = json.loads(built.stdout)["snapshot"]["generation"]
    bump(owner, tenant)  # a catalog write: the build is now stale
    stale = cli("publish", str(generation))
    assert stale.returncode == 1
    assert "stale" in stale.stderr
    assert "conflict" in stale.stderr
    fresh = cli("build", "--no-vectors", "--publish", "--json")
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout)["snapshot"]["state"] == "live"
    past = cli("rollback")
    assert past.returncode == 1
    assert "no earlier snapshot" in past.stderr
    shown = cli("status")
    assert "live: generation 2" in shown.stdout
    assert "current" in shown.stdout


def test_admin_endpoints(
    db_urls: DatabaseUrls, pg_data_dir: Path, owner: psycopg.Connection
) -> None:
    settings = auth_settings(pg_data_dir, db_urls)
    tenant = make_tenant(owner, "acme")
    for title, chunks in CORPUS:
        add_document(owner, tenant, title, chunks)
    add_user(owner, tenant, "admin@acme.test", role="admin")
    add_user(owner, tenant, "user@acme.test")
    with Database.open(settings) as database, serve(settings, database, ManualClock()) as client:
        admin = Browser(client)
        assert admin.login("acme", "admin@acme.test").status_code == 200
        assert admin.get("/v1/index/status").json()["live"] is None
        built = admin.post("/v1/index/build", json={"vectors": False})
        assert built.status_code == 200, built.text
        generation = built.json()["snapshot"]["generation"]
        assert admin.post("/v1/index/publish", json={"generation": 99}).status_code == 404
        published = admin.post("/v1/index/publish", json={"generation": generation})
        assert published.status_code == 200
        assert published.json()["state"] == "live"
        again = admin.post("/v1/index/publish", json={"generation": generation})
        assert again.status_code == 409
        assert admin.post("/v1/index/rollback").status_code == 409
        refreshed = admin.post("/v1/index/refresh", json={"vectors": False})
        assert refreshed.json() == {"changed": False}
        user = Browser(
            type(client)(client.app, base_url="http://testserver", raise_server_exceptions=False)
        )
        assert user.login("acme", "user@acme.test").status_code == 200
        assert user.get("/v1/index/status").status_code == 403
        assert user.post("/v1/index/build", json={"vectors": False}).status_code == 403
