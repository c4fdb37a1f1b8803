"""Restore logging after in-process CLI calls (typer's CliRunner).

A command configures structlog and the root logger to write to the
``sys.stderr`` of the moment; under CliRunner that stream is closed when the
call returns, and any later log line in the same process (an API 500 handler,
a worker) would fail. Tests that invoke the CLI in-process wrap it in this.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import structlog


@contextmanager
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    saved = structlog.get_config()
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        structlog.reset_defaults()
        structlog.configure(**saved)
