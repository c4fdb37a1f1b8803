"""`grounded index`: status, build, publish, rollback, rebuild, refresh of a tenant's index."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.table import Table

from grounded.auth.principal import Principal
from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.cli.local_admin import local_admin
from grounded.db import Database
from grounded.index import Builder, BuildReport, IndexStatus, Snapshot, publish, rollback
from grounded.index import rebuild as rebuild_index
from grounded.index import refresh as refresh_index
from grounded.index import status as index_status
from grounded.index.embedder import GatewayEmbedder, PassageEmbedder

app = typer.Typer(
    help="Index snapshots: build beside the live index, publish atomically, roll back.",
    no_args_is_help=True,
)

TenantOption = typer.Option(..., "--tenant", "-t", help="Tenant slug to act in.")
VectorsOption = typer.Option(
    True, "--vectors/--no-vectors", help="Embed units through the model gateway (dense index)."
)


@contextmanager
def _session(tenant: str, vectors: bool = False) -> Iterator[tuple[Builder, Principal]]:
    settings = load_settings()
    principal = local_admin(settings, tenant)
    with Database.open(settings) as database:
        embedder: PassageEmbedder | None = None
        gateway = None
        if vectors:
            from grounded.gateway import open_gateway

            gateway = open_gateway(settings, database)
            live = index_status(database, principal, limit=1).live
            pinned = live.embedding_model if live is not None else None
            embedder = GatewayEmbedder(gateway, principal, require_model=pinned)
        try:
            yield Builder(database, settings.index, embedder), principal
        finally:
            if gateway is not None:
                gateway.close()


def _snapshot_line(s: Snapshot) -> str:
    model = f"{s.embedding_model} ({s.embedding_dim}-d)" if s.embedding_model else "no vectors"
    return (
        f"generation {s.generation} [{s.state}] {s.kind}, {s.unit_count} units, {model}, "
        f"catalog revision {s.catalog_revision}, fingerprint {(s.corpus_fingerprint or '-')[:12]}"
    )


def _report(report: BuildReport, as_json: bool) -> None:
    if as_json:
        print_json(_report_json(report))
        return
    console.print(_snapshot_line(report.snapshot), highlight=False)
    console.print(
        f"indexed {report.indexed}, deleted {report.deleted}, vectors reused "
        f"{report.reused_vectors}, embedded {report.embedded}; "
        + ", ".join(f"{k} {v:.2f}s" for k, v in report.seconds.items()),
        highlight=False,
    )


def _report_json(report: BuildReport) -> dict[str, Any]:
    return {
        "snapshot": report.snapshot.as_dict(),
        "indexed": report.indexed,
        "deleted": report.deleted,
        "reused_vectors": report.reused_vectors,
        "embedded": report.embedded,
        "seconds": report.seconds,
    }


def _status(state: IndexStatus, as_json: bool) -> None:
    if as_json:
        print_json(state.as_dict())
        return
    if state.live is None:
        console.print("no index published yet", highlight=False)
    else:
        console.print("live: " + _snapshot_line(state.live), highlight=False)
    console.print(
        f"catalog revision {state.catalog_revision}; "
        f"{'STALE' if state.stale else 'current'}; pending outbox {state.pending_outbox}"
        + ("; compaction due (`grounded index build --publish`)" if state.compaction_due else ""),
        highlight=False,
    )
    table = Table("gen", "state", "kind", "units", "revision", "built", "error")
    for s in state.snapshots:
        table.add_row(
            str(s.generation),
            s.state,
            s.kind,
            str(s.unit_count),
            str(s.catalog_revision),
            s.built_at.isoformat(timespec="seconds") if s.built_at else "-",
            s.error or "",
        )
    console.print(table)


@app.command("status")
def status_cmd(tenant: str = TenantOption, as_json: bool = JsonOption) -> None:
    """The live snapshot, staleness, pending changes and recent history."""
    with _session(tenant) as (builder, principal):
        state = index_status(
            builder.database, principal, max_segments=builder.settings.max_segments
        )
        _status(state, as_json)


@app.command("build")
def build(
    tenant: str = TenantOption,
    incremental: bool = typer.Option(
        False, "--incremental", help="Write only what changed since the live snapshot."
    ),
    then_publish: bool = typer.Option(False, "--publish", help="Publish the build at once."),
    vectors: bool = VectorsOption,
    as_json: bool = JsonOption,
) -> None:
    """Build a new generation beside the live one (it is not served until published)."""
    with _session(tenant, vectors) as (builder, principal):
        report = builder.build(principal, incremental=incremental)
        if then_publish:
            live = publish(builder.database, principal, report.snapshot.generation)
            report = BuildReport(
                live,
                report.indexed,
                report.deleted,
                report.reused_vectors,
                report.embedded,
                report.seconds,
            )
        _report(report, as_json)


@app.command("publish")
def publish_cmd(
    generation: int = typer.Argument(..., help="The ready generation to make live."),
    tenant: str = TenantOption,
    as_json: bool = JsonOption,
) -> None:
    """Switch the live pointer after checking generation, catalog revision and fingerprint."""
    with _session(tenant) as (builder, principal):
        live = publish(builder.database, principal, generation)
        if as_json:
            print_json(live.as_dict())
        else:
            console.print("live: " + _snapshot_line(live), highlight=False)


@app.command("rollback")
def rollback_cmd(tenant: str = TenantOption, as_json: bool = JsonOption) -> None:
    """Serve the previous snapshot in history again."""
    with _session(tenant) as (builder, principal):
        live = rollback(builder.database, principal)
        if as_json:
            print_json(live.as_dict())
        else:
            console.print("live: " + _snapshot_line(live), highlight=False)


@app.command("rebuild")
def rebuild_cmd(
    tenant: str = TenantOption, vectors: bool = VectorsOption, as_json: bool = JsonOption
) -> None:
    """Recreate every derived structure from canonical rows alone, then publish."""
    with _session(tenant, vectors) as (builder, principal):
        _report(rebuild_index(builder, principal), as_json)


@app.command("refresh")
def refresh_cmd(
    tenant: str = TenantOption, vectors: bool = VectorsOption, as_json: bool = JsonOption
) -> None:
    """Index what changed since the live snapshot and publish it (no-op when current)."""
    with _session(tenant, vectors) as (builder, principal):
        report = refresh_index(builder, principal)
        if report is None:
            if as_json:
                print_json({"changed": False})
            else:
                console.print("the live index is current", highlight=False)
            return
        _report(report, as_json)
