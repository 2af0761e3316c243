"""A quote read in its context: what its sentence leaves implicit may come from the heading path and title, a list
item's lead-ins, the sentences just before it, the asker's question and the organisation's name; what makes the
claim true or false (numbers, negation, bounds, modality, whose value it is) still stands in the quote itself.
Each rule with a faithful claim it now passes and the fabrication beside it that it still refuses."""

from core.application.guard.checks import Supported, Unsupported, claim_support
from core.application.guard.envelope import EnvelopeClaim
from core.application.language.quote_context import Asking, organisation_names
from core.domain import RetrievedChunk
from tests.unit.fakes import chunk

DEVICES = chunk("devices#laptops", "Choose a passcode for your laptop on the first day. It must be longer than 14 "
                "characters. The username is given to you by the service desk.", doc_id="devices",
                title="Device Security", heading="Device Security > Laptops").chunk
LEAVE = chunk("leave#nl", "- Partner leave: 1 week after birth, fully paid.\n- Extra partner leave: 5 weeks at 70%.",
              doc_id="leave", title="Leave", heading="Leave > Netherlands > Partner leave").chunk
REIMBURSE = chunk("expenses#claims", "We reimburse travel within 30 days. Ledgerly processes every claim.",
                  doc_id="expenses", title="Expenses", heading="Expenses > Claims").chunk
CRITERIA = chunk("refunds#criteria", "A customer must meet these criteria to get a refund:\n\n"
                 "- The request is made within 30 days of billing.\n- The invoice is unpaid.",
                 doc_id="refunds", title="Refunds", heading="Refunds > Criteria").chunk
DAYS = chunk("leave#days", "Managers get 30 days of leave. Employees get 25 days of leave.", doc_id="leave",
             title="Leave", heading="Leave > Annual leave").chunk
RECEIPTS = chunk("expenses#receipts", "Submit receipts within 30 days of the trip.", doc_id="expenses",
                 title="Expenses", heading="Expenses > Receipts").chunk
NOT_COVERED = chunk("perks#not", "- Taxi rides home after a late shift\n- Concert tickets for the team", doc_id="perks",
                    title="Perks", heading="Perks > What the perk budget does not cover").chunk
COVERED = chunk("perks#yes", "- Taxi rides home after a late shift\n- Concert tickets for the team", doc_id="perks",
                title="Perks", heading="Perks > What the perk budget covers").chunk
RULING = chunk("nl#ruling", "Apply within 4 months of your start date.", doc_id="nl", title="Netherlands",
               heading="Netherlands > 30% ruling > Application").chunk


def check(text: str, cited: RetrievedChunk, quote: str, *, question: str = "",
          organisation: tuple[str, ...] = ()) -> Supported | Unsupported:
    asking = Asking(question=question, given=[cited], organisation=organisation)
    return claim_support(EnvelopeClaim(text=text, chunk_ids=[cited.chunk_id], quote=quote), [cited], asking=asking)


def passes(text: str, cited: RetrievedChunk, quote: str, **asked: str | tuple[str, ...]) -> None:
    outcome = check(text, cited, quote, **asked)  # type: ignore[arg-type]
    assert isinstance(outcome, Supported), outcome


def refused(text: str, cited: RetrievedChunk, quote: str, **asked: str | tuple[str, ...]) -> str:
    outcome = check(text, cited, quote, **asked)  # type: ignore[arg-type]
    assert isinstance(outcome, Unsupported), outcome
    return outcome.reason


def test_what_it_stands_for_comes_from_the_sentence_before_its_facts_from_the_quote() -> None:
    quote = "It must be longer than 14 characters."
    passes("The passcode must be longer than 14 characters.", DEVICES, quote)
    assert "numbers" in refused("The passcode must be longer than 16 characters.", DEVICES, quote)
    assert "elsewhere" in refused("The username must be longer than 14 characters.", DEVICES, quote)
    assert "modality" in refused("The passcode may be longer than 14 characters.", DEVICES, quote)


def test_a_country_named_by_its_nationality_under_its_heading_is_the_sections_own() -> None:
    quote = "Partner leave: 1 week after birth, fully paid."
    passes("Partner leave for Dutch staff is 1 week after birth, fully paid.", LEAVE, quote)
    assert "names" in refused("Partner leave for Belgian staff is 1 week after birth, fully paid.", LEAVE, quote)


def test_the_organisation_may_stand_for_we_a_vendor_the_passage_names_may_not() -> None:
    quote = "We reimburse travel within 30 days."
    passes("Northwind Labs reimburses travel within 30 days.", REIMBURSE, quote, organisation=("Northwind Labs",))
    assert "names" in refused("Northwind Labs reimburses travel within 30 days.", REIMBURSE, quote)
    assert refused("Ledgerly reimburses travel within 30 days.", REIMBURSE, quote,
                   organisation=("Northwind Labs",))


def test_the_askers_own_number_may_be_restated_no_other() -> None:
    quote = "Employees get 25 days of leave."
    asked = "I have 5 years of service, how much leave do I get?"
    passes("With 5 years of service, employees get 25 days of leave.", DAYS, quote, question=asked)
    assert "numbers" in refused("With 5 years of service, employees get 25 days of leave.", DAYS, quote)


def test_a_headings_number_named_with_its_word_is_the_sections_name() -> None:
    quote = "Apply within 4 months of your start date."
    passes("Apply for the 30% ruling within 4 months of your start date.", RULING, quote)
    assert "numbers" in refused("Apply within 30 months of your start date.", RULING, quote)


def test_a_subject_from_the_sentence_before_does_not_take_the_quotes_own_value() -> None:
    quote = "Employees get 25 days of leave."
    passes("Employees get 25 days of leave per year.", DAYS, quote)
    assert refused("Managers get 25 days of leave.", DAYS, quote)


def test_a_list_items_lead_in_lends_it_its_modality() -> None:
    quote = "The request is made within 30 days of billing."
    passes("To get a refund, the request must be made within 30 days of billing.", CRITERIA, quote)
    assert "modality" in refused("To get a refund, the request may be made within 30 days of billing.", CRITERIA,
                                 quote)


def test_an_instruction_is_no_permission() -> None:
    quote = "Submit receipts within 30 days of the trip."
    passes("Receipts must be submitted within 30 days of the trip.", RECEIPTS, quote)
    assert "modality" in refused("Receipts may be submitted within 30 days of the trip.", RECEIPTS, quote)


def test_a_list_quoted_under_its_lead_in_is_one_statement() -> None:
    quote = ("A customer must meet these criteria to get a refund:\n\n- The request is made within 30 days of "
             "billing.\n- The invoice is unpaid.")
    passes("To get a refund, the request must be made within 30 days of billing and the invoice must be unpaid.",
           CRITERIA, quote)


def test_a_lists_heading_that_denies_is_its_lead_in_and_its_negation_is_the_quotes() -> None:
    quote = "Concert tickets for the team"
    passes("Concert tickets for the team are not covered by the perk budget.", NOT_COVERED, quote)
    passes("What the perk budget does not cover: Concert tickets for the team", NOT_COVERED, quote)
    assert "negation" in refused("The perk budget covers concert tickets for the team.", NOT_COVERED, quote)
    assert "negation" in refused("Concert tickets for the team", NOT_COVERED, quote)  # the item alone drops it
    assert "negation" in refused("What the perk budget covers: Concert tickets for the team", NOT_COVERED, quote)


def test_a_list_under_a_heading_that_does_not_deny_is_read_as_before() -> None:
    quote = "Concert tickets for the team"
    passes("The perk budget covers concert tickets for the team.", COVERED, quote)
    passes("Concert tickets for the team", COVERED, quote)
    assert "negation" in refused("Concert tickets for the team are not covered by the perk budget.", COVERED, quote)


def test_the_organisation_is_the_name_nearly_every_document_writes_a_vendor_is_not() -> None:
    documents = [(f"doc-{n}", f"Travel is booked at Northwind by the office. Claims go through Ledgerly{n % 2}.")
                 for n in range(4)]
    documents += [("doc-4", "Laptops are ordered from Ledgerly by the desk. At Northwind, we lend them.")]
    assert organisation_names(documents) == frozenset({"northwind"})
    assert organisation_names(documents[:2]) == frozenset()  # too few documents to tell
