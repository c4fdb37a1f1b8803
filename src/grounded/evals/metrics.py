"""Ranking and answer metrics: pure functions over ranked ids and judgements.

Definitions (the usual IR ones, so figures compare with BEIR papers):
- nDCG@10 with graded gains (2^g - 1) and log2 discount, ideal from the judgements;
- recall@k: share of the relevant documents in the first k;
- MRR@10: 1/rank of the first relevant document in the first 10, else 0;
- top-1: the first document is relevant;
- no_relevant: nothing relevant anywhere in what the search returned (up to
  k = 100), the "no eligible relevant evidence" rate: such a query cannot be
  answered from the retrieved evidence whatever the reranker or the model do.
Answer metrics (present when a variant answers): support rate (supported
claims / claims), citation precision (citations of a relevant document /
citations), abstention rate, answer-span hit (a gold answer string appears in
the cited text).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

RECALL_CURVE_KS: Final = (1, 2, 3, 5, 10, 20, 30, 50, 100)


@dataclass(frozen=True)
class AnswerOutcome:
    """What an answering variant reports for one question."""

    abstained: bool
    claims_total: int = 0
    claims_supported: int = 0
    cited_ids: tuple[str, ...] = ()
    cited_text: str = ""


def ranking(ranked: Sequence[str], relevant: Mapping[str, int]) -> dict[str, float]:
    """Every ranking metric of one query."""
    gains = [float(2 ** relevant[d] - 1) if d in relevant else 0.0 for d in ranked[:10]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal_gains = sorted((float(2**g - 1) for g in relevant.values()), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal_gains))
    first = next((i for i, d in enumerate(ranked[:10]) if d in relevant), None)
    hits = set(ranked) & set(relevant)
    return {
        "ndcg@10": dcg / idcg if idcg else 0.0,
        "recall@10": recall_at(ranked, relevant, 10),
        "recall@100": recall_at(ranked, relevant, 100),
        "mrr@10": 1.0 / (first + 1) if first is not None else 0.0,
        "top1": 1.0 if ranked[:1] and ranked[0] in relevant else 0.0,
        "no_relevant": 0.0 if hits else 1.0,
    }


def recall_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def answer(
    outcome: AnswerOutcome, relevant: Mapping[str, int], gold: Sequence[str]
) -> dict[str, float]:
    """Answer metrics of one question; rates that have no denominator are left out."""
    found: dict[str, float] = {"abstention_rate": 1.0 if outcome.abstained else 0.0}
    if outcome.abstained:
        return found
    if outcome.claims_total:
        found["support_rate"] = outcome.claims_supported / outcome.claims_total
    if outcome.cited_ids:
        correct = sum(1 for d in outcome.cited_ids if d in relevant)
        found["citation_precision"] = correct / len(outcome.cited_ids)
    if gold:
        found["answer_span_hit"] = 1.0 if any(g in outcome.cited_text for g in gold) else 0.0
    return found


def mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return sum(items) / len(items) if items else None


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100): an observed value, not an interpolation."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]
