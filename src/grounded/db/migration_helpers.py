"""Building blocks for migrations, so every tenant-owned table is protected alike.

A migration that adds a tenant-owned table calls ``tenant_table`` once: it
enables and *forces* row-level security, installs the one isolation policy,
and grants the application role only the privileges named.
"""

from __future__ import annotations

from alembic import op

DEFAULT_APP_ROLE = "grounded_app"

# The policy predicate. current_tenant() is a SECURITY DEFINER lookup of the
# binding made by bind_tenant() for this backend and transaction; wrapping it
# in a sub-select makes PostgreSQL evaluate it once per statement (an
# InitPlan), not once per row.
TENANT_PREDICATE = "tenant_id = (SELECT grounded_private.current_tenant())"


def app_role() -> str:
    """Role name passed by grounded.db.migrate (a validated identifier)."""
    config = op.get_context().config
    attributes = config.attributes if config is not None else {}
    return str(attributes.get("app_role", DEFAULT_APP_ROLE))


def tenant_table(table: str, privileges: str = "SELECT, INSERT, UPDATE, DELETE") -> None:
    """Force row-level security on ``table`` and grant the app role ``privileges``."""
    op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {table} "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )
    op.execute(f"GRANT {privileges} ON {table} TO {app_role()}")
