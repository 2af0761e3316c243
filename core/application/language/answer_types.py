"""What kind of value a question asks for, and whether a statement holds one.

Each cue names a general class of English question ("how long" asks for a time, "who approves" for a person
or a role), never the vocabulary of one knowledge base. The answerability score weighs the match; it is not a
filter on its own.
"""

import re
from dataclasses import dataclass
from typing import Final, Literal

from core.text import numbers

AnswerType = Literal["amount", "date", "time", "occasion", "age", "count", "place", "person", "name", "phone", "any"]

_AUXILIARY: Final = (r"(?:is|are|was|were|am|do|does|did|can|could|should|must|will|would|may|might|shall|have|"
                     r"has)(?:n't)?")
_NOUN_END: Final = r"(?![\w-])"
"""A cue noun is a whole word: "rate" is no cue in "rate-limited"."""


@dataclass(frozen=True)
class _Cue:
    """How a question asks for a kind of value: by a question phrase ("how long", "who approves"), which holds
    wherever it stands, or by a noun ("deadline", "fee"), which a yes/no question only mentions ("does the fee
    cover parking?" is answered by what it covers, "can I see my strike price in the portal?" by where to look)."""

    answer_type: AnswerType
    asking: re.Pattern[str]
    naming: re.Pattern[str] | None = None


_TYPE_CUES: Final[tuple[_Cue, ...]] = (
    # a number to dial
    _Cue("phone", re.compile(r"\bwhat number\b|\bnumber (to|do i) call\b", re.I),
         re.compile(r"\b(phone|telephone|fax|hotline) number\b", re.I)),
    # a quantity of things
    _Cue("count", re.compile(r"\bhow many\b", re.I)),
    # an age: a number of years of a person
    _Cue("age", re.compile(r"\b(until|from|at|by|before|after|under|over|of) what age\b|\bhow old\b", re.I),
         re.compile(r"\b(minimum|maximum|youngest|oldest) age\b", re.I)),
    # a day of the calendar: "14 holidays a year" tells no date, "once a month" no day of the month
    _Cue("date", re.compile(r"\b(what|which) dates?\b|\b(what|which) day of (the )?(week|month|year)\b", re.I),
         re.compile(r"\b(due|cut-?off|start|end|closing|effective|expiry|expiration|renewal|payment|release|"
                    rf"launch|target) date{_NOUN_END}", re.I)),
    # a point or span of time, or a frequency
    _Cue("time", re.compile(r"\b(how long|how soon|how quickly|how fast|how far in advance|how early|how late|"
                            r"how often|how frequently|by when|until when|what time|what day|which day|"
                            r"how much (?:(?:advance|more|extra|work|working|study|prep|travel) )?"
                            r"(?:notice|warning|time)|how far ahead|how far back)\b", re.I),
         re.compile(rf"\b(deadline|lead time|time limit|last day|first day){_NOUN_END}", re.I)),
    # when something happens: a time, or the event or condition that brings it about ("when is a DPA needed?":
    # "if the vendor processes personal data").
    _Cue("occasion", re.compile(rf"\bwhen(?:['\u2019]s|\s+{_AUXILIARY}\b)", re.I)),
    # a location, physical or online
    _Cue("place", re.compile(r"\bwhere (is|are|do|does|did|can|should|must|was|were|to)\b|"
                             r"\b(what|which) (country|countries|city|cities|town|region|state|province|building|"
                             r"floor|room|location|address|site|office|url|link|channel|page|folder)\b", re.I)),
    # money, a rate or a bound
    _Cue("amount", re.compile(r"\b(how much|how big|how large|how high|how low)\b", re.I),
         re.compile(r"\b(rate|fee|fees|cost|costs|price|cap|limit|budget|allowance|maximum|minimum|max|min|premium|"
                    rf"percentage|percent|threshold|per (?:hour|day|week|mile|km|night|year|month|person)){_NOUN_END}",
                    re.I)),
    # a named organisation or product
    _Cue("name", re.compile(r"\b(which|what) (company|companies|vendor|supplier|provider|airline|bank|agency|"
                            r"app|tool|system|software|platform|website|service|brand|firm|insurer|carrier|"
                            r"partner|team|channel)\b", re.I)),
    # a person or a role
    _Cue("person", re.compile(r"\bwho (signs|approves|decides|owns|do i|should i|can i|has to|"
                              r"must|needs to|is responsible|is allowed|can approve)\b|\b(which|what) (role|person|"
                              r"manager|team) (approves|signs|decides|owns)\b", re.I)),
)
_BY_NAME: Final = {cue.answer_type: cue.asking for cue in _TYPE_CUES}
_LEADING_WORD: Final[tuple[tuple[AnswerType, re.Pattern[str]], ...]] = (
    ("person", re.compile(r"^\W*(who|whom)\b", re.I)),
    ("place", re.compile(r"^\W*where\b", re.I)),
    ("occasion", re.compile(r"^\W*when\b(?!\s+(?:i|we|you|they|he|she|it|someone|somebody|anyone|people|a|an|"
                            r"the|this|that|my|our|your|their)\b)", re.I)),
)
"""A question that opens with its question word asks what that word asks, whatever it goes on to mention:
"who sets the price?" wants a person, "where do I see how many options have vested?" a place, "when payday?" a
time. "When I ask for help, what ..." opens a clause: it asks no time."""
_ASKS_YES_NO: Final = rf"(?!(?:is|are)\s+there\b){_AUXILIARY}\s"
_YES_NO: Final = re.compile(rf"^\W*{_ASKS_YES_NO}", re.I)
"""A question that opens with an auxiliary verb asks yes or no ("does the fee cover ...?"). "Is there a fee
for ...?" asks for the fee itself: its answer states one, or that there is none."""
_LAST_CLAUSE_YES_NO: Final = re.compile(rf"(?:[,;:]|\s[-\u2013\u2014])\s+{_ASKS_YES_NO}[^,;:?]*\?\W*$", re.I)
"""Chat asks after the situation the question is in: "I fly on Sunday, does the travel limit apply?" asks yes or
no as well."""
_OPENS_WITH_QUESTION_WORD: Final = re.compile(r"^\W*(?:who|whom|whose|what|which|when|where|why|how)\b", re.I)
_ASKS_WHY: Final = re.compile(r"^\W*why\b|\bwhy\W*$", re.I)
"""A question that asks why ("why is the travel limit lower in London?", "... still got charged?? why") wants a
reason: the values it names are its situation, not what it asks for."""

_ROLE_WORDS: Final = re.compile(r"\b(director|manager|lead|officer|supervisor|team|desk|department|owner|"
                                r"administrator|admin|committee|board|coordinator|head|chief|president|"
                                r"partner|approver|reviewer|engineer|champion|exec|executive|accountant|lawyer|"
                                r"counsel|advis[eo]r|recruiter|mentor|buddy|founder|colleague|teammate|organi[sz]er|"
                                r"host|facilitator)s?\b|\b(anyone|anybody|everyone|everybody|no one|nobody)\b|"
                                r"\b(is|are|become|becomes) (responsible|accountable)\b", re.I)
"""Words that name who holds a role in any organisation, or who may act ("anyone can declare an incident")."""
_ROLE_ACRONYMS: Final = re.compile(r"\b(HR|IT|VP|SVP|EVP|CEO|CFO|CTO|COO|CISO|CIO|GC|DPO)\b")
"""Upper-case role acronyms, matched case-sensitively so "it" the pronoun never names a person."""
_PLACE_WORDS: Final = re.compile(r"\b(room|floor|building|office|desk|site|lobby|reception|entrance|portal|"
                                 r"page|website|folder|drive|channel|inbox|street|road|avenue|city|country|"
                                 r"region|campus|warehouse|address|section|repo|repository|directory|tab|menu|wiki|"
                                 r"dashboard|spreadsheet|sheet|here)\b", re.I)
"""Words that say where, physically or online ("here" is a link's text once its address is kept apart)."""
_HANDLE: Final = re.compile(r"(?<![\w/])[#@][a-z0-9][\w.-]+|https?://\S+|\b[\w.+-]+@[\w-]+\.\w+", re.I)
"""A Slack channel or handle, a link, or an e-mail address: where to go, or whom to ask."""
_CLOCK_TIME: Final = re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b", re.I)
"""A time of day: a number, but never an amount or a count."""
_PHONE_LIKE: Final = re.compile(r"\+?\d[\d ().-]{5,}\d")
_CAPITALISED_INSIDE: Final = re.compile(r"(?<=[a-z0-9,;:)\u2013\u2014-] )[A-Z][A-Za-z0-9]+")
"""A capitalised word that does not start a sentence: a name (a dash starts none: "Payroll - Paystream")."""
_TIME_WORDS: Final = re.compile(
    r"\b(seconds|minutes?|hours?|days?|weeks?|months?|quarters?|years?|hrs?|mins?|"
    r"business days?|working days?|midnight|noon|immediately|same day|next day|annually|yearly|monthly|weekly|"
    r"daily|quarterly|yrs?|decades?|centur(?:y|ies)|ago|as soon as|asap|eod|eow|cob|close of business|"
    r"(?:start|end|beginning|middle) of)\b|\b\d{1,4}0s\b|"
    r"\b(?:in|since|from|until|till|during|circa) (?:the )?\d{3,4}\b|\b\d+\s?h\b", re.I)
"""Units and words of time (dates, weekdays and months are `_DATE` and `_MONTH`), and years where a
preposition says they are years ("in 1066", "since 2019") rather than amounts ("2000 employees"). A preposition
alone is no time: "add your notes before the meeting" does not say how long it lasts (it says when, an
occasion)."""
_MONTH_NAMES: Final = "january|february|march|april|may|june|july|august|september|october|november|december"
_MONTH: Final = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|"
    r"Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\b|"
    rf"\b(?:in|on|by|until|till|from|since|during|early|late|mid) (?:{_MONTH_NAMES})\b|"
    rf"\b(?:{_MONTH_NAMES}) \d{{1,2}}\b|\b\d{{1,2}} (?:{_MONTH_NAMES})\b")
"""A month as documents write it, capitalised, or as chat does beside a number or after a preposition ("in
march", "march 25"): "may" the verb names no month."""
_DATE: Final = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|"
    r"\b\d{1,2}(?:st|nd|rd|th)\b(?!\s+(?:party|parties|floor|line|level|round|place|person|generation|edition|"
    r"grade|time|times|attempt|stage|step|tier|version)\b)|"
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun|week)days?\b|\bweekends?\b", re.I)
"""A calendar date, a day of the month ("the 25th", not "a 3rd party") or a day of the week. "24/7" and "1/2"
are no dates: a numeric date has its year."""
_NAMED_DAY: Final = re.compile(r"\b[A-Z][a-z]+(?:['\u2019]s)? (?:Day|Eve)\b|\b(?:Christmas|Easter|Thanksgiving|"
                               r"New Year|Good Friday|Hanukkah|Diwali|Eid|Ramadan|Passover|Lunar New Year)\b")
"""A day known by its name ("Boxing Day", "New Year's Eve", "Easter")."""
_RELATIVE_DATE: Final = re.compile(
    r"\b(?:first|last|final|second|third|fourth|next|previous|same|following)\s+(?:\w+\s+)?(?:day|week)\b|"
    r"\b(?:start|end|beginning|middle|close) of (?:the |each |every )?(?:week|month|quarter|year)\b|"
    r"\bday of (?:the |each |every )?(?:week|month|quarter|year)\b|"
    r"\b(?:within|after|before|no later than)\s+(?:\w+\s+){0,3}(?:days?|weeks?|months?)\s+(?:of|from|after|before)\b",
    re.I)
"""A day fixed by a rule: "the last working day of the month", "within 30 days of the purchase". A span alone
("refunds take 5 business days") says how long, not when."""
_OCCASION_WORDS: Final = re.compile(r"\b(when|whenever|once|if|unless|upon|while|during|before|after|until|"
                                    r"prior to|ahead of|"
                                    r"in advance|at the (?:same )?time|soon|early|late|later|now|today|tomorrow|"
                                    r"tonight|spring|summer|autumn|fall|winter|seasons?)\b", re.I)
"""Besides a time, what answers "when": the event or condition that brings something about."""
_NUMBER_WORDS: Final = re.compile(r"\b(two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|"
                                  r"twenty|thirty|forty|fifty|sixty|ninety|hundred|thousand|half|once|twice|"
                                  r"double|single)\b", re.I)
"""Quantities written out; "one" is left out, as it is mostly a pronoun ("no one", "one of our offices")."""


_MONEY_ASKED: Final = re.compile(r"\b(cost|costs|price|prices|fee|fees|charge|charged|charges|pay|paid|spend|"
                                 r"salary|salaries|wage|budget|allowance|reimburse\w*|refund\w*|"
                                 r"how much money|what do we charge|what does it cost)\b", re.I)
"""A question about money: its answer names a sum, a currency, or that it costs nothing."""
_SUM_NAMED: Final = re.compile(r"\b(cost|costs|price|prices|fee|fees|salary|salaries|wage|wages|budget|allowance|"
                               r"how much money)\b", re.I)
"""Words that name a sum itself, not an act of paying."""
_MONEY_STATED: Final = re.compile(r"[$€£¥]\s?\d|\d\s?[$€£¥]|\b(?:dollars?|euros?|pounds?|cents?|pence|free|"
                                  r"no charge|no cost|at cost|percent|per ?cent)\b|\d\s?%", re.I)
_CURRENCY_CODE: Final = re.compile(r"\b[A-Z]{3}\s?\d|\d\s?[A-Z]{3}\b")
"""An ISO currency code beside a number ("EUR 210", "15 USD"), matched in capitals only."""
_UNIT_ABBREVIATIONS: Final = {"hr": "hours", "hrs": "hours", "mins": "minutes", "sec": "seconds",
                               "secs": "seconds", "wk": "weeks", "wks": "weeks", "mo": "months", "mos": "months",
                               "yr": "years", "yrs": "years"}
"""Units of time as chat writes them ("how many hrs a week"): documents spell them out."""
_COUNT_STOP: Final = frozenset("do does did can could are is was were will would should must of per in on at for "
                               "to i we you they my our your the a an have has get".split())


def asks_money(question: str) -> bool:
    """A question that asks for a date, a time or a count is not about a sum for mentioning pay or spending
    ("when do I get paid?", "how much time can I spend on ...?", "how many times a year is pay reviewed?"); one
    that names a sum's own word is ("what's the meal allowance and when is it paid?"). One that asks why wants a
    reason ("why was I charged the late fee?")."""
    if _ASKS_WHY.search(question):
        return False
    if _SUM_NAMED.search(question):
        return True
    return bool(_MONEY_ASKED.search(question)) and expected_answer_type(question) not in {
        "date", "time", "occasion", "count"}


def states_money(text: str) -> bool:
    return bool(_MONEY_STATED.search(text) or _CURRENCY_CODE.search(text))


def counted_noun(question: str) -> str | None:
    """For "how many sick days do I get", "days": the thing a count question counts, the first plural among
    the words before the verb, else the first of them."""
    lowered = question.lower()
    start = lowered.find("how many ")
    if start < 0:
        return None
    phrase: list[str] = []
    for word in re.findall(r"[a-z][a-z'-]*", lowered[start + len("how many "):]):
        if word in _COUNT_STOP or len(phrase) == 3:
            break
        phrase.append(word)
    plurals = [word for word in phrase if word.endswith("s") and not word.endswith("ss")]
    chosen = plurals or phrase
    return _UNIT_ABBREVIATIONS.get(chosen[0], chosen[0]) if chosen else None


def expected_answer_type(question: str) -> AnswerType:
    for answer_type, leading in _LEADING_WORD:
        if leading.search(question):
            return answer_type
    only_mentions = bool(_YES_NO.search(question) or _ASKS_WHY.search(question)) or (
        not _OPENS_WITH_QUESTION_WORD.search(question) and bool(_LAST_CLAUSE_YES_NO.search(question)))
    for cue in _TYPE_CUES:
        if cue.asking.search(question) or (not only_mentions and cue.naming is not None
                                           and cue.naming.search(question)):
            return cue.answer_type
    return "any"


def asked_category(question: str) -> str | None:
    """For "which airline ...", "airline": a statement naming some other kind of thing does not answer."""
    match = _BY_NAME["name"].search(question)
    return match.group(2).lower() if match else None


def has_quantity(text: str) -> bool:
    return bool(numbers(_CLOCK_TIME.sub(" ", text))) or bool(_NUMBER_WORDS.search(text))


def has_answer_type(text: str, answer_type: AnswerType) -> bool:
    """Does the statement hold the kind of value asked for: a quantity, a date, a time, a person, a place, a
    name?"""
    named = bool(_CAPITALISED_INSIDE.search(text))
    checks = {
        "amount": lambda: has_quantity(text),
        "count": lambda: has_quantity(text),
        "age": lambda: has_quantity(text),
        "date": lambda: _states_date(text),
        "time": lambda: _states_time(text),
        "occasion": lambda: _states_time(text) or bool(_OCCASION_WORDS.search(text)),
        "phone": lambda: bool(_PHONE_LIKE.search(text)),
        "person": lambda: bool(named or _ROLE_WORDS.search(text) or _ROLE_ACRONYMS.search(text)
                               or _HANDLE.search(text)),
        "name": lambda: named or bool(_HANDLE.search(text)),
        "place": lambda: bool(named or _PLACE_WORDS.search(text) or _HANDLE.search(text)),
    }
    check = checks.get(answer_type)
    return True if check is None else check()


def _states_date(text: str) -> bool:
    return any(pattern.search(text) for pattern in (_DATE, _MONTH, _NAMED_DAY, _RELATIVE_DATE))


def _states_time(text: str) -> bool:
    return any(pattern.search(text) for pattern in (_TIME_WORDS, _CLOCK_TIME, _DATE, _MONTH, _NAMED_DAY))
