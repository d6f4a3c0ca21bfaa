"""A tiny random mBART-50 checkpoint built offline (beside hf_checkpoints.py's families): transformers'
MBart50Tokenizer over a SentencePiece Unigram trained here, with mBART-50's 52 language codes (the source
code before the text, EOS after) and the target code forced first, as facebook/mbart-large-50-many-to-many-mmt
ships it. Imports transformers and sentencepiece (the `hf` extra); nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path

from tests.integration.hf_checkpoints import _logits_bias, corpus, tiny_bart_fields, train_spm


def mbart50_checkpoint(directory: Path, *, seed: int = 0) -> Path:
    """mBART's pre-norm with final layer norms and scaled embeddings; "es_XX" first in every source, "en_XX"
    forced first in every output, EOS as decoder start."""
    import torch
    from sentencepiece import sentencepiece_model_pb2
    from transformers import GenerationConfig, MBart50Tokenizer, MBartConfig, MBartForConditionalGeneration

    directory.mkdir(parents=True, exist_ok=True)
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(train_spm(corpus("plain_es", "plain_en", "number_en"), vocab_size=300))
    # MBart50Tokenizer reorders SentencePiece's <unk>, <s>, </s> into fairseq's <s>, <pad>, </s>, <unk> and
    # appends the language codes and <mask>, as its converter does for the real checkpoint.
    tokenizer = MBart50Tokenizer(
        vocab=[(piece.piece, piece.score) for piece in proto.pieces],
        _spm_precompiled_charsmap=proto.normalizer_spec.precompiled_charsmap,
        src_lang="es_XX",
        tgt_lang="en_XX",
    )
    tokenizer.save_pretrained(directory)
    bos, pad, eos = (tokenizer.convert_tokens_to_ids(t) for t in ("<s>", "<pad>", "</s>"))
    torch.manual_seed(seed)
    config = MBartConfig(**tiny_bart_fields(vocab_size=len(tokenizer), bos=bos, pad=pad, eos=eos), scale_embedding=True)
    model = MBartForConditionalGeneration(config)
    _logits_bias(model, eos=eos)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=eos,
        pad_token_id=pad,
        bos_token_id=bos,
        eos_token_id=eos,
        forced_bos_token_id=tokenizer.convert_tokens_to_ids("en_XX"),
        forced_eos_token_id=eos,
        num_beams=4,
        max_length=40,
        no_repeat_ngram_size=3,
    )
    model.save_pretrained(directory)
    return directory
