"""Building a snapshot beside the live one: full, incremental (delta) and rebuild.

Steps, each a fault point (``faults(step)``) so tests can raise or kill there:

1. ``lock``      per-tenant build lock (a session advisory lock: two builds
                 never interleave; a killed builder's lock dies with it);
2. ``read``      one transaction holding the catalog-revision row FOR SHARE
                 (catalog writes wait, so the corpus read is one revision),
                 a ``building`` row is recorded;
3. ``tokenize``, ``embed``  CPU work, no transaction open;
4. ``write``     entries and vectors of the new segment, one transaction;
5. ``ready``     the snapshot is marked ready with its fingerprint.

Nothing here touches the live pointer: publish does (publish.py). A failure
marks the build failed; a kill leaves it ``building`` and the next build marks
it failed and prunes its rows. The live snapshot serves throughout.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import numpy as np
from psycopg.types.json import Jsonb

from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.errors import Conflict, EmbeddingMismatch
from grounded.index import loaded as loaded_mod
from grounded.index import snapshots as snaps
from grounded.index import store
from grounded.index.bm25 import Bm25Params
from grounded.index.embedder import PassageEmbedder, Vectors, normalise
from grounded.index.entries import make_entry, tombstone
from grounded.index.settings import IndexSettings
from grounded.index.tokenize import analyzer
from grounded.index.units import Unit, catalog_revision, fingerprint, load_units

FaultHook = Callable[[str], None]


def _no_fault(step: str) -> None:
    return None


@dataclass(frozen=True)
class BuildReport:
    snapshot: snaps.Snapshot
    indexed: int
    deleted: int
    reused_vectors: int
    embedded: int
    seconds: dict[str, float]


class Builder:
    """Writes new generations. Construct with the process's database and settings."""

    def __init__(
        self,
        database: Database,
        settings: IndexSettings,
        embedder: PassageEmbedder | None = None,
        *,
        faults: FaultHook = _no_fault,
    ) -> None:
        self.database = database
        self.settings = settings
        self.embedder = embedder
        self.faults = faults
        self.params = Bm25Params(
            k1=settings.bm25_k1, b=settings.bm25_b, title_weight=settings.title_weight
        )

    # -- the lock ---------------------------------------------------------------

    @contextmanager
    def _lock(self, tenant_id: UUID) -> Iterator[None]:
        # A session-level lock on a connection held for the whole build: it is
        # released on exit, and by PostgreSQL if this process dies.
        with self.database._connection() as conn:
            conn.autocommit = True
            got = conn.execute(
                "SELECT pg_try_advisory_lock(hashtextextended(%s, 0)) AS ok",
                (snaps.build_lock_key(tenant_id),),
            ).fetchone()
            if not got or not got["ok"]:
                raise Conflict("another index build is running for this tenant; try again later")
            try:
                yield
            finally:
                conn.execute(
                    "SELECT pg_advisory_unlock(hashtextextended(%s, 0))",
                    (snaps.build_lock_key(tenant_id),),
                )
                conn.autocommit = False

    # -- public -----------------------------------------------------------------

    def build(
        self, principal: Principal, *, incremental: bool = False, reuse_vectors: bool = True
    ) -> BuildReport:
        """A new ready generation (not yet live). ``incremental`` writes only changes."""
        snaps.require_admin(principal)
        with self._lock(principal.tenant_id):
            self.faults("lock")
            return self._build(principal, incremental=incremental, reuse_vectors=reuse_vectors)

    # -- steps ------------------------------------------------------------------

    def _build(
        self, principal: Principal, *, incremental: bool, reuse_vectors: bool
    ) -> BuildReport:
        tenant = principal.tenant_id
        timings: dict[str, float] = {}
        started = time.perf_counter()
        with self.database.transaction(tenant) as conn:
            conn.execute(
                "UPDATE index_snapshots SET state = 'failed', error = 'abandoned: builder stopped'"
                " WHERE state = 'building'"
            )
            snaps.prune(conn, self.settings.history_keep)
            current = snaps.live(conn)
        self._check_model(current)
        base = None
        if incremental and current is not None:
            if current.format_version != snaps.FORMAT_VERSION:
                raise Conflict("the live index has an old format; run a full build")
            # Always a delta, however many segments are stacked: compaction is a
            # full build (status says when it is due), kept off the freshness path.
            base = current
        if base is not None:
            with self.database.transaction(tenant) as conn:
                base_loaded = loaded_mod.CACHE.get(conn, tenant, base)
        with self.database.transaction(tenant) as conn:
            revision = catalog_revision(conn, tenant, lock="SHARE")
            heads = load_units(conn, heavy=False)
            hashes = {u.key: u.row_hash for u in heads}
            if base is not None:
                changed = [k for k, h in hashes.items() if base_loaded.row_hashes.get(k) != h]
                gone = [k for k in base_loaded.row_hashes if k not in hashes]
                units = load_units(conn, heavy=True, keys=changed)
            else:
                gone = []
                units = load_units(conn, heavy=True)
            _, watermark = snaps.pending_outbox(conn)
            generation = snaps.next_generation(conn)
            config = self._config()
            row = conn.execute(
                "INSERT INTO index_snapshots (tenant_id, generation, state, kind, base_snapshot_id,"
                " config, embedding_model, embedding_dim, catalog_revision, format_version,"
                " outbox_watermark) VALUES (%s, %s, 'building', %s, %s, %s, %s, %s, %s, %s, %s)"
                " RETURNING id",
                (
                    tenant,
                    generation,
                    "delta" if base else "full",
                    base.id if base else None,
                    Jsonb(config),
                    self.embedder.model_id if self.embedder else None,
                    self.embedder.dim if self.embedder else None,
                    revision,
                    snaps.FORMAT_VERSION,
                    watermark,
                ),
            ).fetchone()
            assert row is not None
            snapshot_id: UUID = row["id"]
            self.faults("read")
        timings["read"] = time.perf_counter() - started
        try:
            return self._finish(
                principal,
                snapshot_id,
                units,
                gone,
                hashes,
                base,
                current,
                reuse_vectors,
                timings,
            )
        except BaseException as exc:
            if isinstance(exc, Exception):
                with self.database.transaction(tenant) as conn:
                    conn.execute(
                        "UPDATE index_snapshots SET state = 'failed', error = %s WHERE id = %s",
                        (f"{type(exc).__name__}: {exc}"[:500], snapshot_id),
                    )
            raise

    def _finish(
        self,
        principal: Principal,
        snapshot_id: UUID,
        units: list[Unit],
        gone: list[tuple[str, str]],
        hashes: dict[tuple[str, str], str],
        base: snaps.Snapshot | None,
        current: snaps.Snapshot | None,
        reuse_vectors: bool,
        timings: dict[str, float],
    ) -> BuildReport:
        tenant = principal.tenant_id
        t = time.perf_counter()
        shared = self._shared_vectors(tenant, units, current, reuse_vectors)
        rows = [make_entry(u, self.params, shared.get(i)) for i, u in enumerate(units)]
        rows += [tombstone(k) for k in gone]
        self.faults("tokenize")
        timings["tokenize"] = time.perf_counter() - t
        t = time.perf_counter()
        fresh = [i for i in range(len(units)) if i not in shared]
        vectors = self._embed([units[i] for i in fresh])
        self.faults("embed")
        timings["embed"] = time.perf_counter() - t
        t = time.perf_counter()
        with self.database.transaction(tenant) as conn:
            ids = store.write_entries(conn, tenant, snapshot_id, rows)
            self.faults("write_entries")
            timings["write_entries"] = time.perf_counter() - t
            t = time.perf_counter()
            if self.embedder is not None and fresh:
                table = store.vector_table(conn, self.embedder.model_id, self.embedder.dim)
                store.write_vectors(
                    conn, table, tenant, [ids[units[i].key] for i in fresh], vectors
                )
            self.faults("write_vectors")
        timings["write_vectors"] = time.perf_counter() - t
        with self.database.transaction(tenant) as conn:
            self.faults("ready")
            segments = [*(base.segments if base else ()), snapshot_id]
            row = conn.execute(
                "UPDATE index_snapshots SET state = 'ready', built_at = now(), segments = %s,"
                " corpus_fingerprint = %s, unit_count = %s WHERE id = %s AND state = 'building'"
                " RETURNING id",
                (segments, fingerprint(hashes.items()), len(hashes), snapshot_id),
            ).fetchone()
            if row is None:
                raise Conflict("the build was marked failed while running; build again")
            snapshot = snaps.by_id(conn, snapshot_id)
        assert snapshot is not None
        embedded = len(fresh) if self.embedder is not None else 0
        return BuildReport(snapshot, len(units), len(gone), len(shared), embedded, timings)

    def _check_model(self, current: snaps.Snapshot | None) -> None:
        """Bad input: a build whose embedding space differs from the live snapshot's."""
        if current is None or current.embedding_model is None:
            return
        mine = (self.embedder.model_id, self.embedder.dim) if self.embedder else (None, None)
        if mine != (current.embedding_model, current.embedding_dim):
            raise EmbeddingMismatch(
                f"the live index (generation {current.generation}) uses embedding model "
                f"{current.embedding_model} ({current.embedding_dim}-d) but this build would use "
                f"{mine[0] or 'none'}; vectors of two models are never mixed",
                details={"live": current.embedding_model, "build": mine[0]},
            )

    def _config(self) -> dict[str, Any]:
        return {
            "format_version": snaps.FORMAT_VERSION,
            "tokenizers": analyzer().ids,
            "bm25": self.params.as_dict(),
            "embedding": {"model": self.embedder.model_id, "dim": self.embedder.dim}
            if self.embedder
            else None,
            "chunking_version": "stored per chunk (ingest)",
            "enrichment_version": None,
            "unit_kinds": ["chunk", "item"],
        }

    def _shared_vectors(
        self,
        tenant: UUID,
        units: Sequence[Unit],
        current: snaps.Snapshot | None,
        reuse: bool,
    ) -> dict[int, int]:
        """Unit index -> existing vector row, for units unchanged since the live snapshot."""
        if self.embedder is None or not reuse or current is None or not units:
            return {}
        if current.embedding_model != self.embedder.model_id:
            return {}
        with self.database.transaction(tenant) as conn:
            live = loaded_mod.CACHE.get(conn, tenant, current)
        shared = {}
        for i, unit in enumerate(units):
            position = live.position_of_key.get(unit.key)
            if position is not None and live.row_hashes.get(unit.key) == unit.row_hash:
                vector_id = int(live.vector_ids[position])
                if vector_id >= 0:
                    shared[i] = vector_id
        return shared

    def _embed(self, units: Sequence[Unit]) -> Vectors:
        """Vectors for ``units``: the chunk's stored embedding of this model, else embedded."""
        if self.embedder is None or not units:
            return np.zeros((0, 0), dtype=np.float32)
        model, dim = self.embedder.model_id, self.embedder.dim
        out: list[Vectors | None] = [u.vector(model, dim) for u in units]
        missing = [i for i, v in enumerate(out) if v is None]
        batch = self.settings.embed_batch
        for lo in range(0, len(missing), batch):
            part = missing[lo : lo + batch]
            texts = [_passage(units[i]) for i in part]
            got = normalise(np.asarray(self.embedder.embed_passages(texts), dtype=np.float32))
            if got.shape != (len(part), dim):
                raise EmbeddingMismatch(
                    f"the embedder returned vectors of shape {got.shape}, expected {dim}-d",
                    details={"model": model},
                )
            for i, vector in zip(part, got, strict=True):
                out[i] = vector
        return np.stack([v for v in out if v is not None])


def _passage(unit: Unit) -> str:
    return "\n".join(x for x in (unit.title, unit.context_line, unit.text) if x)
