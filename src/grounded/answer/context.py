"""Context assembly: only server-side retrieval records enter a prompt (seed 002 ADR-012).

A context is built from a ``retrieval_runs`` row, never from text a caller
sends. Each hit is re-read under ``FOR SHARE`` in the same transaction that
persists the context, so a section deleted, superseded, unverified or hidden
since the search is left out with its reason, and the stored context is
exactly what the model will see. Sections are kept whole with their
provenance; one that overlaps an earlier section or does not fit the budget
is excluded with a reason, never truncated.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Final

from psycopg.types.json import Jsonb

from grounded.answer.injection import instruction_spans
from grounded.answer.text import normalised
from grounded.auth.acl import can_see
from grounded.auth.principal import Principal
from grounded.db import Connection, Database
from grounded.errors import NotFound
from grounded.knowledge.confidence import effective

_CHUNKS: Final = """
SELECT c.id::text AS id, 'chunk' AS unit_kind, c.text, c.provenance,
       c.document_id::text AS document_id, d.title AS document_title, d.acl_groups,
       coalesce(v.filename, d.external_id, s.name) AS source_name,
       d.metadata->>'confidence' AS stored_label,
       p.id::text AS parent_id, p.text AS parent_text,
       c.document_version_id IS NOT DISTINCT FROM d.current_version_id AS current,
       'verified' AS review_state
FROM chunks c JOIN documents d ON d.id = c.document_id
LEFT JOIN document_versions v ON v.id = c.document_version_id
LEFT JOIN sources s ON s.id = d.source_id
LEFT JOIN chunks p ON p.id = c.parent_chunk_id
WHERE c.id = ANY(%s) AND d.deleted_at IS NULL
FOR SHARE OF c, d
"""
_ITEMS: Final = """
SELECT i.id::text AS id, 'item' AS unit_kind, i.body AS text, '{}'::jsonb AS provenance,
       i.document_id::text AS document_id, d.title AS document_title,
       coalesce(d.acl_groups, '{}') AS acl_groups, s.name AS source_name,
       i.confidence AS stored_label, NULL AS parent_id, NULL AS parent_text,
       true AS current, i.review_state
FROM knowledge_items i LEFT JOIN documents d ON d.id = i.document_id
LEFT JOIN sources s ON s.id = i.source_id
WHERE i.id = ANY(%s) AND i.deleted_at IS NULL
FOR SHARE OF i
"""


@dataclass(frozen=True)
class Evidence:
    """One numbered section of a prompt; ``text`` is what the model sees, whole."""

    number: int
    chunk_id: str
    unit_kind: str
    document_id: str | None
    document_title: str | None
    source_name: str | None
    provenance: dict[str, Any]
    text: str
    child_text: str
    child_start: int | None
    confidence: str
    instructions: tuple[tuple[int, int], ...]

    def without_instructions(self) -> str:
        """The text with planted instructions blanked (same length, so offsets hold):
        what verification and the extractive answer may use as evidence."""
        text = self.text
        for start, end in self.instructions:
            text = text[:start] + " " * (end - start) + text[end:]
        return text

    def as_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["instructions"] = [list(s) for s in self.instructions]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evidence:
        values = dict(data)
        values["instructions"] = tuple(tuple(s) for s in values["instructions"])
        return cls(**values)


@dataclass(frozen=True)
class Context:
    id: uuid.UUID
    retrieval_run_id: uuid.UUID
    question: str
    evidence: tuple[Evidence, ...]
    excluded: tuple[dict[str, Any], ...] = field(default=())

    def by_number(self, number: int) -> Evidence | None:
        return self.evidence[number - 1] if 1 <= number <= len(self.evidence) else None


def prepare(
    database: Database,
    principal: Principal,
    retrieval_run_id: uuid.UUID,
    question: str,
    budget_chars: int,
) -> Context:
    """Re-check the run's hits as current, number them, persist the context, return it."""
    with database.transaction(principal.tenant_id) as conn:
        hits = _run_hits(conn, principal, retrieval_run_id)
        keys = [uuid.UUID(h["id"]) for h in hits]
        rows = {
            row["id"]: row
            for row in [
                *conn.execute(_CHUNKS, (keys,)).fetchall(),
                *conn.execute(_ITEMS, (keys,)).fetchall(),
            ]
        }
        evidence: list[Evidence] = []
        excluded: list[dict[str, Any]] = []
        seen: list[tuple[int, str]] = []
        left = budget_chars
        for hit in hits:
            row = rows.get(hit["id"])
            reason = _stale_reason(principal, row)
            if reason is None and row is not None:
                text = row["parent_text"] or row["text"]
                key = normalised(text)
                overlap = next((n for n, other in seen if key in other or other in key), None)
                if overlap is not None:
                    reason = f"overlaps evidence [{overlap}]"
                elif len(text) > left:
                    reason = f"over budget: {len(text)} characters, {left} left"
                else:
                    item = _evidence(len(evidence) + 1, row, text)
                    evidence.append(item)
                    seen.append((item.number, key))
                    left -= len(text)
                    continue
            excluded.append({"chunk_id": hit["id"], "rank": hit["rank"], "reason": reason})
        row = conn.execute(
            "INSERT INTO answer_contexts (tenant_id, retrieval_run_id, question, budget_chars,"
            " evidence, excluded) VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
            (
                principal.tenant_id,
                retrieval_run_id,
                question,
                budget_chars,
                Jsonb([e.as_json() for e in evidence]),
                Jsonb(excluded),
            ),
        ).fetchone()
    assert row is not None
    return Context(row["id"], retrieval_run_id, question, tuple(evidence), tuple(excluded))


def load(conn: Connection, context_id: uuid.UUID) -> Context | None:
    row = conn.execute(
        "SELECT id, retrieval_run_id, question, evidence, excluded FROM answer_contexts"
        " WHERE id = %s",
        (context_id,),
    ).fetchone()
    if row is None:
        return None
    return Context(
        row["id"],
        row["retrieval_run_id"],
        row["question"],
        tuple(Evidence.from_json(e) for e in row["evidence"]),
        tuple(row["excluded"]),
    )


def _run_hits(
    conn: Connection, principal: Principal, retrieval_run_id: uuid.UUID
) -> list[dict[str, Any]]:
    """The run's results in rank order; another tenant's or another user's run is not found."""
    row = conn.execute(
        "SELECT principal, receipt FROM retrieval_runs WHERE id = %s", (retrieval_run_id,)
    ).fetchone()
    owner = row["principal"].get("id") if row is not None else None
    if row is None or not (principal.is_admin or owner == str(principal.id)):
        raise NotFound(
            f"retrieval run {retrieval_run_id} was not found",
            details={"retrieval_run_id": str(retrieval_run_id)},
        )
    return list(row["receipt"].get("results", []))


def _stale_reason(principal: Principal, row: dict[str, Any] | None) -> str | None:
    if row is None:
        return "deleted since the search"
    if not row["current"]:
        return "superseded by a newer version of the document"
    if row["unit_kind"] == "item" and row["review_state"] != "verified" and not principal.is_admin:
        return "no longer verified"
    if not can_see(principal, row["acl_groups"]):
        return "not visible to you"
    return None


def _evidence(number: int, row: dict[str, Any], text: str) -> Evidence:
    child = str(row["text"])
    start = text.find(child) if row["parent_text"] else 0
    return Evidence(
        number=number,
        chunk_id=row["id"],
        unit_kind=row["unit_kind"],
        document_id=row["document_id"],
        document_title=row["document_title"],
        source_name=row["source_name"],
        provenance=dict(row["provenance"] or {}),
        text=text,
        child_text=child,
        child_start=start if start >= 0 else None,
        confidence=effective(row["stored_label"]),
        instructions=tuple((s.start, s.end) for s in instruction_spans(text)),
    )
