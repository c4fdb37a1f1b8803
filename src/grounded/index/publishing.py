"""Publishing and rolling back: the live pointer moves in one checked transaction.

Publish (seed 002 ADR-010) takes the tenant's catalog-revision row FOR UPDATE,
which serialises it with every catalog write and every other publish, then
checks, in order:

* the generation exists in this tenant (another tenant's is "not found");
* it is ``ready`` (not building, failed, live or retired);
* it is newer than the live generation, and a delta was built on the live one;
* its embedding space equals the live one's;
* its catalog revision is the current one, and the corpus fingerprint
  recomputed now from canonical rows equals the recorded one.

Only then does the old live snapshot become ``retired`` and the new one
``live``, and the outbox rows the build covered are marked processed. Any
failure rolls the transaction back: the old snapshot keeps serving. Rollback
re-publishes the newest retired snapshot that still has its derived rows.
"""

from __future__ import annotations

from collections.abc import Callable

from grounded.auth.principal import Principal
from grounded.db import Connection, Database
from grounded.errors import Conflict, EmbeddingMismatch
from grounded.index import snapshots as snaps
from grounded.index.units import catalog_revision, fingerprint, load_units

FaultHook = Callable[[str], None]


def _no_fault(step: str) -> None:
    return None


def current_fingerprint(conn: Connection) -> str:
    return fingerprint((u.key, u.row_hash) for u in load_units(conn, heavy=False))


def publish(
    database: Database,
    principal: Principal,
    generation: int,
    *,
    faults: FaultHook = _no_fault,
) -> snaps.Snapshot:
    """Make ``generation`` live, or refuse with the reason and change nothing."""
    snaps.require_admin(principal)
    with database.transaction(principal.tenant_id) as conn:
        revision = catalog_revision(conn, principal.tenant_id, lock="UPDATE")
        faults("publish.lock")
        target = snaps.by_generation(conn, generation, lock=True)
        current = snaps.live(conn)
        _check(conn, target, current, revision)
        faults("publish.check")
        if current is not None:
            conn.execute(
                "UPDATE index_snapshots SET state = 'retired', retired_at = now() WHERE id = %s",
                (current.id,),
            )
        faults("publish.retire")
        conn.execute(
            "UPDATE index_snapshots SET state = 'live', published_at = now() WHERE id = %s",
            (target.id,),
        )
        faults("publish.activate")
        conn.execute(
            "UPDATE index_outbox SET processed_at = now() WHERE processed_at IS NULL AND id <= %s",
            (target.outbox_watermark,),
        )
        faults("publish.outbox")
        published = snaps.by_id(conn, target.id)
    assert published is not None
    return published


def _check(
    conn: Connection, target: snaps.Snapshot, current: snaps.Snapshot | None, revision: int
) -> None:
    g = target.generation
    if target.state != "ready":
        raise Conflict(
            f"generation {g} is {target.state}; only a ready build can be published",
            details={"generation": g, "state": target.state},
        )
    if current is not None:
        if g <= current.generation:
            raise Conflict(
                f"generation {g} is older than the live generation {current.generation}",
                details={"generation": g, "live": current.generation},
            )
        if target.kind == "delta" and target.base_snapshot_id != current.id:
            raise Conflict(
                f"generation {g} is a delta on a snapshot that is no longer live "
                f"(live is {current.generation}); build again",
                details={"generation": g, "live": current.generation},
            )
        if current.embedding_model is not None and (
            target.embedding_model,
            target.embedding_dim,
        ) != (current.embedding_model, current.embedding_dim):
            raise EmbeddingMismatch(
                f"generation {g} uses {target.embedding_model}, the live index uses "
                f"{current.embedding_model}; vectors of two models are never mixed",
                details={"generation": g},
            )
    elif target.kind == "delta":
        raise Conflict(f"generation {g} is a delta and nothing is live", details={"generation": g})
    if target.catalog_revision != revision:
        raise Conflict(
            f"generation {g} is stale: built at catalog revision {target.catalog_revision}, "
            f"the catalog is now at {revision}; build again",
            details={"generation": g, "built_at": target.catalog_revision, "now": revision},
        )
    if target.corpus_fingerprint != current_fingerprint(conn):
        raise Conflict(
            f"generation {g} is stale: the corpus changed since it was built; build again",
            details={"generation": g},
        )


def rollback(database: Database, principal: Principal) -> snaps.Snapshot:
    """Serve the previous retired snapshot again; refused when history has none."""
    snaps.require_admin(principal)
    with database.transaction(principal.tenant_id) as conn:
        catalog_revision(conn, principal.tenant_id, lock="UPDATE")
        current = snaps.live(conn)
        if current is None:
            raise Conflict("nothing is live, so there is nothing to roll back")
        row = conn.execute(
            "SELECT generation FROM index_snapshots WHERE state = 'retired'"
            " AND generation < %s AND coalesce(error, '') NOT LIKE '%%[pruned]'"
            " ORDER BY generation DESC LIMIT 1",
            (current.generation,),
        ).fetchone()
        if row is None:
            raise Conflict(
                f"no earlier snapshot in history before generation {current.generation}",
                details={"live": current.generation},
            )
        target = snaps.by_generation(conn, int(row["generation"]), lock=True)
        conn.execute(
            "UPDATE index_snapshots SET state = 'retired', retired_at = now() WHERE id = %s",
            (current.id,),
        )
        conn.execute(
            "UPDATE index_snapshots SET state = 'live', published_at = now() WHERE id = %s",
            (target.id,),
        )
        restored = snaps.by_id(conn, target.id)
    assert restored is not None
    return restored
