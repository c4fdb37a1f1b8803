"""A real HTTP server on 127.0.0.1 that speaks enough of the OpenAI API (and /rerank).

Tests script its answers per path (status, body, delay) and then assert on
what it received: nothing is patched, the gateway's httpx client talks to a
socket. Unscripted calls get a well-formed default answer. Reusable by any
test that needs an OpenAI-compatible LLM (issue 10's answer tests, too).
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    status: int = 200
    body: Any = None  # dict/list -> JSON; str -> sent raw (for malformed JSON)
    delay_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any
    raw: str


def chat_answer(
    content: str, prompt_tokens: int = 12, completion_tokens: int = 5
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "model": "loopback-llm",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _embedding(text: str, dim: int = 8) -> list[float]:
    # Deterministic, content-dependent vectors: bytes folded into dim buckets.
    vector = [0.0] * dim
    for index, byte in enumerate(text.encode("utf-8")):
        vector[index % dim] += (byte % 31) + 1
    return vector


class LoopbackServer:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self._scripts: dict[str, deque[Scripted]] = defaultdict(deque)
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace")
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = None
                with server._lock:
                    server.received.append(
                        Received(
                            self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw
                        )
                    )
                    queue = server._scripts.get(self.path)
                    scripted = queue.popleft() if queue else None
                if scripted is None:
                    scripted = Scripted(body=server.default(self.path, body))
                if scripted.delay_s:
                    time.sleep(scripted.delay_s)
                payload = (
                    scripted.body
                    if isinstance(scripted.body, str)
                    else json.dumps(scripted.body if scripted.body is not None else {})
                ).encode("utf-8")
                try:
                    self.send_response(scripted.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in scripted.headers:
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (timeout test)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def default(self, path: str, body: Any) -> Any:
        if path.endswith("/chat/completions"):
            return chat_answer("loopback answer")
        if path.endswith("/embeddings"):
            inputs = body.get("input", []) if isinstance(body, dict) else []
            return {
                "object": "list",
                "data": [
                    {"object": "embedding", "index": i, "embedding": _embedding(text)}
                    for i, text in enumerate(inputs)
                ],
                "model": body.get("model") if isinstance(body, dict) else None,
                "usage": {"prompt_tokens": sum(len(t.split()) for t in inputs), "total_tokens": 0},
            }
        if path.endswith("/rerank"):
            documents = body.get("documents") or body.get("texts") or []
            query = set(str(body.get("query", "")).lower().split())
            scores = [len(query & set(str(d).lower().split())) / 10 for d in documents]
            if "texts" in body:
                return [{"index": i, "score": s} for i, s in enumerate(scores)]
            return {"results": [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]}
        return {"error": "unknown path"}

    def script(self, path: str, *answers: Scripted) -> None:
        """Queue answers for ``path`` (e.g. "/v1/chat/completions"), used in order."""
        with self._lock:
            self._scripts[path].extend(answers)

    def calls(self, suffix: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.path.endswith(suffix)]

    def everything_received(self) -> str:
        with self._lock:
            return "\n".join(r.raw for r in self.received)

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def running() -> Iterator[LoopbackServer]:
    server = LoopbackServer().start()
    try:
        yield server
    finally:
        server.stop()
