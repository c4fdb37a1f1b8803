"""Knowledge model: review fields, lineage, catalog revision, index outbox (issue 4).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30

Seed 002 ADR-006 (versions, soft deletes, append-only events, review with
source link / capture time / verifier / note) and seed 000 ADR-016 (declared
confidence; text, id, label, derived index entries and the embedding queue
entry written in one transaction: here, the ``index_outbox`` row).
"""

from alembic import op

from grounded.db.migration_helpers import tenant_table

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE knowledge_items
            ADD COLUMN kind text NOT NULL DEFAULT 'statement'
                CHECK (kind IN ('statement', 'passage', 'summary', 'extraction')),
            ADD COLUMN derived_from uuid[] NOT NULL DEFAULT '{}',
            ADD COLUMN source_link text,
            ADD COLUMN captured_at timestamptz,
            ADD COLUMN verified_by uuid,
            ADD COLUMN verified_at timestamptz,
            ADD COLUMN review_note text,
            ADD CONSTRAINT knowledge_verified_has_review CHECK (
                review_state <> 'verified' OR (
                    source_link IS NOT NULL AND captured_at IS NOT NULL
                    AND verified_by IS NOT NULL AND review_note IS NOT NULL
                )
            )
        """
    )
    op.execute("CREATE INDEX knowledge_items_page ON knowledge_items (tenant_id, created_at, id)")
    op.execute("CREATE INDEX knowledge_items_source ON knowledge_items (source_id)")
    op.execute("CREATE INDEX knowledge_items_document ON knowledge_items (document_id)")
    op.execute("CREATE INDEX documents_source ON documents (source_id)")
    op.execute("CREATE INDEX sources_page ON sources (tenant_id, created_at, id)")
    op.execute("CREATE INDEX documents_page ON documents (tenant_id, created_at, id)")

    # One row per tenant. Every catalog write bumps it under a row lock, which
    # both serialises catalog writes per tenant and tells the index that the
    # live snapshot is stale (seed 002 ADR-010).
    op.execute(
        """
        CREATE TABLE catalog_revisions (
            tenant_id uuid PRIMARY KEY REFERENCES tenants(id),
            revision bigint NOT NULL DEFAULT 0,
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    tenant_table("catalog_revisions", "SELECT, INSERT, UPDATE")

    # Transactional outbox: the "embedding queue entry" of ADR-016, written in
    # the same transaction as the fact; the index drains it.
    op.execute(
        """
        CREATE TABLE index_outbox (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            entity_type text NOT NULL,
            entity_id uuid NOT NULL,
            entity_version integer NOT NULL,
            op text NOT NULL CHECK (op IN ('upsert', 'delete')),
            catalog_revision bigint NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            processed_at timestamptz
        )
        """
    )
    op.execute(
        "CREATE INDEX index_outbox_pending ON index_outbox (tenant_id, id) "
        "WHERE processed_at IS NULL"
    )
    tenant_table("index_outbox", "SELECT, INSERT, UPDATE")


def downgrade() -> None:
    op.execute("DROP TABLE index_outbox")
    op.execute("DROP TABLE catalog_revisions")
    op.execute(
        """
        ALTER TABLE knowledge_items
            DROP CONSTRAINT knowledge_verified_has_review,
            DROP COLUMN kind, DROP COLUMN derived_from, DROP COLUMN source_link,
            DROP COLUMN captured_at, DROP COLUMN verified_by, DROP COLUMN verified_at,
            DROP COLUMN review_note
        """
    )
