"""Documents are read as structure, not as lines: what real handbooks do to Markdown, and the statements expected.

Each case is a page written the way real pages are (wrapped at 80 columns, nested checklists, links in tables
and headings, bold lead-ins, raw HTML, no headings at all) and the statements Sourced must read from it: a
sentence of a paragraph joined across its lines, a list item after its parents' lead-ins, a table row under its
header. The seam is the one ingestion uses: a file's body through `chunk_document`, then the statements the
extractive model, the answerability decision and the guard all take from a chunk.
"""

from pathlib import Path

from core.application.guard.checks import Supported, claim_support
from core.application.guard.envelope import EnvelopeClaim
from core.application.language.statements import Statement, announced_items, list_items, split_statements
from core.documents.markdown import read_markdown
from core.domain import Passage, RetrievedChunk
from core.retrieval import SourceDocument, chunk_document
from core.retrieval.chunking import ChunkDraft


def document(body: str, *, title: str = "Office Handbook", url: str | None = None) -> SourceDocument:
    return SourceDocument(doc_id="handbook", path=Path("handbook.md"), title=title, owner="#office",
                          audience=frozenset({"everyone"}), updated=None, url=url, body=body, file_sha256="0" * 64)


def retrieved(draft: ChunkDraft) -> RetrievedChunk:
    passage = Passage(chunk_id=draft.chunk_id, doc_id="handbook", title="Office Handbook", heading=draft.heading,
                      text=draft.text, links=draft.links)
    return RetrievedChunk(passage=passage, score=1.0, content_hash=draft.content_hash)


def statements(body: str, **kwargs: str) -> list[Statement]:
    return [s for draft in chunk_document(document(body, **kwargs)) for s in split_statements(retrieved(draft))]


def texts(body: str) -> list[str]:
    return [statement.text for statement in statements(body)]


def test_a_paragraph_wrapped_at_80_columns_is_read_as_whole_sentences() -> None:
    body = """# Office Handbook

## Devices

Only approved phones and tablets issued by the IT desk can be connected to the
office network. Personal devices must use the guest network, which is
reset every Monday at 06:00.
"""
    assert texts(body) == [
        "Only approved phones and tablets issued by the IT desk can be connected to the office network.",
        "Personal devices must use the guest network, which is reset every Monday at 06:00.",
    ]


def test_a_line_its_author_ended_without_a_full_stop_ends_its_sentence() -> None:
    body = """## Sales leads

Send a lead through the contact form or email sales@example.com
Account managers forward each lead to the regional team within one working day of receiving it.
Questions about a lead go to
Dana Reyes, who runs the sales desk and answers within the day.
"""
    assert texts(body) == [
        "Send a lead through the contact form or email sales@example.com",
        "Account managers forward each lead to the regional team within one working day of receiving it.",
        "Questions about a lead go to Dana Reyes, who runs the sales desk and answers within the day.",
    ]


def test_a_rule_and_its_exception_wrapped_apart_stay_one_statement() -> None:
    body = """## Notice

The notice period of two months must be worked in full, unless your manager
agrees in writing to an earlier last day.
"""
    assert texts(body) == ["The notice period of two months must be worked in full, unless your manager agrees in "
                           "writing to an earlier last day."]


def test_nested_lists_three_deep_are_read_with_every_lead_in_above_them() -> None:
    body = """## Events

Request approval three to five weeks in advance for:

- Travel outside the country
  - Conferences
    - costing more than $2,500 in total
    - lasting more than three days
- Team offsites
"""
    assert texts(body) == [
        "Request approval three to five weeks in advance for:",
        "Request approval three to five weeks in advance for: Travel outside the country",
        "Request approval three to five weeks in advance for: Travel outside the country: Conferences",
        "Request approval three to five weeks in advance for: Travel outside the country: Conferences: costing "
        "more than $2,500 in total",
        "Request approval three to five weeks in advance for: Travel outside the country: Conferences: lasting "
        "more than three days",
        "Request approval three to five weeks in advance for: Team offsites",
    ]
    deepest = statements(body)[3]
    assert deepest.kind == "item" and deepest.own == "costing more than $2,500 in total"
    assert deepest.quote == "costing more than $2,500 in total"


def test_a_wrapped_list_item_is_one_statement_and_a_checklist_box_is_not_words() -> None:
    body = """## First week

- [ ] Collect your badge from reception before 10:00 on your first day, or ask
  your buddy to collect it for you.
- [x] Sign the equipment form.
"""
    assert texts(body) == [
        "Collect your badge from reception before 10:00 on your first day, or ask your buddy to collect it for you.",
        "Sign the equipment form.",
    ]


def test_a_table_row_is_read_under_its_header_and_its_links_are_words_only() -> None:
    body = """## Hotels

| City | Nightly cap | Booking |
|---|---|---|
| [Dublin](https://wiki.example.com/cities/dublin%20ie) | EUR 210 | via [Travelport](https://travel.example.com) |
| Lisbon | EUR 150 | any |
"""
    assert texts(body) == ["City: Dublin; Nightly cap: EUR 210; Booking: via Travelport",
                           "City: Lisbon; Nightly cap: EUR 150; Booking: any"]
    (chunk,) = chunk_document(document(body))
    assert "https://" not in chunk.text and "%20" not in chunk.text
    assert [(chunk.text[link.start:link.end], link.target) for link in chunk.links] == [
        ("Dublin", "https://wiki.example.com/cities/dublin%20ie"), ("Travelport", "https://travel.example.com")]


def test_a_link_in_a_heading_names_the_section_by_its_words() -> None:
    body = "# Office Handbook\n\n## The [expense tool](https://expenses.example.com) and receipts\n\nKeep receipts.\n"
    (chunk,) = chunk_document(document(body))
    assert chunk.heading == "Office Handbook > The expense tool and receipts"
    assert chunk.chunk_id == "handbook#the-expense-tool-and-receipts"


def test_a_link_target_is_never_part_of_a_statement_nor_its_numbers() -> None:
    body = """## Visas

Apply through the [government portal](https://www.example.gov/apply?form=20%20B&year=2024) at least
six weeks before you travel.
"""
    (statement,) = statements(body)
    assert statement.text == "Apply through the government portal at least six weeks before you travel."
    claim = EnvelopeClaim(text="Apply through the government portal at least six weeks before you travel.",
                          chunk_ids=[statement.chunk.chunk_id], quote=statement.quote)
    assert isinstance(claim_support(claim, [statement.chunk]), Supported)


def test_a_relative_link_resolves_against_the_documents_address() -> None:
    body = "## Pay\n\nSee the [salary bands](/handbook/people/bands) and the [FAQ](#faq).\n"
    (chunk,) = chunk_document(document(body, url="https://wiki.example.com/handbook/people/pay"))
    assert [link.target for link in chunk.links] == ["https://wiki.example.com/handbook/people/bands",
                                                     "https://wiki.example.com/handbook/people/pay#faq"]
    (without_address,) = chunk_document(document(body))
    assert without_address.links == ()  # nowhere to open them: left as words


def test_bold_lead_ins_are_sentences_of_their_own_for_every_reader() -> None:
    body = "## Travel\n\n**Book early.** Flights are booked through the portal. **Hotels:** up to $180 a night.\n"
    assert texts(body) == ["Book early.", "Flights are booked through the portal.", "Hotels: up to $180 a night."]


def test_lines_opened_by_bold_labels_are_statements_of_their_own() -> None:
    body = "# Netherlands\n\n> **Owner:** People Ops\n> **Probation:** 2 months\n> **Payroll:** monthly\n"
    assert texts(body) == ["Owner: People Ops", "Probation: 2 months", "Payroll: monthly"]


def test_raw_html_is_reduced_to_its_words() -> None:
    body = """## Contacts

Ask <TeamMember name="Ana Ruiz" photo /> about visas.<br>Her office is on the
<a href="https://wiki.example.com/floor-2">second floor</a>.

<div class="callout">
  <p>Badges are <b>never</b> lent to visitors.</p>
</div>

<iframe src="https://video.example.com/embed/1"></iframe>
"""
    document_model = read_markdown(body)
    assert texts(body) == ["Ask Ana Ruiz about visas.", "Her office is on the second floor.",
                           "Badges are never lent to visitors."]
    assert document_model.warnings == ("line 10: an HTML block without text was left out "
                                       '(<iframe src="https://video.example.com/embed/1"></iframe>)',)
    (chunk,) = chunk_document(document(body))
    assert "<" not in chunk.text and [link.target for link in chunk.links] == ["https://wiki.example.com/floor-2"]


def test_an_html_list_is_a_list_read_with_its_lead_in_and_its_nesting() -> None:
    body = """## Security review

<details>
  <summary>What the review covers</summary>
  <p>Every review checks:</p>
  <ul>
    <li>Who can <a href="https://wiki.example.com/access">reach the data</a></li>
    <li>Where the data is kept:
      <ol><li>in the EU region</li><li>encrypted at rest</li></ol>
    </li>
    <li><strong>Signed off:</strong> by the security lead
  </ul>
  <p>Reviews take a week.</p>
</details>
"""
    assert texts(body) == [
        "What the review covers", "Every review checks:",
        "Every review checks: Who can reach the data",
        "Every review checks: Where the data is kept:",
        "Every review checks: Where the data is kept: in the EU region",
        "Every review checks: Where the data is kept: encrypted at rest",
        "Every review checks: Signed off: by the security lead",
        "Reviews take a week.",
    ]
    (chunk,) = chunk_document(document(body))
    assert [link.target for link in chunk.links] == ["https://wiki.example.com/access"]


def test_a_page_without_headings_is_divided_at_its_bold_lead_ins() -> None:
    body = """**Parking.** Staff park in the north lot. Visitors use the south lot.

**Deliveries**

Parcels are left at reception and logged by the front desk.
"""
    chunks = chunk_document(document(body, title="Building Guide"))
    assert [chunk.heading for chunk in chunks] == ["Building Guide > Parking", "Building Guide > Deliveries"]
    assert chunks[1].text == "Parcels are left at reception and logged by the front desk."


def test_headings_inside_a_blockquote_are_sections() -> None:
    body = """# Office Handbook

> ## Quiet hours
> The second floor is silent between 13:00 and 15:00.

## Kitchen

The kitchen closes at 18:00.
"""
    chunks = chunk_document(document(body))
    assert [chunk.heading for chunk in chunks] == ["Office Handbook > Quiet hours", "Office Handbook > Kitchen"]
    assert texts(body) == ["The second floor is silent between 13:00 and 15:00.", "The kitchen closes at 18:00."]


def test_abbreviations_initials_and_numbers_do_not_end_a_sentence() -> None:
    body = ("## Claims\n\nSubmit claims, e.g. taxis and meals, to Dr. J. Smith in Room No. 4 by 5 p.m. Friday. "
            "The rate is 0.45 per mile. Late claims are refused. Dr. Lee hears appeals.\n")
    assert texts(body) == ["Submit claims, e.g. taxis and meals, to Dr. J. Smith in Room No. 4 by 5 p.m. Friday.",
                           "The rate is 0.45 per mile.", "Late claims are refused.", "Dr. Lee hears appeals."]


def test_a_window_that_starts_inside_a_list_repeats_its_lead_ins() -> None:
    items = "\n".join(f"  - Laptop model number {n} with its charger and its padded sleeve" for n in range(40))
    body = f"## Equipment\n\nReturn on your last day:\n\n- Hardware\n{items}\n"
    chunks = chunk_document(document(body))
    assert len(chunks) > 2
    for chunk in chunks[1:]:
        assert chunk.text.startswith("Return on your last day:\n- Hardware\n  - Laptop model")
    later = [s for s in split_statements(retrieved(chunks[-1])) if s.kind == "item" and s.own.startswith("Laptop")]
    assert later and all(s.context == "Return on your last day: Hardware" for s in later)


def test_a_list_that_fits_in_one_window_is_not_cut_but_opens_the_next_window_with_its_paragraph() -> None:
    before = " ".join(f"Desk {n} sits by the window on the second floor." for n in range(20))
    items = "\n".join(f"- Item {n}: a monitor arm, a footrest and a lamp for desk {n}" for n in range(6))
    body = f"## Desks\n\n{before}\n\nOur aim is a calm floor. Before booking a desk, check:\n\n{items}\n"
    chunks = chunk_document(document(body))
    holding = [chunk for chunk in chunks if "- Item" in chunk.text]
    assert len(holding) == 1  # one window has the whole list ...
    assert holding[0].text.startswith("Our aim is a calm floor. Before booking a desk, check:\n\n- Item 0")
    assert "- Item 5" in holding[0].text  # ... to its last item
    item = next(s for s in split_statements(retrieved(holding[0])) if s.own.startswith("Item 5"))
    assert len(list_items(item, split_statements(retrieved(holding[0])))) == 6


def test_a_table_that_fits_in_one_window_opens_the_next_window_with_its_header() -> None:
    before = " ".join(f"Desk {n} sits by the window on the second floor." for n in range(20))
    rows = "\n".join(f"| Desk {n} | a monitor arm, a footrest and a lamp |" for n in range(8))
    body = f"## Desks\n\n{before}\n\n| Desk | Kit |\n|---|---|\n{rows}\n"
    holding = [chunk for chunk in chunk_document(document(body)) if "| Desk 0 |" in chunk.text]
    assert len(holding) == 1 and holding[0].text.startswith("| Desk | Kit |")
    assert "| Desk 7 |" in holding[0].text


def test_a_lead_in_that_only_points_back_is_read_after_the_sentence_it_points_to() -> None:
    body = ("## Giving\n\nWe match donations to registered charities. For example:\n\n- a food bank\n\n"
            "Some teams volunteer together.\n\nSuch as:\n\n- a park clean-up\n")
    items = {s.own: s.context for s in statements(body) if s.kind == "item"}
    assert items == {"a food bank": "We match donations to registered charities. For example:",
                     "a park clean-up": "Such as:"}  # a paragraph of its own points nowhere we can tell


def test_a_window_that_starts_at_a_list_repeats_the_sentence_its_lead_in_points_back_to() -> None:
    items = "\n".join(f"- Volunteering day number {n} with a partner charity of the team's choice" for n in range(40))
    body = f"## Giving\n\nEvery team member gets two volunteering days a year. For instance:\n\n{items}\n"
    chunks = chunk_document(document(body))
    assert len(chunks) > 2
    lead = "Every team member gets two volunteering days a year. For instance:"
    for chunk in chunks[1:]:
        assert chunk.text.startswith(lead.replace(" For", "\nFor") + "\n- Volunteering day")
        assert all(s.context == lead for s in split_statements(retrieved(chunk)) if s.kind == "item")


def test_a_list_is_the_run_of_items_after_its_lead_in_and_two_lists_with_one_lead_in_are_two() -> None:
    body = ("## Kits\n\nLaptop kit. You need:\n\n- a charger\n- a sleeve\n\nPhone kit. You need:\n\n"
            "- a case\n  - hard or soft\n  - with a strap\n- a sim card\n")
    read = statements(body)
    by_words = {statement.own: statement for statement in read}

    assert [s.own for s in list_items(by_words["a case"], read)] == ["a case", "a sim card"]
    assert [s.own for s in list_items(by_words["with a strap"], read)] == ["hard or soft", "with a strap"]
    leading = [s for s in read if s.own == "You need:"]
    assert [[s.own for s in announced_items(lead_in, read)] for lead_in in leading] == [
        ["a charger", "a sleeve"], ["a case", "a sim card"]]
    assert list_items(by_words["Phone kit."], read) == []  # a sentence is no item


def test_items_with_no_lead_in_are_read_after_a_heading_that_denies_or_sets_a_condition() -> None:
    body = ("# Perks\n\n## What the perk budget does not cover\n\n- Concert tickets\n- Taxi rides\n\n"
            "## When you work late\n\n- Order dinner on the team card\n\n"
            "## What the perk budget covers\n\n- Team lunches\n\n## When to ask first\n\n- Anything over $200\n\n"
            "## No-show fees\n\n- $20 a class\n\n"
            "## Not for contractors\n\nEmployees get, among others:\n\n- Cinema vouchers\n")
    read = {statement.own: statement for statement in statements(body)}

    assert read["Concert tickets"].text == "What the perk budget does not cover: Concert tickets"
    assert read["Taxi rides"].read_after == "What the perk budget does not cover:"
    assert read["Order dinner on the team card"].text == "When you work late: Order dinner on the team card"
    assert read["Team lunches"].text == "Team lunches"  # a heading that neither denies nor sets a condition
    assert read["Anything over $200"].text == "Anything over $200"  # "When to ..." names a topic
    assert read["$20 a class"].text == "$20 a class"  # a hyphenated "no" denies nothing
    assert read["Cinema vouchers"].text == "Employees get, among others: Cinema vouchers"  # its own lead-in
    assert read["Concert tickets"].context == "" and list_items(read["Concert tickets"], list(read.values())) == []


def test_the_same_file_read_twice_gives_the_same_chunk_ids_and_texts() -> None:
    body = "# Office Handbook\n\n## Devices\n\nOnly approved phones can be connected.\n\n- one\n  - two\n"
    assert chunk_document(document(body)) == chunk_document(document(body))


def test_a_table_nested_in_a_list_or_a_quote_keeps_its_header_and_links() -> None:
    body = """## Hotels

- Europe:
  | City | Nightly cap |
  |---|---|
  | [Dublin](https://wiki.example.com/dublin) | EUR 210 |

> | Region | Per diem |
> |---|---|
> | [Asia](https://wiki.example.com/asia) | USD 80 |
"""
    assert texts(body) == ["Europe:", "City: Dublin; Nightly cap: EUR 210", "Region: Asia; Per diem: USD 80"]
    (chunk,) = chunk_document(document(body))
    assert [(chunk.text[link.start:link.end], link.target) for link in chunk.links] == [
        ("Dublin", "https://wiki.example.com/dublin"), ("Asia", "https://wiki.example.com/asia")]


def test_a_question_leads_into_its_answer_but_a_list_of_questions_to_ask_states_each() -> None:
    body = """## Buying software

Before you buy, ask the vendor:

- Where is our data stored?
- Who can see it?
  - Support staff only, under contract.
- Can we leave at any time? Check the notice period first.

Renewing late? Tell finance a month ahead.
"""
    leads_in = {statement.own: statement.leads_in for statement in statements(body)}
    assert leads_in == {
        "Before you buy, ask the vendor:": True,
        "Where is our data stored?": False,  # a question to ask, not one the page goes on to answer
        "Who can see it?": True,  # its answer is nested under it
        "Support staff only, under contract.": False,
        "Can we leave at any time?": True,  # ... or follows in the item
        "Check the notice period first.": False,
        "Renewing late?": True,
        "Tell finance a month ahead.": False,
    }


def test_a_question_with_more_questions_under_it_is_a_question_to_ask() -> None:
    body = "## Renewals\n\n- Is the customer still active?\n  - Did they log in this month?\n"
    assert [statement.leads_in for statement in statements(body)] == [False, False]


def test_a_paragraphs_questions_lead_in_and_an_items_question_whose_answer_is_nested_under_it_too() -> None:
    body = ("## Buying software\n\nWhat should I ask a new vendor?\n\n- Where is our data stored?\n"
            "- Who can see it?\n\nPaged at night? Who do you call? Call the duty manager.\n\n"
            "## Travel\n\n- Taxis are rare. Can I expense one?\n  - Only after 22:00.\n")
    assert [(s.own, s.leads_in) for s in statements(body)] == [
        ("What should I ask a new vendor?", True),  # it announces its list, as a colon does
        ("Where is our data stored?", False),
        ("Who can see it?", False),
        ("Paged at night?", True),
        ("Who do you call?", True),
        ("Call the duty manager.", False),
        ("Taxis are rare.", False),
        ("Can I expense one?", True),  # the answer under it is read after the whole item
        ("Only after 22:00.", False),
    ]


def test_a_sentence_replying_to_a_question_of_its_paragraph_or_item_is_read_after_it() -> None:
    body = ("## Leave\n\n- Can I carry over leave days? No, they lapse in March.\n"
            "- Can I sell leave back? Yes. The rate is your daily pay.\n\n"
            "Paged at night? Who do you call? Call the duty manager. Is it paid? It is paid as overtime.\n\n"
            "Leave is booked in the portal. Why? Managers see the calendar there.\n\n"
            "Why do we track time? Who reads the reports? Timesheets are due every Friday.\n")
    assert [s.text for s in statements(body)] == [
        "Can I carry over leave days?",
        "Can I carry over leave days? No, they lapse in March.",
        "Can I sell leave back?",
        "Can I sell leave back? Yes.",
        "The rate is your daily pay.",  # after the reply, a sentence says something of its own
        "Paged at night?",
        "Who do you call?",
        "Paged at night? Who do you call? Call the duty manager.",  # a chain of questions
        "Is it paid?",
        "Is it paid? It is paid as overtime.",  # a new question, answered in turn
        "Leave is booked in the portal.",  # nothing asked before it
        "Why?",
        "Why? Managers see the calendar there.",
        "Why do we track time?",
        "Who reads the reports?",
        "Who reads the reports? Timesheets are due every Friday.",  # of full questions, the last is replied to
    ]


def test_items_nested_under_a_question_reply_to_it_until_one_says_yes_or_no() -> None:
    body = ("## Equipment\n\n- Can contractors get a laptop?\n  - No.\n  - Employees get a MacBook Pro.\n"
            "- What do new hires get?\n  - A MacBook Pro. It ships before day one.\n  - A monitor.\n"
            "- Can interns get a phone? Sorry, no.\n  - Phones go to on-call staff.\n"
            "- Where do I park?\n  - No. 5 car park.\n  - The lot behind reception.\n"
            "- Q: Can guests use the gym?\n  - A: No.\n  - Staff get a free pass.\n")
    assert [s.text for s in statements(body)] == [
        "Can contractors get a laptop?",
        "Can contractors get a laptop? No.",
        "Employees get a MacBook Pro.",  # after the "No.", an item says something of its own
        "What do new hires get?",
        "What do new hires get? A MacBook Pro.",  # a list of answers: each item replies
        "It ships before day one.",  # as in a paragraph, only the reply is read after the question
        "What do new hires get? A monitor.",
        "Can interns get a phone?",
        "Can interns get a phone? Sorry, no.",
        "Phones go to on-call staff.",  # the item replied itself
        "Where do I park?",
        "Where do I park? No. 5 car park.",  # a number, not a no
        "Where do I park? The lot behind reception.",
        "Q: Can guests use the gym?",
        "Q: Can guests use the gym? A: No.",
        "Staff get a free pass.",  # after an FAQ's "A: No."
    ]


def test_a_sentence_left_open_before_a_list_is_its_lead_in_and_a_finished_one_is_not() -> None:
    body = ("## Cards\n\nUse the travel card if\n- the fare is over $80, and\n- the booking is abroad.\n\n"
            "Every new starter gets\n\n- a laptop\n- a headset\n\n"
            "Headsets are replaced every two years.\n\n- Spare cables sit in the IT cupboard.\n\n"
            "Things that are not an outage\n\n- A slow dashboard\n")
    assert [(s.text, s.leads_in) for s in statements(body)] == [
        ("Use the travel card if", True),
        ("Use the travel card if: the fare is over $80, and", False),
        ("Use the travel card if: the booking is abroad.", False),
        ("Every new starter gets", True),  # a blank line between changes nothing
        ("Every new starter gets: a laptop", False),
        ("Every new starter gets: a headset", False),
        ("Headsets are replaced every two years.", False),
        ("Spare cables sit in the IT cupboard.", False),  # after a finished sentence: a list of its own
        ("Things that are not an outage", False),  # a label, not a sentence left open: its list reads alone
        ("A slow dashboard", False),
    ]


def test_a_finished_sentence_that_names_the_list_after_it_is_its_lead_in() -> None:
    body = ("## Habits\n\nWe keep meetings short. These are the things we skip as a result.\n\n"
            "- status meetings\n- slide decks\n\nOur shared tools are listed below.\n\n- the wiki\n\n"
            "Here is why this matters.\n\nDesks are shared.\n\n- Lockers sit by the door.\n")
    assert [(s.text, s.leads_in) for s in statements(body)] == [
        ("We keep meetings short.", False),
        ("These are the things we skip as a result.", True),
        ("These are the things we skip as a result. status meetings", False),
        ("These are the things we skip as a result. slide decks", False),
        ("Our shared tools are listed below.", True),
        ("Our shared tools are listed below. the wiki", False),
        ("Here is why this matters.", False),  # no list after it
        ("Desks are shared.", False),
        ("Lockers sit by the door.", False),  # after a sentence that names no list: a list of its own
    ]


def test_a_list_after_an_open_sentence_is_read_after_it_in_every_chunk_it_spans() -> None:
    conditions = "".join(f"- the trip number {n} is booked through the travel desk at least a week ahead\n"
                         for n in range(1, 41))
    items = [s for s in statements(f"## Cards\n\nUse the travel card only if\n\n{conditions}") if s.kind == "item"]
    assert len({s.chunk.chunk_id for s in items}) > 1  # the list spans chunks
    assert all(s.text.startswith("Use the travel card only if: the trip number") for s in items)


def test_an_item_that_is_no_finished_sentence_labels_the_items_nested_under_it() -> None:
    body = ("## Leaving\n\n- Laptops\n  - Returned by courier.\n"
            "- Missing paperwork leads to\n  - a late final payslip\n"
            "- Badges are handed in at reception.\n  - Lost badges cost $20.\n")
    assert [(s.text, s.leads_in) for s in statements(body)] == [
        ("Laptops", True),
        ("Laptops: Returned by courier.", False),
        ("Missing paperwork leads to", True),
        ("Missing paperwork leads to: a late final payslip", False),
        ("Badges are handed in at reception.", False),  # a sentence states itself, whatever is nested under it
        ("Badges are handed in at reception. Lost badges cost $20.", False),
    ]


def test_a_short_reply_to_a_question_is_a_statement_and_nothing_else_that_short_is() -> None:
    body = ("## Pets\n\n- Can contractors bring a dog?\n  - No.\n- Is there a pet allowance? Yes.\n"
            "- Are cats welcome?\n  - Ok\n\nA.\n\nGuide dogs are welcome.\n")
    assert [(s.text, s.leads_in) for s in statements(body)] == [
        ("Can contractors bring a dog?", True),  # its answer is nested under it
        ("Can contractors bring a dog? No.", False),
        ("Is there a pet allowance?", True),
        ("Is there a pet allowance? Yes.", False),  # read after the question it replies to
        ("Are cats welcome?", True),
        ("Are cats welcome? Ok", False),
        ("Guide dogs are welcome.", False),  # "A." answers nothing: too short to state anything
    ]
