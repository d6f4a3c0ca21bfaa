"""The check the Hugging Face import tests share: `/attention`'s body against transformers' teacher-forced
`output_attentions=True`, every kind and layer."""

from __future__ import annotations

from typing import Any

import numpy as np

ATTENTION_ATOL = 1e-5  # issue 21's bound


def assert_attention_equals_transformers(body: dict[str, Any], out: Any) -> None:
    """Encoder, decoder and cross attention of an `/attention` response equal a transformers model output's
    (`output_attentions=True`) within ATTENTION_ATOL, layer by layer."""
    for kind, reference in (
        ("encoder_attention", out.encoder_attentions),
        ("decoder_attention", out.decoder_attentions),
        ("cross_attention", out.cross_attentions),
    ):
        for layer, expected in enumerate(reference):
            got = np.asarray(body[kind][layer], dtype=np.float32)
            np.testing.assert_allclose(
                got, expected.numpy(), atol=ATTENTION_ATOL, rtol=0, err_msg=f"{kind} layer {layer}"
            )
