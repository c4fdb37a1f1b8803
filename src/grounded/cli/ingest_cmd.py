"""`grounded ingest` and `grounded documents`: put files in, see what happened to them."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from grounded.cli.common import JsonOption, console, err_console, load_settings, print_json
from grounded.cli.local_admin import local_admin
from grounded.db import Database
from grounded.errors import InvalidInput
from grounded.ingest import runs
from grounded.ingest.chunking import ChunkingConfig
from grounded.ingest.jobs import defer_run
from grounded.ingest.pipeline import pipeline_version
from grounded.ingest.records_import import import_records
from grounded.ingest.upload import UploadRequest, accept
from grounded.knowledge import Documents
from grounded.queue import build_queue
from grounded.storage import BlobStore

documents_app = typer.Typer(help="See documents and their ingestion status.", no_args_is_help=True)
TenantOption = typer.Option(..., "--tenant", "-t", help="Tenant slug to act in.")


def ingest(
    paths: list[Path] = typer.Argument(None, help="Files or folders to ingest."),
    tenant: str = TenantOption,
    recursive: bool = typer.Option(False, "--recursive", "-r", help="Descend into folders."),
    records: Path = typer.Option(
        None,
        "--records",
        help="A JSONL file of {id,title,text,metadata} records (text already extracted).",
    ),
    wait: bool = typer.Option(False, "--wait", help="Wait until every file is processed."),
    timeout: float = typer.Option(3600, help="With --wait: give up after this many seconds."),
    as_json: bool = JsonOption,
) -> None:
    """Upload files (or a records file) and queue them; `--wait` follows them to the end.

    A file's identity is its absolute path: ingesting it again after it changed
    makes a new version; unchanged files are skipped.
    """
    settings = load_settings()
    principal = local_admin(settings, tenant)
    files = list(_files(paths or [], recursive))
    if not files and records is None:
        raise InvalidInput(
            "nothing to ingest: give files, folders or --records FILE", details={"field": "paths"}
        )
    version = pipeline_version(ChunkingConfig())
    limit = settings.max_upload_mb * 1024 * 1024
    blobs = BlobStore(settings.raw_dir)
    results: list[dict[str, Any]] = []
    run_ids: list[UUID] = []
    with Database.open(settings) as database:
        queue = build_queue(database.app_url)
        with queue.open(), _progress(as_json) as progress:
            if records is not None:
                run_ids.extend(
                    _import(database, blobs, principal, records, version, queue, progress)
                )
            overall = progress.add_task("files", total=len(files))
            for path in files:
                try:
                    with path.open("rb") as handle:
                        accepted = accept(
                            database,
                            blobs,
                            principal,
                            handle,
                            UploadRequest(filename=path.name, external_id=str(path.resolve())),
                            max_bytes=limit,
                            pipeline_version=version,
                        )
                    if accepted.new_run:
                        defer_run(queue, principal.tenant_id, accepted.run)
                    run_ids.append(accepted.run.id)
                    results.append(
                        {
                            "path": str(path),
                            "document_id": str(accepted.document.id),
                            "run_id": str(accepted.run.id),
                            "new_version": accepted.new_version,
                        }
                    )
                except InvalidInput as exc:
                    results.append({"path": str(path), "error": exc.message})
                progress.advance(overall)
            if wait and run_ids:
                _wait(database, principal, run_ids, progress, timeout)
        final = {r.id: r for r in (runs.get(database, principal, i) for i in run_ids)}
    for result in results:
        run = final.get(UUID(result["run_id"])) if "run_id" in result else None
        if run is not None:
            result.update({"status": run.status, "stage": run.stage, "error": run.error})
    failed = [r for r in final.values() if r.status == "failed"]
    if as_json:
        print_json(
            {
                "files": results,
                "runs": len(final),
                "failed": len(failed),
                "done": sum(1 for r in final.values() if r.status == "done"),
            }
        )
    else:
        _summary(results, final)
    if failed or any("error" in r and r["error"] and "run_id" not in r for r in results):
        raise typer.Exit(1)


def _import(
    database: Database,
    blobs: BlobStore,
    principal: Any,
    path: Path,
    version: str,
    queue: Any,
    progress: Progress,
) -> list[UUID]:
    task = progress.add_task(f"records {path.name}", total=None)

    def on_batch(new_runs: list[UUID], done: int) -> None:
        if new_runs:
            queue.configure_task("grounded:ingest").batch_defer(
                *({"tenant_id": str(principal.tenant_id), "run_id": str(r)} for r in new_runs)
            )
        progress.update(task, completed=done)

    report = import_records(
        database, blobs, principal, path, pipeline_version=version, on_batch=on_batch
    )
    progress.update(task, total=report.records, completed=report.records)
    err_console.print(
        f"records: {report.records} read, {report.new_documents} new documents, "
        f"{report.new_versions} new versions, {report.unchanged} unchanged"
    )
    return report.run_ids or []


def _wait(
    database: Database, principal: Any, run_ids: list[UUID], progress: Progress, timeout: float
) -> None:
    task = progress.add_task("processing", total=len(run_ids))
    deadline = time.monotonic() + timeout
    while True:
        with database.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                "SELECT count(*) FILTER (WHERE status IN ('done', 'failed')) AS finished,"
                " coalesce(sum(progress), 0) AS progress FROM ingest_runs WHERE id = ANY(%s)",
                (run_ids,),
            ).fetchone()
        assert row is not None
        progress.update(task, completed=float(row["progress"]))
        if row["finished"] >= len(run_ids):
            progress.update(task, completed=len(run_ids))
            return
        if time.monotonic() > deadline:
            err_console.print(
                f"gave up waiting after {timeout:g}s; is a worker running (`grounded worker`)?"
            )
            return
        time.sleep(0.5)


def _summary(results: list[dict[str, Any]], final: dict[UUID, runs.Run]) -> None:
    table = Table("file", "status", "stage", "detail")
    for r in results:
        table.add_row(
            Path(r["path"]).name,
            r.get("status", "refused"),
            r.get("stage", ""),
            r.get("error") or "",
        )
    if results:
        console.print(table)
    counts: dict[str, int] = {}
    for run in final.values():
        counts[run.status] = counts.get(run.status, 0) + 1
    console.print(", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing queued")


def _files(paths: list[Path], recursive: bool) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            pattern = "**/*" if recursive else "*"
            yield from sorted(
                p for p in path.glob(pattern) if p.is_file() and not p.name.startswith(".")
            )
        elif path.is_file():
            yield path
        else:
            raise InvalidInput(f"{path}: no such file or folder", details={"field": "paths"})


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        disable=quiet,
        transient=False,
    )


@documents_app.command("list")
def list_documents(
    tenant: str = TenantOption,
    limit: int = typer.Option(50, help="Documents per page (1-200)."),
    cursor: str = typer.Option(None, help="Continue from a previous page."),
    as_json: bool = JsonOption,
) -> None:
    """Documents with their newest ingestion status."""
    settings = load_settings()
    principal = local_admin(settings, tenant)
    with Database.open(settings) as database:
        page = Documents(database).page(principal, cursor=cursor, limit=limit)
        latest = runs.latest_for_documents(database, principal, [d.id for d in page.items])
    if as_json:
        print_json(
            {
                "items": [_doc_json(d, latest.get(d.id)) for d in page.items],
                "next_cursor": page.next_cursor,
            }
        )
        return
    table = Table("id", "title", "status", "stage", "progress", "error")
    table.columns[0].no_wrap = True
    for d in page.items:
        run = latest.get(d.id)
        table.add_row(
            str(d.id),
            d.title[:40],
            d.status,
            run.stage if run else "",
            f"{run.progress:.0%}" if run else "",
            (run.error or "")[:60] if run else "",
        )
    console.print(table)
    if page.next_cursor:
        console.print(f"more: --cursor {page.next_cursor}")


@documents_app.command("show")
def show_document(
    document_id: UUID, tenant: str = TenantOption, as_json: bool = JsonOption
) -> None:
    """One document: stage, progress, error and timings of its newest run."""
    settings = load_settings()
    principal = local_admin(settings, tenant)
    with Database.open(settings) as database:
        document = Documents(database).get(principal, document_id)
        run = runs.latest_for_documents(database, principal, [document_id]).get(document_id)
    data = _doc_json(document, run)
    if as_json:
        print_json(data)
        return
    console.print(f"[bold]{document.title}[/]  {document.id}  status={document.status}")
    if run is not None:
        console.print(f"stage {run.stage}, {run.progress:.0%}, attempts {run.attempts}")
        if run.error:
            console.print(f"[red]error[/] ({run.error_code}): {run.error}", highlight=False)
        for stage, seconds in run.timings.items():
            console.print(f"  {stage:8s} {seconds:8.3f} s")
        for key, value in run.detail.items():
            console.print(f"  {key}: {value}", highlight=False)


@documents_app.command("failed")
def failed_documents(tenant: str = TenantOption, as_json: bool = JsonOption) -> None:
    """The dead-letter view: runs that gave up, with their reasons."""
    settings = load_settings()
    principal = local_admin(settings, tenant)
    with Database.open(settings) as database:
        dead = runs.failed(database, principal)
    if as_json:
        print_json([dataclasses.asdict(r) for r in dead])
        return
    table = Table("document", "code", "error", "attempts")
    for r in dead:
        table.add_row(str(r.document_id), r.error_code or "", r.error or "", str(r.attempts))
    console.print(table)


def _doc_json(document: Any, run: runs.Run | None) -> dict[str, Any]:
    data = dataclasses.asdict(document)
    data["ingest"] = dataclasses.asdict(run) if run is not None else None
    return data
