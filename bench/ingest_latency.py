"""Upload-to-searchable latency and records-import throughput, end to end.

Starts a fresh embedded PostgreSQL in a temporary data dir, one worker
process, and then
  1. uploads N single-page documents one at a time (through the same
     `accept` + queue path as the API) and times each until the index
     returns it for a query naming its unique token;
  2. imports M SciFact abstracts with `grounded ingest --records` and times
     import and processing (documents/second).

Run: .venv/bin/python bench/ingest_latency.py [--uploads 10] [--records 200]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "evaldata" / "scifact"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--uploads", type=int, default=10)
    parser.add_argument("--records", type=int, default=200)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="grounded-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_")}
    env.update(
        {
            "GROUNDED_DATA_DIR": str(tmp),
            "GROUNDED_CONFIG": "/nonexistent.toml",
            "GROUNDED_LOG_LEVEL": "warning",
        }
    )
    os.environ.update(env)

    def cli(*a: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "grounded", *a],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )

    cli("db", "upgrade")
    cli("tenant", "create", "bench")
    worker = subprocess.Popen(
        [sys.executable, "-m", "grounded", "worker", "--concurrency", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        latencies = _uploads(args.uploads)
        imported, processed = _records(cli, tmp, args.records)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(60)
        cli("db", "stop")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(
        f"upload-to-searchable over {len(latencies)} single documents: "
        f"p50 {statistics.median(latencies):.2f} s, "
        f"p95 {sorted(latencies)[max(0, int(len(latencies) * 0.95) - 1)]:.2f} s, "
        f"max {max(latencies):.2f} s"
    )
    print(
        f"records import of {args.records} SciFact abstracts: write {imported:.1f} s "
        f"({args.records / imported:.0f} docs/s), through extract+chunk+enrich+embed+index "
        f"{processed:.1f} s ({args.records / processed:.2f} docs/s)"
    )


def _uploads(n: int) -> list[float]:
    from grounded.cli.local_admin import local_admin
    from grounded.config import Settings
    from grounded.db import Database
    from grounded.index import IndexReader
    from grounded.ingest.chunking import ChunkingConfig
    from grounded.ingest.jobs import defer_run
    from grounded.ingest.pipeline import pipeline_version
    from grounded.ingest.upload import UploadRequest, accept
    from grounded.queue import build_queue
    from grounded.storage import BlobStore

    settings = Settings()
    principal = local_admin(settings, "bench")
    latencies = []
    with Database.open(settings) as database:
        queue = build_queue(database.app_url)
        reader = IndexReader(database, settings.index)
        with queue.open():
            for i in range(n):
                token = f"zq{uuid.uuid4().hex[:10]}"
                body = (
                    f"# Note {i}\n\nThe calibration code {token} belongs to line {i}. "
                    "It is checked every morning before production starts.\n"
                ).encode()
                start = time.perf_counter()
                accepted = accept(
                    database,
                    BlobStore(settings.raw_dir),
                    principal,
                    [body],
                    UploadRequest(filename=f"note-{i}.md"),
                    max_bytes=1 << 20,
                    pipeline_version=pipeline_version(ChunkingConfig()),
                )
                defer_run(queue, principal.tenant_id, accepted.run)
                while True:
                    try:
                        found = reader.candidates(principal, token, k=5).lexical
                    except Exception:  # no index published yet
                        found = []
                    if any(str(c.document_id) == str(accepted.document.id) for c in found):
                        break
                    if time.perf_counter() - start > 300:
                        raise SystemExit(f"document {i} not searchable after 300 s")
                    time.sleep(0.1)
                latencies.append(time.perf_counter() - start)
    return latencies


def _records(cli, tmp: Path, n: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    path = tmp / "records.jsonl"
    with (SCIFACT / "corpus.jsonl").open() as source:
        rows = [json.loads(next(source)) for _ in range(n)]
    path.write_text(
        "\n".join(
            json.dumps({"id": r["_id"], "title": r["title"], "text": r["text"]}) for r in rows
        )
    )
    start = time.perf_counter()
    cli("ingest", "--records", str(path), "--tenant", "bench", "--json")
    imported = time.perf_counter() - start
    cli("ingest", "--records", str(path), "--tenant", "bench", "--json")  # no-op re-import
    from grounded.cli.local_admin import local_admin
    from grounded.config import Settings
    from grounded.db import Database

    settings = Settings()
    principal = local_admin(settings, "bench")
    with Database.open(settings) as database:
        while True:
            with database.transaction(principal.tenant_id) as conn:
                row = conn.execute(
                    "SELECT count(*) AS n FROM ingest_runs WHERE status NOT IN ('done', 'failed')"
                ).fetchone()
            if row is not None and row["n"] == 0:
                break
            time.sleep(0.5)
    return imported, time.perf_counter() - start


if __name__ == "__main__":
    main()
