"""attention_body's token labels: special ids without text of their own (a language code the source template
puts first, EOS, a forced target code) are shown by their vocabulary entries, not as "</s>" or an empty label."""

from __future__ import annotations

import numpy as np

from service.engine import GenerationResult, TokenEvent
from service.engine.types import Attention
from service.http.attention_body import attention_body

SPA, ENG, EOS, HOLA = 7, 8, 2, 40
LABELS = {SPA: "spa_Latn", ENG: "eng_Latn", EOS: "</s>"}


def test_language_codes_and_eos_are_labelled_by_their_entries() -> None:
    text = "hola"
    tokens = [TokenEvent(ENG, "", -0.1, False), TokenEvent(41, "hello", -0.2, False), TokenEvent(EOS, "", -0.3, True)]
    source_len, positions = 3, 3
    result = GenerationResult(
        text="hello",
        token_ids=[ENG, 41],
        tokens=tokens,
        finish_reason="eos",
        input_token_ids=[SPA, HOLA, EOS],
        seed=None,
        attention=Attention(
            encoder={}, decoder={}, cross={0: np.full((1, positions, source_len), 1 / source_len)}, heads=(0,)
        ),
    )
    body = attention_body(
        result,
        source_text=text,
        source_offsets=[(0, 0), (0, 4), (4, 4)],
        forced=False,
        mean_heads=False,
        encoding="json",
        labels=LABELS,
    )
    assert body["encoder_tokens"] == ["spa_Latn", "hola", "</s>"]
    assert body["source_tokens"][0] == {"id": SPA, "text": "spa_Latn", "start": 0, "end": 0, "special": True}
    assert body["decoder_tokens"] == ["<s>", "eng_Latn", "hello"]  # position 1 reads the forced code
    assert [t["text"] for t in body["target_tokens"]] == ["", "hello", ""]  # offsets into generated_text unchanged
