"""Readiness checks shared by `/readyz` and `grounded doctor`."""

from __future__ import annotations

from dataclasses import dataclass

from psycopg.rows import tuple_row

from grounded.db import Database, migrate
from grounded.errors import GroundedError


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def readiness(database: Database) -> list[Check]:
    """Database reachable, schema current, pgvector present, queue schema present."""
    checks: list[Check] = []
    try:
        with database.unscoped() as conn:
            cur = conn.cursor(row_factory=tuple_row)
            version = cur.execute("SHOW server_version").fetchone()
            checks.append(Check("database", True, f"PostgreSQL {version[0] if version else '?'}"))
            try:
                revision = migrate.require_current(conn)
                checks.append(Check("migrations", True, f"at head {revision}"))
            except GroundedError as exc:
                checks.append(Check("migrations", False, exc.message))
            vector = cur.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
            checks.append(
                Check(
                    "pgvector",
                    vector is not None,
                    f"pgvector {vector[0]}" if vector else "extension not installed",
                )
            )
            queue = cur.execute(
                "SELECT to_regclass('public.procrastinate_jobs') IS NOT NULL"
            ).fetchone()
            queue_ok = bool(queue and queue[0])
            checks.append(
                Check(
                    "queue",
                    queue_ok,
                    "procrastinate schema present" if queue_ok else "queue schema missing",
                )
            )
    except GroundedError as exc:
        checks.append(Check("database", False, exc.message))
    return checks
