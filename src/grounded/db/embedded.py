"""The embedded PostgreSQL (with pgvector) that runs when no DATABASE_URL is set.

The binaries come from the ``pgserver`` wheel (PostgreSQL 16 + pgvector); the
lifecycle is ours because a service needs different rules than pgserver's
"last Python handle stops the server":

* one server per data directory, found or started under a file lock in the
  data directory, so an API and a worker starting at the same instant share it;
* the server outlives the process that started it (``grounded db stop`` ends
  it), in its own session, so killing the API never takes the database down;
* it listens only on a Unix socket in a 0700 directory owned by the server's
  OS user: nothing on the network, and no other local user can connect;
* as root it runs as the system user ``grounded-pg`` (PostgreSQL refuses to run
  as root), made traversable only where it must be.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import filelock
import psycopg

from grounded.errors import DatabaseUnavailable, DataDirError

SERVER_OS_USER = "grounded-pg"
DATABASE_NAME = "grounded"
SUPERUSER = "postgres"
_SOCKET_NAME = ".s.PGSQL.5432"
_MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux; keep a margin
_START_TIMEOUT_S = 60
_LOCK_TIMEOUT_S = 120


def _bin_dir() -> Path:
    # Located without importing pgserver: its import creates a runtime dir and
    # warns when XDG_RUNTIME_DIR is unset, and we only need its binaries.
    spec = importlib.util.find_spec("pgserver")
    if spec is None or spec.origin is None:
        raise DatabaseUnavailable(
            "the pgserver package is not installed; reinstall grounded or set DATABASE_URL"
        )
    return Path(spec.origin).parent / "pginstall" / "bin"


@dataclass(frozen=True)
class EmbeddedServer:
    """Where a running embedded server can be reached."""

    pgdata: Path
    socket_dir: Path
    pid: int

    def url(self, user: str = SUPERUSER, database: str = DATABASE_NAME) -> str:
        return f"postgresql://{user}@/{database}?host={self.socket_dir}"


def pgdata_dir(data_dir: Path) -> Path:
    return data_dir / "pg"


def socket_dir_for(data_dir: Path) -> Path:
    """A socket directory short enough for sun_path, stable for this data dir."""
    preferred = data_dir / "run"
    if len(str(preferred / _SOCKET_NAME)) <= _MAX_SOCKET_PATH:
        return preferred
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"grounded-pg-{digest}"


def ensure_running(data_dir: Path) -> EmbeddedServer:
    """Start the embedded server for ``data_dir`` unless it already runs; return it.

    Safe to call from many processes at once: the first initialises and starts,
    the others wait on the lock and then reuse the running server.
    Raises DataDirError when the data directory cannot be used and
    DatabaseUnavailable when PostgreSQL does not come up (with its log tail).
    """
    _prepare_data_dir(data_dir)
    lock = filelock.FileLock(str(data_dir / "pg.lock"), timeout=_LOCK_TIMEOUT_S)
    try:
        with lock:
            running = _running_server(data_dir)
            if running is None:
                _initdb_if_needed(data_dir)
                running = _start(data_dir)
            _ensure_database(running)
            return running
    except filelock.Timeout as exc:
        raise DatabaseUnavailable(
            f"another process held {data_dir / 'pg.lock'} for {_LOCK_TIMEOUT_S}s; "
            "is a `grounded` command stuck? Stop it and retry."
        ) from exc


def running_server(data_dir: Path) -> EmbeddedServer | None:
    """The embedded server of ``data_dir`` if it is up and ready, else None."""
    return _running_server(data_dir)


def stop(data_dir: Path) -> bool:
    """Stop the embedded server (fast shutdown). Returns False if it was not running."""
    lock = filelock.FileLock(str(data_dir / "pg.lock"), timeout=_LOCK_TIMEOUT_S)
    with lock:
        if _running_server(data_dir) is None:
            return False
        _pg_ctl(data_dir, ["-w", "-m", "fast", "stop"])
        return True


# -- internals ---------------------------------------------------------------


def _server_user() -> str | None:
    """OS user to run PostgreSQL as: None means the current user."""
    return SERVER_OS_USER if os.geteuid() == 0 else None


def _prepare_data_dir(data_dir: Path) -> None:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        probe = data_dir / ".write-probe"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise DataDirError(
            f"data directory {data_dir} is not writable ({exc.strerror}); "
            "set GROUNDED_DATA_DIR to a directory you own."
        ) from exc


def _running_server(data_dir: Path) -> EmbeddedServer | None:
    pid_file = pgdata_dir(data_dir) / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
    except OSError:
        return None
    if len(lines) < 8 or lines[7].strip() != "ready":
        return None
    pid = int(lines[0])
    if not _alive(pid):
        return None
    return EmbeddedServer(pgdata_dir(data_dir), Path(lines[4].strip()), pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _initdb_if_needed(data_dir: Path) -> None:
    pgdata = pgdata_dir(data_dir)
    if (pgdata / "PG_VERSION").exists():
        return
    if pgdata.exists() and any(pgdata.iterdir()):
        raise DataDirError(
            f"{pgdata} exists but is not a PostgreSQL data directory; move it away and retry."
        )
    pgdata.mkdir(mode=0o700, exist_ok=True)
    _give_to_server_user(data_dir, pgdata)
    _run(
        "initdb",
        [
            "-D",
            str(pgdata),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
        ],
        data_dir,
    )


def _start(data_dir: Path) -> EmbeddedServer:
    pgdata_dir(data_dir)
    socket_dir = socket_dir_for(data_dir)
    socket_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    socket_dir.chmod(0o700)
    _give_to_server_user(data_dir, socket_dir)
    options = " ".join(
        [
            "-c listen_addresses=''",
            f"-c unix_socket_directories='{socket_dir}'",
            "-c unix_socket_permissions=0700",
            "-c max_connections=200",
            "-c shared_buffers=256MB",
            "-c fsync=on",
        ]
    )
    _pg_ctl(
        data_dir,
        [
            "-w",
            "-t",
            str(_START_TIMEOUT_S),
            "-l",
            str(data_dir / "postgres.log"),
            "-o",
            options,
            "start",
        ],
    )
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        server = _running_server(data_dir)
        if server is not None:
            return server
        time.sleep(0.1)
    raise DatabaseUnavailable(
        f"embedded PostgreSQL did not become ready; see {data_dir / 'postgres.log'}"
    )


def _ensure_database(server: EmbeddedServer) -> None:
    with psycopg.connect(server.url(database="postgres"), autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def _pg_ctl(data_dir: Path, args: list[str]) -> None:
    log = data_dir / "postgres.log"
    if _server_user() is not None and not log.exists():
        log.touch()
        _give_to_server_user(data_dir, log)
    _run("pg_ctl", ["-D", str(pgdata_dir(data_dir)), *args], data_dir)


def _run(program: str, args: list[str], data_dir: Path) -> None:
    """Run a PostgreSQL binary as the server user, in its own session.

    Output goes to files, not pipes: a postmaster that inherits a pipe keeps it
    open and the caller would wait forever.
    """
    identity = _as_server_user()
    with tempfile.TemporaryFile("w+") as out:
        result = subprocess.run(  # noqa: S603 - fixed binary, no shell
            [str(_bin_dir() / program), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            user=identity.user,
            group=identity.group,
            extra_groups=identity.extra_groups,
            cwd=str(pgdata_dir(data_dir)),
            start_new_session=True,
            check=False,
            timeout=_START_TIMEOUT_S + 30,
        )
        if result.returncode != 0:
            out.seek(0)
            output = out.read()[-2000:]
            log_tail = _tail(data_dir / "postgres.log")
            raise DatabaseUnavailable(
                f"embedded PostgreSQL: `{program}` failed (exit {result.returncode}): "
                f"{output.strip()} {log_tail}".strip()
            )


@dataclass(frozen=True)
class _Identity:
    """subprocess identity: the server user *and its group*. Keeping root's
    group would make 0700 root-owned ancestors deny traversal."""

    user: int | None = None
    group: int | None = None
    extra_groups: list[int] | None = None


def _as_server_user() -> _Identity:
    user = _server_user()
    if user is None:
        return _Identity()
    import pwd

    entry = pwd.getpwnam(user)
    return _Identity(entry.pw_uid, entry.pw_gid, [])


def _tail(path: Path, lines: int = 5) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _give_to_server_user(data_dir: Path, path: Path) -> None:
    """As root: hand ``path`` to the server user and let it traverse to it."""
    user = _server_user()
    if user is None:
        return
    import pwd

    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        subprocess.run(  # noqa: S603
            [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
            check=True,
            capture_output=True,
        )
        entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    # The server user must reach the data dir and the PostgreSQL binaries: add
    # o+x (traverse only, no listing) on each ancestor that lacks it.
    for target in (path, _bin_dir()):
        for ancestor in target.resolve().parents:
            mode = ancestor.stat().st_mode
            if not mode & 0o001:
                ancestor.chmod(mode | 0o001)
    lib = _bin_dir().parent
    for sub in lib.rglob("*"):
        mode = sub.stat().st_mode
        wanted = mode | 0o004 | (0o001 if sub.is_dir() or mode & 0o100 else 0)
        if wanted != mode:
            sub.chmod(wanted)
