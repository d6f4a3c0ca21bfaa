"""The edit guard's value check: digits that say another number than the source's words are reverted, the
contract's conversions (every form of cardinal, spoken years, dates) are kept."""

from __future__ import annotations

from typing import Any

import pytest

from model.words import edit_guard_spec, month_numbers, number_values
from service.engine.edit_guard import EditGuard
from service.engine.errors import ModelLoadError
from service.engine.guard_values import cardinal, readings


@pytest.fixture(scope="module")
def guard() -> EditGuard:
    return EditGuard.from_manifest(edit_guard_spec(), where="manifest.json")


@pytest.fixture(scope="module")
def guard_without_values() -> EditGuard:
    spec = {k: v for k, v in edit_guard_spec().items() if k not in ("number_values", "month_numbers", "date_years")}
    return EditGuard.from_manifest(spec, where="manifest.json")


# Each output here passes every other rule of the guard (checked below without the value check): only the
# numbers it says are wrong.
WRONG_VALUES = [
    # A fine-tune's "ciento un dálmatas" -> "10 un dálmatas" (2026-12-04) is caught by number_tails too since.
    ("ciento dos dálmatas", "10 dálmatas", [("ciento dos", "10")]),
    ("mil novecientos ochenta", "980", [("mil novecientos ochenta", "980")]),  # the same fine-tune's
    ("Tengo veinticinco años.", "Tengo 52 años.", [("veinticinco", "52")]),
    ("mil millones", "10000000", [("mil millones", "10000000")]),
    ("doscientas mil personas", "2000 personas", [("doscientas mil", "2000")]),
    ("nineteen eighty-four", "1948", [("nineteen eighty-four", "1948")]),
    ("el tres de mayo de dos mil uno", "el 2001-06-03", [("tres de mayo de dos mil uno", "2001-06-03")]),
    ("el tres de mayo de dos mil uno", "el 2011-05-03", [("tres de mayo de dos mil uno", "2011-05-03")]),
    ("May third, twenty twenty-six", "2026-05-04", [("May third, twenty twenty-six", "2026-05-04")]),
    ("tres y cuatro", "4 y 3", [("tres y cuatro", "4 y 3")]),  # each number, in the source's order
    ("at ten thirty in Room 3", "at 1030 in Room 3", [("ten thirty", "1030")]),  # a time, no year (2026-12-06)
]


@pytest.mark.parametrize(("source", "output", "reverted"), WRONG_VALUES)
def test_digits_saying_another_number_are_reverted(
    guard: EditGuard, guard_without_values: EditGuard, source: str, output: str, reverted: list[tuple[str, str]]
) -> None:
    assert guard_without_values.apply(source, output).text == output  # nothing else catches it
    result = guard.apply(source, output)
    assert [(r.source, r.output) for r in result.reverted] == reverted


@pytest.mark.parametrize(
    ("source", "output"),
    [
        ("ciento un dálmatas", "101 dálmatas"),
        ("mil novecientos ochenta", "1980"),
        ("mil millones", "1000000000"),
        ("doscientas mil personas", "200000 personas"),
        ("tres millones doscientos mil euros", "3200000 euros"),
        ("ciento un millones", "101000000"),
        ("veintiún mil", "21000"),
        ("twenty-one hundred", "2100"),
        ("one thousand, two hundred and thirty-four", "1234"),
        ("nineteen eighty-four", "1984"),
        ("nineteen oh five", "1905"),
        ("nineteen hundred and five", "1905"),
        ("May third, twenty twenty-six", "2026-05-03"),
        ("May twenty-third two thousand one", "2001-05-23"),
        ("the third of May, 2001", "2001-05-03"),
        ("12 de abril de 1950", "1950-04-12"),
        ("el tres de mayo de dos mil uno", "el 2001-05-03"),
        ("treinta y uno de febrero de dos mil uno", "31 de febrero de 2001"),
        ("tres y cuatro", "3 y 4"),
        ("3 mil casas", "3000 casas"),
        ("two hundred thousand", "200000"),
    ],
)
def test_the_contracts_conversions_pass(guard: EditGuard, source: str, output: str) -> None:
    assert guard.apply(source, output).text == output


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ((1000, 900, 80), 1980),
        ((100, 1), 101),
        ((1000, 10**6), 10**9),
        ((2, 10**6, 300, 1000, 400), 2_300_400),
        ((1, 1000, 2, 100, 30, 4), 1234),
        ((20, 1, 100), 2100),
        ((30, 4), 34),
    ],
)
def test_cardinal(values: tuple[int, ...], expected: int) -> None:
    assert cardinal(values) == expected


def test_readings_add_spoken_years() -> None:
    assert readings((19, 80, 4)) == {103, 1984, 9904}  # "nineteen eighty-four"; 99 + 04 says no number
    assert readings((20, 20, 6)) == {46, 2026, 4006}
    assert 1905 in readings((19, 0, 5))
    assert readings((2, 1000, 1)) == {2001}  # no two-digit halves: "dos" is no century
    assert readings((10, 30)) == {40} and readings((12, 45)) == {57}  # times: hours stop at twelve
    assert 1492 in readings((14, 90, 2))


def test_the_bundled_tables() -> None:
    values, months = number_values(), month_numbers()
    assert (values["veintiún"], values["doscientas"], values["millones"], values["hundred"]) == (21, 200, 10**6, 100)
    assert (values["third"], values["vigésimo"], values["oh"], values["ciento"]) == (3, 20, 0, 100)
    assert (months["mayo"], months["sept"], months["may"], months["dic"]) == (5, 9, 5, 12)
    spec = edit_guard_spec()
    assert set(spec["number_values"]) | set(spec["month_numbers"]) <= set(spec["consumable_words"])


BASE: dict[str, Any] = {
    "consumable_words": ["tres", "mayo"],
    "consumable_characters": "0",
    "producible_characters": "0",
}


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"number_values": ["tres"]}, "edit_guard.number_values"),
        ({"number_values": {"tres": "3"}}, "edit_guard.number_values"),
        ({"number_values": {"tres": -3}}, "edit_guard.number_values"),
        ({"number_values": {"cuatro": 4}}, "edit_guard.number_values"),
        ({"number_values": {"tres": 3}, "month_numbers": {"mayo": 13}}, "edit_guard.month_numbers"),
        ({"number_values": {"tres": 3}, "month_numbers": {"junio": 6}}, "edit_guard.month_numbers"),
    ],
)
def test_a_bad_table_names_the_field(extra: dict[str, Any], field: str) -> None:
    with pytest.raises(ModelLoadError, match=field):
        EditGuard.from_manifest({**BASE, **extra}, where="manifest.json")


def test_without_number_values_nothing_is_checked() -> None:
    assert EditGuard.from_manifest(BASE, where="manifest.json").values is None
    assert EditGuard.from_manifest({**BASE, "number_values": {"tres": 3}}, where="manifest.json").values is not None


@pytest.mark.timeout(20)  # a hang guard, not a speed target: the first reader tried every order of every date
def test_many_dates_in_one_span_are_read_in_polynomial_time(guard: EditGuard) -> None:
    """22 dates joined by commas are one span; a wrong last one makes the reader try every way to read them.
    Trying each date's two orders together took 2^22 readings (0.47 s for 14 dates, doubling with each)."""
    source = ", ".join(f"{day} de mayo de 2001" for day in range(1, 23))
    right = ", ".join(f"2001-05-{day:02d}" for day in range(1, 23))
    assert guard.apply(source, right).text == right
    wrong = right[: -len("22")] + "23"
    # Paired again at every comma (service/engine/guard_alignment.py), the wrong date alone goes back.
    assert guard.apply(source, wrong).text == right[: -len("2001-05-22")] + "22 de mayo de 2001"


@pytest.mark.parametrize(
    ("source", "output", "reverted"),
    [
        # The bundled model, a paragraph's leap day (2026-12-06): a real date written in parts, not as 2020-02-29.
        (
            "El veintinueve de febrero de dos mil veinte fue sábado.",
            "El 29 de febrero de 2020 fue sábado.",
            "El veintinueve de febrero de dos mil veinte fue sábado.",
        ),
        ("el 29 de febrero de dos mil veinte", "el 29 de febrero de 2020", "el 29 de febrero de dos mil veinte"),
        ("el tres de mayo del dos mil uno", "el 3 de mayo del 2001", "el tres de mayo del dos mil uno"),
        ("February twenty-ninth, two thousand twenty", "February 29, 2020", None),
        ("May third, two thousand one", "May third, 2001", "May third, two thousand one"),
        ("the third of May, two thousand one", "the 3rd of May, 2001", None),
        ("twenty-ninth February two thousand twenty", "29 February 2020", "twenty-ninth February two thousand twenty"),
        ("on the third May two thousand one", "on the 3rd May 2001", None),
        # The bundled model, 2026-12-06: the month dropped, the year converted.
        ("born on twenty-ninth February two thousand twenty, in Lyon.", "born on twenty-ninth 2020, in Lyon.", None),
    ],
)
def test_a_real_date_written_in_parts_is_reverted(
    guard: EditGuard, source: str, output: str, reverted: str | None
) -> None:
    """The model writes a real date of 1900-2099 as an ISO date; in parts ("29 de febrero de 2020") it wrote half
    an edit. Reverted whole or in part (a day and a year left in words), never kept."""
    result = guard.apply(source, output).text
    assert result != output
    if reverted is not None:
        assert result == reverted


@pytest.mark.parametrize(
    ("source", "output"),
    [
        ("treinta y uno de febrero de dos mil uno", "31 de febrero de 2001"),  # no such day: numbers, as the contract
        ("el veintinueve de febrero de dos mil veintitrés", "el 29 de febrero de 2023"),  # not a leap year
        ("el tres de mayo de mil ochocientos cincuenta", "el 3 de mayo de 1850"),  # a year outside date_years
        ("February thirtieth, two thousand twenty", "February thirtieth, 2020"),
        ("el tres de mayo, y dos mil personas", "el 3 de mayo, y 2000 personas"),  # no year: 2000 is a count
        ("el 29 de febrero de 2020 y tres casas", "el 29 de febrero de 2020 y 3 casas"),  # the date is not the edit
        ("veintinueve de Diciembre 1988", "29 de Diciembre 1988"),  # a yearless date beside digits (a context_es pair)
        ("twenty-ninth February two thousand twenty-three", "29 February 2023"),  # not a leap year
    ],
)
def test_a_date_that_stays_in_parts_passes(guard: EditGuard, source: str, output: str) -> None:
    assert guard.apply(source, output).text == output


def test_date_years_must_be_two_years_in_order() -> None:
    values = {"number_values": {"tres": 3}}
    assert EditGuard.from_manifest({**BASE, **values, "date_years": [1900, 2099]}, where="m").values is not None
    for bad in ([2099, 1900], [1900], "1900-2099", [1900.0, 2099]):
        with pytest.raises(ModelLoadError, match="edit_guard.date_years"):
            EditGuard.from_manifest({**BASE, **values, "date_years": bad}, where="m")
    with pytest.raises(ModelLoadError, match="needs 'edit_guard.number_values'"):
        EditGuard.from_manifest({**BASE, "date_years": [1900, 2099]}, where="m")
