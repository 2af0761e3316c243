"""Text from documents and questions, escaped for the format of the field it is sent in.

Slack reads three formats, and each has its own control sequences:

- **mrkdwn** (section and context blocks, a message's `text` fallback, the greeting): every control sequence
  (`<!channel>`, `<!here>`, `<@U123>`, `<#C123>`, `<https://x|label>`) starts with a raw `<`, so `&`, `<` and
  `>` become entities, as Slack asks. `*`, `_`, `~` and backticks only format, and mrkdwn has no escape for them.
- **plain text** (button labels, suggested prompts, the assistant thread's title): shown as given, except that a
  suggested prompt's message is posted as the person's own message once chosen. So `<` and `>` become the
  single angle quotes U+2039 and U+203A (no entity: plain text may show one literally), `@channel`, `@here`
  and `@everyone` get an invisible word joiner after the `@`, and the text is one line.
- **Markdown** (a streamed answer's `markdown_text`): a paragraph per line of the answer, and a backslash before
  every character Markdown gives meaning to; links only to the URLs the cited documents themselves declare
  (their `url`), as autolinks that show the address; any other URL is shown as code, never as a link whose
  label could hide where it goes.
"""

import re
from collections.abc import Collection
from typing import Final

_MRKDWN: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_PLAIN: Final = str.maketrans({"<": "\u2039", ">": "\u203a"})
_MASS_MENTION: Final = re.compile(r"@(?=(?:channel|here|everyone)\b)", re.IGNORECASE)
WORD_JOINER: Final = "\u2060"
MARKDOWN_SPECIAL: Final = frozenset("\\`*_~[]<>|#!&")
"""Characters CommonMark (with GitHub's tables and strikethrough) gives a meaning to inline, escaped everywhere;
list markers are escaped where a line starts."""
_BLOCK_START: Final = re.compile(r"^(?:[-+]|\d{1,9}[.)])")
"""What would make the paragraph a list or a rule: a leading `-` or `+`, or a number and `.` or `)`."""
URL: Final = re.compile(r"(?:https?://|www\.)[^\s<>`\"']+", re.IGNORECASE)
_URL_TAIL: Final = ".,;:!?)]}"


def mrkdwn(text: str) -> str:
    """`&`, `<` and `>` as entities (in that order, so an entity is never escaped twice)."""
    return text.replace("&", _MRKDWN["&"]).replace("<", _MRKDWN["<"]).replace(">", _MRKDWN[">"])


def plain(text: str) -> str:
    """One line, no angle bracket, no mass mention."""
    flat = " ".join(text.split()).translate(_PLAIN)
    return _MASS_MENTION.sub("@" + WORD_JOINER, flat)


def markdown(text: str, *, links: Collection[str] = ()) -> str:
    """Markdown that shows `text` as written, a paragraph per line of it (a list answer's lead-in and items); a
    URL is a link only when it is in `links`."""
    return "\n\n".join(_markdown_paragraph(" ".join(line.split()), links)
                       for line in text.splitlines() if line.strip())


def _markdown_paragraph(flat: str, links: Collection[str]) -> str:
    pieces: list[str] = []
    done = 0
    for found in URL.finditer(flat):
        url = found.group(0).rstrip(_URL_TAIL)
        end = found.start() + len(url)
        pieces.append(_markdown_text(flat[done:found.start()]))
        pieces.append(f"<{url}>" if url in links and url.startswith(("https://", "http://")) else f"`{url}`")
        done = end
    pieces.append(_markdown_text(flat[done:]))
    return _no_block_start("".join(pieces))


def _no_block_start(text: str) -> str:
    start = _BLOCK_START.match(text)
    if start is None:
        return text
    marker = start.group(0)
    return marker[:-1] + "\\" + marker[-1] + text[len(marker):]


def _markdown_text(text: str) -> str:
    return "".join("\\" + ch if ch in MARKDOWN_SPECIAL else ch for ch in text)
