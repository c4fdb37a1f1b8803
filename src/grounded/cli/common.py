"""Helpers every CLI command shares: settings, output, the error boundary."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from pydantic import ValidationError
from rich.console import Console

from grounded.config import Settings
from grounded.errors import ConfigError
from grounded.logging import configure

console = Console()
err_console = Console(stderr=True)

JsonOption = typer.Option(False, "--json", help="Print machine-readable JSON.")


def load_settings() -> Settings:
    """Build settings once per command; a bad value names its key."""
    try:
        settings = Settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"invalid settings: {problems}") from exc
    configure(settings.log_level, settings.log_format if not sys.stderr.isatty() else "console")
    return settings


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, default=str, ensure_ascii=False) + "\n")
