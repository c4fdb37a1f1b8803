"""Logging in and out, registering, changing a password (seed 002 ADR-009).

A login names its tenant by slug (``tenant`` in the body): e-mails are unique
per tenant only. The slug is resolved by ``grounded_private.tenant_id_for_login``
(migration 0002), which returns an id and nothing else, so the application role
gains no cross-tenant read. Unknown tenant, unknown user, disabled user and
wrong password all give the same 401 after the same one Argon2id verification
(a dummy hash where there is no real one): same answer, same timing class.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from uuid import UUID

from grounded.auth import ratelimit, sessions
from grounded.auth.clock import Clock
from grounded.auth.passwords import Hasher, check_policy, hasher_for
from grounded.auth.principal import Principal
from grounded.auth.settings import AuthSettings
from grounded.auth.users import COLUMNS, User, end_credentials, insert_user, normalize_email
from grounded.db import Database
from grounded.errors import Conflict, InvalidInput, NotFound, Unauthenticated
from grounded.logging import get_logger

WRONG = "wrong tenant, email or password"
log = get_logger("grounded.auth")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")


@dataclass(frozen=True)
class LoggedIn:
    user: User
    session: sessions.NewSession


class Accounts:
    """The account flows a request can start; built per request, cheap."""

    def __init__(self, database: Database, settings: AuthSettings, clock: Clock) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self.hasher: Hasher = hasher_for(settings)

    def _tenant_id(self, slug: str) -> UUID | None:
        if not _SLUG.match(slug):
            return None
        with self._db.unscoped() as conn:
            row = conn.execute(
                "SELECT grounded_private.tenant_id_for_login(%s) AS id", (slug,)
            ).fetchone()
        return None if row is None or row["id"] is None else UUID(str(row["id"]))

    def login(
        self, tenant: str, email: str, password: str, *, client: str, replaces: UUID | None = None
    ) -> LoggedIn:
        """Verify and start a fresh session (a new value at every login: no fixation).

        Raises RateLimited before any verification once a budget is spent, and
        Unauthenticated(WRONG) for every kind of failure.
        """
        now = self._clock.now()
        address = email.strip().lower()
        ratelimit.hit(
            self._db,
            "login:client",
            client,
            limit=self._settings.login_attempts_per_client,
            window_s=self._settings.login_window_s,
            now=now,
        )
        ratelimit.hit(
            self._db,
            "login:account",
            f"{tenant}\x00{address}",
            limit=self._settings.login_attempts_per_account,
            window_s=self._settings.login_window_s,
            now=now,
        )
        if len(password) > self._settings.password_max_length:
            self.hasher.burn(password[: self._settings.password_max_length])
            raise Unauthenticated(WRONG)
        tenant_id = self._tenant_id(tenant)
        if tenant_id is None:
            self.hasher.burn(password)
            log.info("login_failed", reason="unknown_tenant")
            raise Unauthenticated(WRONG)
        with self._db.transaction(tenant_id) as conn:
            row = conn.execute(
                f"SELECT {COLUMNS}, password_hash FROM users WHERE email = %s", (address,)
            ).fetchone()
            ok = self.hasher.verify(row["password_hash"] if row else None, password)
            if row is None or not ok or row["disabled"]:
                failed = True
            else:
                failed = False
                if self.hasher.needs_rehash(row["password_hash"]):
                    conn.execute(
                        "UPDATE users SET password_hash = %s WHERE id = %s",
                        (self.hasher.hash(password), row["id"]),
                    )
                if replaces is not None:
                    conn.execute(
                        "UPDATE sessions SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
                        (now, replaces),
                    )
                session = sessions.start(
                    conn, tenant_id, row["id"], row["credential_version"], self._settings, now
                )
        if failed or row is None:
            # Server-side only: ids and a reason class, never the e-mail or password.
            reason = "unknown_user" if row is None else "disabled" if ok else "wrong_password"
            log.info("login_failed", tenant_id=str(tenant_id), reason=reason)
            raise Unauthenticated(WRONG)
        log.info("login", tenant_id=str(tenant_id), user_id=str(row["id"]))
        return LoggedIn(User.from_row(row), session)

    def logout(self, principal: Principal) -> None:
        """End every session of the user (ASVS 3.3.1, issue 3: logout ends all)."""
        if principal.via != "session":
            raise InvalidInput("logout ends cookie sessions; revoke a token with DELETE /v1/tokens")
        with self._db.transaction(principal.tenant_id) as conn:
            end_credentials(conn, principal.id, self._clock.now(), tokens=False)
        log.info("logout", tenant_id=str(principal.tenant_id), user_id=str(principal.id))

    def change_password(self, principal: Principal, current: str, new: str) -> LoggedIn:
        """Check the current password, set the new one, end every session and token
        of the user, and start one fresh session for the caller."""
        if principal.via != "session" or principal.kind != "user":
            raise InvalidInput("change a password from a logged-in session")
        check_policy(new, self._settings, field="new_password")
        if new == current:
            raise InvalidInput(
                "new_password: must differ from the current one",
                details={"field": "new_password"},
            )
        now = self._clock.now()
        # Guessing the current password through a stolen session is still guessing.
        ratelimit.hit(
            self._db,
            "password:user",
            str(principal.id),
            limit=self._settings.login_attempts_per_account,
            window_s=self._settings.login_window_s,
            now=now,
        )
        with self._db.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                f"SELECT {COLUMNS}, password_hash FROM users WHERE id = %s FOR UPDATE",
                (principal.id,),
            ).fetchone()
            ok = row is not None and self.hasher.verify(row["password_hash"], current)
            if ok and row is not None:
                conn.execute(
                    "UPDATE users SET password_hash = %s WHERE id = %s",
                    (self.hasher.hash(new), principal.id),
                )
                end_credentials(conn, principal.id, now, tokens=True)
                version = conn.execute(
                    "SELECT credential_version FROM users WHERE id = %s", (principal.id,)
                ).fetchone()
                assert version is not None
                session = sessions.start(
                    conn,
                    principal.tenant_id,
                    principal.id,
                    version["credential_version"],
                    self._settings,
                    now,
                )
        if not ok or row is None:
            raise InvalidInput(
                "current_password: not correct", details={"field": "current_password"}
            )
        return LoggedIn(User.from_row(row), session)

    def register(
        self, tenant: str, email: str, password: str, display_name: str | None, *, client: str
    ) -> None:
        """Public sign-up (off unless ``registration_enabled``): always role ``user``.

        An unknown tenant or a taken address answers exactly like success, so
        registration cannot be used to probe tenants or e-mails.
        """
        if not self._settings.registration_enabled:
            raise NotFound("registration is not enabled on this server")
        ratelimit.hit(
            self._db,
            "register:client",
            client,
            limit=self._settings.register_attempts_per_client,
            window_s=self._settings.register_window_s,
            now=self._clock.now(),
        )
        address = normalize_email(email)
        check_policy(password, self._settings)
        hashed = self.hasher.hash(password)
        tenant_id = self._tenant_id(tenant)
        if tenant_id is None:
            return
        try:
            with self._db.transaction(tenant_id) as conn:
                insert_user(
                    conn,
                    tenant_id,
                    email=address,
                    password_hash=hashed,
                    role="user",
                    display_name=display_name,
                )
        except Conflict:
            return
