"""Issue 20: the connection limits `python -m service` enforces itself (ATENTO_SERVER__*, service/http/connections.py),
against a real subprocess on 127.0.0.1: idle and half-sent connections closed, oversized heads refused
without the memory they would cost, a fast 503 beyond limit_concurrency. Each test prints what it measured.
A request body that stops arriving gets 408 (the app's middleware reads it under body_timeout_s); a slow reader
is the front end's (deploy/nginx, tests/deploy).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.servers import wait_process_ready

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
BUNDLED = ROOT / "models" / "normalize" / "1"
log = logging.getLogger(__name__)  # the figures each test measured: pytest -o log_cli=true --log-cli-level=INFO


@contextmanager
def _service(tmp_path: Path, *flags: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = (tmp_path / "service.log").open("w")  # a file, not a pipe: a full pipe would stall the server
    args = ["--model-dir", str(BUNDLED), "--port", str(port), "--runtime.intra-op-threads", "1", *flags]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "service", *args], cwd=ROOT, env=env, stderr=log, stdout=log, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_process_ready(proc, url, timeout_s=120)
        yield proc, url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def _closed_after(sock: socket.socket, *, trickle: bytes = b"", limit_s: float = 10.0) -> float:
    """Seconds until the server closes `sock`, sending `trickle` every 0.2 s meanwhile (bounded)."""
    started = time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - started < limit_s:
        try:
            if trickle:
                sock.sendall(trickle)
            if sock.recv(65536) == b"":
                return time.monotonic() - started
        except TimeoutError:
            continue
        except OSError:  # reset or broken pipe: closed
            return time.monotonic() - started
    raise AssertionError(f"still open after {limit_s}s")


def _rss_mb(proc: subprocess.Popen[str]) -> float:
    for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _send_head(url: str, head: bytes) -> tuple[str, float]:
    """Send a request head, return (the status line or what happened, seconds)."""
    started = time.monotonic()
    sock = _connect(url)
    try:
        try:
            sock.sendall(head)
        except OSError as error:  # the server stopped reading and closed: the head was refused
            return f"closed while sending ({type(error).__name__})", time.monotonic() - started
        sock.settimeout(10)
        try:
            answer = sock.recv(65536)
        except OSError as error:
            return f"closed ({type(error).__name__})", time.monotonic() - started
        return answer.split(b"\r\n", 1)[0].decode() or "closed", time.monotonic() - started
    finally:
        sock.close()


def test_idle_and_half_sent_connections_are_closed(tmp_path: Path) -> None:
    with _service(tmp_path, "--server.header-timeout-s", "1", "--server.keep-alive-timeout-s", "1") as (_, url):
        idle = _closed_after(_connect(url))
        slow = _connect(url)
        slow.sendall(b"GET /health/live HTTP/1.1\r\nHost: a\r\n")
        slowloris = _closed_after(slow, trickle=b"X-A: b\r\n")
        keep_alive = _connect(url)
        keep_alive.sendall(b"GET /health/live HTTP/1.1\r\nHost: a\r\n\r\n")
        keep_alive.settimeout(10)
        assert keep_alive.recv(65536).startswith(b"HTTP/1.1 200")
        after_response = _closed_after(keep_alive)
        log.info(f"closed after: idle {idle:.2f}s, slowloris {slowloris:.2f}s, idle keep-alive {after_response:.2f}s")
        assert 0.5 < idle < 3 and 0.5 < slowloris < 3 and 0.5 < after_response < 3
        assert httpx.get(f"{url}/health/live").status_code == 200


def _answer_to_a_stalled_body(url: str, *, trickle_every_s: float | None = None) -> tuple[bytes, float]:
    """POST a head that declares 100 bytes of body, send 10 of them and then nothing (or one more byte every
    `trickle_every_s`); return the whole answer and the seconds until the server closed the connection."""
    sock = _connect(url)
    started = time.monotonic()
    head = b"POST /generate HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    sock.sendall(head + b'{"inputs":')
    answer = b""
    next_byte = started + (trickle_every_s or 0)
    sock.settimeout(0.1)
    try:
        while time.monotonic() - started < 20:
            if trickle_every_s is not None and time.monotonic() >= next_byte:
                try:
                    sock.sendall(b" ")
                except OSError:  # the server has answered and closed: read what it sent
                    trickle_every_s = None
                next_byte += trickle_every_s or 0
            try:
                data = sock.recv(65536)
            except TimeoutError:
                continue
            except ConnectionResetError:  # closed with our trickled bytes unread: a reset after the answer
                data = b""
            if not data:
                return answer, time.monotonic() - started
            answer += data
        raise AssertionError(f"still open after 20 s, answered {answer[:200]!r}")
    finally:
        sock.close()


def test_a_body_that_stops_arriving_gets_408(tmp_path: Path) -> None:
    """A client that declares a body and stops sending it is answered 408 (JSON, connection closed) after
    body_timeout_s of silence, or once the request's own timeout has passed for one that trickles it."""
    with _service(tmp_path, "--body-timeout-s", "1", "--request-timeout-s", "3") as (_, url):
        stalled, stalled_s = _answer_to_a_stalled_body(url)
        trickled, trickled_s = _answer_to_a_stalled_body(url, trickle_every_s=0.5)
        log.info(f"408 after: a stalled body {stalled_s:.2f}s, a body trickled a byte every 0.5 s {trickled_s:.2f}s")
        for answer in (stalled, trickled):
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408"), answer
            assert b"connection: close" in head.lower()
            assert json.loads(body)["error_type"] == "body_timeout"
        assert 0.8 < stalled_s < 2.5 and 2.8 < trickled_s < 4.5
        # Many at once hold no worker: ordinary requests are answered meanwhile, and every stalled one gets its 408.
        stalled_many = [_connect(url) for _ in range(200)]
        for sock in stalled_many:
            sock.sendall(
                b"POST /generate HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{"
            )
        answers = [httpx.post(f"{url}/generate", json={"inputs": "tres casas"}, timeout=10) for _ in range(5)]
        assert [a.json()["generated_text"] for a in answers] == ["3 casas"] * 5
        status_lines = []
        for sock in stalled_many:
            sock.settimeout(10)
            status_lines.append(sock.recv(65536).split(b"\r\n", 1)[0])
            sock.close()
        assert status_lines == [b"HTTP/1.1 408 Request Timeout"] * 200
        metrics = httpx.get(f"{url}/metrics").text
        assert 'atento_requests_rejected_total{reason="body_timeout"} 202.0' in metrics


def test_oversized_heads_are_refused_without_their_memory(tmp_path: Path) -> None:
    with _service(tmp_path) as (proc, url):  # the defaults: 64 KiB heads, 100 header fields
        before = _rss_mb(proc)
        big_value = b"GET /health/live HTTP/1.1\r\nHost: a\r\nX-Big: " + b"a" * 20_000_000 + b"\r\n\r\n"
        many = (
            b"GET /health/live HTTP/1.1\r\nHost: a\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(100_000)) + b"\r\n"
        )
        fields = (
            b"GET /health/live HTTP/1.1\r\nHost: a\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(150)) + b"\r\n"
        )
        results = {
            name: _send_head(url, head)
            for name, head in (("20 MB header", big_value), ("100,000 headers", many), ("150 headers", fields))
        }
        after = _rss_mb(proc)
        for name, (answer, took) in results.items():
            log.info(f"{name}: {answer!r} in {took:.2f}s")
        log.info(f"server RSS {before:.0f} MB -> {after:.0f} MB")
        assert not results["20 MB header"][0].startswith("HTTP/1.1 2")
        assert not results["100,000 headers"][0].startswith("HTTP/1.1 2")
        assert results["150 headers"][0].startswith("HTTP/1.1 431")
        assert after - before < 50, f"RSS grew {after - before:.0f} MB"
        assert httpx.get(f"{url}/health/live").status_code == 200


def test_connections_beyond_the_limit_get_a_fast_503(tmp_path: Path) -> None:
    with _service(tmp_path, "--server.limit-concurrency", "20", "--server.header-timeout-s", "30") as (_, url):
        held = [_connect(url) for _ in range(20)]
        try:
            time.sleep(0.3)  # let the server accept them all
            started = time.monotonic()
            refused = httpx.post(f"{url}/generate", json={"inputs": "tres gatos"}, timeout=10)
            took = time.monotonic() - started
            probes = [httpx.get(f"{url}{path}", timeout=10).status_code for path in ("/health/live", "/health/ready")]
            log.info(f"21st connection: {refused.status_code} in {took * 1000:.0f} ms; probes {probes}")
            assert refused.status_code == 503 and took < 1.0
            assert probes == [200, 200]  # probes are exempt: a full server is busy, not dead
        finally:
            for sock in held:
                sock.close()
        deadline = time.monotonic() + 10
        while httpx.post(f"{url}/generate", json={"inputs": "tres gatos"}, timeout=10).status_code != 200:
            assert time.monotonic() < deadline, "never answered again after the connections closed"
            time.sleep(0.1)


def _generate_answered(url: str) -> float:
    """POST /generate requests the app has answered (its response written to the connection)."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("atento_requests_total{") and 'route="/generate"' in line
    )


def test_a_client_that_stops_reading_is_cut_off_after_the_send_timeout(tmp_path: Path) -> None:
    """A 6 MB response (two inputs with their attention), more than the kernel's socket buffers hold (4 MB),
    to a client that reads none of it for 3 s: without a send timeout the server keeps the rest in memory
    and the connection open for as long as the client likes, and delivers it all when it reads at last."""
    text = "Pedido 4815162342 del 2026-11-29, cuenta 0049 1500 0512 3456 7890, ref. 314159265358979."
    body = json.dumps({"inputs": [text, text], "parameters": {"return_attention": True}}).encode()
    head = b"POST /generate HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    with _service(tmp_path, "--server.send-timeout-s", "1") as (_, url):
        reader = socket.socket()
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small TCP window
        host, port = url.removeprefix("http://").split(":")
        reader.connect((host, int(port)))
        try:
            reader.sendall(head % len(body) + body)
            started = time.monotonic()
            while _generate_answered(url) < 1:
                assert time.monotonic() - started < 90, "never answered"
                time.sleep(0.2)
            time.sleep(3.0)  # reading nothing, three times the send timeout
            reader.settimeout(10)
            received = b""
            try:
                while chunk := reader.recv(65536):
                    received += chunk
            except ConnectionResetError:
                pass
        finally:
            reader.close()
        assert received.startswith(b"HTTP/1.1 200"), received[:200]
        declared = int(received.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
        log.info(f"client that read nothing for 3 s: {len(received)} bytes came of a {declared}-byte response")
        assert declared > 5_000_000, "the response must outgrow the socket buffers"
        assert len(received) < declared, "the whole response was delivered: the connection was never cut"
        assert httpx.get(f"{url}/health/live").status_code == 200
