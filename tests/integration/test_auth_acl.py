"""Document-level ACL groups: the reusable predicate, against real rows."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest
from psycopg import sql

from grounded.auth.acl import can_see, visible_documents
from grounded.auth.principal import Principal
from grounded.db import Database
from tests.conftest import make_tenant

pytestmark = pytest.mark.integration


def _principal(tenant: uuid.UUID, groups: set[str], admin: bool = False) -> Principal:
    return Principal(
        kind="user",
        id=uuid.uuid4(),
        tenant_id=tenant,
        roles=frozenset({"admin" if admin else "user"}),
        groups=frozenset(groups),
    )


def test_groups_decide_which_documents_are_visible(
    database: Database, owner: psycopg.Connection[Any]
) -> None:
    tenant = make_tenant(owner, "acme")
    other = make_tenant(owner, "globex")
    titles = {"open": [], "finance": ["finance"], "hr-or-legal": ["hr", "legal"]}
    for title, groups in titles.items():
        owner.execute(
            "INSERT INTO documents (tenant_id, title, acl_groups) VALUES (%s, %s, %s)",
            (tenant, title, groups),
        )
    owner.execute(
        "INSERT INTO documents (tenant_id, title, acl_groups) VALUES (%s, 'foreign', '{}')",
        (other,),
    )

    def visible(principal: Principal) -> list[str]:
        query = sql.SQL("SELECT title FROM documents d WHERE {} ORDER BY title").format(
            visible_documents(principal, "d")
        )
        with database.transaction(principal.tenant_id) as conn:
            return [r["title"] for r in conn.execute(query).fetchall()]

    assert visible(_principal(tenant, set())) == ["open"]
    assert visible(_principal(tenant, {"finance"})) == ["finance", "open"]
    assert visible(_principal(tenant, {"legal", "ops"})) == ["hr-or-legal", "open"]
    assert visible(_principal(tenant, set(), admin=True)) == ["finance", "hr-or-legal", "open"]
    # Group names are data, not SQL.
    assert visible(_principal(tenant, {"x'] OR TRUE --"})) == ["open"]
    # Tenancy is row-level security's job: another tenant's open document never shows.
    assert "foreign" not in visible(_principal(tenant, set(), admin=True))

    assert can_see(_principal(tenant, {"hr"}), ["hr", "legal"])
    assert not can_see(_principal(tenant, {"ops"}), ["hr"])
    assert can_see(_principal(tenant, set()), [])
