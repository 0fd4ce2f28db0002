"""Toxiproxy (github.com/Shopify/toxiproxy), a TCP proxy that injects faults, for tests: a server on
a free port, proxies in front of database addresses, and its HTTP API driven with plain HTTP calls.

    with Toxiproxy.running() as toxiproxy:            # or the `toxiproxy` fixture (tests/conftest.py)
        proxy = toxiproxy.proxy("127.0.0.1:5432")     # listens on a free port: proxy.listen, proxy.port
        proxy.disable()                               # the database goes away: open connections are
        proxy.enable()                                #   closed, new ones refused; and comes back
        proxy.reset_peer()                            # toxics: every connection reset (TCP RST),
        proxy.stall()                                 #   no byte gets through (toxic "timeout"),
        proxy.latency(200)                            #   each chunk of data late by 200 ms
        proxy.clear()                                 # every toxic removed

`make toxiproxy` (part of `make setup`) builds the server from its Go module into .cache, where
``BINARY`` finds it; SQLQUEUE_TOXIPROXY names another binary. The toxics are the server's own
(README "Toxics" of the tag built): a toxic applies to data from the server (``downstream``, the
default) or to it (``upstream``).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any

VERSION = "v2.5.0"  # the Makefile's TOXIPROXY_VERSION
ROOT = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("SQLQUEUE_TOXIPROXY", ROOT / ".cache" / "toxiproxy" / VERSION / "server"))
NOT_BUILT = f"no Toxiproxy server at {BINARY}: `make toxiproxy` builds it (needs Go)"
START_TIMEOUT_S = 10.0


class ToxiproxyError(RuntimeError):
    """The server refused an API call; the message is its answer."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Toxiproxy:
    """One running server: its HTTP API at ``url``, and the proxies made through it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._names = count(1)

    @classmethod
    @contextlib.contextmanager
    def running(cls, binary: Path = BINARY) -> Iterator[Toxiproxy]:
        """Start a server on a free port of 127.0.0.1 (its log in a temporary file) and stop it after."""
        if not binary.is_file():
            raise FileNotFoundError(NOT_BUILT)
        port = free_port()
        log = tempfile.NamedTemporaryFile(prefix="toxiproxy-", suffix=".log", delete=False)  # noqa: SIM115
        process = subprocess.Popen(
            [str(binary), "-host", "127.0.0.1", "-port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "LOG_LEVEL": "warn"},
        )
        server = cls(f"http://127.0.0.1:{port}")
        try:
            server._wait_until_up(process, log.name)
            yield server
        finally:
            process.terminate()
            process.wait(timeout=10)
            log.close()
            os.unlink(log.name)

    def _wait_until_up(self, process: subprocess.Popen, log: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with contextlib.suppress(OSError):
                self.call("GET", "/version")
                return
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Toxiproxy did not start on {self.url}: {Path(log).read_text()[-2000:]}")
            time.sleep(0.05)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One API call; its answer, parsed when it is JSON (None when there is none)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                text = response.read().decode()
                is_json = "json" in response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            raise ToxiproxyError(f"{method} {path}: {exc.code} {exc.read().decode(errors='replace')}") from None
        return json.loads(text) if is_json and text.strip() else text or None

    def proxy(self, upstream: str, name: str | None = None) -> Proxy:
        """A new proxy to ``upstream`` (host:port), listening on a free port of 127.0.0.1."""
        name = name or f"proxy{next(self._names)}"
        made = self.call("POST", "/proxies", {"name": name, "listen": "127.0.0.1:0", "upstream": upstream})
        return Proxy(self, name, made["listen"], upstream)

    def reset(self) -> None:
        """Every proxy enabled again and every toxic removed."""
        self.call("POST", "/reset")

    def remove_all(self) -> None:
        for name in self.call("GET", "/proxies"):
            self.call("DELETE", f"/proxies/{name}")


@dataclass(frozen=True)
class Proxy:
    server: Toxiproxy
    name: str
    listen: str  # host:port clients connect to
    upstream: str  # host:port of the database

    @property
    def port(self) -> int:
        return int(self.listen.rpartition(":")[2])

    def disable(self) -> None:
        """The database goes away: open connections are closed and new ones refused."""
        self.server.call("POST", f"/proxies/{self.name}", {"enabled": False})

    def enable(self) -> None:
        self.server.call("POST", f"/proxies/{self.name}", {"enabled": True})

    def toxic(self, kind: str, stream: str = "downstream", **attributes: int) -> str:
        """Add a toxic of ``kind`` with its attributes; its name (to remove it alone)."""
        name = f"{kind}_{stream}"
        self.server.call(
            "POST",
            f"/proxies/{self.name}/toxics",
            {"name": name, "type": kind, "stream": stream, "toxicity": 1.0, "attributes": attributes},
        )
        return name

    def reset_peer(self, timeout_ms: int = 0, stream: str = "downstream") -> str:
        """Connections are reset (TCP RST), at once or ``timeout_ms`` after data flows."""
        return self.toxic("reset_peer", stream, timeout=timeout_ms)

    def stall(self, timeout_ms: int = 0, stream: str = "downstream") -> str:
        """No data gets through; connections are closed after ``timeout_ms`` (0: never, until removed)."""
        return self.toxic("timeout", stream, timeout=timeout_ms)

    def latency(self, ms: int, jitter_ms: int = 0, stream: str = "downstream") -> str:
        """Data is delayed by ``ms`` (± ``jitter_ms``)."""
        return self.toxic("latency", stream, latency=ms, jitter=jitter_ms)

    def remove(self, toxic: str) -> None:
        self.server.call("DELETE", f"/proxies/{self.name}/toxics/{toxic}")

    def clear(self) -> None:
        """Every toxic of this proxy removed."""
        for toxic in self.server.call("GET", f"/proxies/{self.name}/toxics"):
            self.remove(toxic["name"])
