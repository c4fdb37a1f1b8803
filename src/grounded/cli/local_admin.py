"""Acting for a tenant from the local command line.

Local commands run on the server machine by an operator who can already read
the data directory, so they act as a *system* principal with the admin role
for the tenant named by ``--tenant``. The tenant slug is resolved with the
owner connection (a local admin path); everything after that goes through the
same tenant-bound services as the API.
"""

from __future__ import annotations

import getpass
import uuid

import psycopg

from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import urls
from grounded.errors import NotFound

_CLI_NAMESPACE = uuid.UUID("6f1d2c1e-6a43-4f0e-9a57-5b1f0d0c0a11")


def resolve_tenant(settings: Settings, slug: str) -> uuid.UUID:
    """The id of a live tenant, or NotFound naming the slug."""
    found = urls.resolve(settings)
    with psycopg.connect(found.owner, connect_timeout=10) as conn:
        row = conn.execute(
            "SELECT id FROM tenants WHERE slug = %s AND deleted_at IS NULL", (slug,)
        ).fetchone()
    if row is None:
        raise NotFound(
            f"no tenant {slug!r}; create it with `grounded tenant create {slug}`",
            details={"tenant": slug},
        )
    return uuid.UUID(str(row[0]))


def local_admin(settings: Settings, slug: str) -> Principal:
    """A system principal with the admin role in tenant ``slug``, named after the OS user."""
    actor = uuid.uuid5(_CLI_NAMESPACE, f"cli:{getpass.getuser()}")
    return Principal(
        kind="system",
        id=actor,
        tenant_id=resolve_tenant(settings, slug),
        roles=frozenset({"admin"}),
    )
