"""Case folding (service/engine/case_folding.py): what the model reads, and the capitals put back on its output,
whole or streamed in parts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.case_folding import case_folding_spec, fold_title_case
from service.engine.case_folding import CaseFolding
from service.engine.errors import ModelLoadError
from service.engine.model_dir import load_model_directory
from tests.unit.service.engine.test_service_tokenizer import tiny_tokenizer

FOLDING = CaseFolding.from_manifest(case_folding_spec(), where="model.words")
BUNDLED = Path(__file__).parents[4] / "models" / "normalize" / "1"


def test_title_case_words_are_lowered_and_nothing_else() -> None:
    text = "Quinientas casas. Tres de Mayo, May third; NASA iPhone Ñandú Éxito İstanbul ǅemal A x_Yz 3Tres"
    folded = "quinientas casas. tres de mayo, May third; NASA iPhone ñandú éxito İstanbul ǅemal a x_yz 3tres"
    assert FOLDING.fold(text) == folded


def test_folds_are_the_same_from_the_cache_and_past_its_bounds() -> None:
    """fold keeps recent texts' folds (a request folds its text five times); what it returns never depends on it."""
    folding = CaseFolding.from_manifest(case_folding_spec(), where="model.words")
    texts = [f"Tres Casas {n} Y DOS PERROS" for n in range(600)] + ["Quinientas " * 1000]
    first = [folding.fold(text) for text in texts]
    assert first[0] == "tres casas 0 y dos perros" and first[-1] == "quinientas " * 1000
    assert [folding.fold(text) for text in reversed(texts)] == list(reversed(first))
    assert folding == CaseFolding.from_manifest(case_folding_spec(), where="model.words")  # the cache is no field


def test_english_month_and_weekday_names_and_i_keep_their_capitals() -> None:
    assert FOLDING.fold("Thursday, May 3, Sept 12, Mon 4 Jan") == "Thursday, May 3, Sept 12, Mon 4 Jan"
    assert FOLDING.fold("On May third, I left. Y tú") == "on May third, I left. y tú"
    assert FOLDING.fold("El Mayo pasado") == "el mayo pasado"  # a Spanish month is no English date's capital


def test_words_in_a_run_of_capitals_are_lowered_and_a_lone_one_kept() -> None:
    assert FOLDING.fold("OFERTA: DOS POR UNO. TREINTA Y DOS") == "oferta: dos por uno. treinta y dos"
    assert FOLDING.fold("HAPPY NEW YEAR TWENTY-FIVE, MAY THIRD") == "happy new year twenty-five, May third"
    # an acronym alone, words joined with no space, a name touching a digit or an underscore: as written
    for text in ["la ONCE y la DGT", "MS-DOS y AC/DC", "MAX_RETRIES = TRES", "COVID19 CASOS", "TOP 10 LISTAS"]:
        assert FOLDING.fold(text) == text
    assert FOLDING.fold("A NASA") == "a NASA"
    assert FOLDING.fold("WINDOWS Y MS-DOS") == "windows y ms-dos"
    without_runs = CaseFolding(keep_words=FOLDING.keep_words)
    assert without_runs.fold("TREINTA AÑOS") == "TREINTA AÑOS"


def test_a_run_of_capitals_gets_its_capitals_back() -> None:
    source = "SE BUSCAN VEINTE VOLUNTARIOS EL TRES DE MAYO"
    assert FOLDING.restore(source, "se buscan 20 voluntarios el 3 de mayo") == "SE BUSCAN 20 VOLUNTARIOS EL 3 DE MAYO"
    assert FOLDING.restore("MAY THIRD SALE", "May 3 sale") == "MAY 3 SALE"


CAPITALS = st.text(alphabet="AB ÑÉ-_1,.ab", max_size=40)


@given(st.text(max_size=80) | CAPITALS)
def test_folding_keeps_every_offset(text: str) -> None:
    folded = FOLDING.fold(text)
    assert len(folded) == len(text)
    assert all(a == b or a == b.lower() for a, b in zip(folded, text, strict=True))


@given(st.text(max_size=80) | CAPITALS)
def test_a_copy_of_the_folded_source_gets_the_source_back(text: str) -> None:
    assert FOLDING.restore(text, FOLDING.fold(text)) == text


@given(st.text(max_size=60) | CAPITALS | st.sampled_from(["On May third, I left.", "Ǆemal İz Sept", "MAY THIRD"]))
def test_training_folds_as_the_service_does(text: str) -> None:
    """model/ may not import service/: its fold (for training) restates the rule, and must agree with it."""
    assert fold_title_case(text) == FOLDING.fold(text)


def test_converted_words_are_left_and_copied_words_take_their_capitals() -> None:
    source = "Quinientas cuarenta y cuatro Casas. El tres de mayo vino Ana"
    output = "544 casas. el 3 de mayo vino ana"
    assert FOLDING.restore(source, output) == "544 Casas. El 3 de mayo vino Ana"
    assert FOLDING.restore("Tres perros", "3 perros tres") == "3 perros tres"  # no source word left for "tres"


@given(text=st.text(alphabet="Aa Bb.3", max_size=40), cuts=st.lists(st.integers(0, 40), max_size=8))
def test_a_streamed_output_is_restored_as_the_whole_one(text: str, cuts: list[int]) -> None:
    source = "Ab ba Bab aB " + text
    output = FOLDING.fold(text) + " ab bab"
    restorer = FOLDING.restorer(source)
    edges = sorted({0, len(output), *(min(cut, len(output)) for cut in cuts)})
    decided = [restorer.push(output[start:end]) for start, end in zip(edges, edges[1:], strict=False)]
    decided.append(restorer.finish())
    assert "".join(decided) == FOLDING.restore(source, output)
    assert all(len(part) <= len(output) for part in decided)


def test_a_stream_waits_only_on_words_that_may_take_a_capital() -> None:
    plain = FOLDING.restorer("la casa de 3 pisos")
    assert [plain.push(part) for part in ["la", " ca", "sa", " de 3"]] == ["la", " ca", "sa", " de 3"]
    named = FOLDING.restorer("Ana come pan")
    assert [named.push(part) for part in ["an", "a", " come", " pan"]] == ["", "", "", "Ana come pan"]
    assert named.push(".") + named.finish() == "."


def test_the_tokenizer_reads_the_folded_text_at_the_original_offsets() -> None:
    plain, folding = tiny_tokenizer(), tiny_tokenizer(fold=FOLDING.fold)
    ids, offsets = folding.encode("Hello World")
    assert (ids, offsets) == plain.encode("hello world")
    assert folding.encode_plain("World") == plain.encode_plain("world")


def test_the_bundled_model_declares_case_folding() -> None:
    model = load_model_directory(BUNDLED)
    assert model.case_folding == FOLDING


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ("title_case", "'case_folding' must be an object"),
        ({"fold": "lower"}, "case_folding.fold"),
        ({"fold": "title_case", "keep_words": ["May 3"]}, "case_folding.keep_words"),
        ({"fold": "title_case", "keep": []}, "unknown keys"),
        ({"fold": "title_case", "upper_case_runs": "yes"}, "case_folding.upper_case_runs"),
    ],
)
def test_a_bad_entry_is_a_startup_error_naming_the_field(tmp_path: Path, entry: object, field: str) -> None:
    manifest = json.loads((BUNDLED / "manifest.json").read_text())
    for name in manifest["files"]:
        (tmp_path / name).symlink_to(BUNDLED / name)
    manifest["case_folding"] = entry
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelLoadError, match=field):
        load_model_directory(tmp_path)
