"""`python -m export --from-transformers`: tiny random Hugging Face checkpoints (tests/integration/
hf_checkpoints.py) exported, served over HTTP, and compared with transformers itself: greedy and beam
outputs of 200 mixed inputs served in one batch equal `generate()`'s, teacher-forced attention equals
`output_attentions=True`, tokenizer ids equal the Hugging Face tokenizer's (special tokens' text typed in an
input included). Offline (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from export.__main__ import main as export_main  # noqa: E402
from service.http.app import create_app  # noqa: E402
from tests.integration import hf_checkpoints  # noqa: E402
from tests.integration.attention_parity import assert_attention_equals_transformers  # noqa: E402
from tests.integration.hf_checkpoints import HfImports  # noqa: E402
from tests.integration.tokenizer_parity import assert_spliced_ids_equal, served_tokenizer, special_texts  # noqa: E402
from tests.servers import Served, make_settings, serve  # noqa: E402

pytestmark = pytest.mark.slow

INPUTS = 200
MAX_NEW_TOKENS = 20
NUM_BEAMS, LENGTH_PENALTY = 4, 1.2


@dataclass
class Imported:
    family: str
    source: Path  # the Hugging Face directory
    model_dir: Path  # atento's
    model: Any  # transformers' model, eager attention
    tokenizer: Any  # transformers' tokenizer
    served: Served


BUILDERS: dict[str, Callable[[Path], Path]] = {
    "marian": hf_checkpoints.marian_checkpoint,
    "bart": hf_checkpoints.bart_checkpoint,
    "mbart": hf_checkpoints.mbart_checkpoint,
    "t5": hf_checkpoints.t5_checkpoint,
    "nllb": hf_checkpoints.nllb_checkpoint,
    "m2m100": hf_checkpoints.m2m100_checkpoint,
}


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def imported(request: pytest.FixtureRequest, hf_imports: HfImports) -> Iterator[Imported]:
    import transformers

    family = str(request.param)
    source, model_dir = hf_imports.get(family, BUILDERS[family])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        model = transformers.AutoModelForSeq2SeqLM.from_pretrained(source, attn_implementation="eager").eval()
        tokenizer = transformers.AutoTokenizer.from_pretrained(source)
        settings = make_settings(
            model_dir=model_dir, max_batch_inputs=INPUTS, max_new_tokens_limit=64, request_timeout_s=120
        )
        with serve(create_app(settings)) as served:
            yield Imported(family, source, model_dir, model, tokenizer, served)


def _generated(row: Any, *, eos: int) -> list[int]:
    """A generate() row without its start token, cut before EOS (and its padding)."""
    ids = row.tolist()[1:]
    return ids[: ids.index(eos)] if eos in ids else ids


def _served_ids(imported: Imported, texts: list[str], parameters: dict[str, Any]) -> list[list[int]]:
    response = httpx.post(
        f"{imported.served.url}/generate",
        json={"inputs": texts, "parameters": {**parameters, "details": True}},
        timeout=300,
    )
    assert response.status_code == 200, response.text
    return [[t["id"] for t in item["details"]["tokens"] if not t["special"]] for item in response.json()]


@pytest.mark.parametrize(
    "parameters",
    [{}, {"num_beams": NUM_BEAMS, "length_penalty": LENGTH_PENALTY}],
    ids=["greedy", "beam"],
)
def test_outputs_equal_generate(imported: Imported, parameters: dict[str, Any]) -> None:
    import torch

    texts = hf_checkpoints.sample_texts(INPUTS, seed=11)
    served = _served_ids(imported, texts, {"max_new_tokens": MAX_NEW_TOKENS, **parameters})
    batch = imported.tokenizer(texts, return_tensors="pt", padding=True)
    with torch.no_grad():
        reference = imported.model.generate(
            **batch,
            max_new_tokens=MAX_NEW_TOKENS,
            num_beams=parameters.get("num_beams", 1),
            do_sample=False,
            length_penalty=parameters.get("length_penalty", 1.0),
        )
    eos = imported.model.generation_config.eos_token_id
    expected = [_generated(row, eos=eos) for row in reference]
    assert sum(len(ids) < MAX_NEW_TOKENS for ids in expected) >= INPUTS // 10  # mixed lengths, some end in EOS
    differing = [i for i in range(INPUTS) if served[i] != expected[i]]
    assert not differing, (
        f"{len(differing)} differ, first {texts[differing[0]]!r}: {served[differing[0]]} != {expected[differing[0]]}"
    )
    bad_words = imported.model.generation_config.bad_words_ids or []  # Marian's: <pad>
    assert all(word[0] not in ids for word in bad_words if len(word) == 1 for ids in served)


def test_attention_equals_output_attentions(imported: Imported) -> None:
    import torch

    texts = hf_checkpoints.sample_texts(12, seed=12)
    for source, target in zip(texts, reversed(texts), strict=True):
        response = httpx.post(f"{imported.served.url}/attention", json={"inputs": source, "target": target}, timeout=60)
        assert response.status_code == 200, response.text
        body = response.json()
        src = [t["id"] for t in body["source_tokens"]]
        tgt = [t["id"] for t in body["target_tokens"] if not t["special"]]
        start = imported.model.generation_config.decoder_start_token_id
        with torch.no_grad():
            out = imported.model(
                input_ids=torch.tensor([src]),
                decoder_input_ids=torch.tensor([[start, *tgt]]),
                output_attentions=True,
            )
        assert src == imported.tokenizer(source).input_ids
        assert_attention_equals_transformers(body, out)


def test_tokenizer_ids_equal(imported: Imported) -> None:
    manifest = json.loads((imported.model_dir / "manifest.json").read_text())
    ours = served_tokenizer(imported.model_dir)  # as the engine builds it
    rng = np.random.default_rng(0)
    texts = hf_checkpoints.sample_texts(300, seed=13)
    # Arbitrary Unicode: random code points from several scripts, emoji, controls and combining marks.
    ranges = [(0x20, 0x7F), (0xA0, 0x250), (0x300, 0x370), (0x400, 0x500), (0x4E00, 0x4E80), (0x1F600, 0x1F650)]
    for _ in range(300):
        lo, hi = ranges[int(rng.integers(len(ranges)))]
        texts.append("".join(chr(int(c)) for c in rng.integers(lo, hi, size=int(rng.integers(1, 30)))))
    codes = set(manifest["languages"]["codes"].values()) if manifest["languages"] else set()
    for text in texts:
        assert ours.encode(text)[0] == imported.tokenizer(text).input_ids, text
        # transformers 5's M2M100Tokenizer keeps language codes in skip_special_tokens decoding; atento skips them.
        ids = [i for i in imported.tokenizer(text).input_ids if i not in codes]
        assert ours.decode(ids) == imported.tokenizer.decode(ids, skip_special_tokens=True), text
    # Special tokens' text typed in an input ("</s>", "<extra_id_0>", language codes) reads as transformers reads it.
    assert_spliced_ids_equal(ours, imported.tokenizer, special_texts(imported.tokenizer, manifest), examples=200)


def test_int8_quantizes_the_output_projection(imported: Imported, tmp_path: Path) -> None:
    """The int8 decoder keeps no float MatMul over the output projection's weight (d_model x vocab, or the
    tied embedding through a Transpose, as Marian, T5 and BART tie it): export/quantize.py folds the Transpose
    so that dynamic quantization takes it too, the largest MatMul of a decoder step.

    The import's own int8 variant is kept only where its outputs agree with fp32 closely enough, which
    depends on the CPU (without VNNI, u8 x s8 products saturate): the decoder is quantized here instead."""
    import onnx

    from export.quantize import quantize_int8

    manifest = json.loads((imported.model_dir / "manifest.json").read_text())
    vocab_size = manifest["config"]["vocab_size"]
    quantize_int8(imported.model_dir / manifest["variants"]["fp32"]["decoder"], tmp_path / "decoder.int8.onnx")
    graph = onnx.load(str(tmp_path / "decoder.int8.onnx")).graph
    shapes = {init.name: tuple(init.dims) for init in graph.initializer}
    producers = {output: node for node in graph.node for output in node.output}

    def projection_weight(name: str) -> bool:
        transpose = producers.get(name)
        weight = transpose.input[0] if transpose is not None and transpose.op_type == "Transpose" else name
        return len(shapes.get(weight, ())) == 2 and vocab_size in shapes[weight]

    float_matmuls = [n for n in graph.node if n.op_type in ("MatMul", "Gemm")]
    assert not [n.name for n in float_matmuls if projection_weight(n.input[1])]
    assert {n.op_type for n in graph.node} & {"MatMulInteger", "DynamicQuantizeMatMul"}


LANGUAGES = {"mbart": (None, "en_XX"), "nllb": ("spa_Latn", "eng_Latn"), "m2m100": ("__es__", "__en__")}


def test_manifest_records_languages(imported: Imported) -> None:
    languages = json.loads((imported.model_dir / "manifest.json").read_text())["languages"]
    if imported.family not in LANGUAGES:
        assert languages is None
        return
    source, target = LANGUAGES[imported.family]
    assert (languages["source"], languages["target"]) == (source, target)
    for code, token_id in languages["codes"].items():
        assert imported.tokenizer.convert_tokens_to_ids(code) == token_id


def _lines_over_half_the_limit(imported: Imported, limit: int, count: int) -> list[str]:
    """`count` lines of corpus sentences, each between 55% and 90% of the source limit in the model's tokens:
    one line fits, two do not, so the service must cut the text at its line breaks, a line a piece."""
    sentences = iter(hf_checkpoints.corpus("plain_es", "plain_en", "number_es", "date_en") * 50)
    lines: list[str] = []
    while len(lines) < count:
        line = next(sentences)
        while len(imported.tokenizer(line).input_ids) < 0.55 * limit:
            longer = f"{line} {next(sentences)}"
            if len(imported.tokenizer(longer).input_ids) > 0.9 * limit:
                continue
            line = longer
        lines.append(line)
    return lines


def test_a_long_input_is_served_in_pieces(imported: Imported) -> None:
    """Issue 19: an imported model declares `segmentation`, so an input over its source limit is cut at line
    breaks and sentences and its pieces are decoded in one batch, joined exactly, as for the bundled model."""
    manifest = json.loads((imported.model_dir / "manifest.json").read_text())
    assert manifest["segmentation"] == {"segmenter": "sentencex", "language": "en"}
    lines = _lines_over_half_the_limit(imported, manifest["max_source_tokens"], 3)
    text = "\n".join(lines) + "\n"
    assert len(imported.tokenizer(text).input_ids) > manifest["max_source_tokens"]
    parameters = {"max_new_tokens": 8}
    response = httpx.post(
        f"{imported.served.url}/generate", json={"inputs": text, "parameters": parameters}, timeout=300
    )
    assert response.status_code == 200, response.text[:300]
    alone = httpx.post(f"{imported.served.url}/generate", json={"inputs": lines, "parameters": parameters}, timeout=300)
    assert alone.status_code == 200, alone.text[:300]
    assert response.json()["generated_text"] == "\n".join(item["generated_text"] for item in alone.json()) + "\n"


def _post_together(imported: Imported, groups: list[tuple[list[str], dict[str, Any]]]) -> list[list[list[int]]]:
    """Each group posted as one list request, all at once, so that the server decodes them in the same batch."""
    with ThreadPoolExecutor(len(groups)) as pool:
        futures = [pool.submit(_served_ids, imported, texts, parameters) for texts, parameters in groups]
        return [future.result() for future in futures]


def _reference(imported: Imported, texts: list[str], **settings: Any) -> list[list[int]]:
    import torch

    batch = imported.tokenizer(texts, return_tensors="pt", padding=True)
    settings = {"num_beams": 1, "length_penalty": 1.0, **settings}  # atento's defaults, not generation_config's
    with torch.no_grad():
        rows = imported.model.generate(**batch, max_new_tokens=MAX_NEW_TOKENS, do_sample=False, **settings)
    return [_generated(row, eos=imported.model.generation_config.eos_token_id) for row in rows]


def _other_codes(manifest: dict[str, Any], count: int) -> list[str]:
    languages = manifest["languages"]
    return [c for c in languages["codes"] if c not in (languages["source"], languages["target"])][:count]


def test_languages_per_request_equal_generate(imported: Imported) -> None:
    """Default languages, another target, and another source and target, decoded together; each equals
    generate() with the tokenizer's src_lang and forced_bos_token_id set the same way."""
    manifest = json.loads((imported.model_dir / "manifest.json").read_text())
    if manifest["languages"] is None:
        response = httpx.post(
            f"{imported.served.url}/generate", json={"inputs": "a", "parameters": {"target_language": "fra_Latn"}}
        )
        assert response.status_code == 422 and "has no languages" in response.json()["error"]
        return
    others = _other_codes(manifest, 2)  # the tiny mBART has one code besides its default
    target, source = others[0], others[-1]
    texts = hf_checkpoints.sample_texts(180, seed=14)
    asked = [{}, {"target_language": target}, {"target_language": target, "source_language": source}]
    if manifest["languages"]["source"] is None:  # mBART's tokenizer here puts no code in the source
        asked = asked[:2]
        response = httpx.post(
            f"{imported.served.url}/generate", json={"inputs": "a", "parameters": {"source_language": source}}
        )
        assert response.status_code == 422 and "no language code" in response.json()["error"]
    groups = [(texts[i::3], {"max_new_tokens": MAX_NEW_TOKENS, **p}) for i, p in enumerate(asked)]
    served = _post_together(imported, groups)
    saved_source = imported.tokenizer.src_lang if hasattr(imported.tokenizer, "src_lang") else None
    for (group_texts, parameters), got in zip(groups, served, strict=True):
        forced = manifest["languages"]["codes"][parameters.get("target_language", manifest["languages"]["target"])]
        if "source_language" in parameters:  # M2M100Tokenizer's src_lang is "fr" for the code "__fr__"
            code = parameters["source_language"]
            imported.tokenizer.src_lang = code.strip("_") if imported.family == "m2m100" else code
        try:
            expected = _reference(imported, group_texts, forced_bos_token_id=forced)
        finally:
            if saved_source is not None:
                imported.tokenizer.src_lang = saved_source
        assert got == expected, parameters
    response = httpx.post(
        f"{imported.served.url}/generate", json={"inputs": "a", "parameters": {"target_language": "xx_YY"}}
    )
    assert response.status_code == 422
    assert "'xx_YY' is not a language of this model; known: " in response.json()["error"]
    info = httpx.get(f"{imported.served.url}/info").json()
    assert info["languages"]["codes"][target] == manifest["languages"]["codes"][target]


def _common_tokens(rows: list[list[int]], count: int, *, forced: int | None) -> list[int]:
    """The most written tokens, but the forced first one (a forced token overrides bad words, as in transformers)."""
    ids, counts = np.unique(np.asarray([t for row in rows for t in row if t != forced]), return_counts=True)
    return [int(i) for i in ids[np.argsort(-counts, kind="stable")][:count]]


@pytest.mark.parametrize("strategy", ["greedy", "beam", "sample"])
def test_request_rules_mixed_in_one_batch_equal_generate(imported: Imported, strategy: str) -> None:
    """no_repeat_ngram_size and bad words (ids and strings) per request, three settings decoded together:
    greedy and beam equal generate() with the same settings (bad words added to the model's); sampling obeys them."""
    texts = hf_checkpoints.sample_texts(120, seed=15)
    beam = {"num_beams": NUM_BEAMS, "length_penalty": LENGTH_PENALTY} if strategy == "beam" else {}
    default = _reference(imported, texts, **beam)
    common = _common_tokens(
        default, 3, forced=imported.model.generation_config.forced_bos_token_id
    )  # rules that bite: the tokens the model writes most
    model_bad = [list(w) for w in imported.model.generation_config.bad_words_ids or []]
    word = imported.tokenizer.decode([common[2]], skip_special_tokens=True).strip() or "de"
    asked = [
        {"no_repeat_ngram_size": 2},
        {"no_repeat_ngram_size": 0, "bad_words_ids": [[common[0]], [common[1], common[2]]]},
        {"bad_words": [word]},
    ]
    sampling = {"do_sample": True, "seed": 5, "top_k": 5} if strategy == "sample" else {}
    groups = [(texts[i::3], {"max_new_tokens": MAX_NEW_TOKENS, **beam, **sampling, **p}) for i, p in enumerate(asked)]
    served = _post_together(imported, groups)
    plain = imported.tokenizer([word, " " + word], add_special_tokens=False).input_ids
    as_ids = [[list(map(int, w)) for w in dict.fromkeys(tuple(x) for x in plain)]]
    for (group_texts, parameters), got, extra in zip(
        groups, served, [[], asked[1]["bad_words_ids"], *as_ids], strict=True
    ):
        bad = model_bad + extra
        ngram = parameters.get("no_repeat_ngram_size", imported.model.generation_config.no_repeat_ngram_size)
        if strategy == "sample":
            for ids in got:
                grams = [tuple(ids[i : i + ngram]) for i in range(len(ids) - ngram + 1)] if ngram else []
                assert len(grams) == len(set(grams)), (parameters, ids)
                assert not [w for w in bad if any(ids[i : i + len(w)] == w for i in range(len(ids)))], ids
            continue
        expected = _reference(imported, group_texts, no_repeat_ngram_size=ngram, bad_words_ids=bad or None, **beam)
        assert got == expected, parameters
    if strategy == "greedy":
        assert served[1] != [default[i] for i in range(1, len(texts), 3)]  # the rules changed outputs


def test_multilingual_marian_reads_the_target_code_off_the_source(tmp_path: Path) -> None:
    """A `>>fra<<` code first in the source, written or asked for as target_language, gives transformers'
    ids and generate()'s output for the same text with the code; /info lists the codes."""
    import torch
    import transformers

    codes = (">>fra<<", ">>spa<<")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        source = hf_checkpoints.marian_checkpoint(tmp_path / "hf", codes=codes)
        model_dir = tmp_path / "models" / "marian-mul" / "1"
        assert export_main(["--from-transformers", str(source), "--out", str(model_dir), "--no-int8"]) == 0
        model = transformers.AutoModelForSeq2SeqLM.from_pretrained(source).eval()
        tokenizer = transformers.AutoTokenizer.from_pretrained(source)
    texts = hf_checkpoints.sample_texts(40, seed=16)
    settings = make_settings(
        model_dir=model_dir, max_batch_inputs=INPUTS, max_new_tokens_limit=64, request_timeout_s=60
    )
    with serve(create_app(settings)) as served:
        assert httpx.get(f"{served.url}/info").json()["languages"]["codes"] == {
            c: tokenizer.convert_tokens_to_ids(c) for c in codes
        }
        written = [f">>spa<< {t}" for t in texts[:20]] + [f">>xx<<{t}" for t in texts[20:]]
        asked = _served_ids_at(served.url, texts, {"max_new_tokens": MAX_NEW_TOKENS, "target_language": ">>fra<<"})
        own = _served_ids_at(served.url, written, {"max_new_tokens": MAX_NEW_TOKENS})
        details = httpx.post(
            f"{served.url}/generate",
            json={"inputs": written[0], "parameters": {"decoder_input_details": True, "details": True}},
        ).json()["details"]
        assert [t["id"] for t in details["prefill"]] == tokenizer(written[0]).input_ids
    for inputs, got in (([f">>fra<<{t}" for t in texts], asked), (written, own)):
        batch = tokenizer(inputs, return_tensors="pt", padding=True)
        with torch.no_grad():
            rows = model.generate(**batch, max_new_tokens=MAX_NEW_TOKENS, num_beams=1, do_sample=False)
        assert got == [_generated(row, eos=model.generation_config.eos_token_id) for row in rows]


def _served_ids_at(url: str, texts: list[str], parameters: dict[str, Any]) -> list[list[int]]:
    response = httpx.post(
        f"{url}/generate", json={"inputs": texts, "parameters": {**parameters, "details": True}}, timeout=300
    )
    assert response.status_code == 200, response.text
    return [[t["id"] for t in item["details"]["tokens"] if not t["special"]] for item in response.json()]
