"""MDX (Markdown with JSX, as Gatsby and Docusaurus sites write it): the `import` and `export` statements that
stand on their own lines are the site's code, not the page's words, and are dropped before the Markdown reader
reads the page. Components in the text are read by the Markdown reader as HTML. Lines inside fenced code stay.
"""

import re
from typing import Final

_STATEMENT: Final = re.compile(
    r"""^(?:import\s+(?:[\w*{}\s,$]+\s+from\s+)?["'][^"']+["'];?|export\s+(?:const|let|var|function|default|\{)"""
    r""".*)\s*$""")
_FENCE: Final = re.compile(r"^ {0,3}(```|~~~)")


def without_module_lines(body: str) -> str:
    """The body with each top-level `import`/`export` line emptied (kept as a blank line, so line numbers in
    messages still point at the file's lines)."""
    if "import" not in body and "export" not in body:
        return body
    lines = body.split("\n")
    fence: str | None = None
    for index, line in enumerate(lines):
        opening = _FENCE.match(line)
        if opening:
            fence = None if fence == opening.group(1) else fence or opening.group(1)
        elif fence is None and _STATEMENT.match(line):
            lines[index] = ""
    return "\n".join(lines)
