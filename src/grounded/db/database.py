"""The data layer's one door: pooled application-role connections bound to a tenant.

Every transaction that touches tenant-owned rows starts with
``bind_tenant(tenant_id, key)`` (see migration 0001); forced row-level
security does the rest. There is no "all tenants" transaction on this pool:
the owner identity is used only by migrations and local admin commands.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from grounded.config import Settings
from grounded.db import migrate, urls
from grounded.errors import DatabaseUnavailable, SchemaMismatch

Connection = psycopg.Connection[DictRow]


class Database:
    """Application-role connection pool. Build one per process, close it at exit."""

    def __init__(
        self,
        app_url: str,
        bind_key: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 10.0,
    ) -> None:
        self._bind_key = bind_key
        self._timeout = timeout
        self._pool: ConnectionPool[Connection] = ConnectionPool(
            app_url,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            kwargs={"row_factory": dict_row, "connect_timeout": max(1, int(timeout))},
            connection_class=psycopg.Connection[DictRow],
            check=ConnectionPool.check_connection,
            open=False,
            name="grounded-app",
        )
        self.app_url = app_url

    @classmethod
    def open(cls, settings: Settings, *, check_schema: bool = True) -> Database:
        """Resolve (or start) the database, check its schema, and open the pool."""
        found = urls.resolve(settings)
        _probe_app_role(found.app, settings.db_connect_timeout_s)
        database = cls(
            found.app,
            migrate.bind_key(settings),
            min_size=settings.db_pool_min,
            max_size=settings.db_pool_max,
            timeout=settings.db_connect_timeout_s,
        )
        database.start()
        if check_schema:
            try:
                with database.unscoped() as conn:
                    migrate.require_current(conn)
            except BaseException:
                database.close()
                raise
        return database

    def start(self) -> None:
        try:
            self._pool.open(wait=True, timeout=self._timeout)
        except PoolTimeout as exc:
            raise DatabaseUnavailable(
                "cannot connect to the database as the application role; "
                "has `grounded db upgrade` run?"
            ) from exc

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @contextmanager
    def transaction(self, tenant_id: UUID) -> Iterator[Connection]:
        """A transaction in which only ``tenant_id``'s rows exist.

        The binding cannot be changed or repeated inside the transaction, and
        ends with it. Commits on normal exit, rolls back on an exception.
        """
        with self._connection() as conn, conn.transaction():
            conn.execute("SELECT grounded_private.bind_tenant(%s, %s)", (tenant_id, self._bind_key))
            yield conn

    @contextmanager
    def unscoped(self) -> Iterator[Connection]:
        """A transaction bound to no tenant: tenant-owned tables look empty.

        For tenant-less rows only (queue, worker probes, schema checks).
        """
        with self._connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise DatabaseUnavailable(
                f"no database connection within {self._timeout:g}s; is PostgreSQL up?"
            ) from exc


def _probe_app_role(app_url: str, timeout: float) -> None:
    """One direct connection first, so a missing role or server fails at once and
    says why, instead of a pool retrying for the whole timeout."""
    try:
        psycopg.connect(app_url, connect_timeout=max(1, int(timeout))).close()
    except psycopg.OperationalError as exc:
        text = str(exc)
        if "does not exist" in text and "role" in text:
            raise SchemaMismatch(
                "the database has not been set up for grounded; run `grounded db upgrade` first"
            ) from exc
        raise DatabaseUnavailable(
            f"cannot connect to the database: {text.strip().splitlines()[-1]}"
        ) from exc
