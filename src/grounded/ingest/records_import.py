"""Bulk import of data that is already text: one JSON object per line.

    {"id": "doc-1", "title": "Optional title", "text": "The text.", "metadata": {...}}

The whole file is validated first (a bad line is reported by number and
nothing is written), then records are written in batches: one transaction per
batch creates or finds each document by its ``id`` (``external_id``), adds a
version only when the text changed, appends the events, and registers the
runs, whose jobs are then queued in one statement. Re-importing the same file
changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from uuid import UUID

from psycopg.types.json import Jsonb

from grounded.auth.principal import Principal
from grounded.db import Connection, Database
from grounded.errors import InvalidInput
from grounded.ingest import runs
from grounded.knowledge import Sources, history
from grounded.storage import BlobStore

BATCH: Final = 500
MAX_TEXT: Final = 5_000_000


@dataclass(frozen=True)
class Record:
    line: int
    id: str
    title: str
    text: str
    metadata: dict[str, Any]


@dataclass
class ImportReport:
    records: int = 0
    new_documents: int = 0
    new_versions: int = 0
    unchanged: int = 0
    run_ids: list[UUID] | None = None


def read_records(path: Path) -> Iterator[Record]:
    """Parse and validate; InvalidInput names the file and line of the first problem."""
    seen: set[str] = set()
    with path.open("r", encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            yield _parse(path, number, raw, seen)


def _parse(path: Path, number: int, raw: str, seen: set[str]) -> Record:
    where = f"{path.name}, line {number}"
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{where}: not JSON ({exc.msg})", details={"file": str(path), "line": number}
        ) from exc
    if not isinstance(obj, dict):
        raise InvalidInput(f"{where}: expected an object", details={"line": number})
    record_id = obj.get("id", obj.get("_id"))
    text = obj.get("text")
    title = obj.get("title") or ""
    metadata = obj.get("metadata") or {}
    problems = []
    if not isinstance(record_id, (str, int)) or str(record_id).strip() == "":
        problems.append("`id` must be a non-empty string")
    if not isinstance(text, str) or not text.strip():
        problems.append("`text` must be a non-empty string")
    elif len(text) > MAX_TEXT or "\x00" in text:
        problems.append(f"`text` must be under {MAX_TEXT:,} characters with no NUL")
    if not isinstance(title, str):
        problems.append("`title` must be a string")
    if not isinstance(metadata, dict):
        problems.append("`metadata` must be an object")
    if problems:
        raise InvalidInput(
            f"{where}: {'; '.join(problems)}", details={"file": str(path), "line": number}
        )
    key = str(record_id)
    if key in seen:
        raise InvalidInput(
            f"{where}: id {key!r} appears twice in the file",
            details={"file": str(path), "line": number},
        )
    seen.add(key)
    return Record(number, key, title, str(text), metadata)


def import_records(
    database: Database,
    blobs: BlobStore,
    principal: Principal,
    path: Path,
    *,
    pipeline_version: str,
    on_batch: Callable[[list[UUID], int], None] | None = None,
) -> ImportReport:
    """Validate ``path`` completely, then import it batch by batch.

    ``on_batch(run_ids, records_done)`` is called after each committed batch
    (the CLI queues the jobs and moves its progress bar there).
    """
    total = sum(1 for _ in read_records(path))  # full validation before any write
    source = _source_for(database, principal, path)
    report = ImportReport(run_ids=[])
    batch: list[Record] = []
    for record in read_records(path):
        batch.append(record)
        if len(batch) == BATCH:
            _flush(database, blobs, principal, source, batch, pipeline_version, report, on_batch)
            batch = []
    if batch:
        _flush(database, blobs, principal, source, batch, pipeline_version, report, on_batch)
    assert report.records == total
    return report


def _source_for(database: Database, principal: Principal, path: Path) -> UUID:
    with database.transaction(principal.tenant_id) as conn:
        row = conn.execute(
            "SELECT id FROM sources WHERE kind = 'records' AND name = %s AND deleted_at IS NULL",
            (path.name,),
        ).fetchone()
    if row is not None:
        return UUID(str(row["id"]))
    return (
        Sources(database)
        .create(principal, kind="records", name=path.name, uri=path.resolve().as_uri())
        .id
    )


def _flush(
    database: Database,
    blobs: BlobStore,
    principal: Principal,
    source: UUID,
    batch: list[Record],
    pipeline_version: str,
    report: ImportReport,
    on_batch: Callable[[list[UUID], int], None] | None,
) -> None:
    hashes = {}
    for record in batch:
        data = record.text.encode("utf-8")
        hashes[record.id] = blobs.put_bytes(principal.tenant_id, data, max_bytes=len(data)).sha256
    new_runs: list[UUID] = []
    with database.transaction(principal.tenant_id) as conn:
        existing = _existing(conn, [r.id for r in batch])
        for record in batch:
            sha = hashes[record.id]
            found = existing.get(record.id)
            if found is not None and found[1] == sha:
                report.unchanged += 1
                continue
            document_id = (
                found[0] if found is not None else _new_document(conn, principal, source, record)
            )
            report.new_documents += found is None
            version_id = _new_version(conn, principal, document_id, record, sha)
            report.new_versions += 1
            run, created = runs.create_or_get(
                conn,
                principal,
                document_id=document_id,
                version_id=version_id,
                pipeline_version=pipeline_version,
            )
            if created:
                new_runs.append(run.id)
        if new_runs:
            conn.execute(
                "UPDATE documents SET status = 'queued' WHERE id IN"
                " (SELECT document_id FROM ingest_runs WHERE id = ANY(%s))",
                (new_runs,),
            )
    report.records += len(batch)
    assert report.run_ids is not None
    report.run_ids.extend(new_runs)
    if on_batch is not None:
        on_batch(new_runs, report.records)


def _existing(conn: Connection, ids: list[str]) -> dict[str, tuple[UUID, str | None]]:
    rows = conn.execute(
        "SELECT d.external_id, d.id, v.content_sha256 FROM documents d"
        " LEFT JOIN document_versions v ON v.id = d.current_version_id"
        " WHERE d.external_id = ANY(%s) AND d.deleted_at IS NULL FOR UPDATE OF d",
        (ids,),
    ).fetchall()
    return {r["external_id"]: (r["id"], r["content_sha256"]) for r in rows}


def _new_document(conn: Connection, principal: Principal, source: UUID, record: Record) -> UUID:
    row = conn.execute(
        "INSERT INTO documents (tenant_id, source_id, external_id, title, metadata, created_by)"
        " VALUES (%s, %s, %s, %s, %s, %s) RETURNING id, title, external_id, version",
        (
            principal.tenant_id,
            source,
            record.id,
            record.title or record.id,
            Jsonb(record.metadata),
            principal.id,
        ),
    ).fetchone()
    assert row is not None
    history.record(
        conn,
        principal,
        entity_type="document",
        entity_id=row["id"],
        action="created",
        before=None,
        after=dict(row),
    )
    return UUID(str(row["id"]))


def _new_version(
    conn: Connection, principal: Principal, document_id: UUID, record: Record, sha: str
) -> UUID:
    size = len(record.text.encode("utf-8"))
    row = conn.execute(
        "INSERT INTO document_versions (tenant_id, document_id, version_no, content_sha256,"
        " byte_size, mime_type, filename, created_by)"
        " SELECT %s, %s, coalesce(max(version_no), 0) + 1, %s, %s, 'text/plain', %s, %s"
        " FROM document_versions WHERE document_id = %s RETURNING id, version_no",
        (
            principal.tenant_id,
            document_id,
            sha,
            size,
            f"{record.id}.txt",
            principal.id,
            document_id,
        ),
    ).fetchone()
    assert row is not None
    conn.execute(
        "UPDATE documents SET current_version_id = %s, title = %s,"
        " version = version + 1, updated_at = now() WHERE id = %s",
        (row["id"], record.title or record.id, document_id),
    )
    history.record(
        conn,
        principal,
        entity_type="document_version",
        entity_id=row["id"],
        action="created",
        before=None,
        after={
            "document_id": str(document_id),
            "version_no": row["version_no"],
            "content_sha256": sha,
        },
    )
    return UUID(str(row["id"]))
