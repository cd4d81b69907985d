"""Text normalization for the exact-match fast path.

``normalize_question(text)`` maps trivially different spellings of one question to one key before any
embedding is computed: Unicode NFKC (full-width forms, ligatures, non-breaking spaces), typographic
quotes and dashes to ASCII, casefold, whitespace collapsed, and trailing sentence punctuation
(``?!.…`` and friends) stripped, dots dropped from acronyms ("E.T.F." == "ETF"). It never removes words, digits or signs, so "not", "n't", "-5" and
"3.10" survive: two questions that normalize equal must have the same answer, because the exact path
skips the precision guard.
"""

from __future__ import annotations

import re
import unicodedata

_TRANSLATE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",  # single quotes
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',  # double quotes
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u200b": None,
        "\u200c": None,
        "\u200d": None,
        "\ufeff": None,  # zero-width characters
    }
)
_WS = re.compile(r"\s+")
# Trailing punctuation that ends a sentence; NFKC already maps full-width ？！ to ?!.
# The lookbehind lets a match start only where a run of such characters starts: without it, a long
# run followed by a letter ("?" * 40000 + "a") is rescanned from each of its positions, O(n^2).
_TRAILING = re.compile(r"(?<![\s?!.\u2026\u3002,;:])[\s?!.\u2026\u3002,;:]+$")
_LEADING = re.compile(r"^[\s\u00bf\u00a1]+")  # Spanish ¿ ¡ and stray spaces
_ACRONYM = re.compile(r"\b(?:[^\W\d_]\.){2,}")  # "e.t.f." -> "etf", "u.s." -> "us"


def normalize_question(text: str) -> str:
    """The exact-match key for a question (see module docstring)."""
    text = unicodedata.normalize("NFKC", text).translate(_TRANSLATE).casefold()
    text = _ACRONYM.sub(lambda m: m.group(0).replace(".", ""), text)
    text = _WS.sub(" ", text)
    text = _LEADING.sub("", text)
    text = _TRAILING.sub("", text)
    return text
