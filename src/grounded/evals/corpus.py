"""An evaluation corpus in its own tenant, ingested once and reused by fingerprint.

An eval must measure the real write path (extract, chunk, enrich, embed,
index) and the real read path, so the corpus goes in through
``records_import`` and the queue like any user's data. Ingesting 5k abstracts
takes half an hour on two cores, so the tenant is keyed by a fingerprint of
the corpus *and* the pipeline version: the same data and pipeline reuse the
tenant (re-importing changes nothing), anything else gets a new one. The
fingerprint is stored as the tenant's display name so a reused ``--tenant``
that holds other data is refused instead of silently mixed.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from uuid import UUID

from procrastinate.types import JSONValue

from grounded.auth import local
from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import Database, urls
from grounded.errors import Conflict, GroundedError, NotFound
from grounded.ingest import runs
from grounded.ingest.chunking import ChunkingConfig
from grounded.ingest.jobs import defer_run
from grounded.ingest.pipeline import pipeline_version
from grounded.ingest.records_import import import_records
from grounded.queue import build_queue, run_worker
from grounded.storage import BlobStore

NAME_PREFIX: Final = "eval corpus "


@dataclass(frozen=True)
class CorpusRecord:
    """One document of an eval corpus; ``id`` is the id the judgements use."""

    id: str
    title: str
    text: str


class CorpusNotReady(GroundedError):
    """The corpus did not finish ingesting: an eval over part of it would mislead."""

    code = "eval_corpus_not_ready"
    http_status = 409


def fingerprint(records: Sequence[CorpusRecord], version: str | None = None) -> str:
    """SHA-256 over the pipeline version and every record, in id order."""
    digest = hashlib.sha256((version or pipeline_version(ChunkingConfig())).encode())
    for record in sorted(records, key=lambda r: r.id):
        line = json.dumps([record.id, record.title, record.text], ensure_ascii=False)
        digest.update(b"\n" + line.encode("utf-8"))
    return digest.hexdigest()


def default_slug(corpus_fingerprint: str) -> str:
    return f"eval-{corpus_fingerprint[:16]}"


def ensure_tenant(settings: Settings, slug: str, corpus_fingerprint: str) -> bool:
    """Create the tenant for this corpus, or check an existing one holds it.

    Returns True when the tenant already existed (a reuse). Raises Conflict when
    ``slug`` exists but was made for another corpus or by hand.
    """
    expected = NAME_PREFIX + corpus_fingerprint
    with local.connect(urls.resolve(settings).owner) as conn:
        existing = {t.slug: t for t in local.list_tenants(conn)}.get(slug)
        if existing is None:
            local.create_tenant(conn, slug, expected)
            return False
    if existing.name != expected:
        raise Conflict(
            f"tenant {slug!r} does not hold this corpus (its name is {existing.name!r}, "
            f"expected {expected!r}); omit --tenant or name a new one",
            details={"tenant": slug},
        )
    return True


def load(
    settings: Settings,
    database: Database,
    principal: Principal,
    records: Sequence[CorpusRecord],
    *,
    timeout_s: float = 4 * 3600,
) -> int:
    """Import ``records`` (idempotent), process the queue in this process, wait for the index.

    Returns the number of documents that needed (re)ingesting. Raises
    CorpusNotReady if any document failed or the index did not catch up.
    """
    with tempfile.TemporaryDirectory(prefix="grounded-eval-") as tmp:
        # A fixed file name: records import keys its source by the file name.
        path = Path(tmp) / "eval-corpus.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for r in records:
                handle.write(json.dumps({"id": r.id, "title": r.title, "text": r.text}) + "\n")
        queue = build_queue(database.app_url)
        with queue.open():

            def on_batch(run_ids: list[UUID], _done: int) -> None:
                tenant: JSONValue = str(principal.tenant_id)
                jobs: list[dict[str, JSONValue]] = [
                    {"tenant_id": tenant, "run_id": str(r)} for r in run_ids
                ]
                if jobs:
                    queue.configure_task("grounded:ingest").batch_defer(*jobs)

            report = import_records(
                database,
                BlobStore(settings.raw_dir),
                principal,
                path,
                pipeline_version=pipeline_version(ChunkingConfig()),
                on_batch=on_batch,
            )
            # Documents that failed in an earlier run get one more try each run
            # (a fix may have landed); a failure that persists stops the eval.
            for failed in runs.failed(database, principal, limit=10_000):
                defer_run(queue, principal.tenant_id, failed)
    deadline = time.monotonic() + timeout_s
    while True:
        run_worker(settings, database, concurrency=settings.worker_concurrency, wait=False)
        if _jobs_due(settings):
            # A burst worker returns with jobs due only when it was told to stop
            # (SIGINT/SIGTERM): the run ends here instead of starting another.
            raise CorpusNotReady(
                "the worker stopped before the queue was empty (interrupted); "
                "run the eval again to resume: finished documents are kept",
                details={"tenant_id": str(principal.tenant_id)},
            )
        if _ready(database, principal, len(records)):
            return report.new_versions
        if time.monotonic() > deadline:
            raise CorpusNotReady(
                f"the eval corpus was not indexed within {timeout_s:g}s",
                details={"tenant_id": str(principal.tenant_id)},
            )
        time.sleep(1.0)


def _jobs_due(settings: Settings) -> bool:
    """Queued jobs that are due now (the periodic stalled-job sweep aside)."""
    with local.connect(urls.resolve(settings).owner) as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM procrastinate_jobs WHERE status = 'todo'"
            " AND task_name <> 'grounded:retry_stalled'"
            " AND (scheduled_at IS NULL OR scheduled_at <= now())"
        ).fetchone()
    return bool(row and row["n"])


def _ready(database: Database, principal: Principal, expected: int) -> bool:
    """True once every document is done and the live snapshot covers the catalog."""
    from grounded.index import status

    with database.transaction(principal.tenant_id) as conn:
        row = conn.execute(
            "SELECT count(*) AS documents,"
            " count(*) FILTER (WHERE r.status = 'done') AS done,"
            " count(*) FILTER (WHERE r.status = 'failed') AS failed,"
            " array_agg(d.external_id) FILTER (WHERE r.status = 'failed') AS failed_ids"
            " FROM documents d LEFT JOIN LATERAL (SELECT status FROM ingest_runs"
            "  WHERE document_id = d.id ORDER BY created_at DESC LIMIT 1) r ON true"
            " WHERE d.deleted_at IS NULL"
        ).fetchone()
    assert row is not None
    if row["failed"]:
        raise CorpusNotReady(
            f"{row['failed']} eval documents failed to ingest (e.g. "
            f"{', '.join(sorted(row['failed_ids'])[:5])}); see `grounded documents list`",
            details={"failed": row["failed"]},
        )
    if row["documents"] != expected:
        raise CorpusNotReady(
            f"the eval tenant holds {row['documents']} documents, the corpus {expected}",
            details={"documents": row["documents"], "expected": expected},
        )
    if row["done"] < expected:
        return False
    state = status(database, principal, limit=1)
    return state.live is not None and not state.stale and state.pending_outbox == 0


def external_ids(database: Database, principal: Principal) -> dict[str, str]:
    """Document id -> the corpus id the judgements use."""
    with database.transaction(principal.tenant_id) as conn:
        rows = conn.execute(
            "SELECT id::text AS id, external_id FROM documents WHERE deleted_at IS NULL"
        ).fetchall()
    if not rows:
        raise NotFound("the eval tenant holds no documents", details={})
    return {r["id"]: r["external_id"] for r in rows}
