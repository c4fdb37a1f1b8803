"""Keyset pagination with opaque cursors: stable order (created_at, id), no offsets."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar
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
