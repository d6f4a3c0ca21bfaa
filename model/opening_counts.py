"""Counts that open a later sentence: "... de la playa. Tiene dos piscinas." -> "... de la playa. Tiene 2 piscinas."

The generator's carriers never open with their slot (model/carrier_text.py), so in its paragraphs no sentence
after the first starts with a number or with the few words that lead to one. People write them all the time, and
the bundled model of 2026-12-05 left them in words or dropped the word before them: "Tiene dos piscinas y un
gimnasio." after a first sentence came out "2 piscinas y un gimnasio.", "Eighteen of them are new." and "Veinte
años atrás eran menos." were copied (tests/integration/real_text_probe_fresh.jsonl, written before this drill).

A drill text is one or two of training's own sentences, then a hand-written number carrier (training's) cut so that
its count, or the one or two words before it, opens the sentence, capitalized; sometimes one more sentence after.

Or (`line_share` of the drills) a short line of its own, which the service decodes as a piece of its own (it splits
documents at line breaks): a heading ("## Capítulo tres", "Chapter Twelve: ..."), a table's row ("| Apples | five
|") or a line of dialogue ("—Treinta y dos."). The model copied all three (tests/integration/
real_text_probe_fresh.jsonl), and broke a table's separator row ("|---|---|" -> "|---|--|"), which some lines are.
A share of both (CONTRAST_SHARE) holds, where the count would be, a word that opens like a number word and is none
("Those", "Several", "Cuando", "Thirsty", "Cincuentaer"), copied: without them the drills taught the model that a
capitalized word opening a sentence or line like a number word is one, and it wrote the test split's unseen
"Thursday" as "10" (a fine-tune of 2026-12-05, whose `paragraph_plain` fell from 98.3% to 96.0%).
Training only: it draws from the training split's carriers and numbers and nothing in the held-out splits changes.
"""

from __future__ import annotations

import functools
import random
import re

from model.carrier_text import carriers
from model.copytext import fits_one_piece
from model.expressions import cardinal_words, sample_number, sentence_agreement
from model.frequent_text import frequent_word, frequent_words
from model.sentences_rewritten import expression_sentence, sentence_number
from model.words import near_miss_word, number_word_stems

Pair = tuple[str, str]
# How many of the carrier's words before its count stay ("tiene {n}" -> "Tiene dos"), and their odds.
LEAD_WORDS_KEPT = ((0, 0.5), (1, 0.35), (2, 0.15))
# Digit counts of the opening count: mostly the small counts people open a sentence with ("Nine points").
COUNT_DIGITS = (2, 2, 2, 3, 4, 6)
# What the sentences around the opening one are: a copied carrier, or one with an expression of its own.
LEADING_KINDS = (("plain", 0.5), ("number", 0.3), ("expression", 0.2))
# Between sentences, with their odds: most texts people write run on with a space.
SEPARATORS = ((" ", 0.75), ("\n", 0.2), ("\n\n", 0.05))
FOLLOWING_SENTENCE_SHARE = 0.4
SENTENCE_END = re.compile(r"[.!?…][»\"”')]*$")
# Short lines: what a heading names, how it is marked, how a line of dialogue opens and closes.
HEADING_WORDS = {
    "es": (
        "Capítulo",
        "Parte",
        "Tema",
        "Lección",
        "Sección",
        "Episodio",
        "Temporada",
        "Nivel",
        "Paso",
        "Semana",
        "Ronda",
    ),
    # Not "Chapter" or "Part": words of held-out carriers only (model.frequent_text.held_out_only_words).
    "en": ("Unit", "Lesson", "Section", "Episode", "Season", "Level", "Step", "Week", "Round", "Act", "Book", "Volume"),
}
HEADING_MARKS = (("", ""), ("", ""), ("# ", ""), ("## ", ""), ("### ", ""), ("**", "**"))
DIALOGUE_MARKS = {
    "es": (("—", ""), ("– ", ""), ("- ", ""), ("«", "»"), ("", "")),
    "en": (('"', '"'), ("“", "”"), ("- ", ""), ("", "")),
}
TABLE_SEPARATORS = ("---", "---", " --- ", ":---", "---:", ":---:")
LINE_KINDS = (("heading", 0.35), ("table_row", 0.35), ("dialogue", 0.3))
# Of the table lines, the separator row, copied.
SEPARATOR_ROW_SHARE = 0.15
# Of the opening sentences and lines, those with a lookalike of a number word where the count would be, copied.
CONTRAST_SHARE = 0.3
SPANISH_OPENING_MARKS = {"?": "¿", "!": "¡"}
OPENING_MARKS = ("«", "“", '"', "(", "[", "¿", "¡", "—")


def _weighted(rng: random.Random, choices: tuple[tuple[object, float], ...]) -> object:
    values, weights = zip(*choices, strict=True)
    return rng.choices(values, weights)[0]


def capitalized(text: str) -> str:
    """The first letter upper-cased, after any opening mark ("¿tiene" -> "¿Tiene", "«dos" -> "«Dos"); a text that
    opens with digits stays as it is ("40 tickets")."""
    for i, character in enumerate(text):
        if character.isalpha():
            return text[:i] + character.upper() + text[i + 1 :]
        if character.isdigit():
            return text
    return text


@functools.cache
def _one_slot_number_carriers(lang: str) -> tuple[str, ...]:
    """Training's hand-written number carriers with one count; filtered once, not on every drill."""
    return tuple(t for t in carriers(f"number_{lang}", "train") if t.count("{n}") == 1)


def opening_count_sentence(rng: random.Random, lang: str) -> Pair:
    """A training number carrier from its count on, or from one or two words before it, capitalized:
    "El pueblo tiene {n} habitantes según el censo." -> "Tiene ocho habitantes según el censo."."""
    while True:
        template = rng.choice(_one_slot_number_carriers(lang))
        before, after = template.split("{n}")
        lead = before.split()
        kept = min(int(_weighted(rng, LEAD_WORDS_KEPT)), len(lead))  # type: ignore[call-overload]
        cut, kept_words = lead[: len(lead) - kept], lead[len(lead) - kept :]
        if not any(mark in word for word in cut for mark in OPENING_MARKS):  # a quote cut open is no sentence
            break
    if rng.random() < CONTRAST_SHARE:
        words = digits = lookalike(rng, lang) if not kept_words else lookalike(rng, lang).lower()
    else:
        n = sample_number(rng, "train", in_sentence=True, max_digits=rng.choice(COUNT_DIGITS))
        words = cardinal_words(n, lang, rng, form=sentence_agreement(rng) if lang == "es" else "alone")
        digits = str(n)
    source = " ".join([*kept_words, words]) + after
    target = " ".join([*kept_words, digits]) + after
    return capitalized(source), capitalized(target)


def _surrounding_sentence(rng: random.Random, lang: str) -> Pair:
    """A sentence of training's, ended: a bare expression ("the thirty-first of November") gets a full stop, so
    that the count after it opens a sentence rather than reading on from it."""
    kind = _weighted(rng, LEADING_KINDS)
    if kind == "plain":
        sentence = rng.choice(carriers(f"plain_{lang}", "train"))
        return sentence, sentence
    make = sentence_number if kind == "number" else expression_sentence
    source, target = make(rng, "train", lang)
    if not SENTENCE_END.search(source):
        source, target = source + ".", target + "."
    return source, target


@functools.cache
def lookalike_words(lang: str) -> tuple[str, ...]:
    """Frequent real words that open with the first three letters of a number word and are none ("those",
    "several", "cuando", "cierto")."""
    stems = number_word_stems(lang)
    openings = {stem[:3] for stem in stems}
    return tuple(w for w in frequent_words(lang) if w[:3].lower() in openings and w.lower() not in stems)


def lookalike(rng: random.Random, lang: str) -> str:
    """A real lookalike of a number word, or (a third of the time) a made-up one, capitalized."""
    word = near_miss_word(rng, lang) if rng.random() < 1 / 3 else rng.choice(lookalike_words(lang))
    return capitalized(word)


def _line_count(rng: random.Random, lang: str, *, title: bool) -> Pair:
    """A count a short line holds, mostly a small one, capitalized (or with `title`, sometimes in English title
    case, "Chapter Twenty-One"; Spanish headings capitalize the first word only, "Capítulo Veintiuno")."""
    if rng.random() < CONTRAST_SHARE:
        word = lookalike(rng, lang)
        return word, word
    n = rng.choice((rng.randint(2, 12), rng.randint(2, 40), rng.randint(2, 99)))
    words = cardinal_words(n, lang, rng)
    if title and lang == "en" and rng.random() < 0.5:
        return words.title(), str(n)
    return capitalized(words), str(n)


def _words(rng: random.Random, lang: str, most: int) -> str:
    return " ".join(frequent_word(rng, lang) for _ in range(rng.randint(1, most)))


def count_line(rng: random.Random, lang: str) -> Pair:
    """A line of its own with a count: a heading, a table's row (or its separator row, copied) or a line of
    dialogue."""
    kind = _weighted(rng, LINE_KINDS)
    if kind == "heading":
        opening, closing = rng.choice(HEADING_MARKS)
        count, digits = _line_count(rng, lang, title=True)
        head = f"{opening}{rng.choice(HEADING_WORDS[lang])} "
        tail = rng.choice(("", "", f": {capitalized(_words(rng, lang, 4))}", "."))
        return f"{head}{count}{closing}{tail}", f"{head}{digits}{closing}{tail}"
    if kind == "table_row":
        cells = rng.randint(2, 3)
        edge = rng.choice(("| ", "|"))
        space = edge[1:]
        if rng.random() < SEPARATOR_ROW_SHARE:
            row = "|" + "|".join(rng.choice(TABLE_SEPARATORS) for _ in range(cells)) + "|"
            return row, row
        at = rng.randrange(cells)
        count, digits = _line_count(rng, lang, title=False)
        if rng.random() < 0.5:
            count, digits = count.lower(), digits.lower()
        words = [capitalized(_words(rng, lang, 2)) for _ in range(cells)]
        source_cells, target_cells = list(words), list(words)
        source_cells[at], target_cells[at] = count, digits
        joiner = f"{space}|{space}"
        return (
            f"{edge}{joiner.join(source_cells)}{space}|",
            f"{edge}{joiner.join(target_cells)}{space}|",
        )
    opening, closing = rng.choice(DIALOGUE_MARKS[lang])
    count, digits = _line_count(rng, lang, title=False)
    rest = rng.choice(("", "", f" {_words(rng, lang, 4)}"))
    end = rng.choice((".", ".", "?", "!", "…", ""))
    if lang == "es" and end in SPANISH_OPENING_MARKS:
        count, digits = SPANISH_OPENING_MARKS[end] + count, SPANISH_OPENING_MARKS[end] + digits
    return f"{opening}{count}{rest}{end}{closing}", f"{opening}{digits}{rest}{end}{closing}"


def opening_count_text(rng: random.Random, lang: str, *, line_share: float = 0.0) -> Pair:
    """One or two sentences, then one that opens with its count, then maybe one more; short enough for one
    piece of the service's segmentation. Or, `line_share` of the time, a short line of its own (count_line)."""
    if line_share and rng.random() < line_share:
        return count_line(rng, lang)
    while True:
        sentences = [_surrounding_sentence(rng, lang) for _ in range(rng.choice((1, 1, 2)))]
        sentences.append(opening_count_sentence(rng, lang))
        if rng.random() < FOLLOWING_SENTENCE_SHARE:
            sentences.append(_surrounding_sentence(rng, lang))
        source, target = sentences[0]
        for next_source, next_target in sentences[1:]:
            separator = str(_weighted(rng, SEPARATORS))
            source, target = source + separator + next_source, target + separator + next_target
        if fits_one_piece(source) and fits_one_piece(target):
            return source, target
