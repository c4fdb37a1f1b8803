"""Grounded answers: context assembly, generation, claim verification, retry, abstention.

Public surface: ``Answerer(database, retriever, gateway, settings).answer(principal,
AnswerRequest(...))`` -> ``Answer``, plus ``get`` and ``stats`` on the same
object. Everything else (prompts, claim splitting, the offline gate) stays
behind it.

Names are resolved lazily (PEP 562): ``grounded.config`` imports
``grounded.answer.settings``, and loading the service then would be circular.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grounded.answer.service import Answer, Answerer, AnswerRequest, Citation
    from grounded.answer.settings import AnswerSettings

_WHERE = {
    "Answer": "service",
    "AnswerRequest": "service",
    "Answerer": "service",
    "Citation": "service",
    "AnswerSettings": "settings",
}
__all__ = ["Answer", "AnswerRequest", "AnswerSettings", "Answerer", "Citation"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'grounded.answer' has no attribute {name!r}")
    return getattr(importlib.import_module(f"grounded.answer.{_WHERE[name]}"), name)
