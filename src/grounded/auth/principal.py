"""Who is asking: the verified identity every data-access function takes first.

A Principal is only ever built by the auth layer from a verified credential
(session cookie, API token) or by a local admin command; request bodies can
never supply one (seed 001 ADR-010). Tenancy and ACL filters derive from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal
from uuid import UUID

PrincipalKind = Literal["user", "service", "system"]
# How the principal proved itself: a session cookie, an API token, or a local
# command run by the operator (no network credential at all).
CredentialKind = Literal["session", "token", "local"]


@dataclass(frozen=True)
class Principal:
    kind: PrincipalKind
    id: UUID
    tenant_id: UUID
    roles: frozenset[str] = field(default_factory=frozenset)
    groups: frozenset[str] = field(default_factory=frozenset)
    permissions: frozenset[str] = field(default_factory=frozenset)
    via: CredentialKind = "local"
    credential_id: UUID | None = None  # the session or token row that proved it

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles

    def can(self, permission: str) -> bool:
        """True when the credential carries ``permission`` (admins carry every one)."""
        return permission in self.permissions or self.is_admin

    def describe(self) -> dict[str, object]:
        """A log- and receipt-safe description (ids only, no names or emails)."""
        return {
            "kind": self.kind,
            "id": str(self.id),
            "tenant_id": str(self.tenant_id),
            "roles": sorted(self.roles),
            "groups": sorted(self.groups),
        }
