"""The CI fast tier (issue 9): the frozen subsets through the real write and read
paths, gated on the thresholds in evals/retrieval.toml.

One database for the module: the corpus is ingested once (about a minute on
two cores) and every test reuses its tenants, which is itself the fingerprint
reuse under test. Breaking retrieval on purpose must fail a gate with a clear
message; a run that stops part-way is never reported complete; the harness's
figures match a computation from `grounded search --json`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from grounded.auth.principal import Principal
from grounded.cli.local_admin import local_admin
from grounded.config import Settings
from grounded.db import Database, embedded
from grounded.errors import Conflict
from grounded.evals import Outcome, RunOptions, Variant, load_suite, markdown, run
from grounded.evals.corpus import ensure_tenant
from grounded.evals.metrics import ranking
from grounded.evals.suite import Suite
from grounded.retrieve import Retriever, SearchResult
from tests.conftest import settings_for, urls_for

pytestmark = pytest.mark.integration

SUITE = Path(__file__).resolve().parents[2] / "evals" / "retrieval.toml"


class World:
    def __init__(self, settings: Settings, database: Database, owner_url: str) -> None:
        self.settings = settings
        self.database = database
        self.owner_url = owner_url
        self.suite: Suite = load_suite(SUITE)

    def principal(self, slug: str) -> Principal:
        return local_admin(self.settings, slug)

    def run(self, **options: Any) -> dict[str, Any]:
        extra = options.pop("extra_variants", ())
        return run(
            self.settings,
            self.database,
            self.suite,
            RunOptions(tier="fast", **options),
            self.principal,
            extra_variants=extra,
        )


@pytest.fixture(scope="module")
def world(
    pg_server: embedded.EmbeddedServer, template_db: str, pg_data_dir: Path
) -> Iterator[World]:
    name = f"t_eval_{uuid.uuid4().hex[:8]}"
    admin = pg_server.url(database="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(template_db)
            )
        )
    urls = urls_for(pg_server, name)
    settings = settings_for(pg_data_dir, urls)
    with Database.open(settings) as database:
        yield World(settings, database, urls.owner)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="module")
def fast_report(world: World) -> dict[str, Any]:
    return world.run()


def test_fast_tier_passes_its_gates_with_every_language(
    world: World, fast_report: dict[str, Any]
) -> None:
    assert fast_report["complete"], fast_report["error"]
    assert fast_report["gates"], "the suite must gate the fast tier"
    failed = [g["message"] for g in fast_report["gates"] if not g["passed"]]
    assert not failed, failed
    scopes = {r["scope"] for r in fast_report["summary"]}
    assert {"all", "language:en", "language:zh", "family:scifact", "family:cmrc2018"} <= scopes
    variants = {r["variant"] for r in fast_report["summary"]}
    assert variants == {"bm25", "dense", "hybrid", "hybrid+rerank"}
    # every measured query left a receipt, like a user's search
    run_ids = {q["run_id"] for q in fast_report["queries"]}
    assert len(fast_report["queries"]) == (30 + 40) * 4
    for dataset in fast_report["datasets"]:
        principal = world.principal(dataset["tenant"])
        with world.database.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                "SELECT count(*) AS n FROM retrieval_runs WHERE id::text = ANY(%s)",
                (list(run_ids),),
            ).fetchone()
        assert row is not None and row["n"] == dataset["queries"] * 4


def test_breaking_retrieval_fails_the_gate_with_a_clear_message(
    world: World, fast_report: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Retriever.search

    def reversed_search(self: Retriever, principal: Principal, request: Any) -> SearchResult:
        found = original(self, principal, request)
        return SearchResult(found.run_id, found.hits[::-1], found.receipt)

    monkeypatch.setattr(Retriever, "search", reversed_search)
    broken = world.run()
    # the corpus was reused, not ingested again
    assert all(d["tenant_reused"] and d["documents_ingested"] == 0 for d in broken["datasets"])
    assert broken["complete"]
    failed = [g["message"] for g in broken["gates"] if not g["passed"]]
    assert any(
        m.startswith("gate failed: hybrid ndcg@10 (all): ") and "retrieval.toml:" in m
        for m in failed
    ), failed
    assert "| FAIL |" in markdown(broken)


def test_a_run_that_stops_part_way_is_never_complete(world: World) -> None:
    calls = {"n": 0}

    def flaky(principal: Principal, query: str) -> Outcome:
        calls["n"] += 1
        if calls["n"] > 5:
            raise RuntimeError("model server went away")
        return Outcome(())

    partial = world.run(variants=("bm25",), extra_variants=(Variant("flaky", flaky),))
    assert not partial["complete"]
    assert "query" in partial["error"] and "model server went away" in partial["error"]
    assert all(not g["passed"] for g in partial["gates"])
    assert markdown(partial).startswith("**INCOMPLETE RUN**")


def test_a_named_tenant_holding_other_data_is_refused(world: World) -> None:
    with psycopg.connect(world.owner_url, autocommit=True) as conn:
        conn.execute("INSERT INTO tenants (slug, name) VALUES ('handmade', 'Handmade')")
    with pytest.raises(Conflict, match="does not hold this corpus"):
        ensure_tenant(world.settings, "handmade", "0" * 64)


def test_figures_agree_with_grounded_search_json(world: World, fast_report: dict[str, Any]) -> None:
    """Recompute three SciFact queries from the CLI's own JSON output."""
    dataset = world.suite.datasets("fast")[0]
    tenant = next(d["tenant"] for d in fast_report["datasets"] if d["name"] == "scifact")
    principal = world.principal(tenant)
    with world.database.transaction(principal.tenant_id) as conn:
        ids = {
            str(r["id"]): r["external_id"]
            for r in conn.execute("SELECT id, external_id FROM documents").fetchall()
        }
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_")}
    env.update(
        {
            "DATABASE_URL": world.settings.database_url.get_secret_value(),  # type: ignore[union-attr]
            "GROUNDED_APP_DATABASE_URL": world.settings.app_database_url.get_secret_value(),  # type: ignore[union-attr]
            "GROUNDED_DATA_DIR": str(world.settings.data_dir),
            "GROUNDED_CONFIG": "/nonexistent.toml",
        }
    )
    by_query = {
        q["query_id"]: q
        for q in fast_report["queries"]
        if q["dataset"] == "scifact" and q["variant"] == "hybrid"
    }
    for query in dataset.queries[:3]:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "grounded",
                "search",
                query.text,
                "--tenant",
                tenant,
                "--k",
                "100",
                "--candidate-k",
                "100",
                "--no-rerank",
                "--json",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        hits = json.loads(done.stdout)["results"]
        ranked = list(dict.fromkeys(ids[h["document_id"]] for h in hits))
        mine = by_query[query.id]
        assert ranked[:10] == list(mine["top"])
        for metric, value in ranking(ranked, query.relevant).items():
            assert value == pytest.approx(mine["scores"][metric]), (query.id, metric)


def test_the_answer_variant_reports_answer_metrics(world: World) -> None:
    """Issue 10's answers as a variant: claims, citations, abstention, answer spans."""
    found = world.run(variants=("answer",), limit=2)
    assert found["complete"], found["error"]
    row = next(r for r in found["summary"] if r["scope"] == "all")
    assert row["variant"] == "answer" and row["n"] == 4
    assert row["abstention_rate"] is not None
    answered = [q for q in found["queries"] if q["scores"]["abstention_rate"] == 0.0]
    for q in answered:
        assert {"support_rate", "citation_precision"} <= set(q["scores"])
