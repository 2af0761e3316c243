"""The asked value's check on a model's answer: a question that asks for a value is answered by a statement that
states one.

"How long do I have to file a claim?" asks for a time, "how much can I spend?" for an amount, "how many days
...?" for a count. A true sentence of the right section that answers another question ("Claims are filed in
Ledgerly") passes every support rule; when no claim's quote, as read (a table row with its headers, a list item
after its lead-in), states a value of the kind the question asks for, the answer says something around the
question, not its answer. The kinds are `answer_types`' values that only a value answers: an amount, a date, a
time or span, a count, an age, a phone number. "When" (an event answers it: "if the vendor processes personal
data"), "where", "who" and "which" are not checked. Like the ranking check, it applies where a model chose what
to quote: the extractive model's statement was chosen with the answer type among its features.
"""

from collections.abc import Sequence
from typing import Final

from core.application.guard.checks import Anchor
from core.application.language.answer_types import AnswerType, expected_answer_type, has_answer_type

NO_ASKED_VALUE: Final = "no claim's quote states the value the question asks for"
"""The start of the refusal's detail in the audit record."""
VALUE_KINDS: Final[frozenset[AnswerType]] = frozenset({"amount", "date", "time", "count", "age", "phone"})


def unstated_asked_value(question: str, anchors: Sequence[Anchor]) -> AnswerType | None:
    """The kind of value the question asks for when no quote states one; None when one does, or when the question
    asks for no value."""
    kind = expected_answer_type(question)
    if kind not in VALUE_KINDS or not anchors:
        return None
    return None if any(has_answer_type(anchor.evidence, kind) for anchor in anchors) else kind
