"""Document-level ACL: which documents a principal may see (issue 3 item 9).

A document with an empty ``acl_groups`` is visible to the whole tenant; one
with groups is visible to principals sharing at least one group. Admins see
every document of their tenant (they manage them). Tenancy itself is not
decided here: row-level security already hides other tenants' rows; this is
the second, finer filter. Retrieval, listing and fetching code compose the
predicate into their own SQL, so no path applies a caller-supplied filter.
"""

from __future__ import annotations

from collections.abc import Iterable

from psycopg import sql

from grounded.auth.principal import Principal


def can_see(principal: Principal, acl_groups: Iterable[str]) -> bool:
    """The same rule in Python, for rows already fetched."""
    groups = set(acl_groups)
    return principal.is_admin or not groups or bool(groups & principal.groups)


def visible_documents(principal: Principal, alias: str = "documents") -> sql.Composed:
    """A SQL predicate: ``alias``'s row is a document ``principal`` may see.

    Use it in WHERE clauses (``WHERE {pred} AND ...``) of any query over
    ``documents``, or join chunks to documents and apply it there.
    """
    column = sql.Identifier(alias, "acl_groups")
    if principal.is_admin:
        return sql.SQL("TRUE").format()
    return sql.SQL("(cardinality({col}) = 0 OR {col} && {groups}::text[])").format(
        col=column, groups=sql.Literal(sorted(principal.groups))
    )
