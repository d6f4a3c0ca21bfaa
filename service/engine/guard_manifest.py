"""The edit guard's fields read from a model directory's manifest (docs/model-directory.md, `edit_guard`): which
words and characters an edit may consume and produce, and the optional data of the later rules, each checked
and named in the error when it is wrong. Split from edit_guard.py, which judges the edits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.engine.errors import ModelLoadError
from service.engine.guard_alignment import split_tokens
from service.engine.guard_language import LANGUAGE_FIELDS, language_rule_from_manifest
from service.engine.guard_number_edges import number_tails_from_manifest
from service.engine.guard_values import number_values_from_manifest


def guard_fields_from_manifest(entry: Any, *, where: str) -> dict[str, Any]:
    """`EditGuard`'s fields from a manifest's `edit_guard` object.

    Raises:
        ModelLoadError: naming the field (`edit_guard.consumable_words`, ...) that is missing or wrong.
    """
    if not isinstance(entry, Mapping):
        raise ModelLoadError(f"{where}: field 'edit_guard' must be an object")
    known = {
        "consumable_words", "consumable_characters", "producible_characters", "connector_words", "name_words",
        "number_words", "ordinal_words", "joining_words", "number_tails", "number_values", "month_numbers",
        "date_years", *LANGUAGE_FIELDS,
    }  # fmt: skip
    unknown = set(entry) - known
    if unknown:
        raise ModelLoadError(f"{where}: field 'edit_guard' has unknown keys {sorted(unknown)}")
    words = entry.get("consumable_words")
    if not isinstance(words, list) or not all(isinstance(w, str) and w for w in words):
        raise ModelLoadError(f"{where}: field 'edit_guard.consumable_words' must be a list of non-empty strings")
    bad = [w for w in words if w != w.lower() or split_tokens(w) != [w] or not w[0].isalnum()]
    if bad:
        raise ModelLoadError(
            f"{where}: field 'edit_guard.consumable_words' must hold lowercase single words, not {bad[:5]}"
        )
    characters: dict[str, frozenset[str]] = {}
    for key in ("consumable_characters", "producible_characters"):
        value = entry.get(key)
        if not isinstance(value, str) or any(c.isspace() for c in value):
            raise ModelLoadError(f"{where}: field 'edit_guard.{key}' must be a string of non-space characters")
        characters[key] = frozenset(value)
    connectors = entry.get("connector_words", [])
    if not isinstance(connectors, list) or not all(isinstance(w, str) and w in words for w in connectors):
        raise ModelLoadError(
            f"{where}: field 'edit_guard.connector_words' must be a list of words from consumable_words"
        )
    subsets: dict[str, frozenset[str]] = {}
    for key in ("name_words", "number_words", "ordinal_words", "joining_words"):
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(w, str) and w in words for w in value):
            raise ModelLoadError(f"{where}: field 'edit_guard.{key}' must be a list of words from consumable_words")
        subsets[key] = frozenset(value)
    vocabulary = frozenset(words)
    tail_words, tail_after = number_tails_from_manifest(entry, words=vocabulary, where=where)
    values = number_values_from_manifest(entry, words=vocabulary, connectors=frozenset(connectors), where=where)
    return dict(
        consumable_words=vocabulary,
        consumable_characters=characters["consumable_characters"],
        producible_characters=characters["producible_characters"],
        connector_words=frozenset(connectors),
        name_words=subsets["name_words"],
        number_words=subsets["number_words"],
        ordinal_words=subsets["ordinal_words"],
        joining_words=subsets["joining_words"],
        number_tail_words=tail_words,
        number_tail_after=tail_after,
        values=values,
        languages=language_rule_from_manifest(entry, words=vocabulary, where=where),
    )
