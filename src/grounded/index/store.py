"""Writing derived rows: one segment of entries, and its vectors in the model's table.

Entries and vectors are inserted a few thousand rows per statement (COPY is
refused under row-level security), because row-by-row inserts would dominate
build time at 100k units. Both happen inside the caller's transaction: a failure or a killed
process leaves nothing behind, and the snapshot that lists the segment is
only marked ready afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

import numpy as np
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.types.json import Jsonb

from grounded.db import Connection
from grounded.index.embedder import Vectors

_BATCH = 2000


@dataclass(frozen=True)
class EntryRow:
    unit_kind: str
    unit_id: str
    deleted: bool
    document_id: str | None
    row_hash: str
    acl_groups: Sequence[str]
    review_state: str | None
    confidence: str
    category: str | None
    language: str | None
    terms: Sequence[str]
    weights: Sequence[float]
    vector_id: int | None = None  # an existing vector row this entry reuses


def vector_table(conn: Connection, model: str, dim: int) -> str:
    """The table of (model, dim), created on first use by the owner-defined function."""
    row = conn.execute(
        "SELECT grounded_private.ensure_vector_table(%s, %s) AS t", (model, dim)
    ).fetchone()
    assert row is not None
    return str(row["t"])


def write_entries(
    conn: Connection, tenant_id: UUID, segment_id: UUID, rows: Sequence[EntryRow]
) -> dict[tuple[str, str], int]:
    """Insert the segment's entries in batches; returns (kind, unit id) -> entry id.

    COPY is refused under row-level security, so each batch is one INSERT over
    ``jsonb_to_recordset`` (arrays included), a few thousand rows a statement.
    """
    ids: dict[tuple[str, str], int] = {}
    for lo in range(0, len(rows), _BATCH):
        batch = [
            {
                "unit_kind": r.unit_kind,
                "unit_id": r.unit_id,
                "deleted": r.deleted,
                "document_id": r.document_id,
                "row_hash": r.row_hash,
                "acl_groups": list(r.acl_groups),
                "review_state": r.review_state,
                "confidence": r.confidence,
                "category": r.category,
                "language": r.language,
                "terms": list(r.terms),
                "weights": [float(w) for w in r.weights],
                "length": float(sum(r.weights)),
                "vector_id": r.vector_id,
            }
            for r in rows[lo : lo + _BATCH]
        ]
        found = conn.execute(
            "INSERT INTO index_entries (tenant_id, segment_id, unit_kind, unit_id, deleted,"
            " document_id, row_hash, acl_groups, review_state, confidence, category, language,"
            " terms, weights, length, vector_id)"
            " SELECT %s, %s, x.unit_kind, x.unit_id, x.deleted, x.document_id, x.row_hash,"
            " x.acl_groups, x.review_state, x.confidence, x.category, x.language, x.terms,"
            " x.weights, x.length, x.vector_id FROM jsonb_to_recordset(%s) AS x(unit_kind text,"
            " unit_id uuid,"
            " deleted boolean, document_id uuid, row_hash text, acl_groups text[],"
            " review_state text, confidence text, category text, language text, terms text[],"
            " weights real[], length real, vector_id bigint) RETURNING id, unit_kind, unit_id",
            (tenant_id, segment_id, Jsonb(batch)),
        ).fetchall()
        ids.update({(f["unit_kind"], str(f["unit_id"])): int(f["id"]) for f in found})
    return ids


def write_vectors(
    conn: Connection, table: str, tenant_id: UUID, entry_ids: Sequence[int], vectors: Vectors
) -> None:
    """Insert new vectors keyed by their entries, and point those entries at them.

    HNSW is maintained on insert, which is most of a build's time; reused
    vectors (same unit, same content) are never inserted again.
    """
    if not entry_ids:
        return
    conn.execute("UPDATE index_entries SET vector_id = id WHERE id = ANY(%s)", (list(entry_ids),))
    register_vector(conn)
    statement = sql.SQL(
        "INSERT INTO {} (entry_id, tenant_id, embedding)"
        " SELECT e, %s, v FROM unnest(%s::bigint[], %s::vector[]) AS t(e, v)"
    ).format(sql.Identifier(table))
    for lo in range(0, len(entry_ids), _BATCH):
        part = np.asarray(vectors[lo : lo + _BATCH], dtype=np.float32)
        conn.execute(statement, (tenant_id, list(entry_ids[lo : lo + _BATCH]), list(part)))


def collect_garbage(conn: Connection, tables: Sequence[str]) -> int:
    """Delete this tenant's vector rows no entry points at any more."""
    removed = 0
    for table in tables:
        cur = conn.execute(
            sql.SQL(
                "DELETE FROM {} v WHERE NOT EXISTS"
                " (SELECT 1 FROM index_entries e WHERE e.vector_id = v.entry_id)"
            ).format(sql.Identifier(table))
        )
        removed += cur.rowcount
    return removed
