"""Every command-line tool's --help: a sentence for every option, its default, and no pydantic type names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What pydantic-settings writes as a metavar when nobody chose one: `{str,null}`, `tuple[SecretStr,...]`.
TYPE_NAMES = re.compile(
    r"\{[^}]*\b(str|int|float|bool|Path|null)\b[^}]*\}|SecretStr|tuple\[|\b(str|int|float|Path)\b(?=\s|$)"
)


def help_entries(text: str) -> dict[str, str]:
    """{option spec: its help text} from argparse's help output."""
    entries: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if re.match(r"^  -", line):  # "  --flag METAVAR   help" or "  --long-flag METAVAR" + help below
            spec, _, first = line.strip().partition("  ")
            current = entries.setdefault(spec, [first.strip()])
        elif current is not None and line.startswith(" " * 8):
            current.append(line.strip())
        else:  # a group heading, its description or a blank line
            current = None
    return {spec: " ".join(part for part in parts if part) for spec, parts in entries.items()}


@pytest.mark.parametrize("module", ["service", "model.train", "model.evaluate", "export"])
def test_help_describes_every_option_with_its_default(module):
    result = subprocess.run(
        [sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert not TYPE_NAMES.search(text), TYPE_NAMES.search(text)
    entries = help_entries(text)
    assert len(entries) > 5, text
    for spec, help_text in entries.items():
        if spec.startswith("-h"):
            continue
        assert len(help_text) > 10, f"{module} {spec}: no description"
        takes_value = " " in spec.split(",")[0]  # "--port PORT"; flags are "--resume, --no-resume" or "--force"
        if takes_value:
            assert "(default:" in help_text, f"{module} {spec}: no default in {help_text!r}"
