"""Password policy and hashing: pure functions, no database."""

from __future__ import annotations

import pytest

from grounded.auth import bearer, csrf
from grounded.auth.passwords import Hasher, check_policy, common_passwords
from grounded.auth.settings import AuthSettings
from grounded.errors import InvalidInput, Unauthenticated

pytestmark = pytest.mark.unit

FAST = AuthSettings(argon2_time_cost=1, argon2_memory_kib=1024, argon2_parallelism=1)


def test_the_common_list_is_real() -> None:
    words = common_passwords()
    assert len(words) > 19_000
    assert {"123456", "password", "qwerty", "iloveyou"} <= words


@pytest.mark.parametrize(
    ("password", "problem"),
    [
        ("short", "too_short"),
        ("1234567", "too_short"),
        ("x" * 129, "too_long"),
        ("password1", "common"),
        ("PASSWORD1", "common"),
        (" qwerty123 ", "common"),
        ("iloveyou", "common"),
    ],
)
def test_policy_refuses(password: str, problem: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_policy(password, AuthSettings())
    assert caught.value.details["problem"] == problem
    assert password.strip() not in caught.value.message  # never echoed


@pytest.mark.parametrize("password", ["8 chars!", "x" * 128, "密码足够长的句子吧", "correct horse"])
def test_policy_accepts(password: str) -> None:
    check_policy(password, AuthSettings())


def test_settings_keep_the_floors() -> None:
    with pytest.raises(ValueError, match="password_min_length"):
        AuthSettings(password_min_length=6)
    with pytest.raises(ValueError, match="password_max_length"):
        AuthSettings(password_max_length=32)


def test_argon2id_no_truncation_and_unicode() -> None:
    hasher = Hasher(FAST)
    long = "a" * 100
    stored = hasher.hash(long)
    assert stored.startswith("$argon2id$")
    assert hasher.verify(stored, long)
    assert not hasher.verify(stored, long[:72])  # bcrypt would have said yes
    assert not hasher.verify(stored, long + "b")
    # NFC and NFD spellings of the same text are the same password.
    assert hasher.verify(hasher.hash("caf\u00e9 au lait"), "cafe\u0301 au lait")


def test_missing_or_corrupt_hashes_are_false_not_errors() -> None:
    hasher = Hasher(FAST)
    assert not hasher.verify(None, "grounded-dummy-password-for-timing")
    assert not hasher.verify("not a hash", "whatever")
    assert not hasher.verify("$argon2id$v=19$m=1024,t=1,p=1$broken", "whatever")


def test_rehash_when_parameters_move() -> None:
    old = Hasher(FAST).hash("some passphrase")
    assert not Hasher(FAST).needs_rehash(old)
    assert Hasher(FAST.model_copy(update={"argon2_time_cost": 2})).needs_rehash(old)
    assert Hasher(FAST).needs_rehash("garbage")


def test_bearer_values_round_trip_and_refuse_junk() -> None:
    import uuid

    tenant = uuid.uuid4()
    value, digest = bearer.mint(bearer.SESSION_PREFIX, tenant)
    assert bearer.parse(value, bearer.SESSION_PREFIX) == (tenant, digest)
    with pytest.raises(Unauthenticated):
        bearer.parse(value, bearer.TOKEN_PREFIX)  # a session is not a token
    for junk in ("", value + "x", value[:-1], value.upper(), value + "\n", "gs1." + "a" * 200):
        with pytest.raises(Unauthenticated):
            bearer.parse(junk, bearer.SESSION_PREFIX)


def test_csrf_tokens_differ_per_session_and_origins_are_exact() -> None:
    assert csrf.token_for("a") != csrf.token_for("b")
    allowed = ["https://kb.example.org"]
    csrf.check_origin("https://kb.example.org", allowed, required=True)
    for origin in ("null", "https://kb.example.org.evil.io", "http://kb.example.org", None):
        with pytest.raises(Exception, match="Origin"):
            csrf.check_origin(origin, allowed, required=True)
    assert csrf.default_origins("127.0.0.1", 8000) == [
        "http://127.0.0.1:8000",
        "http://localhost:8000",
    ]


def test_every_auth_setting_is_documented() -> None:
    short = [n for n, f in AuthSettings.model_fields.items() if len(f.description or "") < 10]
    assert short == []
