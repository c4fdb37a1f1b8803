"""The gateway's rows: cache, budgets and usage, ledger (migration 0003).

Every function takes the tenant first and runs in a transaction bound to it,
so row-level security, not this code, keeps tenants apart.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from uuid import UUID

import numpy as np
from psycopg.types.json import Jsonb

from grounded.gateway.settings import BudgetSettings

if TYPE_CHECKING:
    from grounded.db.database import Database


@dataclass(frozen=True)
class Caps:
    period: str
    max_tokens: int | None
    max_cost_usd: float | None

    @property
    def unlimited(self) -> bool:
        return self.max_tokens is None and self.max_cost_usd is None


@dataclass(frozen=True)
class LedgerEntry:
    task: str
    provider: str
    model: str
    latency_ms: float
    cache_hit: bool
    outcome: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    error_code: str | None = None
    tries: int = 1
    redactions: int = 0


def period_start(period: str, now: dt.datetime | None = None) -> dt.date:
    today = (now or dt.datetime.now(dt.UTC)).date()
    return today if period == "day" else today.replace(day=1)


class GatewayStore:
    def __init__(self, database: Database) -> None:
        self._db = database

    # --- cache -----------------------------------------------------------

    def cache_get_many(self, tenant_id: UUID, keys: Sequence[bytes]) -> dict[bytes, Any]:
        if not keys:
            return {}
        with self._db.transaction(tenant_id) as conn:
            rows = conn.execute(
                "SELECT key, value FROM gateway_cache "
                "WHERE tenant_id = %s AND key = ANY(%s) AND expires_at > now()",
                (tenant_id, list(keys)),
            ).fetchall()
        return {bytes(row["key"]): row["value"] for row in rows}

    def cache_put_many(
        self,
        tenant_id: UUID,
        entries: Sequence[tuple[bytes, Any]],
        *,
        task: str,
        provider: str,
        model: str,
        ttl_s: int,
        context_key: bytes | None = None,
        query_vector: Sequence[float] | None = None,
    ) -> None:
        if not entries:
            return
        with self._db.transaction(tenant_id) as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO gateway_cache (tenant_id, key, task, provider, model, value, "
                "context_key, query_vector, expires_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, now() + make_interval(secs => %s)) "
                "ON CONFLICT (tenant_id, key) DO UPDATE SET value = EXCLUDED.value, "
                "created_at = now(), expires_at = EXCLUDED.expires_at",
                [
                    (
                        tenant_id,
                        key,
                        task,
                        provider,
                        model,
                        Jsonb(value),
                        context_key,
                        list(query_vector) if query_vector is not None else None,
                        ttl_s,
                    )
                    for key, value in entries
                ],
            )

    def cache_nearest(
        self,
        tenant_id: UUID,
        context_key: bytes,
        vector: Sequence[float],
        threshold: float,
    ) -> Any | None:
        """The cached answer whose question is closest to ``vector`` within one context."""
        with self._db.transaction(tenant_id) as conn:
            rows = conn.execute(
                "SELECT value, query_vector FROM gateway_cache WHERE tenant_id = %s "
                "AND context_key = %s AND expires_at > now() AND query_vector IS NOT NULL "
                "ORDER BY created_at DESC LIMIT 200",
                (tenant_id, context_key),
            ).fetchall()
        if not rows:
            return None
        probe = np.asarray(vector, dtype=np.float32)
        best, best_value = -1.0, None
        for row in rows:
            candidate = np.asarray(row["query_vector"], dtype=np.float32)
            if candidate.shape != probe.shape:
                continue
            similarity = float(candidate @ probe)
            if similarity > best:
                best, best_value = similarity, row["value"]
        return best_value if best >= threshold else None

    # --- budgets ---------------------------------------------------------

    def caps(self, tenant_id: UUID, defaults: BudgetSettings) -> Caps:
        with self._db.transaction(tenant_id) as conn:
            row = conn.execute(
                "SELECT period, max_tokens, max_cost_usd FROM gateway_budgets WHERE tenant_id = %s",
                (tenant_id,),
            ).fetchone()
        if row is None:
            return Caps(defaults.period, defaults.max_tokens, defaults.max_cost_usd)
        cost = row["max_cost_usd"]
        return Caps(row["period"], row["max_tokens"], float(cost) if cost is not None else None)

    def set_caps(self, tenant_id: UUID, caps: Caps) -> None:
        with self._db.transaction(tenant_id) as conn:
            conn.execute(
                "INSERT INTO gateway_budgets (tenant_id, period, max_tokens, max_cost_usd) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (tenant_id) DO UPDATE SET "
                "period = EXCLUDED.period, max_tokens = EXCLUDED.max_tokens, "
                "max_cost_usd = EXCLUDED.max_cost_usd, updated_at = now()",
                (tenant_id, caps.period, caps.max_tokens, caps.max_cost_usd),
            )

    def reserve(self, tenant_id: UUID, caps: Caps, tokens: int, cost: float) -> bool:
        """Add an estimate to this period's usage if it stays within the caps, atomically.

        One upsert whose UPDATE branch carries the cap test: PostgreSQL locks
        the usage row and evaluates the condition on its latest version, so
        concurrent reservations serialise and the sum never passes the cap.
        """
        if caps.max_tokens is not None and tokens > caps.max_tokens:
            return False
        if caps.max_cost_usd is not None and cost > caps.max_cost_usd:
            return False
        with self._db.transaction(tenant_id) as conn:
            row = conn.execute(
                "INSERT INTO gateway_usage AS u (tenant_id, period_start, tokens, cost_usd) "
                "VALUES (%(t)s, %(p)s, %(tok)s, %(cost)s) "
                "ON CONFLICT (tenant_id, period_start) DO UPDATE SET "
                "tokens = u.tokens + EXCLUDED.tokens, cost_usd = u.cost_usd + EXCLUDED.cost_usd "
                "WHERE (%(max_tok)s::bigint IS NULL OR u.tokens + EXCLUDED.tokens <= %(max_tok)s) "
                "AND (%(max_cost)s::numeric IS NULL "
                "     OR u.cost_usd + EXCLUDED.cost_usd <= %(max_cost)s) "
                "RETURNING u.tokens",
                {
                    "t": tenant_id,
                    "p": period_start(caps.period),
                    "tok": tokens,
                    "cost": Decimal(str(cost)),
                    "max_tok": caps.max_tokens,
                    "max_cost": (
                        Decimal(str(caps.max_cost_usd)) if caps.max_cost_usd is not None else None
                    ),
                },
            ).fetchone()
        return row is not None

    def adjust(self, tenant_id: UUID, caps: Caps, tokens: int, cost: float) -> None:
        """Replace a reservation by the actual figures (``tokens``/``cost`` are deltas)."""
        if tokens == 0 and cost == 0:
            return
        with self._db.transaction(tenant_id) as conn:
            conn.execute(
                "UPDATE gateway_usage SET tokens = GREATEST(tokens + %s, 0), "
                "cost_usd = GREATEST(cost_usd + %s, 0) "
                "WHERE tenant_id = %s AND period_start = %s",
                (tokens, Decimal(str(cost)), tenant_id, period_start(caps.period)),
            )

    def usage(self, tenant_id: UUID, period: str) -> tuple[int, float]:
        with self._db.transaction(tenant_id) as conn:
            row = conn.execute(
                "SELECT tokens, cost_usd FROM gateway_usage "
                "WHERE tenant_id = %s AND period_start = %s",
                (tenant_id, period_start(period)),
            ).fetchone()
        return (0, 0.0) if row is None else (int(row["tokens"]), float(row["cost_usd"]))

    # --- ledger ----------------------------------------------------------

    def record(self, tenant_id: UUID, entry: LedgerEntry) -> None:
        with self._db.transaction(tenant_id) as conn:
            conn.execute(
                "INSERT INTO gateway_ledger (tenant_id, task, provider, model, tokens_in, "
                "tokens_out, cost_usd, latency_ms, cache_hit, outcome, error_code, tries, "
                "redactions) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    tenant_id,
                    entry.task,
                    entry.provider,
                    entry.model,
                    entry.tokens_in,
                    entry.tokens_out,
                    Decimal(str(entry.cost_usd)),
                    max(entry.latency_ms, 0.0),
                    entry.cache_hit,
                    entry.outcome,
                    entry.error_code,
                    entry.tries,
                    entry.redactions,
                ),
            )

    def ledger(self, tenant_id: UUID, limit: int = 100) -> list[dict[str, Any]]:
        with self._db.transaction(tenant_id) as conn:
            return list(
                conn.execute(
                    "SELECT task, provider, model, tokens_in, tokens_out, cost_usd, latency_ms, "
                    "cache_hit, outcome, error_code, tries, redactions FROM gateway_ledger "
                    "WHERE tenant_id = %s ORDER BY id DESC LIMIT %s",
                    (tenant_id, limit),
                ).fetchall()
            )
