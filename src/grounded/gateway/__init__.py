"""The model gateway: the only code that calls a model or holds a credential.

Public surface (``__all__``, asserted by a test): build a ``Gateway`` with
``open_gateway(settings, database)`` and call its tasks with a principal
first. Callers on the write path that only need OCR, speech or descriptions
take the small Protocols in ``contracts`` (see ``adapters``).

Errors (from ``grounded.errors``)::

    ModelError            a provider failed or answered garbage (names the provider)
    └── ModelUnavailable  transient: retried with backoff, then the next provider
    BudgetExceeded        the tenant's budget for the period is spent
    EmbeddingMismatch     vectors of two models were about to be compared
    UnsupportedLanguage   no installed model covers the language (speech)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from grounded.gateway.adapters import GatewayDescriber, GatewayOcr, GatewayTranscriber
from grounded.gateway.registry import build_providers
from grounded.gateway.service import Gateway
from grounded.gateway.settings import TASKS, GatewaySettings
from grounded.gateway.store import Caps, GatewayStore
from grounded.gateway.types import (
    DescribeRequest,
    Embeddings,
    EnrichRequest,
    GenerateRequest,
    Generation,
    Message,
    Ranking,
    Receipt,
    Result,
    SqlDraft,
    SqlRequest,
    Verdict,
)
from grounded.gateway.vectors import EmbeddingSpace, require_same_space, similarities

if TYPE_CHECKING:  # config imports this package (for GatewaySettings): no cycle at run time
    from grounded.config import Settings
    from grounded.db.database import Database

__all__ = [
    "TASKS",
    "Caps",
    "DescribeRequest",
    "EmbeddingSpace",
    "Embeddings",
    "EnrichRequest",
    "Gateway",
    "GatewayDescriber",
    "GatewayOcr",
    "GatewaySettings",
    "GatewayStore",
    "GatewayTranscriber",
    "GenerateRequest",
    "Generation",
    "Message",
    "Ranking",
    "Receipt",
    "Result",
    "SqlDraft",
    "SqlRequest",
    "Verdict",
    "open_gateway",
    "require_same_space",
    "similarities",
]


def open_gateway(
    settings: Settings, database: Database, *, transport: httpx.BaseTransport | None = None
) -> Gateway:
    """The process's gateway: providers from settings, rows in ``database``."""
    return Gateway(
        settings.gateway, GatewayStore(database), build_providers(settings.gateway, transport)
    )
