"""Model gateway - ledger, budgets, cache (issue 5).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

Seed 001 ADR-008: one gateway owns caching, budgets and the cost/latency
ledger. All three are tenant-owned under the same forced row-level security
as every other table:

- ``gateway_ledger``: one row per call (task, provider, model, tokens, cost,
  latency, cache hit, outcome). Append-only for the application role.
- ``gateway_budgets``: a tenant's caps, overriding the settings' defaults.
- ``gateway_usage``: metered use per tenant and period; the gateway reserves
  an estimate with one conditional upsert before each metered call, so two
  workers cannot both spend the last of a budget.
- ``gateway_cache``: results keyed by a digest of task, provider, model and
  request, always within one tenant (a tenant never sees another's answers).
"""

from alembic import op

from grounded.db.migration_helpers import tenant_table

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE gateway_ledger (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            at timestamptz NOT NULL DEFAULT now(),
            task text NOT NULL,
            provider text NOT NULL,
            model text NOT NULL,
            tokens_in integer NOT NULL DEFAULT 0 CHECK (tokens_in >= 0),
            tokens_out integer NOT NULL DEFAULT 0 CHECK (tokens_out >= 0),
            cost_usd numeric(14, 8) NOT NULL DEFAULT 0 CHECK (cost_usd >= 0),
            latency_ms double precision NOT NULL CHECK (latency_ms >= 0),
            cache_hit boolean NOT NULL,
            outcome text NOT NULL CHECK (outcome IN ('ok', 'error', 'refused')),
            error_code text,
            tries integer NOT NULL DEFAULT 1,
            redactions integer NOT NULL DEFAULT 0
        )
        """
    )
    op.execute("CREATE INDEX gateway_ledger_tenant_at ON gateway_ledger (tenant_id, at)")
    tenant_table("gateway_ledger", "SELECT, INSERT")

    op.execute(
        """
        CREATE TABLE gateway_budgets (
            tenant_id uuid PRIMARY KEY REFERENCES tenants(id),
            period text NOT NULL CHECK (period IN ('day', 'month')),
            max_tokens bigint CHECK (max_tokens >= 0),
            max_cost_usd numeric(14, 6) CHECK (max_cost_usd >= 0),
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    tenant_table("gateway_budgets")

    op.execute(
        """
        CREATE TABLE gateway_usage (
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            period_start date NOT NULL,
            tokens bigint NOT NULL DEFAULT 0,
            cost_usd numeric(16, 8) NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant_id, period_start)
        )
        """
    )
    tenant_table("gateway_usage", "SELECT, INSERT, UPDATE")

    op.execute(
        """
        CREATE TABLE gateway_cache (
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            key bytea NOT NULL CHECK (length(key) = 32),
            task text NOT NULL,
            provider text NOT NULL,
            model text NOT NULL,
            value jsonb NOT NULL,
            context_key bytea,
            query_vector real[],
            created_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz NOT NULL,
            PRIMARY KEY (tenant_id, key)
        )
        """
    )
    op.execute(
        "CREATE INDEX gateway_cache_context ON gateway_cache (tenant_id, context_key) "
        "WHERE context_key IS NOT NULL"
    )
    tenant_table("gateway_cache")


def downgrade() -> None:
    for table in ("gateway_cache", "gateway_usage", "gateway_budgets", "gateway_ledger"):
        op.execute(f"DROP TABLE IF EXISTS {table}")
