"""The knowledge REST endpoints, through real sessions: lifecycle, concurrency, deletes."""

from __future__ import annotations

import threading

import pytest

from tests.integration.auth_support import Browser, World, world

pytestmark = pytest.mark.integration
__all__ = ["world"]


def admin(w: World) -> Browser:
    browser = w.browser()
    assert browser.login("acme", "admin@acme.test").status_code == 200
    return browser


def test_add_revise_verify_and_read_history(world: World) -> None:
    a = admin(world)
    created = a.post(
        "/v1/knowledge",
        json={"body": "Refunds take 14 days.", "submit": True, "confidence": "verified"},
    )
    assert created.status_code == 201, created.text
    item = created.json()
    assert (item["review_state"], item["effective_confidence"]) == ("pending", "verified")
    missing = a.post(
        f"/v1/knowledge/{item['id']}/review", json={"version": 1, "action": "verify", "note": "ok"}
    )
    assert missing.status_code == 422
    assert missing.json()["error"]["details"]["fields"] == ["source_link", "captured_at"]
    verified = a.post(
        f"/v1/knowledge/{item['id']}/review",
        json={
            "version": 1,
            "action": "verify",
            "note": "matches the policy PDF",
            "source_link": "https://example.com/refunds",
            "captured_at": "2026-11-01T09:00:00Z",
        },
    )
    assert verified.json()["review_state"] == "verified"
    revised = a.post(
        f"/v1/knowledge/{item['id']}/revisions",
        json={"version": 2, "body": "Refunds take 30 days."},
    ).json()
    assert revised["review_state"] == "pending" and revised["version"] == 3
    events = a.get("/v1/events", params={"entity": f"knowledge_item:{item['id']}"}).json()
    assert [e["action"] for e in events] == ["created", "review.verify", "revised"]
    assert events[2]["before"]["body"] == "Refunds take 14 days."
    legacy = a.get("/v1/knowledge").json()
    assert isinstance(legacy, list) and legacy[0]["id"] == item["id"]
    page = a.get("/v1/knowledge/page", params={"limit": 1}).json()
    assert page["items"][0]["id"] == item["id"] and page["next_cursor"] is None


def test_concurrent_revisions_one_wins_one_409(world: World) -> None:
    a, b = admin(world), admin(world)
    item = a.post("/v1/knowledge", json={"body": "original"}).json()
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def revise(browser: Browser, text: str) -> None:
        barrier.wait()
        statuses.append(
            browser.post(
                f"/v1/knowledge/{item['id']}/revisions", json={"version": 1, "body": text}
            ).status_code
        )

    threads = [threading.Thread(target=revise, args=(c, t)) for c, t in ((a, "x"), (b, "y"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200, 409]
    events = a.get("/v1/events", params={"entity": f"knowledge_item:{item['id']}"}).json()
    assert [e["action"] for e in events] == ["created", "revised"]


def test_referenced_source_delete_is_409_with_ids(world: World) -> None:
    a = admin(world)
    source = a.post(
        "/v1/sources", json={"kind": "url", "name": "policy page", "uri": "https://example.com"}
    ).json()
    item = a.post("/v1/knowledge", json={"body": "fact", "source_id": source["id"]}).json()
    refused = a.delete(f"/v1/sources/{source['id']}", params={"version": 1})
    assert refused.status_code == 409
    assert refused.json()["error"]["details"]["referenced_by"] == [
        {"type": "knowledge_item", "id": item["id"]}
    ]
    assert a.delete(f"/v1/knowledge/{item['id']}", params={"version": 1}).status_code == 200
    assert a.delete(f"/v1/sources/{source['id']}", params={"version": 1}).status_code == 200
    assert a.get(f"/v1/sources/{source['id']}").status_code == 404
    assert world.owner.execute("SELECT count(*) FROM sources").fetchone() == (1,)
    restored = a.post(f"/v1/sources/{source['id']}/restore", json={"version": 2})
    assert restored.status_code == 200 and restored.json()["deleted_at"] is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"body": "x", "confidence": "certain"}, "body.confidence"),
        ({"body": "x", "tenant_id": "00000000-0000-0000-0000-000000000000"}, "body.tenant_id"),
        ({"body": "x", "created_by": "00000000-0000-0000-0000-000000000000"}, "body.created_by"),
        ({"body": "x" * 100_001}, "body.body"),
        ({"body": ""}, "body.body"),
    ],
)
def test_bad_bodies_name_the_field_and_write_nothing(
    world: World, body: dict[str, object], field: str
) -> None:
    response = admin(world).post("/v1/knowledge", json=body)
    assert response.status_code == 422
    assert field in [f["field"] for f in response.json()["error"]["details"]["fields"]]
    assert world.owner.execute("SELECT count(*) FROM events").fetchone() == (0,)


def test_users_cannot_manage_knowledge(world: World) -> None:
    user = world.browser()
    assert user.login("acme", "user@acme.test").status_code == 200
    assert user.get("/v1/knowledge").status_code == 403
    assert user.post("/v1/knowledge", json={"body": "x"}).status_code == 403
