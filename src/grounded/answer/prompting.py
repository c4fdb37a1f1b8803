"""Versioned prompts (seed 001 ADR-011) and the messages built from them.

Prompts are files shipped inside the package (``prompts/<name>-v<N>.md``); a
change to one is a new file and a new version, recorded on every answer. The
question and each evidence section are fenced; evidence is passed through
``injection.fence`` so a document cannot close its own fence.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Final

from grounded.answer.context import Evidence
from grounded.answer.injection import fence
from grounded.answer.text import STOP, terms
from grounded.gateway.types import Message

ANSWER_PROMPT: Final = "answer-v1"
REWRITE_PROMPT: Final = "rewrite-v1"
_ZH_INTERROGATIVE: Final = re.compile(
    "为什么|怎么样|怎么|如何|什么|哪些|哪个|哪里|哪儿|哪|谁|多少|几|吗|呢|是否"
)


@cache
def prompt(name: str) -> str:
    return (resources.files("grounded.answer") / "prompts" / f"{name}.md").read_text("utf-8")


def answer_messages(question: str, evidence: tuple[Evidence, ...]) -> tuple[Message, ...]:
    sections = "\n\n".join(
        f'<evidence id="{e.number}" title="{_attr(e.document_title)}" '
        f'source="{_attr(e.source_name)}">\n{fence(e.text)}\n</evidence>'
        for e in evidence
    )
    user = (
        f"<question>\n{fence(question)}\n</question>\n\n{sections}\n\n"
        "Answer the question using only the evidence sections above, citing them by number."
    )
    return (Message("instruction", prompt(ANSWER_PROMPT)), Message("user", user))


def rewrite_messages(question: str) -> tuple[Message, ...]:
    return (
        Message("instruction", prompt(REWRITE_PROMPT)),
        Message("user", f"<question>\n{fence(question)}\n</question>"),
    )


def keyword_rewrite(question: str) -> str:
    """The offline rewrite: the question's content words in order, interrogatives dropped."""
    question = _ZH_INTERROGATIVE.sub(" ", question)
    words = [w for w in question.replace("?", " ").replace("？", " ").split() if w]
    kept = [w for w in words if w.lower().strip(",.;:¿¡") not in STOP]
    rewritten = " ".join(kept) if kept else question
    if not terms(rewritten):
        return question
    return rewritten


def _attr(value: str | None) -> str:
    return (value or "").replace('"', "'").replace("<", "(").replace(">", ")")[:200]
