"""Row-level security holds under the application role, whatever SQL it runs."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from grounded.db import Database, DatabaseUrls
from tests.conftest import make_tenant

pytestmark = pytest.mark.integration

TENANT_TABLES = [
    "users",
    "sources",
    "documents",
    "document_versions",
    "assets",
    "chunks",
    "knowledge_items",
    "events",
    "index_snapshots",
    "retrieval_runs",
]


@pytest.fixture
def two_tenants(owner: psycopg.Connection, database: Database) -> tuple[uuid.UUID, uuid.UUID]:
    a = make_tenant(owner, "tenant-a")
    b = make_tenant(owner, "tenant-b")
    for tenant, name in ((a, "alpha-source"), (b, "CANARY-B-source")):
        with database.transaction(tenant) as conn:
            conn.execute(
                "INSERT INTO sources (tenant_id, kind, name) VALUES (%s, 'upload', %s)",
                (tenant, name),
            )
            conn.execute(
                "INSERT INTO events (tenant_id, actor_kind, entity_type, entity_id, action) "
                "VALUES (%s, 'system', 'source', gen_random_uuid(), 'created')",
                (tenant,),
            )
    return a, b


def test_every_tenant_table_forces_rls(owner: psycopg.Connection) -> None:
    rows = owner.execute(
        "SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = ANY(%s)",
        ([*TENANT_TABLES, "tenants"],),
    ).fetchall()
    assert len(rows) == len(TENANT_TABLES) + 1
    assert all(r[1] and r[2] for r in rows), rows
    columns = owner.execute(
        "SELECT table_name FROM information_schema.columns "
        "WHERE table_schema = 'public' AND column_name = 'tenant_id'"
    ).fetchall()
    assert {c[0] for c in columns} >= set(TENANT_TABLES)


def test_app_role_is_not_privileged(owner: psycopg.Connection) -> None:
    row = owner.execute(
        "SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb FROM pg_roles "
        "WHERE rolname = 'grounded_app'"
    ).fetchone()
    assert row == (False, False, False, False)
    owners = owner.execute(
        "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'"
    ).fetchall()
    assert ("grounded_app",) not in owners


def test_raw_sql_sees_only_own_tenant(
    database: Database, two_tenants: tuple[uuid.UUID, uuid.UUID]
) -> None:
    a, b = two_tenants
    with database.transaction(a) as conn:
        names = [r["name"] for r in conn.execute("SELECT name FROM sources").fetchall()]
        assert names == ["alpha-source"]
        assert conn.execute("SELECT count(*) AS n FROM events").fetchone() == {"n": 1}
        by_id = conn.execute("SELECT count(*) AS n FROM sources WHERE tenant_id = %s", (b,))
        assert by_id.fetchone() == {"n": 0}
        slugs = [r["slug"] for r in conn.execute("SELECT slug FROM tenants").fetchall()]
        assert slugs == ["tenant-a"]


def test_writes_into_another_tenant_are_refused(
    database: Database, two_tenants: tuple[uuid.UUID, uuid.UUID]
) -> None:
    a, b = two_tenants
    with pytest.raises(psycopg.errors.InsufficientPrivilege), database.transaction(a) as conn:
        conn.execute(
            "INSERT INTO sources (tenant_id, kind, name) VALUES (%s, 'upload', 'spoof')", (b,)
        )
    with database.transaction(a) as conn:
        updated = conn.execute("UPDATE sources SET name = 'x' WHERE tenant_id = %s", (b,))
        assert updated.rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE sources SET tenant_id = %s", (b,))


def test_tenant_binding_cannot_be_changed_from_sql(
    database: Database, two_tenants: tuple[uuid.UUID, uuid.UUID], settings: object
) -> None:
    a, b = two_tenants
    from grounded.db import migrate

    key = migrate.bind_key(settings)  # type: ignore[arg-type]
    # Rebinding in the same transaction is refused, even with the right key.
    with pytest.raises(psycopg.errors.InsufficientPrivilege), database.transaction(a) as conn:
        conn.execute("SELECT grounded_private.bind_tenant(%s, %s)", (b, key))
    # A guessed key is refused.
    with database.unscoped() as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("SELECT grounded_private.bind_tenant(%s, 'guess')", (b,))
    # Settings a query can change have no effect on visibility.
    with database.transaction(a) as conn:
        for name in ("grounded.tenant_id", "app.tenant_id", "app.current_tenant"):
            conn.execute("SELECT set_config(%s, %s, true)", (name, str(b)))
        names = [r["name"] for r in conn.execute("SELECT name FROM sources").fetchall()]
        assert names == ["alpha-source"]
    # The binding table itself is out of reach.
    with pytest.raises(psycopg.errors.InsufficientPrivilege), database.transaction(a) as conn:
        conn.execute("UPDATE grounded_private.tx_tenant SET tenant_id = %s", (b,))
    # Escalation paths are closed.
    for statement in (
        "SET ROLE postgres",
        "ALTER TABLE sources DISABLE ROW LEVEL SECURITY",
        "ALTER TABLE sources NO FORCE ROW LEVEL SECURITY",
        "DROP POLICY tenant_isolation ON sources",
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege), database.transaction(a) as conn:
            conn.execute(statement)


def test_commit_inside_sql_leaves_the_next_transaction_unbound(
    db_urls: DatabaseUrls, two_tenants: tuple[uuid.UUID, uuid.UUID], settings: object
) -> None:
    """Generated SQL that ends our transaction and starts its own sees no tenant rows."""
    a, _ = two_tenants
    from grounded.db import migrate

    key = migrate.bind_key(settings)  # type: ignore[arg-type]
    with psycopg.connect(db_urls.app, autocommit=True) as conn:
        conn.execute("BEGIN")
        conn.execute("SELECT grounded_private.bind_tenant(%s, %s)", (a, key))
        assert conn.execute("SELECT count(*) FROM sources").fetchone() == (1,)
        conn.execute("COMMIT; BEGIN")
        assert conn.execute("SELECT count(*) FROM sources").fetchone() == (0,)
        conn.execute("ROLLBACK")


def test_unbound_transactions_see_nothing(
    database: Database, two_tenants: tuple[uuid.UUID, uuid.UUID]
) -> None:
    with database.unscoped() as conn:
        for table in TENANT_TABLES:
            row = conn.execute(f"SELECT count(*) AS n FROM {table}").fetchone()
            assert row == {"n": 0}, table


def test_events_are_append_only(
    database: Database, owner: psycopg.Connection, two_tenants: tuple[uuid.UUID, uuid.UUID]
) -> None:
    a, _ = two_tenants
    for statement in ("UPDATE events SET action = 'forged'", "DELETE FROM events"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege), database.transaction(a) as conn:
            conn.execute(statement)
    # Even the owner (a superuser here) is stopped by the trigger.
    for statement in (
        "UPDATE events SET action = 'forged'",
        "DELETE FROM events",
        "TRUNCATE events",
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            owner.execute(statement)
    assert owner.execute("SELECT count(*) FROM events").fetchone() == (2,)
