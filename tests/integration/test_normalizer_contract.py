"""The bundled normalizer on what people type, served as users get it (`/generate`, the edit guard on):
every row of issue 19's table of observed failures, every example of README's contract, and
40 ordinary inputs written as users write (an e-mail, a recipe, code, a price, a link, other scripts);
then 240 more such inputs (real_text_probe.jsonl), of which the model must get nearly all.

Unlike the generated test split, these are fixed inputs written by hand: ordinary sentences, short
inputs with no sentence around them, other scripts, prices and links beside number words.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service.http.app import create_app
from tests.servers import Served, make_settings, serve

pytestmark = pytest.mark.slow
BUNDLED = Path(__file__).parents[2] / "models" / "normalize" / "1"

# What the bundled model still gets wrong here, guard on, each a strict xfail (an entry that starts passing
# fails the run until it is removed). The stage-4 model (10,500 steps in all) read "tengo" after the emoji as
# "10go 25"; the guard reverts "10go" alone and keeps "25" (it judges a refused region's unknown words apart).
# The model of 2026-12-03 read some common years' bare 29 February as leap days ("two thousand and one");
# the first model of 2026-12-04 wrote "ciento un dálmatas" as "10 un dálmatas" (a round number plus one
# before a noun was about one count in a thousand in training; ROUND_THEN_ONE_SHARE_IN_TRAINING since). The
# model after it, whose continuation drew them, keeps all of them. A number inside brackets, quotes, emphasis or a
# table's cell was left in words: the drills wrote expressions between spaces only until 3a3f049. The fine-tune of
# 2026-12-05 (`make fine-tune`) converts "(tres) manzanas", '"Twenty-five," she said' and "*seven*", and with the
# opening-count drills (a table's row among them) "| Sillas | doce |"; not this one. The case-folding fine-tune
# of 2026-12-06 (tune31, README) wrote "ciento un dálmatas" as "10 un dálmatas" again, which the guard puts back
# in words; its second pass (tune33, the bundled model since) converts it and "Compré «doce» huevos", but leaves
# Spanish "once" (eleven) in "El equipo tiene once jugadores." as a word, as it reads English "once"; the mean of
# the two markup passes (2026-12-06) converts it. The passes with ranges, openings and units (tune36, tune37) and
# their means leave it in words again (the equal mean "ciento un dálmatas" too; the weighted mean, the bundled model
# since, converts that one).
KNOWN_MISSES: set[str] = {"El equipo tiene once jugadores."}


def _case(source: str, expected: str) -> object:
    marks = (
        [pytest.mark.xfail(reason="issue 19, open: see KNOWN_MISSES", strict=True)] if source in KNOWN_MISSES else []
    )
    return pytest.param(source, expected, marks=marks, id=source[:40])


# (input, what the contract says comes out)
CONTRACT = [
    # issue 19's table: what the first bundled model did to these
    (
        "El once de mayo de dos mil uno llegaron doscientas personas. El once de septiembre de dos mil uno "
        "llegaron más. En mil novecientos noventa y dos vivían allí tres mil quinientas dos personas.",
        "El 2001-05-11 llegaron 200 personas. El 2001-09-11 llegaron más. En 1992 vivían allí 3502 personas.",
    ),
    (
        "El once de mayo de dos mil uno llegaron doscientas personas. "
        "El once de mayo de dos mil uno llegaron doscientas personas.",
        "El 2001-05-11 llegaron 200 personas. El 2001-05-11 llegaron 200 personas.",
    ),
    ("Me encanta 🎉 y tengo veinticinco años 😀.", "Me encanta 🎉 y tengo 25 años 😀."),
    ("Привет, мир", "Привет, мир"),
    ("日本語のテキスト", "日本語のテキスト"),
    ("El precio es de 3,50 €.", "El precio es de 3,50 €."),
    (
        "Mira https://x.es/libros?id=7 donde venden tres mil doscientos libros.",
        "Mira https://x.es/libros?id=7 donde venden 3200 libros.",
    ),
    ("Tengo veintiún años.", "Tengo 21 años."),
    ("Tengo treinta y un años.", "Tengo 31 años."),
    ("doscientas mil personas", "200000 personas"),
    ("the first, second and twenty-third place", "the first, second and twenty-third place"),
    ("un", "un"),
    ("mil millones", "1000000000"),
    ("el tres de mayo", "el 3 de mayo"),
    ("treinta y uno de febrero de dos mil uno", "31 de febrero de 2001"),
    # README's contract
    ("doscientas personas", "200 personas"),
    ("veintiuna casas", "21 casas"),
    ("ciento un dálmatas", "101 dálmatas"),
    ("twenty-one hundred", "2100"),
    ("one thousand two hundred thirty-four", "1234"),
    ("May third", "May 3"),
    ("the third of May", "the 3 of May"),
    ("Prices rose again in twenty twenty-three.", "Prices rose again in 2023."),
    ("We have lived here since nineteen ninety-eight.", "We have lived here since 1998."),
    ("una", "una"),
    ("uno", "uno"),
    ("one", "one"),
    ("primero", "primero"),
    ("one of them", "one of them"),
    ("We bought twelve screws for the table.", "We bought 12 screws for the table."),
    ("La reunión es a las 10:30 del 12/10/1492.", "La reunión es a las 10:30 del 12/10/1492."),
    # what the stage-4 model got wrong in ordinary text: list items, leap days
    ("- Seis huevos\n- Dos tazas de arroz", "- 6 huevos\n- 2 tazas de arroz"),
    ("* Three onions", "* 3 onions"),
    ("El veintinueve de febrero de dos mil veinte fue sábado.", "El 2020-02-29 fue sábado."),
    ("veintinueve de febrero de dos mil veintitrés", "29 de febrero de 2023"),
    ("El veintinueve de febrero de dos mil veintitrés fue miércoles.", "El 29 de febrero de 2023 fue miércoles."),
    ("She was born on February twenty-ninth, nineteen ninety-six.", "She was born on 1996-02-29."),
    ("The twenty-ninth of February, two thousand and one", "The twenty-ninth of February, 2001"),
    # ordinary sentences that came out right
    (
        "Mezcla doscientos cincuenta gramos de harina con tres huevos y una pizca de sal.",
        "Mezcla 250 gramos de harina con 3 huevos y una pizca de sal.",
    ),
    (
        "Call me at +34 612 345 678 or write to ana.lopez@example.com.",
        "Call me at +34 612 345 678 or write to ana.lopez@example.com.",
    ),
    # ordinary text a user would send (prose, e-mail, recipes, code, other scripts, prices, times, links)
    (
        "Llegamos a Madrid el quince de agosto de dos mil diecinueve y nos quedamos doce días.",
        "Llegamos a Madrid el 2019-08-15 y nos quedamos 12 días.",
    ),
    (
        "The package weighs forty-five kilograms and costs 120 dollars.",
        "The package weighs 45 kilograms and costs 120 dollars.",
    ),
    (
        "Hola Marta:\n\nTe envío las cuarenta y dos fotos del viaje.\n\nUn abrazo,\nLuis",
        "Hola Marta:\n\nTe envío las 42 fotos del viaje.\n\nUn abrazo,\nLuis",
    ),
    ("Our office opened on the first of March, nineteen ninety-nine.", "Our office opened on 1999-03-01."),
    ("La población llegó a tres millones en mil novecientos ochenta.", "La población llegó a 3000000 en 1980."),
    (
        "Ingredientes:\n- Trescientos gramos de azúcar\n- Cuatro huevos\n- Una taza de leche",
        "Ingredientes:\n- 300 gramos de azúcar\n- 4 huevos\n- Una taza de leche",
    ),
    ("def f(x):\n    return x * 2  # doble", "def f(x):\n    return x * 2  # doble"),
    ("Ο καιρός είναι καλός σήμερα.", "Ο καιρός είναι καλός σήμερα."),
    ("مرحبا بالعالم", "مرحبا بالعالم"),
    ("Москва — столица России.", "Москва — столица России."),
    ("我们明天见。", "我们明天见。"),
    ("The meeting starts at 9:15 and ends at 11:00.", "The meeting starts at 9:15 and ends at 11:00."),
    ("Pagué 1.250,75 € por el sofá.", "Pagué 1.250,75 € por el sofá."),
    ("¿Vienes el sábado? 👍👍", "¿Vienes el sábado? 👍👍"),
    (
        "Visit https://example.org/docs/v2/index.html for details.",
        "Visit https://example.org/docs/v2/index.html for details.",
    ),
    ("**Nota:** el archivo `config.yaml` debe existir.", "**Nota:** el archivo `config.yaml` debe existir."),
    ("<p>Hola <em>mundo</em></p>", "<p>Hola <em>mundo</em></p>"),
    ("She was born on July fourth, two thousand three.", "She was born on 2003-07-04."),
    ("He ran twenty-six miles in three hours.", "He ran 26 miles in 3 hours."),
    ("Compramos dieciséis sillas y dos mesas.", "Compramos 16 sillas y 2 mesas."),
    ("El tren sale a las ocho.", "El tren sale a las 8."),
    ("There were fifteen thousand people at the concert.", "There were 15000 people at the concert."),
    ("El museo recibió ochocientos mil visitantes el año pasado.", "El museo recibió 800000 visitantes el año pasado."),
    ("Nos vemos el veinticinco de diciembre.", "Nos vemos el 25 de diciembre."),
    ("See you on December twenty-fifth!", "See you on December 25!"),
    ("Es la primera vez que vengo.", "Es la primera vez que vengo."),
    ("One day I will go there.", "One day I will go there."),
    ("Tiene una hermana y un hermano.", "Tiene una hermana y un hermano."),
    ("La factura nº 2024/0193 vence el 30/06/2025.", "La factura nº 2024/0193 vence el 30/06/2025."),
    ("Escribe a soporte@atento.dev o llama al 900 123 456.", "Escribe a soporte@atento.dev o llama al 900 123 456."),
    (
        "Querido diario: hoy cumplí cuarenta años. ¡Qué rápido pasa el tiempo!",
        "Querido diario: hoy cumplí 40 años. ¡Qué rápido pasa el tiempo!",
    ),
    ("I have two cats and one dog.", "I have 2 cats and one dog."),
    ("Revenue grew by seven percent in the second quarter.", "Revenue grew by 7 percent in the second quarter."),
    ("El edificio tiene ciento veinte metros de altura.", "El edificio tiene 120 metros de altura."),
    ("Capítulo 3\n\nEra una noche oscura.", "Capítulo 3\n\nEra una noche oscura."),
    ("The war ended on the eleventh of November, nineteen eighteen.", "The war ended on 1918-11-11."),
    (
        "La boda fue el doce de octubre de dos mil quince. Asistieron ciento cincuenta invitados.",
        "La boda fue el 2015-10-12. Asistieron 150 invitados.",
    ),
    ("Temperatura: -5 °C, humedad 80 %.", "Temperatura: -5 °C, humedad 80 %."),
    ("I'll call you at noon 😊", "I'll call you at noon 😊"),
    ("Ya son las tantas y faltan treinta minutos.", "Ya son las tantas y faltan 30 minutos."),
    # marks around a number: brackets, quotes, emphasis, a table's cells
    ("(tres) manzanas y (cuatro) peras", "(3) manzanas y (4) peras"),
    ("| Sillas | doce |\n| Mesas | tres |", "| Sillas | 12 |\n| Mesas | 3 |"),
    ('"Twenty-five," she said, "is too many."', '"25," she said, "is too many."'),
    ("Compré «doce» huevos y dos litros de leche.", "Compré «12» huevos y 2 litros de leche."),
    ("The answer is *seven*, not eight.", "The answer is *7*, not 8."),
    ("We waited (about twenty minutes) for the bus.", "We waited (about 20 minutes) for the bus."),
    # "once" is an English word and Spanish eleven, "ten" English ten and Spanish "have!": the guard's language rule
    ("Once you finish, close the door.", "Once you finish, close the door."),
    ("Please reply at once.", "Please reply at once."),
    ("It happened only once in ten years.", "It happened only once in 10 years."),
    ("Ten cuidado con el perro.", "Ten cuidado con el perro."),
    ("El equipo tiene once jugadores.", "El equipo tiene 11 jugadores."),
    # text in capitals: a run of words in capitals is read in lower case (case_folding.upper_case_runs) and
    # gets its capitals back; a word in capitals alone is read as written
    ("OFERTA: DOS POR UNO EN TODAS LAS PIZZAS", "OFERTA: 2 POR UNO EN TODAS LAS PIZZAS"),
    ("SE BUSCAN VEINTE VOLUNTARIOS PARA EL DOMINGO", "SE BUSCAN 20 VOLUNTARIOS PARA EL DOMINGO"),
    ("AVISO: EL SERVICIO SE INTERRUMPIRÁ DURANTE TRES HORAS.", "AVISO: EL SERVICIO SE INTERRUMPIRÁ DURANTE 3 HORAS."),
    ("GRAN INAUGURACIÓN EL TRES DE MAYO", "GRAN INAUGURACIÓN EL 3 DE MAYO"),
    ("MAY THIRD: DOORS OPEN AT SEVEN", "MAY 3: DOORS OPEN AT 7"),
    ("EL VEINTICINCO DE DICIEMBRE DE DOS MIL VEINTICUATRO", "EL 2024-12-25"),
    ("HAPPY NEW YEAR TWO THOUSAND TWENTY-FIVE", "HAPPY NEW YEAR 2025"),
    ("la ONCE vende cupones; MS-DOS y AC/DC", "la ONCE vende cupones; MS-DOS y AC/DC"),
    # links, e-mail addresses, paths and HTML tags are copied whatever words they hold (the guard's rule (i)), and a
    # number word in title case before a capitalized word inside a sentence is a name (rule (j))
    ("Visit https://example.com/twenty-five-ways?page=three", "Visit https://example.com/twenty-five-ways?page=three"),
    ("Escribe a dos.mil@example.com o llama al 600 123 456.", "Escribe a dos.mil@example.com o llama al 600 123 456."),
    ("Descarga informe_dos_mil_veinte.pdf desde /docs/tres/", "Descarga informe_dos_mil_veinte.pdf desde /docs/tres/"),
    (
        '<img alt="dos gatos" src="gatos.png"> Tenemos dos gatos.',
        '<img alt="dos gatos" src="gatos.png"> Tenemos 2 gatos.',
    ),
    ("Vivo en Dos Hermanas, Sevilla.", "Vivo en Dos Hermanas, Sevilla."),
    ("The Three Musketeers was written by Dumas.", "The Three Musketeers was written by Dumas."),
    # A Markdown link's text is text, its target copied; an HTML comment and a name joined by a hyphen are copied.
    (
        "Lee [los tres capítulos](https://x.es/libro) y [tres](https://x.es/a) más.",
        "Lee [los 3 capítulos](https://x.es/libro) y [3](https://x.es/a) más.",
    ),
    ("<!-- tres notas --> Tengo tres gatos.", "<!-- tres notas --> Tengo 3 gatos."),
    ("Meet me at the Seven-Eleven at ten.", "Meet me at the Seven-Eleven at 10."),
    ("Chapter Twenty-One begins here.", "Chapter 21 begins here."),
]


@pytest.fixture(scope="module")
def bundled() -> Iterator[Served]:
    settings = make_settings(model_dir=BUNDLED, max_new_tokens_limit=128, request_timeout_s=300)
    with serve(create_app(settings), timeout_s=120) as served:
        yield served


@pytest.mark.parametrize(("source", "expected"), [_case(s, e) for s, e in CONTRACT])
def test_the_bundled_model_keeps_its_contract(bundled: Served, source: str, expected: str) -> None:
    response = httpx.post(f"{bundled.url}/generate", json={"inputs": source}, timeout=300)
    assert response.status_code == 200, response.text
    assert response.json()["generated_text"] == expected


# Inputs written by hand apart from the generator (news, recipes, e-mails, chat, reviews; counts, dates, lookalikes
# to copy), and the least a model must get right of each with the guard on. real_text_probe.jsonl showed what the
# frequent-word drills should teach ("within ten working days" left in words); real_text_probe_unseen.jsonl was
# written after them and never shaped them: a model that gets less than this has lost real text, whatever its
# generated test split says (README, "The bundled model"). real_text_probe_everyday.jsonl (2026-12-05): everyday
# lines (times, prices, chapters, tables, code, chat) sent to the served model to attack the edit guard's value
# rule, which found "twenty twenty-three" -> "23" and "(one million two hundred fifty thousand dollars)" ->
# "(one 250000 dollars)" there; titles and idioms whose contract reading is unclear ("Cien años de soledad") left out.
# real_text_probe_amounts.jsonl (2026-12-05): round amounts in digits, "$2,500,000", "1.250.000 €" (the model before
# the fine-tune lost count in their runs of zeros, "$2,500,00", in 25 of 38), some beside numbers in words.
# apocopated_probe.jsonl: "ciento un", "mil una", "veintiún" and the rest before eight nouns each ("mil un años"
# came out "1000 un años" before the drills drew a round number plus one).
REAL_TEXT_PROBES = {
    "real_text_probe.jsonl": (240, 0.97),
    "real_text_probe_unseen.jsonl": (200, 0.97),
    "real_text_probe_everyday.jsonl": (77, 0.95),
    "real_text_probe_amounts.jsonl": (38, 0.94),
    "apocopated_probe.jsonl": (240, 0.99),
    # Written 2026-12-05 before the opening-count drills: later sentences and short lines opening with a count
    # (the model before them: 90.8%).
    "real_text_probe_fresh.jsonl": (142, 0.97),
    # Written 2026-12-06: number words inside HTML (cells, list items, emphasis, links) and in runs of capitals
    # (headings, notices), and markup and words in capitals to copy. The model before the markup drills: 70.5%
    # (it left every number beside a tag in words); the markup passes: 86.4%; the bundled model since: 88.6%.
    "real_text_probe_formats.jsonl": (44, 0.86),
    # Written 2026-12-06 before the drills of ranges and units: two counts as a range or a choice ("Between fifteen and
    # thirty people"), counts opening the input ("Thirty people came.") and counts before units ("doscientos
    # mililitros"). The model before those drills: 70%; the bundled model since: 86%.
    "real_text_probe_counts.jsonl": (50, 0.82),
    # Written 2026-12-06: sentences of frequent words to copy, one or two holding a token twice or more in a row (a
    # digit run, "ganancias", "currículos" as "cu" "r" "r" ...). The bundled model copies a run of four digits one
    # short in 8 of the 300 ("075155273333" -> "07515527333"), which the guard puts back: every one copied, guard on.
    "copy_runs_probe.jsonl": (300, 1.0),
}
# Inputs to copy that the bundled model still changes with the guard on, each one checked to be still wrong (an
# entry that starts passing fails the run until it is removed). English "once" is Spanish eleven: "I've only been
# there once" came out "... there 11" from the models with the opening-count drills, and the guard puts it back
# since its language rule (an everyday word of the line's language is no number).
KNOWN_COPY_MISSES: frozenset[str] = frozenset()


@pytest.mark.parametrize("probe", sorted(REAL_TEXT_PROBES))
def test_the_bundled_model_on_text_written_as_people_write(bundled: Served, probe: str) -> None:
    """Most inputs right, and every one meant to be copied copied."""
    size, least = REAL_TEXT_PROBES[probe]
    lines = Path(__file__).with_name(probe).read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines]
    assert len(cases) == size
    wrong = []
    with httpx.Client(timeout=300) as client:
        for case in cases:
            response = client.post(f"{bundled.url}/generate", json={"inputs": case["source"]})
            assert response.status_code == 200, response.text
            if response.json()["generated_text"] != case["target"]:
                wrong.append((case["category"], case["source"], response.json()["generated_text"]))
    assert 1 - len(wrong) / len(cases) >= least, wrong
    assert not [w for w in wrong if w[0].endswith("_copy") and w[1] not in KNOWN_COPY_MISSES], wrong
    known = [c["source"] for c in cases if c["source"] in KNOWN_COPY_MISSES]
    assert all(source in {w[1] for w in wrong} for source in known), "a known miss is right now: remove it"
