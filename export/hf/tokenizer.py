"""The service's tokenizer.json for imported models, built at export time with exact ids.

Marian (and M2M100) ship SentencePiece models plus a vocab.json whose ids are not the SentencePiece
ids, and transformers has no fast tokenizer for them. The source SentencePiece model becomes a
`tokenizers` Unigram (transformers' own `SpmConverter.build_tokenizer_from_spm_proto`, which follows the
model's normalizer spec) whose vocabulary is laid out in vocab.json's order, so the ids come out right.
Vocabulary entries the source model cannot produce (target-only pieces, language codes) are kept at
their ids under a prefix no normalized text contains, so the Unigram never picks them; the decoder
strips the prefix again. Marian with separate vocabularies gets a second tokenizer for its outputs, built the
same way from target.spm and target_vocab.json. `check_ids` proves each against the Hugging Face tokenizer
before export.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tokenizers
from sentencepiece import sentencepiece_model_pb2
from tokenizers import AddedToken, Regex, decoders, models, normalizers
from transformers.convert_slow_tokenizer import SpmConverter

from export.hf.checkpoint import HfCheckpointError, require_files

UNREACHABLE = "\uffff"  # prefixes the pieces the source model never produces (a noncharacter)
# Prefixes the special tokens transformers' tokenizer does not read in text (M2M100Tokenizer's language codes
# unless the checkpoint lists them as additional special tokens): kept at their ids, decoded to nothing.
UNMATCHED = UNREACHABLE * 2
STAND_IN = "\ufffe"  # what an input's own U+FFFF becomes: also unknown to the model, so also <unk>
NORMAL, USER_DEFINED = 1, 4  # SentencePiece piece types
MARIAN_FILES = ("source.spm", "target.spm", "vocab.json")
MARIAN_TARGET_VOCAB = "target_vocab.json"  # separate_vocabs: the output side's ids


UNIGRAM, BPE = 1, 2  # SentencePiece model types


def read_spm(path: Path, *, model_type: int = UNIGRAM) -> Any:
    proto = sentencepiece_model_pb2.ModelProto()
    try:
        proto.ParseFromString(path.read_bytes())
    except Exception as error:  # protobuf's DecodeError has no stable import path across versions
        raise HfCheckpointError(f"{path} is not a SentencePiece model: {error}") from error
    if proto.trainer_spec.model_type != model_type:
        kind = "unigram" if model_type == UNIGRAM else "BPE"
        raise HfCheckpointError(f"{path}: expected a {kind} SentencePiece model")
    if any(piece.type == USER_DEFINED for piece in proto.pieces):
        raise HfCheckpointError(f"{path}: user-defined SentencePiece pieces are not supported")
    for piece in proto.pieces:
        if UNREACHABLE in piece.piece or STAND_IN in piece.piece:
            raise HfCheckpointError(f"{path}: a piece contains U+FFFF or U+FFFE, which the conversion reserves")
    return proto


def spm_with_vocab(proto: Any, vocab: dict[str, int], *, specials: Sequence[str]) -> tokenizers.Tokenizer:
    """A tokenizers Unigram that segments as `proto` does and numbers pieces by `vocab`.

    Raises:
        HfCheckpointError: vocab ids are not 0..n-1, or lack <unk>.
    """
    ids = sorted(vocab.values())
    if ids != list(range(len(ids))):
        raise HfCheckpointError("vocab.json ids are not 0 .. n-1 without gaps")
    if "<unk>" not in vocab:
        raise HfCheckpointError("vocab.json has no <unk>")
    scores = {piece.piece: piece.score for piece in proto.pieces if piece.type == NORMAL}
    by_id = {token_id: token for token, token_id in vocab.items()}
    entries: list[tuple[str, float]] = []
    for token_id in range(len(by_id)):
        token = by_id[token_id]
        if token in scores:
            entries.append((token, scores[token]))
        elif token in specials:
            entries.append((token, 0.0))  # as SentencePiece scores its control pieces
        else:
            entries.append((UNREACHABLE + token, 0.0))  # 0.0 keeps the unknown-piece penalty unchanged
    local = sentencepiece_model_pb2.ModelProto()
    local.CopyFrom(proto)
    local.trainer_spec.unk_id = vocab["<unk>"]  # the converter reads the unk id from the proto
    converted = SpmConverter.build_tokenizer_from_spm_proto(local, entries)
    if not isinstance(converted, tokenizers.Tokenizer):
        raise HfCheckpointError("transformers could not convert the SentencePiece model")
    tokenizer = converted
    # The stand-in first: the precompiled charsmap leaves both noncharacters alone.
    tokenizer.normalizer = normalizers.Sequence([normalizers.Replace(UNREACHABLE, STAND_IN), tokenizer.normalizer])
    tokenizer.decoder = decoders.Sequence([decoders.Replace(UNREACHABLE, ""), tokenizer.decoder])
    tokenizer.add_special_tokens([AddedToken(token, special=True, normalized=False) for token in specials])
    return tokenizer


def marian_tokenizer(directory: Path, config: dict[str, Any]) -> tokenizers.Tokenizer:
    """Source side of a Marian checkpoint: source.spm's segmentation, vocab.json's ids.

    Raises:
        HfCheckpointError: a file is missing or unreadable, or the vocabularies contradict config.json.
    """
    marian_separate_vocabularies(directory, config)  # refuses contradictory checkpoints before anything is read
    require_files(directory, MARIAN_FILES)
    return marian_side(directory / "source.spm", directory / "vocab.json", size=int(config["vocab_size"]))


def marian_target_tokenizer(directory: Path, config: dict[str, Any]) -> tokenizers.Tokenizer | None:
    """Output side of a Marian checkpoint with separate vocabularies: target.spm's segmentation (what
    MarianTokenizer's `text_target` uses), target_vocab.json's ids (the decoder's embedding rows and logits);
    None when the vocabularies are shared (tokenizer.json then serves both sides, as vocab.json does).

    Raises:
        HfCheckpointError: a file is missing or unreadable, or its size is not config.json's decoder_vocab_size.
    """
    if not marian_separate_vocabularies(directory, config):
        return None
    require_files(directory, (*MARIAN_FILES, MARIAN_TARGET_VOCAB))
    size = int(config.get("decoder_vocab_size") or config["vocab_size"])
    return marian_side(directory / "target.spm", directory / MARIAN_TARGET_VOCAB, size=size)


def marian_side(spm: Path, vocab_file: Path, *, size: int) -> tokenizers.Tokenizer:
    """One side of a Marian checkpoint: `spm`'s segmentation numbered by `vocab_file`, of `size` entries.

    Raises:
        HfCheckpointError: the vocabulary is malformed or not `size` entries long.
    """
    vocab = json.loads(vocab_file.read_text())
    if not isinstance(vocab, dict) or "<unk>" not in vocab:
        raise HfCheckpointError(f"{vocab_file} must map pieces to ids, <unk> among them")
    if len(vocab) != size:
        raise HfCheckpointError(f"{vocab_file} has {len(vocab)} entries, config.json says {size}")
    # Multilingual Marian's target codes (">>fra<<"): the service reads one off the start of a source as
    # MarianTokenizer does (docs/model-directory.md, languages.in_source), so they only need their ids here.
    specials = [t for t in ("</s>", "<unk>", "<pad>") if t in vocab]
    tokenizer = spm_with_vocab(read_spm(spm), vocab, specials=specials)
    # MarianTokenizer.decode ends with str.strip(): every space at either end goes, not only the dummy prefix.
    tokenizer.decoder = decoders.Sequence([tokenizer.decoder, decoders.Replace(Regex(r"\A +| +\z"), "")])
    return tokenizer


def marian_separate_vocabularies(directory: Path, config: dict[str, Any]) -> bool:
    """Whether a Marian checkpoint has a target vocabulary of its own: MarianTokenizer decides by
    tokenizer_config.json's `separate_vocabs` (it then reads target_vocab.json and target.spm for outputs).

    Raises:
        HfCheckpointError: in one line, when config.json's decoder_vocab_size differs from vocab_size for a
            tokenizer with one vocabulary: the decoder's ids would not be vocab.json's.
    """
    tokenizer_config = directory / "tokenizer_config.json"
    saved = json.loads(tokenizer_config.read_text()) if tokenizer_config.exists() else {}
    separate = isinstance(saved, dict) and bool(saved.get("separate_vocabs"))
    vocab_size = config.get("vocab_size")
    decoder_vocab_size = config.get("decoder_vocab_size") or vocab_size  # MarianConfig's default: the same
    if not separate and decoder_vocab_size != vocab_size:
        raise HfCheckpointError(
            f"{directory}: config.json's decoder_vocab_size {decoder_vocab_size} != vocab_size {vocab_size}, but "
            "tokenizer_config.json has no separate_vocabs: MarianTokenizer would number the outputs by vocab.json"
        )
    return separate


def probe_texts(
    tokenizer: tokenizers.Tokenizer, *, count: int = 300, seed: int = 0, specials: Sequence[str] | None = None
) -> list[str]:
    """Texts to compare tokenizers on: the vocabulary's own pieces strung together, with Unicode odds and
    `specials`' text (default: every special token of `tokenizer`)."""
    rng = random.Random(seed)
    # Special tokens' text ("</s>", "__en__", "eng_Latn") is spliced in too: the service reads it as transformers'
    # tokenizer does (source_template.match_special_tokens), the token where it matches added tokens, else text.
    added = {t.content for t in tokenizer.get_added_tokens_decoder().values()}
    if specials is None:
        specials = sorted(added | set(unmatched_specials(tokenizer)))
    # By id: get_vocab() is a hash map whose order changes from one process to the next, and so would the texts.
    vocab = tokenizer.get_vocab()
    pieces = [
        t
        for t in sorted(vocab, key=vocab.__getitem__)
        if not t.startswith(UNREACHABLE) and not t.startswith("<") and t not in added
    ]
    odd = ["é", "ß", "ﬁ", "２", "中", "🙂", "\t", "  ", "\u00a0", "\u200b", "A\u0301", "\uffff", "ǅ", "İ", "…"]
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            draw = rng.random()
            pool = pieces if draw < 0.75 else odd if draw < 0.9 or not specials else specials
            parts.append(rng.choice(pool))
        texts.append("".join(parts).replace("\u2581", " " if rng.random() < 0.7 else ""))
    return texts


def check_ids(
    reference: Any,
    converted: tokenizers.Tokenizer,
    texts: Sequence[str],
    *,
    unknown: tuple[int, int] | None = None,
    target: bool = False,
) -> list[str]:
    """reference(text).input_ids (without the EOS it appends) must equal the converted tokenizer's ids, read as
    the service reads them: with `unknown` = (vocab_size, unk id), an id at or above vocab_size is unk. With
    `target`, the reference's output side is meant (`reference(text_target=text)`: Marian's target.spm and, with
    separate vocabularies, target_vocab.json), and decoding those ids must give the reference's text too.

    Returns the texts on which the two differ only by a tie (`unigram_tie`), which are not refused.

    Raises:
        HfCheckpointError: naming the first text that differs otherwise.
    """
    unigram, unk = isinstance(converted.model, models.Unigram), converted.token_to_id("<unk>")
    ties = []
    for text in texts:
        if target:
            want = list(reference(text_target=text, add_special_tokens=False).input_ids)
        else:
            want = list(reference(text, add_special_tokens=False).input_ids)
        got = converted.encode(text, add_special_tokens=False).ids
        if unknown is not None:
            got = [unknown[1] if token >= unknown[0] else token for token in got]
        if want != got:
            if not (unigram and unigram_tie(want, got, unk=unk)):
                raise HfCheckpointError(
                    f"the converted tokenizer differs from transformers' on {text!r}: {got} != {want}"
                )
            ties.append(text)
        if target and (ours := converted.decode(got)) != (theirs := reference.decode(want, skip_special_tokens=True)):
            raise HfCheckpointError(f"the converted tokenizer decodes {want} as {ours!r}, transformers as {theirs!r}")
    return ties


def unigram_tie(want: list[int], got: list[int], *, unk: int | None) -> bool:
    """Whether two Unigram segmentations of one text are the same pieces in another order, so of one score.

    SentencePiece sums piece scores in float32 and `tokenizers`' Unigram in float64, so where two segmentations
    score exactly alike ("000" as "00" "0" or as "0" "00") rounding picks one for SentencePiece and the lattice's
    order the other for `tokenizers`: transformers' own fast tokenizers (SpmConverter) break such ties as the
    service does.
    """
    if len(want) != len(got):
        return False
    differ = [i for i, (a, b) in enumerate(zip(want, got, strict=True)) if a != b]
    if not differ:
        return True
    span = slice(differ[0], differ[-1] + 1)  # <unk> outside it scores the same on both sides
    return sorted(want[span]) == sorted(got[span]) and unk not in want[span]


def fast_tokenizer(directory: Path, config: dict[str, Any]) -> tokenizers.Tokenizer:
    """The checkpoint's own `tokenizers` tokenizer (BART's byte-level BPE, T5's Unigram): exact by construction.

    Raises:
        HfCheckpointError: no tokenizer.json, or transformers cannot read it.
    """
    require_files(directory, ("tokenizer.json",))
    try:
        return tokenizers.Tokenizer.from_file(str(directory / "tokenizer.json"))
    except Exception as error:  # tokenizers raises a bare Exception for malformed files
        raise HfCheckpointError(f"{directory / 'tokenizer.json'} is not a valid tokenizer: {error}") from error


def source_template(reference: Any) -> dict[str, list[int]]:
    """The special ids transformers' tokenizer puts around a source: {"prefix": [...], "suffix": [...]}.

    Raises:
        HfCheckpointError: the tokenizer adds them other than around the text (or differently per text).
    """
    templates = []
    for probe in ("a", "hello world", "12"):
        plain = list(reference(probe, add_special_tokens=False).input_ids)
        full = list(reference(probe).input_ids)
        starts = [i for i in range(len(full) - len(plain) + 1) if full[i : i + len(plain)] == plain]
        if not starts:
            raise HfCheckpointError(f"the tokenizer's special tokens around {probe!r} are not a prefix and a suffix")
        templates.append({"prefix": full[: starts[0]], "suffix": full[starts[0] + len(plain) :]})
    if any(t != templates[0] for t in templates):
        raise HfCheckpointError(f"the tokenizer's special tokens differ between texts: {templates}")
    return templates[0]


M2M100_FILES = ("sentencepiece.bpe.model", "vocab.json")


def m2m100_tokenizer(directory: Path, config: dict[str, Any]) -> tokenizers.Tokenizer:
    """M2M100: NLLB's tokenizer.json when the directory has one, else M2M100's own layout converted: the
    SentencePiece BPE's segmentation (merges ranked by piece score, as SentencePiece merges) numbered by
    vocab.json, the language codes after it (M2M100Tokenizer's `__en__` at len(vocab.json) + i). A piece
    vocab.json lacks is <unk> for transformers; here it gets an id at or above the model's vocab_size, which
    the service reads as <unk> (service/engine/tokenizer.py).

    Raises:
        HfCheckpointError: a file is missing or unreadable.
    """
    if (directory / "tokenizer.json").exists():
        return fast_tokenizer(directory, config)
    require_files(directory, M2M100_FILES)
    from transformers import M2M100Tokenizer  # the reference's own language codes and their ids

    reference = M2M100Tokenizer.from_pretrained(str(directory), local_files_only=True)
    vocab = json.loads((directory / "vocab.json").read_text())
    if not isinstance(vocab, dict) or "<unk>" not in vocab:
        raise HfCheckpointError(f"{directory / 'vocab.json'} must map pieces to ids, <unk> among them")
    proto = read_spm(directory / "sentencepiece.bpe.model", model_type=BPE)
    normal = [(index, piece) for index, piece in enumerate(proto.pieces) if piece.type == NORMAL]
    codes = dict(reference.lang_token_to_id)
    specials = [t for t in ("<s>", "<pad>", "</s>", "<unk>") if t in vocab]
    fresh = max(int(config["vocab_size"]), len(vocab) + len(codes))
    model_vocab: dict[str, int] = {}
    for _, piece in normal:
        if piece.piece in vocab:
            model_vocab[piece.piece] = vocab[piece.piece]
        else:
            model_vocab[piece.piece], fresh = fresh, fresh + 1
    for token, token_id in vocab.items():
        if token not in model_vocab:
            model_vocab[token if token in specials else UNREACHABLE + token] = token_id
    # The codes transformers' tokenizer reads in text are added tokens, as there; the others only keep their ids.
    matched = [code for code in codes if reference.tokenize(code) == [code]]
    model_vocab.update({code if code in matched else UNMATCHED + code: token_id for code, token_id in codes.items()})
    tokenizer = SpmConverter.build_tokenizer_from_spm_proto(proto, model_vocab, spm_merges(normal))
    if not isinstance(tokenizer, tokenizers.Tokenizer):
        raise HfCheckpointError("transformers could not convert the SentencePiece model")
    tokenizer.normalizer = normalizers.Sequence([normalizers.Replace(UNREACHABLE, STAND_IN), tokenizer.normalizer])
    # M2M100Tokenizer.decode ends with str.strip(), as Marian's does; an unmatched code decodes to nothing, as
    # the added (special) ones do when the service skips special tokens.
    tokenizer.decoder = decoders.Sequence(
        [
            decoders.Replace(Regex(f"\\A{UNMATCHED}.*"), ""),
            decoders.Replace(UNREACHABLE, ""),
            tokenizer.decoder,
            decoders.Replace(Regex(r"\A\s+|\s+\z"), ""),
        ]
    )
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in [*specials, *matched]])
    return tokenizer


def unmatched_specials(tokenizer: tokenizers.Tokenizer) -> dict[str, int]:
    """The special tokens a converted tokenizer keeps behind UNMATCHED (name -> id): never read in text."""
    vocab = tokenizer.get_vocab()
    return {token.removeprefix(UNMATCHED): i for token, i in vocab.items() if token.startswith(UNMATCHED)}


def spm_merges(normal: Sequence[tuple[int, Any]]) -> list[tuple[str, str]]:
    """A SentencePiece BPE's merges as `tokenizers` ranks them: every split of a piece into two pieces,
    best piece score first, then piece id (transformers' build_tokenizer_from_spm_proto, by piece, not id)."""
    scores = {piece.piece: (piece.score, index) for index, piece in normal}
    ranked = []
    for token, (score, index) in scores.items():
        for split in range(1, len(token)):
            left, right = token[:split], token[split:]
            if left in scores and right in scores:
                ranked.append((-score, index, left, right))
    return [(left, right) for _, _, left, right in sorted(ranked)]
