"""A loopback OpenAI-compatible chat server for the LLM translator's tests.

Serves POST /v1/chat/completions from a scripted queue of answers, records every request body (so tests can
assert what the prompts contained) and counts HTTP calls. Each scripted entry is a string (the answer text,
finish_reason "stop") or a dict with `content`, optional `finish_reason`, `prompt_tokens`, `completion_tokens`,
`status` (an HTTP error status to return instead). A `responder(body)` callable, when set, answers requests
the queue does not.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ScriptedServer:
    host: str = "127.0.0.1"
    port: int = 0
    script: deque = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    calls: int = 0
    responder: Callable[[dict[str, Any]], str | dict[str, Any]] | None = None
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def api_base(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def push(self, *answers: str | dict[str, Any]) -> None:
        self.script.extend(answers)

    def prompts(self) -> list[str]:
        """Each request's messages joined into one text (for `in` assertions)."""
        return ["\n".join(str(m.get("content", "")) for m in r.get("messages", [])) for r in self.requests]

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.calls += 1
            self.requests.append(body)
            if self.script:
                entry = self.script.popleft()
            elif self.responder is not None:
                entry = self.responder(body)
            else:
                entry = {"status": 500, "content": "script exhausted"}
        if isinstance(entry, str):
            entry = {"content": entry}
        if entry.get("status"):
            return int(entry["status"]), {"error": {"message": entry.get("content", "error"), "type": "server_error"}}
        content = entry.get("content", "")
        prompt_tokens = int(entry.get("prompt_tokens", sum(len(str(m.get("content", ""))) // 4 for m in body.get("messages", []))))
        completion_tokens = int(entry.get("completion_tokens", max(1, len(content) // 4)))
        return 200, {
            "id": f"chatcmpl-test-{self.calls}", "object": "chat.completion", "created": 1700000000,
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": entry.get("finish_reason", "stop")}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }

    def start(self) -> ScriptedServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode(errors="replace")}
                with owner._lock:
                    owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    status, payload = 404, {"error": {"message": f"no route {self.path}"}}
                else:
                    status, payload = owner._answer(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        self._server = ThreadingHTTPServer((self.host, self.port), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
