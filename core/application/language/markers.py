"""Citation-looking markers in claim text: the answer's markers [n] are numbered by code, from the sources it
lists, so a marker already in a claim (a document's own footnote, a model numbering its sources) would point
at a source that is not the one listed beside it. Such markers are taken out before the answer is built.

Zero-width characters (a zero-width space, a joiner, a word joiner, a BOM, a soft hyphen) show nothing, so
"[", U+200B, "2]" reads as "[2]": they count as blanks inside and before a marker. The pattern has no quantifier that
can give back what it took (possessive ones, Python 3.11), and the blanks before a marker are trimmed after it
is found rather than matched before it: a long run of blanks with no marker after it costs one pass, not one
pass per blank (that made a model's 100,000 blanks take minutes).
"""

import re
from typing import Final

ZERO_WIDTH: Final = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
"""Characters that take no room: they never keep a marker from being one."""
_GAP: Final = rf"[\s{ZERO_WIDTH}]*+"
_NUMBER: Final = rf"\d(?:[{ZERO_WIDTH}]*+\d){{0,2}}"
"""One to three digits, zero-width characters between them allowed."""
_MARKER: Final = re.compile(
    r"(?:"
    rf"\[{_GAP}{_NUMBER}(?:{_GAP}(?:[,;\u2013-]|and){_GAP}{_NUMBER})*+{_GAP}\](?:\([^()\s]*+\))?"  # [2], [2, 3]
    rf"|\[[{ZERO_WIDTH}]*+\^[^\]\s]{{1,32}}+\]"  # a Markdown footnote reference, [^2] or [^note]
    rf"|[\u3010\uff3b]{_GAP}{_NUMBER}{_GAP}[\u3011\uff3d]"  # lenticular and fullwidth brackets around a number
    r")")
_BEFORE: Final = " \t" + ZERO_WIDTH
"""What is taken out before a marker with it."""


def without_markers(text: str) -> str:
    """The text without citation-looking markers (and the blanks before them), trimmed."""
    kept: list[str] = []
    done = 0
    for marker in _MARKER.finditer(text):
        kept.append(text[done:marker.start()].rstrip(_BEFORE))
        done = marker.end()
    kept.append(text[done:])
    return "".join(kept).strip()
