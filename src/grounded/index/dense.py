"""Filtered nearest-neighbour search that knows whether it is complete.

pgvector 0.6 has no iterative index scans: an HNSW scan yields at most
``hnsw.ef_search`` rows and filters (row-level security for the tenant, and
our eligibility) apply afterwards, so a selective filter silently returns
fewer rows. The policy here never does that (seed 000 ADR-016):

1. eligible set small (``<= exact_vector_max``): exact search (index scans
   disabled, so PostgreSQL computes every eligible distance) - provably the
   eligible nearest neighbours;
2. otherwise HNSW from ``hnsw_ef_search`` (100), widened x4 up to ``hnsw_ef_search_max``
   until k eligible rows come back (``method = 'hnsw'``, approximate);
3. still short: exact search if the eligible set is at most 5x the exact
   limit, else the result is returned marked ``complete = False`` with the
   reason, for the caller (and its receipt) to see.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pgvector.psycopg import register_vector
from psycopg import sql

from grounded.db import Connection
from grounded.index.bm25 import Mask
from grounded.index.embedder import Vectors
from grounded.index.loaded import LoadedSnapshot
from grounded.index.settings import IndexSettings


@dataclass(frozen=True)
class DenseHits:
    hits: list[tuple[int, float]]  # (position, cosine similarity), best first
    complete: bool
    method: str  # exact | hnsw | none
    ef_search: int | None = None
    reason: str | None = None


def table_for(conn: Connection, model: str, dim: int) -> str | None:
    row = conn.execute(
        "SELECT table_name FROM index_vector_spaces WHERE model = %s AND dim = %s", (model, dim)
    ).fetchone()
    return str(row["table_name"]) if row else None


def search(
    conn: Connection,
    loaded: LoadedSnapshot,
    mask: Mask,
    query: Vectors,
    k: int,
    settings: IndexSettings,
) -> DenseHits:
    snap = loaded.snapshot
    if snap.embedding_model is None or snap.embedding_dim is None:
        return DenseHits([], False, "none", reason="this snapshot has no vectors")
    if query.shape != (snap.embedding_dim,):
        return DenseHits([], False, "none", reason="query vector has the wrong dimension")
    table = table_for(conn, snap.embedding_model, snap.embedding_dim)
    eligible = int(np.count_nonzero(mask))
    if eligible == 0 or table is None or k <= 0:
        return DenseHits([], eligible == 0, "exact", reason=None if eligible == 0 else "no table")
    register_vector(conn)
    want = min(k, eligible)
    if eligible <= settings.exact_vector_max:
        return _exact(conn, loaded, mask, query, k, table)
    ef = max(settings.hnsw_ef_search, 4 * k)
    hits: list[tuple[int, float]] = []
    while True:
        ef = min(ef, settings.hnsw_ef_search_max)
        hits = _hnsw(conn, loaded, mask, query, ef, table)
        if len(hits) >= want:
            return DenseHits(hits[:k], True, "hnsw", ef_search=ef)
        if ef >= settings.hnsw_ef_search_max:
            break
        ef *= 4
    if eligible <= 5 * settings.exact_vector_max:
        return _exact(conn, loaded, mask, query, k, table)
    return DenseHits(
        hits[:k],
        False,
        "hnsw",
        ef_search=ef,
        reason=f"HNSW at ef_search={ef} found {len(hits)} of {want} eligible neighbours",
    )


def _order(
    loaded: LoadedSnapshot, rows: list[tuple[int, float]], mask: Mask
) -> list[tuple[int, float]]:
    hits = []
    for vector_id, distance in rows:
        position = loaded.position_of_vector.get(vector_id)
        if position is not None and mask[position]:
            hits.append((position, 1.0 - distance))
    hits.sort(key=lambda h: (-h[1], int(loaded.id_rank[h[0]])))
    return hits


def _exact(
    conn: Connection, loaded: LoadedSnapshot, mask: Mask, query: Vectors, k: int, table: str
) -> DenseHits:
    conn.execute("SET LOCAL enable_indexscan = off")
    rows = conn.execute(
        sql.SQL(
            "SELECT entry_id, embedding <=> %s AS d FROM {} WHERE entry_id = ANY(%s)"
            " ORDER BY d, entry_id LIMIT %s"
        ).format(sql.Identifier(table)),
        (query, loaded.vector_ids[mask & (loaded.vector_ids >= 0)].tolist(), k),
    ).fetchall()
    conn.execute("SET LOCAL enable_indexscan = on")
    hits = _order(loaded, [(int(r["entry_id"]), float(r["d"])) for r in rows], mask)
    return DenseHits(hits[:k], True, "exact")


def _hnsw(
    conn: Connection, loaded: LoadedSnapshot, mask: Mask, query: Vectors, ef: int, table: str
) -> list[tuple[int, float]]:
    conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(ef)))
    rows = conn.execute(
        sql.SQL(
            "SELECT entry_id, embedding <=> %s AS d FROM {} ORDER BY embedding <=> %s LIMIT %s"
        ).format(sql.Identifier(table)),
        (query, query, ef),
    ).fetchall()
    return _order(loaded, [(int(r["entry_id"]), float(r["d"])) for r in rows], mask)
