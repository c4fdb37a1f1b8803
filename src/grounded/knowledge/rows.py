"""Row helpers shared by the knowledge services: locking with optimistic checks."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from grounded.db import Connection
from grounded.errors import Conflict, InvalidInput, NotFound


def lock_for_change(
    conn: Connection,
    table: str,
    entity: str,
    id_: UUID,
    expected_version: int | None,
    *,
    allow_deleted: bool = False,
) -> dict[str, Any]:
    """Lock a row for update and check the version the caller read.

    A row of another tenant is invisible (row-level security), so it reads as
    missing: foreign and unknown ids give the same NotFound. A stale version
    gives Conflict with the current version, and nothing is written.
    """
    row = conn.execute(f"SELECT * FROM {table} WHERE id = %s FOR UPDATE", (id_,)).fetchone()
    if row is None or (row["deleted_at"] is not None and not allow_deleted):
        raise NotFound(f"{entity} {id_} not found", details={"id": str(id_)})
    if expected_version is not None and row["version"] != expected_version:
        raise Conflict(
            f"{entity} {id_} changed since you read it (you sent version {expected_version},"
            f" it is now {row['version']}); reload and retry",
            details={
                "id": str(id_),
                "expected_version": expected_version,
                "current_version": row["version"],
            },
        )
    return dict(row)


def require_live(conn: Connection, table: str, id_: UUID | None, field: str) -> None:
    """A reference named in a request must exist, be live, and belong to this tenant."""
    if id_ is None:
        return
    row = conn.execute(
        f"SELECT 1 FROM {table} WHERE id = %s AND deleted_at IS NULL FOR SHARE", (id_,)
    ).fetchone()
    if row is None:
        raise InvalidInput(f"{field}: no live record {id_}", details={"field": field})


def check_text(value: str, field: str, max_chars: int, *, required: bool = True) -> str:
    if required and not value.strip():
        raise InvalidInput(f"{field} must not be empty", details={"field": field})
    if len(value) > max_chars:
        raise InvalidInput(
            f"{field} is {len(value)} characters; the limit is {max_chars}",
            details={"field": field, "max_chars": max_chars},
        )
    if "\x00" in value:
        raise InvalidInput(f"{field} contains a NUL character", details={"field": field})
    return value


def public(row: dict[str, Any]) -> dict[str, Any]:
    """The row without its tenant id, as snapshots and responses show it."""
    return {k: v for k, v in row.items() if k != "tenant_id"}


def set_deleted(
    conn: Connection,
    table: str,
    columns: str,
    id_: UUID,
    *,
    deleted: bool,
    updated_by: UUID | None = None,
) -> dict[str, Any]:
    """Tombstone (or restore) one row, moving its version on; returns ``columns``.

    ``updated_by`` is recorded on tables that have that column (knowledge items).
    """
    actor = ", updated_by = %(actor)s" if updated_by is not None else ""
    row = conn.execute(
        f"UPDATE {table} SET deleted_at = CASE WHEN %(deleted)s THEN now() END,"
        f" version = version + 1, updated_at = now(){actor}"
        f" WHERE id = %(id)s RETURNING {columns}",
        {"deleted": deleted, "actor": updated_by, "id": id_},
    ).fetchone()
    assert row is not None
    return dict(row)
