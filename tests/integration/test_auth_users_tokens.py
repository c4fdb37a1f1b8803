"""Admin user management, API tokens, permissions, spoofed ownership fields."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from grounded.auth import bearer
from tests.integration.auth_support import PASSWORD, Browser, World, world

pytestmark = pytest.mark.integration
__all__ = ["world"]


def _admin(world: World) -> Browser:
    admin = world.browser()
    assert admin.login("acme", "admin@acme.test").status_code == 200
    return admin


def test_admin_manages_users(world: World) -> None:
    admin = _admin(world)
    made = admin.post(
        "/v1/users",
        json={
            "email": "Carol@Acme.test",
            "password": "carol's own passphrase",
            "groups": ["finance", "finance", "hr"],
            "display_name": "Carol",
        },
    )
    assert made.status_code == 201, made.text
    carol = made.json()
    assert carol["email"] == "carol@acme.test" and carol["role"] == "user"
    assert carol["groups"] == ["finance", "hr"]
    duplicate = admin.post("/v1/users", json={"email": "carol@acme.test", "password": "x" * 12})
    assert duplicate.status_code == 409
    page = admin.get("/v1/users", params={"limit": 2}).json()
    assert len(page["items"]) == 2 and page["next_after"] is not None
    rest = admin.get("/v1/users", params={"limit": 2, "after": page["next_after"]}).json()
    emails = [u["email"] for u in page["items"] + rest["items"]]
    assert sorted(emails) == ["admin@acme.test", "carol@acme.test", "user@acme.test"]
    assert rest["next_after"] is None
    assert all("globex" not in e for e in emails)
    # Seed 002 ADR-009: admins come only from `grounded admin create`.
    promoted = admin.patch(f"/v1/users/{carol['id']}", json={"role": "admin"})
    assert promoted.status_code == 403
    assert admin.get(f"/v1/users/{carol['id']}").json()["role"] == "user"
    new_admin = admin.post(
        "/v1/users", json={"email": "dave@acme.test", "password": "x" * 12, "role": "admin"}
    )
    assert new_admin.status_code == 403
    other_admin = world.owner.execute(
        "INSERT INTO users (tenant_id, email, role) VALUES (%s, 'eve@acme.test', 'admin')"
        " RETURNING id",
        (world.tenant_a,),
    ).fetchone()
    assert other_admin is not None
    demoted = admin.patch(f"/v1/users/{other_admin[0]}", json={"role": "user"})
    assert demoted.status_code == 200 and demoted.json()["role"] == "user"

    carol_browser = world.browser()
    assert (
        carol_browser.login("acme", "carol@acme.test", "carol's own passphrase").status_code == 200
    )
    assert carol_browser.get("/v1/auth/me").json()["groups"] == ["finance", "hr"]
    reset = admin.patch(f"/v1/users/{carol['id']}", json={"password": "reset by the admin!"})
    assert reset.status_code == 200
    assert carol_browser.get("/v1/auth/me").status_code == 401  # a reset ends sessions


def test_admin_cannot_lock_itself_out(world: World) -> None:
    admin = _admin(world)
    for change in ({"disabled": True}, {"role": "user"}):
        response = admin.patch(f"/v1/users/{world.admin_a}", json=change)
        assert response.status_code == 409
    assert admin.get("/v1/auth/me").status_code == 200


def test_users_need_admin(world: World) -> None:
    user = world.browser()
    user.login("acme", "user@acme.test")
    assert user.get("/v1/users").status_code == 403
    assert (
        user.post("/v1/users", json={"email": "z@acme.test", "password": "x" * 12}).status_code
        == 403
    )
    assert user.patch(f"/v1/users/{world.user_a}", json={"role": "admin"}).status_code == 403
    assert world.client.get("/v1/users").status_code == 401


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("post", "/v1/users", {"tenant_id": "B"}),
        ("post", "/v1/users", {"owner_id": "B"}),
        ("post", "/v1/users", {"acl": ["x"]}),
        ("post", "/v1/users", {"id": "B"}),
        ("patch", "/v1/users/{user}", {"tenant_id": "B"}),
        ("patch", "/v1/users/{user}", {"credential_version": 1}),
        ("patch", "/v1/users/{user}", {"email": "steal@globex.test"}),
        ("post", "/v1/tokens", {"tenant_id": "B"}),
        ("post", "/v1/tokens", {"user_id": "B"}),
        ("post", "/v1/tokens", {"owner_id": "B"}),
    ],
)
def test_spoofed_ownership_fields_are_rejected(
    world: World, method: str, url: str, body: dict[str, object]
) -> None:
    admin = _admin(world)
    base: dict[str, object] = (
        {"email": "new@acme.test", "password": "a fine long secret"}
        if url == "/v1/users"
        else {"name": "t", "permissions": ["read"]}
        if url == "/v1/tokens"
        else {}
    )
    spoofed = {k: (str(world.tenant_b) if v == "B" else v) for k, v in body.items()}
    before = world.owner.execute(
        "SELECT count(*) FROM users WHERE tenant_id = %s", (world.tenant_b,)
    ).fetchone()
    response = getattr(admin, method)(url.format(user=world.user_a), json={**base, **spoofed})
    assert response.status_code == 422, response.text
    field = next(iter(body))
    assert any(f["field"].endswith(field) for f in response.json()["error"]["details"]["fields"])
    assert (
        world.owner.execute(
            "SELECT count(*) FROM users WHERE tenant_id = %s", (world.tenant_b,)
        ).fetchone()
        == before
    )
    assert world.owner.execute(
        "SELECT count(*) FROM users WHERE email = 'new@acme.test'"
    ).fetchone() == (0,)


def test_personal_token_is_shown_once_and_stored_as_digest(world: World) -> None:
    user = world.browser()
    user.login("acme", "user@acme.test")
    made = user.post("/v1/tokens", json={"name": "laptop script", "permissions": ["read"]})
    assert made.status_code == 201
    secret = made.json()["token"]
    stored = world.owner.execute(
        "SELECT token_digest, row_to_json(t)::text FROM api_tokens t WHERE id = %s",
        (made.json()["id"],),
    ).fetchone()
    assert stored is not None and bytes(stored[0]) == bearer.digest(secret)
    assert secret.rsplit(".", 1)[1] not in stored[1]
    listed = user.get("/v1/tokens").json()
    assert [t["name"] for t in listed] == ["laptop script"] and "token" not in listed[0]

    fresh = world.browser().client
    me = fresh.get("/v1/auth/me", headers={"Authorization": f"Bearer {secret}"}).json()
    assert me["via"] == "token" and me["id"] == str(world.user_a)
    assert me["permissions"] == ["read"] and me["csrf_token"] is None
    # Bearer requests need no CSRF header: a browser never attaches a token by itself.
    second = fresh.post(
        "/v1/tokens",
        json={"name": "child", "permissions": ["read"]},
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert second.status_code == 201
    assert user.delete(f"/v1/tokens/{made.json()['id']}").status_code == 204
    assert (
        fresh.get("/v1/auth/me", headers={"Authorization": f"Bearer {secret}"}).status_code == 401
    )


def test_tokens_cannot_escalate(world: World) -> None:
    user = world.browser()
    user.login("acme", "user@acme.test")
    assert user.post("/v1/tokens", json={"name": "x", "permissions": ["admin"]}).status_code == 403
    assert user.post("/v1/tokens", json={"name": "x", "permissions": ["write"]}).status_code == 403
    service = user.post("/v1/tokens", json={"name": "x", "permissions": ["read"], "service": True})
    assert service.status_code == 403
    unknown = user.post("/v1/tokens", json={"name": "x", "permissions": ["root"]})
    assert unknown.status_code == 422
    # An admin's token narrowed to `read` is not an admin.
    admin = _admin(world)
    narrow = admin.post("/v1/tokens", json={"name": "ro", "permissions": ["read"]}).json()["token"]
    headers = {"Authorization": f"Bearer {narrow}"}
    client = world.browser().client
    assert client.get("/v1/auth/me", headers=headers).json()["roles"] == ["user"]
    assert client.get("/v1/users", headers=headers).status_code == 403
    # A user cannot revoke another user's token; the answer is a plain 404.
    theirs = admin.post("/v1/tokens", json={"name": "adm", "permissions": ["admin"]}).json()
    assert user.delete(f"/v1/tokens/{theirs['id']}").status_code == 404


def test_service_token_from_the_api_and_expiry(world: World) -> None:
    admin = _admin(world)
    expires = (world.clock.now() + timedelta(hours=1)).isoformat()
    made = admin.post(
        "/v1/tokens",
        json={"name": "mcp", "permissions": ["read", "ask"], "service": True, "groups": ["ops"],
              "expires_at": expires},
    )  # fmt: skip
    assert made.status_code == 201, made.text
    headers = {"Authorization": f"Bearer {made.json()['token']}"}
    client = world.browser().client
    me = client.get("/v1/auth/me", headers=headers).json()
    assert (
        me["kind"] == "service"
        and me["groups"] == ["ops"]
        and me["tenant_id"] == str(world.tenant_a)
    )
    # Service identities cannot log out or change passwords: those are session acts.
    assert client.post("/v1/auth/logout", headers=headers).status_code == 422
    password = client.post(
        "/v1/auth/password",
        json={"current_password": PASSWORD, "new_password": "another good one"},
        headers=headers,
    )
    assert password.status_code == 422
    past = admin.post(
        "/v1/tokens",
        json={
            "name": "old",
            "permissions": ["read"],
            "expires_at": datetime(2000, 1, 1, tzinfo=UTC).isoformat(),
        },
    )
    assert past.status_code == 422
    world.clock.advance(3601)
    assert client.get("/v1/auth/me", headers=headers).status_code == 401
