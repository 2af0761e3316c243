"""Does what was retrieved answer the question? The fitted model and its assessment (`model`), the clarifying
options when retrieval splits (`clarify`), and how a follow-up is read against its thread (`followups`)."""
