"""``Gateway``: the one door every model call goes through (seed 001 ADR-008).

For each call, in this order: pick the tenant's route for the task; for each
provider in it: the tenant's cache; redaction if the provider is remote; the
tenant's budget (metered providers, reserved atomically); the call, retried
on transient errors with backoff; a ledger row either way; on failure, the
next provider. The result carries a receipt naming provider and model.

Embeddings are batched here (length-sorted so a batch holds similar lengths,
then restored to input order) and cached per text by content digest; a route
never mixes two models in one result: if a provider fails part-way, the next
provider embeds every text again.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from grounded.auth.principal import Principal
from grounded.errors import (
    BudgetExceeded,
    EmbeddingMismatch,
    Forbidden,
    GroundedError,
    InvalidInput,
    ModelError,
)
from grounded.gateway import codec, local_models
from grounded.gateway.contracts import OcrResult, Transcript
from grounded.gateway.providers.base import Provider
from grounded.gateway.providers.local import LocalProvider
from grounded.gateway.redact import Redactor
from grounded.gateway.retry import with_retry
from grounded.gateway.settings import GatewaySettings
from grounded.gateway.store import Caps, GatewayStore, LedgerEntry
from grounded.gateway.types import (
    AudioRequest,
    DescribeRequest,
    Embeddings,
    EmbedRequest,
    EnrichRequest,
    GenerateRequest,
    Generation,
    ImageRequest,
    Ranking,
    Receipt,
    Reply,
    RerankRequest,
    Result,
    Role,
    SqlDraft,
    SqlRequest,
    Verdict,
    VerifyRequest,
)

T = TypeVar("T")

# Output budget assumed for a reservation when a task does not state one.
_DEFAULT_OUTPUT_ESTIMATE = {"verify": 200, "enrich": 60, "describe": 200, "sql": 300}


def _estimate_tokens(request: Any) -> int:
    """A pessimistic input estimate (about 3 characters per token) for reservations."""
    chars = 0

    def walk(value: Any) -> None:
        nonlocal chars
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, tuple | list):
            for item in value:
                walk(item)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                walk(getattr(value, f.name))

    walk(request)
    return chars // 3 + 1


class Gateway:
    """Build one per process with the settings, the database and the providers."""

    def __init__(
        self,
        settings: GatewaySettings,
        store: GatewayStore,
        providers: dict[str, Provider],
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self._store = store
        self._providers = providers
        self._sleep = sleep
        self._redactor = Redactor(settings.redaction.kinds, settings.redaction.extra_patterns)

    def close(self) -> None:
        for provider in self._providers.values():
            provider.close()

    def providers(self) -> dict[str, Provider]:
        return dict(self._providers)

    # --- budgets -----------------------------------------------------------

    def budget(self, principal: Principal) -> tuple[Caps, int, float]:
        """The tenant's caps and this period's metered use (tokens, USD)."""
        caps = self._store.caps(principal.tenant_id, self.settings.budget)
        tokens, cost = self._store.usage(principal.tenant_id, caps.period)
        return caps, tokens, cost

    def set_budget(self, principal: Principal, caps: Caps) -> None:
        """Set the tenant's caps (admins only); takes effect on the next call."""
        if not principal.is_admin:
            raise Forbidden("only a tenant administrator can change its model budget")
        if caps.period not in ("day", "month"):
            raise InvalidInput(f"budget period must be 'day' or 'month', not {caps.period!r}")
        if (caps.max_tokens is not None and caps.max_tokens < 0) or (
            caps.max_cost_usd is not None and caps.max_cost_usd < 0
        ):
            raise InvalidInput("budget caps cannot be negative")
        self._store.set_caps(principal.tenant_id, caps)

    # --- public tasks ----------------------------------------------------

    def embed(
        self,
        principal: Principal,
        texts: Sequence[str],
        role: Role,
        *,
        require_model: str | None = None,
    ) -> Embeddings:
        """Unit vectors for ``texts`` with the given e5 role, tagged with model and dimension.

        ``require_model`` (an index snapshot's model id) skips providers whose
        model differs, and raises ``EmbeddingMismatch`` if none matches, so a
        fallback can never slip foreign vectors into an index.
        """
        request = EmbedRequest(texts=tuple(texts), role=role)
        errors: list[str] = []
        last: GroundedError | None = None
        for name in self.settings.route("embed", principal.tenant_id):
            provider = self._providers[name]
            if require_model is not None and _qualified(provider, "embed") != require_model:
                errors.append(f"{name}: model {_qualified(provider, 'embed')} != {require_model}")
                last = EmbeddingMismatch(
                    f"no provider on the embed route produces {require_model}",
                    details={"attempts": errors},
                )
                continue
            try:
                return self._embed_with(principal, provider, request, errors)
            except BudgetExceeded:
                raise
            except ModelError as exc:
                errors.append(f"{name}: {exc.code}: {exc.message}")
                last = exc
        assert last is not None
        last.details["attempts"] = errors
        raise last

    def rerank(self, principal: Principal, query: str, passages: Sequence[str]) -> Result[Ranking]:
        """Scores aligned with ``passages`` (a cross-encoder, or the labelled fallback)."""
        request = RerankRequest(query=query, passages=tuple(passages))

        def cached_embed(texts: Sequence[str], is_query: bool) -> Any:
            role: Role = "query" if is_query else "passage"
            return self.embed(
                principal, list(texts), role, require_model=local_models.EMBED_MODEL
            ).vectors

        def invoke(provider: Provider, req: RerankRequest) -> Reply[Ranking]:
            if isinstance(provider, LocalProvider) and self._serves_local_embed(principal):
                return provider.rerank(req, embed=cached_embed)
            return provider.rerank(req)

        return self._run(principal, "rerank", request, invoke)

    def _serves_local_embed(self, principal: Principal) -> bool:
        """The fallback reranker scores with e5: reuse the gateway's (cached) e5 vectors
        only when the embed route really serves that model."""
        return any(
            _qualified(self._providers[name], "embed") == local_models.EMBED_MODEL
            for name in self.settings.route("embed", principal.tenant_id)
            if name in self._providers and "embed" in self._providers[name].tasks()
        )

    def generate(self, principal: Principal, request: GenerateRequest) -> Result[Generation]:
        return self._run(principal, "generate", request, lambda p, r: p.generate(r))

    def verify(self, principal: Principal, claim: str, evidence: str) -> Result[Verdict]:
        request = VerifyRequest(claim=claim, evidence=evidence)
        return self._run(principal, "verify", request, lambda p, r: p.verify(r))

    def enrich(self, principal: Principal, request: EnrichRequest) -> Result[str]:
        return self._run(principal, "enrich", request, lambda p, r: p.enrich(r))

    def describe(self, principal: Principal, request: DescribeRequest) -> Result[str]:
        return self._run(principal, "describe", request, lambda p, r: p.describe(r))

    def sql(self, principal: Principal, request: SqlRequest) -> Result[SqlDraft]:
        return self._run(principal, "sql", request, lambda p, r: p.sql(r))

    def ocr(self, principal: Principal, image: bytes) -> Result[OcrResult]:
        return self._run(principal, "ocr", ImageRequest(image), lambda p, r: p.ocr(r))

    def transcribe(
        self, principal: Principal, audio: bytes, language: str | None = None
    ) -> Result[Transcript]:
        request = AudioRequest(audio, language)
        return self._run(principal, "transcribe", request, lambda p, r: p.transcribe(r))

    # --- the one call path -------------------------------------------------

    def _run(
        self,
        principal: Principal,
        task: str,
        request: Any,
        invoke: Callable[[Provider, Any], Reply[T]],
    ) -> Result[T]:
        attempts: list[str] = []
        last: GroundedError | None = None
        tenant = principal.tenant_id
        for name in self.settings.route(task, tenant):
            provider = self._providers[name]
            model = provider.model_for(task)
            started = time.perf_counter()
            key = self._cache_key(task, name, model, request)
            semantic = self._semantic_probe(task, name, model, request)
            if key is not None:
                hit = self._store.cache_get_many(tenant, [key]).get(key)
                if hit is None and semantic is not None:
                    hit = self._store.cache_nearest(
                        tenant, semantic[0], semantic[1], self.settings.cache.semantic_threshold
                    )
                if hit is not None:
                    latency = (time.perf_counter() - started) * 1000
                    self._store.record(tenant, LedgerEntry(task, name, model, latency, True, "ok"))
                    receipt = Receipt(
                        task,
                        name,
                        model,
                        True,
                        latency,
                        fallback=hit["fallback"],
                        attempts=(*attempts, f"{name}: cache hit"),
                    )
                    return Result(codec.decode(task, hit["value"]), receipt)
            try:
                reply, tries, redactions, cost = self._call(
                    principal, task, provider, request, invoke
                )
            except BudgetExceeded:
                raise
            except ModelError as exc:
                attempts.append(f"{name}: {exc.code}")
                last = exc
                continue
            latency = (time.perf_counter() - started) * 1000
            self._store.record(
                tenant,
                LedgerEntry(
                    task,
                    name,
                    reply.model,
                    latency,
                    False,
                    "ok",
                    reply.tokens_in,
                    reply.tokens_out,
                    cost,
                    None,
                    tries,
                    redactions,
                ),
            )
            if key is not None:
                self._store.cache_put_many(
                    tenant,
                    [(key, {"value": codec.encode(reply.value), "fallback": reply.fallback})],
                    task=task,
                    provider=name,
                    model=reply.model,
                    ttl_s=self.settings.cache.ttl_s,
                    context_key=semantic[0] if semantic else None,
                    query_vector=semantic[1] if semantic else None,
                )
            receipt = Receipt(
                task,
                name,
                reply.model,
                False,
                latency,
                reply.tokens_in,
                reply.tokens_out,
                cost,
                reply.fallback,
                (*attempts, f"{name}: ok"),
            )
            return Result(reply.value, receipt)
        assert last is not None
        last.details["attempts"] = attempts
        raise last

    def _call(
        self,
        principal: Principal,
        task: str,
        provider: Provider,
        request: Any,
        invoke: Callable[[Provider, Any], Reply[T]],
    ) -> tuple[Reply[T], int, int, float]:
        """One provider: redact, reserve budget, call with retries, settle; ledger on failure."""
        tenant = principal.tenant_id
        counts: Counter[str] = Counter()
        outbound = request
        if provider.egress and self.settings.redaction.enabled:
            outbound = self._redactor.request(request, counts)
        redactions = sum(counts.values())
        caps: Caps | None = None
        estimate_in = estimate_out = 0
        estimate_cost = 0.0
        model = provider.model_for(task)
        started = time.perf_counter()
        if provider.egress:
            caps = self._store.caps(tenant, self.settings.budget)
            estimate_in = _estimate_tokens(outbound)
            estimate_out = getattr(
                request, "max_output_tokens", _DEFAULT_OUTPUT_ESTIMATE.get(task, 0)
            )
            estimate_cost = provider.price(estimate_in, estimate_out)
            if not self._store.reserve(tenant, caps, estimate_in + estimate_out, estimate_cost):
                self._store.record(
                    tenant,
                    LedgerEntry(
                        task,
                        provider.name,
                        model,
                        0.0,
                        False,
                        "refused",
                        error_code=BudgetExceeded.code,
                        redactions=redactions,
                    ),
                )
                used_tokens, used_cost = self._store.usage(tenant, caps.period)
                token_cap = "no cap" if caps.max_tokens is None else str(caps.max_tokens)
                cost_cap = "no cap" if caps.max_cost_usd is None else f"${caps.max_cost_usd:.4f}"
                raise BudgetExceeded(
                    f"this tenant's model budget for the {caps.period} is spent "
                    f"({used_tokens} tokens used of {token_cap}, ${used_cost:.4f} of {cost_cap}; "
                    f"this call needs about {estimate_in + estimate_out}); "
                    "an administrator can raise it, or wait for the next period",
                    details={"period": caps.period, "provider": provider.name, "task": task},
                )
        try:
            reply, tries = with_retry(
                lambda: _guarded(provider, task, lambda: invoke(provider, outbound)),
                self.settings.retry,
                sleep=self._sleep,
            )
        except ModelError as exc:
            if caps is not None:
                self._store.adjust(tenant, caps, -(estimate_in + estimate_out), -estimate_cost)
            latency = (time.perf_counter() - started) * 1000
            self._store.record(
                tenant,
                LedgerEntry(
                    task,
                    provider.name,
                    model,
                    latency,
                    False,
                    "error",
                    error_code=exc.code,
                    tries=int(exc.details.get("tries", 1)),
                    redactions=redactions,
                ),
            )
            raise
        cost = provider.price(reply.tokens_in, reply.tokens_out)
        if caps is not None:
            actual = (reply.tokens_in or estimate_in) + reply.tokens_out
            self._store.adjust(
                tenant, caps, actual - (estimate_in + estimate_out), cost - estimate_cost
            )
        return reply, tries, redactions, cost

    # --- embeddings --------------------------------------------------------

    def _embed_with(
        self,
        principal: Principal,
        provider: Provider,
        request: EmbedRequest,
        errors: list[str],
    ) -> Embeddings:
        tenant = principal.tenant_id
        started = time.perf_counter()
        model = provider.model_for("embed")
        texts = request.texts
        use_cache = self.settings.cache.enabled and "embed" in self.settings.cache.tasks
        keys = [codec.digest("embed", provider.name, model, request.role, t) for t in texts]
        cached = self._store.cache_get_many(tenant, list(set(keys))) if use_cache else {}
        missing = sorted(
            {i for i, k in enumerate(keys) if k not in cached}, key=lambda i: len(texts[i])
        )
        # Deduplicate identical texts so each is embedded once.
        first_of: dict[bytes, int] = {}
        todo = [i for i in missing if first_of.setdefault(keys[i], i) == i]
        found: dict[bytes, np.ndarray[Any, np.dtype[np.float32]]] = {
            k: np.asarray(v["value"], dtype=np.float32) for k, v in cached.items()
        }
        tokens = tries_total = redactions = 0
        cost = 0.0
        qualified, dim = _qualified(provider, "embed"), provider.embed_dim or 0
        for start in range(0, len(todo), provider.max_batch):
            batch = todo[start : start + provider.max_batch]
            sub = EmbedRequest(texts=tuple(texts[i] for i in batch), role=request.role)
            reply, tries, red, c = self._call(
                principal, "embed", provider, sub, lambda p, r: p.embed(r)
            )
            tries_total += tries
            redactions += red
            tokens += reply.tokens_in
            cost += c
            qualified, dim = reply.value.model, reply.value.dim
            for i, vector in zip(batch, reply.value.vectors, strict=True):
                found[keys[i]] = vector
        if use_cache and todo:  # one write for the whole call, not one per batch
            self._store.cache_put_many(
                tenant,
                [(keys[i], {"value": [round(float(x), 7) for x in found[keys[i]]]}) for i in todo],
                task="embed",
                provider=provider.name,
                model=model,
                ttl_s=self.settings.cache.ttl_s,
            )
        vectors = (
            np.stack([found[k] for k in keys]).astype(np.float32)
            if keys
            else np.zeros((0, dim), dtype=np.float32)
        )
        if keys:
            dim = int(vectors.shape[1])
        latency = (time.perf_counter() - started) * 1000
        hit = not todo and bool(keys)
        self._store.record(
            tenant,
            LedgerEntry(
                "embed",
                provider.name,
                model,
                latency,
                hit,
                "ok",
                tokens,
                0,
                cost,
                None,
                max(tries_total, 1),
                redactions,
            ),
        )
        receipt = Receipt(
            "embed",
            provider.name,
            qualified,
            hit,
            latency,
            tokens,
            0,
            cost,
            attempts=(
                *errors,
                f"{provider.name}: ok ({len(todo)} embedded, {len(keys) - len(missing)} cached)",
            ),
        )
        return Embeddings(
            vectors=vectors, model=qualified, dim=dim, role=request.role, receipt=receipt
        )

    # --- cache helpers -------------------------------------------------------

    def _cache_key(self, task: str, provider: str, model: str, request: Any) -> bytes | None:
        cache = self.settings.cache
        if not cache.enabled or task not in cache.tasks:
            return None
        return codec.digest(task, provider, model, request)

    def _semantic_probe(
        self, task: str, provider: str, model: str, request: Any
    ) -> tuple[bytes, list[float]] | None:
        """(context digest, question vector) for a generate call that may reuse a paraphrase.

        Safe only when everything but the last question is byte-identical (same
        instructions, same evidence, same model and limits) and decoding is
        deterministic (temperature 0): then a near-identical question has the
        same answer. Anything else gets exact matching only.
        """
        cache = self.settings.cache
        if task != "generate" or not cache.semantic_generate or not cache.enabled:
            return None
        assert isinstance(request, GenerateRequest)
        if request.temperature != 0 or not request.messages:
            return None
        question = request.messages[-1]
        if question.role != "user":
            return None
        context = dataclasses.replace(request, messages=request.messages[:-1])
        from grounded.gateway import local_models

        vector = local_models.embed(
            [question.content], query=True, threads=self.settings.local.threads
        )[0]
        return codec.digest("generate-context", provider, model, context), [
            float(x) for x in vector
        ]


def _guarded(provider: Provider, task: str, call: Callable[[], T]) -> T:
    """Turn a provider's unexpected exception (a library bug, a corrupt input that
    crashes a decoder) into a ``ModelError`` naming it, so callers see one error type
    and the next provider gets its turn."""
    try:
        return call()
    except GroundedError:
        raise
    except Exception as exc:
        raise ModelError(
            f"provider {provider.name!r} failed on {task}: {type(exc).__name__}: {exc}"[:300],
            provider=provider.name,
        ) from exc


def _qualified(provider: Provider, task: str) -> str:
    model = provider.model_for(task)
    return model if model.startswith(f"{provider.name}/") else f"{provider.name}/{model}"
