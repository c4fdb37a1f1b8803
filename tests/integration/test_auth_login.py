"""Login, logout, /me, password change, registration, rate limits, bad input."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grounded.auth.passwords import Hasher
from grounded.auth.settings import AuthSettings
from grounded.db import Database
from tests.integration.auth_support import (
    FAST,
    ORIGIN,
    PASSWORD,
    Browser,
    World,
    auth_settings,
    serve,
    world,
)

pytestmark = pytest.mark.integration
__all__ = ["world"]


def test_login_me_logout(world: World) -> None:
    browser = Browser(world.client)
    response = browser.login("acme", "Admin@Acme.test ")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["user"]["email"] == "admin@acme.test" and body["user"]["role"] == "admin"
    assert "password" not in response.text and "hash" not in response.text
    me = browser.get("/v1/auth/me").json()
    assert me["tenant_id"] == str(world.tenant_a) and me["roles"] == ["admin"]
    assert me["via"] == "session" and me["csrf_token"] == browser.csrf
    assert browser.post("/v1/auth/logout").status_code == 204
    assert browser.get("/v1/auth/me").status_code == 401


def test_failures_look_alike_and_cost_one_verification(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wrong password, unknown user, unknown tenant, disabled user, malformed slug."""
    world.owner.execute("UPDATE users SET disabled = true WHERE id = %s", (world.user_a,))
    calls: list[int] = []
    real = Hasher.verify

    def counting(self: Hasher, stored: str | None, password: str) -> bool:
        calls.append(1)
        return real(self, stored, password)

    monkeypatch.setattr(Hasher, "verify", counting)
    cases = {
        "wrong password": ("acme", "admin@acme.test", "not the password at all"),
        "unknown user": ("acme", "nobody@acme.test", PASSWORD),
        "unknown tenant": ("initech", "admin@acme.test", PASSWORD),
        "disabled user": ("acme", "user@acme.test", PASSWORD),
        "malformed tenant": ("A B", "admin@acme.test", PASSWORD),
        "other tenant's user": ("acme", "admin@globex.test", PASSWORD),
    }
    answers = {}
    timings: dict[str, float] = {}
    for name, (tenant, email, password) in cases.items():
        calls.clear()
        started = time.perf_counter()
        response = Browser(world.client).login(tenant, email, password)
        timings[name] = time.perf_counter() - started
        answers[name] = (response.status_code, response.json(), "set-cookie" in response.headers)
        assert len(calls) == 1, f"{name}: {len(calls)} Argon2 verifications"
    assert len(set(map(repr, answers.values()))) == 1, answers
    status, body, cookie = next(iter(answers.values()))
    assert status == 401 and not cookie
    assert body["error"]["code"] == "unauthenticated"


def test_rehash_on_login_when_parameters_change(world: World) -> None:
    before = world.owner.execute(
        "SELECT password_hash FROM users WHERE id = %s", (world.user_a,)
    ).fetchone()
    assert before is not None and "t=1," in before[0]
    stronger = world.settings.model_copy(
        update={"auth": AuthSettings(**{**FAST, "argon2_time_cost": 2})}
    )
    world.client.app.state.settings = stronger  # type: ignore[attr-defined]
    assert Browser(world.client).login("acme", "user@acme.test").status_code == 200
    after = world.owner.execute(
        "SELECT password_hash FROM users WHERE id = %s", (world.user_a,)
    ).fetchone()
    assert after is not None and "t=2," in after[0] and after[0] != before[0]
    assert Hasher(stronger.auth).verify(after[0], PASSWORD)


def test_login_rate_limit_is_shared_across_processes(
    world: World, pg_data_dir: Any, db_urls: Any
) -> None:
    """Two app instances with their own pools (two workers) share one budget."""
    settings = auth_settings(pg_data_dir, db_urls, login_attempts_per_account=3)
    world.client.app.state.settings = settings  # type: ignore[attr-defined]
    with Database.open(settings) as other_db, serve(settings, other_db, world.clock) as other:
        statuses = [
            Browser(client).login("acme", "user@acme.test", "wrong password here").status_code
            for client in (world.client, other, world.client)
        ]
        assert statuses == [401, 401, 401]
        # The budget is spent: even the right password is refused, on either worker.
        refused = Browser(other).login("acme", "user@acme.test")
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "rate_limited"
        assert Browser(world.client).login("acme", "user@acme.test").status_code == 429
        # Another account is not affected; the window passes with the clock.
        assert Browser(other).login("acme", "admin@acme.test").status_code == 200
        world.clock.advance(settings.auth.login_window_s + 1)
        assert Browser(other).login("acme", "user@acme.test").status_code == 200


def test_password_change_rotates_and_ends_everything(world: World) -> None:
    phone, laptop = world.browser(), world.browser()
    assert phone.login("acme", "user@acme.test").status_code == 200
    assert laptop.login("acme", "user@acme.test").status_code == 200
    token = laptop.post("/v1/tokens", json={"name": "script", "permissions": ["read"]})
    assert token.status_code == 201
    bearer = {"Authorization": f"Bearer {token.json()['token']}"}
    assert world.client.get("/v1/auth/me", headers=bearer).status_code == 200

    wrong = phone.post(
        "/v1/auth/password",
        json={"current_password": "not it at all", "new_password": "a brand new secret"},
    )
    assert wrong.status_code == 422
    weak = phone.post(
        "/v1/auth/password", json={"current_password": PASSWORD, "new_password": "password1"}
    )
    assert weak.status_code == 422 and weak.json()["error"]["details"]["problem"] == "common"
    old_cookie = phone.client.cookies.get("grounded_session")
    changed = phone.post(
        "/v1/auth/password",
        json={"current_password": PASSWORD, "new_password": "a brand new secret"},
    )
    assert changed.status_code == 200, changed.text
    assert phone.client.cookies.get("grounded_session") != old_cookie
    phone.csrf = changed.json()["csrf_token"]
    assert phone.get("/v1/auth/me").status_code == 200  # the caller's fresh session
    assert laptop.get("/v1/auth/me").status_code == 401  # every other session ended
    assert world.client.get("/v1/auth/me", headers=bearer).status_code == 401  # and tokens
    assert world.browser().login("acme", "user@acme.test").status_code == 401
    assert world.browser().login("acme", "user@acme.test", "a brand new secret").status_code == 200


@pytest.mark.parametrize(
    "cookie",
    [
        "",
        "x",
        "gs1.",
        "gs1.zz.zz",
        "gs1." + "0" * 32 + "." + "A" * 43,  # well-formed, unknown
        "gs1." + "0" * 32 + "." + "A" * 42 + "!",
        "gt1." + "0" * 32 + "." + "A" * 43,  # a token shape in the cookie
        "gs1." + "f" * 32 + "." + "A" * 43 + "A" * 5000,
        "\u00e9\u00e9\u00e9",
        "gs1.%00%00",
    ],
)
def test_malformed_cookies_are_401(world: World, cookie: str) -> None:
    raw = b"grounded_session=" + cookie.encode("utf-8")
    for header in (raw, raw + b'; other="unterminated', b'grounded_session="' + raw):
        response = world.client.get("/v1/auth/me", headers={"Cookie": header})  # type: ignore[dict-item]
        assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "unauthenticated"


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "Token gt1." + "0" * 32 + "." + "A" * 43,
        "Bearer gt1." + "0" * 32 + "." + "A" * 43,
        "Bearer gs1." + "0" * 32 + "." + "A" * 43,
        "Bearer " + "A" * 10000,
        "Bearer gt1.00000000-0000-0000-0000-000000000000.abc",
        "bearer \x7f",
    ],
)
def test_malformed_tokens_are_401(world: World, header: str) -> None:
    response = world.client.get("/v1/auth/me", headers={"Authorization": header})
    assert response.status_code == 401, response.text
    response = world.client.post(
        "/v1/tokens", json={"name": "x", "permissions": ["read"]}, headers={"Authorization": header}
    )
    assert response.status_code == 401, response.text


def test_cookie_and_bearer_together_are_refused(world: World) -> None:
    browser = world.browser()
    assert browser.login("acme", "admin@acme.test").status_code == 200
    token = browser.post("/v1/tokens", json={"name": "t", "permissions": ["read"]}).json()
    both = browser.get("/v1/auth/me", headers={"Authorization": f"Bearer {token['token']}"})
    assert both.status_code == 401


def test_login_body_limits_and_spoofed_fields(world: World) -> None:
    client = world.client
    long = client.post(
        "/v1/auth/login",
        json={"tenant": "acme", "email": "user@acme.test", "password": "x" * 5000},
    )
    assert long.status_code == 422
    for extra in ({"role": "admin"}, {"tenant_id": str(world.tenant_b)}):
        spoofed = client.post(
            "/v1/auth/login",
            json={"tenant": "acme", "email": "user@acme.test", "password": PASSWORD, **extra},
        )
        assert spoofed.status_code == 422
        assert "set-cookie" not in spoofed.headers


def test_registration_is_off_by_default(world: World) -> None:
    response = world.client.post(
        "/v1/auth/register",
        json={"tenant": "acme", "email": "new@acme.test", "password": "a fine long secret"},
    )
    assert response.status_code == 404


def test_registration_creates_users_only_and_reveals_nothing(world: World) -> None:
    on = world.settings.model_copy(
        update={"auth": AuthSettings(**{**FAST, "registration_enabled": True})}
    )
    world.client.app.state.settings = on  # type: ignore[attr-defined]
    body = {"tenant": "acme", "email": "new@acme.test", "password": "a fine long secret"}
    first = world.client.post("/v1/auth/register", json=body, headers={"Origin": ORIGIN})
    assert first.status_code == 202
    again = world.client.post("/v1/auth/register", json=body)
    nowhere = world.client.post("/v1/auth/register", json={**body, "tenant": "initech"})
    assert first.json() == again.json() == nowhere.json()
    role = world.owner.execute("SELECT role FROM users WHERE email = 'new@acme.test'").fetchone()
    assert role == ("user",)
    escalate = world.client.post(
        "/v1/auth/register", json={**body, "email": "evil@acme.test", "role": "admin"}
    )
    assert escalate.status_code == 422
    foreign = world.client.post(
        "/v1/auth/register", json=body, headers={"Origin": "https://evil.example"}
    )
    assert foreign.status_code == 403
    weak = world.client.post("/v1/auth/register", json={**body, "password": "12345678"})
    assert weak.status_code == 422
    assert Browser(world.client).login("acme", "new@acme.test", body["password"]).status_code == 200


_PRINTABLE = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=300)
_SHAPED = st.builds(
    lambda prefix, tenant, secret: f"{prefix}.{tenant}.{secret}",
    st.sampled_from(["gs1", "gt1", "gs2", ""]),
    st.text("0123456789abcdef-", max_size=40),
    st.text("ABCxyz019_-=.", max_size=60),
)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(value=st.one_of(_PRINTABLE, _SHAPED), where=st.sampled_from(["cookie", "bearer", "raw"]))
def test_fuzzed_credentials_are_401_never_500(world: World, value: str, where: str) -> None:
    headers = {
        "cookie": {"Cookie": f"grounded_session={value}"},
        "bearer": {"Authorization": f"Bearer {value}"},
        "raw": {"Authorization": value},
    }[where]
    response = world.client.get("/v1/auth/me", headers=headers)
    assert response.status_code == 401, (value, response.text)
