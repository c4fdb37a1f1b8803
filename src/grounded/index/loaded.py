"""A snapshot in memory: unit arrays, CSR postings and filter columns, cached by id.

Snapshots are immutable once ready, so a process keeps the structure of each
snapshot it served in a small LRU keyed by snapshot id; publishing a new
generation simply makes readers load (and cache) the new id. Loading reads
the derived rows of the snapshot's segments only, resolving each unit to its
entry in the last segment that mentions it (a later delta replaces or deletes
it).

Scale: at 100k chunks the arrays hold ~7M postings (~60 MB); at 1M chunks
~70M postings (~600 MB) and a load of a minute or more, which is why the
cache is per snapshot and deltas reuse it (see docs/benchmarks.md).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import numpy as np
import numpy.typing as npt

from grounded.auth.principal import Principal
from grounded.db import Connection
from grounded.index.bm25 import Mask, Postings
from grounded.index.eligibility import EligibilitySpec
from grounded.index.snapshots import Snapshot

_KINDS = ("chunk", "item")


@dataclass(frozen=True)
class UnitRef:
    """What a candidate points at: the unit and the derived entry that scored it."""

    kind: str
    id: str
    entry_id: int
    document_id: str | None


class LoadedSnapshot:
    """Unit arrays (position i = one unit) plus postings over them.

    ``alive`` hides units that a later delta segment replaced or deleted: a
    snapshot that adds one segment to a cached snapshot is built by
    ``extended`` (append the delta's units, hide the ones it supersedes, stack
    a small postings block) instead of reloading every segment.
    """

    def __init__(self, snapshot: Snapshot, rows: list[dict[str, Any]], tenant_id: UUID) -> None:
        self.snapshot = snapshot
        self.tenant_id = tenant_id
        order = {seg: i for i, seg in enumerate(snapshot.segments)}
        current: dict[tuple[str, UUID], tuple[int, dict[str, Any]]] = {}
        for row in rows:
            key = (row["unit_kind"], row["unit_id"])
            rank = order[row["segment_id"]]
            held = current.get(key)
            if held is None or rank > held[0]:
                current[key] = (rank, row)
        live = sorted(
            (r for _, r in current.values() if not r["deleted"]),
            key=lambda r: (r["unit_kind"], str(r["unit_id"])),
        )
        self.kinds = np.array([_KINDS.index(r["unit_kind"]) for r in live], dtype=np.int8)
        self.unit_ids = [str(r["unit_id"]) for r in live]
        self.entry_ids = np.array([r["id"] for r in live], dtype=np.int64)
        self.vector_ids = _vector_ids(live)
        self.row_hashes = {(r["unit_kind"], str(r["unit_id"])): r["row_hash"] for r in live}
        self.document_ids = [str(r["document_id"]) if r["document_id"] else None for r in live]
        self.review_states = np.array([r["review_state"] or "" for r in live], dtype=object)
        self.confidence = np.array([r["confidence"] for r in live], dtype=object)
        self.categories = np.array([r["category"] or "" for r in live], dtype=object)
        self._acl = [tuple(r["acl_groups"] or ()) for r in live]
        self.public = np.array([not groups for groups in self._acl], dtype=np.bool_)
        self.alive = np.ones(len(live), dtype=np.bool_)
        self.postings = Postings.build([(r["terms"], r["weights"]) for r in live])
        self._index()

    def _index(self) -> None:
        # Tie-break by unit id: rank of each position in (kind, id) order.
        keys = [f"{_KINDS[int(k)]}:{u}" for k, u in zip(self.kinds, self.unit_ids, strict=True)]
        rank = np.empty(len(keys), dtype=np.int64)
        rank[np.argsort(np.array(keys, dtype=object), kind="stable")] = np.arange(len(keys))
        self.id_rank = rank
        self.position_of_vector = {
            int(v): i for i, v in enumerate(self.vector_ids) if self.alive[i] and v >= 0
        }
        self.position_of_key = {
            (_KINDS[int(self.kinds[i])], self.unit_ids[i]): i
            for i in range(len(self.unit_ids))
            if self.alive[i]
        }
        self._group_masks: dict[str, Mask] = {}
        self._lock = threading.Lock()

    @classmethod
    def extended(
        cls, base: LoadedSnapshot, snapshot: Snapshot, rows: list[dict[str, Any]]
    ) -> LoadedSnapshot:
        """``base`` plus one delta segment's rows (replacements and deletions)."""
        new = cls.__new__(cls)
        new.snapshot = snapshot
        new.tenant_id = base.tenant_id
        alive = base.alive.copy()
        for row in rows:
            held = base.position_of_key.get((row["unit_kind"], str(row["unit_id"])))
            if held is not None:
                alive[held] = False
        added = sorted(
            (r for r in rows if not r["deleted"]),
            key=lambda r: (r["unit_kind"], str(r["unit_id"])),
        )
        new.kinds = np.concatenate(
            [base.kinds, np.array([_KINDS.index(r["unit_kind"]) for r in added], dtype=np.int8)]
        )
        new.unit_ids = base.unit_ids + [str(r["unit_id"]) for r in added]
        new.entry_ids = np.concatenate(
            [base.entry_ids, np.array([r["id"] for r in added], dtype=np.int64)]
        )
        new.vector_ids = np.concatenate([base.vector_ids, _vector_ids(added)])
        new.row_hashes = dict(base.row_hashes)
        for row in rows:
            key = (row["unit_kind"], str(row["unit_id"]))
            new.row_hashes.pop(key, None)
            if not row["deleted"]:
                new.row_hashes[key] = row["row_hash"]
        new.document_ids = base.document_ids + [
            str(r["document_id"]) if r["document_id"] else None for r in added
        ]

        def objects(values: list[str]) -> npt.NDArray[np.object_]:
            return np.array(values, dtype=object)

        new.review_states = np.concatenate(
            [base.review_states, objects([r["review_state"] or "" for r in added])]
        )
        new.confidence = np.concatenate(
            [base.confidence, objects([r["confidence"] for r in added])]
        )
        new.categories = np.concatenate(
            [base.categories, objects([r["category"] or "" for r in added])]
        )
        new._acl = base._acl + [tuple(r["acl_groups"] or ()) for r in added]
        new.public = np.concatenate(
            [base.public, np.array([not r["acl_groups"] for r in added], dtype=np.bool_)]
        )
        new.alive = np.concatenate([alive, np.ones(len(added), dtype=np.bool_)])
        extra = Postings.build([(r["terms"], r["weights"]) for r in added], offset=base.size)
        new.postings = base.postings.stacked(extra)
        new._index()
        return new

    @property
    def size(self) -> int:
        return len(self.unit_ids)

    def ref(self, position: int) -> UnitRef:
        return UnitRef(
            kind=_KINDS[int(self.kinds[position])],
            id=self.unit_ids[position],
            entry_id=int(self.entry_ids[position]),
            document_id=self.document_ids[position],
        )

    def _group(self, group: str) -> Mask:
        with self._lock:
            mask = self._group_masks.get(group)
            if mask is None:
                mask = np.array([group in acl for acl in self._acl], dtype=np.bool_)
                self._group_masks[group] = mask
            return mask

    def eligible(self, principal: Principal, spec: EligibilitySpec) -> Mask:
        """Units ``principal`` may see that pass ``spec`` (same rule as auth.acl)."""
        if principal.tenant_id != self.tenant_id:
            return np.zeros(self.size, dtype=np.bool_)
        if principal.is_admin:
            mask = self.alive.copy()
        else:
            mask = self.public.copy()
            for group in principal.groups:
                mask |= self._group(group)
            mask &= self.alive
        if spec.unit_kinds is not None:
            mask &= np.isin(self.kinds, [_KINDS.index(k) for k in spec.unit_kinds])
        if spec.review_states is not None:
            is_item = self.kinds == _KINDS.index("item")
            mask &= ~is_item | np.isin(self.review_states, list(spec.review_states))
        if spec.confidence is not None:
            mask &= np.isin(self.confidence, list(spec.confidence))
        if spec.categories is not None:
            mask &= np.isin(self.categories, list(spec.categories))
        if spec.document_ids is not None:
            wanted = spec.document_ids
            mask &= np.array([d in wanted for d in self.document_ids], dtype=np.bool_)
        return mask


_ENTRY_COLUMNS = (
    "id, segment_id, unit_kind, unit_id, deleted, document_id, row_hash, acl_groups,"
    " review_state, confidence, category, terms, weights, vector_id"
)


def load(conn: Connection, tenant_id: UUID, snapshot: Snapshot) -> LoadedSnapshot:
    rows = conn.execute(
        f"SELECT {_ENTRY_COLUMNS} FROM index_entries WHERE segment_id = ANY(%s)",
        (list(snapshot.segments),),
    ).fetchall()
    return LoadedSnapshot(snapshot, rows, tenant_id)


def _vector_ids(rows: list[dict[str, Any]]) -> npt.NDArray[np.int64]:
    """Vector row of each unit (-1: none, e.g. a snapshot without vectors)."""
    ids = [r.get("vector_id") for r in rows]
    return np.array([-1 if v is None else v for v in ids], dtype=np.int64)


class SnapshotCache:
    """Process-wide LRU of loaded snapshots (immutable, so sharing is safe)."""

    def __init__(self, capacity: int = 4) -> None:
        self.capacity = capacity
        self._items: OrderedDict[UUID, LoadedSnapshot] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, conn: Connection, tenant_id: UUID, snapshot: Snapshot) -> LoadedSnapshot:
        with self._lock:
            found = self._items.get(snapshot.id)
            if found is not None:
                self._items.move_to_end(snapshot.id)
                return found
            base = self._items.get(snapshot.base_snapshot_id) if snapshot.base_snapshot_id else None
        if base is not None and base.snapshot.segments == snapshot.segments[:-1]:
            rows = conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM index_entries WHERE segment_id = %s",
                (snapshot.segments[-1],),
            ).fetchall()
            loaded = LoadedSnapshot.extended(base, snapshot, rows)
        else:
            loaded = load(conn, tenant_id, snapshot)
        with self._lock:
            self._items[snapshot.id] = loaded
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return loaded

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


CACHE = SnapshotCache()
