"""Reciprocal rank fusion (Cormack et al., SIGIR 2009; seed 002 ADR-011).

Ranks count from 1, k = 60, every list weighs the same, and a list that does
not contain an item contributes nothing for it. Raw BM25 and cosine scores
are never added: only ranks cross lists.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K: int = 60
T = TypeVar("T", bound=Hashable)


def rrf(ranked_lists: Sequence[Sequence[T]], k: int = K) -> dict[T, float]:
    """Fused score B per item: sum over lists of 1 / (k + rank)."""
    if k <= 0:
        raise ValueError("k must be positive")
    fused: dict[T, float] = {}
    for ranking in ranked_lists:
        seen: set[T] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:  # a list names an item once; later duplicates are ignored
                continue
            seen.add(item)
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused
