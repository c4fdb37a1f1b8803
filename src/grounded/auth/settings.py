"""Auth settings, nested under ``auth`` (env ``GROUNDED_AUTH__...``).

Defaults follow seed 002 ADR-009 and OWASP ASVS v4 chapter 2/3: Argon2id at
argon2-cffi's RFC 9106 "low memory" profile, 30-minute idle and 12-hour
absolute session lifetimes, registration off, and small attempt budgets.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class AuthSettings(BaseModel):
    """Passwords, sessions, CSRF, rate limits. Every field is documented."""

    model_config = ConfigDict(extra="forbid")

    argon2_time_cost: int = Field(
        default=3,
        ge=1,
        description="Argon2id passes over memory (t); raising it rehashes on login.",
    )
    argon2_memory_kib: int = Field(
        default=65536, ge=8, description="Argon2id memory per hash in KiB (m); 64 MiB by default."
    )
    argon2_parallelism: int = Field(
        default=4, ge=1, description="Argon2id lanes (p); the memory must be at least 8*p KiB."
    )
    password_min_length: int = Field(
        default=8, ge=8, description="Shortest password accepted, in characters (never below 8)."
    )
    password_max_length: int = Field(
        default=128,
        ge=64,
        le=4096,
        description="Longest password accepted, in characters (at least 64; never truncated).",
    )
    session_idle_timeout_s: int = Field(
        default=1800, ge=60, description="A session unused this many seconds ends."
    )
    session_absolute_timeout_s: int = Field(
        default=43200,
        ge=300,
        description="A session ends this many seconds after login, used or not.",
    )
    cookie_secure: Literal["auto", "always", "never"] = Field(
        default="auto",
        description=(
            "Secure session cookie with the __Host- prefix: auto = when the request came over "
            "HTTPS; always; or never (plain HTTP development only)."
        ),
    )
    allowed_origins: list[str] = Field(
        default_factory=list,
        description=(
            "Origins (scheme://host[:port]) allowed to make state-changing requests with a "
            "session cookie. Empty: the serving address (http://host:port) and its localhost twin."
        ),
    )
    registration_enabled: bool = Field(
        default=False,
        description="Allow POST /v1/auth/register (creates role `user` only). Off by default.",
    )
    login_attempts_per_account: int = Field(
        default=10, ge=1, description="Login attempts for one tenant+email per rate window."
    )
    login_attempts_per_client: int = Field(
        default=50, ge=1, description="Login attempts from one client address per rate window."
    )
    login_window_s: int = Field(
        default=300, ge=1, description="Length of the login rate-limit window in seconds."
    )
    register_attempts_per_client: int = Field(
        default=5, ge=1, description="Registrations from one client address per register window."
    )
    register_window_s: int = Field(
        default=3600, ge=1, description="Length of the registration rate-limit window in seconds."
    )
