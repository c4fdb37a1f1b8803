"""Instructions planted in documents: found, marked, and never treated as fact.

Text inside a document is data (issue 10). The prompt says so and fences each
section, but a model may still obey a planted line, and the line itself would
then "support" the answer it produced. So context assembly marks sentences
that address an assistant (in English, Spanish and Chinese), and verification
refuses a claim whose only support is such a sentence. The patterns are
deliberately narrow: ordinary imperative prose ("store below 25 °C") is not
an instruction to the model.
"""

from __future__ import annotations

import re
from typing import Final

from grounded.answer.text import Span, sentence_spans

_PATTERNS: Final = re.compile(
    "|".join(
        [
            # English
            r"\b(ignore|disregard|forget|override)\b.{0,40}\b(instructions?|prompts?|rules?|"
            r"context|above|previous)\b",
            r"\b(you are|act as|pretend to be|you must now)\b.{0,40}\b(assistant|ai|model|"
            r"chatbot|gpt|llm)\b",
            r"\b(system prompt|developer message|jailbreak)\b",
            r"\b(tell|inform|answer|respond to|reply to)\s+(the\s+)?(user|reader|human)\b",
            r"\b(assistant|ai|model|chatbot|llm)s?\b.{0,30}\b(must|should|shall)\b.{0,20}"
            r"\b(say|answer|respond|reply|state|output|tell)\b",
            r"\b(when|if)\s+(asked|questioned)\b.{0,60}\b(say|answer|respond|reply)\b",
            # Spanish
            r"\b(ignora|ignore|olvida|omite)\b.{0,40}\b(instrucciones|indicaciones|reglas)\b",
            r"\b(responde|dile|di)\s+al\s+usuario\b",
            # Chinese
            r"(忽略|无视|忘记|忽视).{0,12}(指令|指示|提示|规则|说明)",
            r"(告诉|回答|回复)(用户|提问者)",
            r"(你现在是|扮演|你是一个)(.{0,10})(助手|模型|机器人|AI)",
        ]
    ),
    re.IGNORECASE | re.DOTALL,
)


def instruction_spans(text: str) -> list[Span]:
    """Sentences of ``text`` that read as instructions to an assistant."""
    return [span for span in sentence_spans(text) if _PATTERNS.search(span.text)]


def fence(text: str) -> str:
    """Neutralise our own delimiters inside evidence so a document cannot close its fence."""
    return re.sub(r"</?\s*(evidence|document|system|instruction)[^>]*>", "[removed tag]", text)
