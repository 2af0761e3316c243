"""Citation-looking markers in claim text: the answer's markers [n] are numbered by code, from the sources it
lists, so a marker already in a claim (a document's own footnote, a model numbering its sources) would point
at a source that is not the one listed beside it. Such markers are taken out before the answer is built."""

import re
from typing import Final

_MARKER: Final = re.compile(
    r"[ \t]*(?:"
    r"\[\s*\d{1,3}(?:\s*(?:[,;\u2013-]|and)\s*\d{1,3})*\s*\](?:\([^()\s]*\))?"  # [2], [2, 3], [2-4], [2](#ref)
    r"|\[\^[^\]\s]{1,32}\]"  # a Markdown footnote reference, [^2] or [^note]
    r"|[\u3010\uff3b]\s*\d{1,3}\s*[\u3011\uff3d]"  # lenticular and fullwidth brackets around a number
    r")")


def without_markers(text: str) -> str:
    """The text without citation-looking markers (and the blanks before them), trimmed."""
    return _MARKER.sub("", text).strip()
