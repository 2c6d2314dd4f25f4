"""A real HTTP server that fails as a script says before it answers, for the client's
retry tests: each step is a status, `drop` (the connection dies without an answer), or
`503@S` (a 503 that asks to retry after S seconds); past the script, `answer` answers."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Callable
from typing import Any

# (method, path, the request's JSON body or None) -> (status, the answer's JSON or None)
Answer = Callable[[str, str, Any], tuple[int, Any]]


class ScriptedServer:
    def __init__(self, script: list[str], answer: Answer) -> None:
        self.script = list(script)
        self.attempts = 0
        scripted = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def reply(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                scripted.attempts += 1
                step = scripted.script.pop(0) if scripted.script else "ok"
                if step == "drop":
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                step, _, retry_after = step.partition("@")
                if step == "ok":
                    status, body = answer(self.command, self.path, json.loads(raw) if raw else None)
                else:
                    status, body = int(step), {"error": {"code": "scripted", "message": step}}
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if status in (429, 503):
                    self.send_header("retry-after", retry_after or "0")
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_DELETE = do_GET = reply

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
