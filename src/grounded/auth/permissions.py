"""The permission vocabulary carried by principals and API tokens.

Coarse on purpose: a handful of verbs that routers check with
``principal.can(...)``. A session user holds the permissions of its role; an
API token holds the subset named at creation (never more than its creator
holds). ``admin`` implies every other permission.
"""

from __future__ import annotations

from typing import Final

from grounded.errors import InvalidInput

PERMISSIONS: Final[dict[str, str]] = {
    "read": "read documents, knowledge and answers the principal's groups allow",
    "ask": "ask questions (answers, chat completions, search)",
    "write": "upload documents and propose knowledge",
    "admin": "manage users, tokens, sources, documents, knowledge and review",
}

ROLE_PERMISSIONS: Final[dict[str, frozenset[str]]] = {
    "user": frozenset({"read", "ask"}),
    "admin": frozenset(PERMISSIONS),
}


def check_permissions(names: list[str] | tuple[str, ...]) -> frozenset[str]:
    """Validate requested permission names; at least one, all known."""
    unknown = sorted(set(names) - set(PERMISSIONS))
    if unknown or not names:
        raise InvalidInput(
            f"permissions: choose one or more of {', '.join(PERMISSIONS)}",
            details={"field": "permissions", "unknown": unknown},
        )
    return frozenset(names)
