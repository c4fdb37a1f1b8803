"""Shared fixtures: one embedded PostgreSQL per test session, one database per test.

The session starts a real PostgreSQL (pgserver binaries, pgvector included) in
a temporary data directory, migrates a template database once, and gives each
test that asks for ``db_urls`` its own copy (CREATE DATABASE ... TEMPLATE),
dropped afterwards. Nothing is mocked.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from grounded.config import Settings
from grounded.db import Database, DatabaseUrls, embedded, migrate

TEMPLATE = "grounded_template"

# Tests never read the developer's grounded.toml or environment.
for _name in list(os.environ):
    if _name.startswith("GROUNDED_") or _name == "DATABASE_URL":
        del os.environ[_name]
os.environ["GROUNDED_CONFIG"] = "/nonexistent/grounded.toml"


@pytest.fixture(scope="session")
def pg_data_dir() -> Iterator[Path]:
    # Not under pytest's tmp_path: pytest prunes old numbered temp dirs, and a
    # concurrent session could prune (chmod, delete) a live database under us.
    data_dir = Path(tempfile.mkdtemp(prefix="grounded-test-"))
    yield data_dir
    embedded.stop(data_dir)
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def scratch_dir() -> Iterator[Path]:
    """A private temp dir outside pytest's tree (which is 0700 and pruned by other
    sessions): for tests whose PostgreSQL runs as another OS user."""
    path = Path(tempfile.mkdtemp(prefix="grounded-scratch-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server(pg_data_dir: Path) -> embedded.EmbeddedServer:
    return embedded.ensure_running(pg_data_dir)


def urls_for(server: embedded.EmbeddedServer, database: str) -> DatabaseUrls:
    return DatabaseUrls(
        owner=server.url(database=database),
        app=server.url(user="grounded_app", database=database),
        embedded=True,
    )


def settings_for(data_dir: Path, urls: DatabaseUrls, **extra: object) -> Settings:
    """Settings that point at one test database (as an 'external' server)."""
    return Settings(
        data_dir=data_dir,
        database_url=urls.owner,
        app_database_url=urls.app,
        **extra,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="session")
def template_db(pg_server: embedded.EmbeddedServer, pg_data_dir: Path) -> str:
    with psycopg.connect(pg_server.url(database="postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(TEMPLATE)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE)))
    urls = urls_for(pg_server, TEMPLATE)
    migrate.upgrade(settings_for(pg_data_dir, urls), urls)
    return TEMPLATE


@pytest.fixture
def db_urls(pg_server: embedded.EmbeddedServer, template_db: str) -> Iterator[DatabaseUrls]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = pg_server.url(database="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(template_db)
            )
        )
    yield urls_for(pg_server, name)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def settings(pg_data_dir: Path, db_urls: DatabaseUrls) -> Settings:
    return settings_for(pg_data_dir, db_urls)


@pytest.fixture
def database(settings: Settings) -> Iterator[Database]:
    with Database.open(settings) as db:
        yield db


@pytest.fixture
def owner(db_urls: DatabaseUrls) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """An owner (superuser) connection to the test database, for arranging data."""
    with psycopg.connect(db_urls.owner, autocommit=True) as conn:
        yield conn


def make_tenant(owner: psycopg.Connection[tuple[object, ...]], slug: str) -> uuid.UUID:
    row = owner.execute(
        "INSERT INTO tenants (slug, name) VALUES (%s, %s) RETURNING id", (slug, slug.upper())
    ).fetchone()
    assert row is not None
    return row[0]  # type: ignore[return-value]


def cli_env(urls: DatabaseUrls, data_dir: Path) -> dict[str, str]:
    """The environment a `grounded` subprocess needs to use one test database."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_")}
    env.update(
        {
            "DATABASE_URL": urls.owner,
            "GROUNDED_APP_DATABASE_URL": urls.app,
            "GROUNDED_DATA_DIR": str(data_dir),
            "GROUNDED_CONFIG": "/nonexistent.toml",
        }
    )
    return env
