"""Keyset pagination with opaque cursors: stable order (created_at, id), no offsets."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar
from uuid import UUID

from grounded.errors import InvalidInput

T = TypeVar("T")

MAX_PAGE = 200


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None


def encode_cursor(created_at: datetime, id_: UUID) -> str:
    raw = json.dumps([created_at.isoformat(), str(id_)]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> tuple[datetime, UUID] | None:
    if cursor is None:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created, id_ = json.loads(base64.urlsafe_b64decode(padded))
        return datetime.fromisoformat(created), UUID(id_)
    except (ValueError, TypeError) as exc:
        raise InvalidInput("cursor is not valid", details={"field": "cursor"}) from exc


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}", details={"field": "limit"})
    return limit


def keyset_page(
    conn: Any,
    table: str,
    columns: str,
    clauses: list[str],
    params: dict[str, Any],
    *,
    cursor: str | None,
    limit: int,
) -> tuple[list[dict[str, Any]], str | None]:
    """One page of ``table`` in (created_at, id) order after ``cursor``: (rows, next cursor).

    ``clauses`` and ``params`` are the caller's filters (named placeholders);
    the keyset condition and the limit are added here, once for every list.
    """
    check_limit(limit)
    after = decode_cursor(cursor)
    where = list(clauses)
    values = {**params, "page_limit": limit + 1}
    if after is not None:
        where.append("(created_at, id) > (%(page_at)s, %(page_id)s)")
        values["page_at"], values["page_id"] = after
    sql = f"SELECT {columns} FROM {table}"
    if where:
        sql += f" WHERE {' AND '.join(where)}"
    rows = conn.execute(f"{sql} ORDER BY created_at, id LIMIT %(page_limit)s", values).fetchall()
    page = [dict(r) for r in rows[:limit]]
    more = len(rows) > limit
    return page, encode_cursor(page[-1]["created_at"], page[-1]["id"]) if more else None
