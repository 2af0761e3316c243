"""The words that carry meaning, which retrieval, answerability and the guard all count."""

from core.text import content_stems


def test_a_pronoun_contraction_carries_no_meaning_of_its_own() -> None:
    assert content_stems("They're paid on the 15th and you'll get a payslip.") == ["paid", "15th", "payslip"]
    assert content_stems("They pay on the 15th.") == ["pay", "15th"]


def test_a_contraction_typed_without_its_apostrophe_is_still_a_stopword() -> None:
    assert content_stems("why dont we get a parking permit, im new") == content_stems(
        "why don't we get a parking permit, I'm new") == ["park", "permit", "new"]
    assert content_stems("im ill, can i see my id?") == ["ill", "see", "id"]  # words of their own stay
