"""Auth - sessions, API tokens, rate limits (issue 3).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

Seed 002 ADR-009 (server-side sessions stored as digests, minimal roles) and
seed 001 ADR-010 (tenant and ACL derived from verified credentials).

What the application role gains, and why it is no cross-tenant read:

- ``sessions`` and ``api_tokens`` are tenant-owned tables under the same forced
  row-level security as every other; a credential names its tenant in clear
  text (``<tenant hex>.<secret>``), the request binds that tenant, and only
  then is the secret's digest looked up. A wrong tenant finds nothing.
- ``grounded_private.tenant_id_for_login(slug)`` maps a login's tenant slug to
  an id. It returns an id and nothing else (no name, no users), only for a live
  tenant; knowing an id grants nothing without the key-guarded binding.
- ``grounded_private.rate_hit(...)`` counts attempts in an owner-only table
  keyed by SHA-256 digests (no e-mail or address is stored in clear), in one
  atomic upsert, so limits hold across processes and hosts.
"""

from alembic import op

from grounded.db.migration_helpers import app_role, tenant_table

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    role = app_role()

    op.execute(
        """
        CREATE TABLE sessions (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            user_id uuid NOT NULL REFERENCES users(id),
            token_digest bytea NOT NULL UNIQUE CHECK (length(token_digest) = 32),
            credential_version integer NOT NULL,
            created_at timestamptz NOT NULL,
            last_seen_at timestamptz NOT NULL,
            expires_at timestamptz NOT NULL,
            revoked_at timestamptz
        )
        """
    )
    op.execute("CREATE INDEX sessions_user ON sessions (tenant_id, user_id)")
    tenant_table("sessions", "SELECT, INSERT, UPDATE")

    op.execute(
        """
        CREATE TABLE api_tokens (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
            token_digest bytea NOT NULL UNIQUE CHECK (length(token_digest) = 32),
            user_id uuid REFERENCES users(id),
            permissions text[] NOT NULL,
            groups text[] NOT NULL DEFAULT '{}',
            created_by uuid,
            created_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz,
            last_used_at timestamptz,
            revoked_at timestamptz
        )
        """
    )
    op.execute("CREATE INDEX api_tokens_user ON api_tokens (tenant_id, user_id)")
    tenant_table("api_tokens", "SELECT, INSERT, UPDATE")

    op.execute("CREATE INDEX users_page ON users (tenant_id, created_at, id)")

    op.execute(
        """
        CREATE FUNCTION grounded_private.tenant_id_for_login(p_slug text)
        RETURNS uuid
        LANGUAGE sql STABLE SECURITY DEFINER
        SET search_path = pg_catalog, pg_temp
        AS $$
            SELECT id FROM public.tenants WHERE slug = p_slug AND deleted_at IS NULL
        $$
        """
    )

    op.execute(
        """
        CREATE TABLE grounded_private.rate_counters (
            bucket bytea PRIMARY KEY,
            window_start timestamptz NOT NULL,
            hits integer NOT NULL
        )
        """
    )
    op.execute(
        """
        CREATE FUNCTION grounded_private.rate_hit(
            p_bucket bytea, p_now timestamptz, p_window_s integer
        )
        RETURNS integer
        LANGUAGE sql VOLATILE SECURITY DEFINER
        SET search_path = pg_catalog, pg_temp
        AS $$
            INSERT INTO grounded_private.rate_counters AS c (bucket, window_start, hits)
            VALUES (p_bucket, p_now, 1)
            ON CONFLICT (bucket) DO UPDATE SET
                hits = CASE
                    WHEN c.window_start <= p_now - make_interval(secs => p_window_s) THEN 1
                    ELSE c.hits + 1 END,
                window_start = CASE
                    WHEN c.window_start <= p_now - make_interval(secs => p_window_s) THEN p_now
                    ELSE c.window_start END
            RETURNING hits
        $$
        """
    )
    op.execute(
        "REVOKE ALL ON FUNCTION grounded_private.tenant_id_for_login(text), "
        "grounded_private.rate_hit(bytea, timestamptz, integer) FROM PUBLIC"
    )
    op.execute(
        f"GRANT EXECUTE ON FUNCTION grounded_private.tenant_id_for_login(text), "
        f"grounded_private.rate_hit(bytea, timestamptz, integer) TO {role}"
    )


def downgrade() -> None:
    op.execute("DROP FUNCTION grounded_private.rate_hit(bytea, timestamptz, integer)")
    op.execute("DROP TABLE grounded_private.rate_counters")
    op.execute("DROP FUNCTION grounded_private.tenant_id_for_login(text)")
    op.execute("DROP INDEX users_page")
    op.execute("DROP TABLE api_tokens")
    op.execute("DROP TABLE sessions")
