"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 for tests (issue 5): it speaks
``POST /v1/chat/completions`` and replays scripted responses, so the real ``openai`` client (and
``ani run`` / campaigns in a subprocess) can be driven without a model.

    s = ChatServer()
    s.script = [reply(call("get_topology", {})), status(429), HANG, reply(call("submit", {}))]
    ... base_url=s.url ...
    s.close()

When the script is empty and ``responder`` is set, ``responder(request_body)`` gives the entry
instead (same forms as a script entry): a model whose reply depends on the conversation (e.g.
on the tools offered and the number of assistant turns so far), for campaigns whose runs ask in
any order. Without both, the server answers 500.

Importable from any test module (``tests/`` is on ``sys.path`` through the rootdir conftest).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

def call(name: str, arguments: Any, call_id: str | None = None) -> dict[str, Any]:
    """A tool call as the API returns it (``arguments`` is sent verbatim when a str)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id or f"call-{name}", "type": "function", "function": {"name": name, "arguments": args}}


def reply(*calls: dict[str, Any], content: str | None = None, usage: tuple[int, int] | None = (100, 10)) -> dict[str, Any]:
    """A chat.completion body with ``calls`` (and/or text) and usage (prompt, completion)."""
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = list(calls)
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if calls else "stop"}],
    }
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    return body


HANG = "hang"  # script entry: hold the request without answering (the client times out)


def status(code: int, headers: dict[str, str] | None = None) -> tuple[Any, ...]:
    """An error entry ``(code, body)``; with ``headers`` ``(code, body, headers)``: extra
    response headers, e.g. ``status(429, {"Retry-After": "2"})``."""
    body = {"error": {"message": f"scripted {code}", "type": "test", "code": None}}
    return (code, body) if headers is None else (code, body, dict(headers))


class ChatServer:
    """POST /v1/chat/completions answers with the next scripted entry: a body (200), a
    ``(status, body)`` pair, a ``(status, body, headers)`` triple (extra response headers), or
    HANG; when the script is empty, with ``responder(body)`` if set (an exception in it
    answers 500 and is kept in ``responder_errors``). Records every request (JSON body, headers)."""

    def __init__(self, responder: Callable[[dict[str, Any]], Any] | None = None, port: int = 0) -> None:
        self.script: list[Any] = []
        self.responder = responder
        self.responder_errors: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()
        #: the answer to GET /v1/models: None (a model list) or a script entry, e.g. status(404)
        self.models_entry: Any = None
        self.gets: list[tuple[str, dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                """``GET /v1/models``: ``models_entry`` (default: a list with ``test-model``);
                any other path: 404. Recorded in ``gets`` (path, headers)."""
                with lock:
                    outer.gets.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                    entry = outer.models_entry
                if self.path != "/v1/models":
                    entry = status(404)
                elif entry is None:
                    entry = {"object": "list", "data": [{"id": "test-model", "object": "model",
                                                         "created": 0, "owned_by": "test"}]}
                code, payload, _extra = (
                    (tuple(entry) + ({},))[:3] if isinstance(entry, tuple) else (200, entry, {})
                )
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    outer.requests.append(body)
                    outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                    if outer.script:
                        entry = outer.script.pop(0)
                    elif outer.responder is not None:
                        try:
                            entry = outer.responder(body)
                        except Exception as exc:  # noqa: BLE001 - the test sees it as a 500
                            outer.responder_errors.append(f"{type(exc).__name__}: {exc}")
                            entry = status(500)
                    else:
                        entry = status(500)
                if self.path != "/v1/chat/completions":
                    entry = status(404)
                if entry == HANG:
                    outer.release.wait(30)
                    return
                code, payload, extra = (
                    (tuple(entry) + ({},))[:3] if isinstance(entry, tuple) else (200, entry, {})
                )
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    for name, value in extra.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

        lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)  # port 0: any free one
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
