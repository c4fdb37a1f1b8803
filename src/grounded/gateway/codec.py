"""Cache keys and the JSON form of each task's result.

A key is the SHA-256 of a canonical JSON of (task, provider, model, request);
bytes inside a request (images, audio) enter as their own SHA-256, so equal
content gives an equal key and nothing large is hashed twice.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from grounded.gateway.contracts import OcrLine, OcrResult, Transcript, TranscriptSegment
from grounded.gateway.types import Generation, Ranking, SqlDraft, Verdict


def _canon(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"sha256": hashlib.sha256(value).hexdigest()}
    if isinstance(value, tuple | list):
        return [_canon(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canon(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def digest(*parts: Any) -> bytes:
    text = json.dumps(_canon(list(parts)), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).digest()


def encode(value: Any) -> Any:
    """A result as JSON-ready data (strings stay strings)."""
    if isinstance(value, str):
        return value
    return _canon(value)


def decode(task: str, data: Any) -> Any:
    """Rebuild a task's result from ``encode``'s output."""
    if task in ("enrich", "describe"):
        return str(data)
    if task == "rerank":
        return Ranking(scores=tuple(float(s) for s in data["scores"]))
    if task == "generate":
        return Generation(
            text=data["text"], extractive=data["extractive"], finish_reason=data["finish_reason"]
        )
    if task == "verify":
        return Verdict(
            supported=data["supported"], score=data["score"], reasons=tuple(data["reasons"])
        )
    if task == "sql":
        return SqlDraft(sql=data["sql"], explanation=data["explanation"])
    if task == "ocr":
        return OcrResult(
            lines=tuple(
                OcrLine(text=line["text"], bbox=tuple(line["bbox"]), score=line["score"])
                for line in data["lines"]
            ),
            provider=data["provider"],
            model=data["model"],
        )
    if task == "transcribe":
        return Transcript(
            segments=tuple(TranscriptSegment(**segment) for segment in data["segments"]),
            language=data["language"],
            provider=data["provider"],
            model=data["model"],
        )
    raise ValueError(f"no codec for task {task!r}")
