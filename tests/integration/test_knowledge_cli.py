"""`grounded knowledge ...` through the real command line, as a newcomer would use it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from grounded.db import DatabaseUrls
from tests.conftest import make_tenant

pytestmark = pytest.mark.integration


@pytest.fixture
def cli(db_urls: DatabaseUrls, pg_data_dir: Path, owner: psycopg.Connection):  # type: ignore[no-untyped-def]
    make_tenant(owner, "demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_")}
    env.update(
        {
            "DATABASE_URL": db_urls.owner,
            "GROUNDED_APP_DATABASE_URL": db_urls.app,
            "GROUNDED_DATA_DIR": str(pg_data_dir),
            "GROUNDED_CONFIG": "/nonexistent.toml",
        }
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "grounded", "knowledge", *args, "--tenant", "demo"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    return run


def test_add_review_revise_history(cli) -> None:  # type: ignore[no-untyped-def]
    added = cli(
        "add",
        "Refunds are issued within 14 days.",
        "--submit",
        "--confidence",
        "verified",
        "--json",
    )
    assert added.returncode == 0, added.stderr
    item = json.loads(added.stdout)
    assert item["review_state"] == "pending"
    refused = cli("review", item["id"], "--action", "verify", "--version", "1", "--note", "ok")
    assert refused.returncode == 1
    assert "source_link, captured_at" in refused.stderr
    verified = cli(
        "review",
        item["id"],
        "--action",
        "verify",
        "--version",
        "1",
        "--note",
        "ok",
        "--source-link",
        "https://example.com/policy",
        "--captured-at",
        "2026-11-01T00:00:00",
        "--json",
    )
    assert json.loads(verified.stdout)["review_state"] == "verified"
    stale = cli("revise", item["id"], "--version", "1", "--body", "30 days")
    assert stale.returncode == 1 and "changed since you read it" in stale.stderr
    revised = json.loads(
        cli(
            "revise",
            item["id"],
            "--version",
            "2",
            "--body",
            "Refunds are issued within 30 days.",
            "--json",
        ).stdout
    )
    assert (revised["review_state"], revised["effective_confidence"]) == ("pending", "inferred")
    history = json.loads(cli("history", item["id"], "--json").stdout)
    assert [e["action"] for e in history] == ["created", "review.verify", "revised"]
    listed = json.loads(cli("list", "--state", "pending", "--json").stdout)
    assert [i["id"] for i in listed["items"]] == [item["id"]]


def test_unknown_label_is_refused(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("add", "x", "--confidence", "probably")
    assert result.returncode == 1
    assert "confidence must be one of verified, inferred, unverified" in result.stderr
