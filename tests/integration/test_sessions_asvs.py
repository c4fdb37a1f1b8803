"""ASVS-style session tests (v4 chapter 3 and 4.2.2): flags, rotation, replay,
timeouts with an injected clock, disabling, and CSRF forgeries."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from grounded.auth import bearer
from tests.integration.auth_support import ORIGIN, PASSWORD, Browser, World, world

pytestmark = pytest.mark.integration
__all__ = ["world"]


def _set_cookie(response: Any) -> str:
    header = response.headers.get("set-cookie")
    assert header is not None
    return str(header)


def test_cookie_flags_over_http(world: World) -> None:
    response = Browser(world.client).login("acme", "user@acme.test")
    cookie = _set_cookie(response).lower()
    assert cookie.startswith("grounded_session=gs1.")
    assert "httponly" in cookie and "samesite=lax" in cookie and "path=/" in cookie
    assert "domain=" not in cookie
    assert "secure" not in cookie  # plain HTTP in development: a Secure cookie would be lost
    # Nothing about roles or the session is sent for browser storage.
    assert set(response.json()) == {"user", "csrf_token", "expires_at"}


def test_cookie_flags_over_https(world: World) -> None:
    client = TestClient(world.client.app, base_url="https://testserver")
    response = client.post(
        "/v1/auth/login",
        json={"tenant": "acme", "email": "user@acme.test", "password": PASSWORD},
        headers={"Origin": "https://testserver"},
    )
    cookie = _set_cookie(response)
    assert cookie.startswith("__Host-grounded_session=gs1.")
    lowered = cookie.lower()
    assert "; secure" in lowered and "httponly" in lowered and "path=/" in lowered
    assert "domain=" not in lowered
    me = client.get("/v1/auth/me")
    assert me.status_code == 200 and me.json()["via"] == "session"


def test_only_the_digest_is_stored(world: World) -> None:
    browser = Browser(world.client)
    browser.login("acme", "user@acme.test")
    value = browser.client.cookies["grounded_session"]
    secret = value.rsplit(".", 1)[1]
    assert len(secret) == 43  # 256 random bits
    rows = world.owner.execute("SELECT token_digest FROM sessions").fetchall()
    assert [bytes(r[0]) for r in rows] == [bearer.digest(value)]
    dump = world.owner.execute("SELECT row_to_json(s)::text FROM sessions s").fetchone()
    assert dump is not None and secret not in dump[0]


def test_login_rotates_and_ends_the_presented_session(world: World) -> None:
    browser = Browser(world.client)
    browser.login("acme", "user@acme.test")
    first = browser.client.cookies["grounded_session"]
    browser.login("acme", "user@acme.test")
    second = browser.client.cookies["grounded_session"]
    assert first != second
    replay = TestClient(world.client.app, base_url=ORIGIN, cookies={"grounded_session": first})
    assert replay.get("/v1/auth/me").status_code == 401
    assert browser.get("/v1/auth/me").status_code == 200


def test_replay_after_logout_fails_and_logout_ends_every_session(world: World) -> None:
    phone, laptop = world.browser(), world.browser()
    phone.login("acme", "user@acme.test")
    laptop.login("acme", "user@acme.test")
    stolen = phone.client.cookies["grounded_session"]
    assert phone.post("/v1/auth/logout").status_code == 204
    replay = TestClient(world.client.app, base_url=ORIGIN, cookies={"grounded_session": stolen})
    assert replay.get("/v1/auth/me").status_code == 401
    assert laptop.get("/v1/auth/me").status_code == 401
    # A session of another user is untouched.
    other = world.browser()
    assert other.login("acme", "admin@acme.test").status_code == 200
    assert other.get("/v1/auth/me").status_code == 200


def test_idle_timeout(world: World) -> None:
    idle = world.settings.auth.session_idle_timeout_s
    browser = Browser(world.client)
    browser.login("acme", "user@acme.test")
    world.clock.advance(idle - 5)
    assert browser.get("/v1/auth/me").status_code == 200  # use resets the idle timer
    world.clock.advance(idle - 5)
    assert browser.get("/v1/auth/me").status_code == 200
    world.clock.advance(idle + 1)
    assert browser.get("/v1/auth/me").status_code == 401
    world.clock.advance(-idle - 1)  # even if time went back, the session stays ended
    assert browser.get("/v1/auth/me").status_code == 401


def test_absolute_timeout(world: World) -> None:
    auth = world.settings.auth
    browser = Browser(world.client)
    browser.login("acme", "user@acme.test")
    step = auth.session_idle_timeout_s - 10
    elapsed = 0
    while elapsed + step < auth.session_absolute_timeout_s:
        world.clock.advance(step)
        elapsed += step
        assert browser.get("/v1/auth/me").status_code == 200
    world.clock.advance(auth.session_absolute_timeout_s - elapsed)
    assert browser.get("/v1/auth/me").status_code == 401


def test_disabled_user_loses_sessions_and_tokens(world: World) -> None:
    user = world.browser()
    user.login("acme", "user@acme.test")
    token = user.post("/v1/tokens", json={"name": "cron", "permissions": ["read"]}).json()
    bearer_header = {"Authorization": f"Bearer {token['token']}"}
    assert world.client.get("/v1/auth/me", headers=bearer_header).status_code == 200

    admin = world.browser()
    admin.login("acme", "admin@acme.test")
    disabled = admin.patch(f"/v1/users/{world.user_a}", json={"disabled": True})
    assert disabled.status_code == 200 and disabled.json()["disabled"] is True
    assert user.get("/v1/auth/me").status_code == 401
    assert world.client.get("/v1/auth/me", headers=bearer_header).status_code == 401
    assert world.browser().login("acme", "user@acme.test").status_code == 401
    # Re-enabling does not resurrect the old credentials.
    admin.patch(f"/v1/users/{world.user_a}", json={"disabled": False})
    assert user.get("/v1/auth/me").status_code == 401
    assert world.client.get("/v1/auth/me", headers=bearer_header).status_code == 401


def test_disabled_flag_set_behind_the_apis_back_still_locks_out(world: World) -> None:
    user = world.browser()
    user.login("acme", "user@acme.test")
    token = user.post("/v1/tokens", json={"name": "cron", "permissions": ["read"]}).json()
    world.owner.execute("UPDATE users SET disabled = true WHERE id = %s", (world.user_a,))
    assert user.get("/v1/auth/me").status_code == 401
    bearer_header = {"Authorization": f"Bearer {token['token']}"}
    assert world.client.get("/v1/auth/me", headers=bearer_header).status_code == 401


FORGERIES: dict[str, dict[str, Any]] = {
    "no csrf header": {"headers": {"Origin": ORIGIN}, "json": {}},
    "wrong csrf header": {"headers": {"Origin": ORIGIN, "X-CSRF-Token": "x" * 43}, "json": {}},
    "no origin": {"headers": {"X-CSRF-Token": "CSRF"}, "json": {}},
    "foreign origin": {"headers": {"Origin": "https://evil.example", "X-CSRF-Token": "CSRF"}},
    "null origin": {"headers": {"Origin": "null", "X-CSRF-Token": "CSRF"}},
    "lookalike origin": {"headers": {"Origin": ORIGIN + ".evil.example", "X-CSRF-Token": "CSRF"}},
    "form body": {
        "headers": {"Origin": "https://evil.example"},
        "data": {"name": "x", "permissions": "admin"},
    },
    "same-site form body": {"headers": {"Origin": ORIGIN}, "data": {"name": "x"}},
    "text/plain body": {
        "headers": {"Origin": "https://evil.example", "Content-Type": "text/plain"},
        "content": '{"name": "x", "permissions": ["read"]}',
    },
    "same-origin text/plain without header": {
        "headers": {"Origin": ORIGIN, "Content-Type": "text/plain"},
        "content": '{"name": "x", "permissions": ["read"]}',
    },
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_csrf_forgeries_are_refused_and_change_nothing(world: World, name: str) -> None:
    browser = world.browser()
    browser.login("acme", "admin@acme.test")
    forged = {k: v for k, v in FORGERIES[name].items()}
    forged["headers"] = {
        k: (browser.csrf or "") if v == "CSRF" else v for k, v in forged["headers"].items()
    }
    forged.setdefault("json", {"name": "x", "permissions": ["admin"]})
    if "data" in forged or "content" in forged:
        forged.pop("json")
    before = world.owner.execute("SELECT count(*) FROM api_tokens").fetchone()
    seen = world.owner.execute("SELECT last_seen_at FROM sessions").fetchall()
    attempts = [
        browser.client.post("/v1/tokens", **forged),
        browser.client.post("/v1/auth/logout", **forged),
        browser.client.patch(f"/v1/users/{world.user_a}", **forged),
        browser.client.delete(f"/v1/tokens/{world.user_a}", headers=forged["headers"]),
    ]
    for response in attempts:
        assert response.status_code == 403, (name, response.status_code, response.text)
        assert response.json()["error"]["code"] == "forbidden"
    assert world.owner.execute("SELECT count(*) FROM api_tokens").fetchone() == before
    assert world.owner.execute("SELECT last_seen_at FROM sessions").fetchall() == seen
    assert browser.get("/v1/auth/me").status_code == 200  # logout was not forged either


def test_csrf_token_is_bound_to_its_session(world: World) -> None:
    mine, theirs = world.browser(), world.browser()
    mine.login("acme", "admin@acme.test")
    theirs.login("acme", "admin@acme.test")
    assert mine.csrf != theirs.csrf
    crossed = mine.client.post(
        "/v1/tokens",
        json={"name": "x", "permissions": ["read"]},
        headers={"Origin": ORIGIN, "X-CSRF-Token": theirs.csrf or ""},
    )
    assert crossed.status_code == 403
    ok = mine.post("/v1/tokens", json={"name": "x", "permissions": ["read"]})
    assert ok.status_code == 201


def test_login_csrf_from_a_foreign_or_null_origin_is_refused(world: World) -> None:
    body = {"tenant": "acme", "email": "user@acme.test", "password": PASSWORD}
    for origin in ("https://evil.example", "null"):
        response = world.client.post("/v1/auth/login", json=body, headers={"Origin": origin})
        assert response.status_code == 403 and "set-cookie" not in response.headers
    as_form = world.client.post("/v1/auth/login", data=body, headers={"Origin": ORIGIN})
    assert as_form.status_code == 422 and "set-cookie" not in as_form.headers
    plain = world.client.post(
        "/v1/auth/login",
        content=json.dumps({"tenant": "acme", "email": "user@acme.test", "password": PASSWORD}),
        headers={"Content-Type": "text/plain"},
    )
    assert plain.status_code == 422 and "set-cookie" not in plain.headers


def test_get_routes_change_no_state(world: World) -> None:
    """GET never writes anything but the session's own last-seen time."""
    browser = world.browser()
    browser.login("acme", "admin@acme.test")
    tables = ("users", "api_tokens", "tenants")
    snapshot = {
        t: world.owner.execute(f"SELECT row_to_json(x)::text FROM {t} x ORDER BY 1").fetchall()
        for t in tables
    }
    schema = world.client.get("/openapi.json").json()
    for path, item in schema["paths"].items():
        if "get" in item and "{" not in path:
            browser.get(path)
    for t in tables:
        rows = world.owner.execute(f"SELECT row_to_json(x)::text FROM {t} x ORDER BY 1").fetchall()
        assert rows == snapshot[t], t


def test_a_deleted_tenant_loses_every_credential(world: World) -> None:
    user = world.browser()
    user.login("acme", "user@acme.test")
    token = user.post("/v1/tokens", json={"name": "cron", "permissions": ["read"]}).json()
    world.owner.execute("UPDATE tenants SET deleted_at = now() WHERE id = %s", (world.tenant_a,))
    assert user.get("/v1/auth/me").status_code == 401
    bearer_header = {"Authorization": f"Bearer {token['token']}"}
    assert world.browser().client.get("/v1/auth/me", headers=bearer_header).status_code == 401
    assert world.browser().login("acme", "user@acme.test").status_code == 401
