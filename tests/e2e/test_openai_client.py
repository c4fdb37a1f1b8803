"""The official `openai` package and plain REST against a real grounded server on loopback.

uvicorn serves the real app on a socket; the client is the one users install
(`pip install openai`), pointed at grounded with an API token as its key.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator

import httpx
import openai
import psycopg
import pytest
import uvicorn

from grounded.api.app import create_app
from grounded.auth import local
from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import Database, DatabaseUrls
from grounded.gateway import open_gateway
from grounded.index import Builder, publish
from grounded.index.embedder import GatewayEmbedder
from tests.conftest import make_tenant
from tests.integration.index_corpus import add_document
from tests.integration.test_answers import MANUAL

pytestmark = pytest.mark.e2e
QUESTION = "What is the boiler pressure limit?"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    def __init__(self, base: str, token: str, slug: str, read_only: str) -> None:
        self.read_only = read_only
        self.base = base
        self.token = token
        self.slug = slug

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{self.base}/v1", api_key=self.token, max_retries=0)

    def rest(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.base, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )


@pytest.fixture
def served(
    settings: Settings,
    database: Database,
    owner: psycopg.Connection[tuple[object, ...]],
    db_urls: DatabaseUrls,
) -> Iterator[Served]:
    slug = f"chat-{uuid.uuid4().hex[:6]}"
    tenant = make_tenant(owner, slug)
    for title, chunks in MANUAL:
        add_document(owner, tenant, title, chunks)
    admin = Principal("user", uuid.uuid4(), tenant, frozenset({"admin"}))
    gateway = open_gateway(settings, database)
    try:
        report = Builder(database, settings.index, GatewayEmbedder(gateway, admin)).build(
            admin, incremental=False
        )
        publish(database, admin, report.snapshot.generation)
    finally:
        gateway.close()
    with local.connect(db_urls.owner) as conn:
        token, _ = local.create_service_token(conn, slug, "chat-ui", ["ask"], [])
        read_only, _ = local.create_service_token(conn, slug, "reader", ["read"], [])
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings, database), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    try:
        yield Served(f"http://127.0.0.1:{port}", token, slug, read_only)
    finally:
        server.should_exit = True
        thread.join(10)


def test_official_openai_client_gets_a_cited_answer(served: Served) -> None:
    client = served.client()
    assert {m.id for m in client.models.list()} == {"grounded", f"grounded:{served.slug}"}
    reply = client.chat.completions.create(
        model="grounded", messages=[{"role": "user", "content": QUESTION}]
    )
    content = reply.choices[0].message.content or ""
    assert "3 bar" in content and "Sources:" in content and "Boiler manual" in content
    extension = (reply.model_extra or {})["grounded"]
    assert extension["abstained"] is False
    assert extension["citations"] and extension["mode"] == "extractive"
    # The same answer streamed: sent only after verification, identical text.
    stream = client.chat.completions.create(
        model=f"grounded:{served.slug}",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
    )
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
    assert streamed == content
    # Another tenant's model name is refused, not answered from the token's tenant.
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(
            model="grounded:someone-else", messages=[{"role": "user", "content": QUESTION}]
        )


def test_unanswerable_chat_question_is_an_abstention(served: Served) -> None:
    reply = served.client().chat.completions.create(
        model="grounded",
        messages=[{"role": "user", "content": "Who won the 1998 football world cup?"}],
    )
    extension = (reply.model_extra or {})["grounded"]
    assert extension["abstained"] is True and extension["citations"] == []
    assert (reply.choices[0].message.content or "").startswith("I cannot answer this")


def test_answers_over_rest_are_stored_and_counted(served: Served) -> None:
    with served.rest() as rest:
        made = rest.post("/v1/answers", json={"question": QUESTION})
        assert made.status_code == 200, made.text
        answer = made.json()
        assert not answer["abstained"] and answer["citations"][0]["quote"]
        fetched = rest.get(f"/v1/answers/{answer['id']}")
        assert fetched.status_code == 200 and fetched.json()["text"] == answer["text"]
        assert fetched.json()["attempts"]  # receipts come with the stored answer
        run = rest.get(f"/v1/search/runs/{answer['retrieval_run_ids'][0]}")
        assert run.status_code == 200 and run.json()["receipt"]["results"]
        assert rest.get("/v1/answers/stats").json()["answers"] == 1
        for bad in ({"question": ""}, {"question": "x" * 2001}, {"question": "q", "k": 0}):
            refused = rest.post("/v1/answers", json=bad)
            assert refused.status_code == 422, refused.text
        unknown = rest.post(
            "/v1/answers", json={"question": QUESTION, "retrieval_run_id": str(uuid.uuid4())}
        )
        assert unknown.status_code == 404
    anonymous = httpx.post(f"{served.base}/v1/answers", json={"question": QUESTION})
    assert anonymous.status_code == 401
    reader = {"Authorization": f"Bearer {served.read_only}"}
    for path, body in (("/v1/answers", {"question": QUESTION}), ("/v1/search", {"query": "x"})):
        refused = httpx.post(f"{served.base}{path}", json=body, headers=reader)
        assert refused.status_code == 403 and "'ask'" in refused.text
