"""Reference decoding in PyTorch: greedy and beam search over the KV-cached `decode_step`.

These are the ground truth the ONNX export and the service's engine are held to, so the rules
are spelled out exactly:
- Every target starts with BOS at position 0; a hypothesis ends when it emits EOS or has generated
  `max_new_tokens` tokens. Returned token ids exclude BOS and EOS.
- Greedy: the arg-max of the logits; ties go to the lowest token id.
- Beam search (`num_beams` live hypotheses): at each step every live beam's running sum of
  log-probabilities is extended by every token; the 2 * num_beams best candidates are taken in order
  of score (ties: lower beam index, then lower token id). A candidate ending in EOS becomes a
  finished hypothesis scored `sum_logprobs / generated_len ** length_penalty`, generated_len
  counting the EOS; other candidates fill the next live beams until num_beams are found. Search
  stops once num_beams hypotheses have finished (or at max_new_tokens, when the live beams are
  finished as they stand). The best finished hypothesis by score wins; ties go to the earliest.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from model.transformer import Transformer


@dataclass(frozen=True)
class Hypothesis:
    tokens: tuple[int, ...]  # generated ids, without BOS and EOS
    score: float  # greedy: sum of log-probs; beam: length-normalized sum
    finished_by_eos: bool


def pad_sources(sources: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token lists into (B, S) ids and their (B, S) real-token mask."""
    width = max(len(s) for s in sources)
    ids = torch.full((len(sources), width), pad_id, dtype=torch.long)
    for row, tokens in enumerate(sources):
        ids[row, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
    return ids, ids != pad_id


@torch.no_grad()
def greedy_decode(model: Transformer, sources: list[list[int]], *, max_new_tokens: int) -> list[Hypothesis]:
    """Greedy decoding of a batch of sources (each a list of ids, EOS included)."""
    config = model.config
    src, src_mask = pad_sources(sources, config.pad_id)
    batch = src.shape[0]
    encoded = model.encode(src, src_mask)
    cross_keys, cross_values = model.cross_key_values(encoded.memory)
    past_keys = past_values = model.empty_cache(batch)
    tokens = torch.full((batch, 1), config.bos_id, dtype=torch.long)
    generated: list[list[int]] = [[] for _ in range(batch)]
    scores = [0.0] * batch
    done = [False] * batch
    for step in range(max_new_tokens):
        self_mask = torch.ones(batch, step + 1, dtype=torch.bool)
        out = model.decode_step(
            tokens,
            torch.full((batch, 1), step),
            self_mask,
            past_keys,
            past_values,
            cross_keys,
            cross_values,
            src_mask,
        )
        past_keys, past_values = out.present_keys, out.present_values
        log_probs = out.logits[:, -1].float().log_softmax(dim=-1)  # (B, V)
        best = log_probs.argmax(dim=-1)  # (B,) first maximum = lowest id on ties
        for row in range(batch):
            if done[row]:
                continue
            token = int(best[row])
            scores[row] += float(log_probs[row, token])
            if token == config.eos_id:
                done[row] = True
            else:
                generated[row].append(token)
        if all(done):
            break
        tokens = best[:, None]
    return [Hypothesis(tuple(g), s, d) for g, s, d in zip(generated, scores, done, strict=True)]


@torch.no_grad()
def beam_search(
    model: Transformer,
    source: list[int],
    *,
    num_beams: int,
    max_new_tokens: int,
    length_penalty: float = 1.0,
) -> Hypothesis:
    """Beam search for one source (the rules are in the module docstring)."""
    config = model.config
    src, src_mask = pad_sources([source], config.pad_id)
    encoded = model.encode(src, src_mask)
    one_cross_keys, one_cross_values = model.cross_key_values(encoded.memory)
    past_keys = past_values = model.empty_cache(1)
    beams: list[tuple[tuple[int, ...], float]] = [((), 0.0)]  # (generated tokens, sum log-probs)
    finished: list[Hypothesis] = []
    for step in range(max_new_tokens):
        width = len(beams)
        last = [b[0][-1] if b[0] else config.bos_id for b in beams]
        out = model.decode_step(
            torch.tensor(last)[:, None],
            torch.full((width, 1), step),
            torch.ones(width, step + 1, dtype=torch.bool),
            past_keys,
            past_values,
            one_cross_keys.expand(-1, width, -1, -1, -1),
            one_cross_values.expand(-1, width, -1, -1, -1),
            src_mask.expand(width, -1),
        )
        log_probs = out.logits[:, -1].float().log_softmax(dim=-1)  # (W, V)
        totals = log_probs + torch.tensor([b[1] for b in beams])[:, None]
        vocab = totals.shape[1]
        # A stable sort on the flattened (beam, token) scores keeps ties in (beam, token) order.
        order = torch.sort(totals.flatten(), descending=True, stable=True).indices[: 2 * num_beams]
        next_beams: list[tuple[tuple[int, ...], float]] = []
        parents: list[int] = []
        for flat in order.tolist():
            parent, token = divmod(flat, vocab)
            total = float(totals[parent, token])
            tokens = beams[parent][0]
            if token == config.eos_id:
                finished.append(Hypothesis(tokens, total / (len(tokens) + 1) ** length_penalty, True))
            else:
                next_beams.append((tokens + (token,), total))
                parents.append(parent)
            if len(next_beams) == num_beams:
                break
        if len(finished) >= num_beams:
            break
        beams = next_beams
        index = torch.tensor(parents)
        past_keys = out.present_keys[:, index]
        past_values = out.present_values[:, index]
    else:
        finished.extend(Hypothesis(t, s / max(len(t), 1) ** length_penalty, False) for t, s in beams)
    best = max(range(len(finished)), key=lambda i: (finished[i].score, -i))
    return finished[best]
