"""One example of a normalization task, and user pairs read from a TSV file.

Imports nothing from this repository.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path


class DataError(ValueError):
    """A pairs file is malformed; the message names the file and the 1-based line number."""


@dataclass(frozen=True)
class Example:
    source: str
    target: str
    category: str


def read_pairs_tsv(path: str | Path) -> list[Example]:
    """Read `source<TAB>target[<TAB>category]` lines (category defaults to "tsv").

    Raises:
        DataError: on a line without a tab, with more than three columns, with an empty source,
            or that is not UTF-8. The message names the file and the 1-based line number.
    """
    path = Path(path)
    raw_lines = path.read_bytes().split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()  # a final newline ends the last line; it is not an empty line
    examples = []
    for lineno, raw in enumerate(raw_lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"{path}:{lineno}: not valid UTF-8 ({exc.reason})") from exc
        line = line.removesuffix("\r")
        columns = line.split("\t")
        if len(columns) < 2:
            raise DataError(f"{path}:{lineno}: expected source<TAB>target, found no tab")
        if len(columns) > 3:
            raise DataError(f"{path}:{lineno}: expected at most 3 tab-separated columns, found {len(columns)}")
        if not columns[0]:
            raise DataError(f"{path}:{lineno}: empty source")
        category = columns[2] if len(columns) == 3 and columns[2] else "tsv"
        examples.append(Example(source=columns[0], target=columns[1], category=category))
    return examples


def write_pairs_jsonl(path: str | Path, examples: list[Example]) -> None:
    """One JSON object per line ({"source", "target", "category"}): unlike TSV, any text round-trips,
    line breaks and tabs included. The service's evaluator (python -m service.engine.evaluate) reads it."""
    lines = (json.dumps(dataclasses.asdict(e), ensure_ascii=False) for e in examples)
    Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def read_pairs_jsonl(path: str | Path) -> list[Example]:
    """The examples `write_pairs_jsonl` wrote.

    Raises:
        DataError: on a line that is not a JSON object with string "source" and "target" fields.
    """
    path = Path(path)
    examples = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{lineno}: not JSON ({exc.msg})") from exc
        if not isinstance(record, dict) or not all(isinstance(record.get(k), str) for k in ("source", "target")):
            raise DataError(f"{path}:{lineno}: expected an object with string source and target")
        examples.append(Example(record["source"], record["target"], str(record.get("category", "jsonl"))))
    return examples
