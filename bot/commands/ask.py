"""`sourced ask "QUESTION"`: run the guarded core as a given principal (an operator's tool)."""

import argparse
import json
import textwrap
from typing import Any, Final

from rich.console import Console

from bot.commands.common import add_config_option, add_demo_option, application, operator_principal
from core.application.orchestrator import Question, answerability_note
from core.application.presenting import outcome_as_dict
from core.domain import Audience, Outcome


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("ask", help="ask a question as a given principal")
    parser.add_argument("question")
    parser.add_argument("--roles", default="", help="comma-separated roles, e.g. hr,legal")
    parser.add_argument("--guest", action="store_true", help="ask as a guest (not `everyone`)")
    parser.add_argument("--user", default="cli-operator", help="user id recorded in the audit log")
    parser.add_argument("--email", default=None,
                        help="ask as the person with this e-mail address: what the connectors' sources share with "
                             "the address, its domain and its groups (as a Slack user with a verified e-mail)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (`kind`: the audit's true kind; `presented_as`: the reply's)")
    add_config_option(parser)
    add_demo_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    sourced = application(args, progress=False)
    service = sourced.service
    principal = operator_principal(args.roles, guest=args.guest, user=args.user,
                                   sources=service.source_roles(args.email) if not args.guest else frozenset())
    outcome, evidence = service.ask_with_evidence(
        Question(text=args.question, principal=principal, audience=Audience.only(principal)))
    if args.json:
        view = outcome_as_dict(outcome, answerability_note(evidence.assessment))
        print(json.dumps(view, ensure_ascii=False, indent=2))
    else:
        print_outcome(Console(), outcome)
    return 0


def audit_note(kind: str, presented: str) -> str:
    """The operator's line under a reply whose audit kind differs from the kind it presents. Only `not_permitted`
    does: it means a document this asker may not see matches the question (the unscoped probe, by score alone),
    not that the document answers it, so someone holding its roles may still be refused."""
    if kind == "not_permitted":
        return (f"audit: not_permitted (a document this asker may not see matches the question; not checked whether "
                f"it answers). The reply is exactly the {presented} one.")
    return f"audit: {kind}. The reply is exactly the {presented} one."


def print_outcome(console: Console, outcome: Outcome) -> None:
    """A readable rendering for the terminal: the kind the reply presents (what the asker sees; `not_permitted`
    presents as `not_in_corpus` or `not_retrieved`), the audit's true kind beneath it when that differs, the
    reply, then its sources (how each is cited, where, its owner and age) or the passages that came closest.
    Wrapped to the terminal's width (80 columns when not a terminal), continuation lines indented under their
    item."""
    view = outcome_as_dict(outcome)
    style = {"answered": "green", "clarify": "yellow"}.get(view["outcome"], "red")
    console.print(f"[{style}]{view['outcome']}[/] ({view['presented_as']})", highlight=False)
    if view["kind"] != view["presented_as"]:
        say(console, audit_note(view["kind"], view["presented_as"]), style="dim")
    say(console, view["text"])
    if view["citations"]:
        console.print("Sources", style="bold", highlight=False)
    for citation in view["citations"]:
        say(console, _where(citation), first=f"  [{citation['n']}] ", rest=" " * 6)
        details = [CITED_AS[citation["tier"]], citation["place"], _owner(citation), citation["age"],
                   citation["chunk_id"]]
        say(console, " · ".join(detail for detail in details if detail), first=" " * 6, style="dim")
    for passage in view["nearest"]:
        say(console, _where(passage), first="  - ", rest=" " * 4)
        details = [passage["place"], _owner(passage), passage["chunk_id"]]
        say(console, " · ".join(detail for detail in details if detail), first=" " * 4, style="dim")
    for option in view["options"]:
        say(console, option["label"], first="  ? ", rest=" " * 4)


CITED_AS: Final = {"direct": "quoted", "synthesis": "paraphrased"}
"""A citation's tier as the terminal says it: `direct`, the answer repeats the source's sentence near verbatim;
`synthesis`, it words the source's statement its own way (the guard checked it against the quote either way)."""


def say(console: Console, text: str, *, first: str = "", rest: str | None = None, style: str | None = None) -> None:
    """`text` wrapped to the console's width at word boundaries, the first line after `first` and the others
    after `rest` (default: as deep as `first`); never inside a word or an id."""
    wrapped = textwrap.fill(" ".join(text.split()), width=max(console.width, 40), initial_indent=first,
                            subsequent_indent=first if rest is None else rest, break_long_words=False,
                            break_on_hyphens=False)
    console.print(wrapped, markup=False, highlight=False, soft_wrap=True, style=style)


def _where(passage: dict[str, Any]) -> str:
    return f"{passage['title']} > {passage['heading'].split(' > ')[-1]}"


def _owner(passage: dict[str, Any]) -> str | None:
    return f"owner {passage['owner']}" if passage.get("owner") else None
