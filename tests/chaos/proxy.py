"""The fault proxy between a job and its database: Toxiproxy, driven over its HTTP API.

`make setup` builds Toxiproxy's server from its Go module (github.com/Shopify/toxiproxy/v2) into
.cache/go/bin. A job that connects through the proxy sees what a network fault does to it: with a
reset_peer toxic every connection is reset; with a timeout toxic no byte gets through and the
connection is closed after the toxic's timeout.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from tests.chaos.databases import Database

SERVER = Path(__file__).resolve().parents[2] / ".cache" / "go" / "bin" / "server"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        if not SERVER.exists():
            raise RuntimeError(f"Toxiproxy's server is not built at {SERVER}: run make setup")
        self.api = _free_port()
        self.port = _free_port()
        self.server = subprocess.Popen(
            [str(SERVER), "-host", "127.0.0.1", "-port", str(self.api)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                self._call("GET", "/version")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self._call("POST", "/proxies", {"name": "db", "listen": f"127.0.0.1:{self.port}", "upstream": upstream})

    @classmethod
    def around(cls, db: Database) -> FaultProxy:
        return cls(f"{db.host}:{db.port}")

    def _call(self, method: str, path: str, body: dict | None = None) -> bytes:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://127.0.0.1:{self.api}{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.read()

    def toxic(self, kind: str, attributes: dict, seconds: float) -> None:
        """Apply a toxic to both directions for ``seconds``, then remove it."""
        names = []
        for stream in ("upstream", "downstream"):
            name = f"{kind}_{stream}"
            self._call(
                "POST", "/proxies/db/toxics", {"name": name, "type": kind, "stream": stream, "attributes": attributes}
            )
            names.append(name)
        time.sleep(seconds)
        for name in names:
            self._call("DELETE", f"/proxies/db/toxics/{name}")

    def close(self) -> None:
        self.server.kill()
        self.server.wait()
