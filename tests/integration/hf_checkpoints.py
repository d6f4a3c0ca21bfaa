"""Tiny random Hugging Face checkpoints built offline for the import tests: a model from its config
class (as transformers' own tests build them) and a tokenizer trained here, saved with save_pretrained.
Imports transformers and sentencepiece (the `hf` extra); nothing is downloaded.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

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


def marian_checkpoint(directory: Path, *, seed: int = 0, codes: tuple[str, ...] = ()) -> Path:
    """A Marian (OPUS-MT layout) translator: separate source/target SentencePiece models, one vocab.json
    (</s> 0, <unk> 1, the pieces, a multilingual model's target `codes` such as ">>fra<<", <pad> last), pad
    as decoder start, `<pad>` a bad word."""
    directory.mkdir(parents=True, exist_ok=True)
    source = train_spm(corpus("plain_es", "number_es", "date_es", "plain_en"), vocab_size=300)
    target = train_spm(corpus("plain_en", "number_en", "date_en"), vocab_size=200)
    (directory / "source.spm").write_bytes(source)
    (directory / "target.spm").write_bytes(target)
    vocab = _marian_vocab(spm_pieces(source) + spm_pieces(target), codes=codes)
    (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    (directory / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "MarianTokenizer", "source_lang": "es", "target_lang": "en"})
    )
    _save_tiny_marian(directory, vocab_size=len(vocab), decoder_vocab_size=len(vocab), pad=vocab["<pad>"], seed=seed)
    return directory


def marian_separate_vocabs_checkpoint(directory: Path, *, seed: int = 0) -> Path:
    """A Marian translator with separate vocabularies (OPUS-MT's `separate_vocabs`): vocab.json numbers
    source.spm's pieces, target_vocab.json target.spm's (each </s> 0, <unk> 1, the pieces, <pad> last), so one
    id is a different piece on each side; the encoder and decoder embeddings are separate and of different
    sizes (config.json's vocab_size 300, decoder_vocab_size 180). The target's <pad> is the decoder start and
    config's pad id (below both sizes, as MarianMTModel's embeddings require) and a bad word."""
    directory.mkdir(parents=True, exist_ok=True)
    source = train_spm(corpus("plain_es", "number_es", "date_es"), vocab_size=300)
    target = train_spm(corpus("plain_en", "number_en", "date_en"), vocab_size=180)
    (directory / "source.spm").write_bytes(source)
    (directory / "target.spm").write_bytes(target)
    vocab, target_vocab = _marian_vocab(spm_pieces(source)), _marian_vocab(spm_pieces(target))
    (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    (directory / "target_vocab.json").write_text(json.dumps(target_vocab, ensure_ascii=False))
    (directory / "tokenizer_config.json").write_text(
        json.dumps(
            {"tokenizer_class": "MarianTokenizer", "source_lang": "es", "target_lang": "en", "separate_vocabs": True}
        )
    )
    _save_tiny_marian(
        directory,
        vocab_size=len(vocab),
        decoder_vocab_size=len(target_vocab),
        pad=target_vocab["<pad>"],
        seed=seed,
        share_embeddings=False,
        eos_bias=2.5,  # 6.5 ends 96% of these outputs at once; 2.5: a third empty, a quarter 20 tokens long
    )
    return directory


def _marian_vocab(pieces: list[str], *, codes: tuple[str, ...] = ()) -> dict[str, int]:
    """OPUS-MT's vocab.json layout: </s> 0, <unk> 1, the pieces (each once), language `codes`, <pad> last."""
    vocab: dict[str, int] = {"</s>": 0, "<unk>": 1}
    for piece in pieces:
        if piece not in vocab:
            vocab[piece] = len(vocab)
    for code in codes:
        vocab[code] = len(vocab)
    vocab["<pad>"] = len(vocab)
    return vocab


def _save_tiny_marian(
    directory: Path,
    *,
    vocab_size: int,
    decoder_vocab_size: int,
    pad: int,
    seed: int,
    share_embeddings: bool = True,
    eos_bias: float = 6.5,
) -> None:
    """A random MarianMTModel (EOS 0, `pad` as decoder start and a bad word) saved into `directory`."""
    import torch
    from transformers import GenerationConfig, MarianConfig, MarianMTModel

    torch.manual_seed(seed)
    config = MarianConfig(
        vocab_size=vocab_size,
        decoder_vocab_size=decoder_vocab_size,
        share_encoder_decoder_embeddings=share_embeddings,
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
    _logits_bias(model, eos=0, eos_bias=eos_bias)
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


def _byte_bpe(
    lines: list[str], *, vocab_size: int, specials: list[str]
) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """A byte-level BPE (BART's kind) trained here: its vocab (specials first) and merges."""
    from tokenizers import ByteLevelBPETokenizer

    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(lines, vocab_size=vocab_size, min_frequency=2, special_tokens=specials)
    model = json.loads(trainer.to_str())["model"]
    return model["vocab"], [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]


def _logits_bias(model: object, *, eos: int, eos_bias: float = 6.5) -> None:
    """A random final_logits_bias with EOS favoured by `eos_bias`, so that outputs end at mixed lengths."""
    import torch

    with torch.no_grad():
        bias = model.final_logits_bias  # type: ignore[attr-defined]
        bias.normal_(0.0, 1.0)
        bias[0, eos] = eos_bias


def tiny_bart_fields(*, vocab_size: int, bos: int, pad: int, eos: int) -> dict[str, object]:
    """The config fields every tiny BART-family checkpoint here shares (BART, mBART, mBART-50)."""
    return dict(
        vocab_size=vocab_size,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=128,
        pad_token_id=pad,
        bos_token_id=bos,
        eos_token_id=eos,
        decoder_start_token_id=eos,
        dropout=0.0,
        activation_function="gelu",
        init_std=0.3,  # logits far apart, so float32 round-off between runtimes never flips a choice
    )


def bart_checkpoint(directory: Path, *, seed: int = 0, mbart: bool = False) -> Path:
    """BART (post-norm, layernorm_embedding, learned positions offset 2, <s> first in the source, EOS as
    decoder start, <s> forced first, EOS forced last) or, with `mbart`, mBART's pre-norm, final layer norms
    and scaled embeddings, a language code forced first as mBART-50's generation config does (the tokenizer
    is a byte-level BPE trained here in both cases)."""
    import torch
    from transformers import (
        BartConfig,
        BartForConditionalGeneration,
        GenerationConfig,
        MBartConfig,
        MBartForConditionalGeneration,
        RobertaTokenizer,
    )

    directory.mkdir(parents=True, exist_ok=True)
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    languages = ["en_XX", "es_XX"] if mbart else []
    vocab, merges = _byte_bpe(corpus("plain_es", "plain_en", "number_en"), vocab_size=400, specials=specials)
    tokenizer = RobertaTokenizer(vocab=vocab, merges=merges)
    if languages:
        tokenizer.add_special_tokens({"additional_special_tokens": languages})
    tokenizer.save_pretrained(directory)
    size = len(tokenizer)
    bos, pad, eos = vocab["<s>"], vocab["<pad>"], vocab["</s>"]
    common = tiny_bart_fields(vocab_size=size, bos=bos, pad=pad, eos=eos)
    torch.manual_seed(seed)
    if mbart:
        model = MBartForConditionalGeneration(MBartConfig(**common, scale_embedding=True))
    else:
        model = BartForConditionalGeneration(BartConfig(**common, scale_embedding=False))
    _logits_bias(model, eos=eos)
    forced = tokenizer.convert_tokens_to_ids(languages[0]) if languages else bos
    model.generation_config = GenerationConfig(
        decoder_start_token_id=eos,
        pad_token_id=pad,
        bos_token_id=bos,
        eos_token_id=eos,
        forced_bos_token_id=forced,
        forced_eos_token_id=eos,
        num_beams=4,
        max_length=40,
        length_penalty=1.2,
        no_repeat_ngram_size=3,
    )
    model.save_pretrained(directory)
    return directory


def mbart_checkpoint(directory: Path, *, seed: int = 0) -> Path:
    return bart_checkpoint(directory, seed=seed, mbart=True)


def _favour_eos(model: Any, tokenizer: Any, *, eos: int, scale: float) -> None:
    """T5 has no final_logits_bias: point EOS's (tied) embedding along the decoder's mean output so that its
    logit is near the typical best one, and outputs end at mixed lengths."""
    import torch

    batch = tokenizer(sample_texts(32, seed=99), return_tensors="pt", padding=True)
    decoder_input_ids = torch.randint(3, 200, (32, 8))
    with torch.no_grad():
        out = model(**batch, decoder_input_ids=decoder_input_ids, output_hidden_states=True)
        hidden = out.decoder_hidden_states[-1] * scale  # what the LM head sees
        mean = hidden.mean(dim=(0, 1))
        target = out.logits.max(dim=-1).values.quantile(0.4)
        model.lm_head.weight[eos] = mean * (0.8 * target / mean.dot(mean))  # 0.8: a mix of short and long outputs


def t5_checkpoint(directory: Path, *, seed: int = 0) -> Path:
    """T5 v1.1 / Flan-T5's layout: gated-gelu feed-forward, RMSNorm, relative position buckets, tied embeddings
    (decoder output scaled by d_model ** -0.5), d_kv * heads != d_model as in mT5 and Flan-T5-small; a
    SentencePiece Unigram trained here in T5's order (<pad> 0, </s> 1, <unk> 2) with sentinel tokens."""
    import sentencepiece as spm
    import torch
    from sentencepiece import sentencepiece_model_pb2
    from transformers import GenerationConfig, T5Config, T5ForConditionalGeneration, T5Tokenizer

    directory.mkdir(parents=True, exist_ok=True)
    model_bytes = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus("plain_en", "plain_es", "number_en")),
        model_writer=model_bytes,
        vocab_size=300,
        model_type="unigram",
        character_coverage=1.0,
        pad_id=0,
        eos_id=1,
        unk_id=2,
        bos_id=-1,
        minloglevel=2,
        num_threads=1,
    )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model_bytes.getvalue())
    tokenizer = T5Tokenizer(
        vocab=[(piece.piece, piece.score) for piece in proto.pieces],
        _spm_precompiled_charsmap=proto.normalizer_spec.precompiled_charsmap,
        extra_ids=8,
    )
    tokenizer.save_pretrained(directory)
    torch.manual_seed(seed)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=6,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=20,
        feed_forward_proj="gated-gelu",
        tie_word_embeddings=True,
        dropout_rate=0.0,
        initializer_factor=1.0,  # logits far apart, so float32 round-off between runtimes never flips a choice
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    model = T5ForConditionalGeneration(config)
    _favour_eos(model, tokenizer, eos=1, scale=config.d_model**-0.5)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, num_beams=4, max_length=40, no_repeat_ngram_size=3
    )
    model.save_pretrained(directory)
    return directory


def nllb_checkpoint(directory: Path, *, seed: int = 0) -> Path:
    """M2M100's architecture as NLLB ships it: pre-norm with final layer norms, scaled embeddings, pad-aware
    sinusoidal positions (offset 2), no final_logits_bias; NLLB's tokenizer layout (tokenizer.json, the
    source language code before the text, EOS after), the target language code forced first. `<pad>` is a
    bad word: transformers would not count a generated pad in the decoder's positions."""
    from transformers import NllbTokenizer

    directory.mkdir(parents=True, exist_ok=True)
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    vocab, merges = _byte_bpe(corpus("plain_es", "plain_en", "number_en"), vocab_size=400, specials=specials)
    tokenizer = NllbTokenizer(vocab=vocab, merges=merges, src_lang="spa_Latn", tgt_lang="eng_Latn")
    tokenizer.save_pretrained(directory)
    bos, pad, eos = vocab["<s>"], vocab["<pad>"], vocab["</s>"]
    forced = tokenizer.convert_tokens_to_ids("eng_Latn")
    return _save_tiny_m2m100(
        directory, tokenizer, vocab_size=len(tokenizer), ids=(bos, pad, eos), forced=forced, seed=seed
    )


def m2m100_tokenizer_files(directory: Path) -> Any:
    """M2M100's own tokenizer layout (no tokenizer.json): a SentencePiece BPE model and a vocab.json in
    fairseq's order (<s>, <pad>, </s>, <unk>, then the pieces), with every 40th piece left out as real
    vocabularies leave out pieces their training data never produced (transformers reads those as <unk>);
    the language codes come after vocab.json. Returns transformers' M2M100Tokenizer of the directory."""
    from transformers import M2M100Tokenizer

    directory.mkdir(parents=True, exist_ok=True)
    model = train_spm_bpe(corpus("plain_es", "plain_en", "number_en"), vocab_size=400)
    spm_path = directory / "sentencepiece.bpe.model"
    spm_path.write_bytes(model)
    vocab: dict[str, int] = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for index, piece in enumerate(spm_pieces(model)):
        if piece not in vocab and index % 40 != 39:
            vocab[piece] = len(vocab)
    (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    tokenizer = M2M100Tokenizer(str(directory / "vocab.json"), str(spm_path), src_lang="es", tgt_lang="en")
    tokenizer.save_pretrained(directory)
    return M2M100Tokenizer.from_pretrained(directory)


def train_spm_bpe(lines: list[str], *, vocab_size: int) -> bytes:
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="bpe",
        character_coverage=0.9995,  # some rare characters stay unknown, as in a real model
        minloglevel=2,
        num_threads=1,
    )
    return model.getvalue()


def m2m100_checkpoint(directory: Path, *, seed: int = 0) -> Path:
    """M2M100 as facebook/m2m100_418M ships it: the NLLB architecture (pre-norm, final layer norms, scaled
    embeddings, pad-aware sinusoidal positions) with M2M100Tokenizer's files (sentencepiece.bpe.model +
    vocab.json, no tokenizer.json): "__es__" before the source, "__en__" forced first, <pad> a bad word."""
    tokenizer = m2m100_tokenizer_files(directory)
    bos, pad, eos = 0, 1, 2
    vocab_size = len(tokenizer.encoder) + len(tokenizer.lang_token_to_id) + 8  # + M2M100's 8 made-up words
    forced = tokenizer.get_lang_id("en")
    return _save_tiny_m2m100(directory, tokenizer, vocab_size=vocab_size, ids=(bos, pad, eos), forced=forced, seed=seed)


def _save_tiny_m2m100(
    directory: Path, tokenizer: Any, *, vocab_size: int, ids: tuple[int, int, int], forced: int, seed: int
) -> Path:
    """The tiny M2M100 both layouts share (NLLB's tokenizer.json, M2M100's SentencePiece files):
    `ids` = (bos, pad, eos), `forced` the target-language token forced first, <pad> a bad word."""
    import torch
    from transformers import GenerationConfig, M2M100Config, M2M100ForConditionalGeneration

    bos, pad, eos = ids
    torch.manual_seed(seed)
    config = M2M100Config(
        vocab_size=vocab_size,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=128,
        scale_embedding=True,
        pad_token_id=pad,
        bos_token_id=bos,
        eos_token_id=eos,
        decoder_start_token_id=eos,
        dropout=0.0,
        init_std=0.3,  # logits far apart, so float32 round-off between runtimes never flips a choice
    )
    model = M2M100ForConditionalGeneration(config)
    _favour_eos(model, tokenizer, eos=eos, scale=1.0)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=eos,
        pad_token_id=pad,
        bos_token_id=bos,
        eos_token_id=eos,
        forced_bos_token_id=forced,
        bad_words_ids=[[pad]],
        num_beams=4,
        max_length=40,
        no_repeat_ngram_size=3,
    )
    model.save_pretrained(directory)
    return directory


class HfImports:
    """Tiny random Hugging Face checkpoints (tests/integration/hf_checkpoints.py), each built and imported by
    `python -m export --from-transformers` (int8 tried, fp32 the default variant) once per session, offline,
    for every test module that serves one: an import costs 10-15 s, mostly the dynamo exporter."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._tmp_path_factory = tmp_path_factory
        self._imported: dict[str, tuple[Path, Path]] = {}
        self._builders: dict[str, Callable[[Path], Path]] = {}

    def get(self, family: str, build: Callable[[Path], Path]) -> tuple[Path, Path]:
        """(the Hugging Face directory, atento's model directory) of `family`, built by `build` the first time.

        A family name stands for one builder: a second builder under the same name would be handed the
        first one's checkpoint, so it is refused instead."""
        known = self._builders.setdefault(family, build)
        if known is not build:
            raise ValueError(f"{family!r} is already built by {known.__name__}, not {build.__name__}")
        if family not in self._imported:
            from export.__main__ import main as export_main

            root = self._tmp_path_factory.mktemp(f"hf-{family}")
            out = root / "models" / family / "1"
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("HF_HUB_OFFLINE", "1")
                patch.setenv("TRANSFORMERS_OFFLINE", "1")
                source = build(root / "hf")
                assert export_main(["--from-transformers", str(source), "--out", str(out)]) == 0
            self._imported[family] = (source, out)
        return self._imported[family]
