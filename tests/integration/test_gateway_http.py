"""The gateway against a real OpenAI-compatible HTTP server on loopback.

Policies from issue 5, each proven on the wire: retries on 429/500, timeouts,
malformed JSON, fallback, budget refusal, redaction (the planted secrets never
reach the server), cache hits, ledger rows, explicit request options.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import psycopg
import pytest

from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.errors import BudgetExceeded, EmbeddingMismatch, ModelError
from grounded.gateway import (
    Caps,
    Gateway,
    GatewaySettings,
    GatewayStore,
    GenerateRequest,
    Message,
    similarities,
)
from grounded.gateway.registry import build_providers
from tests.cli_logging import restored_logging
from tests.conftest import make_tenant
from tests.openai_loopback import LoopbackServer, Scripted, chat_answer, running

pytestmark = pytest.mark.integration

CHAT = "/v1/chat/completions"
MODELS = {
    "generate": "loop-llm",
    "verify": "loop-llm",
    "enrich": "loop-llm",
    "sql": "loop-llm",
    "describe": "loop-vlm",
    "embed": "loop-emb",
    "rerank": "loop-rerank",
}


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


def principal_for(tenant_id: uuid.UUID) -> Principal:
    return Principal(kind="user", id=uuid.uuid4(), tenant_id=tenant_id)


@pytest.fixture
def tenant(owner: psycopg.Connection[tuple[object, ...]]) -> Principal:
    return principal_for(make_tenant(owner, f"gw-{uuid.uuid4().hex[:8]}"))


MakeGateway = Callable[..., Gateway]


@pytest.fixture
def make_gateway(database: Database, server: LoopbackServer) -> Iterator[MakeGateway]:
    built: list[Gateway] = []

    def make(
        routes: dict[str, list[str]] | None = None,
        remote: dict[str, Any] | None = None,
        **extra: Any,
    ) -> Gateway:
        provider = {
            "base_url": server.base_url,
            "api_key": "sk-loopback-credential-0000",
            "models": MODELS,
            "timeout_s": 2.0,
            "price_in_per_1k": 0.5,
            "price_out_per_1k": 1.5,
        } | (remote or {})
        config: dict[str, Any] = {
            "providers": {"remote": provider} | extra.pop("providers", {}),
            "routes": routes or {"generate": ["remote"]},
            "retry": {"attempts": 3, "backoff_s": 0.001, "max_backoff_s": 0.01},
        } | extra
        settings = GatewaySettings.model_validate(config)
        gateway = Gateway(settings, GatewayStore(database), build_providers(settings))
        built.append(gateway)
        return gateway

    yield make
    for gateway in built:
        gateway.close()


def ask(text: str = "How long is the warranty?") -> GenerateRequest:
    return GenerateRequest(
        messages=(Message("instruction", "Answer from the evidence."), Message("user", text)),
        evidence=("The warranty lasts two years.",),
        max_output_tokens=50,
    )


def ledger(database: Database, principal: Principal) -> list[dict[str, Any]]:
    return GatewayStore(database).ledger(principal.tenant_id)


def test_chat_success_carries_receipt_and_writes_ledger(
    make_gateway: MakeGateway, server: LoopbackServer, database: Database, tenant: Principal
) -> None:
    result = make_gateway().generate(tenant, ask())
    assert result.value.text == "loopback answer"
    receipt = result.receipt
    assert (receipt.provider, receipt.model, receipt.cache_hit) == ("remote", "loop-llm", False)
    assert (receipt.tokens_in, receipt.tokens_out) == (12, 5)
    assert receipt.cost_usd == pytest.approx(12 / 1000 * 0.5 + 5 / 1000 * 1.5)
    [call] = server.calls(CHAT)
    assert call.headers["authorization"] == "Bearer sk-loopback-credential-0000"
    assert call.body["model"] == "loop-llm"
    assert call.body["max_tokens"] == 50 and "max_completion_tokens" not in call.body
    assert [m["role"] for m in call.body["messages"]] == ["system", "user"]
    assert call.body["stream"] is False
    [row] = ledger(database, tenant)
    assert row["task"] == "generate" and row["provider"] == "remote" and row["outcome"] == "ok"
    assert (row["tokens_in"], row["tokens_out"], row["cache_hit"]) == (12, 5, False)
    assert float(row["cost_usd"]) == pytest.approx(receipt.cost_usd)


def test_parameter_differences_are_explicit_options(
    make_gateway: MakeGateway, server: LoopbackServer, tenant: Principal
) -> None:
    gateway = make_gateway(
        remote={"max_tokens_param": "max_completion_tokens", "instruction_role": "developer"}
    )
    gateway.generate(tenant, ask())
    [call] = server.calls(CHAT)
    assert call.body["max_completion_tokens"] == 50 and "max_tokens" not in call.body
    assert call.body["messages"][0]["role"] == "developer"


def test_429_and_500_are_retried_with_backoff(
    make_gateway: MakeGateway, server: LoopbackServer, database: Database, tenant: Principal
) -> None:
    server.script(
        CHAT,
        Scripted(429, {"error": "slow down"}, headers=(("Retry-After", "0"),)),
        Scripted(500, {"error": "boom"}),
    )
    result = make_gateway().generate(tenant, ask())
    assert result.value.text == "loopback answer"
    assert len(server.calls(CHAT)) == 3
    [row] = ledger(database, tenant)
    assert row["tries"] == 3 and row["outcome"] == "ok"


def test_timeouts_exhaust_retries_then_fall_back(
    make_gateway: MakeGateway, server: LoopbackServer, database: Database, tenant: Principal
) -> None:
    server.script(CHAT, Scripted(delay_s=1.0), Scripted(delay_s=1.0))
    gateway = make_gateway(
        routes={"generate": ["remote", "local"]},
        remote={"timeout_s": 0.2},
        retry={"attempts": 2, "backoff_s": 0.001},
    )
    result = gateway.generate(tenant, ask())
    assert result.receipt.provider == "local" and result.receipt.fallback
    assert result.receipt.attempts[0] == "remote: model_unavailable"
    assert result.value.extractive and "[1]" in result.value.text
    assert len(server.calls(CHAT)) == 2
    outcomes = {(r["provider"], r["outcome"], r["error_code"]) for r in ledger(database, tenant)}
    assert ("remote", "error", "model_unavailable") in outcomes
    assert ("local", "ok", None) in outcomes


@pytest.mark.parametrize(
    "body",
    [
        "{not json at all",
        {"choices": []},
        {"choices": [{"message": {"content": None}}]},
        {"unexpected": True},
    ],
)
def test_garbage_is_a_model_error_naming_the_provider(
    make_gateway: MakeGateway, server: LoopbackServer, tenant: Principal, body: Any
) -> None:
    server.script(CHAT, Scripted(200, body))
    with pytest.raises(ModelError) as caught:
        make_gateway().generate(tenant, ask())
    assert caught.value.provider == "remote" and "remote" in caught.value.message
    assert caught.value.code == "model_error"
    assert len(server.calls(CHAT)) == 1  # garbage is not retried: it would be garbage again


def test_fallback_from_an_unreachable_provider_to_the_next(
    make_gateway: MakeGateway, server: LoopbackServer, tenant: Principal
) -> None:
    dead = {"base_url": "http://127.0.0.1:9/v1", "models": MODELS, "timeout_s": 1.0}
    gateway = make_gateway(routes={"generate": ["dead", "remote"]}, providers={"dead": dead})
    result = gateway.generate(tenant, ask())
    assert result.receipt.provider == "remote"
    assert result.receipt.attempts == ("dead: model_unavailable", "remote: ok")


def test_budget_refusal_is_clear_and_nothing_is_sent(
    make_gateway: MakeGateway, server: LoopbackServer, database: Database, tenant: Principal
) -> None:
    GatewayStore(database).set_caps(tenant.tenant_id, Caps("day", 200, None))
    gateway = make_gateway()
    gateway.generate(tenant, ask())  # small: fits
    with pytest.raises(BudgetExceeded) as caught:
        gateway.generate(tenant, ask("tell me everything " * 200))
    assert "budget" in caught.value.message and caught.value.code == "budget_exceeded"
    assert caught.value.http_status == 429
    assert len(server.calls(CHAT)) == 1
    assert GatewayStore(database).usage(tenant.tenant_id, "day")[0] == 17  # actual, not estimate
    assert any(r["outcome"] == "refused" for r in ledger(database, tenant))


def test_budget_reservations_are_atomic_under_concurrency(
    database: Database, tenant: Principal
) -> None:
    store = GatewayStore(database)
    caps = Caps("month", 100, None)
    granted: list[bool] = []
    barrier = threading.Barrier(8)

    def reserve() -> None:
        barrier.wait()
        granted.append(store.reserve(tenant.tenant_id, caps, 30, 0.0))

    threads = [threading.Thread(target=reserve) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert granted.count(True) == 3
    assert store.usage(tenant.tenant_id, "month")[0] == 90


PLANTED = {
    "email": "alice.secret@example.com",
    "api_key": "sk-proj-Zx81kfjQ0aP3mN7sT5vW",
    "card": "4111 1111 1111 1111",
    "phone": "+1 415 555 0199",
    "id_number": "11010519491231002X",
}


def test_redaction_keeps_planted_secrets_off_the_wire(
    make_gateway: MakeGateway, server: LoopbackServer, database: Database, tenant: Principal
) -> None:
    text = (
        f"Mail {PLANTED['email']}, key {PLANTED['api_key']}, card {PLANTED['card']}, "
        f"call {PLANTED['phone']}, ID {PLANTED['id_number']}. Order 2024 costs 1,250 EUR."
    )
    make_gateway().generate(tenant, ask(text))
    wire = server.everything_received()
    for secret in PLANTED.values():
        assert secret not in wire
    for kind in PLANTED:
        assert f"[REDACTED:{kind.upper()}]" in wire
    assert "Order 2024 costs 1,250 EUR" in wire  # ordinary numbers survive
    assert ledger(database, tenant)[0]["redactions"] == 5


def test_redaction_can_be_switched_off(
    make_gateway: MakeGateway, server: LoopbackServer, tenant: Principal
) -> None:
    make_gateway(redaction={"enabled": False}).generate(tenant, ask(PLANTED["email"]))
    assert PLANTED["email"] in server.everything_received()


def test_cache_hit_is_per_tenant(
    make_gateway: MakeGateway,
    server: LoopbackServer,
    database: Database,
    tenant: Principal,
    owner: psycopg.Connection[tuple[object, ...]],
) -> None:
    gateway = make_gateway()
    first = gateway.generate(tenant, ask())
    second = gateway.generate(tenant, ask())
    assert not first.receipt.cache_hit and second.receipt.cache_hit
    assert second.value == first.value and second.receipt.provider == "remote"
    assert len(server.calls(CHAT)) == 1
    assert [r["cache_hit"] for r in ledger(database, tenant)] == [True, False]
    other = principal_for(make_tenant(owner, "gw-other"))
    assert not gateway.generate(other, ask()).receipt.cache_hit
    assert len(server.calls(CHAT)) == 2


def test_semantic_cache_for_generate_only_within_identical_context(
    make_gateway: MakeGateway, server: LoopbackServer, tenant: Principal
) -> None:
    gateway = make_gateway(cache={"semantic_generate": True, "semantic_threshold": 0.95})
    gateway.generate(tenant, ask("How long is the warranty?"))
    paraphrase = gateway.generate(tenant, ask("How long is the warranty ?"))
    assert paraphrase.receipt.cache_hit
    changed = GenerateRequest(
        messages=(
            Message("instruction", "Answer briefly."),
            Message("user", "How long is the warranty?"),
        ),
        evidence=("The warranty lasts two years.",),
        max_output_tokens=50,
    )
    assert not gateway.generate(tenant, changed).receipt.cache_hit
    unrelated = gateway.generate(tenant, ask("Where is the head office?"))
    assert not unrelated.receipt.cache_hit
    assert len(server.calls(CHAT)) == 3


def test_embeddings_batched_tagged_cached_and_never_mixed(
    make_gateway: MakeGateway, server: LoopbackServer, tenant: Principal
) -> None:
    gateway = make_gateway(
        routes={"embed": ["remote"]},
        remote={"max_batch": 2, "embed_prefixes": {"passage": "passage: "}},
    )
    texts = ["alpha one", "beta two two", "gamma", "delta four", "epsilon five"]
    vectors = gateway.embed(tenant, texts, "passage")
    assert len(server.calls("/embeddings")) == 3
    assert (vectors.model, vectors.dim, vectors.vectors.shape) == ("remote/loop-emb", 8, (5, 8))
    assert np.allclose(np.linalg.norm(vectors.vectors, axis=1), 1.0)
    again = gateway.embed(tenant, [*texts, "zeta"], "passage")
    assert len(server.calls("/embeddings")) == 4  # only "zeta" was new
    assert server.calls("/embeddings")[-1].body["input"] == ["passage: zeta"]
    assert np.allclose(again.vectors[:5], vectors.vectors, atol=1e-6)
    local = make_gateway().embed(tenant, ["alpha one"], "query")
    with pytest.raises(EmbeddingMismatch):
        similarities(local, vectors)


def test_require_model_refuses_a_fallback_with_another_model(
    make_gateway: MakeGateway, server: LoopbackServer, tenant: Principal
) -> None:
    server.script("/v1/embeddings", *[Scripted(503, {"error": "down"})] * 3)
    gateway = make_gateway(routes={"embed": ["remote", "local"]})
    with pytest.raises(EmbeddingMismatch):
        gateway.embed(tenant, ["text"], "passage", require_model="remote/loop-emb")


@pytest.mark.parametrize("style", ["cohere", "tei"])
def test_rerank_endpoint_shapes(
    make_gateway: MakeGateway, server: LoopbackServer, tenant: Principal, style: str
) -> None:
    gateway = make_gateway(routes={"rerank": ["remote"]}, remote={"rerank_style": style})
    passages = ["cats purr softly", "the warranty lasts two years", "warranty"]
    result = gateway.rerank(tenant, "warranty lasts", passages)
    assert result.value.order()[0] == 1
    assert (result.receipt.provider, result.receipt.model) == ("remote", "loop-rerank")
    [call] = server.calls("/rerank")
    key = "documents" if style == "cohere" else "texts"
    assert call.body[key] == passages


def test_rerank_garbage_is_a_model_error(
    make_gateway: MakeGateway, server: LoopbackServer, tenant: Principal
) -> None:
    server.script("/v1/rerank", Scripted(200, {"results": [{"index": 7, "relevance_score": 1}]}))
    with pytest.raises(ModelError, match="remote"):
        make_gateway(routes={"rerank": ["remote"]}).rerank(tenant, "q", ["a", "b"])


def test_verify_sql_enrich_describe_over_chat(
    make_gateway: MakeGateway, server: LoopbackServer, tenant: Principal
) -> None:
    server.script(
        CHAT,
        Scripted(body=chat_answer('{"supported": false, "score": 0.1, "reason": "no"}')),
        Scripted(body=chat_answer("```sql\nSELECT AVG(amount) FROM invoices;\n```")),
        Scripted(body=chat_answer("Manual > Warranty: coverage terms")),
        Scripted(body=chat_answer("A receipt showing a total of 42.50 EUR.")),
    )
    from grounded.gateway import DescribeRequest, EnrichRequest, SqlRequest

    gateway = make_gateway(
        routes={t: ["remote"] for t in ("verify", "sql", "enrich", "describe")},
        remote={"vision": True},
    )
    verdict = gateway.verify(tenant, "It lasts ten years.", "The warranty lasts two years.")
    assert not verdict.value.supported and verdict.value.reasons == ("no",)
    draft = gateway.sql(tenant, SqlRequest("average amount?", "invoices", ("id", "amount")))
    assert draft.value.sql == "SELECT AVG(amount) FROM invoices"
    line = gateway.enrich(tenant, EnrichRequest("Manual", ("Warranty",), "Two years."))
    assert line.value == "Manual > Warranty: coverage terms"
    described = gateway.describe(tenant, DescribeRequest(image=b"\x89PNG fake", ocr_text="42.50"))
    assert "42.50" in described.value
    image_part = server.calls(CHAT)[-1].body["messages"][1]["content"][1]
    assert image_part["image_url"]["url"].startswith("data:image/png;base64,")


def test_only_admins_set_budgets_and_the_cli_shows_use(
    make_gateway: MakeGateway,
    database: Database,
    owner: psycopg.Connection[tuple[object, ...]],
    db_urls: Any,
    pg_data_dir: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typer.testing import CliRunner

    from grounded.cli import app
    from grounded.errors import Forbidden

    tenant_id = make_tenant(owner, "budgeted")
    gateway = make_gateway()
    with pytest.raises(Forbidden):
        gateway.set_budget(principal_for(tenant_id), Caps("day", 10, None))
    admin = Principal(kind="user", id=uuid.uuid4(), tenant_id=tenant_id, roles=frozenset({"admin"}))
    gateway.set_budget(admin, Caps("day", 1000, 2.5))
    gateway.generate(admin, ask())
    assert gateway.budget(admin) == (Caps("day", 1000, 2.5), 17, pytest.approx(0.0135))

    monkeypatch.setenv("DATABASE_URL", db_urls.owner)
    monkeypatch.setenv("GROUNDED_APP_DATABASE_URL", db_urls.app)
    monkeypatch.setenv("GROUNDED_DATA_DIR", str(pg_data_dir))
    runner = CliRunner()
    with restored_logging():
        shown = runner.invoke(app, ["models", "budget", "--tenant", "budgeted", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout) | {"used_cost_usd": 0} == {
        "tenant": "budgeted",
        "period": "day",
        "max_tokens": 1000,
        "max_cost_usd": 2.5,
        "used_tokens": 17,
        "used_cost_usd": 0,
    }
    with restored_logging():
        changed = runner.invoke(
            app, ["models", "budget", "--tenant", "budgeted", "--max-tokens", "5", "--json"]
        )
    assert json.loads(changed.stdout)["max_tokens"] == 5
    with pytest.raises(BudgetExceeded):
        gateway.generate(admin, ask("another question"))
