"""The words that carry meaning, which retrieval, answerability and the guard all count."""

from core.text import content_stems


def test_a_pronoun_contraction_carries_no_meaning_of_its_own() -> None:
    assert content_stems("They're paid on the 15th and you'll get a payslip.") == ["paid", "15th", "payslip"]
    assert content_stems("They pay on the 15th.") == ["pay", "15th"]
