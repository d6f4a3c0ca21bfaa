"""Security: API keys on every non-health endpoint, keys never in logs or bodies, body limits against a
large upload, no way out of the model directory, and a non-root container.

Builds on tests/integration/test_http_auth.py (Bearer on the main routes, keys absent from caplog),
tests/integration/test_http_errors.py::test_too_long_413 (small bodies over a small limit) and
tests/deploy/test_deploy_files.py (USER 10001:10001, pod runAsNonRoot); adds what they leave open.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from fastapi.routing import APIRoute
from harness import TEXTS, Served, real_server
from starlette.routing import Mount

from service.engine.settings import BatchingSettings
from tests.servers import wait_process_ready

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
KEY = "sk-atento-9f8e7d6c5b4a"
FILE_KEY = "sk-atento-from-file-0123"
# Open by design: probes, metrics, the API docs and the static viewer (its own API calls carry the key).
PUBLIC = {
    ("GET", "/health"), ("GET", "/health/live"), ("GET", "/health/ready"), ("GET", "/v2/health/live"),
    ("GET", "/v2/health/ready"), ("GET", "/v2/models/{name}/ready"),
    ("GET", "/v2/models/{name}/versions/{version}/ready"), ("GET", "/metrics"),
    ("GET", "/openapi.json"), ("GET", "/docs"), ("GET", "/docs/assets/{path}"), ("GET", "/"),
    ("GET", "/viewer"), ("GET", "/static/{path}"),
}  # fmt: skip
BAD_CREDENTIALS = [
    {},
    {"Authorization": ""},
    {"Authorization": "Bearer"},
    {"Authorization": f"Bearer {KEY.upper()}"},
    {"Authorization": f"Bearer {KEY},{KEY}"},
    {"Authorization": f"Bearer {KEY}x"},
    {"Authorization": f"Bearer {KEY[:-1]}"},
    {"Authorization": f"Basic {KEY}"},
    {"Authorization": KEY},
    {"X-API-Key": KEY},
]


@pytest.fixture(scope="module")
def keyed(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    key_file = tmp_path_factory.mktemp("keys") / "keys"
    key_file.write_text(f"# ops\n{FILE_KEY}\n")
    with real_server(
        tiny_model_dir, batching=BatchingSettings(), api_keys=KEY, api_key_file=key_file, max_new_tokens_limit=16
    ) as served:
        yield served


def _walk(routes: list[Any]) -> Iterator[Any]:
    for route in routes:
        included = getattr(route, "original_router", None)  # FastAPI keeps include_router's router
        if included is not None:
            yield from _walk(included.routes)
        else:
            yield route


def _routes(served: Served) -> list[tuple[str, str]]:
    """Every (method, path template) the app answers, from the router itself (not only the schema)."""
    found = []
    for route in _walk(served.app.routes):
        if isinstance(route, Mount):
            found.append(("GET", route.path + "/{path}"))
        for method in getattr(route, "methods", None) or ():
            if method != "HEAD":
                found.append((method, route.path))
    return found


def test_every_non_public_endpoint_refuses_a_missing_or_wrong_key(keyed: Served) -> None:
    routes = _routes(keyed)
    protected = [r for r in routes if r not in PUBLIC]
    assert {("POST", "/generate"), ("POST", "/generate_stream"), ("POST", "/"), ("POST", "/attention"),
            ("GET", "/info")} <= set(protected)  # fmt: skip
    api_routes = {(m, r.path) for r in _walk(keyed.app.routes) if isinstance(r, APIRoute) for m in r.methods}
    body = {"inputs": TEXTS[1], "parameters": {"max_new_tokens": 4}}
    for method, template in protected:
        path = re.sub(r"\{[^}]+\}", "x", template)
        for headers in BAD_CREDENTIALS:
            r = httpx.request(method, f"{keyed.url}{path}", json=body, headers=headers, timeout=30)
            assert r.status_code == 401, (method, path, headers, r.status_code)
            assert r.json()["error_type"] == "unauthorized" and KEY not in r.text
        if (method, template) in api_routes:
            for key in (KEY, FILE_KEY):
                r = httpx.request(
                    method, f"{keyed.url}{path}", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30
                )
                if "{" in template:  # a per-model or OIP route for model "x": the key passes, then "x" is refused
                    assert r.status_code in (400, 404) and r.json()["error_type"] != "unauthorized", (method, path)
                else:
                    assert r.status_code == 200, (method, path, r.text)
    for method, template in PUBLIC & set(routes):
        r = httpx.request(method, f"{keyed.url}{re.sub(r'{[^}]+}', 'x', template)}", follow_redirects=False)
        assert r.status_code != 401, (method, template)


def test_keys_never_reach_the_logs_or_a_response(tiny_model_dir: Path, tmp_path: Path) -> None:
    """The real process (`python -m service`, JSON logs at debug), fed the keys in every way a client might."""
    key_file = tmp_path / "keys"
    key_file.write_text(f"{FILE_KEY}\n")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ATENTO_API_KEYS": KEY,
        "ATENTO_API_KEY_FILE": str(key_file),
        "ATENTO_LOG_FORMAT": "json",
        "ATENTO_LOG_LEVEL": "debug",
        "ATENTO_MAX_NEW_TOKENS_LIMIT": "8",
        "ATENTO_MAX_BODY_BYTES": "4096",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "service", "--model-dir", str(tiny_model_dir), "--port", str(port)],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    responses: list[httpx.Response] = []
    wrong = f"{KEY}-wrong"
    try:
        wait_process_ready(proc, url, timeout_s=60)
        good = {"Authorization": f"Bearer {KEY}"}
        for headers in ({}, {"Authorization": f"Bearer {wrong}"}, {"Authorization": f"Basic {KEY}"}, good):
            for body in (
                {"inputs": TEXTS[1]},  # 200 with the key
                {"inputs": TEXTS[1], "parameters": {"top_k": 0, "api_key": KEY}},  # 422
                {"inputs": "x" * 5000},  # 413 (body limit)
                {"inputs": f"api_key={KEY} Bearer {KEY}", "parameters": {"stop": [KEY]}},
            ):
                responses.append(httpx.post(f"{url}/generate", json=body, headers=headers))
            responses.append(httpx.get(f"{url}/info", headers=headers))
            responses.append(httpx.get(f"{url}/nope?api_key={KEY}", headers=headers))
            responses.append(httpx.post(f"{url}/attention", json={"inputs": "a", "target": KEY}, headers=headers))
        assert {r.status_code for r in responses} >= {200, 401, 404, 413, 422}
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    log = proc.stderr.read() if proc.stderr else ""
    assert '"status": 401' in log  # the requests were logged...
    for secret in (KEY, FILE_KEY, wrong):  # ...and no key, right or wrong, with them
        assert secret not in log
        for r in responses:
            if r.status_code != 200:  # a 200 may echo the client's own input text, by design
                assert secret not in r.text and secret not in str(r.headers), (r.status_code, r.text)


def test_a_large_upload_is_refused_without_being_read(keyed: Served) -> None:
    limit = keyed.app.state.settings.max_body_bytes
    host, port = keyed.url.removeprefix("http://").split(":")
    auth = f"Authorization: Bearer {KEY}\r\n"

    def exchange(head: str, chunks: Iterator[bytes]) -> tuple[bytes, int]:
        """Send `head`, then `chunks` until the server answers; return the answer and bytes sent."""
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(head.encode())
            sent = 0
            sock.setblocking(False)
            answer = b""
            for chunk in chunks:
                try:
                    answer += sock.recv(65536)
                except BlockingIOError:
                    pass
                if answer:
                    break
                try:
                    sock.sendall(chunk)
                except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                    break
                sent += len(chunk)
            sock.setblocking(True)
            sock.settimeout(10)
            while b"\r\n\r\n" not in answer:
                answer += sock.recv(65536)
            return answer, sent

    upload = 64 * 1024 * 1024
    declared, _ = exchange(
        f"POST /generate HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
        f"Content-Length: {upload}\r\n\r\n",
        iter([b""]),
    )
    assert declared.startswith(b"HTTP/1.1 413"), declared[:200]

    def chunked() -> Iterator[bytes]:
        piece = b"a" * 65536
        for _ in range(upload // len(piece)):
            time.sleep(0.0005)  # give the server a moment to answer between chunks
            yield b"%x\r\n%s\r\n" % (len(piece), piece)

    answer, sent = exchange(
        f"POST /generate HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n",
        chunked(),
    )
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent < upload // 2, f"the server read {sent} bytes before refusing (limit {limit})"
    r = httpx.post(f"{keyed.url}/generate", json={"inputs": TEXTS[1]}, headers={"Authorization": f"Bearer {KEY}"})
    assert r.status_code == 200


# ---- the model directory cannot be escaped --------------------------------------------------------------

_opened: list[str] = []
_watching = threading.Event()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _watching.is_set() and isinstance(args[0], (str, bytes, os.PathLike)):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # audit hooks cannot be removed: this one records only while _watching is set


def test_no_parameter_reaches_outside_the_model_directory(keyed: Served, tmp_path: Path) -> None:
    secret = tmp_path / "atento-secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    model_dir = keyed.app.state.settings.model_dir
    relative = os.path.relpath(secret, model_dir)
    paths = [str(secret), relative, f"{model_dir}/{relative}", "../" * 12 + str(secret).lstrip("/"),
             "file://" + str(secret), "..%2F" * 8 + "atento-secret.txt"]  # fmt: skip
    headers = {"Authorization": f"Bearer {KEY}"}
    requests: list[tuple[str, str, Any]] = []
    for p in paths:
        requests += [
            ("POST", "/generate", {"inputs": p, "parameters": {"adapter_id": p, "stop": [p], "max_new_tokens": 4}}),
            ("POST", "/generate", {"inputs": "a", "model": p, "model_dir": p, "variant": p,
                                   "parameters": {"variant": p, "model_dir": p, "max_new_tokens": 4}}),
            ("POST", "/attention", {"inputs": p, "target": p}),
            ("POST", "/attention", {"inputs": "a", "model_dir": p}),
            ("GET", f"/v2/models/{p}/ready", None),
            ("GET", f"/static/{p}", None),
            ("GET", f"/info?model_dir={p}&variant={p}", None),
            ("GET", f"/{p}", None),
        ]  # fmt: skip
    _opened.clear()
    _watching.set()
    try:
        answers = [
            httpx.request(method, f"{keyed.url}{path}", json=body, headers={**headers, "X-Request-ID": "../x"})
            for method, path, body in requests
        ]
    finally:
        _watching.clear()
    assert not [p for p in _opened if "atento-secret" in p], "a request opened the file outside the model dir"
    _watching.set()
    secret.read_text()  # the hook does see opens
    _watching.clear()
    assert [p for p in _opened if "atento-secret" in p]
    for (method, path, body), r in zip(requests, answers, strict=True):
        assert r.status_code < 500, (method, path, r.text)
        assert "TOP-SECRET-CONTENT" not in r.text
        if body and "adapter_id" in body.get("parameters", {}):
            assert r.status_code == 422 and "adapter_id" in r.json()["error"]  # TGI's LoRA path: refused


# ---- the container runs as non-root (static) ------------------------------------------------------------


def test_images_and_pods_run_as_non_root() -> None:
    """Beyond test_deploy_files: USER is the last word of every runtime stage (nothing switches back to
    root), and each container (not only the pod) refuses root, with no privileged mode anywhere."""
    stage = None
    last_user: dict[str, str] = {}
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if m := re.match(r"FROM\s+\S+\s+AS\s+(\w+)", line, re.IGNORECASE):
            stage = m.group(1)
        elif m := re.match(r"USER\s+(\S+)", line):
            last_user[str(stage)] = m.group(1)
    for name in ("runtime", "gpu"):
        user = last_user[name].split(":")[0]
        assert user.isdigit() and int(user) != 0, f"{name}: USER {last_user[name]} (numeric, non-zero)"
    for path in sorted((ROOT / "deploy" / "k8s").glob("deployment*.yaml")):
        pod = yaml.safe_load(path.read_text())["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
        for container in pod["containers"] + pod.get("initContainers", []):
            security = container.get("securityContext", {})
            assert security.get("runAsNonRoot", True) is True and security.get("runAsUser", 1) != 0, path
            assert not security.get("privileged", False) and security["allowPrivilegeEscalation"] is False
    compose = yaml.safe_load((ROOT / "deploy" / "docker-compose.yml").read_text())
    for name, service in compose["services"].items():
        assert str(service.get("user", "")).split(":")[0] not in {"0", "root"}, name
        assert not service.get("privileged", False), name
    assert not re.search(r"privileged:\s*true", json.dumps([p.read_text() for p in (ROOT / "deploy").rglob("*.y*ml")]))
