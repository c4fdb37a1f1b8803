"""Index snapshots: segments of derived entries, per-model vector tables (issue 7).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30

A snapshot is an immutable list of *segments* (seed 002 ADR-005/010). A
segment is the set of ``index_entries`` rows written by one build; a full
build writes one segment holding every unit, an incremental build writes a
small segment (new, changed and deleted units) and lists it after its base's
segments. Readers resolve a unit to its entry in the last segment that holds
it, so publishing is one pointer switch (``state = 'live'``) and a failed or
killed build leaves only unreferenced rows behind.

Vectors live in one table per (embedding model, dimension), keyed by the id
of the entry that first stored them; later entries of the same unit and
content point at that row (``vector_id``), so a compacting build re-inserts
no vector into HNSW. Unreferenced vector rows are removed when history is
pruned. One table per (model, dimension) because an HNSW
index needs a fixed ``vector(dim)`` column (pgvector 0.6) and vectors of two
models must never be compared. The application role cannot run DDL, so the
owner-defined ``grounded_private.ensure_vector_table`` creates such a table on
first use, with the same forced row-level security as every tenant table.
"""

from alembic import op

from grounded.db.migration_helpers import TENANT_PREDICATE, app_role, tenant_table

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    role = app_role()
    op.execute(
        """
        ALTER TABLE index_snapshots
            ADD COLUMN kind text NOT NULL DEFAULT 'full' CHECK (kind IN ('full', 'delta')),
            ADD COLUMN base_snapshot_id uuid REFERENCES index_snapshots(id),
            ADD COLUMN segments uuid[] NOT NULL DEFAULT '{}',
            ADD COLUMN format_version integer NOT NULL DEFAULT 1,
            ADD COLUMN unit_count integer NOT NULL DEFAULT 0,
            ADD COLUMN outbox_watermark bigint NOT NULL DEFAULT 0,
            ADD COLUMN built_at timestamptz,
            ADD COLUMN retired_at timestamptz
        """
    )
    op.execute(
        """
        CREATE TABLE index_entries (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            segment_id uuid NOT NULL REFERENCES index_snapshots(id) ON DELETE CASCADE,
            unit_kind text NOT NULL CHECK (unit_kind IN ('chunk', 'item')),
            unit_id uuid NOT NULL,
            deleted boolean NOT NULL DEFAULT false,
            document_id uuid,
            row_hash text NOT NULL,
            acl_groups text[] NOT NULL DEFAULT '{}',
            review_state text,
            confidence text NOT NULL,
            category text,
            unit_created_at timestamptz,
            language text,
            terms text[] NOT NULL DEFAULT '{}',
            weights real[] NOT NULL DEFAULT '{}',
            length real NOT NULL DEFAULT 0,
            vector_id bigint,
            UNIQUE (segment_id, unit_kind, unit_id)
        )
        """
    )
    op.execute(
        "CREATE INDEX index_entries_vector ON index_entries (vector_id) WHERE vector_id IS NOT NULL"
    )
    tenant_table("index_entries", "SELECT, INSERT, UPDATE, DELETE")

    # Global registry of vector tables; rows are written only by the function.
    op.execute(
        """
        CREATE TABLE index_vector_spaces (
            model text NOT NULL,
            dim integer NOT NULL CHECK (dim BETWEEN 1 AND 2000),
            table_name text NOT NULL UNIQUE,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (model, dim)
        )
        """
    )
    op.execute(f"GRANT SELECT ON index_vector_spaces TO {role}")
    op.execute(
        f"""
        CREATE FUNCTION grounded_private.ensure_vector_table(p_model text, p_dim integer)
        RETURNS text
        LANGUAGE plpgsql VOLATILE SECURITY DEFINER
        SET search_path = public, pg_catalog, pg_temp
        AS $fn$
        DECLARE
            t text;
        BEGIN
            IF p_model IS NULL OR length(p_model) = 0 OR length(p_model) > 200
               OR p_dim IS NULL OR p_dim < 1 OR p_dim > 2000 THEN
                RAISE EXCEPTION 'invalid embedding space' USING ERRCODE = '22023';
            END IF;
            SELECT table_name INTO t FROM index_vector_spaces
                WHERE model = p_model AND dim = p_dim;
            IF t IS NOT NULL THEN
                RETURN t;
            END IF;
            -- Serialise creators of the same space across tenants.
            PERFORM pg_advisory_xact_lock(hashtextextended('grounded.vector_space', 0));
            SELECT table_name INTO t FROM index_vector_spaces
                WHERE model = p_model AND dim = p_dim;
            IF t IS NOT NULL THEN
                RETURN t;
            END IF;
            t := format('index_vectors_%s_%s', p_dim,
                        substr(encode(sha256(convert_to(p_model, 'UTF8')), 'hex'), 1, 12));
            EXECUTE format(
                'CREATE TABLE %I (entry_id bigint PRIMARY KEY, '
                'tenant_id uuid NOT NULL REFERENCES tenants(id), '
                'embedding vector(%s) NOT NULL)', t, p_dim);
            EXECUTE format(
                'CREATE INDEX %I ON %I USING hnsw (embedding vector_cosine_ops) '
                'WITH (m = 16, ef_construction = 64)', t || '_hnsw', t);
            EXECUTE format('CREATE INDEX %I ON %I (tenant_id)', t || '_tenant', t);
            EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
            EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
            EXECUTE format(
                'CREATE POLICY tenant_isolation ON %I USING ({TENANT_PREDICATE}) '
                'WITH CHECK ({TENANT_PREDICATE})', t);
            EXECUTE format('GRANT SELECT, INSERT, DELETE ON %I TO {role}', t);
            INSERT INTO index_vector_spaces (model, dim, table_name) VALUES (p_model, p_dim, t);
            RETURN t;
        END
        $fn$
        """
    )
    op.execute(
        "REVOKE ALL ON FUNCTION grounded_private.ensure_vector_table(text, integer) FROM PUBLIC"
    )
    op.execute(
        f"GRANT EXECUTE ON FUNCTION grounded_private.ensure_vector_table(text, integer) TO {role}"
    )


def downgrade() -> None:
    op.execute(
        """
        DO $$
        DECLARE t text;
        BEGIN
            FOR t IN SELECT table_name FROM index_vector_spaces LOOP
                EXECUTE format('DROP TABLE IF EXISTS %I', t);
            END LOOP;
        END
        $$
        """
    )
    op.execute("DROP FUNCTION grounded_private.ensure_vector_table(text, integer)")
    op.execute("DROP TABLE index_vector_spaces")
    op.execute("DROP TABLE index_entries")
    op.execute(
        """
        ALTER TABLE index_snapshots
            DROP COLUMN kind, DROP COLUMN base_snapshot_id, DROP COLUMN segments,
            DROP COLUMN format_version, DROP COLUMN unit_count, DROP COLUMN outbox_watermark,
            DROP COLUMN built_at, DROP COLUMN retired_at
        """
    )
