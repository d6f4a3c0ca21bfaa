"""The edit guard's rule (i) (docs/model-directory.md, `edit_guard`): no edit reaches into a link, an e-mail
address, a path or an HTML tag, which the contract copies byte for byte whatever words they hold.

The bundled model of 2026-12-06 wrote "https://example.com/twenty-five-ways" as ".../twenty-5-ways", "/docs/tres/"
as "/docs/3/" and "dos.mil@example.com" as "2.mil@example.com"; a tag's attribute (`<td colspan="dos">`, `<img
alt="dos gatos">`) is markup too. A word is inside such a thing when the text between the whitespace around it
holds "://", "@", "/", "\\", "=" or a dot between two word characters, once the HTML tags in it are set apart
("<td>dos</td>" and '<a href="x.es">tres</a>' still hold a word of their own), or when it lies inside a tag.
A Markdown link's target, "(...)" right after "]", is set apart the same way ("[tres](https://x.es)" holds a word
of its own, its URL none), and an HTML comment is markup whole ("<!-- tres -->" is copied).

Pure Python (re).
"""

from __future__ import annotations

import re

HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
# What is set apart like a word's surroundings: HTML tags, HTML comments, and a Markdown link's or image's target
# (from its "(" to its ")"), in one pass.
_MARKUP = re.compile(rf"{HTML_TAG.pattern}|<!--.*?-->|(?<=\])\([^()\s]*\)", re.DOTALL)
_LINK_MARKS = re.compile(r"://|[@/\\=]|\w\.\w")
_WHITESPACE = re.compile(r"\s")
# What any of them needs somewhere in the text: a tag's or comment's "<", a Markdown target's "](", a link mark.
_ANY_MARK = re.compile(r"[<@/\\=]|\]\(|\w\.\w")
# How many tokens either side of a word are read to find its tag or its whitespace: a guarded piece is a sentence
# or a line, and a link or a tag longer than this is read in part (a tag's start out of reach is not seen).
_REACH = 256


def may_hold_link_or_tag(text: str) -> bool:
    """False when no word of `text` can lie in a link, an address, a path or a tag (most sentences): one search
    instead of each edited word's look around it."""
    return _ANY_MARK.search(text) is not None


def inside_link_or_tag(tokens: list[str], start: int, stop: int) -> bool:
    """Whether a word among tokens[start:stop] (split_tokens' words, whitespace runs and single characters) lies in
    a link, an e-mail address, a path or an HTML tag."""
    return any(token[0].isalnum() and _in_link_or_tag(tokens, at) for at, token in enumerate(tokens[start:stop], start))


def _in_link_or_tag(tokens: list[str], at: int) -> bool:
    before = "".join(tokens[max(0, at - _REACH) : at])
    text = before + tokens[at] + "".join(tokens[at + 1 : at + 1 + _REACH])
    word_start, word_stop = len(before), len(before) + len(tokens[at])
    tags = [match.span() for match in _MARKUP.finditer(text)]
    if any(start < word_stop and word_start < stop for start, stop in tags):
        return True
    # Tags become spaces, so that a tag's own "/" or "=" marks no word beside it.
    apart = list(text)
    for start, stop in tags:
        apart[start:stop] = " " * (stop - start)
    spaced = "".join(apart)
    before_word = _WHITESPACE.split(spaced[:word_start])[-1]
    after_word = _WHITESPACE.split(spaced[word_stop:], maxsplit=1)[0]
    chunk = before_word + spaced[word_start:word_stop] + after_word
    return bool(_LINK_MARKS.search(chunk))
