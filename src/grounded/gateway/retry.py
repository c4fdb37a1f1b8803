"""Retry with exponential backoff on transient provider errors only.

Only ``ModelUnavailable`` (timeouts, connection failures, 429, 5xx) is
retried; a garbage answer or a 4xx would fail the same way again, so it goes
straight to the next provider. A server's ``Retry-After`` is honoured up to
the configured cap, so a misbehaving server cannot park a worker for an hour.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from grounded.errors import ModelUnavailable
from grounded.gateway.settings import RetrySettings

T = TypeVar("T")


def backoff_delay(attempt: int, settings: RetrySettings, retry_after: float | None) -> float:
    """Seconds to wait before try ``attempt + 1`` (attempt counts from 1)."""
    if retry_after is not None:
        return min(max(float(retry_after), 0.0), settings.max_backoff_s)
    base = settings.backoff_s * 2.0 ** (attempt - 1)
    jittered = base * (0.5 + random.random() / 2)  # noqa: S311 - jitter, not security
    return min(jittered, settings.max_backoff_s)


def with_retry(
    call: Callable[[], T],
    settings: RetrySettings,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[T, int]:
    """Run ``call``; return its value and the number of tries it took."""
    for attempt in range(1, settings.attempts + 1):
        try:
            return call(), attempt
        except ModelUnavailable as exc:
            if attempt == settings.attempts:
                exc.details["tries"] = attempt
                raise
            retry_after = exc.details.get("retry_after_s")
            sleep(backoff_delay(attempt, settings, retry_after))
    raise AssertionError("unreachable")  # pragma: no cover
