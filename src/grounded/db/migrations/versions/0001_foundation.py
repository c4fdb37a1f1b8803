"""Foundation: tenant binding, first canonical tables, row-level security, queue schema.

Revision ID: 0001
Revises:
Create Date: 2026-11-30

Every tenant-owned table carries ``tenant_id`` and a forced isolation policy.
The tenant of a transaction is bound by ``grounded_private.bind_tenant`` which
(a) needs the deployment's binding key, which only the data layer holds, and
(b) refuses a second binding in the same transaction. SQL that arrives later
(generated SQL, seed 001 ADR-003) can therefore neither bind another tenant
nor change the binding; a ``set_config`` of any setting has no effect because
no policy reads a setting.
"""

from alembic import op
from procrastinate.schema import SchemaManager

from grounded.db.migration_helpers import app_role, tenant_table

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    role = app_role()
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")

    # -- tenant binding ----------------------------------------------------
    op.execute("CREATE SCHEMA grounded_private")
    op.execute(
        """
        CREATE UNLOGGED TABLE grounded_private.tx_tenant (
            backend_pid integer PRIMARY KEY,
            xact xid8 NOT NULL,
            tenant_id uuid NOT NULL
        )
        """
    )
    op.execute(
        """
        CREATE TABLE grounded_private.bind_key (
            singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
            digest bytea NOT NULL
        )
        """
    )
    op.execute(
        """
        CREATE FUNCTION grounded_private.bind_tenant(p_tenant uuid, p_key text)
        RETURNS void
        LANGUAGE plpgsql VOLATILE SECURITY DEFINER
        SET search_path = pg_catalog, pg_temp
        AS $$
        DECLARE
            current_xact xid8 := pg_current_xact_id();
        BEGIN
            IF p_tenant IS NULL OR NOT EXISTS (
                SELECT 1 FROM grounded_private.bind_key
                WHERE digest = sha256(convert_to(p_key, 'UTF8'))
            ) THEN
                RAISE EXCEPTION 'tenant binding refused'
                    USING ERRCODE = '42501';
            END IF;
            IF EXISTS (
                SELECT 1 FROM grounded_private.tx_tenant
                WHERE backend_pid = pg_backend_pid() AND xact = current_xact
            ) THEN
                RAISE EXCEPTION 'tenant already bound in this transaction'
                    USING ERRCODE = '42501';
            END IF;
            INSERT INTO grounded_private.tx_tenant AS t (backend_pid, xact, tenant_id)
            VALUES (pg_backend_pid(), current_xact, p_tenant)
            ON CONFLICT (backend_pid)
            DO UPDATE SET xact = EXCLUDED.xact, tenant_id = EXCLUDED.tenant_id;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE FUNCTION grounded_private.current_tenant()
        RETURNS uuid
        LANGUAGE sql STABLE SECURITY DEFINER PARALLEL SAFE
        SET search_path = pg_catalog, pg_temp
        AS $$
            SELECT tenant_id FROM grounded_private.tx_tenant
            WHERE backend_pid = pg_backend_pid()
              AND xact = pg_current_xact_id_if_assigned()
        $$
        """
    )
    op.execute("REVOKE ALL ON ALL FUNCTIONS IN SCHEMA grounded_private FROM PUBLIC")
    op.execute(f"GRANT USAGE ON SCHEMA grounded_private TO {role}")
    op.execute(
        f"GRANT EXECUTE ON FUNCTION grounded_private.bind_tenant(uuid, text), "
        f"grounded_private.current_tenant() TO {role}"
    )
    op.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
    op.execute(f"GRANT SELECT ON alembic_version TO {role}")

    # -- canonical tables ----------------------------------------------------
    op.execute(
        """
        CREATE TABLE tenants (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
            name text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            deleted_at timestamptz
        )
        """
    )
    # A tenant sees only its own row; tenants are created by the owner (CLI).
    op.execute("ALTER TABLE tenants ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE tenants FORCE ROW LEVEL SECURITY")
    op.execute(
        "CREATE POLICY tenant_isolation ON tenants "
        "USING (id = (SELECT grounded_private.current_tenant()))"
    )
    op.execute(f"GRANT SELECT ON tenants TO {role}")

    op.execute(
        """
        CREATE TABLE users (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            email text NOT NULL CHECK (email = lower(email)),
            display_name text,
            password_hash text,
            role text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
            groups text[] NOT NULL DEFAULT '{}',
            disabled boolean NOT NULL DEFAULT false,
            credential_version integer NOT NULL DEFAULT 1,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            UNIQUE (tenant_id, email)
        )
        """
    )
    tenant_table("users")

    op.execute(
        """
        CREATE TABLE sources (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            kind text NOT NULL CHECK (kind IN ('upload', 'url', 'system', 'records')),
            name text NOT NULL,
            uri text,
            metadata jsonb NOT NULL DEFAULT '{}',
            version integer NOT NULL DEFAULT 1,
            created_by uuid,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            deleted_at timestamptz
        )
        """
    )
    tenant_table("sources")

    op.execute(
        """
        CREATE TABLE documents (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            source_id uuid REFERENCES sources(id),
            external_id text,
            title text NOT NULL,
            acl_groups text[] NOT NULL DEFAULT '{}',
            metadata jsonb NOT NULL DEFAULT '{}',
            current_version_id uuid,
            status text NOT NULL DEFAULT 'pending',
            version integer NOT NULL DEFAULT 1,
            created_by uuid,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            deleted_at timestamptz
        )
        """
    )
    op.execute(
        "CREATE UNIQUE INDEX documents_external_id ON documents (tenant_id, external_id) "
        "WHERE external_id IS NOT NULL AND deleted_at IS NULL"
    )
    tenant_table("documents")

    op.execute(
        """
        CREATE TABLE document_versions (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            document_id uuid NOT NULL REFERENCES documents(id),
            version_no integer NOT NULL CHECK (version_no > 0),
            content_sha256 text NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
            byte_size bigint NOT NULL CHECK (byte_size >= 0),
            mime_type text,
            filename text,
            created_by uuid,
            created_at timestamptz NOT NULL DEFAULT now(),
            UNIQUE (document_id, version_no)
        )
        """
    )
    tenant_table("document_versions", "SELECT, INSERT, UPDATE")
    op.execute(
        "ALTER TABLE documents ADD CONSTRAINT documents_current_version_fk "
        "FOREIGN KEY (current_version_id) REFERENCES document_versions(id) "
        "DEFERRABLE INITIALLY DEFERRED"
    )

    op.execute(
        """
        CREATE TABLE assets (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            document_version_id uuid NOT NULL REFERENCES document_versions(id),
            kind text NOT NULL,
            content_sha256 text CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
            mime_type text,
            detail jsonb NOT NULL DEFAULT '{}',
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    tenant_table("assets")

    op.execute(
        """
        CREATE TABLE chunks (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            document_id uuid NOT NULL REFERENCES documents(id),
            document_version_id uuid NOT NULL REFERENCES document_versions(id),
            parent_chunk_id uuid REFERENCES chunks(id),
            ordinal integer NOT NULL CHECK (ordinal >= 0),
            modality text NOT NULL
                CHECK (modality IN ('text', 'table', 'image', 'audio', 'slide', 'code')),
            text text NOT NULL,
            context_line text,
            language text,
            provenance jsonb NOT NULL DEFAULT '{}',
            content_sha256 text NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
            embedding vector,
            embedding_model text,
            created_at timestamptz NOT NULL DEFAULT now(),
            UNIQUE (document_version_id, ordinal),
            CHECK ((embedding IS NULL) = (embedding_model IS NULL))
        )
        """
    )
    op.execute("CREATE INDEX chunks_document ON chunks (tenant_id, document_id)")
    op.execute("CREATE INDEX chunks_parent ON chunks (parent_chunk_id)")
    tenant_table("chunks")

    op.execute(
        """
        CREATE TABLE knowledge_items (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            source_id uuid REFERENCES sources(id),
            document_id uuid REFERENCES documents(id),
            body text NOT NULL,
            basis jsonb NOT NULL DEFAULT '{}',
            category text,
            tags text[] NOT NULL DEFAULT '{}',
            pinned boolean NOT NULL DEFAULT false,
            confidence text,
            review_state text NOT NULL DEFAULT 'draft'
                CHECK (review_state IN ('draft', 'pending', 'verified', 'rejected')),
            version integer NOT NULL DEFAULT 1,
            created_by uuid,
            updated_by uuid,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            deleted_at timestamptz
        )
        """
    )
    tenant_table("knowledge_items")

    # Append-only history: the app role may only read and append, and a trigger
    # refuses UPDATE/DELETE/TRUNCATE from anyone, the owner included.
    op.execute(
        """
        CREATE TABLE events (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            occurred_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            actor_kind text NOT NULL CHECK (actor_kind IN ('user', 'service', 'system')),
            actor_id uuid,
            entity_type text NOT NULL,
            entity_id uuid NOT NULL,
            action text NOT NULL,
            before jsonb,
            after jsonb
        )
        """
    )
    op.execute("CREATE INDEX events_entity ON events (tenant_id, entity_type, entity_id, id)")
    op.execute(
        """
        CREATE FUNCTION grounded_private.refuse_event_change() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'events are append-only: % refused', TG_OP
                USING ERRCODE = '42501';
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events "
        "FOR EACH ROW EXECUTE FUNCTION grounded_private.refuse_event_change()"
    )
    op.execute(
        "CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events "
        "FOR EACH STATEMENT EXECUTE FUNCTION grounded_private.refuse_event_change()"
    )
    tenant_table("events", "SELECT, INSERT")

    op.execute(
        """
        CREATE TABLE index_snapshots (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            generation bigint NOT NULL CHECK (generation > 0),
            state text NOT NULL DEFAULT 'building'
                CHECK (state IN ('building', 'ready', 'live', 'failed', 'retired')),
            config jsonb NOT NULL DEFAULT '{}',
            embedding_model text,
            embedding_dim integer CHECK (embedding_dim > 0),
            corpus_fingerprint text,
            catalog_revision bigint NOT NULL DEFAULT 0,
            error text,
            created_at timestamptz NOT NULL DEFAULT now(),
            published_at timestamptz,
            UNIQUE (tenant_id, generation)
        )
        """
    )
    op.execute(
        "CREATE UNIQUE INDEX index_snapshots_one_live ON index_snapshots (tenant_id) "
        "WHERE state = 'live'"
    )
    tenant_table("index_snapshots")

    op.execute(
        """
        CREATE TABLE retrieval_runs (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            tenant_id uuid NOT NULL REFERENCES tenants(id),
            principal jsonb NOT NULL,
            query text NOT NULL,
            request jsonb NOT NULL DEFAULT '{}',
            receipt jsonb NOT NULL DEFAULT '{}',
            snapshot_id uuid REFERENCES index_snapshots(id),
            created_at timestamptz NOT NULL DEFAULT now()
        )
        """
    )
    tenant_table("retrieval_runs", "SELECT, INSERT")

    # Worker liveness, written by the `probe` job; holds no tenant data.
    op.execute(
        """
        CREATE TABLE worker_probes (
            id uuid PRIMARY KEY,
            requested_at timestamptz NOT NULL DEFAULT now(),
            completed_at timestamptz,
            worker text
        )
        """
    )
    op.execute(f"GRANT SELECT, INSERT, UPDATE ON worker_probes TO {role}")

    # -- job queue (procrastinate), on the same database ----------------------
    op.execute(SchemaManager.get_schema())
    op.execute(
        f"""
        DO $$
        DECLARE t text;
        BEGIN
            FOR t IN SELECT tablename FROM pg_tables
                     WHERE schemaname = 'public' AND tablename LIKE 'procrastinate%'
            LOOP
                EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO {role}', t);
            END LOOP;
        END
        $$
        """
    )
    op.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}")
    op.execute(f"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO {role}")


def downgrade() -> None:
    raise NotImplementedError("the foundation migration cannot be reverted; restore a backup")
