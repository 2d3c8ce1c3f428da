"""A browser's push service, as far as headspace's service sees one: on 127.0.0.1, it takes each push (201) and keeps when it came, where, its headers and body.

The live push test decrypts what it kept with the subscription's keys; the
push benchmark (benchmarks/web_push.py) times its arrival.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Push:
    at: float  # time.time() when it came
    path: str
    headers: dict[str, str]
    body: bytes


class PushService:
    def __init__(self) -> None:
        self.received: list[Push] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                received.append(Push(time.time(), self.path, dict(self.headers.items()), body))
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
