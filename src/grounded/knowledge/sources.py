"""Sources: where knowledge comes from (an upload, a URL, a system, a records import)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal
from uuid import UUID

from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.errors import Conflict, InvalidInput, NotFound
from grounded.knowledge import history
from grounded.knowledge.paging import Page, keyset_page
from grounded.knowledge.rows import check_text, lock_for_change, public, set_deleted

SourceKind = Literal["upload", "url", "system", "records"]
KINDS: Final = ("upload", "url", "system", "records")
_COLUMNS = "id, kind, name, uri, metadata, version, created_by, created_at, updated_at, deleted_at"


@dataclass(frozen=True)
class Source:
    id: UUID
    kind: str
    name: str
    uri: str | None
    metadata: dict[str, Any]
    version: int
    created_by: UUID | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None


class Sources:
    def __init__(self, database: Database) -> None:
        self._db = database

    def create(
        self,
        principal: Principal,
        *,
        kind: str,
        name: str,
        uri: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Source:
        if kind not in KINDS:
            raise InvalidInput(f"kind must be one of {', '.join(KINDS)}", details={"field": "kind"})
        check_text(name, "name", 500)
        if uri is not None:
            check_text(uri, "uri", 4000)
        with self._db.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                f"INSERT INTO sources (tenant_id, kind, name, uri, metadata, created_by) "
                f"VALUES (%s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}",
                (
                    principal.tenant_id,
                    kind,
                    name,
                    uri,
                    history.snapshot(metadata or {}),
                    principal.id,
                ),
            ).fetchone()
            assert row is not None
            history.record(
                conn,
                principal,
                entity_type="source",
                entity_id=row["id"],
                action="created",
                before=None,
                after=row,
            )
        return Source(**row)

    def get(self, principal: Principal, source_id: UUID) -> Source:
        with self._db.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM sources WHERE id = %s AND deleted_at IS NULL",
                (source_id,),
            ).fetchone()
        if row is None:
            raise NotFound(f"source {source_id} not found", details={"id": str(source_id)})
        return Source(**row)

    def page(
        self,
        principal: Principal,
        *,
        cursor: str | None = None,
        limit: int = 50,
        include_deleted: bool = False,
    ) -> Page[Source]:
        with self._db.transaction(principal.tenant_id) as conn:
            rows, next_cursor = keyset_page(
                conn,
                "sources",
                _COLUMNS,
                [] if include_deleted else ["deleted_at IS NULL"],
                {},
                cursor=cursor,
                limit=limit,
            )
        return Page([Source(**r) for r in rows], next_cursor)

    def patch(
        self,
        principal: Principal,
        source_id: UUID,
        expected_version: int,
        *,
        name: str | None = None,
        uri: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Source:
        if name is not None:
            check_text(name, "name", 500)
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(conn, "sources", "source", source_id, expected_version)
            row = conn.execute(
                f"UPDATE sources SET name = %s, uri = %s, metadata = %s, version = version + 1,"
                f" updated_at = now() WHERE id = %s RETURNING {_COLUMNS}",
                (
                    name or before["name"],
                    uri if uri is not None else before["uri"],
                    history.snapshot(metadata if metadata is not None else before["metadata"]),
                    source_id,
                ),
            ).fetchone()
            assert row is not None
            history.record(
                conn,
                principal,
                entity_type="source",
                entity_id=source_id,
                action="patched",
                before=public(before),
                after=row,
            )
        return Source(**row)

    def delete(self, principal: Principal, source_id: UUID, expected_version: int) -> Source:
        """Tombstone a source nothing live refers to; otherwise Conflict naming the referrers."""
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(conn, "sources", "source", source_id, expected_version)
            referrers = conn.execute(
                "SELECT 'document' AS type, id FROM documents "
                "WHERE source_id = %(id)s AND deleted_at IS NULL "
                "UNION ALL SELECT 'knowledge_item', id FROM knowledge_items "
                "WHERE source_id = %(id)s AND deleted_at IS NULL ORDER BY 1, 2",
                {"id": source_id},
            ).fetchall()
            if referrers:
                raise Conflict(
                    f"source {source_id} is referenced by {len(referrers)} live records; "
                    "delete or move them first",
                    details={
                        "referenced_by": [
                            {"type": r["type"], "id": str(r["id"])} for r in referrers
                        ]
                    },
                )
            row = set_deleted(conn, "sources", _COLUMNS, source_id, deleted=True)
            history.record(
                conn,
                principal,
                entity_type="source",
                entity_id=source_id,
                action="deleted",
                before=public(before),
                after=row,
            )
        return Source(**row)

    def restore(self, principal: Principal, source_id: UUID, expected_version: int) -> Source:
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(
                conn, "sources", "source", source_id, expected_version, allow_deleted=True
            )
            if before["deleted_at"] is None:
                return Source(**public(before))
            row = set_deleted(conn, "sources", _COLUMNS, source_id, deleted=False)
            history.record(
                conn,
                principal,
                entity_type="source",
                entity_id=source_id,
                action="restored",
                before=public(before),
                after=row,
            )
        return Source(**row)
