"""Schema migrations (Alembic), run as the owner; never ``create_all`` (seed 002 ADR-007).

``upgrade`` is the only path that changes the schema. Serving code calls
``require_current``, which refuses an un-migrated database or one migrated by
a newer grounded, with a message that says which command fixes it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import psycopg
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from psycopg import sql
from psycopg.rows import tuple_row

from grounded.config import Settings
from grounded.db.secrets import read_or_create
from grounded.db.urls import DatabaseUrls, app_password
from grounded.errors import ConfigError, DatabaseUnavailable, ExtensionMissing, SchemaMismatch

MIGRATIONS_DIR = Path(__file__).parent / "migrations"

PGVECTOR_HELP = (
    "the database has no pgvector extension available. Install it on the server "
    "(Debian/Ubuntu: `apt-get install postgresql-<major>-pgvector`; other systems: "
    "https://github.com/pgvector/pgvector#installation), or unset DATABASE_URL to use "
    "the embedded PostgreSQL, which ships with pgvector."
)


def _alembic_config(urls: DatabaseUrls, app_role: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", urls.sqlalchemy().replace("%", "%%"))
    config.attributes["app_role"] = app_role
    return config


def head_revision() -> str:
    script = ScriptDirectory(str(MIGRATIONS_DIR))
    head = script.get_current_head()
    assert head is not None
    return head


def known_revisions() -> set[str]:
    script = ScriptDirectory(str(MIGRATIONS_DIR))
    return {rev.revision for rev in script.walk_revisions()}


def current_revision(conn: psycopg.Connection[Any]) -> str | None:
    """The database's revision, or None when it was never migrated."""
    cur = conn.cursor(row_factory=tuple_row)
    exists = cur.execute("SELECT to_regclass('public.alembic_version') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return None
    row = cur.execute("SELECT version_num FROM alembic_version").fetchone()
    return None if row is None else str(row[0])


def require_current(conn: psycopg.Connection[Any]) -> str:
    """Return the revision if it is this code's head, else raise SchemaMismatch."""
    revision = current_revision(conn)
    head = head_revision()
    if revision == head:
        return revision
    if revision is None:
        raise SchemaMismatch(
            "the database has not been migrated; run `grounded db upgrade` first",
            details={"current": None, "head": head},
        )
    if revision not in known_revisions():
        raise SchemaMismatch(
            f"the database is at schema revision {revision}, newer than this grounded "
            f"(head {head}); upgrade grounded instead of running old code on it",
            details={"current": revision, "head": head},
        )
    raise SchemaMismatch(
        f"the database is at revision {revision}, behind this grounded (head {head}); "
        "run `grounded db upgrade`",
        details={"current": revision, "head": head},
    )


def upgrade(settings: Settings, urls: DatabaseUrls) -> tuple[str | None, str]:
    """Bring the database to head. Returns (revision before, revision after).

    Checks first and changes nothing when the server lacks pgvector or the
    database is newer than the code.
    """
    try:
        owner = psycopg.connect(urls.owner, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise DatabaseUnavailable(f"cannot connect to the database: {exc}".strip()) from exc
    with owner:
        _check_server(owner)
        before = current_revision(owner)
        if before is not None and before not in known_revisions():
            require_current(owner)  # raises the "newer than this grounded" message
        _ensure_app_role(owner, settings, urls)
    command.upgrade(_alembic_config(urls, settings.app_role), "head")
    with psycopg.connect(urls.owner, autocommit=True) as owner:
        _install_bind_key(owner, bind_key(settings))
        after = current_revision(owner)
    assert after is not None
    return before, after


def bind_key(settings: Settings) -> str:
    """The tenant-binding key of this deployment (see migration 0001)."""
    return read_or_create(settings.data_dir, "tenant-bind.key")


def _check_server(conn: psycopg.Connection) -> None:
    row = conn.execute("SHOW server_version_num").fetchone()
    if row is None or int(row[0]) < 150000:
        raise DatabaseUnavailable("grounded needs PostgreSQL 15 or newer")
    available = conn.execute(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone()
    if not available:
        raise ExtensionMissing(PGVECTOR_HELP)


def _ensure_app_role(conn: psycopg.Connection, settings: Settings, urls: DatabaseUrls) -> None:
    """Create the unprivileged application role (and keep it unprivileged)."""
    role = sql.Identifier(settings.app_role)
    exists = conn.execute(
        "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = %s", (settings.app_role,)
    ).fetchone()
    if exists is None:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(role))
    conn.execute(
        sql.SQL(
            "ALTER ROLE {} NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOREPLICATION"
        ).format(role)
    )
    if not urls.embedded and settings.app_database_url is None:
        conn.execute(
            sql.SQL("ALTER ROLE {} PASSWORD {}").format(role, sql.Literal(app_password(settings)))
        )
    database = conn.execute("SELECT current_database()").fetchone()
    assert database is not None
    conn.execute(
        sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(database[0]), role)
    )


def _install_bind_key(conn: psycopg.Connection, key: str) -> None:
    digest = hashlib.sha256(key.encode()).digest()
    row = conn.execute("SELECT digest FROM grounded_private.bind_key").fetchone()
    if row is None:
        conn.execute("INSERT INTO grounded_private.bind_key (digest) VALUES (%s)", (digest,))
    elif bytes(row[0]) != digest:
        raise ConfigError(
            "this database was set up with a different tenant-binding key than "
            "<data_dir>/secrets/tenant-bind.key; copy the key file from the first "
            "installation to every host that uses this database"
        )
