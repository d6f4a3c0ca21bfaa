"""The Open Inference Protocol v2 as Triton's own client speaks it: `tritonclient.http`, unmodified, against a
live uvicorn on 127.0.0.1 serving a repository of two models (the bundled normalizer and the session's
tiny model). Every answer is compared with the same model's single-model server (`/generate`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import tritonclient.http as triton
from tritonclient.utils import InferenceServerException

from service.http.app import create_app
from tests.servers import Served, make_settings, serve

BUNDLED = Path(__file__).resolve().parents[2] / "models" / "normalize" / "1"


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One snapshot of the bundled model for the whole module (a re-export swaps models/normalize/1)."""
    snapshot = tmp_path_factory.mktemp("bundled") / "1"
    shutil.copytree(BUNDLED, snapshot)
    return snapshot


TEXTS = [
    "el tres de mayo de dos mil uno",
    "May third, twenty twenty-six",
    "doscientas personas",
    "one thousand two hundred thirty-four",
    "Hola, mundo.",
    "veintiún años",
    "the third of May",
    "mil novecientos noventa y nueve",
]
MAX_NEW = 24
LIMITS = {"max_new_tokens_limit": 64, "request_timeout_s": 120}


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path, bundled: Path) -> Path:
    root = tmp_path_factory.mktemp("oip-repository")
    shutil.copytree(bundled, root / "normalize" / "1")
    shutil.copytree(tiny_model_dir, root / "tiny" / "1")
    return root


@pytest.fixture(scope="module")
def server(repository: Path) -> Iterator[Served]:
    settings = make_settings(model_repository=repository, default_model="normalize", **LIMITS)
    with serve(create_app(settings), timeout_s=300) as served:
        yield served


@pytest.fixture(scope="module")
def expected(tiny_model_dir: Path, bundled: Path) -> dict[str, list[str]]:
    """Each model's answers from its own single-model server (ATENTO_MODEL_DIR), one at a time."""
    answers = {}
    for name, directory in (("normalize", bundled), ("tiny", tiny_model_dir)):
        with serve(create_app(make_settings(model_dir=directory, **LIMITS)), timeout_s=300) as single:
            answers[name] = [
                httpx.post(
                    f"{single.url}/generate",
                    json={"inputs": text, "parameters": {"max_new_tokens": MAX_NEW}},
                    timeout=120,
                ).json()["generated_text"]
                for text in TEXTS
            ]
    return answers


def client_of(served: Served) -> triton.InferenceServerClient:
    return triton.InferenceServerClient(url=served.url.removeprefix("http://"), network_timeout=120.0)


def infer_texts(
    client: triton.InferenceServerClient, model: str, *, binary: bool = True, outputs: tuple[str, ...] = ()
) -> triton.InferResult:
    text_input = triton.InferInput("text_input", [len(TEXTS)], "BYTES")
    text_input.set_data_from_numpy(np.array([t.encode() for t in TEXTS], dtype=np.object_), binary_data=binary)
    requested = [triton.InferRequestedOutput(name, binary_data=binary) for name in outputs] or None
    return client.infer(model, [text_input], outputs=requested, parameters={"max_new_tokens": MAX_NEW})


def test_server_and_repository(server: Served) -> None:
    client = client_of(server)
    assert client.is_server_live() and client.is_server_ready()
    assert client.is_model_ready("normalize") and client.is_model_ready("tiny")
    assert client.is_model_ready("tiny", "1") and not client.is_model_ready("tiny", "2")
    assert not client.is_model_ready("nope")
    assert set(client.get_server_metadata()["extensions"]) >= {"model_repository", "binary_tensor_data"}
    index = client.get_model_repository_index()
    assert {(m["name"], m["version"], m["state"]) for m in index} == {
        ("normalize", "1", "READY"),
        ("tiny", "1", "READY"),
    }
    metadata = client.get_model_metadata("tiny")
    assert metadata["name"] == "tiny" and metadata["versions"] == ["1"]
    assert metadata["inputs"] == [{"name": "text_input", "datatype": "BYTES", "shape": [-1]}]
    assert [o["name"] for o in metadata["outputs"]] == ["text_output", "token_ids", "cross_attention"]
    assert metadata["outputs"][2]["shape"][1:3] == [2, 2]  # the tiny model's decoder layers and heads


@pytest.mark.parametrize("model", ["normalize", "tiny"])
def test_infer_a_batch_of_8_equals_the_single_model_server(
    server: Served, expected: dict[str, list[str]], model: str
) -> None:
    client = client_of(server)
    result = infer_texts(client, model, outputs=("text_output", "token_ids"))
    texts = [t.decode() for t in result.as_numpy("text_output")]
    assert texts == expected[model]
    ids = result.as_numpy("token_ids")
    assert ids.shape[0] == len(TEXTS) and ids.dtype == np.int64
    response = result.get_response()
    assert response["model_name"] == model and response["model_version"] == "1"
    # The same as JSON tensors, both ways (binary_data=False), and with no outputs named (all but attention).
    as_json = infer_texts(client, model, binary=False, outputs=("text_output",))
    assert [t.decode() if isinstance(t, bytes) else t for t in as_json.as_numpy("text_output")] == expected[model]
    default = infer_texts(client, model)
    assert [t.decode() for t in default.as_numpy("text_output")] == expected[model]
    assert np.array_equal(default.as_numpy("token_ids"), ids)


def test_infer_cross_attention(server: Served) -> None:
    result = infer_texts(client_of(server), "tiny", outputs=("text_output", "cross_attention"))
    attention = result.as_numpy("cross_attention")
    assert attention.dtype == np.float32 and attention.shape[:3] == (len(TEXTS), 2, 2)
    rows = attention.sum(axis=-1)  # every real decoder position's cross attention sums to 1 over the source
    assert np.all((np.abs(rows - 1) < 1e-4) | (rows == 0))
    assert np.any(np.abs(rows - 1) < 1e-4)


def test_load_and_unload(server: Served, expected: dict[str, list[str]]) -> None:
    client = client_of(server)
    client.unload_model("tiny")
    assert not client.is_model_ready("tiny")
    states = {(m["name"], m["version"]): (m["state"], m["reason"]) for m in client.get_model_repository_index()}
    assert states[("tiny", "1")] == ("UNAVAILABLE", "unloaded")
    with pytest.raises(InferenceServerException, match="model 'tiny' has no served version"):
        infer_texts(client, "tiny")
    client.load_model("tiny")
    assert client.is_model_ready("tiny")
    assert [t.decode() for t in infer_texts(client, "tiny").as_numpy("text_output")] == expected["tiny"]
    with pytest.raises(InferenceServerException, match="default model"):
        client.unload_model("normalize")
    with pytest.raises(InferenceServerException, match="no model 'nope'"):
        client.load_model("nope")
    assert client.is_model_ready("normalize")


def test_errors_have_the_oip_shape(server: Served) -> None:
    url = server.url

    def one(datatype: str = "BYTES", shape: list[int] | None = None, data: list[Any] | None = None) -> dict[str, Any]:
        given = ["a"] if data is None else data
        return {"name": "text_input", "shape": shape or [len(given)], "datatype": datatype, "data": given}

    cases = [
        ("/v2/models/nope/infer", {"inputs": [one()]}, 404),
        ("/v2/models/tiny/versions/9/infer", {"inputs": [one()]}, 404),
        ("/v2/models/tiny/infer", {"inputs": [one("INT64", data=[1])]}, 422),
        ("/v2/models/tiny/infer", {"inputs": [one(shape=[2])]}, 422),
        ("/v2/models/tiny/infer", {"inputs": [one()], "parameters": {"max_new_tokens": 10**6}}, 422),
        ("/v2/models/tiny/infer", {"inputs": [one()], "parameters": {"nope": 1}}, 422),
        ("/v2/models/tiny/infer", {"inputs": [one()], "outputs": [{"name": "logits"}]}, 422),
        ("/v2/models/tiny/infer", {"inputs": [one(data=["a"] * 100)]}, 413),
        ("/v2/models/tiny/infer", {"inputs": []}, 422),
        ("/v2/repository/models/..%2Fetc/load", {}, 404),
    ]
    for path, body, status in cases:
        answer = httpx.post(f"{url}{path}", json=body, timeout=60)
        assert answer.status_code == status, (path, body, answer.text)
        assert isinstance(answer.json()["error"], str), answer.text
    broken = httpx.post(f"{url}/v2/models/tiny/infer", content=b"{not json", timeout=60)
    assert broken.status_code == 422 and "not valid JSON" in broken.json()["error"]
    lying = httpx.post(
        f"{url}/v2/models/tiny/infer", content=b"{}", headers={"Inference-Header-Content-Length": "99"}, timeout=60
    )
    assert lying.status_code == 422 and "Inference-Header-Content-Length" in lying.json()["error"]
    missing = httpx.get(f"{url}/v2/models/nope", timeout=60)
    assert missing.status_code == 404 and {"name": "tiny", "version": "1"} in missing.json()["loaded_models"]
