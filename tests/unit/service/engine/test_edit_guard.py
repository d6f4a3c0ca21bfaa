"""The edit guard: planted bad edits are reverted, the contract's edits are kept, and every pair the
bundled generator makes passes unchanged (so the guard and the training contract cannot drift)."""

from __future__ import annotations

import collections
from typing import Any

import pytest

from model.data import CATEGORIES, iter_examples
from model.words import edit_guard_spec
from service.engine.edit_guard import EditGuard, RevertedEdit
from service.engine.errors import ModelLoadError
from service.engine.guard_alignment import MAX_REPAIRED_TOKENS, repaired_at_marks, split_tokens
from service.engine.guard_links import inside_link_or_tag, may_hold_link_or_tag


@pytest.fixture(scope="module")
def guard() -> EditGuard:
    return EditGuard.from_manifest(edit_guard_spec(), where="manifest.json")


@pytest.mark.parametrize(
    ("source", "output", "reverted"),
    [
        ("doscientas personas", "2cientas personas", [("doscientas", "2cientas")]),
        ("doscientas mil personas", "2cientas 1000 personas", [("doscientas mil", "2cientas 1000")]),
        ("Привет, мир", "mit, мир", [("Привет", "mit")]),
        ("Привет, мир", "mit\ufffd100000 and and", [("Привет,", "mit\ufffd100000"), ("мир", "and and")]),
        ("Hola a todos", "Hola a todos y", [("", " y")]),  # an inserted word
        ("Hola a todos", "Hola todos", [("a ", "")]),  # a deleted word
        ("tres de mayo", "", [("tres de mayo", "")]),  # a deleted expression
        ("Tengo veintiún años.", "Tengo 21ún años.", [("veintiún", "21ún")]),
        ("El precio es de 3,50 €.", "El precio es de 250 €.", [("3,50", "250")]),  # digits rewritten
        ("el tres de mayo", "103-05-03", [("el tres de mayo", "103-05-03")]),
        ("Me encanta 🎉 y tengo veinticinco años", "Me encanta renren y tengo 25 años", [("🎉", "renren")]),
        ("línea uno\nlínea dos", "línea uno línea dos", [("\n", " ")]),  # whitespace is copied exactly
        ("https://x.es/a tres mil", "htps://x.es/a 3000", [("https", "htps")]),
        # Refused whole, a region's unknown words are judged alone: "tres" -> "3" stays, "casas" comes back.
        ("tres casas", "3 perros", [("casas", "perros")]),
        ("Me encanta 🎉 y tengo veinticinco años 😀.", "Me encanta 🎉 y 10go 25 años 😀.", [("tengo", "10go")]),
        ("three", "3 of", [("three", "3 of")]),  # "of" is not in the source side
        ("un", "10", [("un", "10")]),  # a connector alone is no number
        ("tres\ncuatro casas", "3 4 casas", [("tres\ncuatro", "3 4")]),  # a line break lost inside an edit
        ("Tengo un perro", "Tengo 1 perro", [("un", "1")]),
        ("es de 3,50", "es 2", [("de 3,50", "2")]),
        ("available on Thursday?", "available on 20?", [("Thursday", "20")]),  # a weekday alone is no date
        ("llega el jueves", "llega el 4", [("jueves", "4")]),
        ("Mar;  October those", "Mar;   5 those", [("  October", "   5")]),  # nor a month alone
        ("en mayo", "en 05", [("mayo", "05")]),
        # A date the calendar does not have, written from words or from digits.
        (
            "The twenty-ninth of February, two thousand and one",
            "2001-02-29",
            [("The twenty-ninth of February, two thousand and one", "2001-02-29")],
        ),
        ("el 31 abr 1999 llovió", "el 1999-04-31 llovió", [("31 abr 1999", "1999-04-31")]),
        # Words dropped around a token the aligner matched: a deletion, whether judged whole or after a split
        # at an unknown word ("Sevilla" -> "2022-09-" refused alone left "27" + the deleted date, kept before).
        ("27 de septiembre de 2022", "27", [(" de septiembre de 2022", "")]),
        (
            "Sevilla, a 27 de septiembre de 2022\n\nMuy señores míos:",
            "2022-09-27\n\nMuy señores míos:",
            [("Sevilla, a ", "2022-09-"), ("27 de septiembre de 2022", "27")],
        ),
        # Digits beside a number word the output still writes: part of a number converted, the rest left.
        ("por ciento noventa y nueve euros", "por ciento 99 euros", [("noventa y nueve", "99")]),
        ("tres mil casas", "3 mil casas", [("tres", "3")]),
        ("three hundred thousand", "300 thousand", [("three hundred", "300")]),
        ("two hundred", "two 100", [("hundred", "100")]),
        ("(ciento noventa y nueve)", "(ciento 99)", [("noventa y nueve", "99")]),  # punctuation is no link
        ("son tres mil.", "son 3 mil.", [("tres", "3")]),
        ("<td>dos mil veinte</td>", "<td>dos 1020</td>", [("mil veinte", "1020")]),  # a tag is no link
        # ... or past a joining word: "treinta y 2" is no number (a line of dialogue, 2026-12-05).
        ("—Treinta y dos.", "—Treinta y 2.", [("dos", "2")]),
        ("sixty and five", "sixty and 5", [("five", "5")]),
        # ... or right before "un", "una", "uno" left in words: part of 1001 converted (tune34, 2026-12-06).
        ("Tenemos mil una noches en total.", "Tenemos 1000 una noches en total.", [("mil", "1000")]),
        ("mil un coches", "1000 un coches", [("mil", "1000")]),
        # Paired again at a mark both sides hold, a good edit is kept beside a bad one, never the bad one.
        ("tres, cuatro casas", "3, 5 casas", [("cuatro", "5")]),
        ("el 1 de mayo de 2001, veinte, tres", "el 2001-05-01, 2, 3", [("veinte", "2")]),
        ("el 1 de mayo de 2001, veinte", "el 2001-05-01, 2", [("veinte", "2")]),
        # Words no edit consumes, dropped beside a good edit: put back alone, the edit kept (the fresh probe's
        # "Tiene dos piscinas" came out "2 piscinas" and was put back whole, in words, before 2026-12-05).
        ("de la playa. Tiene dos piscinas.", "de la playa. 2 piscinas.", [("Tiene ", "")]),
        ("Tengo dos piscinas grandes.", "Tengo 2.", [(" piscinas grandes", "")]),
        # An ordinal outside a date: no month in the span or beside it.
        ("Our first child arrived", "Our 1 child arrived", [("first", "1")]),
        ("ha empezado primero de primaria", "ha empezado 1 de primaria", [("primero", "1")]),
        ("the first, second and twenty-third place", "the first, second and 23 place", [("twenty-third", "23")]),
        ("un cuarto de hora", "un 4 de hora", [("cuarto", "4")]),
        # The sentence's "y" taken with the date before it: no expression ends with a joining word.
        (
            "el doce de junio de dos mil veintidós y ya camina",
            "el 2022-06-12 ya camina",
            [("doce de junio de dos mil veintidós y", "2022-06-12")],
        ),
        ("three thousand and more", "3000 more", [("three thousand and", "3000")]),
        # A word inside a link, an e-mail address, a path or an HTML tag: copied whatever it says (2026-12-06).
        (
            "Visit https://example.com/twenty-five-ways?page=three",
            "Visit https://example.com/twenty-5-ways?page=three",
            [("five", "5")],
        ),
        ("Escribe a dos.mil@example.com hoy", "Escribe a 2.mil@example.com hoy", [("dos", "2")]),
        ("Descarga desde /docs/tres/ ya", "Descarga desde /docs/3/ ya", [("tres", "3")]),
        ("C:\\datos\\tres\\x", "C:\\datos\\3\\x", [("tres", "3")]),
        ("ver tres.com o tres", "ver 3.com o 3", [("tres", "3")]),
        ("Compré tres.Luego dos", "Compré 3.Luego 2", [("tres", "3")]),  # no space after the dot: a domain's
        ("x=tres y dos", "x=3 y 2", [("tres", "3")]),
        (
            '<img alt="dos gatos" src="g.png"> Tenemos dos gatos.',
            '<img alt="2 gatos" src="g.png"> Tenemos 2 gatos.',
            [("dos", "2")],
        ),
        ('<td colspan="dos">doce</td>', '<td colspan="2">12</td>', [("dos", "2")]),
        ("<!-- tres notas --> Tengo tres", "<!-- 3 notas --> Tengo 3", [("tres", "3")]),  # a comment is markup
        ("[aquí](https://x.es/tres) y tres", "[aquí](https://x.es/3) y 3", [("tres", "3")]),
        # A number word in title case before another capitalized word: a name (2026-12-06).
        ("Vivo en Dos Hermanas, Sevilla.", "Vivo en 2 Hermanas, Sevilla.", [("Dos", "2")]),
        ("The Three Musketeers was written", "The 3 Musketeers was written", [("Three", "3")]),
        ("Fui a Tres Cantos y compré tres casas", "Fui a 3 Cantos y compré 3 casas", [("Tres", "3")]),
        ("Seven-Eleven is open", "7-11 is open", [("Seven", "7"), ("Eleven", "11")]),  # no compound number: a name
        ("at the Seven-Eleven on Main", "at the 7-Eleven on Main", [("Seven", "7")]),
    ],
)
def test_reverts_a_bad_edit(guard: EditGuard, source: str, output: str, reverted: list[tuple[str, str]]) -> None:
    result = guard.apply(source, output)
    assert [(r.source, r.output) for r in result.reverted] == reverted
    assert all(isinstance(r, RevertedEdit) for r in result.reverted)
    assert all(source[r.source_start : r.source_start + len(r.source)] == r.source for r in result.reverted)
    # What is left differs from the source only by allowed edits.
    assert guard.apply(source, result.text).text == result.text


def test_names_are_read_in_the_source_as_the_client_wrote_it(guard: EditGuard) -> None:
    """The model reads a folded source; the guard reads the capitals of a name in the source as sent."""
    folded, cased = "vivo en dos hermanas y tengo dos perros", "Vivo en Dos Hermanas y tengo dos perros"
    result = guard.apply(folded, "vivo en 2 hermanas y tengo 2 perros", cased_source=cased)
    assert result.text == "vivo en dos hermanas y tengo 2 perros"
    assert guard.apply(folded, "vivo en 2 hermanas y tengo 2 perros").reverted == ()  # no capitals to read


def test_a_reverted_span_leaves_the_good_ones(guard: EditGuard) -> None:
    result = guard.apply("Tengo tres gatos y doscientas casas.", "Tengo 3 gatos y 2cientas casas.")
    assert result.text == "Tengo 3 gatos y doscientas casas."


@pytest.mark.parametrize(
    ("source", "output"),
    [
        ("tres de mayo", "3 de mayo"),
        ("el tres de mayo", "el 3 de mayo"),
        ("dos mil uno", "2001"),
        ("miércoles, 12 de abril de 1950", "1950-04-12"),
        ("El miércoles, 12 de abril de 1950 llovió.", "El 1950-04-12 llovió."),
        ("the third of May", "the 3 of May"),
        ("May third", "May 3"),
        ("doscientas personas", "200 personas"),
        ("Tengo veintiún años.", "Tengo 21 años."),
        ("mil millones", "1000000000"),
        ("treinta y uno de febrero de dos mil uno", "31 de febrero de 2001"),
        ("one thousand, two hundred and thirty-four", "1234"),
        ("twenty-one hundred", "2100"),
        ("November twenty-ninth, twenty twenty-six", "2026-11-29"),
        ("Llegó el 1 abr 1965.", "Llegó el 1965-04-01."),
        ("Llegó el 1 mar 1965.", "Llegó el 1965-03-01."),  # "mar" is martes and marzo: a month still
        ("Saturday, 26 February 2056", "2056-02-26"),
        ("on Thursday, the fifth of May", "on Thursday, the 5 of May"),
        ("tres y cuatro", "3 y 4"),
        ("Nothing to change here.", "Nothing to change here."),
        ("veintinueve de febrero de dos mil veinte", "2020-02-29"),  # a leap year's
        ("2001-02-29 y tres", "2001-02-29 y 3"),  # an impossible date copied from the source is no edit
        # Beside digits, words that continue no number: a connector, an ordinal, a month, a comma between.
        ("uno y dos", "uno y 2"),
        ("the first two weeks", "the first 2 weeks"),
        ("December twenty-ninth thirty-first of June", "December 29 thirty-first of June"),  # "thirty" of an ordinal
        ("veinte, treinta", "20, 30"),
        ("ocho mayo", "8 mayo"),
        ("Available from the first of September.", "Available from the 1 of September."),  # ordinals in dates
        ("el cuarto de mayo", "el 4 de mayo"),
        ("May twenty-third, two thousand one", "2001-05-23"),
        ("treinta y un días", "31 días"),  # "un" ends a number; "y" joins one
        ("mil una noches", "1001 noches"),
        ("en mil novecientos veinticinco un grupo", "en 1925 un grupo"),  # after "veinticinco" an article
        ("quedan ochocientos un, dijo", "quedan 800 un, dijo"),  # before a comma, maybe a pronoun
        ("mil un-dos", "1000 un-dos"),  # "un" in a compound is no word of its own
        ("trescientos UNA hablar", "300 UNA hablar"),  # a lone word in capitals is read as written (test set v8)
        ("dos mil y pico", "2000 y pico"),
        ("I saw it once four years ago", "I saw it once 4 years ago"),  # English "once" (Spanish eleven)
        # A number word inside a link or a path continues no number (2026-12-06: it reverted "3200" whole).
        ("https://x.es/tres-mil tres mil doscientos", "https://x.es/tres-mil 3200"),
        ("ver x.es/Tres-Mil y tres mil doscientos perros", "ver x.es/Tres-Mil y 3200 perros"),
        # Beside links and tags, text is text: a tag's own "/" or "=" and a sentence's last dot mark no link.
        ('<a href="https://x.es/">tres</a> casas', '<a href="https://x.es/">3</a> casas'),
        ('<span class="num">doce</span><br/>veinte', '<span class="num">12</span><br/>20'),
        ("<td>quince</td><td>veinte</td>", "<td>15</td><td>20</td>"),
        ("Son tres. Cuatro más.", "Son 3. 4 más."),
        ("dos y/o tres", "2 y/o 3"),
        # A Markdown link's text is text; its target, from "(" to ")", is the link.
        ("[tres](https://x.es/a) y [los dos capítulos](b.md)", "[3](https://x.es/a) y [los 2 capítulos](b.md)"),
        ("![gatos: dos](img/g.png)", "![gatos: 2](img/g.png)"),
        ("Fin del acto.\nVeinte casas", "Fin del acto.\n20 casas"),  # the line before ends with a dot
        # No name: a number after a title-case word, a date, a noun in lower case, a line's end after it.
        ("Room Twelve is on the left.", "Room 12 is on the left."),
        ("Chapter Seven: The Return", "Chapter 7: The Return"),
        ("El Cinco de Mayo se celebra", "El 5 de Mayo se celebra"),
        ("Tres casas y Veinte\nAna", "3 casas y 20\nAna"),
        ("Quinientas Cuarenta y cuatro", "544"),
        ("Chapter Twenty-One begins", "Chapter 21 begins"),  # a compound number consumes its hyphen
        ("twenty-one, seven-eleven", "21, 7-11"),  # lower case: no name
        ("Tres Cantos es un municipio.", "3 Cantos es un municipio."),  # at a sentence's start: a count
        ("Hola. Veinte Tenemos", "Hola. 20 Tenemos"),
        ("Escribe a ana@x.es: tres días", "Escribe a ana@x.es: 3 días"),
        # The longest common run, " de junio de ", pairs the first date's source with the second's output;
        # aligned again on copied text alone, both dates are edits of their own (test set v8).
        (
            "domingo, 1 de junio de 2087 madre jardín? treinta y uno de junio de mil novecientos treinta y nueve",
            "2087-06-01 madre jardín? 31 de junio de 1939",
        ),
    ],
)
def test_keeps_an_allowed_edit(guard: EditGuard, source: str, output: str) -> None:
    assert guard.apply(source, output).text == output
    assert guard.apply(source, output).reverted == ()


@pytest.mark.slow  # about 20 s of CPU
def test_every_generated_pair_passes_unchanged(guard: EditGuard) -> None:
    """guard(source, target) == target for 2,000 examples of every category, half train, half test."""
    per_category = 2000
    for split in ("train", "test"):
        wanted = collections.Counter({category: per_category // 2 for category in CATEGORIES})
        stream = iter_examples(seed=7, split=split)
        failures: list[tuple[str, str, str, str]] = []
        while wanted:
            example = next(stream)
            if wanted[example.category] <= 0:
                continue
            wanted[example.category] -= 1
            wanted += collections.Counter()  # drop the categories that are done
            guarded = guard.apply(example.source, example.target)
            if guarded.text != example.target:
                failures.append((example.category, example.source, example.target, guarded.text))
        assert failures == []


def test_tokens_join_back_to_the_text() -> None:
    text = "El 3,50 € — 日本語\t\n  x_y ñ-1 🎉\u0301"
    assert "".join(split_tokens(text)) == text
    assert split_tokens("tres  de mayo,") == ["tres", "  ", "de", " ", "mayo", ","]


def test_a_long_copied_text_costs_only_its_differing_middle(guard: EditGuard) -> None:
    copied = "Palabra cualquiera. " * 200
    result = guard.apply(copied + "tres casas " + copied, copied + "3 casas " + copied)
    assert result.text == copied + "3 casas " + copied
    bad = guard.apply(copied + "tres casas " + copied, copied + "3 casa " + copied)
    assert bad.text == copied + "3 casas " + copied


def test_only_a_short_refused_region_is_paired_again_at_each_mark(guard: EditGuard) -> None:
    """Each single pairing aligns the whole region again (the square of its length on repetitive text): a long
    region is only paired at all its marks at once, whose parts are short. A list of 40 numbers with one wrong
    puts back that one alone."""
    source, output = split_tokens("tres, cuatro"), split_tokens("3, 5")
    region = [("replace", 0, len(source), 0, len(output))]
    assert len(list(repaired_at_marks(region, source, output, guard._consumable))) == 1
    source, output = split_tokens(", ".join(["tres"] * 40)), split_tokens(", ".join(["3"] * 39 + ["4"]))
    region = [("replace", 0, len(source), 0, len(output))]
    assert len(source) + len(output) > MAX_REPAIRED_TOKENS
    assert len(list(repaired_at_marks(region, source, output, guard._consumable))) == 1
    result = guard.apply("".join(source), "".join(output))
    assert result.text == ", ".join(["3"] * 39 + ["tres"])
    assert [(r.source, r.output) for r in result.reverted] == [("tres", "4")]


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ([], "'edit_guard'"),
        ({"consumable_words": ["tres"], "consumable_characters": "0", "producible_characters": "0", "x": 1}, "x"),
        ({"consumable_words": "tres", "consumable_characters": "0", "producible_characters": "0"}, "consumable_words"),
        ({"consumable_words": ["Tres"], "consumable_characters": "0", "producible_characters": "0"}, "lowercase"),
        ({"consumable_words": ["dos mil"], "consumable_characters": "0", "producible_characters": "0"}, "single"),
        ({"consumable_words": ["tres"], "consumable_characters": 0, "producible_characters": "0"}, "consumable_char"),
        ({"consumable_words": ["tres"], "consumable_characters": "0"}, "edit_guard.producible_characters"),
        ({"consumable_words": ["tres"], "consumable_characters": "0 ", "producible_characters": "0"}, "non-space"),
        (
            {
                "consumable_words": ["tres"],
                "consumable_characters": "0",
                "producible_characters": "0",
                "name_words": ["mayo"],
            },
            "edit_guard.name_words",
        ),
        (
            {
                "consumable_words": ["tres"],
                "consumable_characters": "0",
                "producible_characters": "0",
                "number_words": ["mil"],
            },
            "edit_guard.number_words",
        ),
        (
            {
                "consumable_words": ["tres"],
                "consumable_characters": "0",
                "producible_characters": "0",
                "ordinal_words": "first",
            },
            "edit_guard.ordinal_words",
        ),
        (
            {
                "consumable_words": ["tres"],
                "consumable_characters": "0",
                "producible_characters": "0",
                "joining_words": ["y"],
            },
            "edit_guard.joining_words",
        ),
        (
            {
                "consumable_words": ["mil", "un"],
                "consumable_characters": "0",
                "producible_characters": "0",
                "number_tails": {"words": ["un"], "after": ["ciento"]},
            },
            "edit_guard.number_tails",
        ),
    ],
)
def test_a_bad_manifest_entry_names_the_field(entry: Any, field: str) -> None:
    with pytest.raises(ModelLoadError, match=field):
        EditGuard.from_manifest(entry, where="manifest.json")


@pytest.mark.parametrize(
    "text",
    [
        "Visit https://example.com/twenty-five-ways",
        "Escribe a dos.mil@example.com",
        "Descarga informe desde /docs/tres/",
        "C:\\datos\\tres",
        '<td colspan="dos">dos</td>',
        "Lee [tres](x) más.",
        "<!-- tres notas --> Tengo tres gatos.",
        "ver tres.mil hoy",
    ],
)
def test_rule_i_is_read_wherever_a_word_may_be_in_a_link_or_tag(text: str) -> None:
    assert may_hold_link_or_tag(text)


def test_a_sentence_without_marks_skips_rule_i() -> None:
    for text in ["El 3 de mayo llegaron doscientas personas.", "Costs 3,50 € (about twenty) at 10:30, ok?"]:
        assert not may_hold_link_or_tag(text)
        tokens = split_tokens(text)
        assert not any(inside_link_or_tag(tokens, at, at + 1) for at in range(len(tokens)))
