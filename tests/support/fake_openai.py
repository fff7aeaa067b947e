"""A scripted OpenAI-compatible server for tests (chat completions and embeddings).

Runs `http.server` in a thread on 127.0.0.1 at a free port, so the real client
stack (openai, langchain-openai, DSPy/litellm) is exercised end to end without a
network model. Chat replies come from a script: a list consumed in order, or a
callable that sees the request body. A script entry may be `Fail(status)` to
answer with an HTTP error instead; malformed content is just a string. `models` lists
the model name each chat request carried.

    with start_fake_openai(["first reply", Fail(500), "second reply"]) as fake:
        ChatOpenAI(base_url=fake.base_url, api_key="x", model="fake").invoke("hi")
        assert fake.chat_requests[0]["messages"][0]["content"] == "hi"
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fail:
    """Answer this request with an HTTP error (500 = retryable, 400 = not)."""

    status: int = 500
    message: str = "injected failure"


Reply = str | Fail
Script = list[Reply] | Callable[[dict[str, Any]], Reply] | None


@dataclass
class FakeOpenAI:
    """Handle on a running fake server: where it listens and what it was asked."""

    base_url: str
    script: Script = None
    embedding_dim: int = 16
    chat_requests: list[dict[str, Any]] = field(default_factory=list)
    embedding_requests: list[dict[str, Any]] = field(default_factory=list)
    failures_served: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def models(self) -> list[str | None]:
        """The model name of every chat request, in order (what each client really sent)."""
        return [body.get("model") for body in self.chat_requests]

    @property
    def remaining(self) -> int | None:
        """Unconsumed scripted replies (None for a callable script)."""
        return len(self.script) if isinstance(self.script, list) else None

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.chat_requests.append(body)
            if callable(self.script):
                return self.script(body)
            if not self.script:
                # 400 is not retried by clients, so an exhausted script fails the test fast.
                return Fail(400, "fake_openai: script exhausted")
            return self.script.pop(0)


def fake_vector(text: str, dim: int) -> list[float]:
    """A deterministic unit vector per text (same text → same vector)."""
    raw = b""
    counter = 0
    while len(raw) < dim * 4:
        raw += hashlib.sha256(f"{counter}:{text}".encode()).digest()
        counter += 1
    values = [(b / 255.0) - 0.5 for b in raw[: dim * 4 : 4]]
    norm = sum(v * v for v in values) ** 0.5 or 1.0
    return [v / norm for v in values]


def _completion(body: dict[str, Any], content: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-fake-{int(time.time() * 1000)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _embeddings(body: dict[str, Any], dim: int) -> dict[str, Any]:
    inputs = body.get("input")
    if isinstance(inputs, str) or (
        isinstance(inputs, list) and inputs and isinstance(inputs[0], int)
    ):
        inputs = [inputs]
    data = []
    for index, item in enumerate(inputs or []):
        vector = fake_vector(item if isinstance(item, str) else json.dumps(item), dim)
        if body.get("encoding_format") == "base64":
            encoded: Any = base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode()
        else:
            encoded = vector
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    return {
        "object": "list",
        "data": data,
        "model": body.get("model", "fake"),
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send(
                    400, {"error": {"message": "invalid JSON body", "type": "invalid_request"}}
                )
                return
            path = self.path.rstrip("/")
            if path.endswith("/chat/completions"):
                reply = fake.next_reply(body)
                if isinstance(reply, Fail):
                    with fake._lock:
                        fake.failures_served += 1
                    self._send(reply.status, {"error": {"message": reply.message, "type": "fake"}})
                else:
                    self._send(200, _completion(body, reply))
            elif path.endswith("/embeddings"):
                with fake._lock:
                    fake.embedding_requests.append(body)
                self._send(200, _embeddings(body, fake.embedding_dim))
            else:
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "fake"}})

    return Handler


@contextmanager
def start_fake_openai(script: Script = None, *, embedding_dim: int = 16) -> Iterator[FakeOpenAI]:
    """Serve a fake OpenAI API on 127.0.0.1 for the duration of the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    host, port = server.server_address[:2]
    fake = FakeOpenAI(
        base_url=f"http://{host}:{port}/v1",
        script=list(script) if isinstance(script, list) else script,
        embedding_dim=embedding_dim,
    )
    server.RequestHandlerClass = _handler(fake)
    thread = threading.Thread(target=server.serve_forever, name="fake-openai", daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
