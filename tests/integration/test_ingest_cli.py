"""`grounded ingest` and `grounded documents`, as a newcomer runs them, with a real worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from grounded.db import DatabaseUrls
from tests.conftest import make_tenant

pytestmark = pytest.mark.integration

SHARED = Path(__file__).resolve().parents[3] / "shared" / "evaldata"
Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def env(
    db_urls: DatabaseUrls, pg_data_dir: Path, owner: psycopg.Connection, tmp_path: Path
) -> dict[str, str]:
    make_tenant(owner, "demo")
    out = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_")}
    out.update(
        {
            "DATABASE_URL": db_urls.owner,
            "GROUNDED_APP_DATABASE_URL": db_urls.app,
            "GROUNDED_DATA_DIR": str(pg_data_dir),
            "GROUNDED_CONFIG": "/nonexistent.toml",
        }
    )
    return out


@pytest.fixture
def cli(env: dict[str, str]) -> Cli:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "grounded", *args, "--tenant", "demo"],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    return run


@pytest.fixture
def worker(env: dict[str, str]) -> Iterator[None]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "grounded", "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    yield
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)


@pytest.mark.usefixtures("worker")
def test_ingest_files_and_wait(cli: Cli) -> None:
    docs = SHARED / "documents"
    result = cli(
        "ingest",
        str(docs / "crazyones.pdf"),
        str(docs / "test.docx"),
        str(docs / "crazyones-encrypted-256.pdf"),
        "--wait",
        "--json",
    )
    assert result.returncode == 1  # one file failed, and the exit code says so
    report = json.loads(result.stdout)
    by_name = {Path(f["path"]).name: f for f in report["files"]}
    assert by_name["crazyones.pdf"]["status"] == "done"
    assert by_name["test.docx"]["status"] == "done"
    assert by_name["crazyones-encrypted-256.pdf"]["status"] == "failed"
    assert "password" in by_name["crazyones-encrypted-256.pdf"]["error"].lower()
    again = json.loads(cli("ingest", str(docs / "crazyones.pdf"), "--json").stdout)
    assert again["files"][0]["new_version"] is False
    listed = json.loads(cli("documents", "list", "--json").stdout)["items"]
    assert {d["status"] for d in listed} == {"ready", "failed"}
    shown = json.loads(
        cli("documents", "show", by_name["test.docx"]["document_id"], "--json").stdout
    )
    assert shown["ingest"]["timings"]["extract"] >= 0
    failed = json.loads(cli("documents", "failed", "--json").stdout)
    assert len(failed) == 1


@pytest.mark.usefixtures("worker")
def test_records_import(cli: Cli, tmp_path: Path) -> None:
    corpus = tmp_path / "scifact-sample.jsonl"
    with (SHARED / "scifact" / "corpus.jsonl").open() as source:
        lines = [json.loads(next(source)) for _ in range(40)]
    corpus.write_text(
        "\n".join(
            json.dumps({"id": d["_id"], "title": d["title"], "text": d["text"]}) for d in lines
        )
    )
    result = cli("ingest", "--records", str(corpus), "--wait", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["runs"] == 40 and report["done"] == 40
    unchanged = cli("ingest", "--records", str(corpus), "--json")
    assert "40 unchanged" in unchanged.stderr


def test_records_file_errors_name_the_line(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "text": "fine"}\n{"id": "2", "text": ""}\n')
    result = cli("ingest", "--records", str(bad))
    assert result.returncode == 1
    assert "bad.jsonl, line 2" in result.stderr and "`text`" in result.stderr
