"""One unit -> one derived entry: tokenised, weighted, with its filter attributes.

Shared by the builder and by the read-only scan fallback, so an old-format
snapshot is answered with exactly the scoring a fresh build would use.
"""

from __future__ import annotations

from grounded.index.bm25 import Bm25Params, weighted_terms
from grounded.index.store import EntryRow
from grounded.index.tokenize import analyzer
from grounded.index.units import Unit


def make_entry(unit: Unit, params: Bm25Params, vector_id: int | None = None) -> EntryRow:
    """Title and context line weigh ``params.title_weight``, the body 1 (ADR-008)."""
    a = analyzer()
    title = " ".join(x for x in (unit.title, unit.context_line) if x)
    title_terms = a.tokenize(title, unit.language).terms if title else ()
    body_terms = a.tokenize(unit.text or "", unit.language).terms
    weights = weighted_terms(title_terms, body_terms, params)
    return EntryRow(
        unit_kind=unit.kind,
        unit_id=str(unit.id),
        deleted=False,
        document_id=str(unit.document_id) if unit.document_id else None,
        row_hash=unit.row_hash,
        acl_groups=unit.acl_groups,
        review_state=unit.review_state,
        confidence=unit.confidence,
        category=unit.category,
        language=unit.language,
        terms=list(weights),
        weights=list(weights.values()),
        vector_id=vector_id,
    )


def tombstone(key: tuple[str, str]) -> EntryRow:
    """A delta's marker that a unit left the corpus (deleted or no longer live)."""
    return EntryRow(
        unit_kind=key[0],
        unit_id=key[1],
        deleted=True,
        document_id=None,
        row_hash="deleted",
        acl_groups=(),
        review_state=None,
        confidence="unverified",
        category=None,
        language=None,
        terms=(),
        weights=(),
    )
