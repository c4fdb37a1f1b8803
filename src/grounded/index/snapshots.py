"""Snapshot records: generations, states, the live pointer, history and pruning.

States (seed 002 ADR-010): ``building`` -> ``ready`` -> ``live`` -> ``retired``,
or ``failed``. At most one snapshot per tenant is ``live`` (a unique partial
index); only it is served. Retired snapshots are history: kept for rollback
until pruned, never served as current. A catalog write bumps the tenant's
catalog revision, which makes the live snapshot *stale* (its recorded
revision is older) without touching it: status reports it, publish of a build
from an older revision is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from grounded.auth.principal import Principal
from grounded.db import Connection
from grounded.errors import Forbidden, NotFound
from grounded.index import store

FORMAT_VERSION = 2
"""Layout of derived rows this code reads; other versions fall back to a scan."""

_COLUMNS = (
    "id, generation, state, kind, base_snapshot_id, segments, format_version, config,"
    " embedding_model, embedding_dim, corpus_fingerprint, catalog_revision, unit_count,"
    " outbox_watermark, error, created_at, built_at, published_at, retired_at"
)


@dataclass(frozen=True)
class Snapshot:
    id: UUID
    generation: int
    state: str
    kind: str
    base_snapshot_id: UUID | None
    segments: tuple[UUID, ...]
    format_version: int
    config: dict[str, Any]
    embedding_model: str | None
    embedding_dim: int | None
    corpus_fingerprint: str | None
    catalog_revision: int
    unit_count: int
    outbox_watermark: int
    error: str | None
    created_at: datetime
    built_at: datetime | None
    published_at: datetime | None
    retired_at: datetime | None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["segments"] = [str(s) for s in self.segments]
        return data


@dataclass(frozen=True)
class IndexStatus:
    live: Snapshot | None
    catalog_revision: int
    stale: bool
    pending_outbox: int
    snapshots: tuple[Snapshot, ...]
    compaction_due: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "compaction_due": self.compaction_due,
            "live": self.live.as_dict() if self.live else None,
            "catalog_revision": self.catalog_revision,
            "stale": self.stale,
            "pending_outbox": self.pending_outbox,
            "snapshots": [s.as_dict() for s in self.snapshots],
        }


def require_admin(principal: Principal) -> None:
    if not principal.is_admin:
        raise Forbidden("managing the index needs the admin role")


def _snapshot(row: dict[str, Any]) -> Snapshot:
    return Snapshot(**{**row, "segments": tuple(row["segments"] or ())})


def live(conn: Connection) -> Snapshot | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM index_snapshots WHERE state = 'live'").fetchone()
    return _snapshot(row) if row else None


def by_generation(conn: Connection, generation: int, *, lock: bool = False) -> Snapshot:
    """The tenant's snapshot ``generation``; NotFound for another tenant's or none."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM index_snapshots WHERE generation = %s"
        + (" FOR UPDATE" if lock else ""),
        (generation,),
    ).fetchone()
    if row is None:
        raise NotFound(
            f"no index generation {generation} in this tenant", details={"generation": generation}
        )
    return _snapshot(row)


def by_id(conn: Connection, snapshot_id: UUID) -> Snapshot | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM index_snapshots WHERE id = %s", (snapshot_id,)
    ).fetchone()
    return _snapshot(row) if row else None


def history(conn: Connection, limit: int = 20) -> list[Snapshot]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM index_snapshots ORDER BY generation DESC LIMIT %s", (limit,)
    ).fetchall()
    return [_snapshot(r) for r in rows]


def next_generation(conn: Connection) -> int:
    row = conn.execute("SELECT coalesce(max(generation), 0) + 1 AS g FROM index_snapshots")
    found = row.fetchone()
    assert found is not None
    return int(found["g"])


def pending_outbox(conn: Connection) -> tuple[int, int]:
    """(count, highest id) of outbox rows not yet covered by a published snapshot."""
    row = conn.execute(
        "SELECT count(*) AS n, coalesce(max(id), 0) AS hi FROM index_outbox"
        " WHERE processed_at IS NULL"
    ).fetchone()
    assert row is not None
    return int(row["n"]), int(row["hi"])


def build_lock_key(tenant_id: UUID) -> str:
    return f"grounded.index.build:{tenant_id}"


def prune(conn: Connection, keep: int) -> list[int]:
    """Drop derived rows of history past the newest ``keep`` retired snapshots.

    Failed builds lose their rows at once. A segment still listed by the live,
    a ready or a kept snapshot survives. Pruned snapshots stay as records
    (``error`` says so) and can no longer be rolled back to.
    """
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM index_snapshots WHERE coalesce(error, '') NOT LIKE '%%[pruned]'"
        " ORDER BY generation DESC"
    ).fetchall()
    snaps = [_snapshot(r) for r in rows]
    retired = [s for s in snaps if s.state == "retired"]
    doomed = [s for s in retired[keep:]] + [s for s in snaps if s.state == "failed"]
    kept: set[UUID] = set()
    for s in snaps:
        if s not in doomed:
            kept.update(s.segments)
    drop: Sequence[UUID] = sorted(
        {seg for s in doomed for seg in (*s.segments, s.id)} - kept, key=str
    )
    if drop:
        conn.execute("DELETE FROM index_entries WHERE segment_id = ANY(%s)", (list(drop),))
        tables = conn.execute(
            "SELECT v.table_name FROM index_vector_spaces v JOIN (SELECT DISTINCT"
            " embedding_model, embedding_dim FROM index_snapshots) s"
            " ON s.embedding_model = v.model AND s.embedding_dim = v.dim"
        ).fetchall()
        store.collect_garbage(conn, [str(t["table_name"]) for t in tables])
    for s in doomed:
        conn.execute(
            "UPDATE index_snapshots SET error = concat_ws(' ', error, '[pruned]') WHERE id = %s",
            (s.id,),
        )
    return [s.generation for s in doomed]
