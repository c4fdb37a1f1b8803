"""Documents and their versions.

A document is the stable identity of one file or record; each upload of new
bytes is a new version (content-addressed by SHA-256: the same bytes again
make no new version). Access may be restricted to ACL groups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.errors import Conflict, InvalidInput, NotFound
from grounded.knowledge import history
from grounded.knowledge.paging import Page, keyset_page
from grounded.knowledge.rows import check_text, lock_for_change, public, require_live, set_deleted

_COLUMNS = (
    "id, source_id, external_id, title, acl_groups, metadata, current_version_id, status,"
    " version, created_by, created_at, updated_at, deleted_at"
)
_VERSION_COLUMNS = (
    "id, document_id, version_no, content_sha256, byte_size, mime_type, filename, created_by,"
    " created_at"
)
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_GROUP = re.compile(r"^[\w.:@-]{1,100}$")


@dataclass(frozen=True)
class Document:
    id: UUID
    source_id: UUID | None
    external_id: str | None
    title: str
    acl_groups: list[str]
    metadata: dict[str, Any]
    current_version_id: UUID | None
    status: str
    version: int
    created_by: UUID | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None


@dataclass(frozen=True)
class DocumentVersion:
    id: UUID
    document_id: UUID
    version_no: int
    content_sha256: str
    byte_size: int
    mime_type: str | None
    filename: str | None
    created_by: UUID | None
    created_at: datetime


def check_groups(groups: list[str] | tuple[str, ...]) -> list[str]:
    bad = [g for g in groups if not _GROUP.match(g)]
    if bad:
        raise InvalidInput(
            "acl_groups: names are 1-100 letters, digits or ._:@-", details={"field": "acl_groups"}
        )
    return sorted(set(groups))


class Documents:
    def __init__(self, database: Database) -> None:
        self._db = database

    def create(
        self,
        principal: Principal,
        *,
        title: str,
        source_id: UUID | None = None,
        external_id: str | None = None,
        acl_groups: tuple[str, ...] = (),
        metadata: dict[str, Any] | None = None,
    ) -> Document:
        check_text(title, "title", 1000)
        groups = check_groups(acl_groups)
        with self._db.transaction(principal.tenant_id) as conn:
            require_live(conn, "sources", source_id, "source_id")
            if external_id is not None:
                clash = conn.execute(
                    "SELECT id FROM documents WHERE external_id = %s AND deleted_at IS NULL",
                    (external_id,),
                ).fetchone()
                if clash is not None:
                    raise Conflict(
                        f"a live document already has external_id {external_id!r}",
                        details={"field": "external_id", "id": str(clash["id"])},
                    )
            row = conn.execute(
                f"INSERT INTO documents (tenant_id, source_id, external_id, title, acl_groups,"
                f" metadata, created_by) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                f" RETURNING {_COLUMNS}",
                (
                    principal.tenant_id,
                    source_id,
                    external_id,
                    title,
                    groups,
                    history.snapshot(metadata or {}),
                    principal.id,
                ),
            ).fetchone()
            assert row is not None
            history.record(
                conn,
                principal,
                entity_type="document",
                entity_id=row["id"],
                action="created",
                before=None,
                after=row,
                entity_version=row["version"],
                index_op="upsert",
            )
        return Document(**row)

    def get(self, principal: Principal, document_id: UUID) -> Document:
        with self._db.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM documents WHERE id = %s AND deleted_at IS NULL",
                (document_id,),
            ).fetchone()
        if row is None:
            raise NotFound(f"document {document_id} not found", details={"id": str(document_id)})
        return Document(**row)

    def page(
        self,
        principal: Principal,
        *,
        cursor: str | None = None,
        limit: int = 50,
        include_deleted: bool = False,
    ) -> Page[Document]:
        with self._db.transaction(principal.tenant_id) as conn:
            rows, next_cursor = keyset_page(
                conn,
                "documents",
                _COLUMNS,
                [] if include_deleted else ["deleted_at IS NULL"],
                {},
                cursor=cursor,
                limit=limit,
            )
        return Page([Document(**r) for r in rows], next_cursor)

    def patch(
        self,
        principal: Principal,
        document_id: UUID,
        expected_version: int,
        *,
        title: str | None = None,
        acl_groups: tuple[str, ...] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Document:
        if title is not None:
            check_text(title, "title", 1000)
        groups = check_groups(acl_groups) if acl_groups is not None else None
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(conn, "documents", "document", document_id, expected_version)
            row = conn.execute(
                f"UPDATE documents SET title = %s, acl_groups = %s, metadata = %s,"
                f" version = version + 1, updated_at = now() WHERE id = %s RETURNING {_COLUMNS}",
                (
                    title or before["title"],
                    groups if groups is not None else before["acl_groups"],
                    history.snapshot(metadata if metadata is not None else before["metadata"]),
                    document_id,
                ),
            ).fetchone()
            assert row is not None
            history.record(
                conn,
                principal,
                entity_type="document",
                entity_id=document_id,
                action="patched",
                before=public(before),
                after=row,
                entity_version=row["version"],
                index_op="upsert",
            )
        return Document(**row)

    def delete(self, principal: Principal, document_id: UUID, expected_version: int) -> Document:
        """Tombstone a document no live knowledge item refers to (else Conflict with ids)."""
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(conn, "documents", "document", document_id, expected_version)
            referrers = conn.execute(
                "SELECT id FROM knowledge_items WHERE document_id = %s AND deleted_at IS NULL "
                "ORDER BY id",
                (document_id,),
            ).fetchall()
            if referrers:
                raise Conflict(
                    f"document {document_id} is referenced by {len(referrers)} live knowledge "
                    "items; delete or move them first",
                    details={
                        "referenced_by": [
                            {"type": "knowledge_item", "id": str(r["id"])} for r in referrers
                        ]
                    },
                )
            row = set_deleted(conn, "documents", _COLUMNS, document_id, deleted=True)
            history.record(
                conn,
                principal,
                entity_type="document",
                entity_id=document_id,
                action="deleted",
                before=public(before),
                after=row,
                entity_version=row["version"],
                index_op="delete",
            )
        return Document(**row)

    def restore(self, principal: Principal, document_id: UUID, expected_version: int) -> Document:
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(
                conn, "documents", "document", document_id, expected_version, allow_deleted=True
            )
            if before["deleted_at"] is None:
                return Document(**public(before))
            require_live(conn, "sources", before["source_id"], "source_id")
            row = set_deleted(conn, "documents", _COLUMNS, document_id, deleted=False)
            history.record(
                conn,
                principal,
                entity_type="document",
                entity_id=document_id,
                action="restored",
                before=public(before),
                after=row,
                entity_version=row["version"],
                index_op="upsert",
            )
        return Document(**row)

    def add_version(
        self,
        principal: Principal,
        document_id: UUID,
        *,
        content_sha256: str,
        byte_size: int,
        mime_type: str | None = None,
        filename: str | None = None,
    ) -> tuple[DocumentVersion, bool]:
        """Record new bytes for a document. Returns (version, created): the same bytes as
        the current version make no new version."""
        if not _SHA256.match(content_sha256):
            raise InvalidInput(
                "content_sha256 must be 64 lowercase hex digits",
                details={"field": "content_sha256"},
            )
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(conn, "documents", "document", document_id, None)
            if before["current_version_id"] is not None:
                current = conn.execute(
                    f"SELECT {_VERSION_COLUMNS} FROM document_versions WHERE id = %s",
                    (before["current_version_id"],),
                ).fetchone()
                if current is not None and current["content_sha256"] == content_sha256:
                    return DocumentVersion(**current), False
            row = conn.execute(
                f"""INSERT INTO document_versions (tenant_id, document_id, version_no,
                    content_sha256, byte_size, mime_type, filename, created_by)
                    SELECT %s, %s, coalesce(max(version_no), 0) + 1, %s, %s, %s, %s, %s
                    FROM document_versions WHERE document_id = %s
                    RETURNING {_VERSION_COLUMNS}""",
                (
                    principal.tenant_id,
                    document_id,
                    content_sha256,
                    byte_size,
                    mime_type,
                    filename,
                    principal.id,
                    document_id,
                ),
            ).fetchone()
            assert row is not None
            after = conn.execute(
                f"UPDATE documents SET current_version_id = %s, version = version + 1,"
                f" updated_at = now() WHERE id = %s RETURNING {_COLUMNS}",
                (row["id"], document_id),
            ).fetchone()
            assert after is not None
            history.record(
                conn,
                principal,
                entity_type="document_version",
                entity_id=row["id"],
                action="created",
                before=None,
                after=row,
            )
            history.record(
                conn,
                principal,
                entity_type="document",
                entity_id=document_id,
                action="new_version",
                before=public(before),
                after=after,
                entity_version=after["version"],
                index_op="upsert",
            )
        return DocumentVersion(**row), True

    def versions(self, principal: Principal, document_id: UUID) -> list[DocumentVersion]:
        self.get(principal, document_id)
        with self._db.transaction(principal.tenant_id) as conn:
            rows = conn.execute(
                f"SELECT {_VERSION_COLUMNS} FROM document_versions WHERE document_id = %s "
                "ORDER BY version_no",
                (document_id,),
            ).fetchall()
        return [DocumentVersion(**r) for r in rows]
