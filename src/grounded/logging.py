"""Structured logs: one JSON object per line (or readable console lines).

Configured once in an entry point. Log lines name tenants by id only and never
carry document text, queries or secrets; callers pass ids, counts and timings.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is *now*.

    Holding the stream object seen at configure time breaks when a caller swaps
    and closes it (test runners, embedding applications): every later log line
    would raise "I/O operation on closed file" inside a request.
    """

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(level: str = "info", fmt: str = "json") -> None:
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
    # Route stdlib loggers (uvicorn, procrastinate, alembic) through the same renderer.
    handler = logging.StreamHandler(_CurrentStderr())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                *shared,
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                renderer,
            ]
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(_LEVELS[level])


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
