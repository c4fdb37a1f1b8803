"""Attempt budgets counted in the database, so they hold across workers and hosts.

Fixed windows per bucket, incremented and read in one atomic upsert
(``grounded_private.rate_hit``, migration 0002). Buckets are SHA-256 digests
of ``purpose:key``, so the counter table holds no e-mail or address in clear.
Every attempt counts, successful or not: counting only failures would need a
read-then-write that parallel requests could slip through.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from grounded.db import Database
from grounded.errors import RateLimited


def hit(
    database: Database, purpose: str, key: str, *, limit: int, window_s: int, now: datetime
) -> None:
    """Count one attempt; raise RateLimited once ``limit`` is exceeded in the window."""
    bucket = hashlib.sha256(f"{purpose}:{key}".encode()).digest()
    with database.unscoped() as conn:
        row = conn.execute(
            "SELECT grounded_private.rate_hit(%s, %s, %s) AS hits", (bucket, now, window_s)
        ).fetchone()
    hits = int(row["hits"]) if row is not None else 0
    if hits > limit:
        raise RateLimited(
            f"too many attempts; wait up to {window_s} seconds and try again",
            details={"retry_after_s": window_s},
        )
