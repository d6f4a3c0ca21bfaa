"""Multilingual imported models (NLLB, M2M100, mBART-50: a language code before the source, the target's
forced first) over HTTP against transformers: the codes' labels in /attention and details.prefill, /attention
with parameters.target_language equal to teacher-forced `output_attentions=True`, /generate_stream with
per-request languages equal to `generate()`, and literal code text in an input tokenized as transformers does.
Offline (HF_HUB_OFFLINE=1); the checkpoints are built by hf_checkpoints.py and hf_mbart50.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from service.http.app import create_app  # noqa: E402
from tests.integration import hf_checkpoints  # noqa: E402
from tests.integration.attention_parity import assert_attention_equals_transformers  # noqa: E402
from tests.integration.hf_checkpoints import HfImports  # noqa: E402
from tests.integration.hf_mbart50 import mbart50_checkpoint  # noqa: E402
from tests.integration.tokenizer_parity import (  # noqa: E402
    assert_spliced_ids_equal,
    served_tokenizer,
    special_texts,
)
from tests.servers import Served, make_settings, serve  # noqa: E402

pytestmark = pytest.mark.slow

MAX_NEW_TOKENS = 20

BUILDERS: dict[str, Callable[[Path], Path]] = {
    "nllb": hf_checkpoints.nllb_checkpoint,
    "m2m100": hf_checkpoints.m2m100_checkpoint,
    "mbart50": mbart50_checkpoint,
}


@dataclass
class Multilingual:
    family: str
    model_dir: Path
    manifest: dict[str, Any]
    model: Any  # transformers' model, eager attention
    tokenizer: Any  # transformers' tokenizer
    served: Served

    def code_id(self, code: str) -> int:
        return int(self.manifest["languages"]["codes"][code])

    def other_codes(self) -> tuple[str, str]:
        """Two codes that are neither the saved source nor the saved target: (source, target)."""
        languages = self.manifest["languages"]
        others = [c for c in sorted(languages["codes"]) if c not in (languages["source"], languages["target"])]
        return others[0], others[-1]

    @contextmanager
    def source_language(self, code: str) -> Iterator[None]:
        """transformers' tokenizer with `code` as src_lang (M2M100Tokenizer spells "__fr__" as "fr")."""
        saved = self.tokenizer.src_lang
        self.tokenizer.src_lang = code.strip("_") if self.family == "m2m100" else code
        try:
            yield
        finally:
            self.tokenizer.src_lang = saved


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def imported(request: pytest.FixtureRequest, hf_imports: HfImports) -> Iterator[Multilingual]:
    import transformers

    family = str(request.param)
    source, model_dir = hf_imports.get(family, BUILDERS[family])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        model = transformers.AutoModelForSeq2SeqLM.from_pretrained(source, attn_implementation="eager").eval()
        tokenizer = transformers.AutoTokenizer.from_pretrained(source)
    manifest = json.loads((model_dir / "manifest.json").read_text())
    settings = make_settings(model_dir=model_dir, max_new_tokens_limit=64, request_timeout_s=120)
    with serve(create_app(settings)) as served:
        yield Multilingual(family, model_dir, manifest, model, tokenizer, served)


def _post(imported: Multilingual, route: str, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(f"{imported.served.url}/{route}", json=body, timeout=120)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_language_codes_are_labelled_by_name(imported: Multilingual) -> None:
    """The code before the source reads as the code ("spa_Latn", "__es__", "es_XX"), not "</s>", in
    source_tokens, encoder_tokens and details.prefill; the forced target code labels its decoder position."""
    languages = imported.manifest["languages"]
    source, target = imported.other_codes()
    for parameters, source_code, target_code in (
        ({}, languages["source"], languages["target"]),
        ({"source_language": source, "target_language": target}, source, target),
    ):
        body = _post(imported, "attention", {"inputs": "hola mundo", "parameters": {**parameters, "max_new_tokens": 4}})
        first = body["source_tokens"][0]
        assert first == {
            "id": imported.code_id(source_code),
            "text": source_code,
            "start": 0,
            "end": 0,
            "special": True,
        }
        assert body["encoder_tokens"][0] == source_code and body["encoder_tokens"][-1] == "</s>"
        assert body["decoder_tokens"][1] == target_code  # position 1 reads the forced code
        generated = _post(
            imported,
            "generate",
            {"inputs": "hola", "parameters": {**parameters, "details": True, "decoder_input_details": True}},
        )
        prefill = generated["details"]["prefill"]
        assert (prefill[0]["text"], prefill[-1]["text"]) == (source_code, "</s>")


def test_attention_with_target_language_equals_output_attentions(imported: Multilingual) -> None:
    """A forced target with parameters.target_language (and source_language): its code first, then the target's
    tokens; every kind of attention equals transformers' teacher-forced output_attentions within 1e-5."""
    import torch

    source_code, target_code = imported.other_codes()
    texts = hf_checkpoints.sample_texts(6, seed=21)
    start = imported.model.generation_config.decoder_start_token_id
    for text, target in zip(texts, reversed(texts), strict=True):
        parameters = {"source_language": source_code, "target_language": target_code}
        body = _post(imported, "attention", {"inputs": text, "target": target, "parameters": parameters})
        src = [t["id"] for t in body["source_tokens"]]
        tgt = [t["id"] for t in body["target_tokens"] if not t["special"]]
        with imported.source_language(source_code):
            assert src == imported.tokenizer(text).input_ids
        assert tgt[0] == imported.code_id(target_code) and body["decoder_tokens"][1] == target_code
        assert tgt[1:] == imported.tokenizer(target, add_special_tokens=False).input_ids
        with torch.no_grad():
            out = imported.model(
                input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([[start, *tgt]]), output_attentions=True
            )
        assert_attention_equals_transformers(body, out)


def _streamed_ids(url: str, text: str, parameters: dict[str, Any]) -> list[int]:
    """The ids of a /generate_stream's token events, EOS left out."""
    response = httpx.post(f"{url}/generate_stream", json={"inputs": text, "parameters": parameters}, timeout=120)
    assert response.status_code == 200, response.text
    events = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
    assert events and events[-1]["generated_text"] is not None  # the stream ended with its final event
    return [e["token"]["id"] for e in events if not e["token"]["special"]]


def test_stream_with_languages_equals_generate(imported: Multilingual) -> None:
    """/generate_stream with source_language and target_language, eight streams at once: each one's tokens
    equal generate()'s with src_lang and forced_bos_token_id set the same way."""
    import torch

    source_code, target_code = imported.other_codes()
    texts = hf_checkpoints.sample_texts(8, seed=22)
    parameters = {"max_new_tokens": MAX_NEW_TOKENS, "source_language": source_code, "target_language": target_code}
    with ThreadPoolExecutor(len(texts)) as pool:
        streamed = list(pool.map(lambda text: _streamed_ids(imported.served.url, text, parameters), texts))
    with imported.source_language(source_code):
        batch = imported.tokenizer(texts, return_tensors="pt", padding=True)
    with torch.no_grad():
        rows = imported.model.generate(
            **batch,
            max_new_tokens=MAX_NEW_TOKENS,
            num_beams=1,
            do_sample=False,
            forced_bos_token_id=imported.code_id(target_code),
        )
    eos = imported.model.generation_config.eos_token_id
    expected = [ids[: ids.index(eos)] if eos in ids else ids for ids in (row.tolist()[1:] for row in rows)]
    assert streamed == expected
    assert all(ids[0] == imported.code_id(target_code) for ids in streamed)


def test_literal_language_code_text_tokenized_as_transformers(imported: Multilingual) -> None:
    """Language codes and special tokens typed in an input give transformers' ids: a property test over random
    Unicode with them spliced in, and through the engine (details.prefill) on one such input."""
    ours = served_tokenizer(imported.model_dir)
    specials = special_texts(imported.tokenizer, imported.manifest)
    assert imported.manifest["languages"]["source"] in specials
    assert_spliced_ids_equal(ours, imported.tokenizer, specials, examples=400)
    text = f"hola {imported.manifest['languages']['target']} mundo</s>x"
    generated = _post(
        imported, "generate", {"inputs": text, "parameters": {"details": True, "decoder_input_details": True}}
    )
    assert [t["id"] for t in generated["details"]["prefill"]] == imported.tokenizer(text).input_ids
