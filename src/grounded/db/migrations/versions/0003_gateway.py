"""Model gateway - ledger, budgets, cache (issue 5).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

Reserved in the foundation so that work on several issues can proceed in
parallel with a linear history; filled in by the issue named above.
"""

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
