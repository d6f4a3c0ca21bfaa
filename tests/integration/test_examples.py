"""The examples a newcomer sees (/docs and the viewer's buttons) show the bundled model at work: each is text
the normalizer rewrites, not text it copies unchanged."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service.http.app import create_app
from tests.servers import Served, make_settings, serve

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "models" / "normalize" / "1"
COPIED = "La heroica ciudad dormía la siesta."  # the viewer's one example of text that is copied


@pytest.fixture(scope="module")
def bundled() -> Iterator[Served]:
    with serve(create_app(make_settings(model_dir=BUNDLED, runtime={"intra_op_threads": 1}))) as served:
        yield served


def outputs(served: Served, inputs: str | list[str]) -> list[str]:
    r = httpx.post(f"{served.url}/generate", json={"inputs": inputs}, timeout=120)
    assert r.status_code == 200, r.text
    body = r.json()
    return [item["generated_text"] for item in (body if isinstance(body, list) else [body])]


def test_docs_examples_are_rewritten_by_the_model(bundled: Served) -> None:
    schemas = httpx.get(f"{bundled.url}/openapi.json").json()["components"]["schemas"]
    sources: set[str] = set()
    for example in schemas["GenerateRequest"]["examples"]:
        inputs = example["inputs"]
        sources.update([inputs] if isinstance(inputs, str) else inputs)
    for example in schemas["AttentionRequest"]["examples"]:
        sources.add(example["inputs"])
        if example.get("target") is not None:  # the forced target is what the model writes itself
            assert outputs(bundled, example["inputs"]) == [example["target"]]
    got = outputs(bundled, sorted(sources))
    assert [(s, o) for s, o in zip(sorted(sources), got, strict=True) if s == o] == []


def test_viewer_examples_are_rewritten_by_the_model(bundled: Served) -> None:
    page = (ROOT / "service" / "static" / "index.html").read_text(encoding="utf-8")
    examples = [html.unescape(e) for e in re.findall(r'data-example="([^"]+)"', page)]
    default = html.unescape(re.search(r'<textarea id="source"[^>]*>([^<]*)</textarea>', page).group(1))
    sources = [e for e in examples if e != COPIED] + [default]
    assert len(sources) >= 4 and COPIED in examples
    got = outputs(bundled, sources)
    assert [(s, o) for s, o in zip(sources, got, strict=True) if s == o] == []
    assert outputs(bundled, COPIED) == [COPIED]
