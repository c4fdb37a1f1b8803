"""The write path for one document version: detect -> extract -> chunk -> enrich -> embed -> index.

Runs inside a queue job. Each stage commits its output together with the
record that it is done, so a retry after a crash (or a ``kill -9``) resumes at
the first unfinished stage and writes nothing twice:

* detect/extract/chunk produce the chunk set in memory and write it (chunks,
  assets, structured tables) in ONE transaction with the stage record;
* enrich and embed fill only rows still missing their context line / vector,
  a batch per transaction;
* index writes the outbox entry that the index drains (seed 000 ADR-016).

A document the extractors refuse (corrupt, encrypted, a bomb, ...) fails at
once with the extractor's reason; other errors are retried a bounded number
of times, then fail with the last reason (the dead-letter view lists them).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from uuid import UUID

from psycopg.types.json import Jsonb

from grounded.auth.principal import Principal
from grounded.db import Connection, Database
from grounded.errors import ExtractionError, GroundedError
from grounded.gateway import EnrichRequest, Gateway
from grounded.gateway.adapters import GatewayDescriber, GatewayOcr, GatewayTranscriber
from grounded.ingest import runs
from grounded.ingest.chunking import ChunkingConfig, chunk_document
from grounded.ingest.extract import Engines, extract
from grounded.ingest.records import Chunk, ExtractedDocument
from grounded.knowledge import history
from grounded.storage import BlobStore

ENRICH_VERSION: Final = "1"
MAX_ATTEMPTS: Final = 3
EMBED_BATCH: Final = 64
ENRICH_BATCH: Final = 200


def pipeline_version(config: ChunkingConfig) -> str:
    """Everything that changes the chunk set or its derived fields: a change means reindex."""
    return f"chunk={config.version};enrich={ENRICH_VERSION}"


@dataclass(frozen=True)
class PipelineContext:
    database: Database
    gateway: Gateway
    blobs: BlobStore
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)


class Retryable(Exception):
    """A failure worth another attempt (the queue retries the job)."""


def run_ingest(ctx: PipelineContext, principal: Principal, run_id: UUID) -> runs.Run:
    """Drive one run to done or failed. Raises Retryable for the queue to try again."""
    with ctx.database.transaction(principal.tenant_id) as conn:
        run = runs.lock(conn, run_id)
        if run.status == "done":
            return run
        runs.start(conn, run)
    try:
        _stages(ctx, principal, run)
    except ExtractionError as exc:
        _record_failure(ctx, principal, run, exc.reason, exc.message, final=True)
        return runs.get(ctx.database, principal, run_id)
    except GroundedError as exc:
        final = run.attempts + 1 >= MAX_ATTEMPTS
        _record_failure(ctx, principal, run, exc.code, exc.message, final=final)
        if not final:
            raise Retryable(exc.message) from exc
        return runs.get(ctx.database, principal, run_id)
    except Exception as exc:
        final = run.attempts + 1 >= MAX_ATTEMPTS
        _record_failure(
            ctx, principal, run, "internal_error", f"{type(exc).__name__}: {exc}", final=final
        )
        if not final:
            raise Retryable(str(exc)) from exc
        return runs.get(ctx.database, principal, run_id)
    return runs.get(ctx.database, principal, run_id)


def _stages(ctx: PipelineContext, principal: Principal, run: runs.Run) -> None:
    current = runs.get(ctx.database, principal, run.id)
    if not current.done("chunk"):
        _extract_and_chunk(ctx, principal, current)
    if not current.done("enrich"):
        _timed(ctx, principal, run.id, "enrich", lambda: _enrich(ctx, principal, run))
    if not current.done("embed"):
        _timed(ctx, principal, run.id, "embed", lambda: _embed(ctx, principal, run))
    with ctx.database.transaction(principal.tenant_id) as conn:
        locked = runs.lock(conn, run.id)
        if not locked.done("index"):
            history.record(
                conn,
                principal,
                entity_type="document",
                entity_id=run.document_id,
                action="ingested",
                before=None,
                after={
                    "version_id": str(run.document_version_id),
                    "pipeline_version": run.pipeline_version,
                },
                entity_version=1,
                index_op="upsert",
            )
            runs.complete_stage(conn, run.id, "index", 0.0)
        runs.finish(conn, locked)


def _extract_and_chunk(ctx: PipelineContext, principal: Principal, run: runs.Run) -> None:
    with ctx.database.transaction(principal.tenant_id) as conn:
        version = conn.execute(
            "SELECT v.content_sha256, v.filename, d.title FROM document_versions v"
            " JOIN documents d ON d.id = v.document_id WHERE v.id = %s",
            (run.document_version_id,),
        ).fetchone()
    if version is None:
        raise ExtractionError("the document version no longer exists", reason="corrupt")
    data = ctx.blobs.read(principal.tenant_id, version["content_sha256"])
    engines = Engines(
        ocr=GatewayOcr(ctx.gateway, principal),
        describer=GatewayDescriber(ctx.gateway, principal),
        transcriber=GatewayTranscriber(ctx.gateway, principal),
    )
    t0 = time.perf_counter()
    document = extract(data, version["filename"], engines=engines)
    t1 = time.perf_counter()
    chunks = chunk_document(document, ctx.chunking)
    t2 = time.perf_counter()
    if not any(c.role == "child" and c.text.strip() for c in chunks):
        raise ExtractionError(
            "no text could be found in the document"
            + (f" ({'; '.join(document.warnings)})" if document.warnings else ""),
            reason="no_text",
        )
    with ctx.database.transaction(principal.tenant_id) as conn:
        locked = runs.lock(conn, run.id)
        if locked.done("chunk"):
            return  # another attempt finished first; its rows stand
        _write_chunks(conn, principal, run, document, chunks)
        t3 = time.perf_counter()
        runs.complete_stage(conn, run.id, "detect", 0.0, {"mime_type": document.mime_type})
        runs.complete_stage(
            conn,
            run.id,
            "extract",
            t1 - t0,
            {
                "pages": document.page_count,
                "language": document.language,
                "warnings": list(document.warnings),
                "tables": len(document.tables),
                "assets": len(document.assets),
            },
        )
        runs.complete_stage(
            conn,
            run.id,
            "chunk",
            (t2 - t1) + (t3 - t2),
            {
                "chunks": sum(1 for c in chunks if c.role == "child"),
                "sections": sum(1 for c in chunks if c.role == "parent"),
                "chunking_version": ctx.chunking.version,
            },
        )
        if document.title and version["title"] == version["filename"]:
            conn.execute(
                "UPDATE documents SET title = %s WHERE id = %s",
                (document.title[:1000], run.document_id),
            )


def _write_chunks(
    conn: Connection,
    principal: Principal,
    run: runs.Run,
    document: ExtractedDocument,
    chunks: tuple[Chunk, ...],
) -> None:
    """Replace this version's chunks and assets (idempotent per version)."""
    conn.execute(
        "DELETE FROM chunks WHERE document_version_id = %s AND parent_chunk_id IS NOT NULL",
        (run.document_version_id,),
    )
    conn.execute("DELETE FROM chunks WHERE document_version_id = %s", (run.document_version_id,))
    conn.execute("DELETE FROM assets WHERE document_version_id = %s", (run.document_version_id,))
    ids: dict[int, UUID] = {}
    for chunk in chunks:
        row = conn.execute(
            "INSERT INTO chunks (tenant_id, document_id, document_version_id, parent_chunk_id,"
            " ordinal, role, modality, text, language, provenance, content_sha256)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                principal.tenant_id,
                run.document_id,
                run.document_version_id,
                ids.get(chunk.parent_ordinal) if chunk.parent_ordinal is not None else None,
                chunk.ordinal,
                chunk.role,
                chunk.modality,
                chunk.text,
                chunk.language,
                Jsonb(chunk.provenance.to_json()),
                chunk.content_sha256,
            ),
        ).fetchone()
        assert row is not None
        ids[chunk.ordinal] = row["id"]
    for index, table in enumerate(document.tables):
        conn.execute(
            "INSERT INTO assets (tenant_id, document_version_id, kind, mime_type, detail)"
            " VALUES (%s, %s, 'table', 'application/json', %s)",
            (
                principal.tenant_id,
                run.document_version_id,
                Jsonb(
                    {
                        "index": index,
                        "title": table.title,
                        "header": list(table.header),
                        "header_detected": table.header_detected,
                        "column_kinds": list(table.column_kinds),
                        "rows": [
                            [{"kind": c.kind, "raw": c.raw, "value": c.value} for c in r]
                            for r in table.rows
                        ],
                        "row_numbers": list(table.row_numbers),
                        "provenance": table.provenance.to_json(),
                    },
                    dumps=lambda v: json.dumps(v, default=str),
                ),
            ),
        )
    for asset in document.assets:
        conn.execute(
            "INSERT INTO assets (tenant_id, document_version_id, kind, content_sha256, mime_type,"
            " detail) VALUES (%s, %s, %s, %s, %s, %s)",
            (
                principal.tenant_id,
                run.document_version_id,
                asset.kind,
                asset.sha256,
                asset.media_type,
                Jsonb(
                    {
                        "width": asset.width,
                        "height": asset.height,
                        "size": asset.size,
                        "ocr_text": asset.ocr_text,
                        "description": asset.description,
                        "provenance": asset.provenance.to_json(),
                    }
                ),
            ),
        )


def _enrich(ctx: PipelineContext, principal: Principal, run: runs.Run) -> dict[str, Any]:
    """A short context line per retrievable chunk, stored apart from its text (ADR-005)."""
    done = 0
    provider = None
    while True:
        with ctx.database.transaction(principal.tenant_id) as conn:
            rows = conn.execute(
                "SELECT c.id, c.text, c.provenance, d.title FROM chunks c"
                " JOIN documents d ON d.id = c.document_id WHERE c.document_version_id = %s"
                " AND c.role = 'child' AND c.context_line IS NULL ORDER BY c.ordinal LIMIT %s",
                (run.document_version_id, ENRICH_BATCH),
            ).fetchall()
            if not rows:
                return {"enriched": done, "enrich_provider": provider}
            for row in rows:
                heading = tuple(row["provenance"].get("heading_path", []))
                result = ctx.gateway.enrich(
                    principal,
                    EnrichRequest(title=row["title"], heading_path=heading, text=row["text"]),
                )
                provider = f"{result.receipt.provider}/{result.receipt.model}"
                conn.execute(
                    "UPDATE chunks SET context_line = %s WHERE id = %s",
                    (result.value[:500], row["id"]),
                )
            done += len(rows)


def _embed(ctx: PipelineContext, principal: Principal, run: runs.Run) -> dict[str, Any]:
    """Passage vectors for retrievable chunks still without one, a batch per transaction."""
    done = 0
    model = None
    while True:
        with ctx.database.transaction(principal.tenant_id) as conn:
            rows = conn.execute(
                "SELECT id, text, context_line FROM chunks WHERE document_version_id = %s"
                " AND role = 'child' AND embedding IS NULL ORDER BY ordinal LIMIT %s",
                (run.document_version_id, EMBED_BATCH),
            ).fetchall()
            if not rows:
                return {"embedded": done, "embedding_model": model}
            texts = [
                f"{r['context_line']}\n{r['text']}" if r["context_line"] else r["text"]
                for r in rows
            ]
            embeddings = ctx.gateway.embed(principal, texts, "passage")
            model = embeddings.model
            for row, vector in zip(rows, embeddings.vectors, strict=True):
                conn.execute(
                    "UPDATE chunks SET embedding = %s::vector, embedding_model = %s WHERE id = %s",
                    ("[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]", model, row["id"]),
                )
            done += len(rows)


def _timed(
    ctx: PipelineContext,
    principal: Principal,
    run_id: UUID,
    stage: str,
    work: Callable[[], dict[str, Any]],
) -> None:
    t0 = time.perf_counter()
    detail = work()
    with ctx.database.transaction(principal.tenant_id) as conn:
        runs.lock(conn, run_id)
        runs.complete_stage(conn, run_id, stage, time.perf_counter() - t0, detail)


def _record_failure(
    ctx: PipelineContext,
    principal: Principal,
    run: runs.Run,
    code: str,
    message: str,
    *,
    final: bool,
) -> None:
    with ctx.database.transaction(principal.tenant_id) as conn:
        runs.fail(conn, run.id, run.document_id, code=code, message=message, final=final)
