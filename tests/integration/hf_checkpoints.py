"""Tiny random Hugging Face checkpoints built offline for the import tests: a model from its config
class (as transformers' own tests build them) and a tokenizer trained here, saved with save_pretrained.
Imports transformers and sentencepiece (the `hf` extra); nothing is downloaded.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

SENTENCES = Path(__file__).resolve().parents[2] / "model" / "sentences"


def corpus(*names: str) -> list[str]:
    lines: list[str] = []
    for name in names:
        lines += [line.strip() for line in (SENTENCES / f"{name}.txt").read_text().splitlines() if line.strip()]
    return lines


def train_spm(lines: list[str], *, vocab_size: int, seed_sentencepiece_size: int = 10000) -> bytes:
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        seed_sentencepiece_size=seed_sentencepiece_size,
        minloglevel=2,
        num_threads=1,
    )
    return model.getvalue()


def spm_pieces(model: bytes) -> list[str]:
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_proto=model)
    return [processor.id_to_piece(i) for i in range(processor.get_piece_size()) if not processor.is_control(i)]


def sample_texts(count: int, *, seed: int) -> list[str]:
    """Mixed lengths: corpus sentences, their fragments and concatenations, and odd Unicode."""
    rng = random.Random(seed)
    lines = corpus("plain_es", "plain_en", "number_es", "date_en")
    odd = ["Ünïcödé ñ ß", "emoji 🙂 and 中文字符", "tabs\tand  double  spaces", "  leading", "ﬁ ligature ２ wide", "x"]
    texts = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            texts.append(rng.choice(lines))
        elif kind == 1:
            words = rng.choice(lines).split()
            texts.append(" ".join(words[: rng.randint(1, max(1, len(words)))]))
        elif kind == 2:
            texts.append(rng.choice(lines) + " " + rng.choice(odd))
        else:
            texts.append(" ".join(rng.choice(lines).split()[:3]) + " " + rng.choice(odd))
    return texts


def marian_checkpoint(directory: Path, *, seed: int = 0) -> Path:
    """A Marian (OPUS-MT layout) translator: separate source/target SentencePiece models, one vocab.json
    (</s> 0, <unk> 1, the pieces, <pad> last), pad as decoder start, `<pad>` a bad word."""
    import torch
    from transformers import GenerationConfig, MarianConfig, MarianMTModel

    directory.mkdir(parents=True, exist_ok=True)
    source = train_spm(corpus("plain_es", "number_es", "date_es", "plain_en"), vocab_size=300)
    target = train_spm(corpus("plain_en", "number_en", "date_en"), vocab_size=200)
    (directory / "source.spm").write_bytes(source)
    (directory / "target.spm").write_bytes(target)
    vocab: dict[str, int] = {"</s>": 0, "<unk>": 1}
    for piece in spm_pieces(source) + spm_pieces(target):
        if piece not in vocab:
            vocab[piece] = len(vocab)
    pad = len(vocab)
    vocab["<pad>"] = pad
    (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    (directory / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "MarianTokenizer", "source_lang": "es", "target_lang": "en"})
    )
    torch.manual_seed(seed)
    config = MarianConfig(
        vocab_size=len(vocab),
        decoder_vocab_size=len(vocab),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=128,
        activation_function="swish",
        scale_embedding=True,
        pad_token_id=pad,
        eos_token_id=0,
        decoder_start_token_id=pad,
        forced_eos_token_id=0,
        init_std=0.3,  # logits far apart, so float32 round-off between runtimes never flips a choice
        dropout=0.0,
    )
    model = MarianMTModel(config)
    with torch.no_grad():
        model.final_logits_bias.normal_(0.0, 1.0)
        model.final_logits_bias[0, 0] = 6.5  # EOS often enough that outputs end at mixed lengths
    model.generation_config = GenerationConfig(
        decoder_start_token_id=pad,
        pad_token_id=pad,
        eos_token_id=0,
        bad_words_ids=[[pad]],
        num_beams=4,
        max_length=40,
        length_penalty=1.2,
        no_repeat_ngram_size=3,  # a random model repeats itself; also exercises the rule
    )
    model.save_pretrained(directory)
    return directory
