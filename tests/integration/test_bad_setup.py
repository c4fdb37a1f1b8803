"""Bad setups fail with one clear line, a non-zero exit, and change nothing."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from grounded.db import DatabaseUrls, embedded

pytestmark = pytest.mark.integration


def run_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    full_env = {
        k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_") and k != "DATABASE_URL"
    }
    full_env.update({"GROUNDED_CONFIG": "/nonexistent.toml", "COLUMNS": "200"})
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "grounded", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )


def external_env(urls: DatabaseUrls, data_dir: Path) -> dict[str, str]:
    return {
        "DATABASE_URL": urls.owner,
        "GROUNDED_APP_DATABASE_URL": urls.app,
        "GROUNDED_DATA_DIR": str(data_dir),
    }


def test_unwritable_data_dir(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = run_cli("db", "upgrade", env={"GROUNDED_DATA_DIR": str(blocker / "data")})
    assert result.returncode == 3
    assert "data directory" in result.stderr and "GROUNDED_DATA_DIR" in result.stderr
    assert "Traceback" not in result.stderr
    assert blocker.read_text() == "not a directory"


def test_port_in_use(settings_env: dict[str, str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cli("serve", "--port", str(port), env=settings_env)
    assert result.returncode == 3
    assert f"port {port}" in result.stderr and "already in use" in result.stderr
    assert "Traceback" not in result.stderr


def test_unmigrated_database_is_refused(
    pg_server: embedded.EmbeddedServer, pg_data_dir: Path
) -> None:
    with psycopg.connect(pg_server.url(database="postgres"), autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS empty_db")
        conn.execute("CREATE DATABASE empty_db")
    from tests.conftest import urls_for

    env = external_env(urls_for(pg_server, "empty_db"), pg_data_dir)
    result = run_cli("serve", "--port", "0", env=env)
    assert result.returncode == 4
    assert "grounded db upgrade" in result.stderr


def test_newer_schema_is_refused(db_urls: DatabaseUrls, pg_data_dir: Path) -> None:
    with psycopg.connect(db_urls.owner, autocommit=True) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999_future'")
    env = external_env(db_urls, pg_data_dir)
    for args in (("db", "upgrade"), ("serve", "--port", "0")):
        result = run_cli(*args, env=env)
        assert result.returncode == 4, result.stderr
        assert "newer than this grounded" in result.stderr
    with psycopg.connect(db_urls.owner) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (
            "9999_future",
        )


@pytest.fixture
def settings_env(db_urls: DatabaseUrls, pg_data_dir: Path) -> dict[str, str]:
    return external_env(db_urls, pg_data_dir)


@pytest.fixture(scope="module")
def server_without_pgvector() -> Iterator[str]:
    """A real PostgreSQL built from the same binaries with pgvector removed."""
    root = Path(tempfile.mkdtemp(prefix="grounded-novector-"))
    # Same layout as the wheel: the binaries find their vendored libraries
    # through an RPATH of $ORIGIN/../../../pgserver.libs.
    original = embedded._bin_dir().parent
    install = root / "site" / "pgserver" / "pginstall"
    shutil.copytree(original, install, symlinks=True)
    shutil.copytree(original.parent.parent / "pgserver.libs", root / "site" / "pgserver.libs")
    for path in list(install.rglob("vector*")):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    data = root / "data"
    sock = root / "sock"
    sock.mkdir()
    data.mkdir()
    ident = embedded._as_server_user()
    as_user = {"user": ident.user, "group": ident.group, "extra_groups": ident.extra_groups}
    for path in (root, data, sock):
        embedded._give_to_server_user(root, path)
    for sub in (root / "site").rglob("*"):
        sub.chmod(sub.stat().st_mode | 0o005)
    subprocess.run(
        [str(install / "bin" / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"],
        check=True,
        capture_output=True,
        cwd=str(root),
        **as_user,
    )  # type: ignore[call-overload]
    subprocess.run(
        [
            str(install / "bin" / "pg_ctl"),
            "-D",
            str(data),
            "-w",
            "-l",
            str(root / "log"),
            "-o",
            f"-c listen_addresses='' -k {sock}",
            "start",
        ],
        check=True,
        capture_output=True,
        cwd=str(root),
        start_new_session=True,
        **as_user,
    )  # type: ignore[call-overload]
    try:
        yield f"postgresql://postgres@/postgres?host={sock}"
    finally:
        subprocess.run(
            [str(install / "bin" / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"],
            capture_output=True,
            cwd=str(root),
            **as_user,
        )  # type: ignore[call-overload]
        shutil.rmtree(root, ignore_errors=True)


def test_database_without_pgvector(server_without_pgvector: str, tmp_path: Path) -> None:
    result = run_cli(
        "db",
        "upgrade",
        env={"DATABASE_URL": server_without_pgvector, "GROUNDED_DATA_DIR": str(tmp_path)},
    )
    assert result.returncode == 4
    assert "pgvector" in result.stderr and "apt-get install" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    with psycopg.connect(server_without_pgvector) as conn:
        assert conn.execute("SELECT to_regclass('public.alembic_version')").fetchone() == (None,)
        assert conn.execute(
            "SELECT count(*) FROM pg_roles WHERE rolname = 'grounded_app'"
        ).fetchone() == (0,)
