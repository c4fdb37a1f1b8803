"""Auth - sessions, API tokens, rate limits (issue 3).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

Reserved in the foundation so that work on several issues can proceed in
parallel with a linear history; filled in by the issue named above.
"""

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
