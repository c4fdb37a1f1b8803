"""Run every query of a dataset through every variant, timing each call.

The runner knows nothing about retrieval: a variant returns ranked corpus
ids (and maybe an answer), the metrics score them. A failure part-way raises
``RunIncomplete`` carrying what was measured, so the caller can keep the
partial figures for diagnosis while the run is never reported complete.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from grounded.auth.principal import Principal
from grounded.errors import GroundedError
from grounded.evals import metrics
from grounded.evals.datasets import Dataset
from grounded.evals.variants import Variant


@dataclass(frozen=True)
class QueryResult:
    dataset: str
    variant: str
    query_id: str
    language: str
    family: str
    scores: dict[str, float]
    latency_ms: float
    run_id: str | None
    top: tuple[str, ...]  # the first 10 corpus ids, for reading a report
    curve: tuple[float, ...] = field(default=())  # recall at metrics.RECALL_CURVE_KS


class RunIncomplete(GroundedError):
    """A query failed: the figures so far are partial and must not pass as a result."""

    code = "eval_incomplete"

    def __init__(self, message: str, results: list[QueryResult]) -> None:
        super().__init__(message, details={"measured": len(results)})
        self.results = results


def run_dataset(
    dataset: Dataset,
    variants: Sequence[Variant],
    principal: Principal,
    *,
    limit: int | None = None,
    on_query: Callable[[], None] | None = None,
) -> list[QueryResult]:
    """Every (variant, query) pair, variant by variant (so caches warm per variant alike)."""
    queries = dataset.queries[:limit] if limit else dataset.queries
    results: list[QueryResult] = []
    for variant in variants:
        for query in queries:
            started = time.perf_counter()
            try:
                outcome = variant.run(principal, query.text)
            except Exception as exc:
                raise RunIncomplete(
                    f"{dataset.name}/{variant.name}: query {query.id!r} failed after "
                    f"{len(results)} measured: {exc}",
                    results,
                ) from exc
            latency = (time.perf_counter() - started) * 1000
            scores = metrics.ranking(outcome.ranked, query.relevant)
            if outcome.answer is not None:
                scores.update(metrics.answer(outcome.answer, query.relevant, query.answers))
            results.append(
                QueryResult(
                    dataset.name,
                    variant.name,
                    query.id,
                    query.language,
                    query.family,
                    scores,
                    latency,
                    outcome.run_id,
                    outcome.ranked[:10],
                    tuple(
                        metrics.recall_at(outcome.ranked, query.relevant, k)
                        for k in metrics.RECALL_CURVE_KS
                    ),
                )
            )
            if on_query is not None:
                on_query()
    return results
