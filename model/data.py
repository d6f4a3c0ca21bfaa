"""Generate Spanish/English text-normalization pairs on the fly, and read user pairs from TSV.

Owns the bundled task's data contract. Imports nothing from this repo (num2words + Babel only).
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import hashlib
import random
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from babel import Locale
from babel.dates import format_date
from num2words import num2words

# One category per clause of the contract; generation samples them uniformly.
CATEGORIES = (
    "cardinal_es",  # "mil doscientos treinta y cuatro" -> "1234"
    "cardinal_en",  # "one thousand, two hundred and thirty-four" -> "1234"
    "date_written_es",  # Babel es_ES full/long/medium -> ISO
    "date_written_en",  # Babel en_US/en_GB full/long/medium -> ISO
    "date_spoken_es",  # "veintinueve de noviembre de dos mil veintiséis" -> ISO
    "date_spoken_en",  # "November twenty-ninth, twenty twenty-six" -> ISO
    "sentence_number_es",  # a cardinal rewritten in place inside a carrier sentence
    "sentence_number_en",
    "sentence_date_es",  # a written or spoken date rewritten in place inside a carrier sentence
    "sentence_date_en",
    "plain_es",  # no expression: target == source
    "plain_en",
    "article_es",  # "un", "una", "uno" as articles/pronouns: target == source
    "article_en",  # "one" as a pronoun: target == source
)
SPLITS = ("train", "valid", "test")
# Percent buckets of the stable expression hash: [0, 90) train, [90, 95) valid, [95, 100) test.
SPLIT_BUCKETS = {"train": range(0, 90), "valid": range(90, 95), "test": range(95, 100)}
# Share of carrier templates and words held out for each of valid and test (by hash rank).
HELD_OUT_FRACTION = 0.1

MIN_NUMBER, MAX_NUMBER = 2, 999_999_999
MIN_DATE, MAX_DATE = dt.date(1900, 1, 1), dt.date(2099, 12, 31)
# Share of sentence carriers taken from the hand-written templates; the rest is random words.
TEMPLATE_CARRIER_SHARE = 0.5
# Share of random-sentence words replaced by pronounceable nonsense, which can only be copied.
PSEUDO_WORD_SHARE = 0.12
PSEUDO_ONSETS = ("", "b", "c", "d", "f", "g", "j", "k", "l", "m", "n", "ñ", "p", "r", "s", "t", "v", "z", "ch", "br", "tr", "pl")
PSEUDO_VOWELS = ("a", "e", "i", "o", "u", "á", "é", "í", "ó", "ú", "ü", "y", "ai", "ou")
PSEUDO_CODAS = ("n", "s", "l", "r", "x", "k", "th", "ng")
# Phrases spliced into a random carrier for the article categories: article or pronoun uses.
ARTICLE_PHRASES = {
    "es": ("un {nm}", "una {nf}", "uno de ellos", "una de ellas", "cada uno", "con uno", "un {nm} y una {nf}"),
    "en": ("one of them", "this one", "that one", "the other one", "no one", "one by one", "one {noun}"),
}
BABEL_LOCALES = ("es_ES", "en_US", "en_GB")
BABEL_FORMATS = ("full", "long", "medium")  # "short" is numeric: no month name, outside the contract


class DataError(ValueError):
    """A pairs file is malformed; the message names the file and the 1-based line number."""


@dataclass(frozen=True)
class Example:
    source: str
    target: str
    category: str


# ---------------------------------------------------------------------------------------------
# Carrier sentences and word lists. "{n}" is a cardinal slot, "{d}" a date slot, "{nm}"/"{nf}"
# a masculine/feminine noun slot. Slots never open a sentence: number words are never capitalized.

NUMBER_TEMPLATES_ES = """\
Compramos {n} tornillos para la mesa.
El pueblo tiene {n} habitantes según el censo.
En la biblioteca hay {n} libros antiguos.
La empresa vendió {n} unidades el año pasado.
Me faltan {n} páginas para terminar la novela.
El estadio tiene capacidad para {n} personas.
Recorrimos {n} kilómetros en bicicleta.
La factura asciende a {n} euros.
¿De verdad pagaste {n} pesos por eso?
Ese árbol tiene más de {n} años.
Hay un total de {n} alumnos matriculados.
¡Ganó {n} partidas seguidas!
El informe menciona {n} casos nuevos.
Plantaron {n} olivos junto al río.
La montaña mide {n} metros de altura.
Según la policía, asistieron {n} manifestantes.
El barco transportaba {n} contenedores.
Necesito {n} gramos de harina y una pizca de sal.
La colección incluye {n} sellos de todo el mundo.
El vídeo tiene {n} visitas.
Contamos {n} ovejas antes de dormir.
La ciudad registró {n} nacimientos.
Su abuelo guardaba {n} cartas en un baúl.
El museo recibe {n} visitantes cada verano.
Se imprimieron {n} ejemplares del periódico.
La obra costó {n} dólares, dijo el arquitecto.
En el almacén quedan {n} cajas.
El satélite dio {n} vueltas a la Tierra.
Marta escribió {n} poemas en su juventud.
Aquel verano llovió {n} días.
El equipo anotó {n} puntos en la temporada.
La granja produce {n} litros de leche.
Leímos que había {n} especies en peligro.
El tren tardó {n} minutos en llegar.
«Son {n} en total», respondió el cajero.
La herencia sumaba {n} reales.
"""

NUMBER_TEMPLATES_EN = """\
She counted {n} sheep before falling asleep.
The town has {n} inhabitants according to the census.
We bought {n} screws for the table.
The library holds {n} old books.
The company sold {n} units last year.
I still have {n} pages left to read.
The stadium can seat {n} people.
We cycled {n} kilometers along the coast.
The invoice comes to {n} dollars.
Did you really pay {n} pounds for that?
That tree is more than {n} years old.
There are {n} students enrolled this term.
He won {n} games in a row!
The report mentions {n} new cases.
They planted {n} olive trees by the river.
The mountain is {n} feet tall.
Police said {n} protesters attended the march.
The ship carried {n} containers.
You need {n} grams of flour and a pinch of salt.
The collection includes {n} stamps from all over the world.
The video has {n} views.
The city recorded {n} births.
Her grandfather kept {n} letters in a trunk.
The museum welcomes {n} visitors every summer.
They printed {n} copies of the newspaper.
"It cost {n} euros," the architect said.
There are {n} boxes left in the warehouse.
The satellite circled the Earth {n} times.
Mary wrote {n} poems in her youth.
It rained for {n} days that summer.
The team scored {n} points this season.
The farm produces {n} liters of milk.
We read that {n} species are endangered.
The train was {n} minutes late.
Roughly {n} volunteers signed up.
The fund raised {n} dollars in a week.
"""

DATE_TEMPLATES_ES = """\
El artículo se publicó el {d}.
La reunión se aplazó al {d}.
Nació el {d} en un pueblo de Galicia.
El contrato vence el {d}.
¿Te acuerdas de lo que pasó el {d}?
La boda será el {d}, si todo va bien.
El puente se inauguró el {d}.
Recibimos la carta el {d}.
La tienda cerró sus puertas el {d}.
Según el acta, la sesión terminó el {d}.
El plazo de inscripción acaba el {d}.
¡Nos vemos el {d}!
El manuscrito está fechado el {d}.
Llegaron a Buenos Aires el {d}.
La ley entró en vigor el {d}.
Firmaron la paz el {d}, tras años de guerra.
El concierto quedó fijado para el {d}.
Mi abuela se casó el {d}.
La última actualización es del {d}.
El cometa será visible el {d}.
Presentó la dimisión el {d}.
Todo empezó el {d}, una tarde de lluvia.
El pedido se envió el {d}.
Fecha de emisión: {d}.
La final se juega el {d} en Sevilla.
Según el diario, el incendio comenzó el {d}.
Tiene cita con el médico el {d}.
El barco zarpó el {d}.
La obra se estrenó el {d}.
Volvimos a casa el {d}, agotados.
"""

DATE_TEMPLATES_EN = """\
The meeting was moved to {d}.
The article was published on {d}.
She was born on {d} in a small town.
The contract expires on {d}.
Do you remember what happened on {d}?
The wedding will take place on {d}, if all goes well.
The bridge opened on {d}.
We received the letter on {d}.
The shop closed for good on {d}.
According to the minutes, the session ended on {d}.
Registration closes on {d}.
See you on {d}!
The manuscript is dated {d}.
They arrived in Boston on {d}.
The law came into force on {d}.
The treaty was signed on {d}, after years of war.
The concert is scheduled for {d}.
My grandmother got married on {d}.
Last updated: {d}.
The comet will be visible on {d}.
He resigned on {d}.
It all started on {d}, on a rainy afternoon.
Your order shipped on {d}.
Date of issue: {d}.
The final will be played on {d} in London.
The paper says the fire broke out on {d}.
She has a doctor's appointment on {d}.
The ship set sail on {d}.
The play premiered on {d}.
We finally got home on {d}, exhausted.
"""

PLAIN_ES = """\
La heroica ciudad dormía la siesta.
En un lugar de la Mancha, de cuyo nombre no quiero acordarme.
¿Dónde está la estación de autobuses?
¡Qué alegría verte por aquí!
El niño pequeño corría detrás del perro.
Llámame cuando llegues, por favor.
La reunión es el 2026-11-29 a las 10:30.
Mi número de teléfono es el 612 345 678.
El código postal es 28013.
Pagó 15,50 € por el menú del día.
La temperatura bajó a -3 °C anoche.
Escribió «hasta pronto» en la pizarra.
El año 1492 aparece en todos los libros de historia.
Vive en la calle Mayor, 17, 3.º B.
El vuelo IB3166 sale de la puerta B22.
Señor Muñoz, su pedido está listo.
La cigüeña volvió al campanario.
Quedamos a las 8 en la plaza.
La versión 2.3.1 corrige varios errores.
No sé si vendrá mañana o pasado.
El 15/03/2024 se entregó el informe.
Compré pan, leche y huevos.
—¿Vienes? —preguntó ella.
Ana y Luis viajaron a Perú en tren.
El capítulo 12 es el más largo.
Me encanta el olor de la lluvia.
Visite www.ejemplo.es para más información.
Escríbenos a hola@ejemplo.es.
El río Ebro desemboca en el Mediterráneo.
Hoy hace un día espléndido.
Las llaves están encima de la mesa.
¿Has visto mi paraguas?
La niña aprendió a nadar este verano.
El tren de las 7:45 llegó con retraso.
Cuesta un 20 % menos que el año pasado.
Ese pingüino se llama Íñigo.
Aquí no pasa nada.
El profesor explicó la lección con paciencia.
Mañana iremos al mercado.
Tengo que renovar el DNI antes de diciembre.
"""

PLAIN_EN = """\
The heroic city was taking its nap.
It was the best of times, it was the worst of times.
Where is the bus station?
What a joy to see you here!
The little boy ran after the dog.
Call me when you get there, please.
The meeting is on 2026-11-29 at 10:30.
My phone number is 555-0143.
The zip code is 90210.
He paid $15.50 for lunch.
The temperature dropped to -3 °F last night.
She wrote "see you soon" on the board.
The year 1492 appears in every history book.
They live at 221B Baker Street.
Flight BA2490 leaves from gate B22.
Mr. O'Brien, your order is ready.
The stork came back to the bell tower.
Let's meet at 8 in the square.
Version 2.3.1 fixes several bugs.
I don't know whether she'll come tomorrow.
The report was handed in on 03/15/2024.
I bought bread, milk and eggs.
"Are you coming?" she asked.
Anna and Louis took the train to Peru.
Chapter 12 is the longest.
I love the smell of rain.
Visit www.example.com for more information.
Write to us at hello@example.com.
The Thames flows through London.
It's a beautiful day today.
The keys are on the table.
Have you seen my umbrella?
The girl learned to swim this summer.
The 7:45 train arrived late.
It costs 20% less than last year.
That penguin is called Zoë.
Nothing ever happens here.
The teacher explained the lesson patiently.
Tomorrow we'll go to the market.
I need to renew my passport before December.
"""

ARTICLE_TEMPLATES_ES = """\
Tengo un {nm} en casa.
Había una {nf} en la puerta.
Uno nunca sabe lo que puede pasar.
Dame uno, por favor.
Quiero una {nf} nueva.
Cada uno trae su {nm}.
Una de ellas llegó tarde.
Es uno de los mejores del mundo.
Ninguno de los dos quiso hablar.
Compré un {nm} y una {nf}.
Uno de mis amigos vive en Lima.
¿Me prestas una?
Había una vez un {nm} muy curioso.
Alguno tendrá un {nm} para mí.
Se miraron el uno al otro.
Es una {nf} preciosa.
Uno se acostumbra a todo.
Busco un {nm} barato.
Me queda una sola {nf}.
Vimos un {nm} enorme en el parque.
Cuando uno viaja, aprende mucho.
Pásame una, que me he quedado sin {nf}.
"""

ARTICLE_TEMPLATES_EN = """\
One of them left early.
This one is mine.
I want the red one.
One never knows what might happen.
Which one do you prefer?
No one came to the {noun}.
Someone left a {noun} here.
One day, the {noun} simply broke.
Give me one, please.
They looked at one another.
Everyone brought a {noun}.
I'd like a new one.
One of my friends lives in Lima.
That one over there is cheaper.
Can I borrow one?
One must always be careful with the {noun}.
She is one of the best in the world.
We saw a huge {noun} and a tiny one in the park.
Any one of you could do it.
The old {noun} was replaced by a new one.
One by one, they entered the room.
Is this the one you lost?
"""

NOUNS_M_ES = (
    "perro gato libro coche árbol río barco tren lápiz cuaderno reloj paraguas sombrero zapato "
    "vaso plato cuchillo teléfono ordenador jardín museo castillo puente camino bosque lago "
    "volcán pájaro caballo pez regalo mensaje periódico abrigo piano violín espejo cuadro "
    "sillón edificio hospital mercado tejado balcón pasillo"
).split()
NOUNS_F_ES = (
    "casa mesa silla ventana puerta carta llave mochila bicicleta guitarra manzana naranja "
    "botella taza cuchara lámpara cama camisa falda chaqueta ciudad playa montaña isla calle "
    "plaza iglesia escuela biblioteca película canción historia pregunta respuesta idea "
    "fotografía maleta nevera cocina flor estrella nube"
).split()
NOUNS_EN = (
    "dog cat book car tree river boat train pencil notebook watch umbrella hat shoe glass "
    "plate knife phone computer garden museum castle bridge road forest lake volcano bird "
    "horse fish gift message newspaper coat piano violin mirror painting chair window door "
    "letter key backpack bicycle guitar apple bottle cup lamp bed shirt jacket beach island"
).split()

# Plain random sentences are drawn from these, so the model learns to copy, not to memorize.
# Number words and month names are filtered out at load time (see `_plain_words`).
WORDS_ES = (
    "el la los las un una unos unas y o pero porque que de del a al en con sin por para "
    "sobre entre hacia desde hasta muy más menos también nunca siempre ya todavía aquí allí "
    "hoy ayer mañana ahora luego después antes bien mal casi solo tan como cuando donde "
    "quien cual este esta ese esa aquel mi tu su nuestro vuestro yo tú él ella nosotros "
    "ellos ser estar tener hacer poder decir ir ver dar saber querer llegar pasar deber "
    "poner parecer quedar creer hablar llevar dejar seguir encontrar llamar venir pensar "
    "salir volver tomar conocer vivir sentir tratar mirar contar empezar esperar buscar "
    "existir entrar trabajar escribir perder producir ocurrir entender pedir recibir "
    "recordar terminar permitir aparecer conseguir comenzar servir sacar necesitar "
    "mantener resultar leer caer cambiar presentar crear abrir considerar oír acabar "
    "es son era fue había hay tiene tienen dijo hizo puede va vamos vino sabe quiere "
    "casa mundo vida tiempo día año hombre mujer niño niña gente país ciudad parte lugar "
    "trabajo gobierno empresa agua tierra mano ojo cabeza corazón noche tarde semana mes "
    "historia palabra nombre familia padre madre hijo hija amigo amiga camino mar cielo "
    "sol luna viento fuego luz sombra calle puerta ventana libro carta mesa cama coche "
    "tren perro gato pájaro árbol flor campo montaña río playa isla pueblo escuela "
    "iglesia guerra paz amor miedo verdad mentira problema pregunta respuesta idea razón "
    "música canción color rojo azul verde blanco negro grande pequeño nuevo viejo bueno "
    "malo mejor peor largo corto alto bajo joven feliz triste fácil difícil rápido lento "
    "claro oscuro frío caliente dulce amargo limpio sucio lleno vacío rico pobre fuerte "
    "débil cerca lejos dentro fuera arriba abajo quizás además entonces así sí no señor "
    "señora doctor profesora café pan queso vino leche huevo manzana naranja azúcar sal "
    "pingüino cigüeña año niñez muñeca acción canción jamás también pájaro árbol lápiz "
    "después según través crisis análisis jardín corazón avión camión razón algún"
).split()
WORDS_EN = (
    "the a an and or but because that of to in on with without by for about between "
    "toward from until very more less also never always already still here there today "
    "yesterday tomorrow now later after before well badly almost only so as when where "
    "who which this that these those my your his her our their I you he she we they it "
    "be is are was were been have has had do does did can could will would should must "
    "say said go went see saw give gave know knew want wanted get got make made come came "
    "think thought look looked take took find found tell told ask asked work worked seem "
    "feel felt try tried leave left call called keep kept let begin began help talk turn "
    "start show hear play run move live believe bring happen write sit stand lose pay meet "
    "include continue set learn change lead understand watch follow stop create speak read "
    "spend grow open walk win offer remember love consider appear buy wait serve die send "
    "expect build stay fall cut reach kill remain house world life time day year man woman "
    "child people country city part place work government company water land hand eye "
    "head heart night afternoon week family father mother son daughter friend road sea "
    "sky sun moon wind fire light shadow street door window book letter table bed car "
    "train dog cat bird tree flower field mountain river beach island village school "
    "church war peace love fear truth lie problem question answer idea reason music song "
    "color red blue green white black big small new old good bad better worse long short "
    "tall low young happy sad easy hard fast slow clear dark cold hot sweet bitter clean "
    "dirty full empty rich poor strong weak near far inside outside up down maybe besides "
    "then thus yes no mister doctor coffee bread cheese wine milk egg apple orange sugar "
    "salt penguin café naïve résumé coöperate fiancée jalapeño piñata déjà vu"
).split()
NAMES = (
    "Ana Luis Marta Pedro Lucía Javier Carmen Diego Sofía Pablo Elena Andrés Inés Raúl "
    "Begoña Íñigo Nuria Óscar Ramón Rocío John Mary James Emma Oliver Grace Henry Chloe "
    "Liam Zoë Noah Olivia Ethan Amelia Jack Lily Chen Wei Aisha Fatima Kenji Yuki Ngozi "
    "Dmitri Søren Zoltán Madrid Barcelona Sevilla Bilbao Lima Bogotá Quito London Boston "
    "Dublin Chicago Toronto Sydney Oaxaca Cádiz Málaga Zürich"
).split()
# Extra non-word tokens mixed into random plain sentences; all stay as they are.
ODD_TOKENS = ("—", "…", "(sic)", "&", "#12", "@ana", "%", "€", "$", "😀", "★", "→", "°C", "ñ", "ß", "ü")


# ---------------------------------------------------------------------------------------------
# Stable split assignment


def _stable_hash(key: str) -> int:
    """A process-independent 64-bit hash (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


def expression_split(key: str) -> str:
    """The split that owns a normalized expression key such as "num:1234" or "date:2026-11-29"."""
    bucket = _stable_hash(key) % 100
    return next(split for split, buckets in SPLIT_BUCKETS.items() if bucket in buckets)


def _partition(items: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Split carrier items by hash rank: the lowest-ranked HELD_OUT_FRACTION go to test, the next to valid."""
    ranked = sorted(dict.fromkeys(items), key=lambda s: (_stable_hash("carrier:" + s), s))
    k = max(1, round(len(ranked) * HELD_OUT_FRACTION))
    return {"test": tuple(ranked[:k]), "valid": tuple(ranked[k : 2 * k]), "train": tuple(ranked[2 * k :])}


def _lines(block: str) -> tuple[str, ...]:
    return tuple(line for line in block.splitlines() if line.strip())


@functools.cache
def _forbidden_words() -> frozenset[str]:
    """Words that could form (part of) a contract expression, so plain random text never holds one."""
    words: set[str] = set()
    for n in [*range(0, 101), 200, 300, 400, 500, 600, 700, 800, 900, 1000, 10**6, 2 * 10**6]:
        for lang in ("es", "en"):
            words.update(num2words(n, lang=lang).replace(",", " ").replace("-", " ").split())
            if lang == "en" and 0 < n <= 31:
                words.update(num2words(n, lang=lang, to="ordinal").replace("-", " ").split())
    words.update({"primero", "millón", "millones", "veintiún", "oh", "hundred", "thousand", "million"})
    for loc in BABEL_LOCALES:
        locale = _locale(loc)
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                words.update(str(m).strip(".") for m in locale.months[context][width].values())
    words.discard("y")  # "y" is in "treinta y uno" but also the most common conjunction; numbers need more
    words.discard("and")
    words.discard("de")
    words.discard("of")
    words.discard("the")
    words.discard("un")  # "un millón" needs "millón", which is forbidden
    words.discard("una")
    return frozenset(w.lower() for w in words)


@functools.cache
def _locale(name: str) -> Locale:
    return Locale.parse(name)


@functools.cache
def _plain_words(lang: str) -> tuple[str, ...]:
    forbidden = _forbidden_words()
    words = WORDS_ES if lang == "es" else WORDS_EN
    return tuple(w for w in dict.fromkeys(words + NAMES) if w.lower() not in forbidden)


@functools.cache
def _carriers(name: str, split: str) -> tuple[str, ...]:
    tables: dict[str, Sequence[str]] = {
        "number_es": _lines(NUMBER_TEMPLATES_ES),
        "number_en": _lines(NUMBER_TEMPLATES_EN),
        "date_es": _lines(DATE_TEMPLATES_ES),
        "date_en": _lines(DATE_TEMPLATES_EN),
        "plain_es": _lines(PLAIN_ES),
        "plain_en": _lines(PLAIN_EN),
        "article_es": _lines(ARTICLE_TEMPLATES_ES),
        "article_en": _lines(ARTICLE_TEMPLATES_EN),
        "nouns_m_es": NOUNS_M_ES,
        "nouns_f_es": NOUNS_F_ES,
        "nouns_en": NOUNS_EN,
        "words_es": _plain_words("es"),
        "words_en": _plain_words("en"),
    }
    return _partition(tables[name])[split]


# ---------------------------------------------------------------------------------------------
# Expressions


def _sample_number(rng: random.Random, split: str) -> int:
    """Log-uniform over digit counts, with some round numbers ("cien mil", "un millón")."""
    while True:
        digits = rng.randint(1, 9)
        n = rng.randint(max(MIN_NUMBER, 10 ** (digits - 1)), 10**digits - 1)
        if rng.random() < 0.2 and digits > 2:
            scale = 10 ** rng.randint(2, digits - 1)
            n = max(scale, n - n % scale)
        if expression_split(f"num:{n}") == split:
            return n


def _sample_date(rng: random.Random, split: str) -> dt.date:
    span = (MAX_DATE - MIN_DATE).days
    while True:
        d = MIN_DATE + dt.timedelta(days=rng.randint(0, span))
        if expression_split(f"date:{d.isoformat()}") == split:
            return d


def cardinal_words(n: int, lang: str) -> str:
    """The spoken form of a cardinal, exactly as num2words writes it (never capitalized)."""
    return num2words(n, lang=lang)


def written_date(d: dt.date, *, locale: str, fmt: str) -> str:
    return format_date(d, format=fmt, locale=_locale(locale))


def spoken_date_es(d: dt.date, rng: random.Random) -> str:
    day = rng.choice(("uno", "primero")) if d.day == 1 else num2words(d.day, lang="es")
    month = str(_locale("es_ES").months["format"]["wide"][d.month])
    return f"{day} de {month} de {num2words(d.year, lang='es')}"


def spoken_year_en(year: int, rng: random.Random) -> str:
    """ "twenty twenty-six", "nineteen oh-five"/"nineteen oh five", "two thousand (and) one"."""
    options = [num2words(year, lang="en", to="year")] * 2  # the usual reading, twice as likely
    if "oh-" in options[0]:
        options.append(options[0].replace("oh-", "oh "))
    if year >= 2010:  # 2000-2009 already read as cardinals: "two thousand and one"
        cardinal = num2words(year, lang="en")
        options += [cardinal, cardinal.replace(" and ", " ")]
    elif year >= 2000:
        options.append(options[0].replace(" and ", " "))
    return rng.choice(options)


def spoken_date_en(d: dt.date, rng: random.Random) -> str:
    month = str(_locale("en_US").months["format"]["wide"][d.month])
    day = num2words(d.day, lang="en", to="ordinal")
    year = spoken_year_en(d.year, rng)
    if rng.random() < 0.5:
        return f"{month} {day}, {year}"
    return f"the {day} of {month}, {year}"


def _date_source(d: dt.date, lang: str, rng: random.Random, *, spoken: bool) -> str:
    if spoken:
        return spoken_date_es(d, rng) if lang == "es" else spoken_date_en(d, rng)
    locale = "es_ES" if lang == "es" else rng.choice(("en_US", "en_GB"))
    return written_date(d, locale=locale, fmt=rng.choice(BABEL_FORMATS))


# ---------------------------------------------------------------------------------------------
# Categories


def _cardinal(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    n = _sample_number(rng, split)
    return cardinal_words(n, lang), str(n)


def _date(rng: random.Random, split: str, lang: str, spoken: bool) -> tuple[str, str]:
    d = _sample_date(rng, split)
    return _date_source(d, lang, rng, spoken=spoken), d.isoformat()


def _carrier_template(rng: random.Random, split: str, name: str, insert: str) -> str:
    """A hand-written carrier sentence half of the time, otherwise random words around the slot, so
    the model learns to copy any text around an expression rather than memorize the templates."""
    if rng.random() < TEMPLATE_CARRIER_SHARE:
        return rng.choice(_carriers(name, split))
    words = _random_sentence(rng, split, name.rsplit("_", 1)[1]).replace("{", "(").replace("}", ")").split(" ")
    words.insert(rng.randint(1, len(words)), insert)
    return " ".join(words)


def _sentence_number(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    template = _carrier_template(rng, split, f"number_{lang}", "{n}")
    words, digits = _cardinal(rng, split, lang)
    return template.format(n=words), template.format(n=digits)


def _sentence_date(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    template = _carrier_template(rng, split, f"date_{lang}", "{d}")
    d = _sample_date(rng, split)
    source = _date_source(d, lang, rng, spoken=rng.random() < 0.5)
    return template.format(d=source), template.format(d=d.isoformat())


def _pseudo_word(rng: random.Random) -> str:
    """A pronounceable nonsense word ("tamopí", "Zurel"): text the model can only copy."""
    syllables = [rng.choice(PSEUDO_ONSETS) + rng.choice(PSEUDO_VOWELS) for _ in range(rng.randint(1, 4))]
    word = "".join(syllables) + (rng.choice(PSEUDO_CODAS) if rng.random() < 0.4 else "")
    return word.capitalize() if rng.random() < 0.2 else word


def _random_sentence(rng: random.Random, split: str, lang: str) -> str:
    """A random word salad with varied casing and punctuation; held-out splits always use a held-out word."""
    pool = _carriers(f"words_{lang}", "train")
    held_out = _carriers(f"words_{lang}", split) if split != "train" else ()
    words = [rng.choice(pool) for _ in range(rng.randint(2, 14))]
    if held_out:
        words[rng.randrange(len(words))] = rng.choice(held_out)
    for i in range(len(words)):
        r = rng.random()
        if r < PSEUDO_WORD_SHARE:
            words[i] = _pseudo_word(rng)
        elif r < PSEUDO_WORD_SHARE + 0.04:
            words[i] = str(rng.randint(0, 99999))
        elif r < PSEUDO_WORD_SHARE + 0.07:
            words[i] = rng.choice(ODD_TOKENS)
        elif r < PSEUDO_WORD_SHARE + 0.09:
            words[i] = words[i].upper()
        elif r < PSEUDO_WORD_SHARE + 0.14:
            words[i] += ","
        elif r < PSEUDO_WORD_SHARE + 0.16:
            words[i] = f"«{words[i]}»" if lang == "es" else f'"{words[i]}"'
    if rng.random() < 0.8:
        words[0] = words[0][:1].upper() + words[0][1:]
    text = " ".join(words)
    end = rng.choice((".", ".", ".", "?", "!", "…", "", ";"))
    if lang == "es" and end in ("?", "!"):
        text = ("¿" if end == "?" else "¡") + text
    return text + end


def _plain(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    text = (
        rng.choice(_carriers(f"plain_{lang}", split))
        if rng.random() < 0.3
        else _random_sentence(rng, split, lang)
    )
    return text, text


def _article(rng: random.Random, split: str, lang: str) -> tuple[str, str]:
    template = _carrier_template(rng, split, f"article_{lang}", rng.choice(ARTICLE_PHRASES[lang]))
    if lang == "es":
        text = template.format(
            nm=rng.choice(_carriers("nouns_m_es", "train")), nf=rng.choice(_carriers("nouns_f_es", "train"))
        )
    else:
        text = template.format(noun=rng.choice(_carriers("nouns_en", "train")))
    return text, text


_MAKERS: dict[str, Callable[[random.Random, str], tuple[str, str]]] = {
    "cardinal_es": lambda rng, split: _cardinal(rng, split, "es"),
    "cardinal_en": lambda rng, split: _cardinal(rng, split, "en"),
    "date_written_es": lambda rng, split: _date(rng, split, "es", False),
    "date_written_en": lambda rng, split: _date(rng, split, "en", False),
    "date_spoken_es": lambda rng, split: _date(rng, split, "es", True),
    "date_spoken_en": lambda rng, split: _date(rng, split, "en", True),
    "sentence_number_es": lambda rng, split: _sentence_number(rng, split, "es"),
    "sentence_number_en": lambda rng, split: _sentence_number(rng, split, "en"),
    "sentence_date_es": lambda rng, split: _sentence_date(rng, split, "es"),
    "sentence_date_en": lambda rng, split: _sentence_date(rng, split, "en"),
    "plain_es": lambda rng, split: _plain(rng, split, "es"),
    "plain_en": lambda rng, split: _plain(rng, split, "en"),
    "article_es": lambda rng, split: _article(rng, split, "es"),
    "article_en": lambda rng, split: _article(rng, split, "en"),
}


def iter_examples(*, seed: int, split: str, categories: Sequence[str] = CATEGORIES) -> Iterator[Example]:
    """An endless, deterministic stream of examples with categories sampled uniformly.

    Held-out splits are disjoint from train: expressions (numbers, dates) are assigned to a split by
    a stable hash, and carrier templates, plain sentences and held-out words are partitioned by hash
    rank, with every held-out source containing a held-out carrier or word.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    unknown = set(categories) - set(CATEGORIES)
    if unknown:
        raise ValueError(f"unknown categories: {sorted(unknown)}")
    rng = random.Random(f"atento:{seed}:{split}")  # str seeds are hashed with SHA-512: stable
    while True:
        category = rng.choice(categories)
        source, target = _MAKERS[category](rng, split)
        yield Example(source=source, target=target, category=category)


def generate_examples(n: int, *, seed: int, split: str) -> list[Example]:
    """`n` examples from `iter_examples`; the same (seed, split) always gives the same list."""
    stream = iter_examples(seed=seed, split=split)
    return [next(stream) for _ in range(n)]


# ---------------------------------------------------------------------------------------------
# User-supplied pairs


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
            raise DataError(
                f"{path}:{lineno}: expected at most 3 tab-separated columns, found {len(columns)}"
            )
        if not columns[0]:
            raise DataError(f"{path}:{lineno}: empty source")
        category = columns[2] if len(columns) == 3 and columns[2] else "tsv"
        examples.append(Example(source=columns[0], target=columns[1], category=category))
    return examples


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Print generated examples as source<TAB>target<TAB>category."
    )
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split", choices=SPLITS, default="train")
    args = parser.parse_args(argv)
    for ex in generate_examples(args.n, seed=args.seed, split=args.split):
        sys.stdout.write(f"{ex.source}\t{ex.target}\t{ex.category}\n")


if __name__ == "__main__":
    main()
