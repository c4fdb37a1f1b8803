"""The index's read API: candidates for a principal, from one published snapshot.

The retriever (issue 8) calls ``IndexReader.candidates``: both candidate
lists come from the *same* live snapshot, read in one read-only transaction,
with the eligibility mask computed once (filters before IDF, seed 000
ADR-016) and the snapshot's generation, fingerprint and tokeniser ids returned
for the receipt. Nothing here writes: an old-format snapshot is answered by a
scan of canonical rows (BM25 over the eligible units, built in memory and
thrown away), and its dense list is reported unavailable, not empty.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grounded.auth.principal import Principal
from grounded.db import Connection, Database
from grounded.errors import InvalidInput, NotFound
from grounded.index import dense, snapshots
from grounded.index.bm25 import Bm25Params, top_k
from grounded.index.eligibility import EligibilitySpec
from grounded.index.embedder import Vectors
from grounded.index.entries import make_entry
from grounded.index.loaded import CACHE, LoadedSnapshot, SnapshotCache
from grounded.index.settings import IndexSettings
from grounded.index.tokenize import analyzer
from grounded.index.units import catalog_revision, load_units


@dataclass(frozen=True)
class Candidate:
    rank: int  # from 1
    unit_kind: str  # chunk | item
    unit_id: str
    document_id: str | None
    score: float  # raw BM25 score or cosine similarity; never added across lists


@dataclass(frozen=True)
class SnapshotInfo:
    """What a receipt needs to name the index that produced a ranking."""

    id: str
    generation: int
    corpus_fingerprint: str | None
    catalog_revision: int
    current_catalog_revision: int
    stale: bool
    format_version: int
    mode: str  # index | scan (old format, read-only fallback)
    tokenizers: dict[str, str]
    bm25: dict[str, Any]
    embedding_model: str | None
    embedding_dim: int | None


@dataclass(frozen=True)
class Candidates:
    snapshot: SnapshotInfo
    eligible: int
    query_terms: list[str]
    lexical: list[Candidate]
    dense: list[Candidate] = field(default_factory=list)
    dense_complete: bool = False
    dense_method: str = "none"
    dense_reason: str | None = None


class IndexReader:
    """Read side of the index; one per process (it shares the snapshot cache)."""

    def __init__(
        self, database: Database, settings: IndexSettings, cache: SnapshotCache = CACHE
    ) -> None:
        self.database = database
        self.settings = settings
        self.cache = cache
        cache.capacity = settings.cache_snapshots

    def candidates(
        self,
        principal: Principal,
        query: str,
        spec: EligibilitySpec | None = None,
        *,
        k: int = 50,
        query_vector: Vectors | None = None,
        query_model: str | None = None,
        language: str | None = None,
    ) -> Candidates:
        """BM25 (and, given a query vector, dense) candidates over the eligible corpus.

        Raises NotFound (``details.state = 'no_index'``) when nothing is published.
        """
        spec = spec or EligibilitySpec()
        if k < 1 or k > 1000:
            raise InvalidInput("k must be between 1 and 1000", details={"field": "k"})
        with self.database.transaction(principal.tenant_id) as conn:
            conn.execute("SET TRANSACTION READ ONLY")
            snap = snapshots.live(conn)
            if snap is None:
                raise NotFound(
                    "no index has been published for this tenant yet",
                    details={"state": "no_index"},
                )
            revision = catalog_revision(conn, principal.tenant_id)
            params = Bm25Params(**(snap.config.get("bm25") or _params(self.settings).as_dict()))
            if snap.format_version == snapshots.FORMAT_VERSION:
                loaded, mode = self.cache.get(conn, principal.tenant_id, snap), "index"
            else:
                loaded, mode = _scan(conn, principal, snap, params), "scan"
            mask = loaded.eligible(principal, spec)
            terms = analyzer().query_terms(query, language)
            positions, scores = loaded.postings.scores(terms, mask, params)
            lexical = [
                _candidate(loaded, rank, position, score)
                for rank, (position, score) in enumerate(
                    top_k(positions, scores, loaded.id_rank, k), start=1
                )
            ]
            info = SnapshotInfo(
                id=str(snap.id),
                generation=snap.generation,
                corpus_fingerprint=snap.corpus_fingerprint,
                catalog_revision=snap.catalog_revision,
                current_catalog_revision=revision,
                stale=revision != snap.catalog_revision,
                format_version=snap.format_version,
                mode=mode,
                tokenizers=dict(snap.config.get("tokenizers") or analyzer().ids),
                bm25=params.as_dict(),
                embedding_model=snap.embedding_model,
                embedding_dim=snap.embedding_dim,
            )
            result = Candidates(info, int(np.count_nonzero(mask)), terms, lexical)
            if query_vector is None:
                return result
            if mode == "scan":
                return _with_dense(result, [], False, "none", "old index format: rebuild it")
            if query_model is not None and query_model != snap.embedding_model:
                return _with_dense(
                    result,
                    [],
                    False,
                    "none",
                    f"query embedded with {query_model}, snapshot uses {snap.embedding_model}",
                )
            hits = dense.search(
                conn, loaded, mask, np.asarray(query_vector, np.float32), k, self.settings
            )
            found = [
                _candidate(loaded, rank, position, score)
                for rank, (position, score) in enumerate(hits.hits, start=1)
            ]
            return _with_dense(result, found, hits.complete, hits.method, hits.reason)


def _with_dense(
    result: Candidates, found: list[Candidate], complete: bool, method: str, reason: str | None
) -> Candidates:
    return Candidates(
        result.snapshot,
        result.eligible,
        result.query_terms,
        result.lexical,
        found,
        complete,
        method,
        reason,
    )


def _candidate(loaded: LoadedSnapshot, rank: int, position: int, score: float) -> Candidate:
    ref = loaded.ref(position)
    return Candidate(rank, ref.kind, ref.id, ref.document_id, score)


def _params(settings: IndexSettings) -> Bm25Params:
    return Bm25Params(k1=settings.bm25_k1, b=settings.bm25_b, title_weight=settings.title_weight)


def _scan(
    conn: Connection, principal: Principal, snap: snapshots.Snapshot, params: Bm25Params
) -> LoadedSnapshot:
    """Old-format fallback: index canonical rows in memory only (seed 000)."""
    rows: list[dict[str, Any]] = []
    for position, unit in enumerate(load_units(conn, heavy=True)):
        entry = make_entry(unit, params)
        rows.append(
            {
                "id": -1 - position,
                "segment_id": snap.id,
                "unit_kind": entry.unit_kind,
                "unit_id": entry.unit_id,
                "deleted": False,
                "document_id": entry.document_id,
                "row_hash": entry.row_hash,
                "acl_groups": list(entry.acl_groups),
                "review_state": entry.review_state,
                "confidence": entry.confidence,
                "category": entry.category,
                "terms": list(entry.terms),
                "weights": list(entry.weights),
            }
        )
    shaped = dataclasses.replace(snap, segments=(snap.id,))
    return LoadedSnapshot(shaped, rows, principal.tenant_id)
