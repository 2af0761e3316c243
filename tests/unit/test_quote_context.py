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


def test_a_vendor_the_asker_names_is_not_we_where_the_documents_show_who_we_is() -> None:
    claims = chunk("expenses#ledgerly", "We reimburse travel within 30 days. Every claim goes through Ledgerly.",
                   doc_id="expenses", title="Expenses", heading="Expenses > Claims").chunk
    quote = "We reimburse travel within 30 days."
    asked = "im not on ledgerly, do you reimburse my travel?"
    assert "names" in refused("Ledgerly reimburses travel within 30 days.", claims, quote, question=asked,
                              organisation=("Northwind Labs",))
    # with no organisation known, the asker's own name for it is the only one there is
    passes("Northwind reimburses travel within 30 days.", claims, quote, question="does northwind pay travel?")


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


# -- how English splits a sentence into what each part says -------------------------------------------------

WAITING = chunk("rfc#waiting", "You need not wait a week - two days is enough for small changes.", doc_id="rfc",
                title="RFCs", heading="RFCs > Deciding").chunk
BADGES = chunk("badges#lost", "If your badge is lost or no longer opens the doors, ask reception for a new one. We "
               "book trains through Railtix and Railtix does not refund cancelled tickets.", doc_id="badges",
               title="Office", heading="Office > Badges").chunk
MEMO = chunk("cards#own", "Used your own card for a company purchase? Claim what you bought in Ledgerly within 30 "
             "days, with a memo (context on what you bought and why the company card wasn't used).", doc_id="cards",
             title="Cards", heading="Cards > Paying yourself").chunk


def test_a_spaced_dash_sets_a_clause_apart_and_its_negation_stays_there() -> None:
    quote = "You need not wait a week - two days is enough for small changes."
    passes("Two days is enough for small changes.", WAITING, quote)
    assert "negation" in refused("Two days is not enough for small changes.", WAITING, quote)


def test_a_conjunct_that_denies_on_its_own_keeps_its_negation() -> None:
    quote = "If your badge is lost or no longer opens the doors, ask reception for a new one."
    passes("If your badge is lost, ask reception for a new one.", BADGES, quote)
    assert "negation" in refused("If your badge is not lost, ask reception for a new one.", BADGES, quote)
    quote = "We book trains through Railtix and Railtix does not refund cancelled tickets."
    passes("Trains are booked through Railtix.", BADGES, quote)
    assert "negation" in refused("Trains are not booked through Railtix.", BADGES, quote)


def test_a_negation_is_restated_by_the_words_around_it_with_it_or_without_it() -> None:
    quote = ("Claim what you bought in Ledgerly within 30 days, with a memo (context on what you bought and why the "
             "company card wasn't used).")
    passes("Claim what you bought in Ledgerly within 30 days, with a memo explaining what you bought and why the "
           "company card wasn't used.", MEMO, quote)
    assert "negation" in refused("Claim what you bought in Ledgerly within 30 days, with a memo explaining what you "
                                 "bought and why the company card was used.", MEMO, quote)


GUESTS = chunk("offsite#guests", "Is it ok to bring a guest to the offsite? It is fine to bring one guest.",
               doc_id="offsite", title="Offsite", heading="Offsite > Guests").chunk
SQUADS = chunk("squads#two", "Only if they work in a supporting role.", doc_id="squads", title="Squads",
               heading="Squads > FAQ > Can someone join two squads?").chunk
MILES = chunk("travel#miles", "Want to fly business class with your own miles? Upgrade afterwards using those miles.",
              doc_id="travel", title="Travel", heading="Travel > Flights").chunk
CARRYOVER = chunk("leave#carry", "Each team carries its own budget. Carryover: to 31 March of the next year, only if "
                  "unable to take it due to illness. Unused "
                  "days last at most 15 months after the year ends.", doc_id="leave", title="Leave",
                  heading="Leave > Annual leave").chunk


def test_it_is_fine_to_grants_a_permission() -> None:
    quote = "It is fine to bring one guest."
    passes("You may bring one guest to the offsite.", GUESTS, quote)
    assert "modality" in refused("You must bring one guest to the offsite.", GUESTS, quote)


def test_a_reply_has_the_modality_of_the_question_it_answers() -> None:
    quote = "Only if they work in a supporting role."
    passes("Someone can join two squads only if they work in a supporting role.", SQUADS, quote)
    assert "modality" in refused("Someone must join two squads only if they work in a supporting role.", SQUADS,
                                 quote)


def test_a_direction_the_quote_never_says_is_a_flip_of_the_one_it_does() -> None:
    quote = "Upgrade afterwards using those miles."
    passes("Afterwards, upgrade to business class with your own miles.", MILES, quote)
    assert "comparison" in refused("Beforehand, upgrade to business class with your own miles.", MILES, quote)


def test_a_compound_is_one_word_written_open_or_closed_and_a_hyphen_makes_no_comparison() -> None:
    passes("Annual leave carries over to 31 March of the next year.", CARRYOVER,
           "Carryover: to 31 March of the next year.")
    # "unable to" is "not able to": a negation and a permission, as "could not" is
    quote = "Carryover: to 31 March of the next year, only if unable to take it due to illness."
    passes("Annual leave carries over to 31 March of the next year, only if it could not be taken due to illness.",
           CARRYOVER, quote)
    assert "negation" in refused("Annual leave carries over to 31 March of the next year, only if it could be taken "
                                 "due to illness.", CARRYOVER, quote)
    quote = "Unused days last at most 15 months after the year ends."
    passes("Carried-over days last at most 15 months after the year ends.", CARRYOVER, quote)
    assert "comparison" in refused("Carried-over days last at least 15 months after the year ends.", CARRYOVER,
                                   quote)


ROTA = chunk("rota#layers", "The rota has 3 weekday layers:\n\n- Europe (06:00 to 14:00 UTC) - (8 hours)\n"
             "- Americas (14:00 to 22:00 UTC) - (8 hours)", doc_id="rota", title="On call", heading="On call > Rota"
             ).chunk
PREMIUM = chunk("health#premium", "Enrolment opens in November. The company pays 100% of the premium for staff, and "
                "80% for partners.", doc_id="health", title="Benefits", heading="Benefits > Health").chunk


def test_a_list_items_lead_in_is_said_of_every_value_of_the_item() -> None:
    quote = "Europe (06:00 to 14:00 UTC) - (8 hours)"
    passes("The Europe weekday layer of the rota runs from 06:00 to 14:00 UTC, 8 hours.", ROTA, quote)
    assert refused("The Americas weekday layer of the rota runs from 06:00 to 14:00 UTC.", ROTA, quote)


def test_a_phrase_that_opens_with_its_value_leaves_its_verb_to_the_phrase_before() -> None:
    quote = "The company pays 100% of the premium for staff, and 80% for partners."
    passes("The company pays 80% of the premium for partners, and 100% for staff.", PREMIUM, quote)
    assert "80" in refused("The company pays 80% of the premium for staff.", PREMIUM, quote)
    assert "100" in refused("The company pays 100% of the premium for partners.", PREMIUM, quote)


# -- a condition is a fact ------------------------------------------------------------------------------------

BUDGET = chunk("learning#amount", "The budget resets on 1 January. If you join after 1 July, you get half of the "
               "yearly amount.", doc_id="learning", title="Learning", heading="Learning > Amount").chunk
GERMAN_LEAVE = chunk("leave#de", "You get 20 days of paid leave a year.", doc_id="leave", title="Leave",
                     heading="Leave > Germany").chunk
PHISHING = chunk("security#clicked", "Speed matters more than anything:\n\n- Tell the security desk within 15 "
                 "minutes.\n- Change your password from another device.", doc_id="security", title="Security",
                 heading="Security > Clicked a link").chunk


def test_a_condition_stands_in_the_quote_or_what_scopes_it_never_in_another_sentence() -> None:
    quote = "If you join after 1 July, you get half of the yearly amount."
    passes("If you join after 1 July, you get half of the yearly amount.", BUDGET, quote)
    assert "condition" in refused("You get half of the yearly amount, only if the yearly amount resets on 1 "
                                  "January.", BUDGET, quote)
    passes("If you work in Germany, you get 20 days of paid leave a year.", GERMAN_LEAVE,
           "You get 20 days of paid leave a year.")
    quote = "Tell the security desk within 15 minutes."
    passes("Tell the security desk within 15 minutes.", PHISHING, quote)
    assert "condition" in refused("Tell the security desk within 15 minutes, only if speed matters more than "
                                  "anything.", PHISHING, quote)


# -- whose it is ----------------------------------------------------------------------------------------------

PLAN = chunk("hr#plan", "The plan lists four goals agreed with the HRBP. A plan may be extended once, by up to 30 "
             "days, if the person is close to the goals.", doc_id="hr", title="HR", heading="HR > Plans").chunk
CONFERENCES = chunk("learning#travel", "The ticket comes out of your learning budget. Flights and hotels for a "
                    "conference are paid from your team's travel budget.", doc_id="learning", title="Learning",
                    heading="Learning > Conferences").chunk
DOGS = chunk("office#dogs", "- Can I bring my dog to the office?\n  - Pets are welcome on Office Dog day only.",
             doc_id="office", title="Office", heading="Office > Pets").chunk
CHANGES = chunk("changes#board", "The board meets on Tuesdays. Submit risky changes in the tracker by noon on the day "
                "before.", doc_id="changes", title="Changes", heading="Changes > Board").chunk
PENSIONS = chunk("benefits#pensions", "Payroll runs through Paystream. We cannot offer pensions to contractors.",
                 doc_id="benefits", title="Benefits", heading="Benefits > Pensions").chunk


def test_a_condition_clauses_subject_is_not_what_the_sentence_speaks_of() -> None:
    quote = "A plan may be extended once, by up to 30 days, if the person is close to the goals."
    passes("A plan may be extended once, by up to 30 days, if the person is close to the goals.", PLAN, quote)
    assert "gives" in refused("The HRBP may be extended once, by up to 30 days, if the person is close to the goals.",
                              PLAN, quote)


def test_a_passive_moves_a_word_of_the_quote_it_does_not_repeat_it() -> None:
    quote = "Flights and hotels for a conference are paid from your team's travel budget."
    passes("Conference flights and hotels are paid from your team's travel budget.", CONFERENCES, quote)
    assert "gives" in refused("Team are paid from your team's travel budget.", CONFERENCES, quote)
    # the word of the question the quote replies to is the asker's own, judged by the question-subject rule
    passes("Dogs are welcome on Office Dog day only.", DOGS, "Pets are welcome on Office Dog day only.")


def test_what_an_instruction_acts_on_is_its_subject_made_passive() -> None:
    quote = "Submit risky changes in the tracker by noon on the day before."
    passes("Risky changes must be submitted in the tracker by noon on the day before.", CHANGES, quote)
    assert "gives" in refused("Tuesdays must be submitted in the tracker by noon on the day before.", CHANGES, quote)


def test_only_the_organisation_stands_for_we_not_a_name_of_the_context() -> None:
    quote = "We cannot offer pensions to contractors."
    passes("Northwind cannot offer pensions to contractors.", PENSIONS, quote, organisation=("Northwind",))
    assert "names" in refused("Paystream cannot offer pensions to contractors.", PENSIONS, quote,
                              organisation=("Northwind",))


SANDBOX = chunk("sandbox#use", "Scope: trying cloud services in the sandbox account, with no production traffic.\n\n"
                "This is welcome. Spin up whatever instances you need - the account resets every Sunday.\n\n"
                "Billing alerts go to Priya in finance.", doc_id="sandbox", title="Cloud Accounts",
                heading="Cloud Accounts > Sandbox").chunk
ROUTING = chunk("desk#routing", "Our desk sorts requests by who is waiting on them. Paying tenants come first, in "
                "this routing order.\n\n1. Outages reported by a tenant's admin.\n2. Failed invoices.\n\n"
                "Escalations go to Marco on the night shift.", doc_id="desk", title="Service Desk",
                heading="Service Desk > Routing").chunk


def test_a_paragraph_that_opens_with_this_is_read_after_the_paragraph_it_points_back_to() -> None:
    quote = "This is welcome."
    passes("Trying cloud services in the sandbox account, with no production traffic, is welcome.", SANDBOX, quote)
    # its negation travels with the words the claim restates of it, as the quote's own would
    assert "negation" in refused("Trying cloud services in the sandbox account is not welcome.", SANDBOX, quote)
    # a name of another paragraph is no part of what "this" stands for
    assert "names" in refused("Priya says this is welcome.", SANDBOX, quote)


def test_a_list_with_no_lead_in_is_read_after_the_sentences_that_introduce_it() -> None:
    quote = "1. Outages reported by a tenant's admin."
    passes("First in the desk's routing order: outages reported by a tenant's admin.", ROUTING, quote)
    # its words, not its names: the paragraph after the list lends nothing, nor does the introduction lend a name
    assert "names" in refused("Marco handles outages reported by a tenant's admin.", ROUTING, quote)


def test_a_fragment_is_read_in_its_own_sentence_its_facts_from_the_fragment() -> None:
    quote = "first 3 months probationary period will be passed"
    text = ("Your lead checks in with each new engineer at 30, 60 and 90 days to confirm the first 3 months "
            "probationary period will be passed. Engineers who move teams keep their start date.")
    started = chunk("eng#probation", text, doc_id="eng", title="Engineering", heading="Engineering > Probation"
                    ).chunk
    passes("A new engineer's probationary period covers the first 3 months.", started, quote)
    assert "numbers" in refused("A new engineer's probationary period covers the first 6 months.", started, quote)


def test_a_block_of_text_is_read_after_the_sentence_that_announces_it() -> None:
    text = "1. Send the customer this message:\n\n```\nSubject: Your export is ready\nIt expires in 7 days.\n```"
    mail = chunk("export#mail", text, doc_id="export", title="Exports", heading="Exports > Mail").chunk
    passes("The message's subject is 'Your export is ready'.", mail, "Subject: Your export is ready")


def test_the_year_a_document_is_of_may_be_named_where_the_quote_states_no_year() -> None:
    bands = chunk("bands#design", "| Level | Oslo (NOK) |\n| --- | --- |\n| Staff designer | 900,000 to 1,100,000 |",
                  doc_id="bands", title="Pay Bands 2027", heading="Pay Bands 2027 > Design").chunk
    quote = "| Staff designer | 900,000 to 1,100,000 |"
    passes("The 2027 Oslo band for a staff designer is 900,000 to 1,100,000 NOK.", bands, quote)
    assert "numbers" in refused("The 2028 Oslo band for a staff designer is 900,000 to 1,100,000 NOK.", bands, quote)
    dated = chunk("bands#note", "Bands were last reviewed in 2025.", doc_id="bands", title="Pay Bands 2027",
                  heading="Pay Bands 2027 > Notes").chunk
    assert "numbers" in refused("Bands were last reviewed in 2027.", dated, "Bands were last reviewed in 2025.")


def test_a_verb_that_carries_no_fact_may_be_the_paraphrases_own_though_the_chunk_uses_it_elsewhere() -> None:
    text = ("For a first outage we provide advice on adding a standby generator. Give them a month to install it. "
            "A second outage within the month is credited at half the fee.")
    outages = chunk("hosting#outages", text, doc_id="hosting", title="Hosting", heading="Hosting > Outages").chunk
    quote = "For a first outage we provide advice on adding a standby generator."
    passes("For a first outage, we give advice on adding a standby generator.", outages, quote)
    # only where the word after it is the quote's own: a clause added around it is still refused
    refused("For a first outage, we provide advice on adding a standby generator, which gives them a month.",
            outages, quote)
    # a word of another sentence that does carry a fact is still taken from elsewhere
    assert "elsewhere" in refused("For a first outage, we provide advice on adding a standby generator within "
                                  "a month.", outages, quote)


def test_a_quoted_name_may_be_called_what_the_chunk_calls_it() -> None:
    text = ("| Severity | Standard | Premium |\n|---|---|---|\n| S1 | 2 hours | 20 minutes |\n"
            "| S2 | 1 day | 4 hours |\n\nFor S1 incidents, the on-call engineer phones the landlord.")
    targets = chunk("facilities#targets", text, doc_id="facilities", title="Facilities",
                    heading="Facilities > Response targets").chunk
    quote = "| S1 | 2 hours | 20 minutes |"
    passes("The response target for an S1 incident on the Premium plan is 20 minutes.", targets, quote)
    # the noun of the chunk's own name, not a word of another sentence beside it
    assert "elsewhere" in refused("The response target for an S1 incident on the Premium plan is 20 minutes, "
                                  "and the landlord is phoned.", targets, quote)
    # a word that sets a value beside the name is a verb of another sentence, not what the name is
    plans = chunk("people#plans", "- A PIP may be extended once, by up to 30 days.\n- A PIP lasts 45 days.",
                  doc_id="people", title="People", heading="People > Plans").chunk
    assert "elsewhere" in refused("A PIP lasts 30 days.", plans, "A PIP may be extended once, by up to 30 days.")


def test_a_table_row_is_read_after_its_lead_and_what_the_leads_they_stands_for() -> None:
    text = ("A quota a tenant chose stands, including a quota of zero. Where they chose none, the pilot caps the "
            "storage:\n\n| Storage | Paid tenant | Free tenant |\n| --- | --- | --- |\n"
            "| Archive | 900 GB | 40 GB |\n| Backups | 300 GB | 10 GB |")
    pilot = chunk("pilot#caps", text, doc_id="pilot", title="Tenancy", heading="Tenancy > Storage limits").chunk
    quote = "| Archive | 900 GB | 40 GB |"
    passes("Where the tenant chose no quota, the pilot caps Archive at 40 GB for a free tenant.", pilot, quote)
    assert "negation" in refused("Where the tenant chose no quota, the pilot does not cap Archive at 40 GB for a "
                                 "free tenant.", pilot, quote)
    assert "numbers" in refused("Where the tenant chose no quota, the pilot caps Archive at 400 GB for a free "
                                "tenant.", pilot, quote)


def test_a_numbered_item_is_its_step_and_a_line_ending_in_a_colon_is_read_with_what_it_announces() -> None:
    text = ("1. Post the following notice on the tenant's door:\n\n```\nNotice: Scheduled water shutoff\n"
            "Water is off from 9:00 to 11:00.\n```\n\n2. Log the visit in the building diary.")
    shutoff = chunk("building#shutoff", text, doc_id="building", title="Building", heading="Building > Visits").chunk
    quote = "1. Post the following notice on the tenant's door:"
    passes("The first step is to post the shutoff notice on the tenant's door.", shutoff, quote)
    # the place is a fact of the item: the second item is not the first step
    assert "overlap" in refused("The first step is to log the visit in the building diary.", shutoff, quote)


def test_a_sentence_that_points_back_states_its_value_with_the_quoted_sentence_before_it() -> None:
    text = ("Hire through recruitment agencies. We tried this once (and paid 20% fees), but found nobody stayed "
            "a year. Use referrals. They cost 5% in bonuses.")
    hiring = chunk("hiring#agencies", text, doc_id="hiring", title="Hiring", heading="Hiring > Agencies").chunk
    quote = ("Hire through recruitment agencies. We tried this once (and paid 20% fees), but found nobody stayed "
             "a year.")
    passes("We once hired through recruitment agencies (paying 20% fees), but nobody stayed a year.", hiring, quote)
    # a value of the next sentence is still not the agencies'
    assert "5" in refused("Recruitment agencies cost 5% in bonuses.", hiring,
                          "Hire through recruitment agencies. We tried this once (and paid 20% fees)")


def test_what_a_quote_says_to_its_reader_is_not_said_of_a_name_however_the_asker_named_it() -> None:
    text = ("You'll be given a monthly limit of $300 for software and books. Ask for increases in Cardly.\n\n"
            "Block out your calendar in Calendo when you are away.")
    cards = chunk("spend#cards", text, doc_id="spend", title="Spending", heading="Spending > Cards").chunk
    limit = "You'll be given a monthly limit of $300 for software and books."
    passes("Employees are given a monthly limit of $300 for software and books.", cards, limit)
    assert "reader" in refused("Cardly is given a monthly limit of $300 for software and books.", cards, limit,
                               question="what's my monthly cardly limit?", organisation=("Acme",))
    block = "Block out your calendar in Calendo when you are away."
    passes("Team members should block out their calendar in Calendo when they are away.", cards, block)
    # an instruction made passive: its own word becomes the subject
    passes("Your Calendo calendar should be blocked out when you are away.", cards, block)
    assert "reader" in refused("Cardly should block out your calendar in Calendo when you are away.", cards, block)


def test_a_subject_taken_from_a_channel_name_is_another_subject() -> None:
    text = ("If your badge stops working, ask Facilities in #team-building-ops. Facilities will decide whether the "
            "badge is reset or replaced.")
    badges = chunk("office#badges", text, doc_id="office", title="Office", heading="Office > Badges").chunk
    quote = "Facilities will decide whether the badge is reset or replaced."
    passes("Facilities decides whether a broken badge is reset or replaced.", badges, quote)
    assert "the claim gives" in refused("Team will decide whether the badge is reset or replaced.", badges, quote)


def test_an_instruction_with_a_condition_speaks_to_its_reader() -> None:
    text = ("Cards are issued by Ledgerly. Pay with your Cardly card if\n\n- the meal is over $40, and\n"
            "- a client is present.")
    meals = chunk("spend#meals", text, doc_id="spend", title="Spending", heading="Spending > Meals").chunk
    quote = "Pay with your Cardly card if\n\n- the meal is over $40, and\n- a client is present."
    passes("Employees pay with their Cardly card if the meal is over $40 and a client is present.", meals, quote,
           organisation=("Acme",))
    assert "reader" in refused("Ledgerly should pay with the Cardly card if the meal is over $40 and a client is "
                               "present.", meals, quote, organisation=("Acme",))


def test_whom_a_heading_addresses_may_be_named_for_the_reader_a_tool_it_names_may_not() -> None:
    porter = chunk("night#porter", "Spare keys come from Facilities. Lock the side door at 22:00.", doc_id="night",
                   title="Night Shift", heading="Night Shift > What does the Night Porter do?").chunk
    quote = "Lock the side door at 22:00."
    passes("The Night Porter locks the side door at 22:00.", porter, quote, organisation=("Acme",))
    assert "reader" in refused("Facilities should lock the side door at 22:00.", porter, quote, organisation=("Acme",))
    booking = chunk("leave#booking", "Block out your calendar for the days you are away. Days are booked in Leavely.",
                    doc_id="leave", title="Leave", heading="Leave > How to book time off in Leavely").chunk
    assert "reader" in refused("Leavely should block out your calendar for the days you are away.", booking,
                               "Block out your calendar for the days you are away.", organisation=("Acme",))
