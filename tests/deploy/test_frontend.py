"""The front end of deploy/, run for real: Debian's nginx with deploy/nginx/nginx.conf in front of three
`python -m service` replicas, and Debian's Prometheus with deploy/prometheus/*.yml scraping them, all on
127.0.0.1 (rendered for loopback by deploy/render.py, the shipped limits unchanged).

What it proves: round robin across replicas; SSE through nginx unbuffered; `kill -9` of a replica under a
closed-loop load loses no request, and a stream cut on it ends as an error in huggingface_hub's client; a
rolling restart loses nothing; slowloris, oversized headers and too many connections stop at nginx while the
replicas keep answering; Prometheus scrapes every replica and the replica-down alert fires within its `for:`.

Needs the nginx and prometheus binaries (deploy/install-apt.sh, run by `make test` as root); skips without
them only when not root.
"""

from __future__ import annotations

import re
import select
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from frontend_stack import Nginx, Prometheus, Replica, binary
from huggingface_hub import InferenceClient
from prometheus_client.parser import text_string_to_metric_families

from tests.reliability.probes import ProbeLoop

pytestmark = pytest.mark.slow

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
STEP_S = 0.015  # each decoder call on the replicas takes at least this long (see frontend_stack._LAUNCHER)
INTERVAL_S = 1  # Prometheus' scrape and evaluation intervals, rendered down from 15 s
ALERT_FOR_S = 3  # every rule's `for:`, rendered down from minutes
TEXTS = (
    "one hundred and twenty thousand",
    "catorce de noviembre de mil novecientos cinco",
    "The play premiered on August 25, 1916.",
    "I still have three million, five hundred and thirty-nine thousand pages left to read.",
)
# About 90 output tokens: 1.5 s or more of streaming at STEP_S per token.
LONG_TEXT = (
    "El artículo se publicó el tres de mayo de dos mil uno, y la segunda edición salió el veinte de junio "
    "de mil novecientos noventa y nueve con doscientas treinta y cuatro páginas."
)


def _nginx_value(directive: str) -> str:
    code = re.sub(r"#[^\n]*", "", (DEPLOY / "nginx" / "nginx.conf").read_text(encoding="utf-8"))
    match = re.search(rf"^\s*{directive}\s+([^;]+);", code, flags=re.M)
    assert match, directive
    return match.group(1).strip()


CLIENT_HEADER_TIMEOUT_S = float(_nginx_value("client_header_timeout").removesuffix("s"))
CLIENT_BODY_TIMEOUT_S = float(_nginx_value("client_body_timeout").removesuffix("s"))
LIMIT_CONN = int(_nginx_value("limit_conn").split()[1])


@dataclass
class Stack:
    replicas: list[Replica]
    nginx: Nginx
    prometheus: Prometheus
    expected: dict[str, str] = field(default_factory=dict)  # each of TEXTS -> its generated_text


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    for name in ("nginx", "prometheus"):
        binary(name)  # skip (not root) or fail (root) before starting anything
    directory = tmp_path_factory.mktemp("frontend")
    replicas = [Replica(name=f"replica{i}", log_dir=directory, step_s=STEP_S) for i in range(3)]
    addresses = [r.address for r in replicas]
    nginx = Nginx(directory=_mkdir(directory / "nginx"), upstreams=addresses)
    prometheus = Prometheus(
        directory=_mkdir(directory / "prometheus"),
        targets=addresses,
        interval=f"{INTERVAL_S}s",
        alert_for=f"{ALERT_FOR_S}s",
    )
    try:
        for replica in replicas:
            replica.start()
        for replica in replicas:
            replica.wait_ready()
        nginx.start()
        prometheus.start()
        expected = {
            text: httpx.post(f"{replicas[0].url}/generate", json={"inputs": text}, timeout=60).json()["generated_text"]
            for text in (*TEXTS, LONG_TEXT)
        }
        yield Stack(replicas=replicas, nginx=nginx, prometheus=prometheus, expected=expected)
    finally:
        prometheus.stop()
        nginx.stop()
        for replica in replicas:
            replica.stop()


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _served_generates(replica: Replica) -> float:
    """POST /generate answered 200 by this replica, from its own /metrics."""
    text = httpx.get(f"{replica.url}/metrics", timeout=10).text
    return sum(
        s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "atento_requests_total" and s.labels == {"route": "/generate", "status": "200"}
    )


def _in_flight(replica: Replica) -> float:
    text = httpx.get(f"{replica.url}/metrics", timeout=10).text
    gauges = {s.name: s.value for family in text_string_to_metric_families(text) for s in family.samples}
    return gauges["atento_running_sequences"] + gauges["atento_queue_depth"]


def _wait(predicate: Any, *, timeout_s: float, what: str, every_s: float = 0.02) -> float:
    """Poll until `predicate()` is true; return how long it took."""
    began = time.monotonic()
    while not predicate():
        assert time.monotonic() - began < timeout_s, f"{what}: not within {timeout_s}s"
        time.sleep(every_s)
    return time.monotonic() - began


def _client(source: str | None = None) -> httpx.Client:
    """A client connecting from `source` (another loopback address: another client as nginx sees it)."""
    transport = httpx.HTTPTransport(local_address=source) if source else None
    return httpx.Client(transport=transport, timeout=60)


class ClosedLoop:
    """`workers` clients, each sending the next POST /generate as soon as the last one is answered."""

    def __init__(self, stack: Stack, *, workers: int = 6) -> None:
        self.stack = stack
        self.workers = workers
        self.answers: list[tuple[int, bool]] = []  # (status, generated_text as expected)
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def _work(self, index: int) -> None:
        with _client() as client:
            n = index
            while not self._stop.is_set():
                text = TEXTS[n % len(TEXTS)]
                n += 1
                try:
                    r = client.post(f"{self.stack.nginx.url}/generate", json={"inputs": text})
                    ok = r.status_code == 200 and r.json()["generated_text"] == self.stack.expected[text]
                    self.answers.append((r.status_code, ok))
                    if not ok:
                        self.errors.append(f"{r.status_code} {r.text[:200]}")
                except httpx.HTTPError as error:
                    self.errors.append(repr(error))

    def __enter__(self) -> ClosedLoop:
        self._threads = [threading.Thread(target=self._work, args=(i,)) for i in range(self.workers)]
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=120)


# ---------------------------------------------------------------------------------------------- balancing


def test_prometheus_scrapes_every_replica(stack: Stack) -> None:
    addresses = {r.address for r in stack.replicas}

    def all_up() -> bool:
        up = stack.prometheus.query('up{job="atento"}')
        return {s["metric"]["instance"] for s in up if s["value"][1] == "1"} == addresses

    _wait(all_up, timeout_s=30, what="up == 1 for every replica", every_s=0.25)
    assert len(stack.prometheus.query('up{job="atento"}')) == 3


def test_requests_go_round_robin_across_replicas(stack: Stack) -> None:
    before = [_served_generates(r) for r in stack.replicas]
    with _client() as client:
        for i in range(30):
            r = client.post(f"{stack.nginx.url}/generate", json={"inputs": TEXTS[i % 2]})
            assert r.status_code == 200, r.text
    served = [_served_generates(r) - b for r, b in zip(stack.replicas, before, strict=True)]
    print(f"[round robin] 30 sequential requests through nginx, served per replica: {served}")  # noqa: T201
    assert sum(served) == 30
    assert max(served) - min(served) <= 2, served


def test_sse_streams_through_nginx_unbuffered(stack: Stack) -> None:
    arrivals: list[float] = []
    events: list[str] = []
    with _client() as client:
        with client.stream("POST", f"{stack.nginx.url}/generate_stream", json={"inputs": LONG_TEXT}) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            for line in r.iter_lines():
                if line.startswith("data:"):
                    arrivals.append(time.monotonic())
                    events.append(line)
    assert '"generated_text"' in events[-1] and '"generated_text":null' not in events[-1].replace(" ", "")
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    spread = sum(gap >= STEP_S / 2 for gap in gaps) / len(gaps)
    print(  # noqa: T201
        f"[sse] {len(events)} events over {arrivals[-1] - arrivals[0]:.2f}s through nginx; "
        f"{spread:.0%} of them at least {STEP_S / 2 * 1000:.0f} ms after the previous one"
    )
    # Each token takes at least STEP_S to generate: unbuffered, events arrive one by one, spread over the
    # generation; buffered, they would come in a few bursts (or all at the end). The replicas also send
    # `X-Accel-Buffering: no`, which alone would turn nginx's buffering off for the stream; the config's own
    # `proxy_buffering off` (for clients of other front ends) is checked in test_deploy_files.py.
    assert len(events) >= 40
    assert arrivals[-1] - arrivals[0] >= 0.8 * STEP_S * (len(events) - 1)
    assert spread >= 0.7, gaps


# ----------------------------------------------------------------------------------------- losing replicas


def test_kill_9_of_a_replica_under_load_loses_no_request(stack: Stack) -> None:
    victim = stack.replicas[1]
    with ClosedLoop(stack) as load:
        _wait(lambda: len(load.answers) >= 12, timeout_s=60, what="the load under way")
        _wait(lambda: _in_flight(victim) >= 1, timeout_s=30, what="a request in flight on the victim")
        victim.kill()
        killed_at = len(load.answers)
        time.sleep(2.0)  # keep the load on while nginx finds the replica gone
    victim.start()
    victim.wait_ready()
    print(  # noqa: T201
        f"[kill -9] {len(load.answers)} requests answered ({killed_at} before the kill), "
        f"{sum(ok for _, ok in load.answers)} correct, errors: {load.errors[:3]}"
    )
    assert not load.errors
    assert len(load.answers) > killed_at + 10, "the load stopped after the kill"


def test_a_stream_cut_by_kill_9_ends_without_its_final_event(stack: Stack) -> None:
    """Three streams at once, one per replica (least_conn); the killed replica's stream ends without its last
    event, which huggingface_hub's InferenceClient reports by raising; the other two finish."""
    results: dict[int, list[Any]] = {}
    errors: dict[int, BaseException] = {}

    def stream(i: int) -> None:
        client = InferenceClient(model=stack.nginx.url, timeout=60)
        results[i] = []
        try:
            for output in client.text_generation(LONG_TEXT, stream=True, details=True, max_new_tokens=200):
                results[i].append(output)
        except Exception as error:  # what the client raises is what this test shows
            errors[i] = error

    threads = [threading.Thread(target=stream, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    # nginx spreads them over the replicas it holds available (one restarted by the test before may still
    # sit out its fail_timeout); the victim is one running a stream, and all its streams are cut.
    _wait(lambda: all(len(results.get(i, ())) >= 3 for i in range(3)), timeout_s=30, what="three streams under way")
    on_victim, victim = max(((_in_flight(r), r) for r in stack.replicas), key=lambda pair: pair[0])
    victim.kill()
    for thread in threads:
        thread.join(timeout=60)
    victim.start()
    victim.wait_ready()

    finished = [i for i, outputs in results.items() if outputs and outputs[-1].generated_text is not None]
    print(f"[stream cut] InferenceClient raised: {[repr(e) for e in errors.values()]}")  # noqa: T201
    assert len(errors) == on_victim >= 1, (on_victim, errors, {i: len(o) for i, o in results.items()})
    for cut, error in errors.items():
        # The stream had started (tokens arrived) and ended without the event that carries generated_text:
        # nginx closes the client's connection without the chunked body's last chunk, and httpx says so.
        assert results[cut] and all(output.generated_text is None for output in results[cut])
        # huggingface_hub 2.x raises its HTTP client's error: httpx2.RemoteProtocolError (httpx's in 1.x).
        assert type(error).__name__ == "RemoteProtocolError", (type(error).__mro__, repr(error))
        assert type(error).__module__.split(".")[0] in {"httpx", "httpx2"}, type(error).__module__
        assert "incomplete chunked read" in str(error)
    assert sorted(finished) == sorted(set(range(3)) - set(errors))
    for i in finished:
        assert results[i][-1].generated_text == stack.expected[LONG_TEXT]


def test_a_rolling_restart_loses_nothing(stack: Stack) -> None:
    exit_codes = []
    with ClosedLoop(stack) as load:
        for replica in stack.replicas:
            _wait(lambda replica=replica: _in_flight(replica) >= 1, timeout_s=30, what="load on the replica")
            exit_codes.append(replica.terminate())
            replica.start()
            replica.wait_ready()
        restarted_at = len(load.answers)
        time.sleep(1.0)
    print(  # noqa: T201
        f"[rolling restart] {len(load.answers)} requests answered while 3 replicas restarted one at a time, "
        f"errors: {load.errors[:3]}"
    )
    assert exit_codes == [0, 0, 0]
    assert not load.errors
    assert len(load.answers) > restarted_at, "the load stopped during the restart"


# ---------------------------------------------------------------------------------------------- hostile


def _raw(source: str, port: int) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _answer(sock: socket.socket, *, timeout_s: float) -> bytes:
    """Whatever the server sends until it closes or `timeout_s` passes (b'' when it just closes)."""
    sock.settimeout(timeout_s)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data:
                break
    except (TimeoutError, ConnectionResetError):
        pass
    return data


def _answers_within(socks: list[socket.socket], *, timeout_s: float) -> dict[socket.socket, bytes]:
    """What arrives on each of `socks` within `timeout_s`, all waited for together: its answer, or b'' when
    the server closed it; sockets with nothing to read by then are left out."""
    answers: dict[socket.socket, bytes] = {}
    waiting = list(socks)
    deadline = time.monotonic() + timeout_s
    while waiting and (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select(waiting, [], [], left)
        for sock in readable:
            answers[sock] = _answer(sock, timeout_s=1.0)
            waiting.remove(sock)
    return answers


def _slowloris(port: int, *, connections: int, closed_after: dict[int, float]) -> None:
    """`connections` clients from 127.0.0.3, each sending its request header one byte per second, forever."""
    socks = {i: _raw("127.0.0.3", port) for i in range(connections)}
    began = time.monotonic()
    head = b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
    for offset in range(len(head)):
        for i, sock in list(socks.items()):
            try:
                sock.send(head[offset : offset + 1])
                sock.setblocking(False)
                if sock.recv(1024) == b"":  # closed by nginx
                    raise ConnectionResetError
            except BlockingIOError:
                pass
            except OSError:
                closed_after[i] = time.monotonic() - began
                sock.close()
                del socks[i]
            finally:
                if i in socks:
                    sock.setblocking(True)
        if not socks or time.monotonic() - began > CLIENT_HEADER_TIMEOUT_S + 10:
            break
        time.sleep(1.0)
    for sock in socks.values():
        sock.close()


def test_slowloris_huge_headers_and_too_many_connections_stop_at_nginx(stack: Stack) -> None:
    port = stack.nginx.port
    before = [_served_generates(r) for r in stack.replicas]
    closed_after: dict[int, float] = {}
    slow = threading.Thread(target=_slowloris, args=(port,), kwargs={"connections": 20, "closed_after": closed_after})
    legit: list[int] = []
    with ProbeLoop(stack.nginx.url) as through_nginx, ProbeLoop(stack.replicas[0].url) as direct:
        slow.start()

        # Oversized headers, from 127.0.0.4: one 20 KB header line; 100,000 small headers; a 50 MB header
        # (nginx answers 400 after its 8 KB buffers and stops reading).
        huge: list[bytes] = []
        for head in (
            b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n",
            b"GET /health/live HTTP/1.1\r\nHost: x\r\n"
            + b"".join(b"X-%d: v\r\n" % i for i in range(100_000))
            + b"\r\n",
            b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Huge: " + b"a" * 50_000_000 + b"\r\n\r\n",
        ):
            with _raw("127.0.0.4", port) as sock:
                try:
                    sock.sendall(head)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # nginx stopped reading and closed: its answer is already in the receive buffer
                huge.append(_answer(sock, timeout_s=10))

        # Too many connections, from 127.0.0.5: LIMIT_CONN + 16 POSTs whose bodies never come; nginx holds
        # the first LIMIT_CONN (until client_body_timeout) and refuses the rest at once.
        held = [_raw("127.0.0.5", port) for _ in range(LIMIT_CONN + 16)]
        began = time.monotonic()
        for sock in held:
            sock.sendall(
                b"POST /generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
            )
        refused = _answers_within(held, timeout_s=2.0)
        refused_within = time.monotonic() - began

        # Meanwhile another client (127.0.0.2) is served as usual.
        with _client("127.0.0.2") as client:
            for text in TEXTS:
                legit.append(client.post(f"{stack.nginx.url}/generate", json={"inputs": text}).status_code)
        still_held = [sock for sock in held if sock not in refused]
        held_closed = _answers_within(still_held, timeout_s=CLIENT_BODY_TIMEOUT_S + 5)
        held_for = time.monotonic() - began
        for sock in held:
            sock.close()
        slow.join(timeout=CLIENT_HEADER_TIMEOUT_S + 30)

    assert through_nginx.figures is not None and direct.figures is not None
    print(through_nginx.figures.line("slowloris + huge headers + too many connections, through nginx"))  # noqa: T201
    print(direct.figures.line("the same, on a replica directly"))  # noqa: T201
    print(  # noqa: T201
        f"[nginx] slowloris connections closed after {sorted(round(t, 1) for t in closed_after.values())} s; "
        f"huge headers answered {[h.split(b' ', 2)[1] if h else b'closed' for h in huge]}; "
        f"{len(refused)} of {len(held)} body-less POSTs refused at once (looked for {refused_within:.1f}s), the "
        f"other {len(held_closed)} closed by client_body_timeout within {held_for:.1f}s"
    )
    # Slowloris: every connection is cut by client_header_timeout, counted from its first byte.
    assert len(closed_after) == 20 and max(closed_after.values()) <= CLIENT_HEADER_TIMEOUT_S + 3, closed_after
    # Huge headers: 400 (Request Header Or Cookie Too Large) from nginx itself.
    for answer in huge:
        assert answer.startswith(b"HTTP/1.1 400"), answer[:300]
    # Too many connections: exactly the excess refused, fast, with atento's JSON error and a Retry-After.
    assert len(refused) == 16 and refused_within < 3, ([a[:100] for a in refused.values()], refused_within)
    for answer in refused.values():
        assert answer.startswith(b"HTTP/1.1 429") and b"retry-after: 1" in answer.lower(), answer[:300]
    # The held ones: closed by client_body_timeout (408, or a reset: reset_timedout_connection).
    assert len(still_held) == LIMIT_CONN and len(held_closed) == LIMIT_CONN, (len(still_held), len(held_closed))
    assert all(not a or a.startswith(b"HTTP/1.1 408") for a in held_closed.values()), list(held_closed.values())[:3]
    # None of it reached a replica, and the replicas kept answering.
    assert legit == [200] * len(TEXTS)
    served = sum(_served_generates(r) for r in stack.replicas) - sum(before)
    assert served == len(TEXTS), f"{served} /generate reached the replicas; only the legitimate ones should"
    for figures in (through_nginx.figures, direct.figures):
        assert figures.live.failures == 0 and figures.live.p99 < 1.0, figures.line("attacks")
        assert figures.ready.failures == 0 and figures.ready.p99 < 1.0, figures.line("attacks")


# --------------------------------------------------------------------------------------------- alerting


def test_replica_down_alert_fires_within_its_for(stack: Stack) -> None:
    victim = stack.replicas[0]

    def state() -> str | None:
        for alert in stack.prometheus.alerts():
            labels = alert["labels"]
            assert isinstance(labels, dict)
            if labels.get("alertname") == "AtentoTargetDown" and labels.get("instance") == victim.address:
                return str(alert["state"])
        return None

    assert state() is None
    victim.kill()
    pending = _wait(lambda: state() is not None, timeout_s=30, what="AtentoTargetDown pending", every_s=0.1)
    firing = _wait(lambda: state() == "firing", timeout_s=30, what="AtentoTargetDown firing", every_s=0.1)
    victim.start()
    victim.wait_ready()
    fired_after = pending + firing
    print(  # noqa: T201
        f"[alert] AtentoTargetDown pending {pending:.1f}s and firing {fired_after:.1f}s after kill -9 "
        f"(scrape/evaluation every {INTERVAL_S}s, for: {ALERT_FOR_S}s)"
    )
    # It waits its `for:` once pending, and no more than a scrape and an evaluation besides.
    assert firing >= ALERT_FOR_S - INTERVAL_S
    assert fired_after <= ALERT_FOR_S + 3 * INTERVAL_S + 2
