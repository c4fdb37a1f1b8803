"""The append-only event log and the per-tenant catalog revision.

Every knowledge write calls ``record`` in its own transaction: the event (who,
when, what, before/after snapshot), a bump of the tenant's catalog revision
(which serialises catalog writes per tenant and marks the live index stale),
and, for indexable entities, an ``index_outbox`` row. Either all of it commits
with the write, or none of it does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from uuid import UUID

from psycopg.types.json import Jsonb

from grounded.auth.principal import Principal
from grounded.db import Connection

INDEXED_ENTITIES = frozenset({"knowledge_item", "document"})


@dataclass(frozen=True)
class Event:
    id: int
    occurred_at: datetime
    actor_kind: str
    actor_id: UUID | None
    entity_type: str
    entity_id: UUID
    action: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


def _default(value: object) -> str:
    if isinstance(value, (UUID, datetime, date)):
        return str(value) if isinstance(value, UUID) else value.isoformat()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def snapshot(row: dict[str, Any] | None) -> Jsonb | None:
    """A JSON snapshot of a row (ids and times as strings)."""
    if row is None:
        return None
    return Jsonb(row, dumps=lambda obj: json.dumps(obj, default=_default))


def record(
    conn: Connection,
    principal: Principal,
    *,
    entity_type: str,
    entity_id: UUID,
    action: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    entity_version: int | None = None,
    index_op: str | None = None,
) -> int:
    """Append the event, bump the catalog revision, queue index work. Returns the revision."""
    conn.execute(
        "INSERT INTO events (tenant_id, actor_kind, actor_id, entity_type, entity_id, action,"
        " before, after) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (
            principal.tenant_id,
            principal.kind,
            principal.id,
            entity_type,
            entity_id,
            action,
            snapshot(before),
            snapshot(after),
        ),
    )
    revision = bump_catalog_revision(conn, principal)
    if index_op is not None and entity_type in INDEXED_ENTITIES:
        conn.execute(
            "INSERT INTO index_outbox (tenant_id, entity_type, entity_id, entity_version, op,"
            " catalog_revision) VALUES (%s, %s, %s, %s, %s, %s)",
            (principal.tenant_id, entity_type, entity_id, entity_version or 0, index_op, revision),
        )
    return revision


def bump_catalog_revision(conn: Connection, principal: Principal) -> int:
    """Increment the tenant's catalog revision under its row lock."""
    row = conn.execute(
        "INSERT INTO catalog_revisions AS c (tenant_id, revision) VALUES (%s, 1) "
        "ON CONFLICT (tenant_id) DO UPDATE SET revision = c.revision + 1, updated_at = now() "
        "RETURNING revision",
        (principal.tenant_id,),
    ).fetchone()
    assert row is not None
    return int(row["revision"])


def list_events(
    conn: Connection,
    *,
    entity_type: str | None,
    entity_id: UUID | None,
    after_id: int = 0,
    limit: int = 100,
) -> list[Event]:
    """Events in the order they happened (by id), optionally for one entity."""
    clauses = ["id > %(after)s"]
    params: dict[str, Any] = {"after": after_id, "limit": limit}
    if entity_type is not None:
        clauses.append("entity_type = %(type)s")
        params["type"] = entity_type
    if entity_id is not None:
        clauses.append("entity_id = %(id)s")
        params["id"] = entity_id
    rows = conn.execute(
        "SELECT id, occurred_at, actor_kind, actor_id, entity_type, entity_id, action, before,"
        f" after FROM events WHERE {' AND '.join(clauses)} ORDER BY id LIMIT %(limit)s",
        params,
    ).fetchall()
    return [Event(**row) for row in rows]
