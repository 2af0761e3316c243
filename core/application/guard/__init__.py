"""The guard: every claim of a model's answer checked against the passage it quotes, read in its context
(`checks`), the envelope a model answers in (`envelope`), the claims ranked and read before they are shown
(`claim_ranking`, `claim_reading`), and the answer's text built from the claims that stand (`answer_text`)."""
