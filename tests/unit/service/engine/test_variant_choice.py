"""The variant the service loads: asked for, the manifest's default, or with auto int8 on CPUs with int8 dot
products when the export checked it against fp32."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from service.engine.model_dir import load_model_directory
from service.engine.variant_choice import choose_variant, cpu_flags
from tests.unit.service.engine.test_model_dir import write_model

VNNI = frozenset({"avx512f", "avx512_vnni", "avx512_bf16"})
CHECKED_INT8 = {"encoder": "e", "decoder": "d", "device": "cpu", "checked": True, "exact_match": 0.98}
VARIANTS: dict[str, Any] = {"fp32": {}, "int8": {**CHECKED_INT8, "fp32_exact_match": 0.985}}


@pytest.mark.parametrize("flag", ["avx512_vnni", "avx_vnni", "amx_int8"])
def test_int8_on_a_cpu_with_int8_dot_products(flag: str) -> None:
    choice = choose_variant(VARIANTS, "fp32", asked="auto", on_cpu=True, flags=frozenset({"avx2", flag}))
    assert choice.name == "int8" and flag in choice.reason


def test_an_imports_int8_needs_fp32s_outputs_on_99_percent_of_inputs() -> None:
    def chosen(agreement: float) -> str:
        int8 = {"encoder": "e", "decoder": "d", "device": "cpu", "checked": True, "exact_match_vs_fp32": agreement}
        return choose_variant({"fp32": {}, "int8": int8}, "fp32", asked="auto", on_cpu=True, flags=VNNI).name

    assert (chosen(1.0), chosen(0.99), chosen(0.98)) == ("int8", "int8", "fp32")


def test_the_manifests_default_unless_auto_finds_int8_worth_it() -> None:
    assert choose_variant(VARIANTS, "fp32", asked=None, on_cpu=True, flags=VNNI).name == "fp32"  # not asked: default
    assert choose_variant(VARIANTS, "fp32", asked="fp32", on_cpu=True, flags=VNNI).reason == "asked for"
    assert choose_variant(VARIANTS, "fp32", asked="auto", on_cpu=True, flags=frozenset({"avx2", "fma"})).name == "fp32"
    assert choose_variant(VARIANTS, "fp32", asked="auto", on_cpu=False, flags=VNNI).name == "fp32"  # CUDA
    assert choose_variant({"fp32": {}}, "fp32", asked="auto", on_cpu=True, flags=VNNI).name == "fp32"


@pytest.mark.parametrize(
    "int8",
    [
        {**CHECKED_INT8, "fp32_exact_match": 0.995},  # two points below fp32's: not the same model
        {**CHECKED_INT8, "checked": False, "fp32_exact_match": 0.98},
        {key: value for key, value in CHECKED_INT8.items() if key != "exact_match"},  # never measured
        {**CHECKED_INT8, "fp32_exact_match": 0.98, "device": "cuda"},
    ],
)
def test_an_int8_variant_not_checked_against_fp32_is_never_preferred(int8: dict[str, Any]) -> None:
    assert choose_variant({"fp32": {}, "int8": int8}, "fp32", asked="auto", on_cpu=True, flags=VNNI).name == "fp32"


def test_cpu_flags_reads_cpuinfo(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2 avx512_vnni\n\nprocessor\t: 1\n")
    assert cpu_flags(cpuinfo) == {"fpu", "avx2", "avx512_vnni"}
    assert cpu_flags(tmp_path / "absent") == frozenset()


def test_load_model_directory_reports_its_choice(tmp_path: Path) -> None:
    directory = write_model(tmp_path)
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["variants"]["int8"] = {**VARIANTS["int8"], "encoder": "encoder.onnx", "decoder": "decoder.onnx"}
    (directory / "manifest.json").write_text(json.dumps(manifest))
    chosen = load_model_directory(directory, variant="auto", on_cpu=True, cpu_flags=VNNI)
    assert (chosen.variant, "avx512_vnni" in chosen.variant_reason) == ("int8", True)
    assert load_model_directory(directory, variant="auto", on_cpu=True, cpu_flags=frozenset({"avx2"})).variant == "fp32"
    assert load_model_directory(directory, on_cpu=True, cpu_flags=VNNI).variant == "fp32"
    assert load_model_directory(directory, variant="fp32", on_cpu=True, cpu_flags=VNNI).variant_reason == "asked for"
