"""The edit guard's value check (docs/model-directory.md, `number_values`): the numbers an edit writes in digits
must be the numbers its source says in words, in the same order. "ciento" -> "10", "mil novecientos ochenta" ->
"980" or "veinticinco" -> "52" write digits where the guard's other rules only see that digits were written.

Also the manifest's tables of values (`number_values`, `month_numbers`, `date_years`) and the calendar checks of the
dates an edit writes. Pure Python (re, datetime); the edit guard (service/engine/edit_guard.py) calls it on each span it
allows.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service.engine.errors import ModelLoadError

# An ISO calendar date as a rewrite writes one ("2020-02-29"), not inside a longer run of digits.
ISO_DATE = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")
# An ISO date the edit writes (a day and a year to find in the source, a month to find among its names), or a
# run of digits standing alone: digits glued to letters ("2cientas") are refused by the guard's other rules.
_WRITTEN_NUMBER = re.compile(rf"{ISO_DATE.pattern}|(?<!\w)(\d+)(?!\w)")
# A date written as numbers around its month's name: day first ("29 de febrero de 2020", "the 3rd of May, 2001",
# British "29 February 2020"), or month first ("February 29, 2020", "May third, 2001"); its day in digits or in
# number words. Day first with "de" and no separator before the year is no date: "29 de Diciembre 1988" is a
# yearless date beside a number (a context_es pair).
_DAY = r"(?P<day>\d{1,2}(?:st|nd|rd|th)?|[^\W\d_]+(?:-[^\W\d_]+)?)"
_MONTH = r"(?P<month>[^\W\d_]+\.?)"
_YEAR = r"(?P<year>\d{4})(?![\w-])"
_DATES_IN_PARTS = (
    re.compile(rf"(?<![\w-])(?:the )?{_DAY}(?: de| of)? {_MONTH}(?:,| del?) {_YEAR}", re.IGNORECASE),
    re.compile(rf"(?<![\w-]){_MONTH} (?:the )?{_DAY},? {_YEAR}", re.IGNORECASE),
    re.compile(rf"(?<![\w-])(?:the )?{_DAY} {_MONTH} {_YEAR}", re.IGNORECASE),
)
_DATE_CONTEXT_TOKENS = 12  # tokens read on each side of an edit, where the rest of its date may be written
# Values that multiply what comes before them: "doscientos mil", "twenty-one hundred", "mil millones".
_MULTIPLIERS = frozenset({100, 1000, 10**6, 10**9, 10**12})
# The most words one number of the contract is written with: 999,999,999,999 in English takes 19 ("nine hundred
# ninety-nine billion ..."), in Spanish 15.
_LONGEST_GROUP = 24
# The most words each of a spoken year's two parts is written with (two: "ninety-nine", "oh five"; one spare).
_YEAR_PART_WORDS = 3


@dataclass(frozen=True)
class _Unit:
    value: int
    # Units of one run are separated only by whitespace, hyphens, commas ("one thousand, two hundred") and
    # connectors: one number may span them.
    run: int


@dataclass(frozen=True, eq=False)
class NumberValues:
    """What the number words and month names of a model's task are worth, to read the source side of an edit."""

    words: Mapping[str, int]  # "tres": 3, "veintiún": 21, "mil": 1000, "twenty": 20, "third": 3, "oh": 0
    months: Mapping[str, int]  # "mayo": 5, "sept": 9
    # Words that may stand inside a number or between a date's parts without ending it ("y", "and", "de").
    connectors: frozenset[str]
    # The years (first, last) whose real dates the model writes as ISO dates: one it writes as numbers around
    # the month's name ("29 de febrero de 2020") is half an edit. None: not checked.
    date_years: tuple[int, int] | None = None

    def agree(self, source: Sequence[str], output: Sequence[str], copied: Sequence[bool]) -> bool:
        """Whether the numbers the `output` tokens write (digit runs, ISO dates) are, in order, what the number words
        and digits of the `source` tokens say, every one of those read. `copied[i]`: the aligner matched source[i]
        to an output token, so a number word there is kept as a word, no part of the edit ("ciento un" -> "10 un"
        converted "ciento" alone). A date's day and year may come in either order; its month must be one of the
        source's month names when the source names any, and a month name the edit consumes must be an ISO date's month
        ("February two thousand twenty" -> "2020" dropped the month)."""
        written = list(_WRITTEN_NUMBER.finditer("".join(output)))
        consumed_months = {
            self.months[t.lower()]
            for t, kept in zip(source, copied, strict=True)
            if not kept and t.lower() in self.months
        }
        if not consumed_months <= {int(match.group(2)) for match in written if match.group(4) is None}:
            return False
        units, months = self._source_units(source, copied)
        if not written and not units:
            return True
        # Each number written, with the orders its source may say its parts in: a date's day and year either way.
        wanted: list[tuple[tuple[int, ...], ...]] = []
        for match in written:
            if match.group(4) is not None:
                wanted.append(((int(match.group(4)),),))
                continue
            year, month, day = (int(match.group(g)) for g in (1, 2, 3))
            if months and month not in months:
                return False
            wanted.append(((day, year), (year, day)))
        return _Partition(units).matches(wanted)

    def writes_date_in_parts(self, out: Sequence[str], j1: int, j2: int) -> bool:
        """Whether out[j1:j2] writes part of a real date of `date_years` as a day and a year around its month's name
        ("29 de febrero de 2020", "February 29, 2020", "May third, 2001"), which the model writes as an ISO date;
        an impossible date ("31 de febrero de 2001") or one of another year is written so, and passes."""
        if self.date_years is None:
            return False
        text, start, stop = _edit_in_context(out, j1, j2, _DATE_CONTEXT_TOKENS)
        return any(
            match.start() < stop and match.end() > start and self._reads_as_real_date(match)
            for pattern in _DATES_IN_PARTS
            for match in pattern.finditer(text)
        )

    def _reads_as_real_date(self, match: re.Match[str]) -> bool:
        assert self.date_years is not None
        month = self.months.get(match["month"].lower().rstrip("."))
        day_text = match["day"].lower()
        if day_text[:1].isdigit():
            day = int(day_text.rstrip("stndrh"))
        elif all(part in self.words for part in day_text.split("-")):
            day = cardinal(tuple(self.words[part] for part in day_text.split("-")))
        else:
            return False
        first, last = self.date_years
        year = int(match["year"])
        return month is not None and first <= year <= last and _is_real_date(str(year), str(month), str(day))

    def _source_units(self, source: Sequence[str], copied: Sequence[bool]) -> tuple[list[_Unit], set[int]]:
        """The source's digit runs (copied or not: the output's digits hold the copied ones too) and the number
        words it does not copy, each with its run, and the months its names say."""
        units: list[_Unit] = []
        months: set[int] = set()
        run = 0
        for token, kept in zip(source, copied, strict=True):
            word = token.lower()
            if token.isdigit():
                units.append(_Unit(int(token), run))
            elif word in self.words and not kept:
                units.append(_Unit(self.words[word], run))
            elif token.isspace() or token in "-," or (word in self.connectors and word not in self.words):
                continue
            else:
                if word in self.months:
                    months.add(self.months[word])
                run += 1
        return units, months


class _Partition:
    """Whether source units, all of them and in order, split into consecutive groups, each within one run and of
    at most _LONGEST_GROUP units, whose readings say the wanted numbers in order. Dynamic programming over (unit,
    number): polynomial in the span's length, whatever it holds (a span is at most one model call's output)."""

    def __init__(self, units: list[_Unit]) -> None:
        self.units = units
        self._readings: dict[tuple[int, int], set[int]] = {}

    def matches(self, wanted: list[tuple[tuple[int, ...], ...]]) -> bool:
        memo: dict[tuple[int, int], bool] = {}

        def rest_matches(start: int, at: int) -> bool:
            if at == len(wanted):
                return start == len(self.units)
            if (start, at) not in memo:
                memo[(start, at)] = any(
                    rest_matches(stop, at + 1) for order in wanted[at] for stop in self._ends(start, order)
                )
            return memo[(start, at)]

        return rest_matches(0, 0)

    def _ends(self, start: int, values: tuple[int, ...]) -> set[int]:
        """Where groups saying `values`, one group each, may end when the first begins at unit `start`."""
        positions = {start}
        for value in values:
            positions = {stop for position in positions for stop in self._group_ends(position, value)}
        return positions

    def _group_ends(self, start: int, value: int) -> list[int]:
        ends = []
        longest = min(_LONGEST_GROUP, _most_words(value))
        for stop in range(start + 1, min(len(self.units), start + longest) + 1):
            if self.units[stop - 1].run != self.units[start].run:
                break
            if (start, stop) not in self._readings:
                self._readings[(start, stop)] = readings(tuple(unit.value for unit in self.units[start:stop]))
            if value in self._readings[(start, stop)]:
                ends.append(stop)
        return ends


def _most_words(value: int) -> int:
    """The most number words `value` is said with: five for each group of three digits ("nine hundred ninety-nine
    thousand", "novecientos noventa y nueve mil"; "y" and "and" are connectors, no units) and one spare. A group
    longer than that cannot say it, and is not read: a list of 60 "tres" was read in groups of up to 24 words."""
    return 5 * -(-len(str(value)) // 3) + 1


def readings(values: tuple[int, ...]) -> set[int]:
    """What a run of number values may say: the cardinal ("mil novecientos ochenta" 1980, "twenty-one hundred"
    2100, "mil millones" 10**9) and, split in two parts of up to two digits each, a spoken year ("nineteen
    eighty-four" 1984, "twenty twenty-six" 2026, "nineteen oh five" 1905), its first part from thirteen: "ten
    thirty" and "twelve fifteen" are times, and "at ten thirty" -> "at 1030" is reverted."""
    found = {cardinal(values)}
    # Each part of a year is at most a few words ("nineteen", "eighty-four", "oh five"): a longer run is read as a
    # cardinal only, which keeps a run of 24 words at 24 operations instead of 24 squared (a list of 60 number
    # words, "tres, tres, ...", took 70 ms to check, for each of the guard's alignments of it).
    for cut in range(max(1, len(values) - _YEAR_PART_WORDS), min(len(values) - 1, _YEAR_PART_WORDS) + 1):
        century, year = cardinal(values[:cut]), cardinal(values[cut:])
        if 13 <= century <= 99 and 0 <= year <= 99:  # "ten thirty" is a time, not 1030 (hours stop at 12)
            found.add(century * 100 + year)
    return found


def cardinal(values: tuple[int, ...]) -> int:
    """The number a run of word values says: the largest multiplier (its last occurrence) times what comes before
    it (1 when nothing does: "mil", "cien"), plus what comes after; without a multiplier, their sum."""
    multipliers = [v for v in values if v in _MULTIPLIERS]
    if not multipliers:
        return sum(values)
    largest = max(multipliers)
    at = len(values) - 1 - values[::-1].index(largest)
    before, after = values[:at], values[at + 1 :]
    return (cardinal(before) if before else 1) * largest + (cardinal(after) if after else 0)


def number_values_from_manifest(
    entry: Mapping[str, Any], *, words: frozenset[str], connectors: frozenset[str], where: str
) -> NumberValues | None:
    """The optional `number_values` ({word: integer >= 0}) and `month_numbers` ({month name: 1-12}), both over
    consumable words, and `date_years` ([first, last]); None without `number_values`."""
    tables: dict[str, dict[str, int]] = {}
    for key, lowest, highest in (("number_values", 0, None), ("month_numbers", 1, 12)):
        table = entry.get(key, {})
        if not isinstance(table, Mapping) or not all(
            word in words and type(value) is int and value >= lowest and (highest is None or value <= highest)
            for word, value in table.items()
        ):
            limits = f"{lowest}-{highest}" if highest else f"integers >= {lowest}"
            raise ModelLoadError(f"{where}: field 'edit_guard.{key}' must map words from consumable_words to {limits}")
        tables[key] = dict(table)
    years = entry.get("date_years")
    if years is not None and not (
        isinstance(years, list) and len(years) == 2 and all(type(y) is int for y in years) and 1 <= years[0] <= years[1]
    ):
        raise ModelLoadError(f"{where}: field 'edit_guard.date_years' must be [first, last], two years in order")
    if "number_values" not in entry:
        if years is not None:
            raise ModelLoadError(f"{where}: field 'edit_guard.date_years' needs 'edit_guard.number_values'")
        return None
    return NumberValues(
        words=tables["number_values"],
        months=tables["month_numbers"],
        connectors=connectors,
        date_years=None if years is None else (years[0], years[1]),
    )


def writes_wrong_date(output: list[str], offset: int, j1: int, j2: int, values: NumberValues | None) -> bool:
    """Whether the edit output[offset + j1:offset + j2] writes a date as the model never should: an ISO date the
    calendar does not have, or (with `values` that declare `date_years`) a real date in parts. `output`: the whole
    output's tokens, where the rest of the date may lie (in the common prefix or suffix the alignment leaves out)."""
    start, stop = offset + j1, offset + j2
    return writes_impossible_date(output, start, stop) or (
        values is not None and values.writes_date_in_parts(output, start, stop)
    )


def writes_impossible_date(out: list[str], j1: int, j2: int) -> bool:
    """Whether out[j1:j2] writes part of an ISO date the calendar does not have ("2001-02-29"); a few tokens on each
    side are read too, where the date may begin or end ("2001" of "29 feb 2001", matched to the source)."""
    text, start, stop = _edit_in_context(out, j1, j2, 4)
    return any(m.start() < stop and m.end() > start and not _is_real_date(*m.groups()) for m in ISO_DATE.finditer(text))


def _edit_in_context(out: Sequence[str], j1: int, j2: int, around: int) -> tuple[str, int, int]:
    """The text of out[j1:j2] with up to `around` tokens on each side, and where the edit starts and stops in it."""
    lo, hi = max(0, j1 - around), min(len(out), j2 + around)
    start = len("".join(out[lo:j1]))
    return "".join(out[lo:hi]), start, start + len("".join(out[j1:j2]))


def _is_real_date(year: str, month: str, day: str) -> bool:
    try:
        dt.date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True
