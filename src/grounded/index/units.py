"""Canonical rows as retrievable units: chunks of live documents, and knowledge items.

Decision (issue 7, seed 002): knowledge items are indexed as units of their
own kind (``unit_kind = 'item'``) beside chunks (``'chunk'``), in the same
entry shape: id, document, text, title/context line, language, ACL groups,
review state, confidence, category. Retrieval therefore handles one record
shape and can filter on the review corpus (items) without synthetic
documents. Chunks inherit ACL groups, category and confidence from their
document (``metadata.category`` / ``metadata.confidence``); items inherit
the ACL groups of the document they cite, if any.

Only live rows are units: documents not soft-deleted, child chunks of the
current version (parents are context for small-to-big, not retrieval units),
items not soft-deleted. Everything here is read in the caller's
tenant-bound transaction, so row-level security scopes it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import numpy as np
import numpy.typing as npt

from grounded.db import Connection
from grounded.knowledge.confidence import effective

_CHUNKS = """
SELECT 'chunk' AS kind, c.id, c.document_id, c.content_sha256 AS content_hash,
       d.title, c.context_line, c.language, d.acl_groups, NULL::text AS review_state,
       d.metadata->>'confidence' AS confidence, d.metadata->>'category' AS category,
       c.created_at {heavy_chunk}
FROM chunks c JOIN documents d ON d.id = c.document_id
WHERE d.deleted_at IS NULL AND c.document_version_id = d.current_version_id
  AND c.role = 'child' {where}
"""
_ITEMS = """
SELECT 'item' AS kind, i.id, i.document_id,
       encode(sha256(convert_to(i.body, 'UTF8')), 'hex') AS content_hash,
       NULL::text AS title, NULL::text AS context_line, NULL::text AS language,
       coalesce(d.acl_groups, '{{}}') AS acl_groups, i.review_state, i.confidence, i.category,
       i.created_at {heavy_item}
FROM knowledge_items i LEFT JOIN documents d ON d.id = i.document_id AND d.deleted_at IS NULL
WHERE i.deleted_at IS NULL {where}
"""


@dataclass(frozen=True)
class Unit:
    """One retrievable unit as the index sees it (text only when loaded heavy)."""

    kind: str
    id: UUID
    document_id: UUID | None
    content_hash: str
    title: str | None
    context_line: str | None
    language: str | None
    acl_groups: tuple[str, ...]
    review_state: str | None
    confidence: str
    category: str | None
    created_at: datetime
    text: str | None = None
    embedding_model: str | None = None
    embedding: str | None = None  # pgvector text form, parsed on demand

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, str(self.id))

    @property
    def row_hash(self) -> str:
        """Content and every attribute the index stores: a change means re-index."""
        parts = [
            self.kind,
            str(self.id),
            str(self.document_id),
            self.content_hash,
            self.title or "",
            self.context_line or "",
            self.language or "",
            ",".join(self.acl_groups),
            self.review_state or "",
            self.confidence,
            self.category or "",
        ]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

    def vector(self, model: str, dim: int) -> npt.NDArray[np.float32] | None:
        """The chunk's stored embedding when it is of ``model`` and ``dim``."""
        if self.embedding is None or self.embedding_model != model:
            return None
        values = np.array(self.embedding.strip("[]").split(","), dtype=np.float32)
        return values if values.shape == (dim,) else None


def load_units(
    conn: Connection, *, heavy: bool, keys: Iterable[tuple[str, str]] | None = None
) -> list[Unit]:
    """Live units, optionally only ``keys``; ``heavy`` adds text and stored embeddings."""
    chunk_ids: list[str] | None = None
    item_ids: list[str] | None = None
    if keys is not None:
        chunk_ids, item_ids = [], []
        for kind, uid in keys:
            (chunk_ids if kind == "chunk" else item_ids).append(uid)
    units: list[Unit] = []
    for template, ids, alias in ((_CHUNKS, chunk_ids, "c"), (_ITEMS, item_ids, "i")):
        if ids is not None and not ids:
            continue
        query = template.format(
            heavy_chunk=", c.text, c.embedding_model, c.embedding::text AS embedding"
            if heavy
            else "",
            heavy_item=", i.body AS text, NULL AS embedding_model, NULL AS embedding"
            if heavy
            else "",
            where=f"AND {alias}.id = ANY(%(ids)s::uuid[])" if ids is not None else "",
        )
        params: dict[str, Any] = {"ids": ids} if ids is not None else {}
        for row in conn.execute(query, params):
            units.append(_unit(row))
    return units


def _unit(row: dict[str, Any]) -> Unit:
    return Unit(
        kind=row["kind"],
        id=row["id"],
        document_id=row["document_id"],
        content_hash=row["content_hash"],
        title=row["title"],
        context_line=row["context_line"],
        language=row["language"],
        acl_groups=tuple(sorted(row["acl_groups"] or ())),
        review_state=row["review_state"],
        confidence=effective(row["confidence"]),
        category=row["category"],
        created_at=row["created_at"],
        text=row.get("text"),
        embedding_model=row.get("embedding_model"),
        embedding=row.get("embedding"),
    )


def fingerprint(row_hashes: Iterable[tuple[tuple[str, str], str]]) -> str:
    """Corpus fingerprint: sha256 over the sorted (kind, id, row hash) of every unit."""
    digest = hashlib.sha256()
    for (kind, uid), row_hash in sorted(row_hashes):
        digest.update(f"{kind}:{uid}:{row_hash}\n".encode())
    return digest.hexdigest()


def catalog_revision(conn: Connection, tenant_id: UUID, *, lock: str | None = None) -> int:
    """The tenant's catalog revision; ``lock`` = 'SHARE' or 'UPDATE' takes its row lock.

    Catalog writes bump this row under its lock (knowledge.history), so holding
    it FOR SHARE while reading canonical rows gives a consistent corpus at one
    revision, and FOR UPDATE serialises a publish with every catalog write.
    """
    if lock is not None:
        conn.execute(
            "INSERT INTO catalog_revisions (tenant_id, revision) VALUES (%s, 0) "
            "ON CONFLICT (tenant_id) DO NOTHING",
            (tenant_id,),
        )
    suffix = {"SHARE": " FOR SHARE", "UPDATE": " FOR UPDATE", None: ""}[lock]
    row = conn.execute(
        f"SELECT revision FROM catalog_revisions WHERE tenant_id = %s{suffix}", (tenant_id,)
    ).fetchone()
    return int(row["revision"]) if row else 0
