"""`grounded serve`: the REST API."""

from __future__ import annotations

import errno
import socket
import subprocess
import sys

import typer
import uvicorn

from grounded.api.app import create_app
from grounded.cli.common import err_console, load_settings
from grounded.db import Database
from grounded.errors import ConfigError


def serve(
    host: str = typer.Option(None, help="Address to bind [default: GROUNDED_HOST]."),
    port: int = typer.Option(None, help="Port to bind [default: GROUNDED_PORT]."),
    with_worker: bool = typer.Option(
        False, "--with-worker", help="Also run one background worker beside the API."
    ),
) -> None:
    """Serve the REST API (OpenAPI docs at /docs). Refuses an un-migrated database."""
    settings = load_settings()
    host = host or settings.host
    port = port or settings.port
    _check_port_free(host, port)
    database = Database.open(settings)  # raises with the fix if the schema is not current
    worker = subprocess.Popen([sys.executable, "-m", "grounded", "worker"]) if with_worker else None
    try:
        err_console.print(f"grounded serving on http://{host}:{port}  (docs: /docs)")
        uvicorn.run(
            create_app(settings, database),
            host=host,
            port=port,
            log_config=None,
            access_log=False,
        )
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=60)
        database.close()


def _check_port_free(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(
                    f"port {port} on {host} is already in use; stop the other process or "
                    f"pass --port (or set GROUNDED_PORT)"
                ) from exc
            raise ConfigError(f"cannot bind {host}:{port}: {exc.strerror}") from exc
