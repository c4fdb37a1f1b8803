"""Grounded answers: prepared contexts apart from answers, and answers with receipts (issue 10).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30

``answer_contexts`` is written before any model sees the evidence (seed 002
ADR-012: the prepared context is persisted apart from any model answer), so a
failed or abstained generation still leaves what it was shown. ``answers``
keeps every attempt: the retrieval runs, contexts, generation receipts and the
verdict of each claim, so an answer can be audited and reproduced later.
Both tables are append-only for the application role.
"""

from alembic import op

from grounded.db.migration_helpers import tenant_table

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE answer_contexts (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            retrieval_run_id uuid NOT NULL REFERENCES retrieval_runs(id),
            question text NOT NULL,
            budget_chars integer NOT NULL CHECK (budget_chars > 0),
            evidence jsonb NOT NULL,
            excluded jsonb NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    tenant_table("answer_contexts", "SELECT, INSERT")
    op.execute(
        """
        CREATE TABLE answers (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            principal jsonb NOT NULL,
            question text NOT NULL,
            status text NOT NULL CHECK (status IN ('answered', 'abstained')),
            mode text NOT NULL CHECK (mode IN ('generative', 'extractive')),
            text text NOT NULL,
            abstain_reason text,
            citations jsonb NOT NULL DEFAULT '[]',
            claims jsonb NOT NULL DEFAULT '[]',
            attempts jsonb NOT NULL DEFAULT '[]',
            context_id uuid REFERENCES answer_contexts(id),
            retrieval_run_ids uuid[] NOT NULL DEFAULT '{}',
            prompt_version text NOT NULL,
            timings jsonb NOT NULL DEFAULT '{}',
            created_at timestamptz NOT NULL DEFAULT now(),
            CHECK ((status = 'abstained') = (abstain_reason IS NOT NULL))
        )
        """
    )
    op.execute("CREATE INDEX answers_recent ON answers (tenant_id, created_at DESC, id)")
    tenant_table("answers", "SELECT, INSERT")


def downgrade() -> None:
    op.execute("DROP TABLE answers")
    op.execute("DROP TABLE answer_contexts")
