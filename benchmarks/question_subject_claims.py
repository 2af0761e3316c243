"""The guard on answers about FAQ text: faithful claims it must pass, fabrications it must refuse.

    .venv/bin/python -m benchmarks.question_subject_claims        # the counts
    .venv/bin/python -m benchmarks.question_subject_claims -v     # and every case handled wrong, with its reason

`benchmarks/sets/faq_claims/` holds 84 faithful and 48 fabricated claims, each with the passage it cites and
the quote a hosted model would give (or none). They were written by a reviewing session on text of our own: lists
of questions with nested answers, replies in paragraphs, a Question and Answer table; the faithful ones are
paraphrases as a model writes them (a pronoun resolved, the question's words restated, an instruction turned
into a statement), the fabrications give the question's subject what a passage says of another. The rule they
measure (`core.application.guard.checks`, a claim never gives the question's subject what the quote says of its own)
was shaped on them: these are fitted figures, not held-out ones.
"""

import argparse
import json
from pathlib import Path
from typing import Final

from core.application.guard.checks import Supported, claim_support
from core.application.guard.envelope import EnvelopeClaim
from core.domain import Passage, RetrievedChunk

CLAIMS: Final = Path(__file__).parent / "sets" / "faq_claims"


def passes(case: dict[str, str]) -> tuple[bool, str]:
    cited = RetrievedChunk(passage=Passage(chunk_id="faq#1", doc_id="faq", title="FAQ", heading="FAQ",
                                           text=case["text"], owner="#help"), score=1.0, content_hash="faq")
    outcome = claim_support(EnvelopeClaim(text=case["claim"], chunk_ids=["faq#1"], quote=case["quote"] or None),
                            [cited])
    return isinstance(outcome, Supported), getattr(outcome, "reason", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case handled wrong")
    args = parser.parse_args()
    for name, expected in (("faithful", True), ("fabricated", False)):
        cases = json.loads((CLAIMS / f"{name}.json").read_text(encoding="utf-8"))
        right = 0
        for case in cases:
            passed, reason = passes(case)
            right += passed == expected
            if args.verbose and passed != expected:
                print(f"  {name}: {case['claim']!r} quoting {case['quote']!r}: {reason or 'passed'}")
        verb = "passed" if expected else "refused"
        print(f"{name}: {right} of {len(cases)} {verb}")


if __name__ == "__main__":
    main()
