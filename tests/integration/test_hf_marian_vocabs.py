"""Issue 21: Marian with separate source and target vocabularies (vocab.json + source.spm for inputs,
target_vocab.json + target.spm for outputs, config.json's decoder_vocab_size), imported with a target
tokenizer and served over HTTP: source ids equal MarianTokenizer's, target ids its `text_target` ids, greedy and
beam outputs of 200 mixed inputs in one batch equal `generate()`, teacher-forced attention equals
`output_attentions=True`, and every output text (details, streaming, stop sequences, bad words, forced targets,
attention labels) comes from the target vocabulary. Offline (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from export.__main__ import main as export_main  # noqa: E402
from service.engine.model_dir import load_model_directory  # noqa: E402
from service.engine.tokenizer import ModelTokenizers, load_tokenizers  # noqa: E402
from service.http.app import create_app  # noqa: E402
from tests.integration import hf_checkpoints  # noqa: E402
from tests.integration.attention_parity import assert_attention_equals_transformers  # noqa: E402
from tests.integration.tokenizer_parity import assert_spliced_ids_equal, special_texts  # noqa: E402
from tests.servers import Served, make_settings, serve  # noqa: E402

pytestmark = pytest.mark.slow

INPUTS = 200
MAX_NEW_TOKENS = 20
NUM_BEAMS, LENGTH_PENALTY = 4, 1.2


@dataclass
class Imported:
    source: Path  # the Hugging Face directory
    model_dir: Path  # atento's
    manifest: dict[str, Any]
    model: Any  # transformers' MarianMTModel, eager attention
    tokenizer: Any  # transformers' MarianTokenizer (separate_vocabs)
    ours: ModelTokenizers  # the service's, as the engine loads them
    served: Served


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Imported]:
    import transformers

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        root = tmp_path_factory.mktemp("hf-marian-vocabs")
        source = hf_checkpoints.marian_separate_vocabs_checkpoint(root / "hf")
        model_dir = root / "models" / "marian-vocabs" / "1"
        assert export_main(["--from-transformers", str(source), "--out", str(model_dir)]) == 0
        model = transformers.AutoModelForSeq2SeqLM.from_pretrained(source, attn_implementation="eager").eval()
        tokenizer = transformers.AutoTokenizer.from_pretrained(source)
        manifest = json.loads((model_dir / "manifest.json").read_text())
        ours = load_tokenizers(load_model_directory(model_dir))
        settings = make_settings(
            model_dir=model_dir, max_batch_inputs=INPUTS, max_new_tokens_limit=64, request_timeout_s=120
        )
        with serve(create_app(settings)) as served:
            yield Imported(source, model_dir, manifest, model, tokenizer, ours, served)


def _target_ids(imported: Imported, text: str) -> list[int]:
    """MarianTokenizer's output-side ids of `text` (target.spm, target_vocab.json), without EOS."""
    return list(imported.tokenizer(text_target=text, add_special_tokens=False).input_ids)


def _decoded(imported: Imported, ids: list[int]) -> str:
    return str(imported.tokenizer.decode(ids, skip_special_tokens=True))


def _generated(row: Any, *, eos: int) -> list[int]:
    """A generate() row without its start token, cut before EOS (and its padding)."""
    ids = row.tolist()[1:]
    return ids[: ids.index(eos)] if eos in ids else ids


def _reference(imported: Imported, texts: list[str], **settings: Any) -> list[list[int]]:
    import torch

    batch = imported.tokenizer(texts, return_tensors="pt", padding=True)
    settings = {"num_beams": 1, "length_penalty": 1.0, **settings}  # atento's defaults, not generation_config's
    with torch.no_grad():
        rows = imported.model.generate(**batch, max_new_tokens=MAX_NEW_TOKENS, do_sample=False, **settings)
    return [_generated(row, eos=imported.model.generation_config.eos_token_id) for row in rows]


def _generate(imported: Imported, inputs: Any, parameters: dict[str, Any]) -> Any:
    response = httpx.post(
        f"{imported.served.url}/generate",
        json={"inputs": inputs, "parameters": {"max_new_tokens": MAX_NEW_TOKENS, "details": True, **parameters}},
        timeout=300,
    )
    assert response.status_code == 200, response.text
    return response.json()


def _ids(item: dict[str, Any]) -> list[int]:
    return [t["id"] for t in item["details"]["tokens"] if not t["special"]]


def test_the_manifest_gives_each_side_its_vocabulary(imported: Imported) -> None:
    """tokenizer.json and source_vocabulary are the encoder's; target_tokenizer.json, special_tokens, config's
    vocab_size and the bad words (<pad>, never generated) the decoder's."""
    manifest, hf_config = imported.manifest, imported.model.config
    target_vocab = json.loads((imported.source / "target_vocab.json").read_text())
    source_vocab = json.loads((imported.source / "vocab.json").read_text())
    assert manifest["target_tokenizer"] == "target_tokenizer.json" and "target_tokenizer.json" in manifest["files"]
    assert manifest["source_vocabulary"] == {"size": len(source_vocab), "unk": source_vocab["<unk>"]}
    assert manifest["config"]["vocab_size"] == hf_config.decoder_vocab_size == len(target_vocab) != len(source_vocab)
    assert manifest["special_tokens"] == {
        "pad": target_vocab["<pad>"],
        "bos": target_vocab["<pad>"],
        "eos": target_vocab["</s>"],
        "unk": target_vocab["<unk>"],
    }
    assert manifest["special_tokens"]["pad"] != source_vocab["<pad>"]
    assert manifest["generation"]["bad_words_ids"] == [[target_vocab["<pad>"]]]
    assert imported.ours.separate and imported.ours.output.vocab_size == len(target_vocab)
    assert imported.ours.source.vocab_size == len(source_vocab)


@pytest.mark.parametrize(
    "parameters",
    [{}, {"num_beams": NUM_BEAMS, "length_penalty": LENGTH_PENALTY}],
    ids=["greedy", "beam"],
)
def test_outputs_equal_generate_and_read_in_the_target_vocabulary(
    imported: Imported, parameters: dict[str, Any]
) -> None:
    """200 mixed inputs in one request (one batch): ids equal generate()'s, and the texts are MarianTokenizer's
    decoding of them (target_vocab.json), which reading the same ids in the source vocabulary does not give."""
    texts = hf_checkpoints.sample_texts(INPUTS, seed=21)
    items = _generate(imported, texts, parameters)
    served = [_ids(item) for item in items]
    expected = _reference(
        imported, texts, num_beams=parameters.get("num_beams", 1), length_penalty=parameters.get("length_penalty", 1.0)
    )
    assert sum(len(ids) < MAX_NEW_TOKENS for ids in expected) >= INPUTS // 10  # mixed lengths, some end in EOS
    differing = [i for i in range(INPUTS) if served[i] != expected[i]]
    assert not differing, (
        f"{len(differing)} differ, first {texts[differing[0]]!r}: {served[differing[0]]} != {expected[differing[0]]}"
    )
    for item, ids in zip(items, served, strict=True):
        assert item["generated_text"] == _decoded(imported, ids)
        assert "".join(t["text"] for t in item["details"]["tokens"]) == item["generated_text"]
    pad = imported.manifest["special_tokens"]["pad"]
    assert all(pad not in ids for ids in served)
    worded = [ids for ids in served if len(ids) > 3]
    misread = [ids for ids in worded if imported.ours.source.decode(ids) != _decoded(imported, ids)]
    assert worded and len(misread) > 0.9 * len(worded)  # the ids mean other pieces in the source vocabulary


def test_tokenizer_ids_equal_on_both_sides(imported: Imported) -> None:
    """Sources: MarianTokenizer's ids (source.spm, vocab.json) on corpus text, arbitrary Unicode and spliced
    special-token text; outputs: its text_target ids (target.spm, target_vocab.json) and its decoding."""
    rng = np.random.default_rng(0)
    texts = hf_checkpoints.sample_texts(300, seed=22)
    ranges = [(0x20, 0x7F), (0xA0, 0x250), (0x300, 0x370), (0x400, 0x500), (0x4E00, 0x4E80), (0x1F600, 0x1F650)]
    for _ in range(300):
        lo, hi = ranges[int(rng.integers(len(ranges)))]
        texts.append("".join(chr(int(c)) for c in rng.integers(lo, hi, size=int(rng.integers(1, 30)))))
    # MarianTokenizer reads ">>...<<" first in any text as one token (a language code, else <unk>).
    texts += [f">>fra<< {t}" for t in texts[:20]] + [f">>x<<{t}" for t in texts[20:40]] + [">><<", ">>a<"]
    source, output = imported.ours.source, imported.ours.output
    for text in texts:
        assert source.encode(text)[0] == imported.tokenizer(text).input_ids, text
        target = _target_ids(imported, text)
        assert output.encode_plain(text) == target, text
        assert output.decode(target) == _decoded(imported, target), text
    assert_spliced_ids_equal(
        source, imported.tokenizer, special_texts(imported.tokenizer, imported.manifest), examples=200
    )


def test_teacher_forced_attention_equals_output_attentions(imported: Imported) -> None:
    """/attention with a target: the target is tokenized on the output side (text_target's ids), the attention
    equals transformers' within 1e-5, and each side's tokens are labelled from its own vocabulary."""
    import torch

    texts = hf_checkpoints.sample_texts(12, seed=23)
    eos = imported.manifest["special_tokens"]["eos"]
    for source, target in zip(texts, reversed(texts), strict=True):
        response = httpx.post(f"{imported.served.url}/attention", json={"inputs": source, "target": target}, timeout=60)
        assert response.status_code == 200, response.text
        body = response.json()
        src = [t["id"] for t in body["source_tokens"]]
        tgt = [t["id"] for t in body["target_tokens"] if not t["special"]]
        assert src == imported.tokenizer(source).input_ids
        assert tgt == _target_ids(imported, target)
        start = imported.model.generation_config.decoder_start_token_id
        with torch.no_grad():
            out = imported.model(
                input_ids=torch.tensor([src]),
                decoder_input_ids=torch.tensor([[start, *tgt]]),
                output_attentions=True,
            )
        assert_attention_equals_transformers(body, out)
        # Source pieces are spans of the input and the source's </s>; output pieces decode target_vocab.json ids.
        assert body["encoder_tokens"][:-1] == [source[t["start"] : t["end"]] for t in body["source_tokens"][:-1]]
        assert body["encoder_tokens"][-1] == "</s>"
        pieces = [t["text"] for t in body["target_tokens"] if not t["special"]]
        assert "".join(pieces) == body["target_text"] == _decoded(imported, tgt)
        # A piece without text of its own reads as its target vocabulary entry when it is a special one (<unk>).
        labels = {imported.manifest["special_tokens"]["unk"]: "<unk>"}
        read = [text or labels.get(token, "") for token, text in zip(tgt, pieces, strict=True)]
        assert body["decoder_tokens"] == ["<s>", *read]
        assert [t["id"] for t in body["target_tokens"] if t["special"]] == [eos]


def test_attention_labels_each_side_from_its_vocabulary(imported: Imported) -> None:
    """/attention and return_attention without a target: the decoder axis reads the generated pieces (target
    vocabulary), the encoder axis the source's; a forced target's <unk> (a character target.spm lacks), which
    decodes to nothing, reads as its target vocabulary entry."""
    texts = hf_checkpoints.sample_texts(40, seed=24)
    items = _generate(imported, texts, {"max_new_tokens": 8})
    text = next(
        t
        for t, item in zip(texts, items, strict=True)
        if len(_ids(item)) >= 3 and item["details"]["finish_reason"] == "eos_token"
    )
    body = httpx.post(
        f"{imported.served.url}/attention", json={"inputs": text, "parameters": {"max_new_tokens": 8}}, timeout=60
    ).json()
    generated = [t for t in body["target_tokens"] if not t["special"]]
    assert body["target_text"] == _decoded(imported, [t["id"] for t in generated])
    assert body["decoder_tokens"] == ["<s>", *[t["text"] for t in generated]]  # the last, EOS, is read by none
    assert body["encoder_tokens"][-1] == "</s>"
    details = _generate(imported, text, {"max_new_tokens": 8, "return_attention": True, "decoder_input_details": True})
    assert details["attention"]["decoder_tokens"] == body["decoder_tokens"]
    assert [t["id"] for t in details["details"]["prefill"]] == imported.tokenizer(text).input_ids
    forced = httpx.post(
        f"{imported.served.url}/attention", json={"inputs": text, "target": "the 中 of May"}, timeout=60
    ).json()
    unk = imported.manifest["special_tokens"]["unk"]
    ids = [t["id"] for t in forced["target_tokens"] if not t["special"]]
    assert unk in ids and ids == _target_ids(imported, "the 中 of May")
    assert forced["decoder_tokens"][1 + ids.index(unk)] == "<unk>"  # its text is empty: the output's label


def _stop_word(text: str) -> tuple[str, int] | None:
    """An output's second word and where its first occurrence ends, when that is a word's end: no target piece
    reaches past a space, so a stop there ends the output exactly at the stop text."""
    words = text.split()
    if len(words) < 3:
        return None
    end = text.index(words[1]) + len(words[1])
    return (words[1], end) if text[end : end + 1] in ("", " ") else None


def test_streaming_stop_sequences_and_bad_words_use_the_target_vocabulary(imported: Imported) -> None:
    """Streamed pieces join to the target vocabulary's text; a stop sequence written in it ends the output there;
    a bad word is banned as text_target tokenizes it (generate() with those ids banned gives the same)."""
    texts = hf_checkpoints.sample_texts(60, seed=25)
    items = _generate(imported, texts, {})
    text, item, (stop, end) = next(
        (t, i, found) for t, i in zip(texts, items, strict=True) if (found := _stop_word(i["generated_text"]))
    )
    with httpx.stream(
        "POST",
        f"{imported.served.url}/generate_stream",
        json={"inputs": text, "parameters": {"max_new_tokens": MAX_NEW_TOKENS}},
        timeout=60,
    ) as response:
        events = [json.loads(line[5:]) for line in response.iter_lines() if line.startswith("data:")]
    assert "".join(e["token"]["text"] for e in events) == item["generated_text"] == events[-1]["generated_text"]
    stopped = _generate(imported, text, {"stop": [stop]})
    assert stopped["details"]["finish_reason"] == "stop_sequence"
    assert stopped["generated_text"] == item["generated_text"][:end]
    # The most generated token that is a word of its own, banned as a string: its target ids alone and after a space.
    counts = Counter(token for i in items for token in _ids(i))
    word = next(
        text
        for token, _ in counts.most_common()
        if (text := _decoded(imported, [token])).isalpha() and _target_ids(imported, text) == [token]
    )
    banned = [_target_ids(imported, word), _target_ids(imported, " " + word)]
    got = [_ids(i) for i in _generate(imported, texts, {"bad_words": [word]})]
    model_bad = [list(w) for w in imported.model.generation_config.bad_words_ids]
    unique = [list(w) for w in dict.fromkeys(tuple(w) for w in banned)]
    assert got == _reference(imported, texts, bad_words_ids=model_bad + unique)
    assert got != [_ids(i) for i in items]  # the ban changed outputs
