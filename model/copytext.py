"""Text the normalizer must copy byte for byte: other scripts, emoji and symbols, numbers already in
digits, URLs and e-mail addresses, HTML and Markdown markup, code.

Every maker takes a `random.Random` and a pool of Latin words (held out per split by the caller)
and returns a string that holds no number word and no month name. Imports nothing from this repo.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

# Unicode blocks of scripts people write in, as (first, last) code points of their letters.
SCRIPT_RANGES = {
    "cyrillic": (0x0430, 0x044F),
    "greek": (0x03B1, 0x03C9),
    "arabic": (0x0627, 0x064A),
    "hebrew": (0x05D0, 0x05EA),
    "devanagari": (0x0905, 0x0939),
    "thai": (0x0E01, 0x0E2E),
    "hangul": (0xAC00, 0xD7A3),
    "hiragana": (0x3041, 0x3096),
    "katakana": (0x30A1, 0x30FA),
    "cjk": (0x4E00, 0x9FFF),
    "armenian": (0x0561, 0x0586),
    "georgian": (0x10D0, 0x10FA),
}
# Scripts written without spaces between words.
UNSPACED_SCRIPTS = frozenset({"thai", "hiragana", "katakana", "cjk"})
EMOJI_RANGES = ((0x1F600, 0x1F64F), (0x1F300, 0x1F5FF), (0x1F680, 0x1F6FF), (0x1F900, 0x1F9FF), (0x2600, 0x26FF))
# Emoji sequences built with joiners and modifiers, which tokenize into many byte pieces.
EMOJI_SEQUENCES = ("👍🏽", "👨‍👩‍👧", "🏳️‍🌈", "❤️", "🇪🇸", "🇬🇧", "🙋‍♀️", "✌🏿", "👩🏻‍💻", "1️⃣", "#️⃣")
SYMBOLS = tuple("€$£¥₹%‰°±×÷≈≠≤≥∞√∑π→←↑↓⇒•·…–—©®™§¶†‡※★☆♥♦♣♠✓✗¿¡«»“”‘’„‹›")
CURRENCIES = ("€", "$", "£", "USD", "EUR", "¥", "CHF", "MXN")
TLDS = ("es", "com", "org", "net", "io", "mx", "co.uk", "dev", "edu", "ar")
HTML_TAGS = ("b", "i", "em", "strong", "span", "p", "li", "td", "h2", "code", "small")
CODE_LINES = (
    "for (int i = 0; i < {n}; i++) {{",
    "if x > {n}: return None",
    "const {w} = require('{w}');",
    "SELECT * FROM {w} WHERE id = {n};",
    "def {w}(x): return x * {n}",
    "{w}[{n}] = {w}.get('{w}', 0)",
    "print(f'{{{w}}}')",
    "let {w}: Vec<u8> = vec![0; {n}];",
    "x = {n} if {w} else -1",
    "$ {w} --port {n}",
    '<{w} id="{w}{n}"/>',
)


def script_word(rng: random.Random, script: str | None = None) -> str:
    first, last = SCRIPT_RANGES[script or rng.choice(tuple(SCRIPT_RANGES))]
    return "".join(chr(rng.randint(first, last)) for _ in range(rng.randint(1, 5)))


def script_text(rng: random.Random) -> str:
    """A phrase in one other script, spaced or not as that script is written, with its punctuation."""
    script = rng.choice(tuple(SCRIPT_RANGES))
    joiner = "" if script in UNSPACED_SCRIPTS else " "
    text = joiner.join(script_word(rng, script) for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.5:
        text += rng.choice(("。", "、", "؟", "!", ".", "?", ",", "：", "·"))
    return text


def emoji(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return rng.choice(EMOJI_SEQUENCES)
    first, last = rng.choice(EMOJI_RANGES)
    return "".join(chr(rng.randint(first, last)) for _ in range(rng.choice((1, 1, 1, 2, 3))))


def symbol_run(rng: random.Random) -> str:
    return "".join(rng.choice(SYMBOLS) for _ in range(rng.randint(1, 3)))


def odd_character(rng: random.Random) -> str:
    """Any printable character from the Basic Multilingual Plane and beyond: the byte fallback."""
    while True:
        c = chr(rng.choice((rng.randint(0xA1, 0x2FFF), rng.randint(0x3000, 0xD7FF), rng.randint(0x10000, 0x1FAFF))))
        if c.isprintable() and not c.isspace():
            return c


def digits_text(rng: random.Random) -> str:
    """A number already written in digits, in one of the formats people use."""
    kind = rng.randrange(12)
    n = rng.randint(0, 10 ** rng.randint(1, 7))
    if kind == 0:  # prices
        cents = f"{rng.randint(0, 99):02d}"
        amount = f"{n},{cents}" if rng.random() < 0.5 else f"{n}.{cents}"
        cur = rng.choice(CURRENCIES)
        return f"{amount} {cur}" if rng.random() < 0.6 else f"{cur}{amount}"
    if kind == 1:  # decimals and percentages
        return f"{rng.randint(0, 999)}{rng.choice(',.')}{rng.randint(0, 999)}" + rng.choice(
            ("", " %", "%", " km", " kg")
        )
    if kind == 2:  # times
        return f"{rng.randint(0, 23)}:{rng.randint(0, 59):02d}" + rng.choice(("", " h", ":00", " a. m.", " pm"))
    if kind == 3:  # numeric dates: not the contract's (no month name), copied
        sep = rng.choice("/-.")
        return f"{rng.randint(1, 31)}{sep}{rng.randint(1, 12)}{sep}{rng.randint(1000, 2099)}"
    if kind == 4:  # phone numbers
        groups = [str(rng.randint(100, 999)) for _ in range(3)]
        return rng.choice(("+34 ", "+1 ", "(555) ", "")) + rng.choice((" ", "-", "")).join(groups)
    if kind == 5:  # thousands separators
        return f"{n:,}".replace(",", rng.choice((",", ".", " ")))
    if kind == 6:  # ordinals and versions in digits
        return rng.choice((f"{n % 100}º", f"{n % 100}ª", f"{n % 100}st", f"v{n % 10}.{n % 7}.{n % 13}", f"{n % 100}th"))
    if kind == 7:  # ranges, scores, ratios
        return f"{rng.randint(0, 99)}{rng.choice(('-', '–', ':', '/', 'x'))}{rng.randint(0, 99)}"
    if kind == 8:  # codes and references
        return rng.choice(("ISO ", "RFC ", "A-", "#", "No. ", "nº ", "CP ")) + str(n)
    if kind == 9:  # years and plain integers
        return str(rng.randint(1000, 2099) if rng.random() < 0.5 else n)
    if kind == 10:  # scientific notation and signs
        return rng.choice(("-", "+", "±", "")) + f"{rng.randint(1, 9)}.{rng.randint(0, 99)}e{rng.randint(-9, 9)}"
    return f"{rng.randint(1, 9)}{rng.choice(('½', '¼', '/2', '/3'))}"


def amount_in_digits(rng: random.Random) -> tuple[str, int]:
    """A round amount in digits, with runs of one digit, as budgets and populations are written ("$2,500,000",
    "1.250.000 €", "1 000 000"), and its value. The models lost count in such runs ("$2,500,000" came out
    "$2,500,00", "1 250 000 €" "250 000 €"): digits_text's uniform numbers rarely hold one."""
    if rng.random() < 0.15:
        significant = int(str(rng.randint(1, 9)) * rng.randint(2, 4))  # 1111, 5555
    else:
        significant = rng.choice((rng.randint(1, 9), rng.randint(10, 99), rng.randint(100, 999)))
    value = significant * 10 ** rng.randint(2, 12 - len(str(significant)))
    separator = rng.choice((",", ",", ".", ".", " ", "'", ""))
    text = f"{value:,}".replace(",", separator)
    if rng.random() < 0.15:
        text += ("." if separator == "," else ",") + "00"  # no cents: the value stays whole
    if rng.random() < 0.3:
        return text, value
    currency = rng.choice(CURRENCIES)
    return (f"{text} {currency}" if rng.random() < 0.6 else f"{currency}{text}"), value


def url(rng: random.Random, words: Sequence[str]) -> str:
    """A URL or an e-mail address built from ordinary words (never number words)."""
    w = [rng.choice(words).lower() for _ in range(4)]
    host = f"{w[0]}.{rng.choice(TLDS)}"
    kind = rng.randrange(5)
    if kind == 0:
        return f"{w[1]}.{w[2]}@{host}" if rng.random() < 0.5 else f"{w[1]}{rng.randint(1, 99)}@{host}"
    scheme = rng.choice(("https://", "http://", "https://www.", "www.", ""))
    path = "/".join(w[1 : rng.randint(1, 4)])
    address = f"{scheme}{host}/{path}" if path else f"{scheme}{host}"
    if kind == 1:
        address += f"?{w[3]}={rng.randint(0, 999)}&lang={rng.choice(('es', 'en'))}"
    elif kind == 2:
        address += f"#{w[3]}"
    elif kind == 3:
        address += rng.choice((".html", ".pdf", "/", f"/{rng.randint(1, 9999)}"))
    return address


def markup(rng: random.Random, inner: str, words: Sequence[str]) -> str:
    """`inner` wrapped in HTML or Markdown, as it would appear in a document."""
    kind = rng.randrange(8)
    if kind == 0:
        tag = rng.choice(HTML_TAGS)
        return f"<{tag}>{inner}</{tag}>"
    if kind == 1:
        return f'<a href="{url(rng, words)}">{inner}</a>'
    if kind == 2:
        mark = rng.choice(("**", "*", "_", "`", "~~"))
        return f"{mark}{inner}{mark}"
    if kind == 3:
        return f"[{inner}]({url(rng, words)})"
    if kind == 4:
        return rng.choice(("# ", "## ", "- ", "* ", "> ", "1. ")) + inner
    if kind == 5:
        return f"{inner}<br>" if rng.random() < 0.5 else f"{inner}&nbsp;"
    if kind == 6:
        return f"| {inner} | {rng.choice(words)} |"
    return f'<span class="{rng.choice(words).lower()}">{inner}</span>'


def code_line(rng: random.Random, words: Sequence[str]) -> str:
    template = rng.choice(CODE_LINES)
    return template.format(n=rng.randint(0, 999), w=rng.choice(words).lower())


# One sentence the service cannot split must fit the model's 128 source tokens. Byte-level BPE spends
# at most a token per byte; rare scripts and symbols cost about that, ASCII words rarely more than a
# token per 1.7 characters (nonsense words are the worst: 245 characters of them took 145 tokens).
# A sentence within this estimate fits with room to spare.
ONE_PIECE_TOKEN_ESTIMATE = 110
ASCII_TOKENS_PER_CHARACTER = 0.6


def fits_one_piece(text: str) -> bool:
    """Whether `text` fits the model's source limit by a worst-case, tokenizer-free estimate."""
    cost = sum(ASCII_TOKENS_PER_CHARACTER if ord(ch) < 128 else len(ch.encode("utf-8")) for ch in text)
    return cost <= ONE_PIECE_TOKEN_ESTIMATE


# Of the training split's numbers in digits, the share that is a round amount (amount_in_digits). Training only:
# the held-out splits draw as before, so the test set stays the same (its digest is pinned).
TRAINING_ROUND_AMOUNT_SHARE = 0.4


def round_amount_share(split: str) -> float:
    return TRAINING_ROUND_AMOUNT_SHARE if split == "train" else 0.0


def copy_piece(rng: random.Random, words: Sequence[str], kind: str, *, round_amount_share: float = 0.0) -> str:
    """One piece of copy-only text of `kind` (see COPY_KINDS); with `round_amount_share`, that share of the numbers
    in digits a round amount."""
    if kind == "script":
        return script_text(rng)
    if kind == "emoji":
        r = rng.random()
        if r < 0.6:
            return emoji(rng)
        return symbol_run(rng) if r < 0.8 else "".join(odd_character(rng) for _ in range(rng.randint(1, 3)))
    if kind == "digits":
        if round_amount_share and rng.random() < round_amount_share:
            return amount_in_digits(rng)[0]
        return digits_text(rng)
    if kind == "url":
        return url(rng, words)
    if kind == "markup":
        return code_line(rng, words) if rng.random() < 0.25 else markup(rng, rng.choice(words), words)
    if kind == "odd":
        return "".join(odd_character(rng) for _ in range(rng.randint(1, 3)))
    raise ValueError(f"unknown copy kind {kind!r}")


COPY_KINDS = ("script", "emoji", "digits", "url", "markup", "odd")
