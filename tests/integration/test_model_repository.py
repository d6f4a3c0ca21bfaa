"""A model repository on a live uvicorn (127.0.0.1): two models, each on its own routes with its single-model
server's answers; a roll-out under a closed loop of 16 clients with no failed request and every answer from
one complete version; a corrupted version refused while the served one keeps answering. The same again with
no load call: a version directory copied in (slowly, so that a poll first sees it half-written) is picked up
by repository polling.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.http.app import create_app
from tests.servers import Served, make_settings, serve

BUNDLED = Path(__file__).resolve().parents[2] / "models" / "normalize" / "1"


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One snapshot of the bundled model for the whole module (a re-export swaps models/normalize/1)."""
    snapshot = tmp_path_factory.mktemp("bundled") / "1"
    shutil.copytree(BUNDLED, snapshot)
    return snapshot


TEXTS = ["el tres de mayo de dos mil uno", "doscientas personas", "May third, twenty twenty-six", "Hola, mundo."]
MAX_NEW = 24
LIMITS = {"max_new_tokens_limit": 64, "request_timeout_s": 120}
PARAMETERS = {"max_new_tokens": MAX_NEW}
CLIENTS = 16
ATTENTION_BODY = {"inputs": "doscientas personas", "parameters": {"max_new_tokens": 8}}


def generate(url: str, path: str, inputs: Any) -> Any:
    answer = httpx.post(f"{url}{path}", json={"inputs": inputs, "parameters": PARAMETERS}, timeout=120)
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.fixture(scope="module")
def single(tiny_model_dir: Path, bundled: Path) -> Iterator[dict[str, Served]]:
    """Each model alone, as before the repository (ATENTO_MODEL_DIR)."""
    with (
        serve(create_app(make_settings(model_dir=bundled, **LIMITS)), timeout_s=300) as normalize,
        serve(create_app(make_settings(model_dir=tiny_model_dir, **LIMITS)), timeout_s=300) as tiny,
    ):
        yield {"normalize": normalize, "tiny": tiny}


@pytest.fixture(scope="module")
def expected(single: dict[str, Served]) -> dict[str, list[str]]:
    return {name: [b["generated_text"] for b in generate(s.url, "/generate", TEXTS)] for name, s in single.items()}


@pytest.fixture(scope="module")
def two_models(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path, bundled: Path) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("repository")
    shutil.copytree(bundled, root / "normalize" / "1")
    shutil.copytree(tiny_model_dir, root / "tiny" / "1")
    settings = make_settings(model_repository=root, default_model="normalize", **LIMITS)
    with serve(create_app(settings), timeout_s=300) as served:
        yield served


def test_each_model_answers_on_its_own_routes(
    two_models: Served, single: dict[str, Served], expected: dict[str, list[str]]
) -> None:
    url = two_models.url
    for name in ("normalize", "tiny"):
        for path in (f"/models/{name}/generate", f"/models/{name}/versions/1/generate", f"/models/{name}/"):
            assert [b["generated_text"] for b in generate(url, path, TEXTS)] == expected[name], path
        info = httpx.get(f"{url}/models/{name}/info").json()
        assert info == httpx.get(f"{single[name].url}/info").json()
        attention = httpx.post(f"{url}/models/{name}/attention", json=ATTENTION_BODY, timeout=120)
        alone = httpx.post(f"{single[name].url}/attention", json=ATTENTION_BODY, timeout=120)
        assert attention.status_code == 200 and attention.json() == alone.json()
        with httpx.stream(
            "POST", f"{url}/models/{name}/generate_stream", json={"inputs": TEXTS[0], "parameters": PARAMETERS}
        ) as stream:
            events = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]
        assert events[-1]["generated_text"] == expected[name][0]
    # The TGI routes are the default model's.
    assert [b["generated_text"] for b in generate(url, "/generate", TEXTS)] == expected["normalize"]
    assert generate(url, "/", TEXTS[0])["generated_text"] == expected["normalize"][0]
    assert (
        httpx.get(f"{url}/info").json()["model_name"]
        == httpx.get(f"{single['normalize'].url}/info").json()["model_name"]
    )


def test_unknown_model_or_version_is_a_404_listing_the_loaded_ones(two_models: Served) -> None:
    url = two_models.url
    for method, path in (
        ("POST", "/models/nope/generate"),
        ("POST", "/models/tiny/versions/2/generate"),
        ("POST", "/models/tiny/versions/2/attention"),
        ("GET", "/models/nope/info"),
        ("GET", "/models/tiny/versions/x/info"),
        ("POST", "/models/..%2F..%2Fetc/generate"),
    ):
        answer = httpx.request(method, f"{url}{path}", json={"inputs": "a"}, timeout=60)
        assert answer.status_code == 404, (path, answer.text)
        body = answer.json()
        assert isinstance(body["error"], str)
        if "%2F" not in path:  # a path the router cannot match at all is a plain 404
            assert body["error_type"] == "model_not_found"
            assert body["loaded_models"] == [{"name": "normalize", "version": "1"}, {"name": "tiny", "version": "1"}]
    metrics = httpx.get(f"{url}/metrics").text
    assert 'model="nope"' not in metrics and 'version="2"' not in metrics  # no series for what is not loaded
    assert 'atento_model_loaded{model="tiny",version="1"} 1.0' in metrics


@dataclass
class Answer:
    client: int
    kind: str  # "oip" (says its version) or "tgi" (the default model)
    text: int
    status: int
    output: str = ""
    version: str = ""
    at: float = field(default_factory=time.monotonic)


def _closed_loop(url: str, client: int, stop: threading.Event, answers: list[Answer]) -> None:
    """One client: a request, its answer, the next; until told to stop (at most 2,000 requests)."""
    with httpx.Client(base_url=url, timeout=120) as http:
        for turn in range(2000):
            if stop.is_set():
                return
            text = (client + turn) % len(TEXTS)
            try:
                _one_request(http, client, text, answers)
            except Exception as exc:  # a dropped connection or a timeout is a failed request too
                answers.append(Answer(client, "error", text, -1, repr(exc)))


def _one_request(http: httpx.Client, client: int, text: int, answers: list[Answer]) -> None:
    """Even clients ask OIP's infer (the answer names its version), odd ones TGI's /generate (the default)."""
    if client % 2 == 0:
        body = {
            "inputs": [{"name": "text_input", "shape": [1], "datatype": "BYTES", "data": [TEXTS[text]]}],
            "parameters": PARAMETERS,
        }
        reply = http.post("/v2/models/m/infer", json=body)
        if reply.status_code != 200:
            answers.append(Answer(client, "oip", text, reply.status_code, reply.text))
            return
        parsed = reply.json()
        answers.append(Answer(client, "oip", text, 200, parsed["outputs"][0]["data"][0], parsed["model_version"]))
        return
    reply = http.post("/generate", json={"inputs": TEXTS[text], "parameters": PARAMETERS})
    output = reply.json()["generated_text"] if reply.status_code == 200 else reply.text
    answers.append(Answer(client, "tgi", text, reply.status_code, output))


def _loaded_series(url: str) -> dict[str, float]:
    lines = httpx.get(f"{url}/metrics", timeout=30).text.splitlines()
    return {line.split()[0]: float(line.split()[1]) for line in lines if line.startswith("atento_model_loaded{")}


def _wait_for(condition: Any, what: str, timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _corrupt_copy(source: Path, target: Path) -> None:
    shutil.copytree(source, target)
    graph = target / "encoder.onnx"
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0x01  # one flipped bit: only the sha256 can tell
    graph.write_bytes(bytes(data))


def test_rollout_under_load_drops_nothing_and_a_corrupt_version_is_refused(
    tmp_path: Path, tiny_model_dir: Path, bundled: Path, expected: dict[str, list[str]]
) -> None:
    # Model "m": version 1 is the tiny model, version 2 the bundled one, so each answer names its version.
    by_version = {"1": expected["tiny"], "2": expected["normalize"]}
    assert by_version["1"] != by_version["2"]
    shutil.copytree(tiny_model_dir, tmp_path / "m" / "1")
    # Load calls only: a poll would also try (and refuse once more) the corrupt version the calls refused.
    settings = make_settings(model_repository=tmp_path, default_model="m", repository_poll_s=0, **LIMITS)
    answers: list[Answer] = []
    stop = threading.Event()
    with serve(create_app(settings), timeout_s=300) as served:
        url = served.url
        assert _loaded_series(url) == {'atento_model_loaded{model="m",version="1"}': 1.0}
        clients = [threading.Thread(target=_closed_loop, args=(url, i, stop, answers)) for i in range(CLIENTS)]
        for thread in clients:
            thread.start()
        try:
            _wait_for(lambda: len(answers) >= 2 * CLIENTS, "answers from version 1")
            shutil.copytree(bundled, tmp_path / "m" / "2")
            loaded = httpx.post(f"{url}/v2/repository/models/m/load", timeout=300)
            assert loaded.status_code == 200, loaded.text
            switched = len(answers)
            assert _loaded_series(url) == {'atento_model_loaded{model="m",version="2"}': 1.0}
            metrics = httpx.get(f"{url}/metrics").text
            assert 'atento_model_info{name="' in metrics and 'version="1"' not in metrics
            _wait_for(lambda: len(answers) >= switched + 2 * CLIENTS, "answers from version 2")

            _corrupt_copy(bundled, tmp_path / "m" / "3")
            refused = httpx.post(f"{url}/v2/repository/models/m/load", timeout=300)
            assert refused.status_code == 400 and "corrupt: sha256" in refused.json()["error"], refused.text
            assert "version 2 keeps serving" in refused.json()["error"]
            index = {(r["name"], r["version"]): r for r in httpx.post(f"{url}/v2/repository/index").json()}
            assert (
                index[("m", "3")]["state"] == "UNAVAILABLE" and "encoder.onnx is corrupt" in index[("m", "3")]["reason"]
            )
            assert index[("m", "2")]["state"] == "READY" and index[("m", "1")]["state"] == "UNAVAILABLE"
            after_refusal = len(answers)
            _wait_for(lambda: len(answers) >= after_refusal + CLIENTS, "answers after the refusal")
        finally:
            stop.set()
            for thread in clients:
                thread.join(timeout=300)
        assert _loaded_series(url) == {'atento_model_loaded{model="m",version="2"}': 1.0}
    _check_answers(answers, by_version, clients=CLIENTS, after_refusal=after_refusal)


def _check_answers(
    answers: list[Answer], by_version: dict[str, list[str]], *, clients: int, after_refusal: int
) -> None:
    """No failed request; each answer one whole version's; versions 1 then 2 per client; only 2 at the end."""
    failed = [a for a in answers if a.status != 200]
    assert not failed, failed[:5]
    for answer in answers:
        if answer.kind == "oip":
            assert answer.output == by_version[answer.version][answer.text], answer
        else:  # the TGI route does not say its version: its answer must be one version's whole answer
            assert answer.output in (by_version["1"][answer.text], by_version["2"][answer.text]), answer
    oip = [a for a in answers if a.kind == "oip"]
    assert {a.version for a in oip} == {"1", "2"}
    for client in range(0, clients, 2):  # once a client got version 2, it never got version 1 again
        versions = [a.version for a in oip if a.client == client]
        assert versions == sorted(versions), (client, versions)
    assert all(a.version == "2" for a in answers[after_refusal:] if a.kind == "oip")


POLL_S = 0.2
POLLING_CLIENTS = 4
SMALL_FILES = ("manifest.json", "tokenizer.json")


def _index(url: str) -> dict[tuple[str, str], dict[str, str]]:
    rows = httpx.post(f"{url}/v2/repository/index", timeout=30).json()
    return {(row["name"], row["version"]): row for row in rows}


def test_polling_picks_up_a_copied_version_under_load_and_refuses_a_corrupt_one(
    tmp_path: Path, tiny_model_dir: Path, bundled: Path, expected: dict[str, list[str]]
) -> None:
    by_version = {"1": expected["tiny"], "2": expected["normalize"]}
    shutil.copytree(tiny_model_dir, tmp_path / "m" / "1")
    settings = make_settings(model_repository=tmp_path, default_model="m", repository_poll_s=POLL_S, **LIMITS)
    answers: list[Answer] = []
    stop = threading.Event()
    with serve(create_app(settings), timeout_s=300) as served:
        url = served.url
        clients = [threading.Thread(target=_closed_loop, args=(url, i, stop, answers)) for i in range(POLLING_CLIENTS)]
        for thread in clients:
            thread.start()
        try:
            _wait_for(lambda: len(answers) >= 2 * POLLING_CLIENTS, "answers from version 1")
            # Copied in two halves: a poll sees the manifest without its graphs, and refuses that version...
            target = tmp_path / "m" / "2"
            target.mkdir()
            for name in SMALL_FILES:
                shutil.copy2(bundled / name, target / name)
            _wait_for(lambda: _index(url)[("m", "2")]["reason"].startswith("failed to load"), "the half copy refused")
            assert _index(url)[("m", "1")]["state"] == "READY"
            # ... and tries it again once the rest of its files have arrived (copy2 keeps the source's mtimes).
            for path in sorted(bundled.iterdir()):
                if path.name not in SMALL_FILES:
                    shutil.copy2(path, target / path.name)
            _wait_for(lambda: _index(url)[("m", "2")]["state"] == "READY", "version 2 picked up")
            _wait_for(
                lambda: _loaded_series(url) == {'atento_model_loaded{model="m",version="2"}': 1.0},
                "version 1 drained and unloaded",
            )
            assert 'atento_model_info{name="' in httpx.get(f"{url}/metrics").text
            switched = len(answers)
            _wait_for(lambda: len(answers) >= switched + 2 * POLLING_CLIENTS, "answers from version 2")

            _corrupt_copy(bundled, tmp_path / "m" / "3")
            _wait_for(lambda: "encoder.onnx is corrupt" in _index(url)[("m", "3")]["reason"], "version 3 refused")
            index = _index(url)
            assert index[("m", "3")]["state"] == "UNAVAILABLE" and index[("m", "2")]["state"] == "READY"
            after_refusal = len(answers)
            _wait_for(lambda: len(answers) >= after_refusal + 2 * POLLING_CLIENTS, "answers after the refusal")
        finally:
            stop.set()
            for thread in clients:
                thread.join(timeout=300)
        assert _loaded_series(url) == {'atento_model_loaded{model="m",version="2"}': 1.0}
        assert _index(url)[("m", "3")]["state"] == "UNAVAILABLE"
    _check_answers(answers, by_version, clients=POLLING_CLIENTS, after_refusal=after_refusal)
