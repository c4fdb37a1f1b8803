"""Which PostgreSQL to talk to, and as whom.

Two identities, never mixed: the *owner* runs migrations and local admin
commands (creating tenants); the *application role* serves every request and
job and is subject to forced row-level security. An owner URL never reaches
request handling.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

from grounded.config import Settings
from grounded.db import embedded
from grounded.db.secrets import read_or_create


@dataclass(frozen=True)
class DatabaseUrls:
    owner: str
    app: str
    embedded: bool

    def sqlalchemy(self) -> str:
        """The owner URL in SQLAlchemy's psycopg 3 dialect (for Alembic)."""
        scheme, rest = self.owner.split("://", 1)
        return f"postgresql+psycopg://{rest}" if scheme.startswith("postgres") else self.owner


def resolve(settings: Settings, *, start_embedded: bool = True) -> DatabaseUrls:
    """Find (or start) the database and build both URLs.

    With no DATABASE_URL the embedded server is started on demand; with
    ``start_embedded=False`` a stopped embedded server raises instead.
    """
    if settings.database_url is None:
        if start_embedded:
            server = embedded.ensure_running(settings.data_dir)
        else:
            found = embedded.running_server(settings.data_dir)
            if found is None:
                from grounded.errors import DatabaseUnavailable

                raise DatabaseUnavailable(
                    "the embedded PostgreSQL is not running; `grounded db start` starts it"
                )
            server = found
        return DatabaseUrls(
            owner=server.url(), app=server.url(user=settings.app_role), embedded=True
        )
    owner = settings.database_url.get_secret_value()
    if settings.app_database_url is not None:
        app = settings.app_database_url.get_secret_value()
    else:
        app = _with_user(owner, settings.app_role, app_password(settings))
    return DatabaseUrls(owner=owner, app=app, embedded=False)


def app_password(settings: Settings) -> str:
    """Password of the application role on an external server (kept in data_dir)."""
    return read_or_create(settings.data_dir, "app-db-password")


def _with_user(url: str, user: str, password: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    return urlunsplit(parts._replace(netloc=netloc))
