"""A model directory's text rules over a real uvicorn: the edit guard (`edit_guard`) and segmentation of
long inputs (`segmentation`), on the bundled normalizer and on a copy of the session's tiny model
whose manifest declares both (the tiny model's outputs are mostly wrong: the guard must hold anyway).

test_a_long_document_converts_every_expression needs a model trained on multi-line text (the
retrained bundled model); everything else holds for any model.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from export.text_rules import text_rules
from model.data import generate_examples
from model.words import edit_guard_spec
from service.engine.edit_guard import EditGuard
from service.engine.guard_alignment import split_tokens
from service.http.app import create_app
from tests.servers import Served, make_settings, serve

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parents[2]
BUNDLED = ROOT / "models" / "normalize" / "1"
CONSUMABLE = EditGuard.from_manifest(edit_guard_spec(), where="model.words").consumable_words


@pytest.fixture(scope="module")
def ruled_tiny_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with the bundled task's edit_guard and segmentation added to its manifest (the
    manifest is not in its own `files`, so editing it keeps every sha256 valid)."""
    directory = tmp_path_factory.mktemp("ruled") / "tiny" / "1"
    shutil.copytree(tiny_model_dir, directory)
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest.update(text_rules({"train": {"data": None, "task": "seq2seq"}}))
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return directory


def _served(model_dir: Path, **overrides: Any) -> Iterator[Served]:
    settings = make_settings(model_dir=model_dir, max_new_tokens_limit=128, request_timeout_s=300, **overrides)
    with serve(create_app(settings), timeout_s=120) as served:
        yield served


@pytest.fixture(scope="module")
def bundled() -> Iterator[Served]:
    yield from _served(BUNDLED)


@pytest.fixture
def tiny_guarded(ruled_tiny_dir: Path) -> Iterator[Served]:
    yield from _served(ruled_tiny_dir)


@pytest.fixture
def tiny_raw(ruled_tiny_dir: Path) -> Iterator[Served]:
    yield from _served(ruled_tiny_dir, edit_guard=False)


def _generate(url: str, inputs: str, **parameters: Any) -> httpx.Response:
    return httpx.post(f"{url}/generate", json={"inputs": inputs, "parameters": parameters}, timeout=600)


def _metric(url: str, name: str) -> float:
    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in /metrics")


def _no_number_word(text: str) -> bool:
    return not any(token.lower() in CONSUMABLE for token in split_tokens(text))


def _fits(text: str, limit: int) -> bool:
    return len(text.encode("utf-8")) + 1 <= limit  # byte-level BPE: at most a token per byte, plus EOS


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(min_size=1, max_size=23).filter(_no_number_word))  # 23 characters: within 96 tokens
def test_text_without_number_words_comes_back_unchanged(bundled: Served, text: str) -> None:
    """Whatever the model writes, the guard gives back any text that holds no number word."""
    assert _fits(text, 96)
    response = _generate(bundled.url, text, max_new_tokens=128)
    assert response.status_code == 200, response.text
    assert response.json()["generated_text"] == text


def test_capitalized_number_words_are_read_and_the_capitals_come_back(bundled: Served) -> None:
    """The bundled model declares case folding: it reads title-case words in lower case ("Doce" as
    "doce"), and the words it copies get the source's capitals back, in the text, the tokens and the stream."""
    text = (
        "Quinientas cuarenta y cuatro casas.\nAna y Luis llegaron el tres de mayo.\nChapter Twelve\n"
        "La sesión empezó tarde. Doce diputados no votaron.\nEl Tres de Mayo\nOn May third, I left."
    )
    want = (
        "544 casas.\nAna y Luis llegaron el 3 de mayo.\nChapter 12\n"
        "La sesión empezó tarde. 12 diputados no votaron.\nEl 3 de Mayo\nOn May 3, I left."
    )
    whole = _generate(bundled.url, text, details=True, max_new_tokens=128).json()
    assert whole["generated_text"] == want
    assert "".join(token["text"] for token in whole["details"]["tokens"]) == want
    stream = httpx.post(
        f"{bundled.url}/generate_stream", json={"inputs": text, "parameters": {"max_new_tokens": 128}}, timeout=600
    ).text
    events = [json.loads(line[5:]) for line in stream.splitlines() if line.startswith("data:")]
    assert "".join(event["token"]["text"] for event in events) == want == events[-1]["generated_text"]
    attention = httpx.post(f"{bundled.url}/attention", json={"inputs": "Doce diputados"}, timeout=60).json()
    assert attention["target_text"] == "12 diputados"
    assert "".join(token["text"] for token in attention["source_tokens"]).startswith("Doce diputados")


def _document(min_chars: int) -> tuple[str, str]:
    """Generated one-line examples (source and target), one per line, a blank line every fifth."""
    sources: list[str] = []
    targets: list[str] = []
    for index, example in enumerate(generate_examples(2000, seed=99, split="test")):
        if re.search(r"\s{2,}|[\r\n\t]", example.source) or not 10 <= len(example.source) <= 140:
            continue
        separator = "\n\n" if index % 5 == 4 else "\n"
        sources.append(example.source + separator)
        targets.append(example.target + separator)
        if sum(map(len, sources)) >= min_chars:
            break
    return "".join(sources), "".join(targets)


def _lines(text: str) -> list[bool]:
    return [bool(line) for line in text.split("\n")]


def test_a_long_document_keeps_its_lines(bundled: Served) -> None:
    source, _ = _document(5000)
    assert len(source) >= 5000
    response = _generate(bundled.url, source, details=True)
    assert response.status_code == 200, response.text
    body = response.json()
    assert _lines(body["generated_text"]) == _lines(source)
    assert body["details"]["edit_guard"] is not None


def test_a_long_document_converts_every_expression(bundled: Served) -> None:
    """Needs the retrained bundled model (multi-line training data): fails on a model that is not."""
    source, target = _document(5000)
    response = _generate(bundled.url, source)
    assert response.status_code == 200, response.text
    output = response.json()["generated_text"]
    lines = target.split("\n")
    wrong = [(s, o) for s, o in zip(lines, output.split("\n"), strict=True) if s != o]
    # The bar is every line; the model still misses some of its longest numbers (a digit of
    # twelve dropped or doubled) and, rarely, a date in word salad: at most 3% of the lines, for now.
    # Leap days are apart: the stage-6 model reads most as impossible (README; the contract test's strict
    # xfail pins one), and a document may hold several.
    assert len([pair for pair in wrong if "-02-29" not in pair[0]]) <= 0.03 * len(lines), wrong


def test_the_guard_reverts_the_tiny_models_mistakes_and_counts_them(tiny_guarded: Served) -> None:
    url = tiny_guarded.url
    texts = ["Привет, мир. Hola a todos.", "Precio: 3,50 €.", "日本語のテキスト", "Tengo tres gatos."]
    reverted = 0
    for text in texts:
        response = _generate(url, text, details=True)
        assert response.status_code == 200, response.text
        body = response.json()
        spans = body["details"]["edit_guard"]["reverted"]
        reverted += len(spans)
        assert all(set(span) == {"source", "output"} for span in spans)
        if text != "Tengo tres gatos.":
            assert body["generated_text"] == text
    assert _metric(url, "atento_edit_guard_reverted_spans_total") == reverted
    stream = httpx.post(
        f"{url}/generate_stream", json={"inputs": texts[0], "parameters": {"details": True}}, timeout=60
    ).text
    last = json.loads([line for line in stream.splitlines() if line.startswith("data:")][-1][5:])
    assert last["generated_text"] == texts[0]
    assert last["details"]["edit_guard"]["reverted"] is not None
    attention = httpx.post(f"{url}/attention", json={"inputs": texts[0]}, timeout=60).json()
    assert "target_text" in attention  # attention shows the model's own output: no guard there


def _long_text(sentences: int) -> str:
    lines = [f"Frase número {i} con palabras.{' Otra más.' if i % 3 else ''}" for i in range(sentences)]
    return "  " + "\n".join(lines[:6]) + "\n\n" + " ".join(lines[6:]) + "\n"


def test_a_segmented_input_streams_its_pieces_in_order(tiny_raw: Served) -> None:
    url = tiny_raw.url
    text = _long_text(40)
    assert len(text.encode()) > 400  # well over the tiny model's 129 tokens
    steps_before = _metric(url, "atento_batch_size_count") - _metric(url, 'atento_batch_size_bucket{le="1.0"}')
    whole = _generate(url, text, details=True, max_new_tokens=16).json()
    events = [
        json.loads(line[5:])
        for line in httpx.post(
            f"{url}/generate_stream", json={"inputs": text, "parameters": {"details": True, "max_new_tokens": 16}}
        ).text.splitlines()
        if line.startswith("data:")
    ]
    streamed = "".join(event["token"]["text"] for event in events)
    assert events[-1]["generated_text"] == whole["generated_text"] == streamed  # guard off: nothing differs
    assert whole["generated_text"].startswith("  ") and whole["generated_text"].endswith("\n")
    assert whole["details"]["generated_tokens"] == len(whole["details"]["tokens"]) == len(events)
    assert whole["details"]["finish_reason"] in ("length", "eos_token")
    assert whole["details"]["edit_guard"] is None
    # The pieces were decoded together: steps with more than one row.
    steps_after = _metric(url, "atento_batch_size_count") - _metric(url, 'atento_batch_size_bucket{le="1.0"}')
    assert steps_after > steps_before


def test_what_cannot_be_segmented_gets_413(tiny_raw: Served, live_server: Served) -> None:
    one_sentence = "palabra " * 300 + "final"
    response = _generate(tiny_raw.url, one_sentence)
    assert response.status_code == 413
    message = response.json()["error"]
    assert re.search(r"the limit is \d+ tokens, about \d+ characters \(estimated from this input's", message)
    # One layer of cross attention, heads averaged: within the attention budget, so the limit answers.
    selection = {"kinds": ["cross"], "layers": [0], "mean_heads": True}
    attention = httpx.post(f"{tiny_raw.url}/attention", json={"inputs": _long_text(40), **selection}, timeout=60)
    assert attention.status_code == 413
    assert "attention covers one model call" in attention.json()["error"]
    with_attention = _generate(tiny_raw.url, _long_text(40), return_attention=True)
    assert with_attention.status_code == 413
    # Without `segmentation` in its manifest a model keeps the plain limit.
    plain = _generate(live_server.url, _long_text(40))
    assert plain.status_code == 413
    assert "limit" in plain.json()["error"]


def test_openapi_documents_the_edit_guard_details(tiny_raw: Served) -> None:
    openapi = httpx.get(f"{tiny_raw.url}/openapi.json").json()
    schemas = openapi["components"]["schemas"]
    assert "edit_guard" in schemas["Details"]["properties"]
    assert "edit_guard" in json.dumps(openapi["paths"]["/generate_stream"])  # StreamDetails, inline
    assert set(schemas["RevertedEdit"]["properties"]) == {"source", "output"}
