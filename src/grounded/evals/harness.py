"""One eval run: each dataset of a tier into its tenant, every variant, one report.

This is the composition the CLI (and the CI test) calls; it owns the order of
things and the rule that a run is complete only when every query of every
dataset was measured by every variant.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import Database
from grounded.errors import InvalidInput
from grounded.evals import corpus, gates, metrics, report, variants
from grounded.evals.datasets import Dataset
from grounded.evals.runner import QueryResult, RunIncomplete, run_dataset
from grounded.evals.suite import Suite
from grounded.ingest.chunking import ChunkingConfig
from grounded.ingest.pipeline import pipeline_version


@dataclass(frozen=True)
class RunOptions:
    tier: str = "fast"
    tenant: str | None = None
    variants: tuple[str, ...] | None = None
    limit: int | None = None


def run(
    settings: Settings,
    database: Database,
    suite: Suite,
    options: RunOptions,
    principal_for: Callable[[str], Principal],
    *,
    baseline: dict[str, Any] | None = None,
    extra_variants: tuple[variants.Variant, ...] = (),
    say: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Ingest (or reuse), query, score; the report dict, gates and baseline diff included.

    ``extra_variants`` are run after the suite's (tests use this to run a
    deliberately broken variant). ``principal_for(slug)`` is how the caller
    acts in a tenant (the CLI: a local admin).
    """
    from grounded.gateway import open_gateway
    from grounded.index import IndexReader
    from grounded.retrieve import Retriever

    datasets = suite.datasets(options.tier)
    if options.tenant and len(datasets) > 1:
        raise InvalidInput(
            f"--tenant names one tenant but tier {options.tier!r} has {len(datasets)} datasets",
            details={"field": "tenant"},
        )
    names = options.variants or suite.variants
    started = datetime.now(UTC).isoformat(timespec="seconds")
    described: list[dict[str, Any]] = []
    results: list[QueryResult] = []
    error = None
    gateway = open_gateway(settings, database)
    try:
        for dataset in datasets:
            fp = corpus.fingerprint(dataset.records)
            slug = options.tenant or corpus.default_slug(fp)
            reused = corpus.ensure_tenant(settings, slug, fp)
            principal = principal_for(slug)
            say(f"{dataset.name}: {len(dataset.records)} documents into tenant {slug}")
            t = time.perf_counter()
            ingested = corpus.load(settings, database, principal, dataset.records)
            ingest_s = time.perf_counter() - t
            described.append(
                {
                    "name": dataset.name,
                    "source": dataset.source,
                    "language": dataset.language,
                    "family": dataset.family,
                    "documents": len(dataset.records),
                    "queries": len(
                        dataset.queries[: options.limit] if options.limit else dataset.queries
                    ),
                    "skipped": list(dataset.skipped),
                    "fingerprint": fp,
                    "tenant": slug,
                    "tenant_reused": reused,
                    "documents_ingested": ingested,
                    "ingest_s": round(ingest_s, 1),
                }
            )
            context = variants.VariantContext(
                Retriever(database, IndexReader(database, settings.index), gateway),
                gateway,
                corpus.external_ids(database, principal),
                suite.k,
                suite.candidate_k,
                settings,
            )
            chosen = [*variants.build(names, context), *extra_variants]
            described[-1]["query_embed_ms"] = _warm_query_vectors(
                gateway, principal, dataset, options.limit
            )
            say(f"{dataset.name}: {described[-1]['queries']} queries x {len(chosen)} variants")
            results += run_dataset(dataset, chosen, principal, limit=options.limit)
    except RunIncomplete as exc:
        results += exc.results
        error = exc.message
    finally:
        gateway.close()
    head = {
        "suite": {
            "name": suite.name,
            "version": suite.version,
            "file": str(suite.file) if suite.file else None,
            "sha256": suite.sha256,
        },
        "tier": options.tier,
        "limit": options.limit,
        "started_at": started,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": {
            "k": suite.k,
            "candidate_k": suite.candidate_k,
            "pipeline_version": pipeline_version(ChunkingConfig()),
        },
        "datasets": described,
    }
    order = [*names, *(v.name for v in extra_variants)]
    built = report.build(
        head=head, results=results, variant_order=order, complete=error is None, error=error
    )
    built["gates"] = gates.check(suite.gates, built, options.tier, baseline)
    if baseline is not None:
        built["baseline"] = {"file": baseline.get("_file"), "diff": gates.diff(built, baseline)}
    return built


def _warm_query_vectors(
    gateway: Any, principal: Principal, dataset: Dataset, limit: int | None
) -> dict[str, float]:
    """Embed every query once before timing, and report what that costs.

    The gateway caches query vectors, so without this the first variant that
    embeds (dense) would pay for every later one (hybrid) and the latency
    columns would rank variants by their order in the suite. Variant latency
    is therefore with the query vector cached; this is the embedding's own cost.
    """
    from grounded.retrieve import clean_query

    spent = []
    for query in dataset.queries[:limit] if limit else dataset.queries:
        started = time.perf_counter()
        gateway.embed(principal, [clean_query(query.text)], "query")
        spent.append((time.perf_counter() - started) * 1000)
    return {
        "p50": round(metrics.percentile(spent, 50), 1),
        "p95": round(metrics.percentile(spent, 95), 1),
    }
