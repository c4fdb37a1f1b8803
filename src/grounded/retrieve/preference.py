"""Bounded confidence preference (seed 000 ADR-016, policy ``confidence-v1``).

    final = B * (1 + w * c),  c = +1 verified, 0 inferred, -1 unverified,  w in [0, 0.5]

Inferred stays neutral; with w <= 0.5 a verified unit can gain at most 50 %
and an unverified one lose at most 50 %, so confidence never buys absolute
priority over relevance; B = 0 stays 0. Order: final desc, created asc, id asc.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from grounded.errors import InvalidInput
from grounded.knowledge.confidence import SIGN, Label

POLICY: Final = "confidence-v1"
MAX_WEIGHT: Final = 0.5


def check_weight(weight: float) -> float:
    if not math.isfinite(weight) or not 0.0 <= weight <= MAX_WEIGHT:
        raise InvalidInput(
            f"confidence_weight must be a number from 0 to {MAX_WEIGHT}",
            details={"field": "confidence_weight"},
        )
    return weight


def factor(label: Label, weight: float) -> float:
    return 1.0 + weight * SIGN[label]


def final_score(fused: float, label: Label, weight: float) -> float:
    """B * (1 + w*c). B = 0 gets no boost (0 times anything)."""
    return fused * factor(label, weight)


@dataclass(frozen=True)
class Ranked:
    unit_id: str
    fused: float
    label: Label
    created_at: datetime

    def final(self, weight: float) -> float:
        return final_score(self.fused, self.label, weight)


def order(items: list[Ranked], weight: float, min_relevance: float = 0.0) -> list[Ranked]:
    """Apply ``min_relevance`` to final scores, then sort final desc, created asc, id asc."""
    check_weight(weight)
    kept = [i for i in items if i.final(weight) >= min_relevance and i.fused > 0]
    return sorted(kept, key=lambda i: (-i.final(weight), i.created_at, i.unit_id))
