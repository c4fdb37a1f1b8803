"""Compositions the CLI, API and worker share: status, rebuild, refresh.

``refresh`` is the freshness path (issue 7 item 4): an incremental build of
what changed since the live snapshot, published the same checked way, so one
new document is searchable in seconds without a full rebuild. It never
compacts (that re-tokenises every unit); status reports when a compacting
full build is due. ``rebuild`` is
the disaster-recovery path: every derived row recreated from canonical rows
alone (no vector reused from a previous snapshot), then published.
"""

from __future__ import annotations

from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.index import snapshots as snaps
from grounded.index.build import Builder, BuildReport
from grounded.index.publishing import publish
from grounded.index.units import catalog_revision


def status(
    database: Database, principal: Principal, *, limit: int = 20, max_segments: int = 8
) -> snaps.IndexStatus:
    """The live snapshot, whether it is stale, pending outbox work, recent history."""
    snaps.require_admin(principal)
    with database.transaction(principal.tenant_id) as conn:
        conn.execute("SET TRANSACTION READ ONLY")
        current = snaps.live(conn)
        revision = catalog_revision(conn, principal.tenant_id)
        pending, _ = snaps.pending_outbox(conn)
        history = snaps.history(conn, limit)
    return snaps.IndexStatus(
        live=current,
        catalog_revision=revision,
        stale=current is None or current.catalog_revision != revision,
        pending_outbox=pending,
        snapshots=tuple(history),
        compaction_due=current is not None and len(current.segments) > max_segments,
    )


def rebuild(builder: Builder, principal: Principal) -> BuildReport:
    """Full build from canonical rows alone, then publish."""
    report = builder.build(principal, incremental=False, reuse_vectors=False)
    published = publish(builder.database, principal, report.snapshot.generation)
    return BuildReport(
        published,
        report.indexed,
        report.deleted,
        report.reused_vectors,
        report.embedded,
        report.seconds,
    )


def refresh(builder: Builder, principal: Principal) -> BuildReport | None:
    """Index what changed since the live snapshot (a delta) and publish it; None when current."""
    state = status(builder.database, principal, limit=1)
    if state.live is not None and not state.stale and state.pending_outbox == 0:
        return None
    report = builder.build(principal, incremental=True)
    published = publish(builder.database, principal, report.snapshot.generation)
    return BuildReport(
        published,
        report.indexed,
        report.deleted,
        report.reused_vectors,
        report.embedded,
        report.seconds,
    )
