"""OpenVinoRunner against OnnxRunner on the bundled model: the same greedy outputs, logits and attention
within float rounding at f32, through the runner, the engine and one HTTP request; bf16 where the CPU has it.

Tolerances measured on the bundled model (AMD EPYC Zen 3, AVX2, openvino 2026.4.1, onnxruntime 1.32.0): over
24 greedy steps of the first 16 and of the first 64 sources of deploy/loadtest/inputs.tsv, logits differ by at
most 2.4e-5 (the 5,000-step model before 43fa543: 1.7e-5), attention (encoder, decoder, cross) by 3.8e-6, cross
keys by 1.1e-5; arg-max never.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from service.engine import AttentionSpec, Engine, GenerationParams, GenerationResult
from service.engine.errors import ModelLoadError
from service.engine.model_dir import ModelFiles, load_model_directory
from service.engine.runner import EncoderBatch, OnnxRunner
from service.engine.settings import RuntimeSettings
from service.engine.tokenizer import Tokenizer
from service.http.app import create_app
from tests.servers import make_settings, serve

ov = pytest.importorskip("openvino", reason="the openvino extra is not installed (pip install 'atento[openvino]')")

from service.engine.openvino_runner import OpenVinoRunner  # noqa: E402 - after the skip

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "models" / "normalize" / "1"
INPUTS = ROOT / "deploy" / "loadtest" / "inputs.tsv"
LOGITS_ATOL = 1e-4  # measured 2.4e-5: headroom for other CPUs' kernels (AVX-512, AMX)
ATTENTION_ATOL = 2e-5  # measured 3.8e-6
STEPS = 24
HAS_BF16 = "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
OPENVINO = RuntimeSettings(backend="openvino", intra_op_threads=1)
ONNXRUNTIME = RuntimeSettings(intra_op_threads=1)


def texts(count: int) -> list[str]:
    """The bundled task's mix (numbers, dates, copies, English and Spanish)."""
    lines = INPUTS.read_text(encoding="utf-8").splitlines()
    return [line.split("\t", 1)[0] for line in lines[:count]]


@pytest.fixture(scope="module")
def model() -> ModelFiles:
    return load_model_directory(BUNDLED)


@pytest.fixture(scope="module")
def sources(model: ModelFiles) -> list[list[int]]:
    tokenizer = Tokenizer.from_file(model.tokenizer, eos_id=model.special_tokens["eos"])
    return [tokenizer.encode(text)[0] for text in texts(16)]


@pytest.fixture(scope="module")
def openvino_f32(model: ModelFiles) -> OpenVinoRunner:
    return OpenVinoRunner(model, runtime=OPENVINO)


@pytest.fixture(scope="module")
def onnxruntime(model: ModelFiles) -> OnnxRunner:
    return OnnxRunner(model, runtime=ONNXRUNTIME)


def greedy_steps(runner, sources: list[list[int]], *, bos: int, eos: int) -> Iterator[tuple]:
    """A batched greedy decode with attention, each finished row masked out: (step, output, encoder output)."""
    encoded = runner.encode(EncoderBatch.from_sources(sources, pad_id=0), attention=True)
    cache, tokens = encoded.cache, np.full((len(sources), 1), bos, dtype=np.int64)
    alive = np.ones(len(sources), dtype=bool)
    for step in range(STEPS):
        output = runner.decode(tokens, cache, attention=True, tgt_mask=alive[:, None])
        yield step, output, encoded
        tokens = output.logits[:, -1].argmax(axis=-1)[:, None].astype(np.int64)
        alive &= tokens[:, 0] != eos
        cache = output.cache


def test_f32_runner_matches_onnxruntime_step_by_step(openvino_f32, onnxruntime, sources, model):
    assert openvino_f32.provider == "OpenVINO CPU f32"
    special = {"bos": model.special_tokens["bos"], "eos": model.special_tokens["eos"]}
    worst_logits = worst_attention = 0.0
    for (step, got, got_encoded), (_, want, want_encoded) in zip(
        greedy_steps(openvino_f32, sources, **special), greedy_steps(onnxruntime, sources, **special), strict=True
    ):
        if step == 0:
            np.testing.assert_allclose(got_encoded.cache.cross_keys, want_encoded.cache.cross_keys, atol=1e-4)
            np.testing.assert_allclose(got_encoded.attention, want_encoded.attention, atol=ATTENTION_ATOL)
        # The same arg-max on every row, so both runners keep feeding the same tokens.
        np.testing.assert_array_equal(got.logits.argmax(axis=-1), want.logits.argmax(axis=-1))
        worst_logits = max(worst_logits, float(np.abs(got.logits - want.logits).max()))
        for kind in ("self_attention", "cross_attention"):
            assert getattr(got, kind).shape == getattr(want, kind).shape
            worst_attention = max(worst_attention, float(np.abs(getattr(got, kind) - getattr(want, kind)).max()))
        np.testing.assert_allclose(got.cache.keys, want.cache.keys, atol=1e-4)
        assert got.cache.past_length == want.cache.past_length == step + 1
    assert worst_logits < LOGITS_ATOL, worst_logits
    assert worst_attention < ATTENTION_ATOL, worst_attention


def test_without_attention_the_runner_returns_none_like_onnxruntime(openvino_f32, sources):
    encoded = openvino_f32.encode(EncoderBatch.from_sources(sources[:3], pad_id=0), attention=False)
    assert encoded.attention is None
    output = openvino_f32.decode(np.ones((3, 1), dtype=np.int64), encoded.cache, attention=False)
    assert output.self_attention is None and output.cross_attention is None
    assert output.logits.shape == (3, 1, 1000)


async def generate_all(runtime: RuntimeSettings, inputs: list[str]) -> tuple[list[GenerationResult], str]:
    engine = Engine(BUNDLED, runtime=runtime)
    await engine.start()
    try:
        greedy = GenerationParams(max_new_tokens=64)
        handles = [engine.submit(text, greedy, attention=AttentionSpec(), stream=False) for text in inputs]
        return [await handle.result() for handle in handles], engine.info.provider
    finally:
        await engine.stop(timeout_s=10)


def test_the_engine_on_openvino_gives_onnxruntimes_outputs_and_attention():
    inputs = texts(24)
    got, provider = asyncio.run(generate_all(OPENVINO, inputs))
    want, _ = asyncio.run(generate_all(ONNXRUNTIME, inputs))
    assert provider == "OpenVINO CPU f32"
    assert [r.text for r in got] == [r.text for r in want]
    assert [r.token_ids for r in got] == [r.token_ids for r in want]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose([t.logprob for t in a.tokens], [t.logprob for t in b.tokens], atol=LOGITS_ATOL)
        assert a.attention is not None and b.attention is not None
        for kind in ("encoder", "decoder", "cross"):
            mine, theirs = getattr(a.attention, kind), getattr(b.attention, kind)
            assert mine.keys() == theirs.keys()
            for layer in mine:
                np.testing.assert_allclose(mine[layer], theirs[layer], atol=ATTENTION_ATOL)


def test_one_http_request_on_the_openvino_backend():
    settings = make_settings(model_dir=BUNDLED, runtime={"backend": "openvino", "intra_op_threads": 1})
    with serve(create_app(settings)) as served:
        answer = httpx.post(f"{served.url}/generate", json={"inputs": "El tres de mayo de dos mil uno."}, timeout=60)
        assert answer.status_code == 200, answer.text
        assert answer.json()["generated_text"] == "El 2001-05-03."
        info = httpx.get(f"{served.url}/info").json()
        assert info["execution_provider"] == "OpenVINO CPU f32"
        assert info["decoder_graphs"] == {"format_3": None, "format_2": "decoder.onnx"}  # no such contrib op there
        assert 'provider="OpenVINO CPU f32"' in httpx.get(f"{served.url}/metrics").text


@pytest.mark.skipif(HAS_BF16, reason="this CPU has bf16: the refusal cannot happen here")
def test_bf16_on_this_cpu_is_a_startup_error_naming_what_it_lacks(model):
    bf16 = RuntimeSettings(backend="openvino", inference_precision="bf16", intra_op_threads=1)
    with pytest.raises(ModelLoadError, match="has no bf16 arithmetic: OpenVINO lists its capabilities as .*, without"):
        OpenVinoRunner(model, runtime=bf16)
    result = subprocess.run(
        [sys.executable, "-m", "service", "--port", "0", "--model-dir", str(BUNDLED)]
        + ["--runtime.backend", "openvino", "--runtime.inference-precision", "bf16"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "ATENTO_RUNTIME__INFERENCE_PRECISION=bf16 but this CPU" in result.stderr


@pytest.mark.skipif(not HAS_BF16, reason="this CPU has no bf16 (OpenVINO lists no BF16 capability)")
def test_bf16_runs_at_bf16_and_keeps_the_greedy_choice(model, onnxruntime, sources):
    bf16 = OpenVinoRunner(model, runtime=RuntimeSettings(backend="openvino", inference_precision="bf16"))
    assert bf16.provider == "OpenVINO CPU bf16"
    batch = EncoderBatch.from_sources(sources, pad_id=0)
    start = np.full((len(sources), 1), model.special_tokens["bos"], dtype=np.int64)
    got = bf16.decode(start, bf16.encode(batch, attention=False).cache, attention=False).logits
    want = onnxruntime.decode(start, onnxruntime.encode(batch, attention=False).cache, attention=False).logits
    # bf16 keeps 8 bits of mantissa: the logits move by a few hundredths of their range (0.042 of 14.35 on
    # the base model, BENCHMARKS.md), not enough to change the first token of these sources.
    assert float(np.abs(got - want).max()) < 0.05 * float(want.max() - want.min())
    np.testing.assert_array_equal(got.argmax(axis=-1), want.argmax(axis=-1))


def test_evaluate_runs_on_openvino_and_refuses_what_cannot_run(tmp_path, capsys):
    from service.engine import evaluate

    data = tmp_path / "cases.jsonl"
    data.write_text(
        '{"source": "veintiún años", "target": "21 años", "category": "cardinal_es"}\n'
        '{"source": "I saw one of them.", "target": "I saw one of them.", "category": "copy_en"}\n',
        encoding="utf-8",
    )
    assert evaluate.main(["--data", str(data), "--backend", "openvino", "--errors", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["backend"], report["inference_precision"], report["examples"]) == ("openvino", "f32", 2)
    assert report["exact_match_guard_off"].keys() == {"cardinal_es", "copy_en"}
    with pytest.raises(SystemExit):  # argparse's error: bf16 is OpenVINO's
        evaluate.main(["--data", str(data), "--inference-precision", "bf16"])
    assert "bf16 needs backend openvino" in capsys.readouterr().err
    if not HAS_BF16:
        assert evaluate.main(["--data", str(data), "--backend", "openvino", "--inference-precision", "bf16"]) == 2
        assert "this CPU" in capsys.readouterr().err
