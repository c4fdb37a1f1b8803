"""POST /v1/search end to end: eligible corpus from the principal, receipts, bad input."""

from __future__ import annotations

import uuid

import pytest

from grounded.auth import Principal
from grounded.index import Builder, publish
from grounded.knowledge import KnowledgeItems, NewItem, ReviewInput
from tests.integration.auth_support import Browser, World, world

pytestmark = pytest.mark.integration
__all__ = ["world"]


def login(w: World, email: str) -> Browser:
    browser = w.browser()
    assert browser.login("acme", email).status_code == 200
    return browser


def _seed(w: World) -> dict[str, uuid.UUID]:
    """Three knowledge items in tenant A (one verified), one in tenant B; index both."""
    from datetime import UTC, datetime

    admin_a = Principal("user", w.admin_a, w.tenant_a, frozenset({"admin"}))
    admin_b = Principal("user", w.admin_b, w.tenant_b, frozenset({"admin"}))
    items = KnowledgeItems(w.database)
    verified = items.create(
        admin_a,
        NewItem(body="The boiler pressure limit is 3 bar.", submit=True, confidence="verified"),
    )
    items.review(
        admin_a,
        verified.id,
        1,
        ReviewInput(
            "verify",
            note="from the manual",
            source_link="https://example.com/manual",
            captured_at=datetime(2026, 11, 1, tzinfo=UTC),
        ),
    )
    pending = items.create(
        admin_a,
        NewItem(body="The boiler pressure limit is 5 bar.", submit=True, confidence="unverified"),
    )
    items.create(admin_b, NewItem(body="CANARY boiler pressure limit of tenant B"))
    for who in (admin_a, admin_b):
        report = Builder(w.database, w.settings.index, None).build(who, incremental=False)
        publish(w.database, who, report.snapshot.generation)
    return {"verified": verified.id, "pending": pending.id}


def test_users_see_verified_knowledge_admins_choose(world: World) -> None:
    ids = _seed(world)
    body = {"query": "boiler pressure limit", "modes": ["bm25"], "rerank": False}
    user = login(world, "user@acme.test").post("/v1/search", json=body)
    assert user.status_code == 200, user.text
    found = [r["chunk_id"] for r in user.json()["results"]]
    assert found == [str(ids["verified"])]
    admin = login(world, "admin@acme.test").post("/v1/search", json={**body, "explain": True})
    result = admin.json()
    assert {r["chunk_id"] for r in result["results"]} == {str(ids["verified"]), str(ids["pending"])}
    assert "CANARY" not in admin.text and "CANARY" not in user.text
    receipt = result["receipt"]
    assert receipt["fusion"] == {"method": "rrf", "k": 60, "weights": [1, 1]}
    assert receipt["preference"]["policy"] == "confidence-v1"
    assert receipt["bm25"] and receipt["snapshot"]["generation"] == 1
    stored = world.owner.execute(
        "SELECT receipt->'results' FROM retrieval_runs WHERE id = %s", (result["retrieval_run_id"],)
    ).fetchone()
    assert stored is not None and len(stored[0]) == 2
    # A bounded preference lifts the verified item, and the receipt shows the factor.
    weighted = (
        login(world, "admin@acme.test")
        .post("/v1/search", json={**body, "confidence_weight": 0.5, "explain": True})
        .json()
    )
    factors = {r["label"]: r["factor"] for r in weighted["receipt"]["ranked"]}
    assert factors == {"verified": 1.5, "unverified": 0.5}
    assert weighted["results"][0]["chunk_id"] == str(ids["verified"])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "\x00\x01\x02"}, "query"),
        ({"query": "x" * 2001}, "query"),
        ({"query": "ok", "confidence_weight": 0.7}, "confidence_weight"),
        ({"query": "ok", "confidence": ["certain"]}, "body.confidence.0"),
        ({"query": "ok", "tenant_id": str(uuid.uuid4())}, "body.tenant_id"),
    ],
)
def test_bad_queries_are_4xx_with_the_field(
    world: World, body: dict[str, object], field: str
) -> None:
    _seed(world)
    response = login(world, "user@acme.test").post("/v1/search", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    fields = [f["field"] for f in error["details"].get("fields", [])] or [
        error["details"].get("field")
    ]
    assert field in fields


def test_no_index_yet_is_an_explicit_state(world: World) -> None:
    response = login(world, "user@acme.test").post("/v1/search", json={"query": "anything"})
    assert response.status_code == 404
    assert response.json()["error"]["details"]["state"] == "no_index"
