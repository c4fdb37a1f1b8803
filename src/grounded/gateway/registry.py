"""Provider kinds by name, and building the configured set.

Built-in kinds register exactly as an extension would (``register``), so the
registry is the one path from a name in settings to a provider object.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from grounded.gateway.providers.base import Provider
from grounded.gateway.providers.local import LocalProvider
from grounded.gateway.providers.openai import OpenAIProvider
from grounded.gateway.settings import GatewaySettings, OpenAIProviderSettings

RemoteFactory = Callable[[str, OpenAIProviderSettings, httpx.BaseTransport | None], Provider]

_KINDS: dict[str, RemoteFactory] = {}


def register(kind: str, factory: RemoteFactory) -> None:
    """Make ``kind`` available to ``gateway.providers.<name>.kind``."""
    _KINDS[kind] = factory


def kinds() -> list[str]:
    return ["local", *sorted(_KINDS)]


register("openai", OpenAIProvider)


def build_providers(
    settings: GatewaySettings, transport: httpx.BaseTransport | None = None
) -> dict[str, Provider]:
    """One provider object per configured name; ``local`` always exists.

    ``transport`` is the httpx seam tests and the offline check use; it is
    never needed in production.
    """
    providers: dict[str, Provider] = {"local": LocalProvider(settings.local)}
    for name, config in settings.providers.items():
        providers[name] = _KINDS[config.kind](name, config, transport)
    return providers
