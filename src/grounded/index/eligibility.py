"""Who may see which unit, and which filters a query asked for: a boolean mask.

Filters apply to the eligible corpus *before* IDF, ranks and top-k (seed 000
ADR-016), so they are evaluated here, once per query, over the snapshot's
unit arrays, and the same mask feeds BM25 (df, N, avgdl) and the dense path.
The tenant comes from row-level security and the principal, never from the
spec; ACL groups come from the principal alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from grounded.errors import InvalidInput
from grounded.knowledge.confidence import LABELS

REVIEW_STATES = ("draft", "pending", "verified", "rejected")
UNIT_KINDS = ("chunk", "item")


@dataclass(frozen=True)
class EligibilitySpec:
    """Caller-chosen filters; ``None`` means "no filter on this attribute".

    ``review_states`` applies to knowledge items only: chunks of documents
    have no review workflow and always pass it. Only live units are ever in
    a snapshot, so "live only" needs no field.
    """

    unit_kinds: frozenset[str] | None = None
    review_states: frozenset[str] | None = None
    confidence: frozenset[str] | None = None
    categories: frozenset[str] | None = None
    document_ids: frozenset[str] | None = None

    def __post_init__(self) -> None:
        for name, allowed in (
            ("unit_kinds", UNIT_KINDS),
            ("review_states", REVIEW_STATES),
            ("confidence", LABELS),
        ):
            value = getattr(self, name)
            if value is not None and not value <= set(allowed):
                raise InvalidInput(
                    f"{name} must be among {', '.join(allowed)}",
                    details={"field": name, "allowed": list(allowed)},
                )

    def as_dict(self) -> dict[str, list[str] | None]:
        return {
            name: sorted(value) if value is not None else None for name, value in vars(self).items()
        }
