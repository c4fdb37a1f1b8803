"""Upload -> queue -> worker -> chunks, through the real API and a real worker process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from grounded.auth import Principal
from grounded.index import IndexReader
from tests.integration.auth_support import Browser, World, world

pytestmark = pytest.mark.integration
__all__ = ["world"]

DOCS = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "documents"


def admin(w: World) -> Browser:
    browser = w.browser()
    assert browser.login("acme", "admin@acme.test").status_code == 200
    return browser


def run_worker_until_idle(w: World) -> None:
    """Burst workers until no job is due: a burst worker stops when the queue is
    momentarily empty, before jobs that its own jobs queued (index refresh)."""
    settings = w.settings
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_")}
    env.update(
        {
            "DATABASE_URL": settings.database_url.get_secret_value(),  # type: ignore[union-attr]
            "GROUNDED_APP_DATABASE_URL": settings.app_database_url.get_secret_value(),  # type: ignore[union-attr]
            "GROUNDED_DATA_DIR": str(settings.data_dir),
            "GROUNDED_CONFIG": "/nonexistent.toml",
        }
    )
    for _ in range(10):
        done = subprocess.run(
            [sys.executable, "-m", "grounded", "worker", "--burst"],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        due = w.owner.execute(
            "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"
            " AND task_name <> 'grounded:retry_stalled'"
            " AND (scheduled_at IS NULL OR scheduled_at <= now())"
        ).fetchone()
        if due == (0,):
            return
    raise AssertionError("jobs still due after 10 burst workers")


def upload(browser: Browser, path: Path, **form: str) -> dict:  # type: ignore[type-arg]
    with path.open("rb") as handle:
        response = browser.post("/v1/documents", files={"file": (path.name, handle)}, data=form)
    assert response.status_code == 202, response.text
    return response.json()  # type: ignore[no-any-return]


def test_pdf_upload_becomes_cited_chunks(world: World) -> None:
    a = admin(world)
    document = upload(a, DOCS / "crazyones.pdf", external_id="crazyones")
    assert document["ingest"]["status"] == "queued"
    again = upload(a, DOCS / "crazyones.pdf", external_id="crazyones")
    assert again["id"] == document["id"]
    assert again["ingest"]["run_id"] == document["ingest"]["run_id"]  # same bytes: no new run
    run_worker_until_idle(world)
    shown = a.get(f"/v1/documents/{document['id']}").json()
    assert shown["status"] == "ready", shown
    ingest = shown["ingest"]
    assert (ingest["status"], ingest["stage"], ingest["progress"]) == ("done", "done", 1.0)
    assert set(ingest["timings"]) >= {"extract", "chunk", "enrich", "embed", "index"}
    assert ingest["detail"]["chunks"] >= 1
    rows = world.owner.execute(
        "SELECT text, provenance, embedding_model, context_line FROM chunks"
        " WHERE document_id = %s AND role = 'child' ORDER BY ordinal",
        (document["id"],),
    ).fetchall()
    hit = [r for r in rows if "crazy ones" in r[0]]
    assert hit, [r[0][:80] for r in rows]
    assert hit[0][1]["page"] == 1
    assert all(r[2] is not None and r[3] for r in rows)  # embedded and enriched
    versions = a.get(f"/v1/documents/{document['id']}/versions").json()
    assert len(versions) == 1
    # The worker refreshed the index after ingesting: the document is searchable.
    principal = Principal("user", world.admin_a, world.tenant_a, frozenset({"admin"}))
    found = IndexReader(world.database, world.settings.index).candidates(
        principal, "here's to the crazy ones"
    )
    assert found.lexical, "nothing searchable after ingestion"
    top = found.lexical[0]
    assert str(top.document_id) == document["id"]


def test_bad_files_fail_with_a_reason_and_hurt_nothing(world: World, tmp_path: Path) -> None:
    a = admin(world)
    good = upload(a, DOCS / "crazyones.pdf")
    encrypted = upload(a, DOCS / "crazyones-encrypted-256.pdf")
    empty_file = tmp_path / "empty.pdf"
    empty_file.write_bytes(b"")
    empty = upload(a, empty_file)
    liar = tmp_path / "photo.docx"
    liar.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    wrong = upload(a, liar)
    run_worker_until_idle(world)
    states = {
        name: a.get(f"/v1/documents/{d['id']}").json()
        for name, d in (
            ("good", good),
            ("encrypted", encrypted),
            ("empty", empty),
            ("wrong", wrong),
        )
    }
    assert states["good"]["status"] == "ready"
    for name in ("encrypted", "empty", "wrong"):
        assert states[name]["status"] == "failed", states[name]
        assert states[name]["ingest"]["error"], states[name]
    assert "password" in states["encrypted"]["ingest"]["error"].lower()
    assert "empty" in states["empty"]["ingest"]["error"].lower()
    dead = a.get("/v1/ingest/failed").json()
    assert {d["run_id"] for d in dead} == {
        states[n]["ingest"]["run_id"] for n in ("encrypted", "empty", "wrong")
    }


def test_oversized_upload_is_413_and_stores_nothing(world: World, tmp_path: Path) -> None:
    world.settings.max_upload_mb = 1  # type: ignore[misc]
    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * (3 * 1024 * 1024))
    with big.open("rb") as handle:
        response = admin(world).post("/v1/documents", files={"file": ("big.txt", handle)})
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
    assert world.owner.execute("SELECT count(*) FROM documents").fetchone() == (0,)
