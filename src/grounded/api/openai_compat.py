"""An OpenAI-compatible face: POST /v1/chat/completions and GET /v1/models.

So the official ``openai`` client and any chat UI can ask grounded questions
with an API token as the key. The model is ``grounded`` (the token's tenant)
or ``grounded:<tenant slug>``, which must name the token's own tenant. The
reply is a verified answer or an abstention (never an unchecked generation):
citations are written into the message and returned whole in the
``grounded`` extension field. With ``stream: true`` the same verified answer
is sent as server-sent events once verification has passed, so streaming
never shows a claim that was not checked.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from grounded.answer import Answer, AnswerRequest
from grounded.api.answers import answerer_for, public
from grounded.api.deps import AskDep, DatabaseDep, PrincipalDep
from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.errors import InvalidInput, NotFound

router = APIRouter(prefix="/v1", tags=["openai-compatible"])
MODEL = "grounded"
CREATED = 1_764_460_800  # when the model id was introduced (2025-11-30); fixed, not now()


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class ChatBody(BaseModel):
    """Fields other clients send (temperature, top_p, ...) are accepted and ignored:
    grounded decides how an answer is generated and checked."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(description="'grounded' or 'grounded:<your tenant slug>'.")
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


def _tenant_slug(database: Database, principal: Principal) -> str:
    with database.transaction(principal.tenant_id) as conn:
        row = conn.execute("SELECT slug FROM tenants WHERE id = %s", (principal.tenant_id,))
        found = row.fetchone()
    return str(found["slug"]) if found else ""


def _check_model(model: str, database: Database, principal: Principal) -> None:
    if model == MODEL:
        return
    if model.startswith(MODEL + ":") and model[len(MODEL) + 1 :] == _tenant_slug(
        database, principal
    ):
        return
    raise NotFound(
        f"model '{model[:80]}' is not available with this credential; use '{MODEL}'",
        details={"model": model[:80]},
    )


def _question(messages: list[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role != "user":
            continue
        if isinstance(message.content, str):
            return message.content
        if isinstance(message.content, list):
            return " ".join(
                str(part.get("text", "")) for part in message.content if part.get("type") == "text"
            )
    raise InvalidInput(
        "the conversation has no user message to answer", details={"field": "messages"}
    )


def render(answer: Answer) -> str:
    """The answer text followed by its sources, numbered as cited."""
    if answer.abstained or not answer.citations:
        return answer.text
    lines = [answer.text, "", "Sources:"]
    for c in answer.citations:
        where = ", ".join(
            f"{k} {v}"
            for k, v in c.provenance.items()
            if k in ("page", "slide", "sheet", "start_s")
        )
        label = c.document_title or c.source_name or c.document_id or c.chunk_id
        quote = f' "{c.quote}"' if c.quote else ""
        lines.append(f"[{c.number}] {label}{f' ({where})' if where else ''}:{quote}")
    return "\n".join(lines)


def _usage(answer: Answer) -> dict[str, int]:
    receipts = [a.get("generation", {}).get("receipt", {}) for a in answer.attempts]
    prompt = sum(int(r.get("tokens_in", 0)) for r in receipts)
    completion = sum(int(r.get("tokens_out", 0)) for r in receipts)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


@router.get("/models", summary="Models (OpenAI-compatible)")
def models(principal: PrincipalDep, database: DatabaseDep) -> dict[str, Any]:
    ids = [MODEL, f"{MODEL}:{_tenant_slug(database, principal)}"]
    return {
        "object": "list",
        "data": [
            {"id": i, "object": "model", "created": CREATED, "owned_by": "grounded"} for i in ids
        ],
    }


@router.post(
    "/chat/completions",
    summary="Chat completions (OpenAI-compatible): a verified, cited answer or an abstention",
    response_model=None,
)
def chat_completions(
    body: ChatBody, request: Request, principal: AskDep, database: DatabaseDep
) -> dict[str, Any] | StreamingResponse:
    """The last user message is the question (earlier turns are not used for retrieval)."""
    _check_model(body.model, database, principal)
    answer = answerer_for(request, database).answer(
        principal, AnswerRequest(question=_question(body.messages))
    )
    content = render(answer)
    extension = public(answer).model_dump(mode="json")
    completion_id = f"chatcmpl-{answer.id}"
    created = int(time.time())
    if body.stream:
        return StreamingResponse(
            _events(completion_id, created, body.model, content, extension),
            media_type="text/event-stream",
        )
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": body.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(answer),
        "grounded": extension,
    }


def _events(
    completion_id: str, created: int, model: str, content: str, extension: dict[str, Any]
) -> Iterator[str]:
    def chunk(delta: dict[str, Any], finish: str | None, **extra: Any) -> str:
        payload = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    yield chunk({"role": "assistant", "content": ""}, None)
    for start in range(0, len(content), 64):
        yield chunk({"content": content[start : start + 64]}, None)
    yield chunk({}, "stop", grounded=extension)
    yield "data: [DONE]\n\n"
