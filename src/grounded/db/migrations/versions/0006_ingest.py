"""Ingestion runs: stage, progress, error and timings per document version (issue 6).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30

A run is keyed by (document version, pipeline version): the version row is
content-addressed per document, so the pair is the "content hash + pipeline
config version" idempotency key. ``completed_stages`` makes the job
resumable per stage (seed 001 ADR-009: status users can see).
"""

from alembic import op

from grounded.db.migration_helpers import tenant_table

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

STAGES = "'queued', 'detect', 'extract', 'chunk', 'enrich', 'embed', 'index', 'done'"


def upgrade() -> None:
    op.execute(
        f"""
        CREATE TABLE ingest_runs (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            document_id uuid NOT NULL REFERENCES documents(id),
            document_version_id uuid NOT NULL REFERENCES document_versions(id),
            pipeline_version text NOT NULL,
            status text NOT NULL DEFAULT 'queued'
                CHECK (status IN ('queued', 'running', 'done', 'failed')),
            stage text NOT NULL DEFAULT 'queued' CHECK (stage IN ({STAGES})),
            completed_stages text[] NOT NULL DEFAULT '{{}}',
            progress real NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 1),
            attempts integer NOT NULL DEFAULT 0,
            error_code text,
            error text,
            timings jsonb NOT NULL DEFAULT '{{}}',
            detail jsonb NOT NULL DEFAULT '{{}}',
            created_at timestamptz NOT NULL DEFAULT now(),
            started_at timestamptz,
            finished_at timestamptz,
            updated_at timestamptz NOT NULL DEFAULT now(),
            UNIQUE (document_version_id, pipeline_version)
        )
        """
    )
    op.execute(
        "CREATE INDEX ingest_runs_document ON ingest_runs (tenant_id, document_id, created_at)"
    )
    op.execute(
        "CREATE INDEX ingest_runs_failed ON ingest_runs (tenant_id, finished_at) "
        "WHERE status = 'failed'"
    )
    tenant_table("ingest_runs", "SELECT, INSERT, UPDATE")
    op.execute(
        "ALTER TABLE chunks ADD COLUMN role text NOT NULL DEFAULT 'child' "
        "CHECK (role IN ('parent', 'child'))"
    )


def downgrade() -> None:
    op.execute("ALTER TABLE chunks DROP COLUMN role")
    op.execute("DROP TABLE ingest_runs")
