"""Kill -9 a worker at random points over a 200-document batch: nothing lost, nothing twice.

Tenant "calm" ingests the batch with one undisturbed worker; tenant "chaos"
ingests the same batch while its worker is SIGKILLed at random moments and
restarted (its stalled jobs requeued, as the periodic task does). The chunk
sets must be equal and neither may hold duplicates.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from grounded.auth import Principal
from grounded.config import Settings
from grounded.db import Database
from grounded.ingest.chunking import ChunkingConfig
from grounded.ingest.pipeline import pipeline_version
from grounded.ingest.records_import import import_records
from grounded.queue import build_queue
from grounded.queue.stalled import requeue_stalled
from grounded.storage import BlobStore
from tests.conftest import make_tenant

pytestmark = pytest.mark.integration

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "scifact"
DOCUMENTS = 200


def _records(tmp_path: Path) -> Path:
    path = tmp_path / "batch.jsonl"
    with (SCIFACT / "corpus.jsonl").open() as source:
        rows = [json.loads(next(source)) for _ in range(DOCUMENTS)]
    # Short texts keep the embedding cheap; the pipeline path is the same.
    path.write_text(
        "\n".join(
            json.dumps({"id": r["_id"], "title": r["title"], "text": r["text"][:300]}) for r in rows
        )
    )
    return path


def _import(settings: Settings, database: Database, tenant: uuid.UUID, path: Path) -> None:
    principal = Principal("system", uuid.uuid4(), tenant, frozenset({"admin"}))
    queue = build_queue(database.app_url)
    with queue.open():

        def on_batch(run_ids: list[uuid.UUID], _: int) -> None:
            queue.configure_task("grounded:ingest").batch_defer(
                *({"tenant_id": str(tenant), "run_id": str(r)} for r in run_ids)
            )

        import_records(
            database,
            BlobStore(settings.raw_dir),
            principal,
            path,
            pipeline_version=pipeline_version(ChunkingConfig()),
            on_batch=on_batch,
        )


def _env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_")}
    env.update(
        {
            "DATABASE_URL": settings.database_url.get_secret_value(),  # type: ignore[union-attr]
            "GROUNDED_APP_DATABASE_URL": settings.app_database_url.get_secret_value(),  # type: ignore[union-attr]
            "GROUNDED_DATA_DIR": str(settings.data_dir),
            "GROUNDED_CONFIG": "/nonexistent.toml",
        }
    )
    return env


def _pending(owner: psycopg.Connection, tenant: uuid.UUID) -> int:
    row = owner.execute(
        "SELECT count(*) FROM ingest_runs WHERE tenant_id = %s AND status"
        " NOT IN ('done', 'failed')",
        (tenant,),
    ).fetchone()
    return int(row[0]) if row else 0


def _requeue_stalled(database: Database) -> int:
    async def go() -> int:
        app = build_queue(database.app_url)
        async with app.open_async():
            return await requeue_stalled(app, 0)

    return asyncio.run(go())


def _chunk_set(owner: psycopg.Connection, tenant: uuid.UUID) -> list[tuple[object, ...]]:
    return owner.execute(
        "SELECT d.external_id, c.ordinal, c.role, c.content_sha256, p.ordinal,"
        " c.embedding IS NOT NULL OR c.role = 'parent', c.context_line IS NOT NULL"
        " OR c.role = 'parent'"
        " FROM chunks c JOIN documents d ON d.id = c.document_id"
        " LEFT JOIN chunks p ON p.id = c.parent_chunk_id WHERE c.tenant_id = %s"
        " ORDER BY 1, 2",
        (tenant,),
    ).fetchall()


@pytest.mark.timeout(1800)
def test_kill_nine_loses_nothing_and_duplicates_nothing(
    settings: Settings, database: Database, owner: psycopg.Connection, tmp_path: Path
) -> None:
    batch = _records(tmp_path)
    calm, chaos = make_tenant(owner, "calm"), make_tenant(owner, "chaos")
    env = _env(settings)

    _import(settings, database, calm, batch)
    subprocess.run(
        [sys.executable, "-m", "grounded", "worker", "--burst"],
        env=env,
        check=True,
        capture_output=True,
        timeout=900,
    )
    assert _pending(owner, calm) == 0

    _import(settings, database, chaos, batch)
    rng = random.Random(20261130)
    kills = 0
    deadline = time.monotonic() + 1200
    while _pending(owner, chaos) and kills < 8 and time.monotonic() < deadline:
        before = _pending(owner, chaos)
        worker = subprocess.Popen(
            [sys.executable, "-m", "grounded", "worker"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # Kill at a random moment once the worker is doing real work.
        started = time.monotonic()
        while _pending(owner, chaos) >= before and time.monotonic() - started < 120:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 1.5))
        if worker.poll() is None:
            os.kill(worker.pid, signal.SIGKILL)
            kills += 1
        worker.wait(30)
        _requeue_stalled(database)
    assert kills >= 3
    # Then let one undisturbed worker finish what is left.
    while _pending(owner, chaos) and time.monotonic() < deadline:
        subprocess.run(
            [sys.executable, "-m", "grounded", "worker", "--burst"],
            env=env,
            check=True,
            capture_output=True,
            timeout=900,
        )
        _requeue_stalled(database)
        time.sleep(0.5)
    assert _pending(owner, chaos) == 0, "runs never finished"

    calm_set, chaos_set = _chunk_set(owner, calm), _chunk_set(owner, chaos)
    assert len(calm_set) > DOCUMENTS
    assert chaos_set == calm_set
    assert all(row[5] and row[6] for row in chaos_set)  # embedded and enriched
    # Nothing twice: one version, one run, one "ingested" event per document.
    for tenant in (calm, chaos):
        counts = owner.execute(
            "SELECT (SELECT count(*) FROM document_versions WHERE tenant_id = %(t)s),"
            " (SELECT count(*) FROM ingest_runs WHERE tenant_id = %(t)s AND status = 'done'),"
            " (SELECT count(*) FROM events WHERE tenant_id = %(t)s AND action = 'ingested')",
            {"t": tenant},
        ).fetchone()
        assert counts == (DOCUMENTS, DOCUMENTS, DOCUMENTS)
